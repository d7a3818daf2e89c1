"""A real `python -m harness` process, watched while it runs through the events it appends to HARNESS_EVENTS_FILE."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..run import Event
from . import FIXED_TIME_MS


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
        env = {
            k: v for k, v in os.environ.items() if k not in ("CRASH_AFTER", "CRASH_MODE", "HARNESS_SLOW_MS")
        }
        env.update(
            HARNESS_EVENTS_FILE=str(Path(events_file).resolve()), HARNESS_FIXED_TIME_MS=str(FIXED_TIME_MS)
        )
        if crash_after:
            env.update(CRASH_AFTER=crash_after, CRASH_MODE="sigkill")
        if slow_ms:
            env["HARNESS_SLOW_MS"] = str(slow_ms)
        self.events_file = Path(events_file)
        self.events_file.unlink(missing_ok=True)
        self.read_upto = 0
        self.killed_by_hand = False
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "harness", "--workdir", str(workdir), *args],
            env=env,
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
