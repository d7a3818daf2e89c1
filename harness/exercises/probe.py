"""What the level-2 fix check sees while a learner's run_tool_uses runs (inside the sandbox's child process).

Nothing here relies on the learner's function to report anything. The run's tools are wrapped: every real execution
is counted with its output, and a kill or a ToolError can be injected as a tool starts or right after it returns.
The checkpoint writer is wrapped (a kill just before point B). An audit hook sees every file operation the function
makes on effects.json (opened for writing in place, replaced by a rename, removed) and can make ledger writes fail
like a full disk; and every time anything happens, effects.json is opened and held, so a file rewritten in place
shows up as changed bytes behind a held descriptor, whatever route the write took.

Also seen: tools that run at the same time (threads), the content the function was handed changed in place, what it
wrote to stderr or raised as an alert after a failed ledger write, and errors the ledger writer raised even when the
function swallowed them (the writer and the other routes to the tools are watched in the child).

The audit hook is installed only in the forked child, which exits when the check ends.
"""

from __future__ import annotations

import copy
import errno
import json
import logging
import os
import sys
import threading
import traceback
import warnings
from collections.abc import Mapping
from pathlib import Path

import harness

from .. import checkpoint as checkpoint_module
from .. import ledger as ledger_module
from .. import tools as tools_module
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

