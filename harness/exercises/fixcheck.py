"""Level 2 (c): the learner's fixed run_tool_uses, run through every path the lesson's rule covers.

The rule, part by part, and the run that would show each part broken:
- execute first, record after: each tool killed as it starts (the ledger must not hold its call yet), and the
  ledger looked at as each tool starts in a clean run;
- the real result: the ledger compared with what the tools really returned (no placeholder, no None);
- once: every call executed exactly once in a clean run, and never twice across a crash and --resume;
- atomically: every change to effects.json seen by an audit hook and a held descriptor (a rename onto it, never
  written in place or removed first), and no temp file left behind;
- keyed by tool_use_id: the ledger's keys, and a response with two tool_use blocks (each recorded under its own id);
- one at a time, in order, the response left as it was: tools that overlap (threads) and blocks run out of the
  response's order are refused, and so is a change to the content handed in (it is already in messages);
- nothing for a failure: each tool made to fail with ToolError (is_error returned, nothing recorded);
- alert, not is_error, when the ledger write fails: the write made to fail like a full disk after write_report; the
  alert is what went to stderr, an alert event or a logging warning, and it names the call (or the ledger);
- and the three crash moments on each tool (as it starts, right after it returns, after the record but before
  point B), each resumed with the lesson's reconcile, which must take the lesson's branch.
Each run, and each resume after a kill, happens in a fresh forked child with a time limit (sandbox.py), so nothing
the function keeps in memory survives a kill; the first run that shows a problem ends the check.
"""

from __future__ import annotations

import inspect
from collections import Counter
from pathlib import Path

from ..texts import DONE_OK, DONE_UNKNOWN, RECONCILE_LINES
from ..tools import READ_ONLY
from . import Verdict, internal_error, no_paths, scratch_dir
from .answers import MISSING, show
from .probe import FAIL_TEXT, TASK_CALLS, TWO_BLOCKS, prepare_child, scenario, two_blocks
from .probe import resume as resume_run
from .sandbox import OUTPUT_LIMIT, TIME_LIMIT_S, can_fork, run_steps

TITLE = "レベル2 (c) 修正版 run_tool_uses"
LESSON_ORDER = "レッスン「副作用台帳」の run_tool_uses の順序"


def _plans() -> list[tuple[str, tuple | None, bool, str]]:
    """(run, what the check injects, whether a --resume follows the kill, the group it belongs to), in the order
    a learner should meet them: the clean run first, write_report (the side effect) first in each group."""
    plans: list[tuple[str, tuple | None, bool, str]] = [("clean", None, False, "clean")]
    for kind in ("kill_start", "kill_after", "kill_before_b", "fail"):
        for turn, tool, _ in sorted(TASK_CALLS, key=lambda c: c[0] != 3):
            plans.append(
                (f"{kind}:{tool}", (kind, turn if kind == "kill_before_b" else tool), kind != "fail", kind)
            )
    plans.append(("ledger_fails:write_report", ("ledger_fails", "write_report"), False, "ledger_fails"))
    plans.append(("two_blocks", None, False, "two_blocks"))
    return plans


PLANS = _plans()
# How many times a check runs the function at most, each in its own child process with its own time limit: every
# plan once, and the --resume after each kill.
MAX_RUNS = len(PLANS) + sum(1 for _, _, resumes, _ in PLANS if resumes)

GROUPS = {
    "clean": "通常の実行（クラッシュなし）: 3つのツールがそれぞれ1回だけ実行され、台帳には本物の結果が "
    "tool_use_id ごとに一時ファイル＋rename で記録された",
    "kill_start": "各ツールが始まった瞬間に落として --resume（3つとも）: 台帳にレコードはなく、再開は読み取り専用なら"
    "再実行、write_report は is_error（不明）",
    "kill_after": "各ツールが返った直後・台帳の前に落として --resume（3つとも）: 台帳にレコードはなく、"
    "write_report は二度実行されない",
    "kill_before_b": "記録のあと地点Bの前に落として --resume（3つとも）: 台帳に本物の結果があり、再開は台帳ヒットで"
    "再実行しない",
    "fail": "各ツールが失敗する（ToolError、3つとも）: is_error の tool_result を返し、台帳には何も記録しない",
    "ledger_fails": "write_report のあと台帳の書き込みが失敗する（ディスクがいっぱい）: is_error にせず本物の結果を返し、"
    "アラートを上げた",
    "two_blocks": "1つの応答に tool_use が2つ（text ブロックつき、書いてから読み返す）: content の順に1つずつ実行して"
    "記録し、tool_result を2つ返した",
}
TOOL_OF = {tid: tool for _, tool, tid in TASK_CALLS}
ID_OF = {tool: tid for _, tool, tid in TASK_CALLS}


def label(name: str) -> str:
    kind, _, tool = name.partition(":")
    return {
        "clean": "通常の実行（クラッシュなし）",
        "kill_start": f"{tool} が始まった瞬間に落として --resume",
        "kill_after": f"{tool} が返った直後（台帳に書く前）に落として --resume",
        "kill_before_b": f"{tool} の記録のあと、地点Bの前に落として --resume",
        "fail": f"{tool} が失敗する（ToolError）",
        "ledger_fails": f"{tool} のあと台帳の書き込みが失敗する（ディスクがいっぱい）",
        "two_blocks": "1つの応答に tool_use が2つ（write_report で書いてから read_notes で読み返す）",
    }[kind]


