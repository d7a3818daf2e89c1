"""The lesson's exercises (練習): the answer vocabulary, the verdict, and the real-harness runs the checks compare with.

The checks run the real harness and compare what the disk really shows with the learner's answers. They never raise:
an unfinished answer prints 未完了, a wrong one ✗ with what the disk showed and which idea to revisit (the answer
itself only on request, show_answers=True), and any other shape a sentence saying what is wrong with it.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .. import texts
from ..crash import CrashPlan, SimulatedCrash
from ..lab import read_text
from ..loop import run_agent
from ..models import ScriptedModel
from ..run import Run
from ..tools import TOOL_SCHEMAS
from ..vocab import CHECKPOINT_FILE, EFFECTS_FILE, FIXED_TIME_MS, REPORT_FILE, TOOL_LOG_FILE
from .answers import (  # noqa: F401  (the notebooks import the vocabulary from here)
    BRANCH_WORDS,
    FROM_NOTEBOOK,
    HIT,
    IS_ERROR,
    MISSING,
    NO_RECONCILE,
    NULL,
    PENDING_CALL,
    RERUN,
    Question,
    show,
    unwrap,
)
from .jail import OUTPUT_LIMIT, SCRIPT_TIME_LIMIT_S, TIME_LIMIT_S

__all__ = [
    "HIT",
    "IS_ERROR",
    "NO_RECONCILE",
    "NULL",
    "OUTPUT_LIMIT",
    "PENDING_CALL",
    "RERUN",
    "SCRIPT_TIME_LIMIT_S",
    "TIME_LIMIT_S",
    "Verdict",
]


class Verdict:
    """The outcome of a check: passed only when every item was answered and matches what the real harness did."""

    def __init__(self, title: str, show_answers: bool = False, answers_call: str = "") -> None:
        self.title = title
        self.show_answers = show_answers
        self.answers_call = answers_call  # how to ask for the answers, named after the first ✗
        self.lines: list[str] = []
        self.problems: list[str] = []
        self.missing: list[str] = []
        self.skipped: list[str] = []
        self.notes: list[str] = []
        self.right = 0

    def ok(self, message: str) -> None:
        self.right += 1
        self.lines.append("✓ " + message)

    def fail(self, message: str) -> None:
        self.problems.append("✗ " + message)
        self.lines.append("✗ " + message)

    def unanswered(self, what: str, why: str | None = None) -> None:
        self.missing.append(what)
        said = texts.VERDICT_UNANSWERED if why is None else why
        self.lines.append("… " + texts.VERDICT_ITEM.format(what=what, said=said))

    def skip(self, what: str) -> None:
        self.skipped.append(what)
        self.lines.append("… " + texts.VERDICT_ITEM.format(what=what, said=texts.VERDICT_NOT_CHECKED))

    def grade(self, question: Question, given: object, truth: object, hint: str = "") -> None:
        """One answer against the truth: ✓, … (unanswered), or ✗ with a hint (and the answer only on request)."""
        given, note = unwrap(given, question.what)
        if note:
            self.notes.append(note)
        value, problem = question.read(given)
        if problem:
            self.fail(texts.VERDICT_ITEM.format(what=question.what, said=problem))
        elif value is MISSING:
            self.unanswered(question.what)
        elif type(value) is type(truth) and value == truth:
            self.ok(texts.VERDICT_ITEM.format(what=question.what, said=show(given)))
        else:
            form = {(True, True): "hint_answer", (True, False): "hint", (False, True): "answer"}.get(
                (bool(hint), bool(self.show_answers)), "plain"
            )
            self.fail(
                texts.VERDICT_WRONG[form].format(
                    what=question.what, given=show(given), hint=hint, truth=show(truth)
                )
            )

    @property
    def passed(self) -> bool:
        return not self.problems and not self.missing and not self.skipped

    def report(self) -> str:
        total = self.right + len(self.problems) + len(self.missing) + len(self.skipped)
        if self.passed:
            head = texts.VERDICT_PASSED.format(title=self.title, total=total)
        else:
            head = texts.VERDICT_UNFINISHED["with_skipped" if self.skipped else "without_skipped"].format(
                title=self.title,
                total=total,
                right=self.right,
                wrong=len(self.problems),
                missing=len(self.missing),
                skipped=len(self.skipped),
            )
        tail = []
        if self.problems and not self.show_answers and self.answers_call:
            tail.append(texts.VERDICT_HOW_TO_SEE_ANSWERS.format(call=self.answers_call))
        return "\n".join([head, *self.lines, *self.notes, *tail])

    def __str__(self) -> str:
        return self.report()

    def __repr__(self) -> str:
        return self.report()


def internal_error(title: str, err: BaseException) -> Verdict:
    """A check that failed by itself still answers with a Verdict, never a traceback."""
    verdict = Verdict(title)
    verdict.fail(texts.VERDICT_CHECK_FAILED.format(error=type(err).__name__, detail=no_paths(str(err))[:200]))
    return verdict


def no_paths(text: str) -> str:
    """A message without the absolute paths of the check's scratch folders (only the last part of each path)."""
    return re.sub(r"(?:/[^/\s'\"）)]+)+/([^/\s'\"）)]+)", r"\1", text)


def crash_then_look(workdir: Path, label: str | None, listeners=(), **blocks) -> dict:
    """Run the real loop in workdir until it crashes (at label, e.g. "after-tool-run:3", or where a listener dies)."""
    plan = CrashPlan(*_split(label)) if label else None
    events: list = []
    crashed = False
    try:
        run_agent(
            Run(workdir, clock=lambda: FIXED_TIME_MS, crash=plan, listeners=[events.append, *listeners]),
            ScriptedModel(),
            tools=TOOL_SCHEMAS,
            **blocks,
        )
    except SimulatedCrash:
        crashed = True
    disk = {name: read_text(workdir / name) for name in (CHECKPOINT_FILE, EFFECTS_FILE, TOOL_LOG_FILE)}
    return {
        "crashed": crashed,
        "disk": disk,
        "report_at_crash": (workdir / REPORT_FILE).exists(),
        "events": events,
    }


def resume_and_look(workdir: Path, **blocks) -> dict:
    """--resume in workdir with the lesson's reconcile; which branch it took and what the disk shows after."""
    events: list = []
    final = run_agent(
        Run(workdir, clock=lambda: FIXED_TIME_MS, listeners=[events.append]),
        ScriptedModel(),
        tools=TOOL_SCHEMAS,
        resume=True,
        **blocks,
    )
    branches = [e.data["branch"] for e in events if e.kind == "reconcile"]
    return {
        "branch": branches[0] if branches else None,
        "final": final,
        "report_after": (workdir / REPORT_FILE).exists(),
        "runs_after": (read_text(workdir / TOOL_LOG_FILE) or "").splitlines(),
    }


def crash_and_resume(workdir: Path, label: str | None, **blocks) -> dict:
    """Crash at label, then (if it crashed) resume; everything both steps saw."""
    seen = crash_then_look(workdir, label, **blocks)
    if seen["crashed"]:
        return {**seen, **resume_and_look(workdir, **blocks)}
    runs = (seen["disk"][TOOL_LOG_FILE] or "").splitlines()
    return {
        **seen,
        "branch": None,
        "final": None,
        "report_after": seen["report_at_crash"],
        "runs_after": runs,
    }


def _split(label: str) -> tuple[str, int]:
    name, n = label.split(":")
    return name, int(n)


def scratch_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="harness-check-")