# How long a tool started from another thread waits for a second tool to start beside it: a function that runs
# tools concurrently (a thread pool) shows it every time, not only when the threads happen to overlap.
HOLD_S = 0.3

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
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 (a learner's odd format string)
                message = str(record.msg)
            watch.log.append(["alert", "logging", message[:300]])


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
    warnings.showwarning = (
        _show_warning  # to stderr, even where the parent records them (pytest, catch_warnings)
    )


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


class _RunTools(Mapping):
    """Stands in for harness.TOOL_IMPLS in the child: while the learner's function runs, the scenario's watched tools
    (so the lesson's toolImpls[block.name](block.input), written as TOOL_IMPLS[name](run.workdir, input), is seen)."""

    def __getitem__(self, name):
        watch = _CURRENT[0]
        if watch is not None and watch.inside and name in watch.wrapped:
            return watch.wrapped[name]
        return TOOL_IMPLS[name]

    def __iter__(self):
        return iter(TOOL_IMPLS)

    def __len__(self) -> int:
        return len(TOOL_IMPLS)


def _spy(name: str, fn):
    """A ledger writer that notes the error it raised while the learner's function ran (even if the function then
    swallows it), so the check can name it."""

    def spy(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BaseException as err:
            watch = _CURRENT[0]
            if watch is not None and watch.inside and not watch.armed and not isinstance(err, SimulatedCrash):
                watch.log.append(["writer_error", name, type(err).__name__, _no_paths(str(err))[:200]])
            raise

    spy.__wrapped__ = fn
    return spy


def _tool_spy(name: str):
    def tool(workdir, input):
        return _RunTools()[name](workdir, input)

    return tool


def watch_learner_routes(learner) -> None:
    """In the forked child only (it changes modules for good): the ways a learner may reach the tools or the ledger
    writer besides run.tool_impls and execute_tool (harness.TOOL_IMPLS, tools.write_report, save_effect,
    write_json_atomic; through a module or a name in the notebook) go through the check's watched versions."""
    swaps: dict[int, object] = {id(TOOL_IMPLS): _RunTools()}
    places = [(harness, "TOOL_IMPLS"), (tools_module, "TOOL_IMPLS")]
    for name in TOOL_IMPLS:
        swaps[id(TOOL_IMPLS[name])] = _tool_spy(name)
        places.append((tools_module, name))
    for module, name in ((ledger_module, "save_effect"), (checkpoint_module, "write_json_atomic")):
        original = getattr(module, name)
        swaps[id(original)] = _spy(name, original)
        places += [(module, name), (harness, name)]
    for module, name in places:
        value = getattr(module, name, None)
        if id(value) in swaps:
            setattr(module, name, swaps[id(value)])
    names = getattr(learner, "__globals__", None)
    if isinstance(names, dict):
        for attr, value in list(names.items()):
            if id(value) in swaps:
                names[attr] = swaps[id(value)]


def _no_paths(text: str) -> str:
    from . import no_paths

    return no_paths(text)


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
        self.wrapped = self.tools()
        self.caller: threading.Thread | None = None  # the thread the learner's function was called in
        self.killed_in_thread = False  # the kill landed in a thread the learner's function started
        self.running: list[str] = []  # the tools running right now
        self.overlaps: list[list[str]] = []
        self.turn = threading.Condition()

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
                self.log.append(["ledger", "refused", target.name, _output_total(), *_written()])
                raise OSError(errno.ENOSPC, "No space left on device", str(target.name))
            if target == self.effects:
                self.log.append(["ledger", "in_place"])
        elif event == "os.rename":
            source, target = self.resolve(args[0]), self.resolve(args[1])
            if target == self.effects:
                if self.armed:
                    self.log.append(["ledger", "refused", EFFECTS_FILE, _output_total(), *_written()])
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

    def data(self) -> dict:
        """The ledger's records as they are now ({} when there is none or it cannot be read)."""
        try:
            data = json.loads(self.effects.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return plain(data, limit=4000) if isinstance(data, dict) else {}

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
            self.log.append(["alert", "event", f"{event.kind} {plain(event.data)}"[:300]])

    # -- the wrapped pieces ----------------------------------------------------------------------------------

    def _fires(self, kind: str, name: object) -> bool:
        if self.plan == (kind, name):
            self.plan = None
            return True
        return False

    def tools(self) -> dict:
        return {name: self._wrap(name, impl) for name, impl in TOOL_IMPLS.items()}

    def _enter(self, tool_use_id: str) -> None:
        """A tool starts: note any tool still running beside it. In a call with several tool_use blocks, one started
        from another thread than the learner's function waits a moment for a second one, so tools run concurrently
        always overlap here (not only when the threads happen to)."""
        with self.turn:
            self.running.append(tool_use_id)
            if len(self.running) > 1:
                self.overlaps.append(list(self.running))
            self.turn.notify_all()
            foreign = self.caller is not None and threading.current_thread() is not self.caller
            if self.inside and foreign and len(self.ids) > 1:
                self.turn.wait_for(lambda: len(self.running) > 1, timeout=HOLD_S)

    def _leave(self, tool_use_id: str) -> None:
        with self.turn:
            if tool_use_id in self.running:
                self.running.remove(tool_use_id)

    def _wrap(self, name: str, impl):
        def tool(workdir, input):
            tool_use_id = self.ids.get(name) if self.inside else TASK_IDS.get(name)
            self.observe()
            entry = {"name": name, "id": tool_use_id, "by": "learner" if self.inside else "harness"}
            entry["ledger_at_start"] = self.data()
            entry["ledger_keys"] = list(entry["ledger_at_start"])
            entry["ledger_had_id"] = tool_use_id in entry["ledger_keys"]
            entry["after_kill"] = self.killed
            self.runs.append(entry)
            self.log.append(["exec_start", tool_use_id])
            self._enter(tool_use_id)
            try:
                if self._fires("fail", name):
                    entry["outcome"] = "failed"
                    self.log.append(["exec_failed", tool_use_id])
                    raise ToolError(FAIL_TEXT)
                if self._fires("kill_start", name):
                    entry["outcome"] = "killed"
                    self._die()
                output = impl(workdir, input)
            finally:
                self._leave(tool_use_id)
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
        self.killed_in_thread = self.caller is not None and threading.current_thread() is not self.caller
        self.ledger_at_kill = self.ledger()
        self.disk_at_kill = _files(self.workdir)
        raise self.kill

    def undo_after_kill(self) -> bool:
        """A real kill runs no finally or except block: put the folder back as it was at the kill. Whether
        anything had changed since (the learner's code acted after its process was, in truth, already dead)."""
        now = _files(self.workdir)
        if now == self.disk_at_kill:
            return False
        self.workdir.mkdir(parents=True, exist_ok=True)
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
        call = {"ids": [b["id"] for b in blocks], "after_kill": self.killed, "number": len(self.calls) + 1}
        self.calls.append(call)
        self.log.append(["call", call["ids"]])
        self.observe()
        before = copy.deepcopy(content)
        self.caller = threading.current_thread()
        self.inside = True
        try:
            returned = self.learner(run, content, *rest, **kwargs)
        except BaseException as err:
            call["raised"] = type(err).__name__
            raise
        finally:
            self.inside = False
            self.armed = False
            call["changed_content"] = content_change(before, content)
            call["heard"] = self.heard()
        self.log.append(["return", _output_total()])
        call["type"] = type(returned).__name__
        call["returned"] = plain(returned, limit=4000)
        call["keys_after"] = self.keys()
        self.observe()
        return returned

    def heard(self) -> dict | None:
        """After a refused ledger write in this call: what the function wrote to stderr and stdout since, and the
        alerts (events, logging) it raised since."""
        refused = next((e for e in self.log if e[0] == "ledger" and e[1] == "refused"), None)
        if refused is None:
            return None
        at = self.log.index(refused)
        out_mark, err_mark = refused[4:6] if len(refused) >= 6 else (0, 0)
        return {
            "stderr": _since(sys.stderr, err_mark),
            "stdout": _since(sys.stdout, out_mark),
            "alerts": [e[2] for e in self.log[at:] if e[0] == "alert"],
        }

    # -- driving one run --------------------------------------------------------------------------------------

    def drive(self, resume: bool = False) -> dict:
        """run_agent in this scenario's folder with the learner's run_tool_uses; what came of it."""
        run = Run(
            self.workdir, clock=lambda: FIXED_TIME_MS, listeners=[self.listener], tool_impls=self.wrapped
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
        except BaseException as err:  # noqa: BLE001 (a KeyboardInterrupt or SystemExit here is the learner's own)
            facts["error"] = describe(err, ours=err is self.kill)
            if err is self.kill:
                facts["acted_after_kill"] = self.undo_after_kill()
        facts["in_place"] = self.rewritten_in_place()
        facts["overlaps"] = self.overlaps
        facts.update(self.disk())
        return facts

    def disk(self) -> dict:
        if not self.workdir.is_dir():
            return {"workdir_gone": True, "ledger": {"state": "none"}, "tool_log": [], "report": False,
                    "cwd_ledger": False, "stray": []}  # fmt: skip
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
        """The timeline so far."""
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
    try:
        here = os.getcwd()
    except OSError:  # the learner's code removed the folder the child runs in
        here = None
    for folder in (
        {here, os.path.realpath(here)} if here else ()
    ):  # the check's scratch folder: no paths shown
        message = message.replace(folder + os.sep, "")
    message = _no_paths(message)
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
    try:
        return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    except FileNotFoundError:  # the learner's code removed the folder
        return {}


def _output_total() -> int:
    """How many characters the child has printed so far (its sys.stdout is the sandbox's Capture)."""
    return getattr(sys.stdout, "total", 0)


def _written() -> tuple[int, int]:
    """How many characters the child has written to stdout and to stderr so far (sandbox Streams)."""
    return getattr(sys.stdout, "written", 0), getattr(sys.stderr, "written", 0)


def _since(stream, mark: int) -> str:
    since = getattr(stream, "since", None)
    return since(mark)[-600:] if since else ""


def content_change(before: list, after: object) -> str | None:
    """How the function changed the response's content it was handed (it is the assistant message already in
    messages, saved at point B), in words; None when it is unchanged."""
    if after == before:
        return None
    if not isinstance(after, list):
        return "content そのものが別の値になりました"
    kinds = [b.get("type") if isinstance(b, dict) else type(b).__name__ for b in before]
    now = [b.get("type") if isinstance(b, dict) else type(b).__name__ for b in after]
    if len(now) != len(kinds):
        gone = [k for k in dict.fromkeys(kinds) if now.count(k) < kinds.count(k)]
        new = [k for k in dict.fromkeys(now) if now.count(k) > kinds.count(k)]
        parts = [f"{k} ブロックが消えました" for k in gone] + [f"{k} ブロックが増えました" for k in new]
        return "、".join(parts) or f"ブロックの数が {len(kinds)} から {len(now)} に変わりました"
    for old, block in zip(before, after):
        if old == block:
            continue
        name = old.get("id") or old.get("type") if isinstance(old, dict) else repr(old)[:40]
        if isinstance(old, dict) and isinstance(block, dict):
            added = [k for k in block if k not in old]
            changed = [k for k in old if k in block and block[k] != old[k]]
            removed = [k for k in old if k not in block]
            for keys, how in ((added, "に {} が足されました"), (changed, "の {} が書き換えられました"),
                              (removed, "から {} が消されました")):  # fmt: skip
                if keys:
                    return f"{name} のブロック" + how.format(", ".join(repr(k) for k in keys))
        return f"{name} のブロックが書き換えられました"
    return "ブロックの並びが変わりました"


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
    if _PREPARED:
        watch_learner_routes(learner)
    watch = Watch(folder, learner, plan)
    _CURRENT[0] = watch
    try:
        facts = watch.drive()
        facts["ledger_at_kill"] = watch.ledger_at_kill
        facts["killed"] = watch.killed
        facts["killed_in_thread"] = watch.killed_in_thread
        facts.update(watch.take())
        return facts
    finally:
        _CURRENT[0] = None


def resume(learner, folder: Path) -> dict:
    """--resume in a folder a killed run left (run in a new process, like a real resume: nothing in memory)."""
    if _PREPARED:
        watch_learner_routes(learner)
    watch = Watch(folder, learner)
    _CURRENT[0] = watch
    try:
        facts = watch.drive(resume=True)
        facts.update(watch.take())
        return facts
    finally:
        _CURRENT[0] = None


TWO_BLOCKS = [
    {"type": "text", "text": "レポートを書き出して、読み返して確かめます。"},
    {"type": "tool_use", "id": "toolu_p1", "name": "write_report",
     "input": {"path": REPORT_FILE, "content": "営業メモのまとめ（下書き）"}},
    {"type": "tool_use", "id": "toolu_p2", "name": "read_notes", "input": {"path": REPORT_FILE}},
]  # fmt: skip


def two_blocks(learner, folder: Path) -> dict:
    """The learner's function called directly with one response holding a text block and two tool_use blocks: write
    the report, then read it back (so the order the blocks run in shows)."""
    from ..workdir import start_fresh

    if _PREPARED:
        watch_learner_routes(learner)
    watch = Watch(folder, learner)
    _CURRENT[0] = watch
    content = copy.deepcopy(TWO_BLOCKS)
    run = Run(
        watch.workdir, clock=lambda: FIXED_TIME_MS, listeners=[watch.listener], tool_impls=watch.wrapped
    )
    facts: dict = {"error": None}
    try:
        start_fresh(run)
        watch.learner_call(run, content)
    except BaseException as err:  # noqa: BLE001 (a KeyboardInterrupt or SystemExit here is the learner's own)
        facts["error"] = describe(err)
    finally:
        _CURRENT[0] = None
    facts["in_place"] = watch.rewritten_in_place()
    facts["overlaps"] = watch.overlaps
    facts.update(watch.disk())
    facts.update(watch.take())
    return facts