def check_fix(run_tool_uses, time_limit: float = TIME_LIMIT_S, show_answers: bool = False, use_fork=None):
    verdict = Verdict(TITLE, show_answers, "check_level2_fix(show_answers=True)")
    verdict.notes.append(
        f"（チェックは関数を最大 {MAX_RUNS} 回、1回ずつ別のプロセスで走らせ、その1回ごとに {time_limit:g} 秒で"
        "打ち切ります。無限ループでもカーネルは止まりません）"
    )
    problem = _shape(run_tool_uses)
    if problem == "missing":
        verdict.unanswered(
            "修正版 run_tool_uses", "まだ関数が定義されていません（答えのセルを実行しましたか）"
        )
        return verdict
    if problem:
        verdict.fail(problem)
        return verdict
    if use_fork is False or (use_fork is None and not can_fork()):
        verdict.notes.append(
            "（この環境では fork が使えないので、関数はカーネルの中のスレッドで動かします。台帳の書き込みを失敗させる"
            "確認と、ファイル操作の一部の確認は省きます）"
        )
    try:
        with scratch_dir() as tmp:
            _run(verdict, run_tool_uses, Path(tmp), time_limit, use_fork)
    except Exception as err:  # noqa: BLE001 (never a traceback)
        return internal_error(TITLE, err)
    if show_answers and verdict.problems:
        from ..loop import run_tool_uses as lesson

        verdict.notes.append("（レッスン「副作用台帳」の run_tool_uses です。見比べてください）")
        verdict.notes.extend("    " + line for line in inspect.getsource(lesson).splitlines())
    return verdict


def _shape(fn) -> str | None:
    """What is wrong with fn as a run_tool_uses ("missing" when there is none yet), or None."""
    if fn is Ellipsis or fn is None or fn is MISSING:
        return "missing"
    if not callable(fn):
        return f"run_tool_uses が関数ではありません（{show(fn, 60)}）"
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return (
            "run_tool_uses が async def です。Python 版のループは await しないので、def で書いてください"
            "（レッスンの JavaScript の await はいりません）"
        )
    if inspect.isgeneratorfunction(fn):
        return "run_tool_uses の中に yield があります（ジェネレータになっています）。results のリストを return してください"
    try:
        inspect.signature(fn).bind(object(), [])
    except TypeError:
        return (
            f"run_tool_uses は (run, content) の2つの引数で呼ばれます（いまの引数: {inspect.signature(fn)}）"
        )
    except ValueError:  # a builtin without a signature: let it run
        pass
    return None


def _step(name: str, fn, base: Path, time_limit: float, use_fork):
    """One run in a fresh child process (nothing the function kept in memory survives into the next run)."""
    base.mkdir(parents=True, exist_ok=True)  # even if an earlier run's code removed it
    outcomes = run_steps(
        [(name, fn)], time_limit=time_limit, cwd=base, prepare=prepare_child, use_fork=use_fork
    )
    try:
        return next(outcomes)
    finally:
        outcomes.close()


def _run(verdict: Verdict, learner, base: Path, time_limit: float, use_fork) -> None:
    groups = {name: group for name, _, _, group in PLANS}
    passed_in_group: Counter = Counter()
    size = Counter(groups.values())
    failed_at = None
    for name, plan, resumes, group in PLANS:
        folder = base / name.replace(":", "-")
        if name == "two_blocks":
            outcome = _step(name, lambda f=folder: two_blocks(learner, f), base, time_limit, use_fork)
        else:
            outcome = _step(
                name, lambda f=folder, p=plan: scenario(learner, f, p), base, time_limit, use_fork
            )
            facts = outcome.facts
            if resumes and facts and facts.get("killed") and facts["error"] and facts["error"]["ours"]:
                # the resume is a new process, as after a real kill: only the disk carries over
                after = _step(name, lambda f=folder: resume_run(learner, f), base, time_limit, use_fork)
                if after.facts is None:
                    outcome = after
                    outcome.name = name
                    outcome.resuming = True
                else:
                    facts["resume"] = after.facts
                    outcome.output_total += after.output_total
        notes: list[str] = []
        problem = _judge(outcome, time_limit, notes)
        if problem == "not_implemented":
            verdict.unanswered("修正版 run_tool_uses", "まだ書かれていません（NotImplementedError）")
            return
        for note in notes:
            if note not in verdict.notes:
                verdict.notes.append(note)
        if problem:
            verdict.fail(f"{label(name)}: {problem}")
            _show_output(verdict, outcome, failed=True)
            failed_at = group
            break
        _show_output(verdict, outcome, failed=False)
        passed_in_group[group] += 1
        if passed_in_group[group] == size[group]:
            verdict.ok(GROUPS[group])
    if failed_at:
        done = {g for g, n in passed_in_group.items() if n == size[g]}
        for group in dict.fromkeys(groups.values()):
            if group not in done and group != failed_at:
                verdict.skip(GROUPS[group].split(":")[0])


