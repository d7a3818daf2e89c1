"""Level 2 (c): the learner's fixed run_tool_uses, judged by what it does, side by side with the lesson's.

Both functions go through the same table of situations (runner.py: a clean run; each tool killed as it starts,
after it returns, inside the ledger write with a torn temp file, and after its record; each tool failing; a stale
temp file; notes longer than 1,000 characters; one turn with two tool_use blocks of the same tool whose ids do not
sort in content order; a work folder on another file system than the system temp folder where there is one), each
run in a fresh interpreter that has run only the answer cell. What is compared is what the lesson's 完了基準 asks:
the ledger after each run, how often each tool ran, the tool_results (the API's keys only, every id paired, in
order), and what --resume decides. A difference there is ✗ and cites the criterion; a difference beyond it (a tool
failure not caught) is a 💡 note that never changes the verdict.
"""

from __future__ import annotations

import ast
import inspect
import json
import linecache
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import types
from pathlib import Path

from .. import texts
from ..texts import RECONCILE_LINES
from . import Verdict, internal_error, no_paths
from .answers import MISSING, show
from .jail import OUTPUT_LIMIT, TIME_LIMIT_S, end_session, outside, snapshot, watched_folders

TITLE = "レベル2 (c) 修正版 run_tool_uses"
ORDER = (
    "完了基準「正しい順序の提示」: まず execute_tool で本物の結果を得て、それが成功した後に初めて save_effect でその本物の"
    "結果を台帳へ書き、それから tool_result を push する"
)
PAIRING = "完了基準「帰結の説明」: どの tool_use にも、その tool_use_id の tool_result がちょうど1つ対になる（API の要求）"
API_KEYS = {"type", "tool_use_id", "content", "is_error"}
GROUPS = {
    "clean": "通常の実行: 3つのツールがそれぞれ1回ずつ実行され、台帳には本物の結果が tool_use_id ごとに記録された",
    "kill_start": "各ツールが始まった瞬間に落として --resume: 台帳にまだレコードはなく、再開の判断もレッスン版と同じ",
    "kill_after": "各ツールが返った直後（台帳の前）に落として --resume: 台帳にまだレコードはなく、再開もレッスン版と同じ",
    "kill_torn": "台帳の書き込みの途中（半分だけの .tmp）で落として --resume: レッスン版と同じ結果",
    "kill_recorded": "記録のあと地点Bの前に落として --resume: 台帳に本物の結果があり、再開は台帳ヒット",
    "fail": "ツールが失敗したとき: 台帳には何も記録しない",
    "ledger_fails": "write_report のあと台帳の書き込みが失敗したとき: 台帳に偽のレコードを残さず、ツールも繰り返さなかった",
    "files": "古い effects.json.tmp が残っているとき、別のファイルシステムの作業フォルダ: レッスン版と同じ結果",
    "long_notes": "1,000 文字を超えるメモ: 台帳と tool_result に結果が切られずに入った",
    "two_blocks": "1つの応答に同じツールの tool_use が2つ（id は content の順に並んでいない）: content の順に実行して"
    "記録し、それぞれの id の tool_result を返した",
}


def label(s: dict) -> str:
    kind, _, tool = s["key"].partition(":")
    return {
        "clean": "通常の実行（クラッシュなし）",
        "kill_start": f"{tool} が始まった瞬間に落として --resume",
        "kill_after": f"{tool} が返った直後（台帳に書く前）に落として --resume",
        "kill_torn": f"{tool} の台帳の書き込みの途中（effects.json.tmp が半分）で落として --resume",
        "kill_recorded": f"{tool} の記録のあと、地点Bの前に落として --resume",
        "fail": f"{tool} が失敗する（ToolError）",
        "ledger_fails": "write_report のあと台帳の書き込みが失敗する（ディスクがいっぱい）",
        "write_then_read": "1つの応答に write_report → read_notes（書いてから読み返す、id は toolu_w2, toolu_r1 の順）",
        "two_blocks_kill": "1つの応答に tool_use が2つ、2つ目が始まった瞬間に落とす",
        "stale_tmp": "前の実行の effects.json.tmp が残った作業フォルダで実行",
        "long_notes": "1,000 文字を超えるメモで実行",
        "two_blocks": "1つの応答に read_notes の tool_use が2つ（id は toolu_zz9, toolu_aa1 の順）",
        "other_fs": "作業フォルダがシステムの一時フォルダとは別のファイルシステムにある",
    }[kind]


