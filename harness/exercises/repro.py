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
    IDLE_LIMIT_S,
    OUTPUT_LIMIT,
    SCRIPT_TIME_LIMIT_S,
    outside,
    run_jailed,
    snapshot,
    wall_limit,
    watched_folders,
)

TITLE = texts.REPRO_TITLE
CALLS = ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]
TOOL_NAMES = {c.split()[0] for c in CALLS}
# the harness's own log lines for the resumed write_report (what the check looks for in --resume's output)
HIT_LINE = texts.LOG_LINES["reconcile"].format(
    id="toolu_03", name="write_report", line=RECONCILE_LINES["hit"]
)
UNKNOWN_LINE = texts.LOG_LINES["reconcile"].format(
    id="toolu_03", name="write_report", line=RECONCILE_LINES["unknown"]
)
DONE_OK_LINE = texts.LOG_LINES["done"].format(text=DONE_OK)
DONE_UNKNOWN_LINE = texts.LOG_LINES["done"].format(text=DONE_UNKNOWN.format(name="write_report"))
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
    return lines[-1][:200] if lines else texts.REPRO_NO_OUTPUT


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
    error = lines[-1][:200]
    for line in reversed(lines):
        found = re.match(r'\s*File "([^"]+)", line (\d+)(?:, in (\w+))?', line)
        if found and Path(found.group(1)).suffix == ".py" and "harness" not in Path(found.group(1)).parts:
            kind = "in_point" if found.group(3) == "point" else "at"
            return texts.REPRO_SCRIPT_ERROR[kind].format(
                file=Path(found.group(1)).name, line=found.group(2), error=error
            )
    return texts.REPRO_SCRIPT_ERROR["plain"].format(error=error)


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
        return texts.REPRO_LEDGER_PROBLEMS["not_json"]
    return data if isinstance(data, dict) else texts.REPRO_LEDGER_PROBLEMS["not_object"]


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
    verdict.notes.append(texts.REPRO_LIMITS_NOTE.format(runs=len(STEPS), seconds=time_limit))
    if blank(script) or script is None:
        verdict.unanswered(texts.REPRO_WHAT, texts.REPRO_NO_SCRIPT)
        return verdict
    try:
        path = Path(script)  # type: ignore[arg-type]
    except TypeError:
        verdict.fail(texts.REPRO_NOT_A_NAME.format(given=show(script, 60)))
        return verdict
    if not path.is_file():
        verdict.fail(texts.REPRO_NOT_FOUND.format(name=path.name))
        return verdict
    if path.suffix != ".py":
        verdict.fail(texts.REPRO_NOT_PY.format(name=path.name))
        return verdict
    try:
        before = snapshot(watched_folders())
        with scratch_dir() as tmp:
            _check(verdict, path, Path(tmp), time_limit)
        outside(verdict, before)
    except Exception as err:  # noqa: BLE001 (never a traceback)
        return internal_error(TITLE, err)
    if show_answers and verdict.problems:
        verdict.notes.append(texts.REPRO_SOLUTION_NOTE)
    return verdict


STEPS = [("wrong", "2"), ("fixed", "2"), ("wrong", "3"), ("fixed", "3"), ("wrong", None), ("fixed", None)]
# The catalogue's keys of the eight steps (REPRO_STEPS): the six runs, then the two resumes.
STEP_KEYS = [*(f"{order}-{n or 'none'}" for order, n in STEPS), "resume-wrong", "resume-fixed"]


