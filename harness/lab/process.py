"""`python -m harness` as a child process: the one recipe (environment clean-up, fixed clock, time limit) that the
notebooks, the Crash Lab, the exercise checks and the tests all use; and a real process watched while it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..run import Event
from ..vocab import FIXED_TIME_MS

# Settings a parent may have in its own environment that must never leak into a child it did not ask them for.
PRIVATE_SETTINGS = ("CRASH_AFTER", "CRASH_MODE", "HARNESS_SLOW_MS", "HARNESS_EVENTS_FILE", "REPRO_CRASH")


def child_env(env: dict | None = None) -> dict:
    """This process's environment without the crash and watch settings, with the fixed clock, plus `env`."""
    full = {k: v for k, v in os.environ.items() if k not in PRIVATE_SETTINGS}
    full["HARNESS_FIXED_TIME_MS"] = str(FIXED_TIME_MS)
    full.update(env or {})
    return full


def harness_argv(workdir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "harness", "--workdir", str(workdir), *args]


def run_harness(
    workdir: Path, *args: str, env: dict | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run `python -m harness --workdir WORKDIR ARGS` to its end; stdout and stderr captured as text."""
    return subprocess.run(
        harness_argv(workdir, *args),
        capture_output=True,
        text=True,
        env=child_env(env),
        check=False,
        timeout=timeout,
    )


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
        if slow_ms:
            extra["HARNESS_SLOW_MS"] = str(slow_ms)
        self.events_file = Path(events_file)
        self.events_file.unlink(missing_ok=True)
        self.read_upto = 0
        self.killed_by_hand = False
        self.popen = subprocess.Popen(
            harness_argv(workdir, *args),
            env=child_env(extra),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def running(self) -> bool:
        return self.popen.poll() is None

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
        return self.popen.wait(), self.popen.stderr.read() if self.popen.stderr else ""

    def kill(self, by_hand: bool = True) -> None:
        """SIGKILL, at whatever moment the process is in."""
        if self.running():
            self.killed_by_hand = by_hand
            self.popen.kill()
            self.popen.wait()
