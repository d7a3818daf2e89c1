"""Level 2 (d): the learner's reproduction script, run as real processes, in a scratch copy, with a time limit.

The script is copied into a scratch folder and run there (never with the exercises folder as its working
directory), each run stopped after SCRIPT_TIME_LIMIT_S seconds with its output cut (harness.lab.process.run_child).
It runs at REPRO_CRASH=2 and 3 (the crash must land on that very tool, in both orders) and without REPRO_CRASH (no
crash at all); then both N=3 folders are resumed with the real command line: the wrong order claims 完了 for a
report that was never written, the fixed one honestly says the outcome is unknown.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .. import texts
from ..lab import read_text
from ..lab.process import run_harness
from ..texts import DONE_OK, DONE_UNKNOWN, RECONCILE_LINES
from ..transcript import untrusted
from ..vocab import EFFECTS_FILE, REPORT_FILE, TOOL_LOG_FILE
from . import Verdict, internal_error, no_paths, scratch_dir
from .answers import blank, show
from .jail import (
    OUTPUT_LIMIT,
    SCRIPT_TIME_LIMIT_S,
    outside,
    run_jailed,
    snapshot,
    wall_limit,
    watched_folders,
)

TITLE = "レベル2 (d) 再現スクリプト"
CALLS = ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]
TOOL_NAMES = {c.split()[0] for c in CALLS}
ORDER_NAMES = {"wrong": "誤った順序", "fixed": "修正した順序"}
HIT_LINE = f"[resume][reconcile] tool_use_id=toolu_03 name=write_report {RECONCILE_LINES['hit']}"
UNKNOWN_LINE = f"[resume][reconcile] tool_use_id=toolu_03 name=write_report {RECONCILE_LINES['unknown']}"
SOLUTION = "解答例は solutions/level2_repro.py です"
WORK = "work"  # the work folder show_repro gives the script (the check gives each run a name of its own)
HARNESS_FILES = (".harness-workdir", "checkpoint.json", EFFECTS_FILE, TOOL_LOG_FILE)
CALLS_ENV, CALLS_LOG = (
    "HARNESS_REPRO_CALLS",
    ".check-tool-calls",
)  # where the probe notes each tool as it starts
TOOL_IDS = {c.split()[0]: c.split()[1] for c in CALLS}


def work_name(order: str, n: str | None) -> str:
    """The work folder the check passes as sys.argv[2]: different for every run, so a script that ignores its
    argument and writes to a folder of its own choosing is seen."""
    return f"work-{order}-{n or 'none'}"


def run_script(script: Path, folder: Path, order: str, n: str | None, time_limit: float, work: str = WORK):
    """A fresh copy of the script in folder, run there as `python SCRIPT ORDER WORK` (REPRO_CRASH=n if given):
    whatever it does to its own folder, it does to a copy, never to the learner's exercises folder."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / script.name
    shutil.copyfile(script, copy)
    env = {CALLS_ENV: str((folder / CALLS_LOG).resolve())}
    proc = run_jailed(
        [sys.executable, "-m", "harness.exercises.repro", copy.name, order, work],
        env={**env, "REPRO_CRASH": n},  # None: not set in the script's run, even when this process has it
        cwd=copy.parent,
        timeout=time_limit,
        max_chars=OUTPUT_LIMIT,
    )
    # the script's output reaches the verdict as text: its control characters and escape sequences shown, never sent
    proc.stdout, proc.stderr = (shown_lines(proc.stdout), shown_lines(proc.stderr))
    return proc


def shown_lines(text: str) -> str:
    """Output from a learner's script, line by line, made safe for the terminal (untrusted, no length cut)."""
    return "\n".join(untrusted(line, limit=len(line) * 6 + 1) for line in text.split("\n"))


def last_line(proc) -> str:
    lines = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    return lines[-1][:200] if lines else "（出力なし）"


def todo_left(proc) -> str | None:
    found = re.search(r"NotImplementedError: (TODO \d[^\n]*)", proc.stderr)
    return found.group(1) if found else None


