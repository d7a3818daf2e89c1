"""The fix check's runner: a fresh interpreter that has run nothing of the learner's notebook but the answer cell.

`python -m harness.exercises.runner SPEC.json RESULT.json`. For every situation of the table it runs one function,
the lesson's run_tool_uses (the reference, when the spec has no source: a runner of its own, whose result the check
keeps for the checks after it) or the learner's (the answer's source executed after the exercise notebook's own
imports), each run in a child it forks to run the real loop in a work folder of its own. A kill is a real SIGKILL
of that child (nothing can catch it); a --resume is a new child, so only the disk carries over. After each child,
every process it left behind is ended and counted (this runner is a subreaper). What each run did is read from the
disk (ledger, temp files, tool-runs.log) and, for runs that were not killed, from the child's own report (the
tool_results each call returned, the error, the reconcile branch, the closing line). Given the lesson's runs, the
learner's stop after the first situation that differs from them (the verdict names only that one).
"""

from __future__ import annotations

import errno
import json
import linecache
import math
import os
import resource
import signal
import sys
import threading
import time
import traceback
import types
from pathlib import Path

import harness

from .. import ledger as ledger_module
from .. import texts
from .. import tools as tools_module
from ..loop import run_agent
from ..loop import run_tool_uses as lesson_run_tool_uses
from ..models import ScriptedModel
from ..run import Run
from ..store import dump_json
from ..tools import TOOL_SCHEMAS, ToolError
from ..vocab import EFFECTS_FILE, FIXED_TIME_MS, NOTES_FILE, TOOL_LOG_FILE
from ..workdir import start_fresh
from . import fixcheck
from .jail import OUTPUT_LIMIT, become_subreaper, end_leftovers, kill_group, wall_limit

# What the exercise notebook's first cell gives the answer cell (a test keeps the two the same).
PRELUDE = """\
import errno
import json
import math
import os
import resource
import sys

from harness import READ_ONLY, TOOL_IMPLS, HarnessError, ToolError, execute_tool
from harness.ledger import load_effects, save_effect
"""
TASK_CALLS = ((1, "read_notes", "toolu_01"), (2, "count_words", "toolu_02"), (3, "write_report", "toolu_03"))
# The failures the check injects: a tool's (ToolError), and the ledger's write (OSError ENOSPC).
FAIL_TEXT = texts.FIX_INJECTED_TOOL_ERROR
DISK_FULL_TEXT = texts.FIX_INJECTED_DISK_FULL
LONG_NOTES = "営業メモ（長い版）\n" + "".join(
    f"- 項目{i:03d}: 今月の訪問先と次の一手をまとめる。\n" for i in range(60)
)
OTHER_NOTES = "other-notes.txt"
# One turn with two tool_use blocks of the same tool whose ids do not sort in content order (and a text block).
TWO_BLOCKS = [
    {"type": "text", "text": "2つのメモを読みます。"},
    {"type": "tool_use", "id": "toolu_zz9", "name": "read_notes", "input": {"path": NOTES_FILE}},
    {"type": "tool_use", "id": "toolu_aa1", "name": "read_notes", "input": {"path": OTHER_NOTES}},
]
# One turn that writes the report and then reads it back: run in another order, the read fails.
WRITE_THEN_READ = [
    {
        "type": "tool_use",
        "id": "toolu_w2",
        "name": "write_report",
        "input": {"path": "draft.txt", "content": "下書き"},
    },
    {"type": "tool_use", "id": "toolu_r1", "name": "read_notes", "input": {"path": "draft.txt"}},
]
# One turn whose first tool fails: the second still runs, and each id gets its tool_result.
FAIL_THEN_WRITE = [
    {"type": "tool_use", "id": "toolu_f1", "name": "read_notes", "input": {"path": NOTES_FILE}},
    {**WRITE_THEN_READ[0], "id": "toolu_w4"},
]
# One turn asking for the very same call twice (two ids): each is a request of its own, run and recorded.
SAME_CALL_TWICE = [
    {"type": "tool_use", "id": "toolu_s2", "name": "read_notes", "input": {"path": NOTES_FILE}},
    {"type": "tool_use", "id": "toolu_s1", "name": "read_notes", "input": {"path": NOTES_FILE}},
]
KILL_MARK = ".check-killed"
HOLD_S = 0.3


