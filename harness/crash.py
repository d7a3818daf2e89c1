"""The verification harness's crash points: CRASH_AFTER=LABEL:N stops the run at the N-th LABEL, exactly."""

from __future__ import annotations

import os
import signal
import sys

from . import texts
from .errors import HarnessError

# The four moments of a turn where the lesson's checkpoints can be caught (DESIGN section 2).
CRASH_LABELS = {
    "after-save-a": "① 地点A保存直後（ツール未実行）",
    "after-tool-run": "② ツール完了・台帳未記録",
    "after-effect-write": "台帳記録済み・地点B未保存（レッスンのデモ）",
    "after-save-b": "③ 地点B保存直後",
}
# Beyond the lesson: crash points inside the atomic writer, for each of the two files it writes.
WRITER_LABELS = {
    "checkpoint-torn-write": "checkpoint.json.tmp を半分だけ書いたところ",
    "checkpoint-before-rename": "checkpoint.json.tmp を書き終え、rename する直前",
    "effects-torn-write": "effects.json.tmp を半分だけ書いたところ",
    "effects-before-rename": "effects.json.tmp を書き終え、rename する直前",
}
ALL_LABELS = {**CRASH_LABELS, **WRITER_LABELS}
CRASH_MODES = ("simulated", "sigkill")


class SimulatedCrash(Exception):
    """The lesson's pseudo-kill: raised at a crash point, caught only by the outermost caller."""

    def __init__(self, label: str):
        super().__init__(f"{label} で疑似キル")
        self.label = label


class CrashPlan:
    """Crash at the n-th occurrence of label in this run (counted per plan, so two runs never share a count)."""

    def __init__(self, label: str, n: int, mode: str = "simulated") -> None:
        if label not in ALL_LABELS or not isinstance(n, int) or n < 1:
            raise HarnessError(
                texts.BAD_CRASH_AFTER.format(value=f"{label}:{n}", labels=", ".join(ALL_LABELS))
            )
        if mode not in CRASH_MODES:
            raise HarnessError(texts.BAD_CRASH_MODE.format(value=mode))
        self.label, self.n, self.mode = label, n, mode
        self.seen: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"CrashPlan({self.label!r}, {self.n}, {self.mode!r})"

    @classmethod
    def from_env(cls, crash_after: str | None, crash_mode: str | None = None) -> CrashPlan | None:
        """Parse CRASH_AFTER / CRASH_MODE as the command line receives them; None when no crash is asked for."""
        mode = crash_mode or "simulated"
        if mode not in CRASH_MODES:
            raise HarnessError(texts.BAD_CRASH_MODE.format(value=crash_mode))
        if not crash_after:
            return None
        label, _, n = crash_after.partition(":")
        if label not in ALL_LABELS or not n.isdigit() or int(n) < 1:
            raise HarnessError(texts.BAD_CRASH_AFTER.format(value=crash_after, labels=", ".join(ALL_LABELS)))
        return cls(label, int(n), mode)

    def should_crash(self, label: str) -> bool:
        self.seen[label] = self.seen.get(label, 0) + 1
        return label == self.label and self.seen[label] == self.n


def crash_point(run, label: str) -> None:
    """Count one occurrence of label; if the run's plan says so, die here (simulated, or a real SIGKILL)."""
    plan = run.crash
    if plan is None or not plan.should_crash(label):
        return
    tag = f"{label}:{plan.n}"
    run.emit("crash", label=tag, mode=plan.mode)
    if plan.mode == "sigkill":
        sys.stdout.flush()
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    raise SimulatedCrash(tag)


def writer_hooks(run) -> dict:
    """{"crash": ...} for a writer when the run's plan aims inside the writers, else {} (the blocks keep their
    lesson signature: save_checkpoint(path, cp), save_effect(path, id, entry))."""
    if run.crash is not None and run.crash.label in WRITER_LABELS:
        return {"crash": lambda label: crash_point(run, label)}
    return {}