def todos_in(script: Path) -> list[str]:
    """Every TODO the script still raises (the template's `raise NotImplementedError("TODO n: ...")` lines)."""
    try:
        text = script.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return re.findall(r"""raise\s+NotImplementedError\(\s*["'](TODO \d[^"']*)["']""", text)


def script_error(proc) -> str | None:
    """The script's own failure: the last line of a traceback (or a SyntaxError) that is not the simulated crash,
    with the script's line it came from."""
    lines = proc.stderr.strip().splitlines()
    if not lines or not re.match(r"^[\w.]+(Error|Exception|Exit|Interrupt)\b", lines[-1]):
        return None
    if "SimulatedCrash" in lines[-1]:
        return None
    where, hint = "", ""
    for line in reversed(lines):
        found = re.match(r'\s*File "([^"]+)", line (\d+)(?:, in (\w+))?', line)
        if found and Path(found.group(1)).suffix == ".py" and "harness" not in Path(found.group(1)).parts:
            where = f"{Path(found.group(1)).name} の {found.group(2)} 行目で "
            if found.group(3) == "point":
                hint = (
                    "。クラッシュ地点 point の中で出た例外です: 疑似クラッシュは SimulatedCrash を投げ、main がそれを"
                    "捕まえて 137 で終了します"
                )
            break
    return f"{where}{lines[-1][:200]}{hint}"


def died_in_point(proc) -> bool:
    """The script ended with an exception raised inside its crash point (the template's point()): a crash there."""
    lines = proc.stderr.strip().splitlines()
    if proc.returncode in (0, 137, -9) or not lines or "Traceback" not in proc.stderr:
        return False
    frames = [re.match(r'\s*File "([^"]+)", line \d+, in (\w+)', line) for line in lines]
    mine = [
        f
        for f in frames
        if f and Path(f.group(1)).suffix == ".py" and "harness" not in Path(f.group(1)).parts
    ]
    return bool(mine) and mine[-1].group(2) == "point"


def elsewhere(folder: Path, work: str) -> list[str]:
    """Where the script wrote harness files other than its work folder (its own folder, a name it chose)."""
    found = [name for name in HARNESS_FILES if (folder / name).exists()]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != work):
        if any((sub / name).exists() for name in HARNESS_FILES):
            found.append(sub.name + "/")
    return found


def _ledger(workdir: Path) -> dict | str:
    text = read_text(workdir / EFFECTS_FILE)
    if text is None:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return "effects.json を JSON として読めません"
    return data if isinstance(data, dict) else "effects.json が JSON オブジェクトではありません"


def _result(entry: object) -> object:
    return entry.get("result") if isinstance(entry, dict) else entry


def _runs(workdir: Path) -> list[str]:
    return (read_text(workdir / TOOL_LOG_FILE) or "").splitlines()


def _calls(folder: Path) -> list[tuple[str, list[str]]]:
    """Every tool the script really started, however it reached it (execute_tool, run.tool_impls, TOOL_IMPLS), with
    the ledger's ids at that moment: what the probe noted."""
    found = []
    for line in (read_text(folder / CALLS_LOG) or "").splitlines():
        try:
            name, keys = json.loads(line)
        except (ValueError, TypeError):
            continue
        found.append((str(name), [str(k) for k in keys] if isinstance(keys, list) else []))
    return found


def _probe(args: list[str]) -> None:
    """`python -m harness.exercises.repro SCRIPT ARGS...`: the script run as `python SCRIPT ARGS...` would run it,
    with every tool of the harness noting, as it starts, its name and the ledger's ids (so the check sees a tool run
    even when the script bypasses execute_tool, and whether its record was already there)."""
    import os
    import runpy

    import harness

    from .. import run as run_module
    from .. import tools as tools_module

    log = os.environ.pop(CALLS_ENV, None)

    def noted(name, impl):
        def tool(workdir, input):
            try:
                keys = sorted(json.loads((Path(workdir) / EFFECTS_FILE).read_text(encoding="utf-8")))
            except (OSError, ValueError, TypeError):
                keys = []
            try:
                with open(log or os.devnull, "a", encoding="utf-8") as f:
                    f.write(json.dumps([name, keys]) + "\n")
            except OSError:
                pass  # the probe never changes what the script does
            return impl(workdir, input)

        return tool

    impls = {name: noted(name, impl) for name, impl in tools_module.TOOL_IMPLS.items()}
    run_module.TOOL_IMPLS = tools_module.TOOL_IMPLS = harness.TOOL_IMPLS = impls
    sys.argv = list(args)
    sys.path[0] = str(Path(args[0]).resolve().parent)
    runpy.run_path(args[0], run_name="__main__")


