"""What the level-2 fix check sees while a learner's run_tool_uses runs (inside the sandbox's child process).

Nothing here relies on the learner's function to report anything. The run's tools are wrapped: every real execution
is counted with its output, and a kill or a ToolError can be injected as a tool starts or right after it returns.
The checkpoint writer is wrapped (a kill just before point B). An audit hook sees every file operation the function
makes on effects.json (opened for writing in place, replaced by a rename, removed) and can make ledger writes fail
like a full disk; and every time anything happens, effects.json is opened and held, so a file rewritten in place
shows up as changed bytes behind a held descriptor, whatever route the write took.

The audit hook is installed only in the forked child, which exits when the check ends.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import sys
import traceback
import warnings
from pathlib import Path

from ..checkpoint import save_checkpoint
from ..crash import SimulatedCrash
from ..files import parse_json
from ..loop import run_agent
from ..models import ScriptedModel
from ..run import Run
from ..scene import effects_problem
from ..tools import TOOL_IMPLS, TOOL_SCHEMAS, ToolError
from ..vocab import CHECKPOINT_FILE, EFFECTS_FILE, FIXED_TIME_MS, REPORT_FILE, TOOL_LOG_FILE
from .sandbox import plain

# The task's calls, as the scripted model names them: (turn, tool, tool_use_id).
TASK_CALLS = ((1, "read_notes", "toolu_01"), (2, "count_words", "toolu_02"), (3, "write_report", "toolu_03"))
TASK_IDS = {name: tid for _, name, tid in TASK_CALLS}
FAIL_TEXT = "チェックが起こした失敗: ディスクを読めません"
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# Events the harness itself emits; anything else a learner's function emits counts as its own alert.
HARNESS_EVENTS = {
    "start", "resume", "save_a", "tool_start", "tool_ran", "tool_error", "effect_written", "save_b",
    "reconcile", "crash", "done",
}  # fmt: skip
EXPECTED_FILES = {
    ".harness-workdir",
    "sales-notes.txt",
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    TOOL_LOG_FILE,
    REPORT_FILE,
}

_CURRENT: list = [None]  # the Watch of the scenario running now (child process only)
_PREPARED: list = []  # prepare_child has run in this process


def _audit(event: str, args: tuple) -> None:
    watch = _CURRENT[0]
    if watch is not None and watch.inside:
        watch.on_audit(event, args)


class _AlertHandler(logging.Handler):
    """A warning logged by the learner's function counts as its alert (a logging call is an alert, like a print)."""

    def emit(self, record: logging.LogRecord) -> None:
        watch = _CURRENT[0]
        if watch is not None and watch.inside:
            watch.log.append(["alert", "logging"])


def prepare_child() -> None:
    """Run once in the child: ledger writes observable, alerts heard, fsync skipped (nothing here needs to survive
    a power cut)."""
    if _PREPARED:
        return
    _PREPARED.append(True)
    sys.addaudithook(_audit)
    os.fsync = lambda fd: None
    logging.getLogger().addHandler(_AlertHandler(logging.WARNING))
    warnings.simplefilter("always")  # a warning the kernel has shown once still reaches the captured stderr


