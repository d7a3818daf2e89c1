"""A run's context: its work folder, clock, tools, crash plan and listeners. Passed in, never global.

In the lesson these are agent.js's module constants (CHECKPOINT_PATH, EFFECTS_PATH, toolImpls, Date.now, console);
here each run carries its own, so two runs in one kernel never collide.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import texts
from .tools import TOOL_IMPLS, ToolImpl
from .vocab import CHECKPOINT_FILE, EFFECTS_FILE


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
    """Where a run keeps its files, how it tells time, which tools it has, where it may crash, who hears it."""

    def __init__(
        self,
        workdir: str | Path,
        clock: Callable[[], int] = wall_clock_ms,
        crash=None,
        listeners: list[Callable[[Event], None]] | None = None,
        tool_impls: dict[str, ToolImpl] | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.clock = clock
        self.crash = crash  # a crash.CrashPlan, or None for no crash
        self.listeners = list(listeners or [])
        self.tool_impls = dict(TOOL_IMPLS if tool_impls is None else tool_impls)
        self.failed_listeners: list[str] = []
        # Beyond the lesson: the scenario a fresh start records in mode.json (None: the lesson's, nothing recorded),
        # and what a fresh start writes for it once the folder is clean and marked (harness/beyond/modes.py).
        self.mode: str | None = None
        self.at_fresh_start: list[Callable[[Path], None]] = []

    def emit(self, kind: str, **data: object) -> None:
        """Tell every listener (one that fails is dropped: the task never dies for its audience), then let the crash
        plan, if any, stop the run right here."""
        event = Event(kind, data)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception as err:  # noqa: BLE001 (a closed pipe, a full disk, a broken events file)
                self.listeners.remove(listener)
                self.failed_listeners.append(f"{type(err).__name__}: {err}")
                if isinstance(err, BrokenPipeError):  # a reader that stopped reading (`| head -1`): no news
                    continue
                _warn(texts.LISTENER_FAILED.format(kind=type(err).__name__))
        if self.crash is not None:
            self.crash.after(self, event)

    def path(self, name: str) -> Path:
        return self.workdir / name

    @property
    def checkpoint_path(self) -> Path:
        return self.path(CHECKPOINT_FILE)

    @property
    def effects_path(self) -> Path:
        return self.path(EFFECTS_FILE)


def _warn(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr is gone too: nothing left to tell
        return