def check_repro(
    script: object, time_limit: float = SCRIPT_TIME_LIMIT_S, show_answers: bool = False
) -> Verdict:
    verdict = Verdict(TITLE, show_answers, "check_level2_repro(..., show_answers=True)")
    verdict.notes.append(
        f"（チェックはスクリプトを作業用のコピーで最大 {len(STEPS)} 回、そのあと --resume を2回実行し、その1回ごとに "
        f"{time_limit:g} 秒で打ち切ります）"
    )
    if blank(script) or script is None:
        verdict.unanswered(
            "再現スクリプト", "スクリプトのファイル名を渡してください（例: 'level2_repro.py'）"
        )
        return verdict
    try:
        path = Path(script)  # type: ignore[arg-type]
    except TypeError:
        verdict.fail(f"スクリプトはファイル名（文字列）で渡してください（いまは {show(script, 60)}）")
        return verdict
    if not path.is_file():
        verdict.fail(f"{path.name} が見つかりません（この notebook と同じフォルダにありますか）")
        return verdict
    if path.suffix != ".py":
        verdict.fail(
            f"{path.name} は Python スクリプト（.py）ではありません。TODO を埋めた level2_repro.py を渡してください"
        )
        return verdict
    try:
        before = snapshot(watched_folders())
        with scratch_dir() as tmp:
            _check(verdict, path, Path(tmp), time_limit)
        outside(verdict, before)
    except Exception as err:  # noqa: BLE001 (never a traceback)
        return internal_error(TITLE, err)
    if show_answers and verdict.problems:
        verdict.notes.append(f"（{SOLUTION}。見比べてください）")
    return verdict


STEPS = [("wrong", "2"), ("fixed", "2"), ("wrong", "3"), ("fixed", "3"), ("wrong", None), ("fixed", None)]


def _check(verdict: Verdict, script: Path, tmp: Path, time_limit: float) -> None:
    labels = [
        "REPRO_CRASH=2: 誤った順序は count_words の直前で落ち、台帳に toolu_02 のプレースホルダ（result=None）が残る",
        "REPRO_CRASH=2: 修正した順序は同じ地点で落ち、台帳に toolu_02 はない",
        "REPRO_CRASH=3: 誤った順序は write_report の直前で落ち、台帳に toolu_03 のプレースホルダが残る",
        "REPRO_CRASH=3: 修正した順序は同じ地点で落ち、台帳に toolu_03 はない",
        "REPRO_CRASH なし: 誤った順序は最後まで走る（クラッシュは環境変数で制御）",
        "REPRO_CRASH なし: 修正した順序も最後まで走る",
        (
            "誤った順序を --resume: 台帳ヒットで「完了」と言うが、report.txt はなく write_report は一度も走っていない"
            "（インシデントの再現）"
        ),
        "修正した順序を --resume: 台帳ミスかつ副作用ありなので、is_error で正直に「不明」と返す",
    ]
    folders = {}
    for i, (order, n) in enumerate(STEPS):
        folder = tmp / f"{order}-{n or 'none'}"
        proc = run_script(script, folder, order, n, time_limit, work_name(order, n))
        work = folder / work_name(order, n)
        folders[(order, n)] = work
        if proc.leftovers:
            note = (
                f"（スクリプトが始めたプロセスが、スクリプトの終わったあとも {proc.leftovers} 個動いていたので、チェックが"
                "終わらせました。後ろで動くプロセスを残さないでください）"
            )
            if note not in verdict.notes:
                verdict.notes.append(note)
        problem = _judge_run(order, n, proc, work, time_limit)
        if problem == "todo":
            todos = list(dict.fromkeys([*todos_in(script), todo_left(proc)]))
            verdict.unanswered("再現スクリプト", f"{'、'.join(todos)} がまだです")
            return
        if problem:
            verdict.fail(problem)
            _cut_note(verdict, proc)
            for rest in labels[i + 1 :]:
                verdict.skip(rest.split(":")[0])
            return
        verdict.ok(labels[i])
        entry = _ledger(work).get(f"toolu_0{n}") if order == "wrong" and n else None
        placeholder = _result(entry) if isinstance(entry, dict) else None
        if placeholder is not None and not any("💡 誤った順序のプレースホルダ" in x for x in verdict.notes):
            verdict.notes.append(texts.JUDGE_PLACEHOLDER_NOTE.format(value=show(placeholder, 40)))
    for i, order in enumerate(("wrong", "fixed"), start=6):
        problem = _judge_resume(order, folders[(order, "3")])
        if problem:
            verdict.fail(problem)
            for rest in labels[i + 1 :]:
                verdict.skip(rest.split(":")[0])
            return
        verdict.ok(labels[i])