def _show_output(verdict: Verdict, outcome, failed: bool) -> None:
    if outcome.output_total > OUTPUT_LIMIT and not any("文字あったので" in n for n in verdict.notes):
        verdict.notes.append(
            f"（あなたの関数の出力が {outcome.output_total:,} 文字あったので、表示するのは最初の {OUTPUT_LIMIT:,} 文字まで"
            "にしました）"
        )
    if failed and outcome.output:
        verdict.notes.append(f"（この実行であなたの関数が出力した内容、{outcome.output_total:,} 文字）:")
        verdict.notes.extend("    " + line for line in outcome.output.splitlines())


# -- judging one run ------------------------------------------------------------------------------------------------


def _judge(outcome, time_limit: float, notes: list[str]) -> str | None:
    if outcome.timed_out:
        tail = (
            "（この環境では止められないので、カーネルを再起動してください）" if outcome.still_running else ""
        )
        when = "--resume が " if getattr(outcome, "resuming", False) else ""
        return f"{when}{time_limit:g} 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました{tail}"
    if outcome.died:
        return f"実行中にプロセスが終わってしまいました（{outcome.died}）。sys.exit や os._exit を呼んでいませんか"
    f = outcome.facts
    if f.get("internal_error"):
        return f"チェック自体が失敗しました（{no_paths(f['internal_error'])}）。講師に知らせてください"
    calls = f.get("calls", [])
    if outcome.name == "clean" and calls and calls[0].get("raised") == "NotImplementedError":
        return "not_implemented"
    kind, _, tool = outcome.name.partition(":")
    problem = (
        _gone(f)
        or _gone(f.get("resume") or {})
        or _concurrent(f)
        or _changed_content(f)
        or _calls_problem(f)
        or _order(f)
    )
    if problem:
        return problem
    if kind == "clean":
        return _judge_clean(f)
    if kind == "two_blocks":
        return _judge_two_blocks(f)
    if kind == "fail":
        return _judge_fail(f, tool, notes)
    if kind == "ledger_fails":
        return _judge_ledger_fails(f, tool, outcome)
    return _judge_kill(f, kind, tool)


def _error(e: dict, f: dict | None = None) -> str:
    first = e["message"].splitlines()[0] if e["message"] else ""
    text = f"{e['type']}: {first}" if first else e["type"]
    if e["type"] == "SystemExit":
        text = (
            f"あなたのコードが sys.exit({first}) でプロセスを終わらせようとしました（SystemExit）。run_tool_uses は"
            "プロセスを終わらせず、tool_result のリストを返します"
        )
    elif e["type"] == "KeyboardInterrupt":
        text = "あなたのコードが KeyboardInterrupt を起こしました（チェックは Ctrl-C を送っていません）"
    call = _raising_call(f) if f else None
    if call:
        text = f"{call}で {text}"
    if e.get("where"):
        text += f"（あなたのコードの {e['where']['line']} 行目: {e['where']['code']}）"
    if e["type"] == "APIError":
        text = (
            "モデル（API）が会話を拒否しました。tool_use と tool_result が対になっていません"
            f"（{e['message']}）"
        )
    elif e["type"] == "TypeError" and "execute_tool" in e["message"]:
        text += "。execute_tool は execute_tool(run, block) で呼びます"
    elif " at が" in e["message"]:
        text += "。at は run.clock() が返すミリ秒の整数です"
    elif "function" in e["message"] and "JSON" in e["message"]:
        text += "。台帳に書く値に関数そのものが入っていませんか（たとえば at に、時計を呼んだ値ではなく時計そのもの）"
    elif e["type"] in ("KeyError", "TypeError") and "text" in e["message"]:
        text += "。type が tool_use のブロックだけを扱ってください"
    return text


def _raising_call(f: dict) -> str | None:
    """Which call of the function raised ("3 回目の呼び出し（write_report のターン）"), when it was not the first."""
    for call in f.get("calls", []):
        if "raised" in call and call.get("number", 1) > 1:
            names = [TOOL_OF.get(i, i) for i in call["ids"]]
            return f"{call['number']} 回目の呼び出し（{', '.join(names)} のターン）"
    return None


def _gone(f: dict) -> str | None:
    if f.get("workdir_gone"):
        return (
            "作業フォルダ（run.workdir）がなくなりました。あなたのコードが消していませんか（shutil.rmtree など）。"
            "作業フォルダにはチェックポイントと台帳があり、再開はそれを読みます"
        )
    return None


def _concurrent(f: dict) -> str | None:
    overlaps = f.get("overlaps") or []
    if overlaps:
        order = [i for call in f.get("calls", []) for i in call.get("ids", [])]
        both = " と ".join(sorted(overlaps[0], key=lambda i: order.index(i) if i in order else len(order)))
        return (
            f"{both} のツールが同時に（並行して）実行されました。レッスンの runToolUses は tool_use ブロックを"
            "1つずつ順に実行します。save_effect の「台帳を読む→1件足す→書き戻す」は同時に走ると、互いの記録を"
            "上書きして消してしまいます — 見直す: レッスン「副作用台帳」の for ループ"
        )
    return None