def _check(verdict: Verdict, script: Path, tmp: Path, time_limit: float) -> None:
    steps = [texts.REPRO_STEPS[key] for key in STEP_KEYS]
    folders = {}
    placeholder_noted = False
    for i, (order, n) in enumerate(STEPS):
        folder = tmp / f"{order}-{n or 'none'}"
        proc = run_script(script, folder, order, n, time_limit, work_name(order, n))
        work = folder / work_name(order, n)
        folders[(order, n)] = work
        if proc.leftovers:
            note = texts.REPRO_LEFTOVERS_NOTE.format(count=proc.leftovers)
            if note not in verdict.notes:
                verdict.notes.append(note)
        problem = _judge_run(order, n, proc, work, time_limit)
        if problem == "todo":
            todos = list(dict.fromkeys([*todos_in(script), todo_left(proc)]))
            verdict.unanswered(
                texts.REPRO_WHAT, texts.REPRO_TODOS_LEFT.format(todos=texts.LIST_JOIN.join(todos))
            )
            return
        if problem:
            verdict.fail(problem)
            _cut_note(verdict, proc)
            for rest in steps[i + 1 :]:
                verdict.skip(rest["name"])
            return
        verdict.ok(steps[i]["label"])
        entry = _ledger(work).get(f"toolu_0{n}") if order == "wrong" and n else None
        placeholder = _result(entry) if isinstance(entry, dict) else None
        if placeholder is not None and not placeholder_noted:
            verdict.notes.append(texts.JUDGE_PLACEHOLDER_NOTE.format(value=show(placeholder, 40)))
            placeholder_noted = True
    for i, order in enumerate(("wrong", "fixed"), start=6):
        problem = _judge_resume(order, folders[(order, "3")])
        if problem:
            verdict.fail(problem)
            for rest in steps[i + 1 :]:
                verdict.skip(rest["name"])
            return
        verdict.ok(steps[i]["label"])


def _cut_note(verdict: Verdict, proc) -> None:
    if proc.cut:
        verdict.notes.append(texts.REPRO_CUT_NOTE.format(bytes=proc.output_bytes, limit=OUTPUT_LIMIT))


def _judge_run(order: str, n: str | None, proc, work: Path, time_limit: float) -> str | None:
    what = (
        texts.REPRO_RUN_WHAT["crash"].format(n=n, order=order)
        if n
        else texts.REPRO_RUN_WHAT["no_crash"].format(order=order)
    )
    if proc.ended_check:
        return texts.REPRO_RUN_PROBLEM.format(
            what=what, problem=texts.JUDGE_SCRIPT_ENDED_CHECK.format(signal=proc.ended_check)
        )
    if proc.idle:
        return texts.REPRO_RUN_IDLE.format(what=what, seconds=IDLE_LIMIT_S)
    if proc.timed_out:
        return texts.REPRO_RUN_TIMED_OUT.format(what=what, seconds=time_limit)
    if todo_left(proc):
        return "todo"
    if died_in_point(proc):
        proc.returncode = (
            137  # any exception out of the crash point is the crash (完了基準: 制御されたクラッシュ地点)
        )
    error = script_error(proc)
    if error and proc.returncode not in (0, 137, -9):
        return texts.REPRO_RUN_ERROR.format(what=what, code=proc.returncode, error=error)
    calls = _calls(work.parent)
    runs = [f"{name} {TOOL_IDS.get(name, '?')}" for name, _ in calls] or _runs(work)
    ledger = _ledger(work)
    if isinstance(ledger, str):
        return texts.REPRO_RUN_PROBLEM.format(what=what, problem=ledger)
    other = elsewhere(work.parent, work.name)
    if EFFECTS_FILE in other:
        return texts.REPRO_RUN_LEDGER_BESIDE.format(what=what)
    if not work.exists() or not (_runs(work) or ledger or (work / "checkpoint.json").exists()):
        if other:
            return texts.REPRO_RUN_WROTE_ELSEWHERE.format(what=what, work=work.name, where=", ".join(other))
        return texts.REPRO_RUN_WROTE_NOTHING.format(what=what, code=proc.returncode, last=last_line(proc))
    if any(k in TOOL_NAMES for k in ledger):
        return texts.REPRO_RUN_KEYED_BY_NAME.format(what=what, keys=sorted(ledger))
    if n is None:
        if proc.returncode != 0:
            return texts.REPRO_RUN_DID_NOT_FINISH.format(
                what=what, code=proc.returncode, last=last_line(proc)
            )
        if runs != CALLS:
            return texts.REPRO_RUN_NOT_EACH_ONCE.format(what=what, runs=runs)
        if order == "fixed" and any(not isinstance(ledger.get(c.split()[1]), dict) for c in CALLS):
            return texts.REPRO_RUN_RECORDS_MISSING.format(what=what, keys=sorted(ledger))
        if order == "fixed" and any(ledger[c.split()[1]].get("result") is None for c in CALLS):
            return texts.REPRO_RUN_FIXED_PLACEHOLDER.format(what=what)
        return _recorded_when_started(what, order, calls)
    if proc.returncode not in (137, -9):
        if proc.returncode == 0 and "[kill]" in proc.stdout:
            return texts.REPRO_RUN_KILLED_BUT_ZERO.format(what=what)
        if proc.returncode == 0:
            return texts.REPRO_RUN_NEVER_CRASHED.format(what=what)
        if "Traceback" in proc.stderr:
            return texts.REPRO_RUN_TRACEBACK.format(what=what, last=last_line(proc))
        return texts.REPRO_RUN_OTHER_CODE.format(what=what, code=proc.returncode, last=last_line(proc))
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
            return texts.JUDGE_FALSE_CLAIM["present" if truth else "absent"].format(
                what=what, line=line.strip()[:120], tid=tid
            )
    return None


