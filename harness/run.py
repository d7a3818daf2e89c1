"""A run's context: its work folder, clock, crash plan and listeners. Passed in, never global."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

CHECKPOINT_FILE = "checkpoint.json"
EFFECTS_FILE = "effects.json"
NOTES_FILE = "sales-notes.txt"
REPORT_FILE = "report.txt"
TOOL_LOG_FILE = "tool-runs.log"
# What a fresh run removes: the previous run's state and outputs, never the input notes.
OUTPUT_FILES = (
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    REPORT_FILE,
    TOOL_LOG_FILE,
    CHECKPOINT_FILE + ".tmp",
    EFFECTS_FILE + ".tmp",
)


class Event:
    """One thing that happened in the loop: a save, a tool run, a ledger write, a crash, a resume, a reconcile."""

    __slots__ = ("data", "kind")

    def __init__(self, kind: str, data: dict) -> None:
        self.kind = kind
        self.data = data

    def __repr__(self) -> str:
        return f"Event({self.kind!r}, {self.data!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and (self.kind, self.data) == (other.kind, other.data)


def wall_clock_ms() -> int:
    """Milliseconds since the epoch, like the lesson's Date.now()."""
    return int(time.time() * 1000)


class Run:
    """Where a run keeps its files, how it tells time, where it may crash, and who hears its events."""

    def __init__(
        self,
        workdir: str | Path,
        clock: Callable[[], int] = wall_clock_ms,
        crash=None,
        listeners: list[Callable[[Event], None]] | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.clock = clock
        self.crash = crash  # a crash.CrashPlan, or None for no crash
        self.listeners = list(listeners or [])

    def emit(self, kind: str, **data: object) -> None:
        event = Event(kind, data)
        for listener in self.listeners:
            listener(event)

    def path(self, name: str) -> Path:
        return self.workdir / name

    @property
    def checkpoint_path(self) -> Path:
        return self.path(CHECKPOINT_FILE)

    @property
    def effects_path(self) -> Path:
        return self.path(EFFECTS_FILE)
