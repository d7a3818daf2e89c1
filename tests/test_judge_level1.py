"""Level 1 and the level-2 diagnosis: the exercise checks, both ways: right answers written in different ways pass; wrong answers a learner could
plausibly give fail with the message that names the mistake; no answer shape makes a check raise; learner code
that hangs, floods or deletes files is stopped, cut or kept away from the exercises folder."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, NULL, PENDING_CALL, RERUN
from harness.exercises.level1 import INSIGHT_CHOICES, blank_answers, check_level1, look
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

# The same answers typed by hand: literal strings, full-width letters, stray spaces, "1" for "①", None for null.
LEVEL1_TYPED = {
    "1": {
        "read_notes": {"pendingToolUse": " このターンの呼び出し", "ledger_entry": False, "reconcile": "台帳ミス、再実行"},
        "write_report": {"pendingToolUse": "このターンの呼び出し", "ledger_entry": "False", "reconcile": "台帳ミス，ｉｓ＿ｅｒｒｏｒ"},
    },
    "２": {
        "read_notes": {"pending_tool_use": "このターンの呼び出し ", "ledger_entry": False, "reconcile": "台帳ミス、 再実行"},
        "write_report": {"pendingToolUse": "このターンの呼び出し", "Ledger_Entry": False, "reconcile": "台帳ミス、is_error"},
    },
    3: {
        "read_notes": {"pendingToolUse": None, "ledger_entry": True, "reconcile": None},
        "write_report": {"pendingToolUse": "ＮＵＬＬ", "ledger_entry": "true", "reconcile": "reconcile なし"},
    },
    "same_disk_1_2": True,
    "same_recovery_1_2": True,
    "insight_1_2": " ｂ ",
}  # fmt: skip

# The lesson's own log lines and short names, None for "no reconcile", "None" for null, the choice's full text.
LEVEL1_LESSON_WORDS = copy.deepcopy(LEVEL1)
LEVEL1_LESSON_WORDS["①"]["read_notes"]["reconcile"] = "台帳ミス、読み取り専用ツール、再実行する"
LEVEL1_LESSON_WORDS["①"]["write_report"]["reconcile"] = "台帳ミスかつ副作用あり、判断不能、is_error を追加"
LEVEL1_LESSON_WORDS["②"]["write_report"]["reconcile"] = "is_error"
LEVEL1_LESSON_WORDS["③"]["read_notes"]["pendingToolUse"] = "None"
LEVEL1_LESSON_WORDS["③"]["write_report"]["reconcile"] = "なし"
LEVEL1_LESSON_WORDS["insight_1_2"] = INSIGHT_CHOICES["B"]


def with_change(answers, path, value):
    changed = copy.deepcopy(answers)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


@pytest.mark.parametrize(
    "answers", [LEVEL1, LEVEL1_TYPED, LEVEL1_LESSON_WORDS], ids=["constants", "typed", "lesson"]
)
def test_level1_right_answers_written_differently_pass(answers):
    verdict = check_level1(answers, "自由記述")
    assert verdict.passed, verdict.report()
    assert verdict.report().startswith("レベル1: 合格（21 項目すべて正解）")


def test_level1_blank_sheet_is_unanswered_not_wrong():
    verdict = check_level1(blank_answers())
    assert not verdict.passed and len(verdict.missing) == 21 and not verdict.problems
    assert "未完了" in verdict.report()


def test_level1_called_without_answers_in_the_notebook_says_unanswered():
    verdict = check_level1()  # this module has no `answers` or `meaning`: like a deleted answer cell
    assert len(verdict.missing) == 21 and not verdict.problems
    assert "answers がまだありません" in verdict.report()


LEVEL1_WRONG = [
    (("②", "write_report", "ledger_entry"), True, ["effects.json にこの呼び出しのレコード", "tool-runs.log で write_report は実行済み", "実行が先・記録が後"]),
    (("①", "read_notes", "ledger_entry"), True, ["①（地点A保存直後、ツール未実行）read_notes", "まだ実行されていません"]),
    (("③", "write_report", "ledger_entry"), False, ["③（地点B保存直後）write_report", "実行済み"]),
    (("same_disk_1_2",), False, ["バイト単位で比べました", "look('①', 'write_report')"]),
    (("same_recovery_1_2",), False, ["reconcile が判断に使うのは checkpoint.json と effects.json だけ"]),
    (("③", "read_notes", "pendingToolUse"), PENDING_CALL, ["toolu_01 の tool_result がすでに入っています", "地点Aと地点B"]),
    (("①", "write_report", "pendingToolUse"), NULL, ["toolu_03 の tool_result はまだありません"]),
    (("②", "write_report", "reconcile"), HIT, ["合計 1 回", "report.txt はあり", "3分岐"]),
    (("①", "write_report", "reconcile"), RERUN, ["write_report の実行は tool-runs.log で合計 0 回"]),
    (("③", "write_report", "reconcile"), HIT, ["③（地点B保存直後）write_report: --resume での reconcile"]),
    (("②", "read_notes", "reconcile"), IS_ERROR, ["read_notes の実行は tool-runs.log で合計 2 回"]),
    (("insight_1_2",), "A", ["① で", "なし、② で", "あり", "コードはそれを"]),
    (("insight_1_2",), "D", ["① と ② が同じに見えることが意味するのは: あなたの答え='D'"]),
    (("②", "write_report", "pendingToolUse"), "あり", ["'あり' は選択肢にありません", "PENDING_CALL", "NULL"]),
    # read as a person writes them (はい = True, 再利用 = the hit branch): wrong here, graded with the disk's hint
    (("①", "read_notes", "ledger_entry"), "はい", ["あなたの答え='はい'", "ディスクでは"]),
    (("②", "write_report", "reconcile"), "再利用", ["あなたの答え='再利用'", "ディスクでは"]),
    (("①", "write_report", "ledger_entry"), None, ["None ではなく True か False で答えてください"]),
]  # fmt: skip


@pytest.mark.parametrize(
    "path, value, fragments", LEVEL1_WRONG, ids=[str(i) for i in range(len(LEVEL1_WRONG))]
)
def test_level1_wrong_answer_fails_naming_the_mistake_without_the_answer(path, value, fragments):
    verdict = check_level1(with_change(LEVEL1, path, value))
    assert not verdict.passed and len(verdict.problems) == 1, verdict.report()
    for fragment in fragments:
        assert fragment in verdict.problems[0], verdict.problems[0]
    assert "正しくは" not in verdict.report()
    assert "check_level1(show_answers=True)" in verdict.report()


def test_level1_the_answer_is_shown_only_on_request():
    verdict = check_level1(
        with_change(LEVEL1, ("②", "write_report", "ledger_entry"), True), show_answers=True
    )
    assert "（正しくは False）" in verdict.problems[0]


def test_level1_a_string_that_looks_like_a_value_is_shown_with_quotes():
    verdict = check_level1(with_change(LEVEL1, ("insight_1_2",), "A "))
    assert "あなたの答え='A '" in verdict.problems[0]


@pytest.mark.parametrize(
    "answers, fragment",
    [
        ([LEVEL1], "answers が dict ではなく list になっています（{...} を [ ] で囲んでいませんか）"),
        (None, "answers は dict（{...}）で書いてください（いまは NoneType: None）"),
        ("①②③", "answers は dict（{...}）で書いてください（いまは str"),
        ([1, 2], "answers は dict（{...}）で書いてください（いまは list"),
        ({**LEVEL1, "write_reprot": 1}, "answers に知らないキー 'write_reprot' があります（使えるキー: '①', '②', '③'"),
        (with_change(LEVEL1, ("①", "write_reprot"), {}), "answers['①'] に知らないキー 'write_reprot' があります（使えるキー: 'read_notes', 'write_report'）"),
        (with_change(LEVEL1, ("②", "read_notes", "pending"), NULL), "知らないキー 'pending' があります（使えるキー: 'pendingToolUse', 'ledger_entry', 'reconcile'）"),
        (with_change(LEVEL1, ("③",), "null"), "answers['③'] は dict（{...}）で書いてください"),
        ({**LEVEL1, "1": {"read_notes": {"ledger_entry": True}}}, "answers のキー '①' が2回（別の書き方で）あり、答えが食い違っています"),
    ],
    ids=["in-a-list", "None", "str", "list", "typo", "tool-typo", "question-typo", "row-not-dict", "twice"],
)  # fmt: skip
def test_level1_any_shape_is_a_clear_message_not_an_exception(answers, fragment):
    verdict = check_level1(answers, None)
    assert not verdict.passed
    assert any(fragment in p for p in verdict.problems), verdict.report()


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


@pytest.mark.parametrize("given", ["B, D", "B,C", "B.D", "B:A", "B D", "Ｂ，Ｄ"])
def test_level1_an_insight_naming_two_choices_is_refused(given):
    verdict = check_level1(with_change(LEVEL1, ("insight_1_2",), given))
    assert not verdict.passed and len(verdict.problems) == 1, verdict.report()
    assert "つを挙げています。1つだけ選んでください" in verdict.problems[0]


@pytest.mark.parametrize("given", ["B: 文章で説明すると、区別がつかないから", "Ｂ", "b.", "（B）"])
def test_level1_an_insight_of_one_choice_with_words_after_it_passes(given):
    verdict = check_level1(with_change(LEVEL1, ("insight_1_2",), given))
    assert verdict.passed, verdict.report()


@pytest.mark.parametrize(
    "path, given",
    [
        (("①", "write_report", "pendingToolUse"), "write_report"),
        (("②", "read_notes", "pendingToolUse"), "read_notes"),
        (("②", "write_report", "pendingToolUse"), "toolu_03"),
        (("①", "write_report", "pendingToolUse"), {"id": "toolu_03", "name": "write_report", "input": {}}),
    ],
    ids=["name", "read-only-name", "id", "the-object"],
)
def test_level1_pending_call_named_by_the_call_itself_passes(path, given):
    verdict = check_level1(with_change(LEVEL1, path, given))
    assert verdict.passed, verdict.report()


def test_level1_pending_call_of_another_turn_is_wrong_with_the_disk_hint():
    verdict = check_level1(with_change(LEVEL1, ("②", "write_report", "pendingToolUse"), "read_notes"))
    assert len(verdict.problems) == 1 and "あなたの答え='read_notes'" in verdict.problems[0]
    assert "toolu_03 の tool_result はまだありません" in verdict.problems[0]


def test_level1_answers_wrapped_by_a_trailing_comma_are_unwrapped_with_a_note():
    sheet = with_change(LEVEL1, ("same_disk_1_2",), (True,))
    verdict = check_level1((sheet,))
    assert verdict.passed, verdict.report()
    assert "answers が1要素のタプルになっていたので（行末のカンマ）" in verdict.report()
    assert "checkpoint.json と effects.json は同じか が1要素のタプルになっていたので" in verdict.report()


@pytest.mark.parametrize("given", [0, 1, "1", 1.0])
def test_level1_zero_or_one_for_a_boolean_asks_for_true_or_false(given):
    verdict = check_level1(with_change(LEVEL1, ("③", "read_notes", "ledger_entry"), given))
    assert len(verdict.problems) == 1
    assert (
        "ではなく True か False で答えてください（0 / 1 ではなく、Python の True / False です）"
        in (verdict.problems[0])
    )


# ---------------------------------------------------------------------------------------------------------------
# Level 2 (a)(b): the diagnosis.

DIAGNOSIS = {
    "first_call": "save_effect",
    "recorded_result": None,
    "branch_after_crash": HIT,
    "report_exists": False,
    "tool_ran": False,
}


@pytest.mark.parametrize(
    "diagnosis",
    [
        DIAGNOSIS,
        {"first_call": "saveEffect", "recorded_result": "null", "branch_after_crash": "台帳ヒット、結果を再利用、再実行しない",
         "report_exists": "false", "tool_ran": False},
        {"First_Call": "ｓａｖｅ＿ｅｆｆｅｃｔ()", "recorded_result": "None", "branch_after_crash": "hit",
         "report_exists": False, "tool-ran": "False "},
    ],
    ids=["constants", "lesson-words", "full-width"],
)  # fmt: skip
def test_level2_right_diagnosis_written_differently_passes(diagnosis):
    verdict = check_level2_diagnosis(diagnosis)
    assert verdict.passed, verdict.report()


DIAGNOSIS_WRONG = [
    ("first_call", "execute_tool", "write_report が始まった瞬間の effects.json に toolu_03 がありました"),
    ("first_call", "toolImpls", "あなたの答え='toolImpls'"),
    ("first_call", "crash", "'crash' は選択肢にありません（選べるのは 'save_effect' / 'execute_tool'）"),
    (
        "recorded_result",
        "report.txt に 120 文字のレポートを書き出しました",
        "走る前に本物の結果は存在しうるか",
    ),
    ("recorded_result", "", "あなたの答え=''"),
    ("recorded_result", False, "あなたの答え=False"),
    (
        "recorded_result",
        "プレースホルダ",
        "その通りプレースホルダですが、ここでは Python の値で答えてください",
    ),
    ("branch_after_crash", IS_ERROR, "台帳に toolu_03 のレコードがあり"),
    ("branch_after_crash", RERUN, "reconcile が最初に調べるのは何か"),
    ("branch_after_crash", NO_RECONCILE, "あなたの答え='reconcile なし'"),
    ("report_exists", True, "report.txt を書くのは write_report の実行だけ"),
    ("tool_ran", True, "「完了」というログと、本当に実行されたか"),
    ("tool_ran", "yes", "あなたの答え='yes' — 見直す"),
]


@pytest.mark.parametrize(
    "key, value, fragment", DIAGNOSIS_WRONG, ids=[f"{k}={v!r}" for k, v, _ in DIAGNOSIS_WRONG]
)
def test_level2_wrong_diagnosis_fails_naming_the_mistake_without_the_answer(key, value, fragment):
    verdict = check_level2_diagnosis({**DIAGNOSIS, key: value})
    assert not verdict.passed and len(verdict.problems) == 1, verdict.report()
    assert fragment in verdict.problems[0], verdict.problems[0]
    assert "正しくは" not in verdict.report()


@pytest.mark.parametrize(
    "given", ["save_effect, execute_tool", "saveEffect → toolImpls", "save_effect か execute_tool"]
)
def test_level2_diagnosis_naming_both_calls_is_refused(given):
    verdict = check_level2_diagnosis({**DIAGNOSIS, "first_call": given})
    assert len(verdict.problems) == 1, verdict.report()
    assert "'save_effect' と 'execute_tool' の2つを挙げています。1つだけ選んでください" in verdict.problems[0]


def test_level2_diagnosis_recorded_result_as_the_whole_record_is_read_with_a_note():
    entry = {"name": "write_report", "result": None, "at": 1_700_000_000_000}
    verdict = check_level2_diagnosis(({**DIAGNOSIS, "recorded_result": entry},))
    assert verdict.passed, verdict.report()
    assert "台帳のレコード全体" in verdict.report() and "1要素のタプル" in verdict.report()
    wrong = check_level2_diagnosis({**DIAGNOSIS, "recorded_result": {**entry, "result": "完了"}})
    assert len(wrong.problems) == 1 and "あなたの答え='完了'" in wrong.problems[0]


def test_level2_diagnosis_answer_only_on_request():
    verdict = check_level2_diagnosis({**DIAGNOSIS, "branch_after_crash": IS_ERROR}, show_answers=True)
    assert "（正しくは '台帳ヒット、再利用'）" in verdict.problems[0]


@pytest.mark.parametrize(
    "diagnosis, fragment",
    [
        ([DIAGNOSIS], "diagnosis が dict ではなく list になっています"),
        (None, "diagnosis は dict（{...}）で書いてください（いまは NoneType: None）"),
        ("save_effect が先", "diagnosis は dict（{...}）で書いてください（いまは str"),
        ({**DIAGNOSIS, "first-cal": "save_effect"}, "diagnosis に知らないキー 'first-cal' があります（使えるキー: 'first_call'"),
    ],
    ids=["in-a-list", "None", "str", "typo"],
)  # fmt: skip
def test_level2_diagnosis_any_shape_is_a_clear_message(diagnosis, fragment):
    verdict = check_level2_diagnosis(diagnosis)
    assert any(fragment in p for p in verdict.problems), verdict.report()


def test_level2_diagnosis_called_without_the_cell_is_unanswered():
    verdict = check_level2_diagnosis()
    assert len(verdict.missing) == 5 and not verdict.problems


@pytest.mark.parametrize(
    "given",
    ["Bです", "答えは B", "選択肢B", "B — 区別がつかないから", "B（地点Aの保存だけでは区別できない）"],
)
def test_level1_an_insight_written_as_people_write_a_choice_passes(given):
    verdict = check_level1({**LEVEL1, "insight_1_2": given})
    assert verdict.passed, verdict.report()


def test_level1_the_right_letter_with_another_choices_reason_is_refused():
    reason = "B: " + INSIGHT_CHOICES["A"]
    verdict = check_level1({**LEVEL1, "insight_1_2": reason})
    assert not verdict.passed and "理由は別の選択肢のもの" in verdict.problems[0], verdict.report()


def test_level1_moments_written_in_kanji_are_the_moments():
    sheet = {{"①": "一", "②": "二", "③": "三"}.get(k, k): v for k, v in LEVEL1.items()}
    assert check_level1(sheet).passed