def _where_it_crashed(what: str, order: str, n: int, runs: list[str], ledger: dict) -> str | None:
    """Read from tool-runs.log and the ledger where the crash landed, and compare with REPRO_CRASH=n."""
    if runs != CALLS[: len(runs)]:
        return texts.REPRO_RUN_NOT_IN_ORDER.format(what=what, runs=runs)
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
            return texts.REPRO_WRONG_POINT_AFTER_RUN.format(what=what, tool=tool)
        elif recorded == ran and len(ran) == n - 1:
            return texts.REPRO_WRONG_NOT_RECORDED_BEFORE.format(what=what, tid=tid)
        else:
            landed = len(ran) + 1
        if landed == n:
            if tid not in ledger:
                return texts.REPRO_WRONG_NOT_RECORDED.format(what=what, tid=tid)
            if not isinstance(ledger[tid], dict):
                return texts.REPRO_WRONG_NOT_A_RECORD.format(what=what, tid=tid, value=show(ledger[tid], 80))
            return None  # written before the tool ran: whatever its result, a placeholder (a note says so)
    else:
        early = [t for t in recorded if t not in ran]
        if early:
            return texts.REPRO_FIXED_RECORDED_EARLY.format(
                what=what, tid=early[0], value=show(ledger[early[0]], 80)
            )
        if len(ran) == n:
            after = "after_run" if recorded != ran else "after_record"
            return texts.REPRO_FIXED_POINT_LATE[after].format(what=what, tool=tool)
        for earlier in ran:
            entry = ledger.get(earlier)
            if not isinstance(entry, dict) or entry.get("result") is None:
                return texts.REPRO_FIXED_NO_REAL_RESULT.format(
                    what=what, earlier=earlier, value=show(entry, 80)
                )
        landed = len(ran) + 1
        if landed == n:
            return None
    if landed <= 3:
        return texts.REPRO_LANDED_ELSEWHERE["call"].format(
            what=what, n=n, landed=landed, tool=CALLS[landed - 1].split()[0], runs=runs or texts.NOTHING
        )
    return texts.REPRO_LANDED_ELSEWHERE["somewhere"].format(what=what, n=n, runs=runs or texts.NOTHING)


def _judge_resume(order: str, work: Path) -> str | None:
    what = texts.REPRO_RESUME_WHAT[order]
    try:
        resume = run_harness(work, "--resume", timeout=wall_limit(SCRIPT_TIME_LIMIT_S))
    except subprocess.TimeoutExpired:
        return texts.REPRO_RESUME_TIMED_OUT.format(what=what, seconds=wall_limit(SCRIPT_TIME_LIMIT_S))
    lines = resume.stdout.splitlines()
    runs = _runs(work)
    if resume.returncode != 0:
        first = (resume.stderr.strip().splitlines() or [texts.NOTHING_SAID])[0]
        return texts.REPRO_RESUME_ERROR.format(what=what, first=first)
    if order == "wrong":
        if HIT_LINE not in lines:
            return texts.REPRO_RESUME_NO_HIT.format(what=what, lines=" / ".join(lines[:2]))
        if (work / REPORT_FILE).exists() or any(r.startswith("write_report") for r in runs):
            return texts.REPRO_RESUME_REPORT_WRITTEN.format(what=what)
        if DONE_OK_LINE not in lines:
            return texts.REPRO_RESUME_NOT_DONE.format(what=what, last=lines[-1] if lines else texts.NOTHING)
        return None
    if UNKNOWN_LINE not in lines or DONE_UNKNOWN_LINE not in lines:
        return texts.REPRO_RESUME_NOT_UNKNOWN.format(what=what, lines=" / ".join(lines[:2]))
    return None


