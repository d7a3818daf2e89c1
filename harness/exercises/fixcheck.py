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
import contextlib
import functools
import inspect
import json
import linecache
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import types
from pathlib import Path

from .. import texts
from ..texts import RECONCILE_LINES
from ..vocab import NOTES_FILE, OUTPUT_FILES, STATE_FILES
from . import Verdict, internal_error, no_paths
from .answers import MISSING, show
from .jail import OUTPUT_LIMIT, TIME_LIMIT_S, end_session, listing, outside, snapshot, watched_folders

TITLE = texts.FIX_TITLE
API_KEYS = {"type", "tool_use_id", "content", "is_error"}
# The names of the harness's own files in a work folder: any other file there is one the learner's code made.
HARNESS_NAMES = {*OUTPUT_FILES, *STATE_FILES, NOTES_FILE}
GROUPS = texts.FIX_GROUPS


def label(s: dict) -> str:
    kind, _, tool = s["key"].partition(":")
    return texts.FIX_SITUATIONS[kind].format(tool=tool)


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
        return None, None, texts.FIX_NO_SOURCE
    cell = linecache.getlines(code.co_filename)
    if cell and not os.path.exists(
        code.co_filename
    ):  # a notebook cell (IPython keeps its source in linecache)
        return "".join(cell), fn.__name__, None
    try:
        return module_source(fn), fn.__name__, None
    except (OSError, TypeError, SyntaxError):
        return None, None, texts.FIX_SOURCE_UNREADABLE


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


@contextlib.contextmanager
def other_file_system(wanted: bool = True):
    """A folder on another file system than the system temp folder (tmpfs /dev/shm on Linux), or None; removed
    afterwards."""
    shm, folder = Path("/dev/shm"), None
    try:
        if (
            wanted
            and shm.is_dir()
            and os.access(shm, os.W_OK)
            and shm.stat().st_dev != Path(tempfile.gettempdir()).stat().st_dev
        ):
            folder = tempfile.mkdtemp(prefix="harness-check-", dir=shm)
    except OSError:
        folder = None
    try:
        yield folder
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def run_both(source: str, name: str | None, time_limit: float) -> dict:
    """The learner's function through the table in a runner of its own, each situation beside the lesson's runs
    (made before a line of the answer cell runs; a cell that changes the package's files fails)."""
    files = package_files()
    with other_file_system() as other:
        lesson = json.loads(lesson_reference(other is not None, files))
        found = run_runner(source, name, time_limit, other, lesson)
    changed = sorted({path for path, *_ in set(files) ^ set(package_files())})
    if changed:
        root = Path(__file__).resolve().parents[2]
        return {"changed_files": [str(Path(path).relative_to(root)) for path in changed]}
    for s in found.get("situations", ()):
        s["lesson"] = lesson[s["key"]]
    return found


@functools.cache
def lesson_reference(other_fs: bool, files: tuple) -> str:
    """The lesson's runs of the table (JSON), made once per process and per state of the package's files: they
    depend on nothing else (fixed clock, fixed model), and a check then runs only the learner's function."""
    with other_file_system(other_fs) as other:
        if other_fs and other is None:
            raise RuntimeError("the other file system went away")  # not kept: the next check tries again
        found = run_runner(None, None, 60, other)
    if "lesson" not in found:
        raise RuntimeError(f"the lesson's reference run ended: {found}")
    return json.dumps(found["lesson"], ensure_ascii=False)