# -- what the runner is given: the answer cell's source, never the warmed kernel ---------------------------------------


def source_of(fn) -> tuple[str | None, str | None, str | None]:
    """(source, function name, problem): a notebook cell whole, a module function with what it refers to."""
    if isinstance(fn, str):
        return fn, None, None
    call = vars(type(fn)).get("__call__")
    code = getattr(fn, "__code__", None) or getattr(call, "__code__", None)
    if not hasattr(fn, "__code__") and code is not None and not os.path.exists(code.co_filename):
        return (
            "".join(linecache.getlines(code.co_filename)) or None,
            None,
            None,
        )  # an object with __call__ in a cell
    if code is None:
        return None, None, "run_tool_uses を def で書いた関数にしてください（いまは関数のソースを読めません）"
    cell = linecache.getlines(code.co_filename)
    if cell and not os.path.exists(
        code.co_filename
    ):  # a notebook cell (IPython keeps its source in linecache)
        return "".join(cell), fn.__name__, None
    try:
        return module_source(fn), fn.__name__, None
    except (OSError, TypeError, SyntaxError):
        return None, None, "関数のソースを読めません。def で1つのセルに書いてください"


def module_source(fn) -> str:
    """A function from a .py file as a cell of its own: its source, the functions of its module it uses (their
    sources), and imports or literal values for the other names it uses."""
    parts: list[str] = []
    header: list[str] = []
    seen: set[str] = set()

    def visit(f) -> None:
        src = textwrap.dedent(inspect.getsource(f))
        parts.append(src)
        seen.add(f.__name__)
        for name in sorted({n.id for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Name)} - seen):
            if name not in f.__globals__:
                continue
            seen.add(name)
            value = f.__globals__[name]
            if isinstance(value, types.ModuleType):
                header.append(f"import {value.__name__} as {name}")
            elif inspect.isfunction(value) and value.__module__ == f.__module__:
                visit(value)
            elif getattr(value, "__module__", None) and getattr(value, "__qualname__", None):
                header.append(f"from {value.__module__} import {value.__qualname__} as {name}")
            else:
                try:
                    if ast.literal_eval(repr(value)) == value:
                        header.append(f"{name} = {value!r}")
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    pass

    visit(fn)
    return "\n".join(header) + "\n\n" + "\n\n".join(reversed(parts))


def other_file_system() -> str | None:
    """A folder on another file system than the system temp folder (tmpfs /dev/shm on Linux), or None."""
    shm = Path("/dev/shm")
    try:
        if (
            shm.is_dir()
            and os.access(shm, os.W_OK)
            and shm.stat().st_dev != Path(tempfile.gettempdir()).stat().st_dev
        ):
            return tempfile.mkdtemp(prefix="harness-check-", dir=shm)
    except OSError:
        return None
    return None