def _changed_content(f: dict) -> str | None:
    for call in f.get("calls", []):
        if call.get("changed_content"):
            return (
                f"run_tool_uses が受け取った content を書き換えました（{call['changed_content']}）。content はモデルの"
                "応答そのもので、すでに messages に入っている assistant のメッセージです。書き換えは地点Bで "
                "checkpoint.json に保存され、次の呼び出しでモデルにも送られます — content は読むだけにして、結果は"
                "新しい tool_result のリストで返します"
            )
    return None


def _order(f: dict) -> str | None:
    """Each call's tool_use blocks started in the order the response lists them."""
    for call in f.get("calls", []):
        started = []
        for r in _ran(f):
            if r["id"] in call["ids"] and r["id"] not in started:
                started.append(r["id"])
        expected = [i for i in call["ids"] if i in started]
        if len(started) > 1 and started != expected:
            why = (
                "（レポートを書いてから読み返す）" if call["ids"] == [b["id"] for b in TWO_BLOCKS[1:]] else ""
            )
            return (
                f"tool_use ブロックを content とは違う順（{' → '.join(started)}）で実行しました。レッスンの "
                "runToolUses は content の順に1つずつ実行します。順序には意味があります: この応答は "
                f"{' → '.join(expected)} の順{why}で、逆にすると結果が変わります"
            )
    return None


def _calls_problem(f: dict) -> str | None:
    """What the learner's function returned, whatever run it was: a list with one tool_result per tool_use."""
    for call in f.get("calls", []):
        if "raised" in call:
            continue
        kind = call.get("type")
        if kind == "coroutine":
            return "run_tool_uses が coroutine を返しました。async def ではなく def で書いてください"
        if kind != "list":
            hint = "（return results を忘れていませんか）" if kind == "NoneType" else ""
            return f"run_tool_uses が list ではなく {kind} を返しました{hint}。tool_result のリストを返してください"
        returned = call["returned"]
        for item in returned:
            if not isinstance(item, dict) or item.get("type") != "tool_result":
                return (
                    f"run_tool_uses が返したリストに tool_result ではないもの {show(item, 80)} があります。"
                    "{'type': 'tool_result', 'tool_use_id': ..., 'content': ...} を返してください"
                )
        ids = [item.get("tool_use_id") for item in returned]
        if ids != call["ids"] and sorted(map(str, ids)) != sorted(call["ids"]):
            hint = "（ループの途中で return していませんか）" if 0 < len(ids) < len(call["ids"]) else ""
            return (
                f"run_tool_uses に渡した tool_use は {call['ids']} なのに、返った tool_result の tool_use_id は "
                f"{ids} でした{hint}。すべての tool_use に、その id を tool_use_id にした tool_result を1つずつ返します"
            )
    return None


def _results(f: dict) -> dict:
    """tool_use_id -> the tool_result the learner's function returned for it."""
    return {
        item.get("tool_use_id"): item
        for call in f.get("calls", [])
        if call.get("type") == "list"
        for item in call["returned"]
        if isinstance(item, dict)
    }


def _ran(f: dict, by: str = "learner") -> list[dict]:
    return [r for r in f.get("runs", []) if r["by"] == by or by == "any"]


def _outputs(f: dict) -> dict:
    return {r["id"]: r.get("output") for r in f.get("runs", []) if r.get("outcome") == "ran"}


def _text(content: object) -> object:
    """A tool_result's content as text: a string, or the API's other form, a list of text blocks, joined."""
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in content
        )
    ):
        return "".join(b["text"] for b in content)
    return content


def _ledger_data(ledger: dict | None) -> dict:
    return ledger["data"] if ledger and ledger.get("state") == "ok" else {}


def _runs_text(f: dict) -> str:
    return " / ".join(f.get("tool_log") or []) or "（なし）"


def _before_execution(f: dict) -> str | None:
    for r in _ran(f):
        if r.get("ledger_had_id"):
            return (
                f"{r['name']}（{r['id']}）の実行が始まった瞬間、まだ何も実行していないのに effects.json にはすでに "
                f"{r['id']} がありました。実行が先、記録が後です — 見直す: {LESSON_ORDER}（本物の結果を"
                "手にしてから save_effect）"
            )
    return None


def _exec_counts(f: dict, ids: list[str]) -> str | None:
    counts = Counter(r["id"] for r in _ran(f))
    for tid in ids:
        name = TOOL_OF.get(tid, tid)
        if counts[tid] > 1:
            return (
                f"{tid}（{name}）が {counts[tid]} 回実行されました（tool-runs.log: {_runs_text(f)}）。"
                "1つの tool_use は1回だけ実行します — 見直す: ツールを呼ぶのは1か所、その結果を変数に入れて"
                "台帳と tool_result の両方に使う"
            )
    if not _ran(f) and _results(f):
        return (
            "チェックが用意したツールが一度も呼ばれませんでした（tool-runs.log も空です）。チェックは run の中の"
            "ツール（run.tool_impls）を差し替えて、実行・失敗・クラッシュを観察します。ツールは "
            "execute_tool(run, block) か run.tool_impls[block['name']](run.workdir, block['input']) で実行して"
            "ください（それ以外の道で実行すると、チェックからは見えません）"
        )
    for tid in ids:
        if counts[tid] == 0:
            return f"{tid}（{TOOL_OF.get(tid, tid)}）が一度も実行されませんでした"
    return None