class Watch:
    """One scenario: the wrapped tools, checkpoint writer and learner function, and everything they saw."""

    def __init__(self, workdir: Path, learner, plan: tuple | None = None) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = Path(os.path.realpath(workdir))
        self.effects = self.workdir / EFFECTS_FILE
        self.learner = learner
        self.plan = plan  # ("kill_start"|"kill_after"|"fail"|"ledger_fails", tool) or ("kill_before_b", turn)
        self.kill = SimulatedCrash("check")
        self.killed = False
        self.inside = False
        self.armed = False
        self.ids: dict[str, str] = {}
        self.log: list[list] = []
        self.runs: list[dict] = []
        self.calls: list[dict] = []
        self.events: list[list] = []
        self.held: list[tuple[int, bytes]] = []
        self.ledger_at_kill: object = None
        self.disk_at_kill: dict[str, bytes] = {}

    # -- observation --------------------------------------------------------------------------------------------

    def resolve(self, path: object) -> Path | None:
        if isinstance(path, int):
            return None
        try:
            return Path(os.path.realpath(os.fsdecode(path)))
        except (TypeError, ValueError):
            return None

    def on_audit(self, event: str, args: tuple) -> None:
        if event == "open":
            path, flags = args[0], args[2] if len(args) > 2 else 0
            if not isinstance(flags, int) or not flags & WRITE_FLAGS:
                return
            target = self.resolve(path)
            if target is None:
                return
            if self.armed and (target.parent == self.workdir or target.name.startswith("effects")):
                self.log.append(["ledger", "refused", target.name, _output_total()])
                raise OSError(errno.ENOSPC, "No space left on device", str(target.name))
            if target == self.effects:
                self.log.append(["ledger", "in_place"])
        elif event == "os.rename":
            source, target = self.resolve(args[0]), self.resolve(args[1])
            if target == self.effects:
                if self.armed:
                    self.log.append(["ledger", "refused", EFFECTS_FILE, _output_total()])
                    raise OSError(errno.ENOSPC, "No space left on device", EFFECTS_FILE)
                self.log.append(["ledger", "replace", source.name if source else "?"])
            elif source == self.effects:
                self.log.append(["ledger", "moved_away"])
        elif event == "os.remove":
            if self.resolve(args[0]) == self.effects:
                self.log.append(["ledger", "removed"])
        elif event == "os.truncate" and self.resolve(args[0]) == self.effects:
            self.log.append(["ledger", "in_place"])

    def observe(self) -> None:
        """Hold effects.json as it is now; if it is later rewritten in place, the held copy changes."""
        try:
            fd = os.open(self.effects, os.O_RDONLY)
        except OSError:
            return
        self.held.append((fd, _read_fd(fd)))

    def rewritten_in_place(self) -> bool:
        changed = False
        for fd, before in self.held:
            try:
                changed |= _read_fd(fd) != before
            finally:
                os.close(fd)
        self.held = []
        return changed

    def ledger(self) -> dict:
        """effects.json as the disk holds it now: {"state": "none"|"ok"|"unreadable"|"odd", ...}."""
        try:
            raw = self.effects.read_bytes()
        except FileNotFoundError:
            return {"state": "none"}
        except OSError as err:
            return {"state": "unreadable", "detail": str(err)}
        try:
            data = parse_json(raw)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return {"state": "unreadable", "detail": raw[:300].decode("utf-8", "replace")}
        problem = effects_problem(data)
        if problem:
            return {"state": "odd", "detail": problem, "data": plain(data)}
        return {"state": "ok", "data": plain(data, limit=4000)}

    def keys(self) -> list[str]:
        """The tool_use_ids effects.json holds right now."""
        try:
            data = json.loads(self.effects.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [str(k) for k in data] if isinstance(data, dict) else []

    def listener(self, event) -> None:
        self.observe()
        if event.kind not in HARNESS_EVENTS or event.kind in ("reconcile", "done", "tool_error"):
            self.events.append([event.kind, plain(event.data)])
        if self.inside and event.kind not in HARNESS_EVENTS:
            self.log.append(["alert", event.kind])

    # -- the wrapped pieces ----------------------------------------------------------------------------------

    def _fires(self, kind: str, name: object) -> bool:
        if self.plan == (kind, name):
            self.plan = None
            return True
        return False

    def tools(self) -> dict:
        return {name: self._wrap(name, impl) for name, impl in TOOL_IMPLS.items()}

    def _wrap(self, name: str, impl):
        def tool(workdir, input):
            tool_use_id = self.ids.get(name) if self.inside else TASK_IDS.get(name)
            self.observe()
            entry = {"name": name, "id": tool_use_id, "by": "learner" if self.inside else "harness"}
            entry["ledger_keys"] = self.keys()
            entry["ledger_had_id"] = tool_use_id in entry["ledger_keys"]
            entry["after_kill"] = self.killed
            self.runs.append(entry)
            self.log.append(["exec_start", tool_use_id])
            if self._fires("fail", name):
                entry["outcome"] = "failed"
                self.log.append(["exec_failed", tool_use_id])
                raise ToolError(FAIL_TEXT)
            if self._fires("kill_start", name):
                entry["outcome"] = "killed"
                self._die()
            output = impl(workdir, input)
            entry["outcome"], entry["output"] = "ran", plain(output, limit=4000)
            self.log.append(["exec_end", tool_use_id])
            self.observe()
            if self._fires("kill_after", name):
                self._die()
            if self.inside and self._fires("ledger_fails", name):
                self.armed = True
            return output

        return tool

    def _die(self) -> None:
        self.killed = True
        self.ledger_at_kill = self.ledger()
        self.disk_at_kill = _files(self.workdir)
        raise self.kill

    def undo_after_kill(self) -> bool:
        """A real kill runs no finally or except block: put the folder back as it was at the kill. Whether
        anything had changed since (the learner's code acted after its process was, in truth, already dead)."""
        now = _files(self.workdir)
        if now == self.disk_at_kill:
            return False
        for name in set(now) - set(self.disk_at_kill):
            (self.workdir / name).unlink()
        for name, data in self.disk_at_kill.items():
            if now.get(name) != data:
                (self.workdir / name).unlink(
                    missing_ok=True
                )  # a new file: held descriptors keep what they saw
                (self.workdir / name).write_bytes(data)
        return True

    def save_checkpoint(self, path, cp) -> None:
        turn = cp.get("turns") if isinstance(cp, dict) else None
        if isinstance(cp, dict) and cp.get("pendingToolUse") is None and self._fires("kill_before_b", turn):
            self._die()
        self.observe()
        save_checkpoint(path, cp)

    def learner_call(self, run, content, *rest, **kwargs):
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        self.ids = {b["name"]: b["id"] for b in blocks}
        call = {"ids": [b["id"] for b in blocks], "after_kill": self.killed}
        self.calls.append(call)
        self.log.append(["call", call["ids"]])
        self.observe()
        self.inside = True
        try:
            returned = self.learner(run, content, *rest, **kwargs)
        except BaseException as err:
            call["raised"] = type(err).__name__
            raise
        finally:
            self.inside = False
            self.armed = False
        self.log.append(["return", _output_total()])
        call["type"] = type(returned).__name__
        call["returned"] = plain(returned, limit=4000)
        self.observe()
        return returned

    # -- driving one run --------------------------------------------------------------------------------------

    def drive(self, resume: bool = False) -> dict:
        """run_agent in this scenario's folder with the learner's run_tool_uses; what came of it."""
        run = Run(
            self.workdir, clock=lambda: FIXED_TIME_MS, listeners=[self.listener], tool_impls=self.tools()
        )
        facts: dict = {"error": None, "final": None}
        try:
            facts["final"] = run_agent(
                run,
                ScriptedModel(),
                tools=TOOL_SCHEMAS,
                resume=resume,
                run_tool_uses=self.learner_call,
                save_checkpoint=self.save_checkpoint,
            )
        except BaseException as err:
            facts["error"] = describe(err, ours=err is self.kill)
            if isinstance(err, KeyboardInterrupt):
                raise
            if err is self.kill:
                facts["acted_after_kill"] = self.undo_after_kill()
        facts["in_place"] = self.rewritten_in_place()
        facts.update(self.disk())
        return facts

    def disk(self) -> dict:
        log = _text(self.workdir / TOOL_LOG_FILE)
        return {
            "ledger": self.ledger(),
            "tool_log": log.splitlines() if log else [],
            "report": (self.workdir / REPORT_FILE).exists(),
            "cwd_ledger": os.path.exists(
                EFFECTS_FILE
            ),  # a relative path: the function wrote beside the check
            "stray": sorted(p.name for p in self.workdir.iterdir() if _temp_like(p.name) and p.is_file()),
        }

    def take(self) -> dict:
        """The timeline so far (and start a new one, for the resume)."""
        taken = {"runs": self.runs, "calls": self.calls, "log": self.log, "events": self.events}
        self.runs, self.calls, self.log, self.events = [], [], [], []
        return taken


def describe(err: BaseException, ours: bool = False) -> dict:
    """An exception as facts: its type, message, and the learner's own line that raised it (no file paths)."""
    where = None
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        if "/harness/" not in frame.filename.replace(os.sep, "/") and frame.line:
            where = {"line": frame.lineno, "code": frame.line.strip()[:200]}
            break
    message = str(err)
    for folder in {os.getcwd(), os.path.realpath(os.getcwd())}:  # the check's scratch folder: no paths shown
        message = message.replace(folder + os.sep, "")
    return {
        "type": type(err).__name__,
        "message": message[:400],
        "ours": ours,
        "simulated_crash": isinstance(err, SimulatedCrash),
        "where": where,
    }


def _temp_like(name: str) -> bool:
    """A file a ledger writer left behind: effects.json.tmp and the like (report.txt's own temp is the tool's)."""
    if name in EXPECTED_FILES or name.startswith(".report.txt."):
        return False
    return name.startswith(("effects", "tmp")) or name.endswith((".tmp", "~", ".new", ".bak"))


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def _output_total() -> int:
    """How many characters the child has printed so far (its sys.stdout is the sandbox's Capture)."""
    return getattr(sys.stdout, "total", 0)


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# -- the scenarios ---------------------------------------------------------------------------------------------


def scenario(learner, folder: Path, plan: tuple | None) -> dict:
    """One run of the real loop with the learner's function under `plan` (a kill, a failure, or nothing)."""
    watch = Watch(folder, learner, plan)
    _CURRENT[0] = watch
    try:
        facts = watch.drive()
        facts["ledger_at_kill"] = watch.ledger_at_kill
        facts["killed"] = watch.killed
        facts.update(watch.take())
        return facts
    finally:
        _CURRENT[0] = None


def resume(learner, folder: Path) -> dict:
    """--resume in a folder a killed run left (run in a new process, like a real resume: nothing in memory)."""
    watch = Watch(folder, learner)
    _CURRENT[0] = watch
    try:
        facts = watch.drive(resume=True)
        facts.update(watch.take())
        return facts
    finally:
        _CURRENT[0] = None


def two_blocks(learner, folder: Path) -> dict:
    """The learner's function called directly with one response holding a text block and two tool_use blocks."""
    from ..workdir import start_fresh

    watch = Watch(folder, learner)
    _CURRENT[0] = watch
    content = [
        {"type": "text", "text": "メモを読んで数えます。"},
        {"type": "tool_use", "id": "toolu_p1", "name": "read_notes", "input": {"path": "sales-notes.txt"}},
        {"type": "tool_use", "id": "toolu_p2", "name": "count_words", "input": {"path": "sales-notes.txt"}},
    ]
    run = Run(
        watch.workdir, clock=lambda: FIXED_TIME_MS, listeners=[watch.listener], tool_impls=watch.tools()
    )
    facts: dict = {"error": None}
    try:
        start_fresh(run)
        watch.learner_call(run, content)
    except BaseException as err:
        facts["error"] = describe(err)
        if isinstance(err, KeyboardInterrupt):
            raise
    finally:
        _CURRENT[0] = None
    facts["in_place"] = watch.rewritten_in_place()
    facts.update(watch.disk())
    facts.update(watch.take())
    return facts
