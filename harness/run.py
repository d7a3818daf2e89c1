"""A run's context: its work folder, clock, crash plan and listeners. Passed in, never global."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

CHECKPOINT_FILE = "checkpoint.json"
EFFECTS_FILE = "effects.json"
NOTES_FILE = "sales-notes.txt"
REPORT_FILE = "report.txt"
TOOL_LOG_FILE = "tool-runs.log"
# What a fresh run removes: the previous run's state and outputs, never the input notes.
OUTPUT_FILES = (CHECKPOINT_FILE, EFFECTS_FILE, REPORT_FILE, TOOL_LOG_FILE,
                CHECKPOINT_FILE + ".tmp", EFFECTS_FILE + ".tmp")


@dataclass(frozen=True)
class Event:
    """One thing that happened in the loop: a save, a tool run, a ledger write, a crash, a resume, a reconcile."""

    kind: str
    data: dict[str, Any]


def wall_clock_ms() -> int:
    """Milliseconds since the epoch, like the lesson's Date.now()."""
    return int(time.time() * 1000)


@dataclass
class Run:
    """Where a run keeps its files, how it tells time, where it may crash, and who hears its events."""

    workdir: Path
    clock: Callable[[], int] = wall_clock_ms
    crash: Any = None  # a crash.CrashPlan, or None for no crash
    listeners: list[Callable[[Event], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)

    def emit(self, kind: str, **data: Any) -> None:
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