def situations(other_fs: str | None) -> list[dict]:
    """The table every function goes through: (key, group, what is injected, where the work folder lives)."""
    table = [{"key": "clean", "group": "clean"}]
    for kind in ("kill_start", "kill_after", "kill_torn", "kill_recorded"):
        for _, tool, _ in sorted(TASK_CALLS, key=lambda c: c[0] != 3):
            table.append({"key": f"{kind}:{tool}", "group": kind, "kill": kind, "tool": tool})
    for _, tool, tid in TASK_CALLS:
        table.append({"key": f"fail:{tool}", "group": "fail", "fail": tool, "fail_id": tid})
    table.append(
        {
            "key": "fail_then_write",
            "group": "fail",
            "direct": True,
            "fail": "read_notes",
            "fail_id": "toolu_f1",
            "content": FAIL_THEN_WRITE,
        }
    )
    table.append({"key": "ledger_fails:write_report", "group": "ledger_fails", "ledger_fails": "toolu_03"})
    table.append({"key": "stale_tmp", "group": "files", "stale_tmp": True})
    table.append({"key": "long_notes", "group": "long_notes", "notes": LONG_NOTES})
    table.append({"key": "two_blocks", "group": "two_blocks", "direct": True})
    table.append(
        {"key": "write_then_read", "group": "two_blocks", "direct": True, "content": WRITE_THEN_READ}
    )
    table.append(
        {"key": "same_call_twice", "group": "two_blocks", "direct": True, "content": SAME_CALL_TWICE}
    )
    table.append(
        {
            "key": "two_blocks_kill",
            "group": "two_blocks",
            "direct": True,
            "kill": "kill_start",
            "kill_id": "toolu_aa1",
        }
    )
    if other_fs:
        table.append({"key": "other_fs", "group": "files", "root": other_fs})
    return table


class Watch:
    """What the child notes while a function runs: each call's tool_results, and save_effect calls inside it."""

    def __init__(self, situation: dict) -> None:
        self.situation = situation
        self.inside = False
        self.saves = 0
        self.results: list = []
        self.blocks: list = []
        self.run = None
        self.content_changed = False  # the function changed the model's response it was given


WATCH: list[Watch | None] = [None]
ORIGINAL_SAVE = ledger_module.save_effect
ORIGINAL_EXECUTE = tools_module.execute_tool
IN_EXECUTE: list[bool] = [False]
TOOL_ID = {tool: tid for _, tool, tid in TASK_CALLS}


