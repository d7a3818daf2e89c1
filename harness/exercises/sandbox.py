"""Running a learner's function with a time limit, its output captured and cut, away from the notebook's folder.

The honest design for code that may never return: the learner's function runs in a forked child process (POSIX).
The notebook's kernel only waits, at most `time_limit` seconds for each step, and kills a child that overruns, so an
endless loop neither hangs the cell nor leaves anything running, and nothing the function changes in memory (a
monkeypatch, a rebound global) reaches the kernel. fork, not spawn: a function defined in a notebook cell cannot be
pickled, and a forked child already has it. The child talks back through a pipe, one JSON line per finished step.

Where fork is missing (Windows) the steps run in a daemon thread instead: the time limit still holds for the cell,
but a hung thread keeps running until the kernel restarts, and the check says so (`Outcome.still_running`).
"""

from __future__ import annotations

import io
import json
import math
import os
import queue
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# The limits the notebooks state (a test keeps the notebooks' text and these numbers the same).
TIME_LIMIT_S = 5  # each run of a learner's function (one scenario of a check)
SCRIPT_TIME_LIMIT_S = 10  # each run of a learner's script as a process
OUTPUT_LIMIT = 2000  # characters of a learner's output that a check shows; the rest is counted and dropped

Step = tuple[str, Callable[[], dict]]


@dataclass
class Outcome:
    """What one step came to: its facts, or why there are none (a timeout, a child that died)."""

    name: str
    facts: dict | None = None
    timed_out: bool = False
    died: str | None = None  # how the child ended without reporting the step
    output: str = ""
    output_total: int = 0
    still_running: bool = False  # thread mode only: the hung step could not be stopped


class Capture(io.TextIOBase):
    """A stand-in for sys.stdout/sys.stderr: keeps the first `limit` characters, counts the rest."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        super().__init__()
        self.limit = limit
        self.reset()

    def reset(self) -> None:
        self.kept: list[str] = []
        self.size = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return "utf-8"

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.total += len(s)
        room = self.limit - self.size
        if room > 0:
            self.kept.append(s[:room])
            self.size += min(room, len(s))
        return len(s)

    def flush(self) -> None:
        return None

    def take(self) -> tuple[str, int]:
        text, total = "".join(self.kept), self.total
        self.reset()
        return text, total


class Stream(Capture):
    """sys.stdout or sys.stderr in the child: written into one shared Capture (the learner sees one output, in order),
    and also kept on its own (the last `limit` characters), so a check can tell an alert on stderr from a print."""

    def __init__(self, shared: Capture, limit: int = OUTPUT_LIMIT) -> None:
        self.shared = shared
        super().__init__(limit)

    def reset(self) -> None:
        self.own = ""
        self.written = 0

    @property
    def total(self) -> int:  # the shared count: what a check compares positions with
        return self.shared.total

    @total.setter
    def total(self, value: int) -> None:
        pass

    def write(self, s: str) -> int:
        n = self.shared.write(s)
        self.written += len(s)
        self.own = (self.own + s)[-self.limit :]
        return n

    def since(self, written: int) -> str:
        """What was written to stderr after it had `written` characters (as much of it as is kept)."""
        return self.own[-(self.written - written) :] if self.written > written else ""


def plain(value: object, limit: int = 600, depth: int = 0) -> object:
    """A JSON-safe copy of whatever a learner's code produced: strings cut at `limit`, odd objects as their repr."""
    if value is None or isinstance(value, (bool, int, float)):
        return value if not isinstance(value, float) or math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if depth > 6:
        return "…"
    if isinstance(value, dict):
        return {str(k)[:limit]: plain(v, limit, depth + 1) for k, v in list(value.items())[:50]}
    if isinstance(value, (list, tuple)):
        return [plain(v, limit, depth + 1) for v in list(value)[:50]]
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def run_steps(
    steps: list[Step],
    *,
    time_limit: float = TIME_LIMIT_S,
    cwd: Path,
    prepare: Callable[[], None] | None = None,
    use_fork: bool | None = None,
) -> Iterator[Outcome]:
    """Run each step in order, away from the kernel; yield one Outcome per step. A step that overruns its time limit
    (or a child that dies) ends the run: its Outcome says so and no further step runs. Stop iterating to stop early.
    `prepare` runs first, in the forked child only (it may change the process for good: the child exits after)."""
    if use_fork is None:
        use_fork = can_fork()
    if use_fork:
        yield from _forked(steps, time_limit, Path(cwd), prepare)
    else:
        yield from _threaded(steps, time_limit)