def _atomic(f: dict) -> str | None:
    ops = [entry for entry in f.get("log", []) if entry[0] == "ledger"]
    if any(op[1] == "in_place" for op in ops) or f.get("in_place"):
        how = (
            "書き込み用に直接開きました"
            if any(op[1] == "in_place" for op in ops)
            else "その場で書き換えました"
        )
        return (
            f"effects.json を{how}（一時ファイル＋rename ではありません）。書いている途中で落ちると、台帳が半分だけの"
            "ファイルになります — 見直す: レッスンの saveEffect は一時ファイル EFFECTS_PATH + '.tmp' に書いてから "
            "rename で入れ替える（save_effect か write_json_atomic を使う）"
        )
    if any(op[1] in ("removed", "moved_away") for op in ops):
        return (
            "effects.json をいったん消して（または別名に移して）から書いています。そのあいだに落ちると台帳がなくなります"
            " — 見直す: 一時ファイルに書いてから rename で上書きすれば、古い台帳か新しい台帳のどちらかが必ずある"
        )
    stray = f.get("stray") or []
    if stray:
        return f"作業フォルダに {', '.join(stray)} が残っています。一時ファイルは rename で effects.json に入れ替えます"
    segments = _segments(f.get("log", []))
    for tid, writes in segments.items():
        if writes > 1:
            return f"1回の {tid}（{TOOL_OF.get(tid, tid)}）のあと台帳に {writes} 回書いています。記録は1回、本物の結果で"
    return None


def _segments(log: list) -> Counter:
    """How many ledger writes followed each tool's end (until the next tool starts or the function returns)."""
    writes: Counter = Counter()
    current = None
    for entry in log:
        if entry[0] == "exec_end":
            current = entry[1]
        elif entry[0] in ("exec_start", "return", "call"):
            current = None
        elif entry[0] == "ledger" and entry[1] in ("replace", "in_place") and current:
            writes[current] += 1
    return writes


def _writer_error(f: dict) -> str | None:
    """A ledger write that raised while the function ran (even if the function swallowed it)."""
    failed = next((e for e in f.get("log", []) if e[0] == "writer_error"), None)
    if failed is None:
        return None
    _, name, kind, message = failed
    text = f"台帳への書き込み（{name}）がエラーになりました: {kind}: {message}。台帳に書けていません"
    if "function" in message and "JSON" in message:
        text += (
            " — 記録する値に関数そのものが入っていませんか（たとえば at に、時計を呼んだ値ではなく時計そのもの）。"
            "台帳のレコードは JSON にできる値だけです"
        )
    return text


def _ever_recorded(f: dict) -> set[str]:
    """Every tool_use_id the ledger held at some moment the check looked (as each tool started, as each call ended)."""
    seen: set[str] = set()
    for r in f.get("runs", []):
        seen.update(r.get("ledger_keys", []))
    for call in f.get("calls", []):
        seen.update(call.get("keys_after", []))
    return seen


def _ledger_problem(f: dict, ledger: dict, ids: list[str], outputs: dict, cwd_ledger: bool) -> str | None:
    """The ledger after a clean run: every call, under its tool_use_id, with the tool's name and real result."""
    state = ledger.get("state")
    if state == "none":
        if cwd_ledger:
            return "effects.json を作業フォルダではなくカレントフォルダに書いています。台帳の場所は run.effects_path です"
        return (
            "通常の実行のあと、作業フォルダに effects.json がありません（台帳に何も記録していません）。見直す: "
            "ツールが成功したその瞬間に、tool_use_id をキーにして本物の結果を1件書く（レッスン「副作用台帳」）"
        )
    if state == "unreadable":
        return f"effects.json を JSON として読めません（中身: {show(ledger.get('detail'), 80)}）"
    data = ledger.get("data")
    if isinstance(data, dict) and data and set(data) <= set(ID_OF):
        return (
            f"台帳のキーがツール名 {sorted(data)} です。キーはその呼び出しの tool_use_id です。同じツールを2回呼ぶと、"
            "前の記録が上書きされてしまいます"
        )
    if state == "odd":
        return (
            f"effects.json がレッスンの形 {{tool_use_id: {{name, result, at}}}} ではありません（{ledger.get('detail')}）。"
            "at は run.clock() のミリ秒（整数）です"
        )
    missing = [tid for tid in ids if tid not in data]
    extra = [k for k in data if k not in ids]
    if extra:
        return f"台帳に tool_use_id ではないキー {extra} があります。キーはその呼び出しの tool_use_id です"
    lost = [tid for tid in missing if tid in _ever_recorded(f)]
    if lost:
        return (
            f"{lost} の記録は一度台帳に書かれたのに、通常の実行のあとには消えていました（いまの台帳: {list(data)}）。"
            "前の記録を消して上書きしています — 見直す: save_effect は台帳全体を読み（load_effects）、1件足して書き戻す"
        )
    if missing:
        names = [TOOL_OF.get(tid, tid) for tid in missing]
        unrecorded = f"{missing}（{', '.join(names)}）"
        if set(names) <= READ_ONLY:
            return (
                f"通常の実行のあと、台帳に {unrecorded}の記録が一度もありませんでした。読み取り専用のツールも記録します"
                " — 見直す: レッスンの runToolUses は、成功したツールを（副作用の有無にかかわらず）すべて台帳に書く"
            )
        return (
            f"通常の実行のあと、台帳に {unrecorded}の記録が一度もありませんでした。ツールが成功したその瞬間に1件ずつ"
            "記録します"
        )
    for tid in ids:
        entry = data[tid]
        name = TOOL_OF.get(tid) or next((r for r in outputs if r == tid), tid)
        if tid in TOOL_OF and entry.get("name") != TOOL_OF[tid]:
            return (
                f"台帳の {tid} の name が {show(entry.get('name'))} です。ツールの名前 {name!r} を記録します"
            )
        if entry.get("result") is None:
            return (
                f"台帳の {tid} に result=None（プレースホルダ）が記録されています。ツールが返した本物の結果を記録してください"
                " — 見直す: 台帳は「本当に起きた、結果はこれ」という約束"
            )
        if entry.get("result") != outputs.get(tid):
            return (
                f"台帳の {tid} の result が、ツールが返した本物の結果と違います（台帳: {show(entry.get('result'), 80)}、"
                f"ツール: {show(outputs.get(tid), 80)}）"
            )
    return None


