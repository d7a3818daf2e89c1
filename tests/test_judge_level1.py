"""Level 1 and the level-2 diagnosis: what the checks do beyond grading one sheet (look(), the answer only on request,
notes when a sheet is unwrapped, a deleted answer cell). The answers themselves, right and wrong, with the message each
✗ must give, are lines of tests/answer_corpus (test_answer_corpus.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, NULL, PENDING_CALL, RERUN
from harness.exercises.level1 import blank_answers, check_level1, look
from harness.exercises.level2 import (
    check_level2_diagnosis,
)

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_SCRIPT = ROOT / "solutions" / "level2_repro.py"

# ---------------------------------------------------------------------------------------------------------------
# Level 1: the lesson's answers (its 完了基準), written here independently of the checker.

LEVEL1 = {
    "①": {
        "read_notes": {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": RERUN},
        "write_report": {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": IS_ERROR},
    },
    "②": {
        "read_notes": {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": RERUN},
        "write_report": {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": IS_ERROR},
    },
    "③": {
        "read_notes": {"pendingToolUse": NULL, "ledger_entry": True, "reconcile": NO_RECONCILE},
        "write_report": {"pendingToolUse": NULL, "ledger_entry": True, "reconcile": NO_RECONCILE},
    },
    "same_disk_1_2": True,
    "same_recovery_1_2": True,
    "insight_1_2": "B",
}


def with_change(answers, path, value):
    changed = copy.deepcopy(answers)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


def test_level1_blank_sheet_is_unanswered_not_wrong():
    verdict = check_level1(blank_answers())
    assert not verdict.passed and len(verdict.missing) == 21 and not verdict.problems
    assert "未完了" in verdict.report()


def test_level1_called_without_answers_in_the_notebook_says_unanswered():
    verdict = check_level1()  # this module has no `answers` or `meaning`: like a deleted answer cell
    assert len(verdict.missing) == 21 and not verdict.problems
    assert "answers がまだありません" in verdict.report()


def test_level1_the_answer_is_shown_only_on_request():
    verdict = check_level1(
        with_change(LEVEL1, ("②", "write_report", "ledger_entry"), True), show_answers=True
    )
    assert "（正しくは False）" in verdict.problems[0]


def test_level1_a_string_that_looks_like_a_value_is_shown_with_quotes():
    verdict = check_level1(with_change(LEVEL1, ("insight_1_2",), "A "))
    assert "あなたの答え='A '" in verdict.problems[0]


def moment_spellings():
    return [("①", "①"), (1, "①"), ("1", "①"), ("１", "①"), ("②", "②"), (3, "③"), ("after-tool-run", "②")]


@pytest.mark.parametrize("moment, shown", moment_spellings())
@pytest.mark.parametrize(
    "tool, turn", [("read_notes", 1), ("count_words", 2), ("write_report", 3), ("toolu_03", 3)]
)
def test_look_takes_every_moment_and_tool_in_every_spelling(capsys, moment, shown, tool, turn):
    look(moment, tool)
    out = capsys.readouterr().out
    assert out.startswith(f"{shown}（") and f"（{turn} ターン目）に落ちた直後のディスク" in out
    assert "pendingToolUse=" in out


@pytest.mark.parametrize("args", [(), ("4", "write_report"), ("②", "write_reprot"), (None, None), ("②",)])
def test_look_with_anything_else_lists_the_choices(capsys, args):
    look(*args)
    out = capsys.readouterr().out
    assert (
        "使い方: look(瞬間, ツール)" in out
        and "'count_words'（2 ターン目）" in out
        and "1, 2, 3 でも書けます" in out
    )


def test_look_with_arguments_swapped_still_shows_the_moment(capsys):
    look("write_report", "②")
    assert capsys.readouterr().out.startswith("②（ツール完了、台帳未記録）で write_report")


def test_level1_answers_wrapped_by_a_trailing_comma_are_unwrapped_with_a_note():
    sheet = with_change(LEVEL1, ("same_disk_1_2",), (True,))
    verdict = check_level1((sheet,))
    assert verdict.passed, verdict.report()
    assert "answers が1要素のタプルになっていたので（行末のカンマ）" in verdict.report()
    assert "checkpoint.json と effects.json は同じか が1要素のタプルになっていたので" in verdict.report()


# ---------------------------------------------------------------------------------------------------------------
# Level 2 (a)(b): the diagnosis.

DIAGNOSIS = {
    "first_call": "save_effect",
    "recorded_result": None,
    "branch_after_crash": HIT,
    "report_exists": False,
    "tool_ran": False,
}
EXPLANATION = (
    "再開すると reconcile はプレースホルダのレコードに台帳ヒットし、write_report を一度も実行しない。"
)


def test_level2_diagnosis_recorded_result_as_the_whole_record_is_read_with_a_note():
    entry = {"name": "write_report", "result": None, "at": 1_700_000_000_000}
    verdict = check_level2_diagnosis(({**DIAGNOSIS, "recorded_result": entry},), explanation=EXPLANATION)
    assert verdict.passed, verdict.report()
    assert "台帳のレコード全体" in verdict.report() and "1要素のタプル" in verdict.report()
    wrong = check_level2_diagnosis(
        {**DIAGNOSIS, "recorded_result": {**entry, "result": "完了"}}, explanation=EXPLANATION
    )
    assert len(wrong.problems) == 1 and "あなたの答え='完了'" in wrong.problems[0]


def test_level2_diagnosis_answer_only_on_request():
    verdict = check_level2_diagnosis({**DIAGNOSIS, "branch_after_crash": IS_ERROR}, show_answers=True)
    assert "（正しくは '台帳ヒット、再利用'）" in verdict.problems[0]


def test_level2_diagnosis_called_without_the_cell_is_unanswered():
    verdict = check_level2_diagnosis()
    assert len(verdict.missing) == 6 and not verdict.problems  # five items and the explanation


def test_a_page_long_explanation_or_sheet_cell_is_asked_to_be_shorter_not_read():
    verdict = check_level2_diagnosis(DIAGNOSIS, explanation="台帳ヒットし、再実行しない。" * 300)
    assert not verdict.passed and "説明文が 4,200 文字あります" in verdict.report()
    sheet = with_change(LEVEL1, ["①", "read_notes", "reconcile"], "再実行" * 200)
    report = check_level1(sheet).report()
    assert "600 文字あります" in report and "合格" not in report


@pytest.mark.parametrize(
    "explanation",
    [
        "なぜ完了扱いになるのか。再開すると reconcile はプレースホルダに台帳ヒットし、write_report を実行しない。",
        (
            "（なぜ「一度も走っていないツールが完了扱い」になるのかを、ここに書く）\n"
            "再開すると台帳ヒットし、write_report は一度も実行されない。"
        ),
        "再開したら再実行するか？ しない。台帳ヒットして結果を再利用する。",
        "「再開で台帳ミスになって write_report がもう一度走る」——これは誤りです。再開は台帳ヒットし、再実行しない。",
        "最初は再開で再実行されると考えた。でもそれは台帳が空のときの話だった。再開は台帳ヒットし、再実行しない。",
    ],
)
def test_an_explanation_starting_with_naze_asking_or_quoting_what_it_refutes_is_read(explanation):
    assert check_level2_diagnosis(DIAGNOSIS, explanation=explanation).passed


@pytest.mark.parametrize(
    "explanation",
    [
        "（なぜ「一度も走っていないツールが完了扱い」になるのかを、ここに書く）\n再開で write_report が再実行される。",
        "再開は台帳ヒットし再実行しないが、モデルはそれをツールの失敗として受け取り、最後のメッセージはエラーになる。",
        "On resume it is a ledger hit and nothing re-runs, but the model treats it as a failure.",
    ],
)
def test_a_placeholder_line_left_in_or_a_failure_story_is_not_passed(explanation):
    assert not check_level2_diagnosis(DIAGNOSIS, explanation=explanation).passed


@pytest.mark.parametrize(
    "insight, right",
    [
        ("B。A は「② ではまだ走っていない」と決めつけているが、走っているかもしれない。D は checkpoint.json が違うと言うが、同じ。", True),
        ("B  # 区別がつかない（D ではない # A でもない）", True),
        ("B。A も正しい", False),
        ("B。でも A かもしれない", False),
    ],
)  # fmt: skip
def test_other_choices_named_only_to_argue_against_them_leave_the_one_chosen(insight, right):
    assert check_level1(with_change(LEVEL1, ("insight_1_2",), insight)).passed is right


def test_an_explanation_in_tohoku_speech_is_read():
    explanation = "--resume したどぎ reconcile は台帳ヒットにして、結果ば再利用して再実行しねえ。"
    assert check_level2_diagnosis(DIAGNOSIS, explanation=explanation).passed
    wrong = "--resume したどぎ reconcile は台帳ミスにして、もう一回走らせる。ヒットはしねえ。"
    assert not check_level2_diagnosis(DIAGNOSIS, explanation=wrong).passed


def test_a_branch_described_as_a_noun_is_what_it_is_not_what_happens():
    explanation = (
        "台帳ミスの分岐（読み取り専用なら再実行、副作用ありなら is_error）に入るのは、レコードがないときだけです。"
        "再開すると reconcile は台帳ヒットし、write_report を再実行しません。"
    )
    assert check_level2_diagnosis(DIAGNOSIS, explanation=explanation).passed
    wrong = "台帳ミスの分岐に入り、再開で write_report が再実行される。"
    assert not check_level2_diagnosis(DIAGNOSIS, explanation=wrong).passed