def _cut_note(verdict: Verdict, proc) -> None:
    if proc.cut:
        verdict.notes.append(
            f"（スクリプトの出力が {proc.output_bytes:,} バイトあったので、最初の {OUTPUT_LIMIT:,} 文字だけを読みました）"
        )


def _judge_run(order: str, n: str | None, proc, work: Path, time_limit: float) -> str | None:
    what = f"REPRO_CRASH={n} で {order}" if n else f"REPRO_CRASH なしで {order}"
    if proc.ended_check:
        return f"{what}: " + texts.JUDGE_SCRIPT_ENDED_CHECK.format(signal=proc.ended_check)
    if proc.timed_out:
        return f"{what}: {time_limit:g} 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました"
    if todo_left(proc):
        return "todo"
    if died_in_point(proc):
        proc.returncode = (
            137  # any exception out of the crash point is the crash (完了基準: 制御されたクラッシュ地点)
        )
    error = script_error(proc)
    if error and proc.returncode not in (0, 137, -9):
        return f"{what}: スクリプトがエラーで終わりました（終了コード {proc.returncode}、最後の行: {error}）"
    calls = _calls(work.parent)
    runs = [f"{name} {TOOL_IDS.get(name, '?')}" for name, _ in calls] or _runs(work)
    ledger = _ledger(work)
    if isinstance(ledger, str):
        return f"{what}: {ledger}"
    other = elsewhere(work.parent, work.name)
    if EFFECTS_FILE in other:
        return (
            f"{what}: effects.json を作業フォルダ（2つ目の引数）ではなく、スクリプトを実行したフォルダに書いています。"
            "台帳は run.effects_path（作業フォルダの中）に書きます"
        )
    if not work.exists() or not (_runs(work) or ledger or (work / "checkpoint.json").exists()):
        if other:
            return (
                f"{what}: チェックは作業フォルダとして {work.name!r} を渡しましたが、スクリプトは {', '.join(other)} に"
                "書きました。作業フォルダは決め打ちせず、2つ目の引数（sys.argv[2]）を使います"
            )
        return (
            f"{what}: 2つ目の引数の作業フォルダに何も書かれていません。作業フォルダに sys.argv[2] を使っていますか"
            f"（終了コード {proc.returncode}、最後の行: {last_line(proc)}）"
        )
    if any(k in TOOL_NAMES for k in ledger):
        return (
            f"{what}: 台帳のキーがツール名 {sorted(ledger)} です。キーは tool_use_id です（同じツールを2回呼ぶと前の"
            "記録が上書きされ、reconcile も pendingToolUse の id で台帳を引きます）"
        )
    if n is None:
        if proc.returncode != 0:
            return (
                f"{what}: 最後まで走りませんでした（終了コード {proc.returncode}、最後の行: {last_line(proc)}）。"
                "クラッシュは環境変数 REPRO_CRASH があるときだけ起こします"
            )
        if runs != CALLS:
            return f"{what}: tool-runs.log が {runs} でした。3つのツールがそれぞれ1回ずつ走るはずです"
        if order == "fixed" and any(not isinstance(ledger.get(c.split()[1]), dict) for c in CALLS):
            return f"{what}: 台帳に3つの呼び出しの記録がそろっていません（{sorted(ledger)}）"
        if order == "fixed" and any(ledger[c.split()[1]].get("result") is None for c in CALLS):
            return f"{what}: 修正した順序なのに、台帳の result が None（プレースホルダ）のままです"
        return _recorded_when_started(what, order, calls)
    if proc.returncode not in (137, -9):
        if proc.returncode == 0 and "[kill]" in proc.stdout:
            return (
                f"{what}: 疑似クラッシュは起きました（[kill] の行があります）が、終了コードが 0 でした。レッスンの main の"
                "ように、疑似キルのあとは 137 で終わります（0 は「最後まで走った」という意味です）"
            )
        if proc.returncode == 0:
            return (
                f"{what}: 疑似クラッシュせず、最後まで走りました（終了コード 0）。クラッシュ地点を通るたびに数え、"
                "N 回目で落ちるようになっていますか（落ちたら main が 137 で終了します）"
            )
        if "Traceback" in proc.stderr:
            return (
                f"{what}: Traceback で終わりました（最後の行: {last_line(proc)}）。疑似クラッシュは SimulatedCrash を"
                "投げ、main がそれを捕まえて 137 で終了します"
            )
        return f"{what}: 終了コード {proc.returncode} で終わりました（最後の行: {last_line(proc)}）。疑似クラッシュは 137 です"
    return (
        _where_it_crashed(what, order, int(n), runs, ledger)
        or _recorded_when_started(what, order, calls)
        or _claims_problem(what, proc.stdout, f"toolu_0{n}", f"toolu_0{n}" in ledger)
    )


