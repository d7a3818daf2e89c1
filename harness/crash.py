"""The verification harness's crash points: CRASH_AFTER=LABEL:N stops the run at the N-th LABEL, exactly.

The lesson's blocks carry no crash code. A CrashPlan listens to the events the blocks already emit (save_a, tool_ran,
effect_written, save_b) and dies right after the N-th one of its label: the lesson's crashPoint(label).

Beyond the lesson, four labels aim inside the atomic writer: right after the N-th write of that file, the plan puts
the disk back as a kill inside the writer leaves it (the new bytes, or half of them, in NAME.tmp; the previous file,
kept from the event before, untouched) and dies there.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from . import texts
from .errors import HarnessError
from .transcript import untrusted
from .vocab import (
    ALL_LABELS,
    CHECKPOINT_FILE,
    CRASH_MODES,
    CRASH_MOMENTS,
    EFFECTS_FILE,
    LABEL_AFTER_EVENT,
    WRITER_LABELS,
)


class SimulatedCrash(BaseException):
    """The lesson's pseudo-kill. Like a real kill, it cannot be caught by `except Exception` (only by main)."""

    def __init__(self, label: str):
        super().__init__(texts.SIMULATED_KILL.format(label=label))
        self.label = label


# Which file each writer label aims at, and which events follow a finished write of that file.
_WRITER_FILE = {label: file for label, file, _ in CRASH_MOMENTS if label in WRITER_LABELS}
_WRITE_EVENTS = {"save_a": CHECKPOINT_FILE, "save_b": CHECKPOINT_FILE, "effect_written": EFFECTS_FILE}


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


class CrashPlan:
    """Crash at the n-th occurrence of label in one run (counted per plan, so two runs never share a count)."""

    def __init__(self, label: str, n: int, mode: str = "simulated") -> None:
        if label not in ALL_LABELS or type(n) is not int or n < 1:
            raise HarnessError(texts.BAD_CRASH_PLAN.format(label=label, n=n, labels=", ".join(ALL_LABELS)))
        if mode not in CRASH_MODES:
            raise HarnessError(texts.BAD_CRASH_MODE.format(value=untrusted(mode, limit=80)))
        self.label, self.n, self.mode = label, n, mode
        self.seen: dict[str, int] = {}
        self.before: dict[str, bytes | None] = {}  # writer labels: each file as it was at the previous event

    def __repr__(self) -> str:
        return f"CrashPlan({self.label!r}, {self.n}, {self.mode!r})"

    @classmethod
    def from_env(cls, crash_after: str | None, crash_mode: str | None = None) -> CrashPlan | None:
        """Parse CRASH_AFTER / CRASH_MODE as the command line receives them; None when no crash is asked for."""
        mode = crash_mode or "simulated"
        if mode not in CRASH_MODES:
            raise HarnessError(texts.BAD_CRASH_MODE.format(value=untrusted(crash_mode, limit=80)))
        if not crash_after:
            return None
        label, _, n = crash_after.partition(":")
        # (more than 18 digits: no run gets that far, and Python refuses to read 4,300 of them)
        if label not in ALL_LABELS or not n.isascii() or not n.isdigit() or len(n) > 18 or int(n) < 1:
            shown = untrusted(crash_after, limit=80)
            raise HarnessError(texts.BAD_CRASH_AFTER.format(value=shown, labels=", ".join(ALL_LABELS)))
        return cls(label, int(n), mode)

    def _count(self, label: str) -> bool:
        self.seen[label] = self.seen.get(label, 0) + 1
        return label == self.label and self.seen[label] == self.n

    def after(self, run, event) -> None:
        """Called by the run after its listeners heard `event`: die here if this is the planned moment."""
        if self.label in WRITER_LABELS:
            self._writer_crash(run, event)
        elif event.kind in LABEL_AFTER_EVENT and self._count(LABEL_AFTER_EVENT[event.kind]):
            self.die(run)

    def _writer_crash(self, run, event) -> None:
        written = _WRITE_EVENTS.get(event.kind)
        target = _WRITER_FILE[self.label]
        if written == target and self._count(self.label):
            path = run.path(target)
            new = _read(path) or b""
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(new[: len(new) // 2] if self.label.endswith("torn-write") else new)
            previous = self.before.get(target)
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(previous)
            self.die(run)
        self.before = {name: _read(run.path(name)) for name in (CHECKPOINT_FILE, EFFECTS_FILE)}

    def die(self, run) -> None:
        """The [kill] event, then the lesson's simulated crash, or a real SIGKILL of this process."""
        tag = f"{self.label}:{self.n}"
        run.emit("crash", label=tag, mode=self.mode)
        if self.mode == "sigkill":
            sys.stdout.flush()
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        raise SimulatedCrash(tag)


def crash_on(kind: str, name: str | None = None):
    """A listener that dies at the first event of that kind (and tool name): e.g. as write_report starts."""

    def listener(event) -> None:
        if event.kind == kind and (name is None or event.data.get("name") == name):
            raise SimulatedCrash(texts.CRASH_ON_LABEL.format(name=name or kind, kind=kind))

    return listener