def die(workdir: Path) -> None:
    """The kill: a mark on disk (so the check knows it was its own), then a real SIGKILL of this process."""
    (workdir / KILL_MARK).write_text("killed", encoding="utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def watched_save_effect(path, tool_use_id, entry):
    """save_effect as every module sees it in this process: counted, and killed inside or after the write."""
    watch = WATCH[0]
    if watch is None:
        return ORIGINAL_SAVE(path, tool_use_id, entry)
    if watch.inside:
        watch.saves += 1
    s = watch.situation
    if s.get("ledger_fails") == tool_use_id:
        raise OSError(errno.ENOSPC, DISK_FULL_TEXT, str(path))
    aimed = s.get("tool") and tool_use_id == TOOL_ID.get(s["tool"])
    if aimed and s.get("kill") == "kill_torn":
        effects = ledger_module.load_effects(Path(path))
        effects[tool_use_id] = entry
        data = dump_json(effects)
        Path(path).with_name(Path(path).name + ".tmp").write_bytes(data[: len(data) // 2])
        die(Path(path).parent)
    ORIGINAL_SAVE(path, tool_use_id, entry)
    if aimed and s.get("kill") == "kill_recorded":
        die(Path(path).parent)


def routed(run, name, impl):
    """A tool reached without execute_tool (run.tool_impls[name](run.workdir, input), the lesson's
    toolImpls[block.name](block.input)) still runs as execute_tool runs it, so it is logged and can be killed."""

    def tool(workdir, input):
        watch = WATCH[0]
        if IN_EXECUTE[0] or watch is None:
            return impl(workdir, input)
        block = next((b for b in watch.blocks if b.get("name") == name and b.get("input") is input), None)
        block = block or next(
            (b for b in watch.blocks if b.get("name") == name and b.get("input") == input), None
        )
        return ORIGINAL_EXECUTE(run, block) if block else impl(workdir, input)

    return tool


class Tools(dict):
    """harness.TOOL_IMPLS as the answer cell sees it: the running scenario's tools, routed."""

    def __getitem__(self, name):
        watch = WATCH[0]
        if watch is not None and watch.run is not None and name in watch.run.tool_impls:
            return watch.run.tool_impls[name]
        return super().__getitem__(name)


def patch_harness() -> None:
    """save_effect watched wherever it is bound; harness.TOOL_IMPLS routed."""
    for module in list(sys.modules.values()):
        if getattr(module, "save_effect", None) is ORIGINAL_SAVE:
            module.save_effect = watched_save_effect
    harness.TOOL_IMPLS = Tools(tools_module.TOOL_IMPLS)


def observed(fn):
    def run_tool_uses(run, content):
        watch = WATCH[0]
        watch.inside = True
        watch.blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        given = plain(content)
        try:
            results = fn(run, content)
        finally:
            watch.inside = False
            watch.content_changed = watch.content_changed or plain(content) != given
        watch.results.append(plain(results))
        return results

    return run_tool_uses


def plain(value: object, depth: int = 0) -> object:
    """A JSON-safe copy of what a function returned (odd objects as their repr)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > 6:
        return "…"
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in list(value)[:50]]
    return repr(value)[:300]


def prepare(workdir: Path, s: dict) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    if s.get("notes"):
        (workdir / NOTES_FILE).write_text(s["notes"], encoding="utf-8")
    if s.get("stale_tmp"):
        (workdir / (EFFECTS_FILE + ".tmp")).write_text(
            '{"toolu_03": {"name": "write_report", "res', encoding="utf-8"
        )
    if s.get("direct"):
        (workdir / OTHER_NOTES).write_text("別のメモ: 来月の予定だけ。\n", encoding="utf-8")


def learner_error(err: BaseException, source_name: str) -> dict:
    """The error as the check shows it: type, first line, and the learner's line it came from."""
    where = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == source_name:
            where = {"line": frame.lineno, "code": (frame.line or "").strip()[:120]}
    message = str(err).splitlines()[0][:300] if str(err) else ""
    return {"type": type(err).__name__, "message": message, "where": where}


def step(fn, s: dict, workdir: Path, resume: bool) -> dict:
    """One run in this (child) process; what it returned and raised."""
    watch = WATCH[0] = Watch(s)
    facts: dict = {"error": None, "final": None, "branches": []}
    run = Run(workdir, clock=lambda: FIXED_TIME_MS)

    inflight: list = []
    held: set = set()  # the threads that have waited once

    def listen(event) -> None:
        if event.kind == "reconcile":
            facts["branches"].append(event.data.get("branch"))
        if event.kind == "ledger_write_failed":
            facts["alerted"] = True  # the lesson's alert when the ledger cannot be written
        if event.kind == "tool_start":
            IN_EXECUTE[0] = True  # execute_tool is running this tool: its impl is the real one
            inflight.append(event.data.get("id"))
            facts["overlap"] = facts.get("overlap") or len(inflight) > 1
            thread = threading.current_thread()
            if thread is not threading.main_thread() and thread not in held:
                held.add(thread)  # a thread's first tool waits, so tools run side by side show it
                time.sleep(HOLD_S)
        elif event.kind in ("tool_ran", "tool_error"):
            IN_EXECUTE[0] = False
            if event.data.get("id") in inflight:
                inflight.remove(event.data.get("id"))
        if s.get("kill_id") and event.kind == "tool_start" and event.data.get("id") == s["kill_id"]:
            die(workdir)
        if resume or event.data.get("name") != s.get("tool"):
            return
        if (s.get("kill"), event.kind) in (("kill_start", "tool_start"), ("kill_after", "tool_ran")):
            die(workdir)

    run.listeners.append(listen)
    if s.get("fail") and not resume:
        tool = s["fail"]

        def failing(workdir, input):
            raise ToolError(FAIL_TEXT)

        run.tool_impls[tool] = failing
    for name, impl in list(run.tool_impls.items()):
        run.tool_impls[name] = routed(run, name, impl)
    watch.run = run
    try:
        if s.get("direct"):
            start_fresh(run)
            content = json.loads(json.dumps(s.get("content") or TWO_BLOCKS))
            observed(fn)(run, content)
            facts["content_after"] = plain(content)
        else:
            facts["final"] = run_agent(
                run, ScriptedModel(), tools=TOOL_SCHEMAS, resume=resume, run_tool_uses=observed(fn)
            )
    except BaseException as err:  # noqa: BLE001 (the learner's code raised: reported, never a traceback)
        facts["error"] = learner_error(err, SOURCE_NAME)
    facts["results"] = watch.results
    facts["content_changed"] = watch.content_changed
    facts["saves"] = watch.saves
    return facts


SOURCE_NAME = texts.FIX_CELL_NAME  # the answer cell's file name in tracebacks


def run_child(fn, s: dict, workdir: Path, resume: bool, out: Path, time_limit: float) -> dict:
    """Fork a child for one run; wait at most time_limit; end what it left behind. Facts from the child and the disk."""
    report = out.with_suffix(".json")
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setpgid(0, 0)
            # the limit is on CPU time, so a busy machine never makes a right answer look endless
            cpu = math.ceil(time_limit)
            hard = cpu + 1 + (math.ceil(fn.load_limit) + cpu + 1 if isinstance(fn, Cell) else 0)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.chdir(workdir.parent)
            dumps, write, fd_open = (
                json.dumps,
                os.write,
                os.open,
            )  # the report's way out, taken before the cell runs
            facts: dict = {}
            if isinstance(fn, Cell):
                before, changed = fn.before, tampered  # bound before the cell can rebind the module's names
                resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(fn.load_limit), hard))
                try:
                    fn = load(fn.source, fn.name)
                except BaseException as err:  # noqa: BLE001
                    facts["load_error"] = learner_error(err, SOURCE_NAME)
                out.with_suffix(".loaded").write_text("", encoding="utf-8")
                used = resource.getrusage(resource.RUSAGE_SELF)
                cpu = min(math.ceil(used.ru_utime + used.ru_stime + time_limit), hard - 1)
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, hard))
                if fn is None and not facts:
                    facts["no_function"] = True
                if not facts:
                    facts = step(fn, s, workdir, resume)
                facts["tampered"] = changed(before)
            else:
                facts = step(fn, s, workdir, resume)
            data = dumps(facts, ensure_ascii=False, default=repr).encode("utf-8")
            fd = fd_open(str(report), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            while data:
                data = data[write(fd, data) :]
        except BaseException:  # noqa: BLE001
            traceback.print_exc(limit=3)
            code = 70
        finally:
            os._exit(code)
    loading = fn.load_limit * 2 if isinstance(fn, Cell) else 0
    deadline = (
        time.monotonic() + wall_limit(time_limit) + loading
    )  # a function that sleeps forever uses no CPU
    status = None
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif time.monotonic() > deadline:
            kill_group(pid)
            os.waitpid(pid, 0)
            status = "timeout"
        else:
            time.sleep(0.005)
    leftovers = end_leftovers()
    facts: dict = {}
    try:
        facts = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    killed = (workdir / KILL_MARK).exists()
    if killed:
        (workdir / KILL_MARK).unlink()
    facts.update(disk(workdir))
    facts["timed_out"] = status == "timeout" or (
        status != "timeout" and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU
    )
    if isinstance(fn, Cell) and not out.with_suffix(".loaded").exists() and facts["timed_out"]:
        facts["load_timeout"] = fn.load_limit  # the answer cell itself never finished
    facts["killed"] = killed
    facts["leftovers"] = leftovers
    if not facts["timed_out"] and not killed and not report.exists():
        facts["died"] = (
            texts.FIX_CHILD_ENDED["signal"].format(number=os.WTERMSIG(status))
            if os.WIFSIGNALED(status)
            else texts.FIX_CHILD_ENDED["exit_code"].format(number=os.WEXITSTATUS(status))
        )
    try:
        text = out.read_bytes()[: OUTPUT_LIMIT * 4].decode("utf-8", errors="replace")[:OUTPUT_LIMIT]
        facts["output"], facts["output_total"] = text, out.stat().st_size
    except OSError:
        facts["output"], facts["output_total"] = "", 0
    return facts


def disk(workdir: Path) -> dict:
    """What the folder shows: the ledger (name and result of each record), other files, the tool runs."""
    try:
        raw = json.loads((workdir / EFFECTS_FILE).read_text(encoding="utf-8"))
        ledger = (
            {
                k: {"name": v.get("name"), "result": v.get("result")} if isinstance(v, dict) else v
                for k, v in raw.items()
            }
            if isinstance(raw, dict)
            else {"?": raw}
        )
    except FileNotFoundError:
        ledger = {}
    except (OSError, ValueError) as err:
        ledger = {"?": texts.FIX_LEDGER_UNREADABLE.format(error=type(err).__name__)}
    try:
        runs = (workdir / TOOL_LOG_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        runs = []
    try:
        files = sorted(p.name for p in workdir.iterdir())
    except OSError:
        files = None
    try:
        cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
        said = [
            [{k: v for k, v in b.items() if k != "input"} if isinstance(b, dict) else b for b in m["content"]]
            if isinstance(m.get("content"), list)
            else m.get("content")
            for m in cp.get("messages", [])
            if m.get("role") == "assistant"
        ]
    except (OSError, ValueError, AttributeError):
        said = None
    return {"ledger": ledger, "runs": runs, "files": files, "assistant": said}


def run_situation(fn, s: dict, base: Path, who: str, time_limit: float) -> list[dict]:
    """A situation from start to finish: the first run, then (after a kill) --resume, each in a new child."""
    root = Path(s["root"]) if s.get("root") else base
    workdir = root / f"{who}-{s['key'].replace(':', '-')}" / "work"
    if workdir.exists():
        import shutil

        shutil.rmtree(workdir)
    prepare(workdir, s)
    steps = [run_child(fn, s, workdir, False, base / f"{who}-{s['key'].replace(':', '-')}-0.out", time_limit)]
    if steps[0]["killed"] and not s.get("direct"):
        steps.append(
            run_child(fn, s, workdir, True, base / f"{who}-{s['key'].replace(':', '-')}-1.out", time_limit)
        )
    return steps


def load(source: str, name: str | None):
    """Execute the answer cell after the notebook's imports; its run_tool_uses function (or why there is none)."""
    # A module of its own, as a notebook's cells have __main__ (dataclasses, typing and pickle look it up by name).
    module = types.ModuleType("__learner__")
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    exec(compile(PRELUDE, "<prelude>", "exec"), namespace)  # noqa: S102
    before = set(namespace)
    # The cell's lines, so an error's line number comes with the line itself (compile() alone keeps no source).
    linecache.cache[SOURCE_NAME] = (len(source), None, source.splitlines(True), SOURCE_NAME)
    exec(compile(source, SOURCE_NAME, "exec"), namespace)  # noqa: S102
    if name and callable(namespace.get(name)):
        return namespace[name]
    defined = [v for k, v in namespace.items() if k not in before and callable(v) and hasattr(v, "__code__")]
    for preferred in ("run_tool_uses_fixed", "run_tool_uses"):
        if preferred not in before and callable(namespace.get(preferred)):
            return namespace[preferred]
    named = [f for f in defined if f.__name__.startswith("run_tool_uses")]
    return (named or defined or [None])[-1]


class Cell:
    """The learner's answer cell, executed only inside a child (never in this runner, which must stay trustworthy:
    it reads the disk after each child; the lesson's reference ran in a runner no learner's code ever reached)."""

    def __init__(self, source: str, name: str | None, load_limit: float) -> None:
        self.source, self.name, self.load_limit = source, name, load_limit
        # what a child has before its cell runs: this runner's own names, which no learner's code reaches
        self.before = fingerprint()


# What the check itself relies on inside a child, fingerprinted before the learner's cell runs: every function,
# class (with its methods) and module bound in the harness package, in the modules the runner uses, and builtins.
WATCHED = ("harness", "builtins", "json", "os", "posix", "signal", "pathlib", "sys", "resource", "traceback")


def fingerprint() -> dict:
    seen: dict = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in WATCHED or module is None:
            continue
        seen[name] = id(module)
        for attr, value in list(vars(module).items()):
            if isinstance(value, type) and name.startswith("harness"):
                for method, fn in list(vars(value).items()):
                    code = getattr(fn, "__code__", None)
                    if code is not None:
                        seen[f"{name}.{attr}.{method}"] = (id(fn), id(code))
            if callable(value) or isinstance(value, type(sys)):
                seen[f"{name}.{attr}"] = (id(value), id(getattr(value, "__code__", None)))
    return seen


def tampered(before: dict) -> list[str]:
    """What the learner's code changed of what the check relies on (a name whose object or code is not the same)."""
    now = fingerprint()
    return sorted(k for k, v in before.items() if now.get(k) != v)[:5]


def main(spec_path: str, result_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    os.environ["HARNESS_FIX_RUNNER"] = (
        "1"  # a check called inside the answer cell does not start another runner
    )
    become_subreaper()
    os.fsync = lambda fd: None  # nothing here has to survive a power cut
    patch_harness()
    base = Path(spec["base"])
    table = situations(spec.get("other_fs"))
    if (
        spec["source"] is None
    ):  # the reference: the lesson's function alone, in a runner no learner's cell reaches
        lesson = {s["key"]: run_situation(lesson_run_tool_uses, s, base, "lesson", 60) for s in table}
        Path(result_path).write_text(json.dumps({"lesson": lesson}, ensure_ascii=False), encoding="utf-8")
        return 0
    # The lesson's runs (when given): the learner's stop at the first situation that differs, the one the verdict
    # names (a wrong answer's other runs would only add waiting).
    lesson = spec.get("lesson")
    cell = Cell(spec["source"], spec.get("name"), int(spec["time_limit"] * 4) + 5)
    result: dict = {"situations": []}
    for s in table:
        learner = run_situation(cell, s, base, "learner", spec["time_limit"])
        first = learner[0]
        for stop in ("load_error", "load_timeout", "no_function"):
            if first.get(stop):
                result = {stop: first[stop], "output": first.get("output", "")}
                break
        else:
            result["situations"].append({**s, "learner": learner})
            if any(step["timed_out"] or step.get("tampered") for step in learner):
                break  # an endless loop, a changed check: the rest would only add waiting
            theirs = lesson.get(s["key"]) if lesson else None
            if (
                theirs is not None
                and fixcheck.compare({**s, "learner": learner, "lesson": theirs}, spec["time_limit"])[0]
            ):
                break
            continue
        break
    Path(result_path).write_text(json.dumps(result, ensure_ascii=False, default=repr), encoding="utf-8")
    return 0


if __name__ == "__main__":
    harness.__name__  # noqa: B018 (the package is imported before the learner's cell runs)
    sys.exit(main(sys.argv[1], sys.argv[2]))