def _recorded_when_started(what: str, order: str, calls: list) -> str | None:
    """The order itself, seen at every tool start (not only at the crash): the wrong order has the call's record
    already (written before the tool ran), the fixed one never does."""
    for name, keys in calls:
        tid = TOOL_IDS.get(name)
        if order == "wrong" and tid not in keys:
            return texts.JUDGE_WRONG_NOT_EVERY_TIME.format(what=what, name=name, tid=tid)
        if order == "fixed" and tid in keys:
            return texts.JUDGE_FIXED_RECORDED_FIRST.format(what=what, name=name, tid=tid)
    return None


PRESENT = re.compile(
    r"(あり|ある|あった|存在する|書かれて|残って|残る|found|present|exists?|recorded|yes|true)", re.IGNORECASE
)
ABSENT = re.compile(
    r"(\bnot\s+(?:been\s+)?(?:found|present|exists?|recorded|there|written)|ありません|なし|ない|無い|\bnot\b|absent|"
    r"missing|\bno\b|false)",
    re.IGNORECASE,
)
ABOUT_RECORD = re.compile(r"(台帳|記録|レコード|effects|ledger|record|entry|toolu_0\d)", re.IGNORECASE)


def _claims_problem(what: str, output: str, tid: str, truth: bool) -> str | None:
    """A line where the script says whether the record is there, against effects.json at the crash. A line that
    could be read both ways is not held against it."""
    for line in output.splitlines():
        if (
            not ABOUT_RECORD.search(line) or "[kill]" in line or "{" in line or len(line) > 100
        ):  # data, not a claim
            continue
        absent, present = bool(ABSENT.search(line)), bool(PRESENT.search(ABSENT.sub(" ", line)))
        if absent == present:
            continue
        if present != truth:
            return texts.JUDGE_FALSE_CLAIM.format(
                what=what,
                line=line.strip()[:120],
                tid=tid,
                truth=texts.JUDGE_CLAIM_PRESENT if truth else texts.JUDGE_CLAIM_ABSENT,
            )
    return None