def _results_problem(f: dict, ids: list[str], outputs: dict) -> str | None:
    results = _results(f)
    for tid in ids:
        result = results.get(tid)
        if result is None:
            return f"{tid} の tool_result が返っていません"
        if result.get("is_error"):
            return f"{tid} の tool_result が is_error になっています。ツールは成功しました"
        if _text(result.get("content")) != outputs.get(tid):
            return (
                f"{tid} の tool_result の content が、ツールが返した結果と違います（{show(result.get('content'), 80)}）。"
                "モデルにはツールの本物の結果を返します"
            )
    return None


def _judge_clean(f: dict) -> str | None:
    ids = [tid for _, _, tid in TASK_CALLS]
    if f["error"]:
        return f"通常の実行でエラーになりました: {_error(f['error'], f)}"
    outputs = _outputs(f)
    return (
        _exec_counts(f, ids)
        or _wrong_key(f)
        or _before_execution(f)
        or _writer_error(f)
        or _ledger_problem(f, f["ledger"], ids, outputs, f.get("cwd_ledger", False))
        or _atomic(f)
        or _results_problem(f, ids, outputs)
        or (None if f["final"] == DONE_OK else f"通常の実行の締めくくりが {show(f['final'])} でした")
    )


def _judge_two_blocks(f: dict) -> str | None:
    ids = [b["id"] for b in TWO_BLOCKS if b["type"] == "tool_use"]
    if f["error"]:
        return f"エラーになりました: {_error(f['error'], f)}"
    returned = [r.get("tool_use_id") for r in _results(f).values()]
    if sorted(map(str, returned)) != sorted(ids):
        return (
            f"tool_use が2つの応答に、tool_result が {returned} しか返りませんでした。すべての tool_use ブロックに"
            "対の tool_result を返します（ループの途中で return していませんか）"
        )
    outputs = _outputs(f)
    return (
        _exec_counts(f, ids)
        or _wrong_key(f)
        or _before_execution(f)
        or _recorded_late(f)
        or _writer_error(f)
        or _ledger_problem(f, f["ledger"], ids, outputs, False)
        or _atomic(f)
        or _results_problem(f, ids, outputs)
    )


def _wrong_key(f: dict) -> str | None:
    """A tool's result recorded under another call's tool_use_id (content[-1]["id"], a loop variable gone stale):
    as a tool starts, the ledger already holds its id, with the result of a tool that ran before it."""
    outputs: dict = {}
    for r in _ran(f):
        record = (r.get("ledger_at_start") or {}).get(r["id"])
        if isinstance(record, dict):
            source = next(
                (tid for tid, out in outputs.items() if tid != r["id"] and record.get("result") == out), None
            )
            if source:
                return (
                    f"{source} の結果が、まだ実行していない {r['id']} のキーで台帳に書かれていました（{r['id']} が始まった"
                    f"瞬間の effects.json）。キーはその呼び出し自身の tool_use_id です — 見直す: 記録するとき、"
                    "いま実行したブロックの id を使っているか（別のブロックの id になっていませんか）"
                )
        if r.get("outcome") == "ran":
            outputs[r["id"]] = r.get("output")
    return None


def _recorded_late(f: dict) -> str | None:
    """Each tool's record is on disk before the next tool starts (written at the moment it succeeds, not in a batch
    at the end): what effects.json held as each tool started."""
    finished: list[str] = []
    for r in _ran(f):
        for earlier in finished:
            if earlier not in r.get("ledger_keys", []):
                return (
                    f"{earlier} の記録を、次のツール {r['id']} を実行するまで後回しにしています（{r['id']} が始まった"
                    f"瞬間の effects.json に {earlier} がありませんでした）。ツールが成功したその瞬間に1件ずつ書きます"
                    "（まとめて書くと、そのあいだに落ちたとき、走ったのに記録のない呼び出しが増えます）"
                )
        if r.get("outcome") == "ran":
            finished.append(r["id"])
    return None