def package_files() -> tuple:
    """Each file of the harness package with its size and time of change (a change means a new reference)."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for f in sorted([*root.rglob("*.py"), *root.rglob("*.toml")]):
        s = f.stat()
        found.append((str(f), s.st_size, s.st_mtime_ns))
    return tuple(found)


def run_runner(
    source: str | None, name: str | None, time_limit: float, other: str | None, lesson: dict | None = None
) -> dict:
    """Start the runner in a fresh interpreter and a session of its own; what it found (ends all it left). Given the
    lesson's runs, it stops the learner's at the first situation that differs."""
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
                    "lesson": lesson,
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
            # the runner's children, even those the learner's code orphaned by killing it
            end_session(proc.pid)
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
        verdict.unanswered(texts.FIX_WHAT, texts.FIX_UNANSWERED["not_defined"])
        return verdict
    if os.environ.get("HARNESS_FIX_RUNNER"):  # called from inside an answer cell the check is running
        verdict.notes.append(texts.FIX_INSIDE_A_CHECK)
        return verdict
    problem = shape(run_tool_uses)
    source, name, why = source_of(run_tool_uses) if not problem else (None, None, None)
    reach = reaches_into_the_check(source) if source else []
    if problem or why or reach:
        verdict.fail(problem or why or texts.JUDGE_REACHES.format(names=", ".join(reach)))
        return verdict
    verdict.notes.append(texts.FIX_HOW_IT_RUNS.format(seconds=time_limit))
    try:
        before = snapshot(watched_folders())
        found = run_both(source, name, time_limit)
        judge(verdict, found, time_limit)
        outside(verdict, before)
    except Exception as err:  # noqa: BLE001 (never a traceback)
        return internal_error(TITLE, err)
    if show_answers and verdict.problems:
        from ..loop import run_tool_uses as lesson

        verdict.notes.append(texts.FIX_LESSON_SHOWN)
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
        return None if "def " in fn else texts.FIX_NOT_A_FUNCTION.format(value=show(fn, 60))
    if not callable(fn):
        return texts.FIX_NOT_A_FUNCTION.format(value=show(fn, 60))
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return texts.FIX_ASYNC
    if inspect.isgeneratorfunction(fn):
        return texts.FIX_YIELDS
    try:
        inspect.signature(fn).bind(object(), [])
    except TypeError:
        return texts.FIX_ARGUMENTS.format(signature=str(inspect.signature(fn)))
    except ValueError:
        pass
    return None


def judge(verdict: Verdict, found: dict, time_limit: float) -> None:
    if "runner_ended" in found:
        verdict.fail(texts.JUDGE_CHECK_ENDED.format(signal=signal.Signals(found["runner_ended"]).name))
        return
    if "changed_files" in found:
        verdict.fail(texts.JUDGE_TAMPERED.format(names=listing(found["changed_files"])))
        return
    if "runner_failed" in found:
        raise RuntimeError(f"runner ended with {found['runner_failed']}")
    if "load_error" in found:
        e = found["load_error"]
        missing = e.get("type") in ("NameError", "ImportError", "ModuleNotFoundError")
        verdict.fail(texts.FIX_CELL_FAILED["missing" if missing else "other"].format(error=error_text(e)))
        return
    if "load_timeout" in found:
        verdict.fail(texts.JUDGE_CELL_ENDLESS.format(seconds=found["load_timeout"]))
        return
    if found.get("no_function"):
        verdict.unanswered(texts.FIX_WHAT, texts.FIX_UNANSWERED["no_function"])
        return
    first = found["situations"][0]["learner"][0]
    if (first.get("error") or {}).get("type") == "NotImplementedError":
        verdict.unanswered(texts.FIX_WHAT, texts.FIX_UNANSWERED["not_written"])
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
            verdict.fail(texts.FIX_SITUATION_PROBLEM.format(situation=label(s), problem=problem))
            show_output(verdict, s["learner"])
            break  # the first difference is the one to fix; the rest would repeat it
        passed.setdefault(s["group"], True)
    own = sorted({name for s in found["situations"] for name in s.get("own_files", ())})
    if own:
        verdict.notes.append(texts.FIX_OWN_FILES_NOTE.format(files=listing(own)))
    leftovers = sum(step.get("leftovers", 0) for s in found["situations"] for step in s["learner"])
    if leftovers:
        verdict.fail(texts.FIX_LEFTOVERS.format(count=leftovers))
    for group, text in GROUPS.items():
        if group in failed_groups:
            continue
        if group in passed:
            verdict.ok(text)
        elif failed_groups:
            verdict.skip(texts.FIX_GROUP_NAMES[group])


def show_output(verdict: Verdict, steps: list[dict]) -> None:
    for step in steps:
        if step.get("output"):
            cut = "cut" if step.get("output_total", 0) > OUTPUT_LIMIT else "whole"
            verdict.notes.append(texts.FIX_OUTPUT_SHOWN[cut].format(size=step["output_total"]))
            verdict.notes.extend("    " + line for line in step["output"].splitlines())


def error_text(e: dict) -> str:
    where = e.get("where") or {}
    if e.get("where") and e["where"].get("code"):
        form = "code"
    elif e.get("where"):
        form = "line"
    else:
        form = "bare"
    if e.get("message"):
        form = "message" if form == "bare" else f"message_{form}"
    text = texts.FIX_ERROR[form].format(
        type=e["type"], message=e.get("message"), line=where.get("line"), code=where.get("code")
    )
    return no_paths(text)


def results_problem(learner: list, lesson: list, pairing_only: bool = False) -> str | None:
    """The tool_results each call returned: the API's keys only, every id paired, in order, the same content (not
    compared when pairing_only: what a call beyond the criterion told the model is a 💡 note, not ✗)."""
    for mine, theirs in zip(learner, lesson):
        if not isinstance(mine, list):
            return texts.FIX_NOT_A_LIST.format(value=show(mine, 60))
        for block in mine:
            extra = sorted(set(block) - API_KEYS) if isinstance(block, dict) else None
            if extra is None or block.get("type") != "tool_result":
                return texts.FIX_NOT_A_TOOL_RESULT.format(value=show(block, 80))
            if extra:
                return texts.FIX_EXTRA_KEYS.format(keys=extra)
        ids = [b.get("tool_use_id") for b in mine]
        want = [b["tool_use_id"] for b in theirs]
        if ids != want:
            paired = sorted(map(str, ids)) == sorted(want) and len(set(map(str, ids))) == len(ids)
            return texts.FIX_IDS_ORDER["order" if paired else "pairing"].format(ids=ids, wanted=want)
        for a, b in zip(mine, theirs):
            if pairing_only:
                break
            if a.get("is_error") and not b.get("is_error"):
                return texts.FIX_RAN_BUT_IS_ERROR.format(id=a.get("tool_use_id"))
            if not b.get("is_error") and (
                a.get("is_error") or comparable(text_of(a.get("content"))) != comparable(b.get("content"))
            ):
                return texts.FIX_CONTENT_DIFFERS.format(
                    id=a.get("tool_use_id"), value=show(a.get("content"), 80)
                )
    return None


def loose_length(template: str) -> re.Pattern:
    """A tool result written from TEMPLATE, its {length} matched as any number (and kept out of a comparison)."""
    before, after = (
        re.escape(part).replace(re.escape("{path}"), ".+") for part in template.split("{length}")
    )
    return re.compile(f"^({before})\\d+({after})$")


# write_report's result: its length is the one part compared loosely
REPORT_RESULT = loose_length(texts.WRITE_REPORT_RESULT)


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
        return texts.FIX_LEDGER_EMPTY
    records = []
    for k, v in ledger.items():
        result = v.get("result") if isinstance(v, dict) else v
        if isinstance(result, str):  # with its length: two results cut to the same start still differ there
            records.append(
                texts.FIX_LEDGER_RECORD["text"].format(id=k, result=show(result, 24), length=len(result))
            )
        else:
            records.append(texts.FIX_LEDGER_RECORD["other"].format(id=k, result=show(result, 24)))
    return texts.LIST_JOIN.join(records)


def compare(s: dict, time_limit: float) -> tuple[str | None, list[str]]:
    """The first difference that matters between the learner's runs and the lesson's, and notes beyond it."""
    notes: list[str] = []
    kind = s["key"].partition(":")[0]
    for i, (mine, theirs) in enumerate(zip(s["learner"], s["lesson"] + [{}])):
        when = "resume" if i else "run"
        if mine.get("timed_out"):
            return texts.FIX_TIMED_OUT[when].format(seconds=time_limit), notes
        if mine.get("died"):
            return texts.FIX_DIED[when].format(how=mine["died"]), notes
        if not theirs:
            break
        error = mine.get("error")
        if s.get("fail") and error and error["type"] == "ToolError":
            notes.append(texts.FIX_TOOL_ERROR_ESCAPED)
            error = None
            if s["fail_id"] in (mine.get("ledger") or {}):
                return (
                    texts.FIX_FAILED_RECORDED.format(tool=s["fail"], ledger=ledger_text(mine["ledger"])),
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
            notes.append(texts.FIX_LEDGER_ERROR_ESCAPED)
            break
        if mine.get("content_changed") and not theirs.get("content_changed"):
            return texts.FIX_CONTENT_GIVEN_CHANGED, notes
        if error and not theirs.get("error"):
            # results the harness refused (a tool_use left without its tool_result): the pairing, not the refusal
            problem = results_problem(
                mine.get("results") or [], theirs.get("results") or [], pairing_only=True
            )
            if problem:
                return problem, notes
            if error["type"] == "APIError":
                return texts.FIX_API_REFUSED.format(message=error["message"][:120]), notes
            return texts.FIX_ERROR_RAISED[when].format(error=error_text(error)), notes
        if theirs.get("killed") and not mine.get("killed"):
            return texts.FIX_NO_KILL_MOMENT, notes
        if i == 0 and kind == "clean" and mine.get("saves") == 0:
            return texts.FIX_NO_SAVE_EFFECT, notes
        if mine.get("overlap") and not theirs.get("overlap"):
            return texts.FIX_OVERLAP, notes
        # The ledger write itself failing is beyond the lesson's criterion: only the ledger and the runs (the
        # criterion's own concerns, below) can be ✗ there; what the model was told and said next is a 💡 note.
        beyond = kind == "ledger_fails"
        if beyond:
            notes.extend(ledger_failure_notes(s, mine, theirs))
        if not beyond and (
            mine.get("assistant") != theirs.get("assistant")
            or mine.get("content_after") != theirs.get("content_after")
        ):
            return texts.FIX_CONTENT_CHANGED, notes
        if mine.get("runs") != theirs.get("runs"):
            runs = when if mine.get("runs") else f"{when}_none"
            return texts.FIX_RUNS_DIFFER[runs].format(runs=mine.get("runs"), lesson=theirs.get("runs")), notes
        if same_ledger(mine.get("ledger"), theirs.get("ledger")) is False:
            moment = f"{when}_killed" if mine.get("killed") else f"{when}_ended"
            return (
                texts.FIX_LEDGER_DIFFERS[moment].format(
                    ledger=ledger_text(mine.get("ledger") or {}),
                    lesson=ledger_text(theirs.get("ledger") or {}),
                ),
                notes,
            )
        if mine.get("files") != theirs.get("files"):
            files, lessons = set(mine.get("files") or []), set(theirs.get("files") or [])
            own = sorted(f for f in files - lessons if f not in HARNESS_NAMES and not f.endswith(".tmp"))
            if (
                not own or files - set(own) != lessons
            ):  # a harness file too many or too few, or a temp file left
                return texts.FIX_EXTRA_FILES[when].format(files=sorted(files - lessons)), notes
            # a debug log: beyond the 完了基準 (one note for all situations, in judge())
            s.setdefault("own_files", set()).update(own)
        if not mine.get("killed"):
            problem = results_problem(mine.get("results") or [], theirs.get("results") or [], beyond)
            if problem:
                return problem, notes
            if beyond:
                continue
            if mine.get("branches") != theirs.get("branches"):
                took = [RECONCILE_LINES.get(b, b) for b in mine.get("branches") or []]
                if not took:
                    return texts.FIX_RECONCILE_DIFFERS["none"], notes
                return texts.FIX_RECONCILE_DIFFERS["took"].format(branches=took), notes
            if mine.get("final") != theirs.get("final"):
                return (
                    texts.FIX_FINAL_DIFFERS[when].format(
                        final=show(mine.get("final"), 80), lesson=show(theirs.get("final"), 80)
                    ),
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