def _where_it_crashed(what: str, order: str, n: int, runs: list[str], ledger: dict) -> str | None:
    """Read from tool-runs.log and the ledger where the crash landed, and compare with REPRO_CRASH=n."""
    if runs != CALLS[: len(runs)]:
        return f"{what}: tool-runs.log が {runs} でした。ツールはそれぞれ1回ずつ、順に走るはずです"
    ran = [call.split()[1] for call in runs]
    recorded = [tid for tid in (c.split()[1] for c in CALLS) if tid in ledger]
    tool = CALLS[n - 1].split()[0]
    tid = f"toolu_0{n}"
    if order == "wrong":
        if recorded == ran + [
            f"toolu_0{len(ran) + 1}"
        ]:  # record, crash, (no) execution: the wrong order's window
            landed = len(recorded)
        elif recorded == ran and len(ran) == n:
            return (
                f"{what}: クラッシュ地点が {tool} の実行より後にあります（tool-runs.log に {tool}）。"
                "台帳の書き込みとツール実行のあいだ、ツールが走る前に置いてください"
            )
        elif recorded == ran and len(ran) == n - 1:
            return (
                f"{what}: 誤った順序なのに、クラッシュ時の台帳に {tid} がありません。誤った順序は run_tool_uses_prod と"
                "同じく、ツールを実行する前に台帳へ書き、そのあいだにクラッシュ地点を置きます"
            )
        else:
            landed = len(ran) + 1
        if landed == n:
            if tid not in ledger:
                return (
                    f"{what}: 誤った順序なのに、クラッシュ時の台帳に {tid} がありません。誤った順序は run_tool_uses_prod と"
                    "同じく、ツールを実行する前に台帳へ書きます"
                )
            if not isinstance(ledger[tid], dict):
                return (
                    f"{what}: 誤った順序の台帳の {tid} が {show(ledger[tid], 80)} でした。run_tool_uses_prod と同じく "
                    "{'name': ..., 'result': None, 'at': ...} のレコードを書きます"
                )
            return None  # written before the tool ran: whatever its result, a placeholder (a note says so)
    else:
        early = [t for t in recorded if t not in ran]
        if early:
            return (
                f"{what}: 修正した順序なのに、クラッシュ時の台帳に {early[0]} があります（{show(ledger[early[0]], 80)}）。"
                "修正した順序では、ツールが走る前に記録はできないはずです"
            )
        if len(ran) == n:
            after = "実行より後" if recorded != ran else "実行と記録より後"
            return (
                f"{what}: クラッシュ地点が {tool} の{after}にあります（tool-runs.log に {tool}）。"
                "ツールが走る前に置いてください"
            )
        for earlier in ran:
            entry = ledger.get(earlier)
            if not isinstance(entry, dict) or entry.get("result") is None:
                return (
                    f"{what}: 修正した順序で、先に走った {earlier} の本物の結果が台帳にありません"
                    f"（{show(entry, 80)}）。実行が先、記録が後、本物の結果で"
                )
        landed = len(ran) + 1
        if landed == n:
            return None
    where = f"{landed} 回目のツール呼び出し（{CALLS[landed - 1].split()[0]}）" if landed <= 3 else "どこか"
    return (
        f"{what}: REPRO_CRASH={n} なのに、落ちたのは {where}の前でした（tool-runs.log: {runs or 'なし'}）。"
        "N 回目のツール呼び出しの直前で落ちるように数えてください（環境変数の N を使っていますか）"
    )


def _judge_resume(order: str, work: Path) -> str | None:
    what = f"{ORDER_NAMES[order]}（REPRO_CRASH=3）のフォルダを --resume"
    try:
        resume = run_harness(work, "--resume", timeout=wall_limit(SCRIPT_TIME_LIMIT_S))
    except subprocess.TimeoutExpired:
        return f"{what}: {wall_limit(SCRIPT_TIME_LIMIT_S):g} 秒以内に終わりませんでした（作業フォルダに何か置いていませんか）"
    lines = resume.stdout.splitlines()
    runs = _runs(work)
    if resume.returncode != 0:
        first = (resume.stderr.strip().splitlines() or [texts.NOTHING_SAID])[0]
        return f"{what}: 再開がエラーになりました（{first}）"
    if order == "wrong":
        if HIT_LINE not in lines:
            return f"{what}: 台帳ヒットになりませんでした（{' / '.join(lines[:2])}）"
        if (work / REPORT_FILE).exists() or any(r.startswith("write_report") for r in runs):
            return f"{what}: write_report が実行され report.txt があります。インシデント（完了扱いで実は未実行）になっていません"
        if f"[done] {DONE_OK}" not in lines:
            return f"{what}: 締めくくりが「完了」になりませんでした（{lines[-1] if lines else 'なし'}）"
        return None
    if UNKNOWN_LINE not in lines or f"[done] {DONE_UNKNOWN.format(name='write_report')}" not in lines:
        return f"{what}: is_error（不明）の分岐になりませんでした（{' / '.join(lines[:2])}）"
    return None


