"""`python -m harness` as a child process: the one recipe (environment clean-up, fixed clock, time limit) that the
notebooks, the Crash Lab, the exercise checks and the tests all use; and a real process watched while it runs.

In the browser edition (Pyodide, sys.platform "emscripten") there are no processes: run_harness and WatchedProcess
run the same command line, cli(), in this interpreter instead, and say so once. A crash there is the lesson's
simulated one (exit code 137); CRASH_MODE=sigkill is dropped, since a real SIGKILL would end the kernel itself.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from .. import texts
from ..run import Event
from ..vocab import FIXED_TIME_MS

# Settings a parent may have in its own environment that must never leak into a child it did not ask them for.
PRIVATE_SETTINGS = (
    "CRASH_AFTER",
    "CRASH_MODE",
    "HARNESS_SLOW_MS",
    "HARNESS_EVENTS_FILE",
    "HARNESS_API_DEADLINE_S",
)


def child_env(env: dict | None = None) -> dict:
    """This process's environment without the crash and watch settings, with the fixed clock, plus `env`: a name
    given as None is one the child must not have, whatever this process has (a caller's own setting, passed in)."""
    full = {k: v for k, v in os.environ.items() if k not in PRIVATE_SETTINGS}
    full["HARNESS_FIXED_TIME_MS"] = str(FIXED_TIME_MS)
    full.update(env or {})
    return {k: v for k, v in full.items() if v is not None}


def harness_argv(workdir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "harness", "--workdir", str(workdir), *args]


IN_BROWSER = sys.platform == "emscripten"  # Pyodide: no subprocess, no fork, no threads
_told_in_kernel = False
_told_in_memory = False


def in_memory(folder: Path) -> None:
    """The browser edition's scratch folder: FOLDER, empty, in memory (Emscripten's MEMFS mounted on it). JupyterLite's
    /drive takes milliseconds a file operation (a run of the task: ~1.4 s there, ~0.2 s in memory); what is in
    memory is gone when the kernel restarts, which no scratch folder needs. Says so once per kernel."""
    global _told_in_memory
    import pyodide_js  # only in Pyodide

    fs = pyodide_js.FS
    if not _told_in_memory:
        print(texts.BROWSER_IN_MEMORY)
        _told_in_memory = True
    folder.mkdir(parents=True, exist_ok=True)
    path = os.path.abspath(folder)
    if fs.lookupPath(path).node.mount.mountpoint == path:  # mounted before: empty it (a mount point stays)
        for child in folder.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    else:
        fs.mount(fs.filesystems.MEMFS, {}, path)


def run_in_kernel(workdir: Path, *args: str, env: dict | None = None) -> Finished:
    """The browser edition's stand-in for a child process: `python -m harness` as cli() in this interpreter, with the
    child's environment, its output captured as a child's would be. Says so once per kernel."""
    global _told_in_kernel
    from ..__main__ import cli

    if not _told_in_kernel:
        print(texts.BROWSER_IN_KERNEL)
        _told_in_kernel = True
    full = child_env(env)
    full.pop("CRASH_MODE", None)  # a real SIGKILL here would kill this kernel, not a child
    argv = harness_argv(workdir, *args)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli(argv[3:], env=full)
        except SystemExit as stop:  # a bad argument ends the command line as it would end the process
            code = stop.code if isinstance(stop.code, int) else 1
    return Finished(argv, code, out.getvalue(), err.getvalue())


def run_harness(
    workdir: Path, *args: str, env: dict | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run `python -m harness --workdir WORKDIR ARGS` to its end; stdout and stderr captured as text.
    In the browser: in this interpreter (run_in_kernel), without a time limit."""
    if IN_BROWSER:
        return run_in_kernel(workdir, *args, env=env)
    done = run_child(harness_argv(workdir, *args), env=env, timeout=timeout)
    if done.timed_out:
        raise subprocess.TimeoutExpired(done.args, timeout, done.stdout, done.stderr)
    return done


class Finished(subprocess.CompletedProcess):
    """A child's end: return code (-9 when killed by SIGKILL), its output as text (at most max_chars a stream),
    whether it was stopped at its time limit, and whether its output was cut (output_bytes counts all of it)."""

    timed_out = False
    cut = False
    output_bytes = 0


def run_child(
    argv: list[str],
    *,
    env: dict | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
    max_chars: int | None = None,
) -> Finished:
    """Run argv (with child_env(env)) in cwd, in its own process group: stdin empty, output read as it comes and
    kept up to max_chars per stream (the rest counted and dropped, so a flood never fills memory or a notebook),
    and the whole group killed at the time limit (so a hung child or its children never outlive the call)."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(env),
        cwd=cwd,
        start_new_session=True,
    )
    kept = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    limit = None if max_chars is None else max_chars * 4  # bytes enough for max_chars characters of UTF-8
    total = 0
    timed_out = False
    try:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            for stream in kept:
                sel.register(stream, selectors.EVENT_READ)
            while sel.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                for item, _ in sel.select(remaining):
                    chunk = os.read(item.fileobj.fileno(), 1 << 16)
                    if not chunk:
                        sel.unregister(item.fileobj)
                        continue
                    total += len(chunk)
                    room = len(chunk) if limit is None else max(0, limit - len(kept[item.fileobj]))
                    kept[item.fileobj] += chunk[:room]
    finally:
        if proc.poll() is None and (timed_out or sys.exc_info()[0] is not None):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
        returncode = proc.wait()
        for stream in kept:
            stream.close()
    texts = [bytes(kept[s]).decode("utf-8", errors="replace") for s in (proc.stdout, proc.stderr)]
    done = Finished(argv, returncode, *(t[:max_chars] if max_chars is not None else t for t in texts))
    done.timed_out = timed_out
    done.output_bytes = total
    done.cut = total > sum(len(k) for k in kept.values()) or any(
        max_chars is not None and len(t) > max_chars for t in texts
    )
    return done


class WatchedProcess:
    """One run of the command line as a child process; new_events() hands over what it has done so far."""

    def __init__(
        self,
        workdir: Path,
        events_file: Path,
        args: list[str],
        crash_after: str | None = None,
        slow_ms: int = 0,
    ) -> None:
        extra = {"HARNESS_EVENTS_FILE": str(Path(events_file).resolve())}
        if crash_after:
            extra.update(CRASH_AFTER=crash_after, CRASH_MODE="sigkill")
        if slow_ms and not IN_BROWSER:  # (in the browser a run ends before anyone could watch it)
            extra["HARNESS_SLOW_MS"] = str(slow_ms)
        self.events_file = Path(events_file)
        self.events_file.unlink(missing_ok=True)
        self.read_upto = 0
        self.killed_by_hand = False
        if (
            IN_BROWSER
        ):  # one interpreter: the run happens now, to its end; then its events are all in the file
            print(texts.BROWSER_ONE_AT_A_TIME)
            self.popen = None
            self.finished = run_in_kernel(workdir, *args, env=extra)
            return
        self.popen = subprocess.Popen(
            harness_argv(workdir, *args),
            env=child_env(extra),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    @property
    def pid(self) -> int:
        return os.getpid() if self.popen is None else self.popen.pid

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def new_events(self) -> list[Event]:
        """The complete event lines written since the previous call."""
        try:
            with open(self.events_file, "rb") as f:
                f.seek(self.read_upto)
                chunk = f.read()
        except FileNotFoundError:
            return []
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.read_upto += len(complete)
        events = []
        for line in complete.decode("utf-8").splitlines():
            data = json.loads(line)
            events.append(Event(data.pop("kind"), data))
        return events

    def outcome(self) -> tuple[int, str]:
        """(return code, stderr) of a finished process; -9 when it died by SIGKILL."""
        if self.popen is None:
            return self.finished.returncode, self.finished.stderr
        return self.popen.wait(), self.popen.stderr.read() if self.popen.stderr else ""

    def kill(self, by_hand: bool = True) -> None:
        """SIGKILL, at whatever moment the process is in."""
        if self.running():
            self.killed_by_hand = by_hand
            self.popen.kill()
            self.popen.wait()
