"""The lesson's exercises (練習): answer vocabulary, the verdict, and the local checks for levels 1 and 2.

The checks run the real harness and compare what the disk really shows with the learner's answers; they never
raise on a wrong or missing answer, they print 未完了 and say exactly what is wrong.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..crash import CrashPlan, SimulatedCrash
from ..lab import read_text
from ..loop import run_agent
from ..models import ScriptedModel
from ..run import Run
from ..tools import TOOL_SCHEMAS
from ..vocab import FIXED_TIME_MS

# What a learner may answer (the same words the notebooks use).
PENDING_CALL = "このターンの呼び出し"
NULL = "null"
HIT = "台帳ヒット、再利用"
RERUN = "台帳ミス、再実行"
IS_ERROR = "台帳ミス、is_error"
NO_RECONCILE = "reconcile なし"
BRANCH_WORDS = {"hit": HIT, "rerun": RERUN, "unknown": IS_ERROR, None: NO_RECONCILE}


class Verdict:
    """The outcome of a check: passed only when every answer matches what the real harness did."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.lines: list[str] = []
        self.problems: list[str] = []
        self.missing: list[str] = []
        self.notes: list[str] = []

    def compare(
        self, what: str, answer: object, truth: object, evidence: str = "", mine: str = "あなたの答え"
    ) -> None:
        if answer is Ellipsis:
            self.missing.append(what)
            self.lines.append(f"… {what}: 未回答")
        elif answer == truth:
            self.lines.append(f"✓ {what}: {_show(answer)}")
        else:
            tail = f"（{evidence}）" if evidence else ""
            problem = f"✗ {what}: {mine}={_show(answer)}、正しくは={_show(truth)}{tail}"
            self.problems.append(problem)
            self.lines.append(problem)

    def fail(self, message: str) -> None:
        self.problems.append("✗ " + message)
        self.lines.append("✗ " + message)

    @property
    def passed(self) -> bool:
        return not self.problems and not self.missing

    def report(self) -> str:
        if self.passed:
            head = f"{self.title}: 合格（{len(self.lines)} 項目すべて正解）"
        else:
            head = (
                f"{self.title}: 未完了（{len(self.lines)} 項目のうち 不正解 {len(self.problems)}、"
                f"未回答 {len(self.missing)}）"
            )
        return "\n".join([head, *self.lines, *self.notes])

    def __repr__(self) -> str:
        return self.report()


def _show(value: object) -> str:
    return "..." if value is Ellipsis else value if isinstance(value, str) else repr(value)


def crash_then_look(workdir: Path, label: str | None, listeners=(), **blocks) -> dict:
    """Run the real loop in workdir until it crashes (at label, e.g. "after-tool-run:3", or where a listener dies)."""
    plan = CrashPlan(*_split(label)) if label else None
    crashed = False
    try:
        run_agent(
            Run(workdir, clock=lambda: FIXED_TIME_MS, crash=plan, listeners=list(listeners)),
            ScriptedModel(),
            tools=TOOL_SCHEMAS,
            **blocks,
        )
    except SimulatedCrash:
        crashed = True
    disk = {name: read_text(workdir / name) for name in ("checkpoint.json", "effects.json", "tool-runs.log")}
    return {"crashed": crashed, "disk": disk, "report_at_crash": (workdir / "report.txt").exists()}


def resume_and_look(workdir: Path, **blocks) -> dict:
    """--resume in workdir with the lesson's reconcile; which branch it took and what the disk shows after."""
    events: list = []
    run_agent(
        Run(workdir, clock=lambda: FIXED_TIME_MS, listeners=[events.append]),
        ScriptedModel(),
        tools=TOOL_SCHEMAS,
        resume=True,
        **blocks,
    )
    branches = [e.data["branch"] for e in events if e.kind == "reconcile"]
    return {
        "branch": branches[0] if branches else None,
        "events": events,
        "report_after": (workdir / "report.txt").exists(),
        "runs_after": (read_text(workdir / "tool-runs.log") or "").splitlines(),
    }


def crash_and_resume(workdir: Path, label: str | None, **blocks) -> dict:
    """Crash at label, then (if it crashed) resume; everything both steps saw."""
    seen = crash_then_look(workdir, label, **blocks)
    after = (
        resume_and_look(workdir, **blocks)
        if seen["crashed"]
        else {
            "branch": None,
            "events": [],
            "report_after": seen["report_at_crash"],
            "runs_after": (seen["disk"]["tool-runs.log"] or "").splitlines(),
        }
    )
    return {**seen, **after}


def _split(label: str) -> tuple[str, int]:
    name, n = label.split(":")
    return name, int(n)


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="harness-check-")