def show_repro_runs(
    script: object, workdir: object = "_work", time_limit: float = SCRIPT_TIME_LIMIT_S
) -> None:
    """Like a terminal: both orders with REPRO_CRASH=3 in a scratch copy, then --resume of both folders. Never raises."""
    try:
        _show(Path(script), Path(workdir), time_limit)  # type: ignore[arg-type]
    except Exception as err:  # noqa: BLE001
        print(f"実行できませんでした（{type(err).__name__}: {no_paths(str(err))}）")


def _show(script: Path, workdir: Path, time_limit: float) -> None:
    if not script.is_file():
        print(f"{script.name} が見つかりません（この notebook と同じフォルダにありますか）")
        return
    if script.suffix != ".py":
        print(
            f"{script.name} は Python スクリプト（.py）ではありません。TODO を埋めた level2_repro.py を渡してください"
        )
        return
    base = workdir / "repro"
    shutil.rmtree(base, ignore_errors=True)
    print(
        f"（{script.name} のコピーを順序ごとに {base.as_posix()}/wrong/ と {base.as_posix()}/fixed/ に置き、"
        f"そこで実行します。実行は1回ごとに {time_limit:g} 秒まで）"
    )
    print()
    crashed = {}
    for order in ("wrong", "fixed"):
        folder = base / order
        proc = run_script(script, folder, order, "3", time_limit)
        print(f"$ cd {folder.as_posix()} && REPRO_CRASH=3 python {script.name} {order} {WORK}")
        print(proc.stdout, end="" if proc.stdout.endswith("\n") or not proc.stdout else "\n")
        if proc.cut:
            print(
                f"…（出力が {proc.output_bytes:,} バイトあったので、最初の {OUTPUT_LIMIT:,} 文字だけ表示しました）"
            )
        if proc.timed_out:
            print(f"（{time_limit:g} 秒で終わらなかったので打ち切りました）")
        elif proc.returncode not in (137, -9) and proc.stderr.strip():
            print(script_error(proc) or proc.stderr.strip().splitlines()[-1][:200])
        print(f"EXIT={proc.returncode}" + ("（SIGKILL で落ちました）" if proc.returncode == -9 else ""))
        crashed[order] = proc.returncode in (137, -9)
        ledger = _ledger(folder / WORK)
        entry = ledger.get("toolu_03") if isinstance(ledger, dict) else None
        shown = {k: entry.get(k) for k in ("name", "result")} if isinstance(entry, dict) else "なし"
        print(f"effects.json の toolu_03: {shown}")
        print()
    for order in ("wrong", "fixed"):
        work = base / order / WORK
        if not crashed[order]:
            print(f"（{ORDER_NAMES[order]}のスクリプトが疑似クラッシュしなかったので、--resume は省きます）")
            continue
        print(f"$ python -m harness --workdir {work.as_posix()} --resume")
        try:
            resume = run_harness(work, "--resume", timeout=wall_limit(time_limit))
        except subprocess.TimeoutExpired:
            print(f"（{wall_limit(time_limit):g} 秒で終わらなかったので打ち切りました）")
            continue
        print(resume.stdout + resume.stderr, end="")
        print(f"EXIT={resume.returncode}")
        report = (work / REPORT_FILE).exists()
        runs = _runs(work)
        print("report.txt:", "あり" if report else "なし")
        print("tool-runs.log:", " / ".join(runs) or "（実行なし）")
        lines = resume.stdout.splitlines()
        if HIT_LINE in lines and not report:
            print(
                "→ 「完了」と言っているのに report.txt はなく、write_report は一度も実行されていません（インシデントの再現）"
            )
        elif UNKNOWN_LINE in lines:
            print("→ 台帳に記録がないので推測せず、is_error で「不明」と正直に返しました")
        print()


if __name__ == "__main__":
    _probe(sys.argv[1:])