def _judge_kill(f: dict, kind: str, tool: str) -> str | None:
    tid = ID_OF[tool]
    where = {
        "kill_start": f" {tool} が始まった瞬間",
        "kill_after": f" {tool} が返った直後",
        "kill_before_b": "地点Bの直前",
    }[kind]
    if not f["killed"]:
        return (
            f"エラーになりました: {_error(f['error'], f)}"
            if f["error"]
            else f"{tool} が一度も実行されませんでした"
        )
    error = f["error"]
    if f.get("killed_in_thread") and not (error and error["ours"]):
        return (
            f"チェックは{where}にプロセスを落としました（疑似キル）が、それはあなたの関数が始めた別のスレッドの中で起き、"
            "関数は止まらずに続きました。本物のキルはプロセス全体を止めます — 見直す: レッスンの runToolUses は"
            "ツールを別スレッドに出さず、ループの中で1つずつ順に実行する"
        )
    if error is None:
        return (
            f"チェックは{where}にプロセスを落としました（疑似キル）が、あなたの関数はそれを捕まえて続行しました。本物の"
            "キルは捕まえられません — except: や except BaseException: ではなく、except ToolError（または "
            "except Exception）でツールの失敗だけを捕まえてください"
        )
    if not error["ours"]:
        return (
            f"{where.strip()}の疑似キルのあと、あなたのコードから別のエラーが出ました（{_error(error, f)}）。落ちたあとに"
            " finally や except で何かをしていませんか"
        )
    at_kill = _ledger_data(f["ledger_at_kill"])
    output = _outputs(f).get(tid)
    if kind == "kill_start" and tid in at_kill:
        return (
            f"{tool} が始まった瞬間（まだ何も実行していない）に落としたとき、effects.json にはすでに {tid} があり、"
            f"result={show(at_kill[tid].get('result'), 60)} でした。実行が先、記録が後です — 見直す: {LESSON_ORDER}"
        )
    if kind == "kill_after" and tid in at_kill:
        return (
            f"{tool} が返った直後（台帳に書く前）に落としたとき、effects.json にはすでに {tid} がありました。"
            "記録はツールが返ってから、その本物の結果で書きます"
        )
    if kind == "kill_before_b":
        if tid not in at_kill:
            return (
                f"run_tool_uses が {tool} の結果を返したあと（地点Bの前）に落としたとき、effects.json に {tid} が"
                "ありませんでした。ツールが成功したその瞬間に台帳へ記録します"
            )
        if at_kill[tid].get("result") != output:
            return (
                f"地点Bの直前に落としたとき、台帳の {tid} の result が本物の結果ではありませんでした"
                f"（{show(at_kill[tid].get('result'), 60)}）"
            )
    resume = f.get("resume")
    if resume is None:
        return "--resume まで進めませんでした"
    if resume["error"]:
        return f"--resume がエラーになりました: {_error(resume['error'], resume)}"
    branches = [e[1].get("branch") for e in resume.get("events", []) if e[0] == "reconcile"]
    expected = "hit" if kind == "kill_before_b" else "rerun" if tool in READ_ONLY else "unknown"
    if branches != [expected]:
        took = RECONCILE_LINES.get(branches[0], "なし") if branches else "なし（reconcile の出番なし）"
        return f"--resume の reconcile が「{took}」でした。台帳の記録がこの瞬間のディスクと合っていません"
    after = _ledger_data(resume["ledger"])
    for kept in _ledger_data(f["ledger_at_kill"]):
        if kept not in after:
            return (
                f"--resume のあと、台帳から {kept} の記録が消えました（落ちる前にはありました）。台帳はファイルが正本です:"
                " 書くたびに load_effects で読み直し、1件足して書き戻します（メモリの中の台帳は再開で消えます）"
            )
    for r in _ran(resume, "any"):
        if r.get("outcome") == "ran" and r["id"] not in after:
            return (
                f"--resume のあとに実行した {r['id']}（{r['name']}）の記録が、最後には台帳にありません。"
                "そのあとの書き込みで消えていませんか: 書くたびに load_effects で読み直し、1件足して書き戻します"
                "（メモリの中の台帳は再開で消えます）"
            )
    total = sum(
        1 for r in _ran(f, "any") + _ran(resume, "any") if r["id"] == tid and r.get("outcome") == "ran"
    )
    if tool not in READ_ONLY and total > 1:
        return f"{tool} が落ちる前と --resume のあとで合わせて {total} 回実行されました（副作用の重複）"
    final = DONE_UNKNOWN.format(name="write_report") if expected == "unknown" else DONE_OK
    if resume["final"] != final:
        return f"--resume の締めくくりが {show(resume['final'], 80)} でした（期待: {final!r}）"
    return None