def _child(steps: list[Step], cwd: Path, prepare, write_fd: int) -> None:
    """The child: quiet, in its own folder, output captured; one JSON line per step; never returns."""
    code = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        capture = Capture()
        sys.stdout = sys.__stdout__ = Stream(capture)
        sys.stderr = sys.__stderr__ = Stream(capture)
        sys.stdin = sys.__stdin__ = io.StringIO("")
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.chdir(cwd)
        if prepare is not None:
            prepare()
        for name, step in steps:
            capture.reset()
            try:
                facts = step()
            except BaseException as err:  # noqa: BLE001 (the step's own code failed: report it, never die silently)
                facts = {"internal_error": f"{type(err).__name__}: {err}"}
            text, total = capture.take()
            line = json.dumps({"name": name, "facts": facts, "output": text, "total": total}, default=repr)
            _write_all(write_fd, (line + "\n").encode("utf-8"))
    except BaseException:  # noqa: BLE001
        code = 70
    finally:
        os._exit(code)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _forked(steps, time_limit, cwd, prepare) -> Iterator[Outcome]:
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12+: fork in a process with threads
        pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        _child(steps, cwd, prepare, write_fd)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also from this side, so a kill right away still reaches the whole group
    except OSError:
        pass
    buffer = b""
    finished = False
    try:
        for name, _ in steps:
            deadline = time.monotonic() + time_limit
            while b"\n" not in buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    yield Outcome(name, timed_out=True)
                    return
                ready, _, _ = select.select([read_fd], [], [], remaining)
                if not ready:
                    continue
                chunk = os.read(read_fd, 1 << 16)
                if not chunk:
                    yield Outcome(name, died=_how_it_ended(pid))
                    return
                buffer += chunk
            line, buffer = buffer.split(b"\n", 1)
            data = json.loads(line.decode("utf-8"))
            yield Outcome(name, data["facts"], output=data["output"], output_total=data["total"])
        finished = True
    finally:
        os.close(read_fd)
        _stop(pid, finished)


def _how_it_ended(pid: int) -> str:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "不明"
    if os.WIFSIGNALED(status):
        return f"シグナル {os.WTERMSIG(status)} で終了"
    return f"終了コード {os.WEXITSTATUS(status)} で終了"


def _stop(pid: int, finished: bool) -> None:
    """End the child (it exits by itself after the last step; anything else is killed) and reap it."""
    if not finished:
        for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
            try:
                kill()
                break
            except OSError:
                continue
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _threaded(steps, time_limit) -> Iterator[Outcome]:
    """No fork here: the same steps in a daemon thread of this process (no prepare, no folder change, no output
    capture: those would change the kernel itself). A hung step cannot be stopped; the caller is told."""
    results: queue.Queue = queue.Queue()

    def work() -> None:
        for name, step in steps:
            try:
                facts = step()
            except BaseException as err:  # noqa: BLE001
                facts = {"internal_error": f"{type(err).__name__}: {err}"}
            results.put((name, json.loads(json.dumps(facts, default=repr))))

    thread = threading.Thread(target=work, daemon=True, name="exercise-check")
    thread.start()
    for name, _ in steps:
        try:
            _, facts = results.get(timeout=time_limit)
        except queue.Empty:
            yield Outcome(name, timed_out=True, still_running=True)
            return
        yield Outcome(name, facts)