def show_repro_runs(
    script: object, workdir: object = "_work", time_limit: float = SCRIPT_TIME_LIMIT_S
) -> None:
    """Like a terminal: both orders with REPRO_CRASH=3 in a scratch copy, then --resume of both folders. Never raises."""
    try:
        _show(Path(script), Path(workdir), time_limit)  # type: ignore[arg-type]
    except Exception as err:  # noqa: BLE001
        print(texts.REPRO_SHOW_FAILED.format(error_type=type(err).__name__, error=no_paths(str(err))))


def _show(script: Path, workdir: Path, time_limit: float) -> None:
    if not script.is_file():
        print(texts.REPRO_NOT_FOUND.format(name=script.name))
        return
    if script.suffix != ".py":
        print(texts.REPRO_NOT_PY.format(name=script.name))
        return
    base = workdir / "repro"
    shutil.rmtree(base, ignore_errors=True)
    print(texts.REPRO_SHOW_WHERE.format(script=script.name, base=base.as_posix(), seconds=time_limit))
    print()
    crashed = {}
    for order in ("wrong", "fixed"):
        folder = base / order
        proc = run_script(script, folder, order, "3", time_limit)
        print(f"$ cd {folder.as_posix()} && REPRO_CRASH=3 python {script.name} {order} {WORK}")
        print(proc.stdout, end="" if proc.stdout.endswith("\n") or not proc.stdout else "\n")
        if proc.cut:
            print(texts.REPRO_SHOW_CUT.format(bytes=proc.output_bytes, limit=OUTPUT_LIMIT))
        if proc.idle:
            print(texts.REPRO_SHOW_IDLE.format(seconds=IDLE_LIMIT_S))
        elif proc.timed_out:
            print(texts.REPRO_SHOW_TIMED_OUT.format(seconds=time_limit))
        elif proc.returncode not in (137, -9) and proc.stderr.strip():
            print(script_error(proc) or proc.stderr.strip().splitlines()[-1][:200])
        print(f"EXIT={proc.returncode}" + (texts.REPRO_SHOW_SIGKILL if proc.returncode == -9 else ""))
        crashed[order] = proc.returncode in (137, -9)
        ledger = _ledger(folder / WORK)
        entry = ledger.get("toolu_03") if isinstance(ledger, dict) else None
        shown = {k: entry.get(k) for k in ("name", "result")} if isinstance(entry, dict) else texts.NOTHING
        print(texts.REPRO_SHOW_LEDGER_ENTRY.format(entry=shown))
        print()
    for order in ("wrong", "fixed"):
        work = base / order / WORK
        if not crashed[order]:
            print(texts.REPRO_SHOW_NO_CRASH[order])
            continue
        print(f"$ python -m harness --workdir {work.as_posix()} --resume")
        try:
            resume = run_harness(work, "--resume", timeout=wall_limit(time_limit))
        except subprocess.TimeoutExpired:
            print(texts.REPRO_SHOW_TIMED_OUT.format(seconds=wall_limit(time_limit)))
            continue
        print(resume.stdout + resume.stderr, end="")
        print(f"EXIT={resume.returncode}")
        report = (work / REPORT_FILE).exists()
        runs = _runs(work)
        print(texts.REPRO_SHOW_REPORT["present" if report else "absent"])
        ran = " / ".join(runs)
        print(texts.REPRO_SHOW_RUNS["some"].format(runs=ran) if ran else texts.REPRO_SHOW_RUNS["none"])
        lines = resume.stdout.splitlines()
        if HIT_LINE in lines and not report:
            print(texts.REPRO_SHOW_INCIDENT)
        elif UNKNOWN_LINE in lines:
            print(texts.REPRO_SHOW_HONEST)
        print()


if __name__ == "__main__":
    _probe(sys.argv[1:])