def _judge_fail(f: dict, tool: str, notes: list[str]) -> str | None:
    tid = ID_OF[tool]
    result = _results(f).get(tid)
    if f["error"] and f["error"]["type"] == "ToolError":
        return (
            f"{tool} が失敗（ToolError）したとき、例外が run_tool_uses の外まで出てループが止まりました。"
            "try/except で受け止めて is_error の tool_result にして返してください（レッスンの catch (err)）"
        )
    attempts = sum(1 for r in _ran(f) if r["id"] == tid)
    if attempts > 1:
        return (
            f"失敗した {tool} をもう一度実行しています（{attempts} 回）。失敗は is_error でモデルに返します"
        )
    if result is None:
        if f["error"]:
            return f"{tool} が失敗したあと、エラーになりました: {_error(f['error'], f)}"
        return (
            f"失敗した {tid} の tool_result が返っていません。すべての tool_use に対の tool_result が必要です"
        )
    if result.get("is_error") is not True:
        return (
            f"失敗した {tid} の tool_result に is_error: True がありません（{show(result, 100)}）。モデルに失敗を"
            "正直に伝えます"
        )
    content = _text(result.get("content"))
    if not isinstance(content, str) or not content.strip():
        return (
            f"失敗した {tid} の tool_result の content が空です（{show(result.get('content'), 80)}）。is_error だけでは"
            "モデルに何が起きたのか伝わりません — 見直す: レッスンの catch (err) が content に入れているもの"
        )
    if FAIL_TEXT not in content:
        notes.append(
            f"（メモ: 失敗した {tid} の tool_result の content（{show(content, 60)}）に、例外のメッセージが入っていません。"
            "レッスンのようにエラーの内容を入れると、モデルが何を直せばよいか分かります。合否には影響しません）"
        )
    recorded = _ledger_data(f["ledger"]).get(tid)
    if recorded is not None or f["ledger"].get("state") == "odd":
        return (
            f"失敗した {tid} を台帳に記録しています（{show(recorded, 80)}）。台帳は本当に起きたことだけ: 失敗は"
            "記録しません（記録すると、再開が「実行済み」と誤って判定します）"
        )
    if f["error"]:
        return f"{tool} が失敗したあと、エラーになりました: {_error(f['error'], f)}"
    return None


def _judge_ledger_fails(f: dict, tool: str, outcome) -> str | None:
    tid = ID_OF[tool]
    refused = any(e[0] == "ledger" and e[1] == "refused" for e in f.get("log", []))
    if f["error"]:
        if refused and f["error"]["type"] in ("OSError", "HarnessError", "UnsafeFile"):
            return (
                f"台帳の書き込みが失敗した（{f['error']['type']}）とき、例外がループの外まで出ました。{tool} の副作用は"
                "もう起きています: 例外で止めず、アラートを上げて、本物の結果を tool_result で返してください"
            )
        return f"エラーになりました: {_error(f['error'], f)}"
    if not refused:
        return (
            None  # the function wrote its record by a route the check cannot make fail; nothing to judge here
        )
    result = _results(f).get(tid)
    if result is None:
        return f"台帳の書き込みが失敗したとき、{tid} の tool_result が返っていません"
    if result.get("is_error"):
        return (
            f"台帳の書き込みが失敗したとき、{tool} の tool_result を is_error にしています。副作用（report.txt）は"
            "すでに起きているので嘘になり、モデルは新しい tool_use_id で再試行して副作用が重複します — 見直す: "
            "レッスンは台帳の書き込みだけを別の try で囲み、アラートを上げるだけにする"
        )
    if _text(result.get("content")) != _outputs(f).get(tid):
        return f"台帳の書き込みが失敗したとき、{tid} の tool_result に本物の結果を返していません"
    heard = next((c["heard"] for c in f.get("calls", []) if c.get("heard")), None) or {}
    if any(_names_the_failure(text, tid) for text in [heard.get("stderr", ""), *heard.get("alerts", [])]):
        return None
    said = [t.strip() for t in [heard.get("stderr", ""), *heard.get("alerts", [])] if t.strip()]
    printed = heard.get("stdout", "").strip()
    head = f"{tool}（{tid}）のあと台帳の書き込みが失敗しましたが、"
    revisit = (
        " — 見直す: レッスンの runToolUses の2つ目の try/catch（副作用はもう起きているので、人間が対処できるよう"
        "アラートを上げる。レッスンは console.error）"
    )
    if said:
        return (
            head
            + f"そのあとの知らせ（{show(said[0][-80:], 90)}）は、どの呼び出し（tool_use_id）の記録が失敗したのかを"
            "言っていません。アラートには tool_use_id（または「台帳」の失敗であること）を入れます" + revisit
        )
    if printed:
        return (
            head + f"標準エラーにもアラートのイベントにも知らせがありませんでした（標準出力に出た行: "
            f"{show(printed.splitlines()[-1][-80:], 90)}）。ふつうの出力に混ぜず、標準エラーかアラートのイベント"
            "で知らせます" + revisit
        )
    return head + "何も知らせずに握りつぶしています。人間が確認できるよう、アラートを上げます" + revisit


def _names_the_failure(text: str, tid: str) -> bool:
    """An alert worth the name: it says which call's record failed, or that it is the ledger."""
    folded = text.casefold()
    return tid in text or "台帳" in text or "ledger" in folded or "effects.json" in folded