def run_both(source: str, name: str | None, time_limit: float) -> dict:
    """Start the runner in a fresh interpreter and a session of its own; what it found (ends all it left)."""
    other = other_file_system()
    with tempfile.TemporaryDirectory(prefix="harness-check-", ignore_cleanup_errors=True) as tmp:
        spec, result = Path(tmp) / "spec.json", Path(tmp) / "result.json"
        base = Path(tmp) / "runs"
        base.mkdir()
        spec.write_text(
            json.dumps(
                {
                    "source": source,
                    "name": name,
                    "time_limit": time_limit,
                    "base": str(base),
                    "other_fs": other,
                }
            ),
            encoding="utf-8",
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.exercises.runner", str(spec), str(result)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        stuck = False
        try:
            proc.wait(timeout=time_limit * 2 + 240)
        except subprocess.TimeoutExpired:
            stuck = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait()
            end_session(
                proc.pid
            )  # the runner's children, even those the learner's code orphaned by killing it
            if other:
                import shutil

                shutil.rmtree(other, ignore_errors=True)
        if stuck or proc.returncode < 0:  # stopped or killed from outside: only the learner's code does that
            return {"runner_ended": int(signal.SIGSTOP) if stuck else -proc.returncode}
        try:
            return json.loads(result.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"runner_failed": proc.returncode}


# -- the verdict ----------------------------------------------------------------------------------------------------


def check_fix(run_tool_uses, time_limit: float = TIME_LIMIT_S, show_answers: bool = False):
    verdict = Verdict(TITLE, show_answers, "check_level2_fix(show_answers=True)")
    if run_tool_uses is Ellipsis or run_tool_uses is None or run_tool_uses is MISSING:
        verdict.unanswered(
            "修正版 run_tool_uses", "まだ関数が定義されていません（答えのセルを実行しましたか）"
        )
        return verdict
    if os.environ.get("HARNESS_FIX_RUNNER"):  # called from inside an answer cell the check is running
        verdict.notes.append("（チェックの中では、チェックを実行しません）")
        return verdict
    problem = shape(run_tool_uses)
    source, name, why = source_of(run_tool_uses) if not problem else (None, None, None)
    reach = reaches_into_the_check(source) if source else []
    if problem or why or reach:
        verdict.fail(problem or why or texts.JUDGE_REACHES.format(names=", ".join(reach)))
        return verdict
    verdict.notes.append(
        f"（チェックは答えのセルだけを新しい Python で実行し、状況ごとに別のプロセスで関数を走らせます。1回ごとに "
        f"{time_limit:g} 秒で打ち切り、関数が始めたプロセスはすべて終わらせます）"
    )
    try:
        before = snapshot(watched_folders())
        found = run_both(source, name, time_limit)
        judge(verdict, found, time_limit)
        outside(verdict, before)
    except Exception as err:  # noqa: BLE001 (never a traceback)
        return internal_error(TITLE, err)
    if show_answers and verdict.problems:
        from ..loop import run_tool_uses as lesson

        verdict.notes.append("（レッスン「副作用台帳」の run_tool_uses です。見比べてください）")
        verdict.notes.extend("    " + line for line in inspect.getsource(lesson).splitlines())
    return verdict


# Ways into the check's own process that a fix never needs: frames, the garbage collector, memory, other processes,
# the import system and the code objects of functions.
REACHING_NAMES = {
    "__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__", "__builtins__", "_getframe",
    "currentframe", "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "settrace", "setprofile",
    "getppid", "killpg", "get_objects", "get_referrers", "modules", "setattr", "delattr",
}  # fmt: skip
REACHING_MODULES = {"ctypes", "gc", "builtins", "importlib", "runpy", "signal", "ptrace"}


def reaches_into_the_check(source: str) -> list[str]:
    """What in the answer cell reaches into the check (a name above, or an assignment to a module's attribute)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []  # the runner reports it as the learner's error
    modules = {"harness", "os", "sys", "json", "pathlib", "builtins"}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                root = (
                    node.module if isinstance(node, ast.ImportFrom) and node.module else alias.name
                ).split(".")[0]
                if root in REACHING_MODULES:
                    found.append(f"import {root}")
                if isinstance(node, ast.Import):
                    modules.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.Attribute) and node.attr in REACHING_NAMES:
            found.append(node.attr)
        elif isinstance(node, ast.Name) and node.id in REACHING_NAMES:
            found.append(node.id)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete, ast.AnnAssign)):
            for target in getattr(node, "targets", None) or [node.target]:
                while isinstance(target, (ast.Attribute, ast.Subscript)):
                    target = target.value
                    if isinstance(target, ast.Name) and target.id in modules:
                        found.append(f"{target.id}.… =")
    return list(dict.fromkeys(found))[:5]


def shape(fn) -> str | None:
    if isinstance(fn, str):
        return None if "def " in fn else f"run_tool_uses が関数ではありません（{show(fn, 60)}）"
    if not callable(fn):
        return f"run_tool_uses が関数ではありません（{show(fn, 60)}）"
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return "run_tool_uses が async def です。Python 版のループは await しないので、def で書いてください"
    if inspect.isgeneratorfunction(fn):
        return "run_tool_uses の中に yield があります。results のリストを return してください"
    try:
        inspect.signature(fn).bind(object(), [])
    except TypeError:
        return (
            f"run_tool_uses は (run, content) の2つの引数で呼ばれます（いまの引数: {inspect.signature(fn)}）"
        )
    except ValueError:
        pass
    return None


def judge(verdict: Verdict, found: dict, time_limit: float) -> None:
    if "runner_ended" in found:
        verdict.fail(texts.JUDGE_CHECK_ENDED.format(signal=signal.Signals(found["runner_ended"]).name))
        return
    if "runner_failed" in found:
        raise RuntimeError(f"runner ended with {found['runner_failed']}")
    if "load_error" in found:
        e = found["load_error"]
        verdict.fail(
            f"答えのセルを新しい Python で実行できませんでした（{error_text(e)}）。関数が使うものは同じセルで"
            "定義するか import してください"
        )
        return
    if "load_timeout" in found:
        verdict.fail(texts.JUDGE_CELL_ENDLESS.format(seconds=found["load_timeout"]))
        return
    if found.get("no_function"):
        verdict.unanswered("修正版 run_tool_uses", "答えのセルに関数がありません")
        return
    first = found["situations"][0]["learner"][0]
    if (first.get("error") or {}).get("type") == "NotImplementedError":
        verdict.unanswered("修正版 run_tool_uses", "まだ書かれていません（NotImplementedError）")
        return
    changed = next(
        (step["tampered"] for s in found["situations"] for step in s["learner"] if step.get("tampered")), None
    )
    if changed:
        verdict.fail(texts.JUDGE_TAMPERED.format(names=", ".join(changed)))
        return
    failed_groups: set[str] = set()
    passed: dict[str, bool] = {}
    for s in found["situations"]:
        if s["group"] in failed_groups:
            continue
        problem, notes = compare(s, time_limit)
        for note in notes:
            if note not in verdict.notes:
                verdict.notes.append(note)
        if problem:
            failed_groups.add(s["group"])
            verdict.fail(f"{label(s)}: {problem}")
            show_output(verdict, s["learner"])
            break  # the first difference is the one to fix; the rest would repeat it
        passed.setdefault(s["group"], True)
    leftovers = sum(step.get("leftovers", 0) for s in found["situations"] for step in s["learner"])
    if leftovers:
        verdict.fail(
            f"あなたの関数が始めたプロセスが、関数が終わったあとも {leftovers} 個動き続けていたので、チェックが終わらせました。"
            "run_tool_uses はツールを実行して結果を返すだけにし、後ろで動くプロセスを残さないでください"
        )
    for group, text in GROUPS.items():
        if group in failed_groups:
            continue
        if group in passed:
            verdict.ok(text)
        elif failed_groups:
            verdict.skip(text.split(":")[0])


def show_output(verdict: Verdict, steps: list[dict]) -> None:
    for step in steps:
        if step.get("output"):
            cut = "、最初の部分" if step.get("output_total", 0) > OUTPUT_LIMIT else ""
            verdict.notes.append(
                f"（この実行であなたの関数が出力した内容（{step['output_total']:,} バイト{cut}）:"
            )
            verdict.notes.extend("    " + line for line in step["output"].splitlines())


def error_text(e: dict) -> str:
    text = f"{e['type']}: {e['message']}" if e.get("message") else e["type"]
    if e.get("where") and e["where"].get("code"):
        text += f"（あなたのセルの {e['where']['line']} 行目: {e['where']['code']}）"
    elif e.get("where"):
        text += f"（あなたのセルの {e['where']['line']} 行目）"
    return no_paths(text)


def results_problem(learner: list, lesson: list, pairing_only: bool = False) -> str | None:
    """The tool_results each call returned: the API's keys only, every id paired, in order, the same content (not
    compared when pairing_only: what a call beyond the criterion told the model is a 💡 note, not ✗)."""
    for mine, theirs in zip(learner, lesson):
        if not isinstance(mine, list):
            return f"run_tool_uses が tool_result のリストではなく {show(mine, 60)} を返しました。{PAIRING}"
        for block in mine:
            extra = sorted(set(block) - API_KEYS) if isinstance(block, dict) else None
            if extra is None or block.get("type") != "tool_result":
                return f"返したリストに tool_result ではないもの {show(block, 80)} があります。{PAIRING}"
            if extra:
                return (
                    f"tool_result に API にないキー {extra} があります（本物の API はこれを 400 で拒否します）。"
                    f"使えるのは type, tool_use_id, content, is_error だけです"
                )
        ids = [b.get("tool_use_id") for b in mine]
        want = [b["tool_use_id"] for b in theirs]
        if ids != want:
            return (
                f"tool_result の tool_use_id が {ids} の順でした（応答の tool_use は {want} の順）。{PAIRING}"
            )
        for a, b in zip(mine, theirs):
            if pairing_only:
                break
            if a.get("is_error") and not b.get("is_error"):
                return (
                    f"{a.get('tool_use_id')} のツールは実際に実行されたのに、tool_result を is_error で返しました。"
                    f"モデルは失敗と受け取り、新しい呼び出しで副作用を繰り返します。{ORDER}"
                )
            if not b.get("is_error") and (
                a.get("is_error") or comparable(text_of(a.get("content"))) != comparable(b.get("content"))
            ):
                return (
                    f"{a.get('tool_use_id')} の tool_result の content がツールの本物の結果と違います"
                    f"（{show(a.get('content'), 80)}）。{ORDER}"
                )
    return None


REPORT_RESULT = re.compile(r"^(.+ に )\d+( 文字のレポートを書き出しました)$")


def comparable(value: object) -> object:
    """A result as compared: write_report's says how long the report is, and the report is composed from the earlier
    tool_results, whose form (an error's wording, text blocks) a learner may choose."""
    return REPORT_RESULT.sub(r"\1#\2", value) if isinstance(value, str) else value


def same_ledger(mine: object, theirs: object) -> bool:
    """The same records under the same ids, each with the same tool and (comparable) result."""

    def norm(ledger: object) -> object:
        if not isinstance(ledger, dict):
            return ledger
        return {
            k: {**v, "result": comparable(v.get("result"))} if isinstance(v, dict) else v
            for k, v in ledger.items()
        }

    return norm(mine) == norm(theirs)


def text_of(content: object) -> object:
    """A tool_result's content as text: the API takes a string or a list of text blocks."""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text")) for b in content)
    return content


def ledger_text(ledger: dict) -> str:
    if not ledger:
        return "空（レコードなし）"
    return "、".join(
        f"{k}（result={show(v.get('result') if isinstance(v, dict) else v, 24)}）" for k, v in ledger.items()
    )


def compare(s: dict, time_limit: float) -> tuple[str | None, list[str]]:
    """The first difference that matters between the learner's runs and the lesson's, and notes beyond it."""
    notes: list[str] = []
    kind = s["key"].partition(":")[0]
    for i, (mine, theirs) in enumerate(zip(s["learner"], s["lesson"] + [{}])):
        when = "--resume が " if i else ""
        if mine.get("timed_out"):
            return (
                f"{when}{time_limit:g} 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました",
                notes,
            )
        if mine.get("died"):
            return (
                f"{when}実行中にプロセスが終わってしまいました（{mine['died']}）。sys.exit や os._exit を呼んでいませんか",
                notes,
            )
        if not theirs:
            break
        error = mine.get("error")
        if kind == "fail" and error and error["type"] == "ToolError":
            notes.append(
                "💡 ツールが失敗したとき、ToolError が run_tool_uses の外まで出てタスクが止まりました。完了基準の外ですが、"
                "レッスンの runToolUses のように catch して is_error の tool_result で返すと、モデルが対処できます"
            )
            error = None
            if s["fail"] in (mine.get("ledger") or {}):
                return (
                    f"失敗した {s['fail']} を台帳に記録しています（{ledger_text(mine['ledger'])}）。{ORDER}",
                    notes,
                )
            break
        if kind == "ledger_fails" and error:
            # A result left unpaired stops the run too (the checkpoint refuses it): that is ✗, not the failure itself.
            problem = results_problem(
                mine.get("results") or [], theirs.get("results") or [], pairing_only=True
            )
            if problem:
                return problem, notes
        if kind == "ledger_fails" and error and error["type"] in ("OSError", "HarnessError"):
            notes.append(
                "💡 台帳の書き込みが失敗したとき、例外が run_tool_uses の外まで出てタスクが止まりました。完了基準の外ですが、"
                "副作用はもう起きているので、レッスンのように本物の結果を返してアラートを上げると、再開で重複しません"
            )
            break
        if error and not theirs.get("error"):
            if error["type"] == "APIError":
                return f"モデル（API）が会話を拒否しました（{error['message'][:120]}）。{PAIRING}", notes
            return f"{when}エラーになりました: {error_text(error)}", notes
        if theirs.get("killed") and not mine.get("killed"):
            return (
                (
                    "チェックはここでツールの実行（execute_tool）か台帳の書き込み（save_effect）の瞬間に落とすはずでしたが、"
                    "その瞬間が来ませんでした。ツールは execute_tool(run, block) で実行し、台帳へは save_effect で書いてください"
                    f"（この演習は2つの順序を直すものです）。{ORDER}"
                ),
                notes,
            )
        if i == 0 and kind == "clean" and mine.get("saves") == 0:
            return (
                (
                    "save_effect を一度も呼んでいません（台帳を自分で書いているか、書いていません）。台帳へは save_effect で"
                    f"書いてください（この演習は execute_tool と save_effect の順序を直すものです）。{ORDER}"
                ),
                notes,
            )
        if mine.get("overlap") and not theirs.get("overlap"):
            return (
                "2つのツールが同時に（並行して）実行されました。レッスンの runToolUses は tool_use ブロックを1つずつ順に"
                "実行します（save_effect の「読む→1件足す→書き戻す」が同時に走ると、互いの記録を消します）。"
                + ORDER,
                notes,
            )
        # The ledger write itself failing is beyond the lesson's criterion: only the ledger and the runs (the
        # criterion's own concerns, below) can be ✗ there; what the model was told and said next is a 💡 note.
        beyond = kind == "ledger_fails"
        if beyond:
            notes.extend(ledger_failure_notes(s, mine, theirs))
        if not beyond and (
            mine.get("assistant") != theirs.get("assistant")
            or mine.get("content_after") != theirs.get("content_after")
        ):
            return (
                (
                    "checkpoint.json の assistant のメッセージ（モデルの応答）が、レッスン版と違います。run_tool_uses が"
                    "受け取った content を書き換えていませんか。content はすでに messages に入っているモデルの応答です: "
                    f"読むだけにして、結果は新しい tool_result のリストで返します。{PAIRING}"
                ),
                notes,
            )
        if mine.get("runs") != theirs.get("runs"):
            return (
                f"{when}ツールの実行（tool-runs.log）が {mine.get('runs')} でした（レッスン版では {theirs.get('runs')}）。"
                + ("execute_tool を通さずにツールを実行していませんか。" if not mine.get("runs") else "")
                + ORDER,
                notes,
            )
        if same_ledger(mine.get("ledger"), theirs.get("ledger")) is False:
            return (
                f"{when}{'終わったあと' if not mine.get('killed') else '落ちた瞬間'}の effects.json が "
                f"{ledger_text(mine.get('ledger') or {})} でした（レッスン版では {ledger_text(theirs.get('ledger') or {})}）。"
                + ORDER,
                notes,
            )
        if mine.get("files") != theirs.get("files"):
            extra = sorted(set(mine.get("files") or []) - set(theirs.get("files") or []))
            return (
                f"{when}作業フォルダに余分なファイル {extra} が残りました（レッスン版では残りません）。{ORDER}",
                notes,
            )
        if not mine.get("killed"):
            problem = results_problem(mine.get("results") or [], theirs.get("results") or [], beyond)
            if problem:
                return problem, notes
            if beyond:
                continue
            if mine.get("branches") != theirs.get("branches"):
                took = [RECONCILE_LINES.get(b, b) for b in mine.get("branches") or []]
                return (
                    f"--resume の reconcile が {took or 'なし'} でした（レッスン版と違います）。{ORDER}",
                    notes,
                )
            if mine.get("final") != theirs.get("final"):
                return (
                    f"{when}締めくくりが {show(mine.get('final'), 80)} でした（レッスン版は {show(theirs.get('final'), 80)}）",
                    notes,
                )
    return None, notes


def ledger_failure_notes(s: dict, mine: dict, theirs: dict) -> list[str]:
    """💡 notes on a ledger write that failed after the tool ran (beyond the criterion, never ✗): the call reported
    as failed although it ran, a different reply, no alert raised."""
    failed_id = s["ledger_fails"]
    mine_results = [
        b for r in mine.get("results") or [] if isinstance(r, list) for b in r if isinstance(b, dict)
    ]
    lied = any(b.get("tool_use_id") == failed_id and b.get("is_error") for b in mine_results)
    notes = []
    if lied:
        notes.append(texts.JUDGE_LEDGER_FAILED_IS_ERROR)
    elif (mine.get("results"), mine.get("assistant"), mine.get("final")) != (
        theirs.get("results"),
        theirs.get("assistant"),
        theirs.get("final"),
    ) and results_problem(mine.get("results") or [], theirs.get("results") or []):
        notes.append(texts.JUDGE_LEDGER_FAILED_OTHER)
    if not lied and not mine.get("alerted") and not mine.get("error") and not mine.get("output"):
        notes.append(texts.JUDGE_LEDGER_FAILED_SILENT)
    return notes
