"""Every labelled answer in tests/answer_corpus (the earlier tests' answers and strangers' answers, each with the
verdict the lesson demands and why) read by the judges: a judge change that flips one fails here.

A line is {"part", "where", "answer", "label": "accept"|"reject", "reason", "author"} and optionally "says": fragments
the verdict must contain (the mistake named, the hint given). No verdict shows the answer unless asked."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "answer_corpus"
QUESTIONS = json.loads((CORPUS / "prediction_questions.json").read_text(encoding="utf-8"))


def rows(part: str) -> list:
    found = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            if row["part"] == part:
                marks = (
                    [pytest.mark.xfail(reason=row["known_gap"], strict=True)] if row.get("known_gap") else []
                )
                found.append(pytest.param(row, id=f"{path.stem}:{n}", marks=marks))
    return found


def assert_judged(row: dict, verdict) -> None:
    report = verdict.report()
    assert ("accept" if verdict.passed else "reject") == row["label"], row["reason"] + "\n" + report
    for fragment in row.get("says", ()):
        assert fragment in report, fragment + "\n" + report
    assert "（正しくは" not in report  # the answer only on request (show_answers=True)


def predicted(row: dict) -> tuple[str, str]:
    """The judge's reading of a prediction ("accept" or "reject") and what it printed."""
    from harness.lab import BRANCH_WORDS, check_prediction, false, null, true

    question = QUESTIONS[row["where"]]
    accept = question.get("accept", ())
    if accept == "BRANCH_WORDS":
        accept = BRANCH_WORDS.get(question["actual"], ())
    try:
        given = eval(row["answer"], {"true": true, "false": false, "null": null})
    except (SyntaxError, NameError):
        return "reject", ""  # Python stops the cell before the judge sees it
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        right = check_prediction(given, question["actual"], question["what"], accept=tuple(accept))
    return ("accept" if right else "reject"), shown.getvalue()


@pytest.mark.parametrize("row", rows("prediction"))
def test_prediction_is_read_as_the_lesson_demands(row):
    label, shown = predicted(row)
    assert label == row["label"], row["reason"] + "\n" + shown
    for fragment in row.get("says", ()):
        assert fragment in shown, fragment + "\n" + shown


@pytest.mark.parametrize("row", rows("fix"))
def test_fix_is_judged_as_the_lesson_demands(row):
    from harness import texts
    from harness.exercises.level2 import check_level2_fix

    verdict = check_level2_fix(row["answer"])
    assert_judged(row, verdict)
    own_note = texts.FIX_OWN_FILES_NOTE.split("{files}")[0]
    assert (
        verdict.report().count(own_note) <= 1
    )  # one note for the learner's own files, however many runs made them


@pytest.mark.parametrize("row", rows("level1") + rows("diagnosis"))
def test_answer_sheet_is_judged_as_the_lesson_demands(row):
    from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, NULL, PENDING_CALL, RERUN
    from harness.exercises.level1 import check_level1
    from harness.exercises.level2 import check_level2_diagnosis

    cell = {"HIT": HIT, "IS_ERROR": IS_ERROR, "NO_RECONCILE": NO_RECONCILE, "NULL": NULL, "PENDING_CALL": PENDING_CALL,
            "RERUN": RERUN, "true": True, "false": False, "null": None}  # fmt: skip
    try:
        exec(row["answer"], cell)  # noqa: S102 (the corpus' own text, as the notebook cell runs it)
    except (SyntaxError, NameError):
        assert row["label"] == "reject", row["reason"]
        return
    if row["part"] == "level1":
        verdict = check_level1(cell.get("answers", ...), cell.get("meaning"))
    else:
        verdict = check_level2_diagnosis(cell.get("diagnosis", ...), explanation=cell.get("explanation"))
    assert_judged(row, verdict)


@pytest.mark.parametrize("row", rows("repro"))
def test_repro_script_is_judged_as_the_lesson_demands(row, tmp_path):
    from harness.exercises.level2 import check_level2_repro

    script = tmp_path / "level2_repro.py"
    script.write_text(row["answer"], encoding="utf-8")
    assert_judged(row, check_level2_repro(script))
