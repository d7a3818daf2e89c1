"""How a prediction cell's answer is read (harness.lab.check_prediction): the ways people write a value are read as
that value, numbers and booleans stay apart, an answer that says two things is never right, and JavaScript's
literals can be typed as names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.lab import check_prediction

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("given", [True, "true", "はい", "yes"])
def test_a_boolean_is_never_a_count(given, capsys):
    assert not check_prediction(given, 1, "回数")


@pytest.mark.parametrize("given", [1, 0, "1", "0"])
def test_a_count_is_never_a_boolean(given, capsys):
    assert not check_prediction(given, True, "あるか") and not check_prediction(given, False, "あるか")


@pytest.mark.parametrize("given", ["1か2", "1回か2回", "2回ではない", "1→2", "1 or 2"])
def test_a_count_that_names_two_values_or_denies_one_is_not_right(given, capsys):
    assert not check_prediction(given, 2, "回数") and not check_prediction(given, 1, "回数")


@pytest.mark.parametrize(
    "given", ["ある…かも、ない？", "わからない", "消える？残る？", "たぶんある、いやない"]
)
def test_a_yes_no_said_both_ways_or_not_at_all_is_not_right(given, capsys):
    assert not check_prediction(given, False, "あるか") and not check_prediction(given, True, "あるか")


@pytest.mark.parametrize(
    "given, actual",
    [("消える", False), ("消えた", False), ("deleted", False), ("gone", False), ("it is removed", False),
     ("消えない", True), ("消えていない", True), ("消えてない", True), ("消えません", True), ("not deleted", True),
     ("wasn't removed", True), ("残らない", False), ("残っている", True)],
)  # fmt: skip
def test_the_words_for_gone_say_no_and_negated_say_yes(given, actual, capsys):
    """Whether a file is still there: 消える / deleted say no; 消えない / "not deleted" say it stays."""
    assert check_prediction(given, actual, "残っているか")
    assert not check_prediction(given, not actual, "残っているか")


@pytest.mark.parametrize(
    "given, actual",
    [("残らないことはない", True), ("なくならない", True), ("保存されないことはない", True), ("いいえ、保存される前に止まる", False),
     ("it doesn't stay", False), ("no, it's gone", False), ("違わない", True), ("never deleted", True)],
)  # fmt: skip
def test_a_yes_no_turned_round_by_each_negation_is_read_as_meant(given, actual, capsys):
    assert check_prediction(given, actual, "あるか") and not check_prediction(given, not actual, "あるか")


@pytest.mark.parametrize("given", ["いいえ、残ります", "はい、消えます", "付かないとは言い切れない"])
def test_a_yes_no_that_contradicts_itself_or_hedges_is_not_right(given, capsys):
    assert not check_prediction(given, False, "あるか") and not check_prediction(given, True, "あるか")


@pytest.mark.parametrize(
    "given, actual",
    [("通らない（400）", 400), ("0回、一度も", 0), ("two times", 2), ("it runs one time", 1),
     ("at-least-once なので2回", 2)],
)  # fmt: skip
def test_a_count_said_in_a_sentence_or_alone_in_parentheses_is_read(given, actual, capsys):
    assert check_prediction(given, actual, "回数") and not check_prediction(given, actual + 1, "回数")


@pytest.mark.parametrize("given", ["≒2", "約2回", "about 2", "roughly 2"])
def test_an_approximate_count_is_a_hedge(given, capsys):
    assert not check_prediction(given, 2, "回数")
    assert capsys.readouterr().out.startswith("△")


@pytest.mark.parametrize(
    "given", ["比例ではなく2乗", "2乗、比例ではない", "2乗, not 比例", "not 比例 but 2乗"]
)
def test_the_one_option_not_denied_is_the_answer(given, capsys):
    assert check_prediction(given, "2乗", "増え方") and not check_prediction(given, "比例", "増え方")


@pytest.mark.parametrize(
    "given, actual",
    [("一度だけ走る、二度目はない", 1), ("ターン数は1のまま、2にはならない", 1), ("just one line, not two", 1),
     ("毎ターン2回ずつなので合計6回です", 6), ("四百", 400), ("十二回", 12), ("ひとつ", 1), ("six times", 6)],
)  # fmt: skip
def test_a_count_beside_the_one_it_denies_or_in_kanji_kana_and_english_words_is_read(given, actual, capsys):
    assert check_prediction(given, actual, "回数") and not check_prediction(given, actual + 1, "回数")


def test_a_code_name_in_an_english_sentence_is_read_unless_another_value_is_named(capsys):
    assert check_prediction("It's read_notes, the first tool", "read_notes", "ツール")
    assert not check_prediction("write_report か None", "write_report", "ツール")
    assert check_prediction("same as ①: ledger miss with side effects → unknown", "unknown", "分岐")
    assert check_prediction("undecidable — ledger miss on a side-effecting tool", "unknown", "分岐",
                            accept=("判断不能", "undecidable"))  # fmt: skip


def test_a_worked_count_is_read_as_its_result(capsys):
    assert check_prediction("3ターン×2で6回", 6, "回数") and not check_prediction("3ターン×2で6回", 3, "回数")


def test_a_tool_name_one_letter_off_is_that_tool_and_no_other(capsys):
    assert check_prediction("read_note", "read_notes", "ツール")
    assert not check_prediction("read_note", "write_report", "ツール")


@pytest.mark.parametrize(
    "given, right", [("二乗に比例して増える", True), ("O(n^2) で増える", True), ("比例か2乗", False)]
)
def test_growth_said_in_a_sentence_is_read_and_a_choice_of_two_is_not(given, right, capsys):
    assert check_prediction(given, "2乗", "増え方") is right


@pytest.mark.parametrize("given, actual", [("write_report?", "write_report"), ("同じかも", True)])
def test_a_word_or_a_yes_no_said_as_a_question_or_with_kamo_is_not_committed(given, actual, capsys):
    assert not check_prediction(given, actual, "予想")
    assert capsys.readouterr().out.startswith("△")


@pytest.mark.parametrize("given", ["たぶん2", "maybe 2", "2回くらい?", "probably twice"])
def test_a_hedged_prediction_is_not_taken_and_is_not_called_wrong(given, capsys):
    assert not check_prediction(given, 2, "回数")
    shown = capsys.readouterr().out
    assert shown.startswith("△ 回数: ") and "言い切っていません" in shown and "実際は 2" in shown
    assert "✗" not in shown and "なぜ違った" not in shown


@pytest.mark.parametrize(
    "given, actual",
    [("１回だけ", 1), ("ゼロ", 0), ("一度も呼ばれない", 0), ("HTTP 400", 400), ("EXIT=1", 1), ("6+1=7", 7),
     ("twice", 2), ("いっかい", 1), ("二回（理由つき）", 2)],
)  # fmt: skip
def test_a_count_with_its_unit_or_in_words_is_read(given, actual, capsys):
    assert check_prediction(given, actual, "回数") and not check_prediction(given, actual + 1, "回数")


@pytest.mark.parametrize("given", ["write_report()", "write_report ツール", "write_report (toolu_03)"])
def test_a_tool_named_with_call_syntax_or_a_noun_after_it_is_read(given, capsys):
    assert check_prediction(given, "write_report", "ツール")
    assert not check_prediction(given, "read_notes", "ツール")
    assert not check_prediction("write_report か read_notes", "write_report", "ツール")


def test_javascript_literals_are_offered_to_a_notebook_that_imports_harness_lab():
    code = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "shell = start_ipython()\n"
        "shell.run_cell('import harness.lab')\n"
        "r = shell.run_cell('x = [false, null, true]')\n"
        "assert r.success and shell.user_ns['x'] == [False, None, True], r\n"
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_prediction_longer_than_one_value_is_sent_back_unread(capsys):
    assert not check_prediction("ない" * 1000, False, "残っているか")
    assert "予想が 2,000 文字あります" in capsys.readouterr().out


@pytest.mark.parametrize(
    "given, actual, wrong",
    [
        ("2、いや1回", 1, 2),
        ("一回、やっぱり二回", 2, 1),
        ("2, no wait, 1", 1, 2),
        ("3 actually 6", 6, 3),
        ("残る、いや消える", False, True),
        ("write_report、いや read_notes", "read_notes", "write_report"),
    ],
)
def test_a_first_answer_corrected_at_once_is_read_as_the_one_it_ends_on(given, actual, wrong, capsys):
    assert check_prediction(given, actual, "予想")
    assert not check_prediction(given, wrong, "予想")


def test_a_correction_into_a_hedge_is_still_a_hedge(capsys):
    assert not check_prediction("2回、いや1回かな", 1, "回数")


@pytest.mark.parametrize("given", ["read_notes じゃない", "read_notes ではない", "not read_notes"])
def test_a_name_said_only_to_deny_it_is_not_that_name(given, capsys):
    assert not check_prediction(given, "read_notes", "ツール")


@pytest.mark.parametrize("given, actual", [("無", False), ("有", True)])
def test_a_single_kanji_for_absent_or_present_is_read(given, actual, capsys):
    assert check_prediction(given, actual, "残っているか")
    assert not check_prediction(given, not actual, "残っているか")


@pytest.mark.parametrize(
    "given, actual",
    [
        ("0回、締めくくりが保存されていないので1回呼ばれる", None),
        ("1回。台帳にないから2回目はない", 1),
        ("台帳にないから2回", 2),
        ("保存されていないので1回", 1),
    ],
)
def test_a_negation_in_a_reason_denies_no_count_after_it(given, actual, capsys):
    for n in (0, 1, 2):
        assert check_prediction(given, n, "回数") is (n == actual)


@pytest.mark.parametrize(
    "given, right",
    [
        ("増える量そのものが大きくなっていく", True),
        ("足すたびに増える量がどんどん大きくなる", True),
        ("増える量が毎回ほぼ同じ", False),
        ("増える量が大きくはならない", False),
    ],
)
def test_growth_told_by_the_notebooks_own_test_is_read(given, right, capsys):
    assert check_prediction(given, "2乗", "増え方", accept=("二乗",)) is right


@pytest.mark.parametrize("given, actual", [("台帳ヒット 👍", "hit"), ("☺ 1回", 1)])
def test_an_emoji_beside_the_answer_changes_nothing(given, actual, capsys):
    from harness.lab import BRANCH_WORDS

    assert check_prediction(given, actual, "予想", accept=BRANCH_WORDS.get(actual, ()))


@pytest.mark.parametrize(
    "given, actual, wrong",
    [
        ("残ってへん", False, True),
        ("消えてへん", True, False),
        ("呼ばれへん", 0, 1),
        ("走らへんかった", 0, 1),
        ("ちゃう", False, True),
    ],
)
def test_kansai_negation_reads_as_it_does_in_the_exercise_judges(given, actual, wrong, capsys):
    assert check_prediction(given, actual, "予想")
    assert not check_prediction(given, wrong, "予想")


@pytest.mark.parametrize("given", ["必ず1回", "まず1回"])
def test_kanarazu_and_mazu_are_not_negations(given, capsys):
    assert check_prediction(given, 1, "回数")


@pytest.mark.parametrize(
    "given, actual",
    [("おんなじ", True), ("一緒", True), ("ちがう", False), ("きえてる", False), ("のこってる", True)],
)
def test_a_yes_no_word_in_hiragana_or_its_spoken_form_is_read(given, actual, capsys):
    assert check_prediction(given, actual, "予想")
    assert not check_prediction(given, not actual, "予想")


@pytest.mark.parametrize("given, actual, wrong", [("残ってねえ", False, True), ("呼ばれねえ", 0, 1)])
def test_tohoku_and_kanto_negation_is_read(given, actual, wrong, capsys):
    assert check_prediction(given, actual, "予想") and not check_prediction(given, wrong, "予想")


@pytest.mark.parametrize("given", ["そうだねえ、1回", "1回ですねえ"])
def test_a_sentence_final_nee_is_not_a_negation(given, capsys):
    assert check_prediction(given, 1, "回数")


@pytest.mark.parametrize(
    "given, actual",
    [
        ("1か2", 1),
        ("1回か2回", 1),
        ("read_notes か count_words", "read_notes"),
        ("1 or 2", 1),
        ("６回か７回", 6),
    ],
)
def test_two_values_offered_are_not_one_prediction_and_not_called_wrong(given, actual, capsys):
    """They were ✗ 「なぜ違ったのか」 although one of them was right: the learner is asked to commit to one."""
    assert not check_prediction(given, actual, "予想")
    shown = capsys.readouterr().out
    assert shown.startswith("△") and "なぜ違った" not in shown


@pytest.mark.parametrize("given", ["2件ではなく1件", "2ではなく1", "3回じゃなくて1回", "not 7 but 1"])
def test_a_count_said_after_the_one_it_denies_is_read(given, capsys):
    assert check_prediction(given, 1, "件数")
    assert capsys.readouterr().out.startswith("✓")
