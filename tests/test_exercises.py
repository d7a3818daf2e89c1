"""The exercise checks, both ways: right answers written in different ways pass; wrong answers a learner could
plausibly give fail with the message that names the mistake; no answer shape makes a check raise; learner code
that hangs, floods or deletes files is stopped, cut or kept away from the exercises folder."""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from harness import ToolError, execute_tool, load_effects, write_json_atomic
from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, NULL, PENDING_CALL, RERUN
from harness.exercises.fixcheck import MAX_RUNS
from harness.exercises.level1 import INSIGHT_CHOICES, blank_answers, check_level1, look
from harness.exercises.level2 import (
    check_level2_diagnosis,
    check_level2_fix,
    check_level2_repro,
    run_tool_uses_prod,
    show_repro,
)
from harness.exercises.repro import STEPS
from harness.exercises.sandbox import OUTPUT_LIMIT, SCRIPT_TIME_LIMIT_S, TIME_LIMIT_S
from harness.lab.process import run_child
from harness.ledger import save_effect
from harness.loop import run_tool_uses as lesson_run_tool_uses

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
    (("①", "read_notes", "ledger_entry"), "はい", ["'はい' は True / False ではありません"]),
    (("②", "write_report", "reconcile"), "再利用", ["'再利用' は選択肢にありません", "HIT", "NO_RECONCILE"]),
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
    ("tool_ran", "yes", "'yes' は True / False ではありません"),
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
    "given", ["save_effect, execute_tool", "saveEffect → toolImpls", "save_effect（execute_tool より前）"]
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


# ---------------------------------------------------------------------------------------------------------------
# Level 2 (c): the fix. Right fixes written differently, then wrong fixes a learner could write.


def tool_uses(content):
    return [b for b in content if b["type"] == "tool_use"]


def record(run, block, result):
    save_effect(run.effects_path, block["id"], {"name": block["name"], "result": result, "at": run.clock()})


def ok(block, output):
    return {"type": "tool_result", "tool_use_id": block["id"], "content": output}


def failed(block, err):
    return {
        "type": "tool_result",
        "tool_use_id": block["id"],
        "content": f"ツール実行エラー: {err}",
        "is_error": True,
    }


def faithful_port(run, content, turn=0):
    """The lesson's runToolUses, line by line: its catch (err) becomes except Exception (the issue's right fix)."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except Exception as err:  # noqa: BLE001 (the lesson's catch (err), on purpose)
            results.append(failed(block, err))
            continue
        try:
            record(run, block, output)
        except Exception:  # noqa: BLE001 (the lesson's catch (err), on purpose)
            print(f"[台帳の書き込みに失敗] tool_use_id={block['id']}", file=sys.stderr)
        results.append(ok(block, output))
    return results


def own_atomic_writer(run, content):
    """Tools from run.tool_impls, its own temp file + os.replace, the alert as an event."""
    out = []
    for block in content:
        if block.get("type") != "tool_use":
            continue
        try:
            result = run.tool_impls[block["name"]](run.workdir, block["input"])
        except ToolError as err:
            out.append(
                {"type": "tool_result", "tool_use_id": block["id"], "is_error": True, "content": str(err)}
            )
            continue
        try:
            effects = load_effects(run.effects_path)
            effects[block["id"]] = {"name": block["name"], "result": result, "at": run.clock()}
            tmp = str(run.effects_path) + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(effects, f, ensure_ascii=False)
            os.replace(tmp, run.effects_path)
        except OSError as err:
            run.emit("ledger_write_failed", id=block["id"], error=str(err))
        out.append({"type": "tool_result", "tool_use_id": block["id"], "content": result})
    return out


def logging_alert(run, content, turn=0):
    """write_json_atomic with load_effects, the alert through logging."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            effects = load_effects(run.effects_path)
            effects[block["id"]] = {"name": block["name"], "result": output, "at": run.clock()}
            write_json_atomic(run.effects_path, effects)
        except Exception:  # noqa: BLE001 (a learner's way, on purpose)
            logging.warning("台帳に書けませんでした")  # noqa: LOG015
        results.append(ok(block, output))
    return results


def results_in_reverse_order(run, content):
    """All tool_results returned, the last first: the API does not order the tool_results of one message."""
    return list(reversed(lesson_run_tool_uses(run, content)))


def content_as_text_blocks(run, content):
    """tool_result content in the API's other form, a list of text blocks; the alert through warnings."""
    import warnings

    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            record(run, block, output)
        except OSError as err:
            warnings.warn(f"台帳に書けませんでした: {block['id']} ({err})", stacklevel=1)
        results.append(
            {"type": "tool_result", "tool_use_id": block["id"], "content": [{"type": "text", "text": output}]}
        )
    return results


def lesson_tool_impls(run, content):
    """The lesson's toolImpls[block.name](block.input), as harness.TOOL_IMPLS; a failure without its detail."""
    import harness

    results = []
    for block in tool_uses(content):
        try:
            output = harness.TOOL_IMPLS[block["name"]](run.workdir, block["input"])
        except ToolError:
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block["id"],
                    "is_error": True,
                    "content": "ツールの実行に失敗しました",
                }
            )
            continue
        try:
            record(run, block, output)
        except OSError:
            print(f"[台帳の書き込みに失敗] tool_use_id={block['id']}", file=sys.stderr)
        results.append(ok(block, output))
    return results


def one_worker_pool(run, content):
    """A thread pool of one worker: the tools still run one after another, in order."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lesson_run_tool_uses, run, content).result()


def looks_up_the_ledger_first(run, content):
    """The reconcile-like three steps (look up, run if missing, record) in a normal run too."""
    results = []
    for block in tool_uses(content):
        hit = load_effects(run.effects_path).get(block["id"])
        if hit:
            results.append(ok(block, hit["result"]))
            continue
        results.extend(lesson_run_tool_uses(run, [block]))
    return results


RIGHT_FIXES = [
    lesson_run_tool_uses,
    faithful_port,
    own_atomic_writer,
    logging_alert,
    results_in_reverse_order,
    content_as_text_blocks,
    lesson_tool_impls,
    one_worker_pool,
    looks_up_the_ledger_first,
]  # fmt: skip


@pytest.mark.parametrize("fn", RIGHT_FIXES, ids=lambda f: f.__name__)
def test_level2_right_fix_written_differently_passes(fn):
    verdict = check_level2_fix(fn)
    assert verdict.passed, verdict.report()
    assert len(verdict.lines) == 7


def test_level2_fix_failure_without_the_error_text_passes_with_a_note():
    report = check_level2_fix(lesson_tool_impls).report()
    assert (
        "（メモ: 失敗した toolu_01 の tool_result の content（'ツールの実行に失敗しました'）に、例外のメッセージが"
        in report
    )
    assert "合否には影響しません" in report


def test_level2_fix_through_harness_tool_impls_without_fork_says_why_it_cannot_see_the_tools():
    verdict = check_level2_fix(lesson_tool_impls, use_fork=False)
    assert not verdict.passed
    assert (
        "チェックが用意したツールが一度も呼ばれませんでした（tool-runs.log も空です）" in verdict.problems[0]
    )
    assert "run.tool_impls[block['name']](run.workdir, block['input'])" in verdict.problems[0]


def prod_order(run, content):
    return run_tool_uses_prod(run, content)


def records_first_then_overwrites(run, content):
    results = []
    for block in tool_uses(content):
        record(run, block, "予定")
        output = execute_tool(run, block)
        record(run, block, output)
        results.append(ok(block, output))
    return results


def records_none(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        record(run, block, None)
        results.append(ok(block, output))
    return results


def never_records(run, content):
    return [ok(block, execute_tool(run, block)) for block in tool_uses(content)]


def calls_the_tool_twice_then_records(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        record(run, block, execute_tool(run, block))
        results.append(ok(block, output))
    return results


def writes_the_ledger_in_place(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        effects = load_effects(run.effects_path)
        effects[block["id"]] = {"name": block["name"], "result": output, "at": run.clock()}
        with open(run.effects_path, "w", encoding="utf-8") as f:
            json.dump(effects, f, ensure_ascii=False)
        results.append(ok(block, output))
    return results


def removes_then_writes(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        effects = load_effects(run.effects_path)
        effects[block["id"]] = {"name": block["name"], "result": output, "at": run.clock()}
        if run.effects_path.exists():
            os.remove(run.effects_path)
        write_json_atomic(run.effects_path, effects)
        results.append(ok(block, output))
    return results


def keyed_by_tool_name(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        save_effect(
            run.effects_path, block["name"], {"name": block["name"], "result": output, "at": run.clock()}
        )
        results.append(ok(block, output))
    return results


def overwrites_the_whole_ledger(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        write_json_atomic(
            run.effects_path, {block["id"]: {"name": block["name"], "result": output, "at": run.clock()}}
        )
        results.append(ok(block, output))
    return results


def records_the_failure(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            record(run, block, f"ツール実行エラー: {err}")
            results.append(failed(block, err))
            continue
        record(run, block, output)
        results.append(ok(block, output))
    return results


def lets_tool_errors_escape(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        record(run, block, output)
        results.append(ok(block, output))
    return results


def one_try_for_tool_and_ledger(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
            record(run, block, output)
        except Exception as err:  # noqa: BLE001 (the lesson's catch (err), on purpose)
            results.append(failed(block, err))
            continue
        results.append(ok(block, output))
    return results


def swallows_the_ledger_failure(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            record(run, block, output)
        except OSError:
            pass
        results.append(ok(block, output))
    return results


def bare_except_catches_the_kill(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except:  # noqa: E722
            results.append(failed(block, "失敗"))
            continue
        record(run, block, output)
        results.append(ok(block, output))
    return results


def returns_inside_the_loop(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            return results
        try:
            record(run, block, output)
        except OSError as err:
            print("台帳に書けません", err, file=sys.stderr)
        results.append(ok(block, output))
        return results


def records_the_tool_result(run, content):
    results = []
    for block in tool_uses(content):
        result = ok(block, execute_tool(run, block))
        record(run, block, result)
        results.append(result)
    return results


def prepares_only_the_side_effect(run, content):
    results = []
    for block in tool_uses(content):
        if block["name"] == "write_report":
            record(run, block, "書き出し中")
        output = execute_tool(run, block)
        record(run, block, output)
        results.append(ok(block, output))
    return results


def answers_done_to_the_model(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        record(run, block, output)
        results.append(ok(block, "完了"))
    return results


def writes_beside_the_notebook(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        save_effect(
            Path("effects.json"), block["id"], {"name": block["name"], "result": output, "at": run.clock()}
        )
        results.append(ok(block, output))
    return results


def is_error_without_the_error(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError:
            results.append(
                {"type": "tool_result", "tool_use_id": block["id"], "content": "", "is_error": True}
            )
            continue
        record(run, block, output)
        results.append(ok(block, output))
    return results


def seconds_as_at(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        save_effect(
            run.effects_path, block["id"], {"name": block["name"], "result": output, "at": time.time()}
        )
        results.append(ok(block, output))
    return results


async def async_port(run, content):
    return lesson_run_tool_uses(run, content)


def forgets_to_return(run, content):
    for block in tool_uses(content):
        record(run, block, execute_tool(run, block))


def old_execute_tool_call(run, content, turn=0):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run.workdir, block["name"], block["id"], block["input"])
        record(run, block, output)
        results.append(ok(block, output))
    return results


def records_in_finally(run, content):
    results = []
    for block in tool_uses(content):
        output = None
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        finally:
            record(run, block, output)
        results.append(ok(block, output))
    return results


LEDGER_IN_MEMORY: dict = {}


def keeps_the_ledger_in_memory(run, content):
    """Right in one process; after a kill, the resumed process starts with an empty dict and overwrites the file."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        LEDGER_IN_MEMORY[block["id"]] = {"name": block["name"], "result": output, "at": run.clock()}
        try:
            write_json_atomic(run.effects_path, LEDGER_IN_MEMORY)
        except OSError as err:
            print("台帳エラー", err, file=sys.stderr)
        results.append(ok(block, output))
    return results


def records_after_all_tools(run, content):
    """Executes every block first and records them all afterwards."""
    done, results = [], []
    for block in tool_uses(content):
        try:
            done.append((block, execute_tool(run, block)))
        except ToolError as err:
            results.append(failed(block, err))
    for block, output in done:
        try:
            record(run, block, output)
        except OSError:
            print("台帳エラー", file=sys.stderr)
        results.append(ok(block, output))
    return results


def chatty_but_swallows_the_ledger_failure(run, content):
    print("run_tool_uses:", [b.get("id") for b in content])
    return swallows_the_ledger_failure(run, content)


def swallows_and_prints_unrelated_debug(run, content):
    """except Exception: pass around the ledger, and a debug line after every block (stderr, no id, no 台帳)."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            record(run, block, output)
        except Exception:  # noqa: BLE001, S110 (a learner's way, on purpose)
            pass
        print("debug: one more result", file=sys.stderr)
        results.append(ok(block, output))
    return results


def alerts_on_stdout(run, content):
    """The lesson's alert text, printed to stdout instead of stderr."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            record(run, block, output)
        except OSError:
            print(f"[台帳の書き込みに失敗] tool_use_id={block['id']}")
        results.append(ok(block, output))
    return results


def drops_text_blocks_from_content(run, content):
    content[:] = [b for b in content if b["type"] == "tool_use"]
    return lesson_run_tool_uses(run, content)


def appends_a_text_block(run, content):
    results = lesson_run_tool_uses(run, content)
    content.append({"type": "text", "text": "ツールを実行しました"})
    return results


def keeps_results_on_the_blocks(run, content):
    results = lesson_run_tool_uses(run, content)
    for block, result in zip(tool_uses(content), results):
        block["result"] = result["content"]
    return results


def thread_pool_without_a_lock(run, content):
    from concurrent.futures import ThreadPoolExecutor

    def one(block):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            return failed(block, err)
        try:
            record(run, block, output)
        except OSError:
            print(f"[台帳の書き込みに失敗] {block['id']}", file=sys.stderr)
        return ok(block, output)

    with ThreadPoolExecutor() as pool:
        return list(pool.map(one, tool_uses(content)))


def runs_in_reverse_order(run, content):
    """The blocks run last first; the results are put back in the original order."""
    blocks = tool_uses(content)
    done = {r["tool_use_id"]: r for r in lesson_run_tool_uses(run, list(reversed(blocks)))}
    return [done[b["id"]] for b in blocks]


def clock_not_called(run, content):
    """at = run.clock (the function, not its value); the failed write swallowed with an alert."""
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            save_effect(
                run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock}
            )
        except Exception:  # noqa: BLE001 (the lesson's catch (err), on purpose)
            print(f"[台帳の書き込みに失敗] tool_use_id={block['id']}", file=sys.stderr)
        results.append(ok(block, output))
    return results


def records_only_side_effects(run, content):
    results = []
    for block in tool_uses(content):
        output = execute_tool(run, block)
        if block["name"] not in ("read_notes", "count_words"):
            record(run, block, output)
        results.append(ok(block, output))
    return results


def records_under_the_last_id(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            save_effect(
                run.effects_path,
                content[-1]["id"],
                {"name": block["name"], "result": output, "at": run.clock()},
            )
        except OSError:
            print(f"[台帳の書き込みに失敗] tool_use_id={block['id']}", file=sys.stderr)
        results.append(ok(block, output))
    return results


def raises_keyboard_interrupt(run, content):
    if any(b["name"] == "write_report" for b in tool_uses(content)):
        raise KeyboardInterrupt
    return lesson_run_tool_uses(run, content)


def exits_the_process(run, content):
    results = lesson_run_tool_uses(run, content)
    if any(b["name"] == "write_report" for b in tool_uses(content)):
        sys.exit(1)
    return results


def removes_the_workdir(run, content):
    results = lesson_run_tool_uses(run, content)
    shutil.rmtree(run.workdir)
    return results


def thread_per_block(run, content):
    """A thread for each block, joined: a kill inside a thread does not stop the function."""
    results = {}

    def one(block):
        results[block["id"]] = lesson_run_tool_uses(run, [block])[0]

    threads = [threading.Thread(target=one, args=(b,)) for b in tool_uses(content)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[b["id"]] for b in tool_uses(content)]


def alert_event_naming_nothing(run, content):
    results = []
    for block in tool_uses(content):
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append(failed(block, err))
            continue
        try:
            record(run, block, output)
        except OSError:
            run.emit("alert", msg="failed")
        results.append(ok(block, output))
    return results


def unfinished_for_write_report(run, content):
    if any(b["name"] == "write_report" for b in tool_uses(content)):
        raise NotImplementedError("write_report はあとで")
    return lesson_run_tool_uses(run, content)


WRONG_FIXES = [
    (prod_order, "read_notes（toolu_01）の実行が始まった瞬間、まだ何も実行していないのに effects.json にはすでに toolu_01 がありました。実行が先、記録が後です"),
    (records_first_then_overwrites, "実行が始まった瞬間、まだ何も実行していないのに effects.json にはすでに toolu_01"),
    (prepares_only_the_side_effect, "write_report（toolu_03）の実行が始まった瞬間"),
    (records_none, "台帳の toolu_01 に result=None（プレースホルダ）が記録されています"),
    (never_records, "作業フォルダに effects.json がありません（台帳に何も記録していません）"),
    (calls_the_tool_twice_then_records, "toolu_01（read_notes）が 2 回実行されました（tool-runs.log: read_notes toolu_01 / read_notes toolu_01"),
    (writes_the_ledger_in_place, "effects.json を書き込み用に直接開きました（一時ファイル＋rename ではありません）"),
    (removes_then_writes, "effects.json をいったん消して（または別名に移して）から書いています"),
    (keyed_by_tool_name, "台帳のキーがツール名 ['count_words', 'read_notes', 'write_report'] です。キーはその呼び出しの tool_use_id"),
    (overwrites_the_whole_ledger, "['toolu_01', 'toolu_02'] の記録は一度台帳に書かれたのに、通常の実行のあとには消えていました（いまの台帳: ['toolu_03']）。前の記録を消して上書きしています"),
    (records_the_failure, "write_report が失敗する（ToolError）: 失敗した toolu_03 を台帳に記録しています"),
    (lets_tool_errors_escape, "write_report が失敗（ToolError）したとき、例外が run_tool_uses の外まで出てループが止まりました"),
    (one_try_for_tool_and_ledger, "台帳の書き込みが失敗したとき、write_report の tool_result を is_error にしています"),
    (swallows_the_ledger_failure, "write_report（toolu_03）のあと台帳の書き込みが失敗しましたが、何も知らせずに握りつぶしています"),
    (bare_except_catches_the_kill, "あなたの関数はそれを捕まえて続行しました。本物のキルは捕まえられません"),
    (returns_inside_the_loop, "返った tool_result の tool_use_id は ['toolu_p1'] でした（ループの途中で return していませんか）"),
    (records_the_tool_result, "台帳の toolu_01 の result が、ツールが返した本物の結果と違います"),
    (answers_done_to_the_model, "toolu_01 の tool_result の content が、ツールが返した結果と違います（'完了'）"),
    (writes_beside_the_notebook, "effects.json を作業フォルダではなくカレントフォルダに書いています"),
    (is_error_without_the_error, "失敗した toolu_03 の tool_result の content が空です（''）。is_error だけではモデルに何が起きたのか伝わりません"),
    (seconds_as_at, "toolu_01 の at が 0 以上の整数ではありません"),
    (async_port, "run_tool_uses が async def です"),
    (forgets_to_return, "run_tool_uses が list ではなく NoneType を返しました（return results を忘れていませんか）"),
    (old_execute_tool_call, "execute_tool は execute_tool(run, block) で呼びます"),
    (records_in_finally, "失敗した toolu_03 を台帳に記録しています"),
    (keeps_the_ledger_in_memory, "--resume のあとに実行した toolu_01（read_notes）の記録が、最後には台帳にありません"),
    (records_after_all_tools, "toolu_p1 の記録を、次のツール toolu_p2 を実行するまで後回しにしています"),
    (chatty_but_swallows_the_ledger_failure, "write_report（toolu_03）のあと台帳の書き込みが失敗しましたが、何も知らせずに握りつぶしています"),
    (swallows_and_prints_unrelated_debug, "そのあとの知らせ（'debug: one more result'）は、どの呼び出し（tool_use_id）の記録が失敗したのかを言っていません"),
    (alerts_on_stdout, "標準エラーにもアラートのイベントにも知らせがありませんでした（標準出力に出た行: '[台帳の書き込みに失敗] tool_use_id=toolu_03'）"),
    (drops_text_blocks_from_content, "run_tool_uses が受け取った content を書き換えました（text ブロックが消えました）。content はモデルの応答そのもので、すでに messages に入っている"),
    (appends_a_text_block, "content を書き換えました（text ブロックが増えました）"),
    (keeps_results_on_the_blocks, "content を書き換えました（toolu_01 のブロックに 'result' が足されました）"),
    (thread_pool_without_a_lock, "toolu_p1 と toolu_p2 のツールが同時に（並行して）実行されました。レッスンの runToolUses は tool_use ブロックを1つずつ順に実行します"),
    (runs_in_reverse_order, "tool_use ブロックを content とは違う順（toolu_p2 → toolu_p1）で実行しました"),
    (clock_not_called, "台帳への書き込み（save_effect）がエラーになりました: TypeError: Object of type function is not JSON serializable。台帳に書けていません — 記録する値に関数そのものが入っていませんか（たとえば at に"),
    (records_only_side_effects, "台帳に ['toolu_01', 'toolu_02']（read_notes, count_words）の記録が一度もありませんでした。読み取り専用のツールも記録します"),
    (records_under_the_last_id, "toolu_p1 の結果が、まだ実行していない toolu_p2 のキーで台帳に書かれていました"),
    (raises_keyboard_interrupt, "3 回目の呼び出し（write_report のターン）で あなたのコードが KeyboardInterrupt を起こしました"),
    (exits_the_process, "3 回目の呼び出し（write_report のターン）で あなたのコードが sys.exit(1) でプロセスを終わらせようとしました"),
    (removes_the_workdir, "作業フォルダ（run.workdir）がなくなりました。あなたのコードが消していませんか"),
    (thread_per_block, "それはあなたの関数が始めた別のスレッドの中で起き、関数は止まらずに続きました。本物のキルはプロセス全体を止めます"),
    (alert_event_naming_nothing, "そのあとの知らせ（\"alert {'msg': 'failed'}\"）は、どの呼び出し（tool_use_id）の記録が失敗したのかを言っていません"),
    (unfinished_for_write_report, "3 回目の呼び出し（write_report のターン）で NotImplementedError: write_report はあとで"),
]  # fmt: skip


@pytest.mark.parametrize("fn, fragment", WRONG_FIXES, ids=[f.__name__ for f, _ in WRONG_FIXES])
def test_level2_wrong_fix_fails_naming_the_mistake(fn, fragment):
    verdict = check_level2_fix(fn)
    assert not verdict.passed and len(verdict.problems) == 1, verdict.report()
    assert fragment in verdict.problems[0], verdict.report()
    assert "/tmp" not in verdict.report() and "チェック自体が失敗" not in verdict.report()


def test_level2_fix_names_what_it_did_not_check_after_the_first_problem():
    report = check_level2_fix(records_the_failure).report()
    assert "✓ 通常の実行（クラッシュなし）" in report
    assert (
        "… write_report のあと台帳の書き込みが失敗する（ディスクがいっぱい）: まだ確かめていません" in report
    )
    assert "未確認 2" in report


def test_level2_fix_shows_the_lesson_code_only_on_request():
    assert "def run_tool_uses" not in check_level2_fix(records_none).report()
    assert "def run_tool_uses(run, content" in check_level2_fix(records_none, show_answers=True).report()


@pytest.mark.parametrize("given", [Ellipsis, None])
def test_level2_missing_fix_is_unanswered(given):
    verdict = check_level2_fix(given)
    assert verdict.missing and not verdict.problems


def test_level2_fix_called_without_the_cell_is_unanswered():
    verdict = check_level2_fix()  # no run_tool_uses_fixed in this module: like a deleted cell
    assert verdict.missing and not verdict.problems


def test_level2_unwritten_fix_is_unanswered_not_wrong():
    def stub(run, content):
        raise NotImplementedError("ここに書く")

    verdict = check_level2_fix(stub)
    assert verdict.missing == ["修正版 run_tool_uses"] and not verdict.problems
    assert "NotImplementedError" in verdict.report()


@pytest.mark.parametrize(
    "given, fragment",
    [
        (42, "run_tool_uses が関数ではありません（42）"),
        ("run_tool_uses", "run_tool_uses が関数ではありません"),
        (
            lambda content: [],
            "run_tool_uses は (run, content) の2つの引数で呼ばれます（いまの引数: (content)）",
        ),
    ],
    ids=["int", "str", "one-argument"],
)
def test_level2_fix_of_another_shape_is_a_clear_message(given, fragment):
    verdict = check_level2_fix(given)
    assert fragment in verdict.problems[0], verdict.report()


def endless_loop(run, content):
    while True:
        pass


def test_level2_fix_with_an_endless_loop_is_stopped_at_its_time_limit():
    start = time.monotonic()
    verdict = check_level2_fix(endless_loop, time_limit=1)
    assert time.monotonic() - start < 5
    assert verdict.problems == [
        "✗ 通常の実行（クラッシュなし）: 1 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました"
    ]
    assert "その1回ごとに 1 秒で打ち切ります。無限ループでもカーネルは止まりません）" in verdict.report()


def hangs_when_resumed(run, content):
    """Fine in one go; loops forever in the resumed process (read_notes ran twice: killed once, then re-run)."""
    log = run.workdir / "tool-runs.log"
    if log.exists() and log.read_text(encoding="utf-8").count("read_notes") > 1:
        while True:
            pass
    return lesson_run_tool_uses(run, content)


def test_level2_fix_hanging_in_the_resume_is_stopped_and_named():
    verdict = check_level2_fix(hangs_when_resumed, time_limit=1)
    expected = "--resume が 1 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました"
    assert verdict.problems == [f"✗ read_notes が始まった瞬間に落として --resume: {expected}"]


def test_level2_fix_without_fork_passes_a_right_fix_and_says_what_it_could_not_check():
    verdict = check_level2_fix(faithful_port, use_fork=False)
    assert verdict.passed, verdict.report()
    assert "この環境では fork が使えないので" in verdict.report()
    assert not check_level2_fix(calls_the_tool_twice_then_records, use_fork=False).passed


def test_level2_fix_without_fork_still_keeps_the_time_limit_and_says_the_thread_runs_on():
    stop = threading.Event()

    def hangs(run, content):
        stop.wait(30)
        return lesson_run_tool_uses(run, content)

    try:
        verdict = check_level2_fix(hangs, time_limit=0.5, use_fork=False)
    finally:
        stop.set()
    assert "0.5 秒以内に終わりませんでした" in verdict.problems[0]
    assert "カーネルを再起動してください" in verdict.problems[0]


def test_level2_fix_printing_50_mb_is_cut_and_still_judged():
    printed = []

    def floods(run, content):
        if not printed:
            printed.append(1)
            print("x" * 50_000_000)
        return lesson_run_tool_uses(run, content)

    verdict = check_level2_fix(floods)
    assert verdict.passed, verdict.report()[:2000]
    assert f"50,000,001 文字あったので、表示するのは最初の {OUTPUT_LIMIT:,} 文字まで" in verdict.report()
    assert len(verdict.report()) < 5000


def test_level2_fix_shows_what_a_failing_function_printed_cut():
    def talks(run, content):
        print("デバッグ: " + "y" * 10_000)
        return records_none(run, content)

    report = check_level2_fix(talks).report()
    assert "この実行であなたの関数が出力した内容、30,021 文字" in report
    assert len(report) < OUTPUT_LIMIT + 3000


def test_level2_fix_changes_nothing_in_the_kernel():
    before = dict(sys.modules["harness.tools"].__dict__)

    def meddles(run, content):
        import harness.tools

        harness.tools.READ_ONLY = frozenset()
        os.chdir("/")
        return lesson_run_tool_uses(run, content)

    cwd = os.getcwd()
    assert check_level2_fix(meddles).passed
    assert sys.modules["harness.tools"].READ_ONLY == before["READ_ONLY"] and os.getcwd() == cwd


# ---------------------------------------------------------------------------------------------------------------
# Level 2 (d): the reproduction script, run as real processes in a scratch copy.


def repro_variant(tmp_path, *swaps) -> Path:
    text = SOLUTION_SCRIPT.read_text(encoding="utf-8")
    for old, new in swaps:
        assert old in text, old
        text = text.replace(old, new, 1)
    script = tmp_path / "level2_repro.py"
    script.write_text(text, encoding="utf-8")
    return script


COUNT = "        self.passes += 1\n        if self.passes == self.target:\n"
WRONG_BODY = (
    "            crash.point()\n            output = execute_tool(run, block)\n"
    '            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})\n'
)
FIXED_CRASH = (
    "            crash.point()\n            output = execute_tool(run, block)\n            save_effect("
)
TARGET = 'int(os.environ.get("REPRO_CRASH", "0"))'


@pytest.mark.parametrize(
    "swaps",
    [
        [],
        [(COUNT, "        self.passes += 1\n        if self.passes == self.target:\n            os._exit(137)\n")],
        [
            ("import os\n", "import os\nimport signal\n"),
            (COUNT, ("        self.passes += 1\n        if self.passes == self.target:\n"
                     "            os.kill(os.getpid(), signal.SIGKILL)\n")),
        ],
        [(TARGET, 'int(os.environ["REPRO_CRASH"]) if "REPRO_CRASH" in os.environ else None')],
    ],
    ids=["solution", "os-exit-137", "real-sigkill", "no-default"],
)  # fmt: skip
def test_level2_right_repro_written_differently_passes(tmp_path, swaps):
    verdict = check_level2_repro(repro_variant(tmp_path, *swaps))
    assert verdict.passed, verdict.report()


REPRO_WRONG = [
    ("crash-after-tool", [(WRONG_BODY, WRONG_BODY.replace("            crash.point()\n", "", 1).replace("            results", "            crash.point()\n            results")),
                          (FIXED_CRASH, "            output = execute_tool(run, block)\n            crash.point()\n            save_effect(")],
     "REPRO_CRASH=2 で wrong: クラッシュ地点が count_words の実行より後にあります"),
    ("ignores-N", [(TARGET, "3")], "REPRO_CRASH=2 で wrong: REPRO_CRASH=2 なのに、落ちたのは 3 回目のツール呼び出し（write_report）の前でした"),
    ("off-by-one", [(COUNT, "        self.passes += 1\n        if self.passes == self.target + 1:\n")], "REPRO_CRASH=2 なのに、落ちたのは 3 回目"),
    ("counts-after", [(COUNT, "        if self.passes == self.target:\n            self.passes += 1\n"), ("            raise SimulatedCrash", "            raise SimulatedCrash")],
     "REPRO_CRASH=2 で wrong: 疑似クラッシュせず、最後まで走りました（終了コード 0）"),
    ("only-write-report", [(TARGET, '3 if os.environ.get("REPRO_CRASH") else 0')], "REPRO_CRASH=2 なのに、落ちたのは 3 回目のツール呼び出し（write_report）"),
    ("orders-swapped", [('make_wrong(crash) if order == "wrong"', 'make_fixed(crash) if order == "wrong"')],
     "REPRO_CRASH=2 で wrong: 誤った順序なのに、クラッシュ時の台帳に toolu_02 がありません"),
    ("crash-before-the-record", [(WRONG_BODY, WRONG_BODY.replace("            crash.point()\n", "", 1)),
                                 ("            save_effect(\n                run.effects_path, block[\"id\"], {\"name\": block[\"name\"], \"result\": None",
                                  "            crash.point()\n            save_effect(\n                run.effects_path, block[\"id\"], {\"name\": block[\"name\"], \"result\": None")],
     "誤った順序なのに、クラッシュ時の台帳に toolu_02 がありません"),
    ("no-crash-point-in-wrong", [(WRONG_BODY, WRONG_BODY.replace("            crash.point()\n", "", 1))], "REPRO_CRASH=2 で wrong: 疑似クラッシュせず、最後まで走りました（終了コード 0）"),
    ("crash-not-caught", [("    except SimulatedCrash as err:", "    except KeyError as err:")], "REPRO_CRASH=2 で wrong: Traceback で終わりました（最後の行: harness.crash.SimulatedCrash: REPRO_CRASH=2 で疑似キル）"),
    ("crash-exits-0", [("        sys.exit(137)", "        sys.exit(0)")], "REPRO_CRASH=2 で wrong: 疑似クラッシュは起きました（[kill] の行があります）が、終了コードが 0 でした"),
    ("fixed-records-first", [(FIXED_CRASH, "            save_effect(run.effects_path, block[\"id\"], {\"name\": block[\"name\"], \"result\": None, \"at\": 0})\n" + FIXED_CRASH)],
     "REPRO_CRASH=2 で fixed: 修正した順序なのに、クラッシュ時の台帳に toolu_02 があります"),
    ("placeholder-string", [('"result": None, "at": run.clock()', '"result": "実行中", "at": run.clock()')], "誤った順序の台帳の toolu_02 の result が '実行中' でした"),
    ("crashes-without-N", [(TARGET, 'int(os.environ.get("REPRO_CRASH", "3"))')], "REPRO_CRASH なしで wrong: 最後まで走りませんでした（終了コード 137"),
    ("ignores-workdir", [("Run(workdir)", 'Run("repro-work")')], "チェックは作業フォルダとして 'work-wrong-2' を渡しましたが、スクリプトは repro-work/ に書きました"),
    ("hardcodes-work", [("order, workdir = sys.argv[1], sys.argv[2]", 'order, workdir = sys.argv[1], "work"')], "チェックは作業フォルダとして 'work-wrong-2' を渡しましたが、スクリプトは work/ に書きました"),
    ("keyed-by-tool-name", [('                run.effects_path, block["id"], {"name": block["name"], "result": None',
                             '                run.effects_path, block["name"], {"name": block["name"], "result": None')],
     "REPRO_CRASH=2 で wrong: 台帳のキーがツール名 ['count_words', 'read_notes'] です。キーは tool_use_id です"),
    ("ledger-beside-the-script", [('                run.effects_path, block["id"], {"name": block["name"], "result": None',
                                   '                Path("effects.json"), block["id"], {"name": block["name"], "result": None'),
                                  ("import sys\n", "import sys\nfrom pathlib import Path\n")],
     "REPRO_CRASH=2 で wrong: effects.json を作業フォルダ（2つ目の引数）ではなく、スクリプトを実行したフォルダに書いています"),
    ("key-error", [("    crash = Crash()\n", "    crash = Crash()\n    {}['x']\n")],
     "REPRO_CRASH=2 で wrong: スクリプトがエラーで終わりました（終了コード 1、最後の行: level2_repro.py の 64 行目で KeyError: 'x'）"),
    ("runtime-error-as-crash", [('raise SimulatedCrash(f"REPRO_CRASH={self.target}")', "raise RuntimeError('crash')")],
     "level2_repro.py の 25 行目で RuntimeError: crash。クラッシュ地点 point の中で出た例外です: 疑似クラッシュは SimulatedCrash を投げ"),
    ("syntax-error", [("    crash = Crash()\n", "    crash = Crash(\n")], "REPRO_CRASH=2 で wrong: スクリプトがエラーで終わりました（終了コード 1、最後の行: level2_repro.py の 63 行目で SyntaxError: '(' was never closed"),
]  # fmt: skip


@pytest.mark.parametrize("name, swaps, fragment", REPRO_WRONG, ids=[n for n, _, _ in REPRO_WRONG])
def test_level2_wrong_repro_fails_naming_the_mistake(tmp_path, name, swaps, fragment):
    verdict = check_level2_repro(repro_variant(tmp_path, *swaps))
    assert not verdict.passed and len(verdict.problems) == 1, verdict.report()
    assert fragment in verdict.problems[0], verdict.report()


def test_level2_repro_skeleton_is_unanswered_naming_every_todo(tmp_path):
    shutil.copy(ROOT / "exercises" / "level2_repro.py", tmp_path / "level2_repro.py")
    verdict = check_level2_repro(tmp_path / "level2_repro.py")
    assert verdict.missing and not verdict.problems
    expected = "TODO 1: Crash.point、TODO 2: run_tool_uses_wrong、TODO 3: run_tool_uses_fixed がまだです"
    assert expected in verdict.report()


def test_level2_repro_given_the_notebook_says_it_wants_the_script(tmp_path):
    notebook = tmp_path / "level2_reversed_ledger.ipynb"
    notebook.write_text("{}", encoding="utf-8")
    verdict = check_level2_repro(notebook)
    expected = (
        "✗ level2_reversed_ledger.ipynb は Python スクリプト（.py）ではありません。TODO を埋めた level2_repro.py を"
        "渡してください"
    )
    assert verdict.problems == [expected]


def test_show_repro_prints_the_kill_line_once_and_the_script_error(tmp_path, capsys, monkeypatch):
    repro_variant(tmp_path, ("        sys.exit(137)", "        sys.exit(0)"))
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert out.count("[kill] REPRO_CRASH=3 で疑似キル") == 2  # once for each order
    repro_variant(tmp_path, ("    crash = Crash()\n", "    crash = Crash()\n    {}['x']\n"))
    show_repro("level2_repro.py")
    assert "level2_repro.py の 64 行目で KeyError: 'x'" in capsys.readouterr().out


@pytest.mark.parametrize("given", [None, Ellipsis, 42, "missing.py", "."])
def test_level2_repro_of_another_shape_is_a_clear_message(tmp_path, given):
    verdict = check_level2_repro(given)
    assert not verdict.passed and (verdict.missing or verdict.problems)


def test_level2_repro_with_an_endless_loop_is_stopped_at_its_time_limit(tmp_path):
    script = repro_variant(tmp_path, ("def main():\n", "def main():\n    while True:\n        pass\n"))
    start = time.monotonic()
    verdict = check_level2_repro(script, time_limit=1)
    assert time.monotonic() - start < 5
    assert verdict.problems == [
        "✗ REPRO_CRASH=2 で wrong: 1 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました"
    ]


def test_level2_repro_printing_50_mb_is_cut(tmp_path, capsys, monkeypatch):
    script = repro_variant(tmp_path, ("def main():\n", "def main():\n    print('x' * 50_000_000)\n"))
    assert check_level2_repro(script).passed
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert f"バイトあったので、最初の {OUTPUT_LIMIT:,} 文字だけ表示しました" in out
    assert len(out) < 4 * OUTPUT_LIMIT + 4000


def test_a_repro_script_deleting_its_folder_cannot_touch_the_exercises(tmp_path, monkeypatch):
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    (exercises / "level1_crash_moments.ipynb").write_text("{}", encoding="utf-8")
    cleaner = "def main():\n    for name in os.listdir('.'):\n        if os.path.isfile(name):\n            os.remove(name)\n"
    script = repro_variant(exercises, ("def main():\n", cleaner))
    assert check_level2_repro(script).passed
    monkeypatch.chdir(exercises)
    show_repro("level2_repro.py")
    assert sorted(p.name for p in exercises.iterdir()) == [
        "_work",
        "level1_crash_moments.ipynb",
        "level2_repro.py",
    ]


def test_show_repro_resumes_both_folders_to_show_the_contrast(tmp_path, capsys, monkeypatch):
    shutil.copy(SOLUTION_SCRIPT, tmp_path / "level2_repro.py")
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert "$ cd _work/repro/wrong && REPRO_CRASH=3 python level2_repro.py wrong work" in out
    assert "$ python -m harness --workdir _work/repro/wrong/work --resume" in out
    assert "[done] report.txt にレポートを書き出しました。タスク完了。" in out
    assert "（インシデントの再現）" in out
    assert "$ python -m harness --workdir _work/repro/fixed/work --resume" in out
    assert "[done] write_report の実行状態が不明です。report.txt を確認してください。" in out
    assert "is_error で「不明」と正直に返しました" in out
    assert str(tmp_path) not in out


def test_show_repro_counts_a_real_sigkill_as_a_crash(tmp_path, capsys, monkeypatch):
    repro_variant(
        tmp_path,
        ("import os\n", "import os\nimport signal\n"),
        (COUNT, "        self.passes += 1\n        if self.passes == self.target:\n            os.kill(os.getpid(), signal.SIGKILL)\n"),
    )  # fmt: skip
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert out.count("EXIT=-9（SIGKILL で落ちました）") == 2 and "台帳ヒット" in out


# ---------------------------------------------------------------------------------------------------------------
# The child-process recipe the repro check uses, and what the notebooks promise.


def test_run_child_kills_the_whole_group_at_its_time_limit(tmp_path):
    marker = tmp_path / "grandchild-ran"
    grandchild = f"import time; time.sleep(0.6); open({str(marker)!r}, 'w')"
    code = (
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
        "print('started', flush=True)\nwhile True: pass\n"
    )
    done = run_child([sys.executable, "-c", code], timeout=0.5)
    assert done.timed_out and done.returncode == -9 and done.stdout == "started\n"
    time.sleep(1)
    assert not marker.exists()


def test_run_child_keeps_the_first_characters_and_counts_the_rest():
    done = run_child([sys.executable, "-c", "print('あ' * 100_000)"], timeout=10, max_chars=50)
    assert done.stdout == "あ" * 50 and done.cut and done.output_bytes == 300_001


def test_notebooks_state_the_time_limits_the_checks_use():
    level2 = (ROOT / "solutions" / "level2_reversed_ledger.md").read_text(encoding="utf-8")
    assert f"最大 {MAX_RUNS} 回" in level2 and f"**その1回ごとに {TIME_LIMIT_S} 秒で打ち切ります**" in level2
    assert f"合わせて {len(STEPS)} 回走らせ、そのあと `--resume` を 2 回実行します。" in level2
    assert (
        f"**その1回ごとに {SCRIPT_TIME_LIMIT_S} 秒で打ち切ります**（チェック全体の制限ではありません）"
        in level2
    )
    assert f"最初の {OUTPUT_LIMIT:,} 文字まで" in level2


def test_level1_notebook_lists_the_insight_choices_the_check_grades():
    text = (ROOT / "solutions" / "level1_crash_moments.md").read_text(encoding="utf-8")
    for letter, choice in INSIGHT_CHOICES.items():
        assert f"  - {letter}: {choice}" in text


def test_exercise_notebooks_show_no_answer_before_the_learner_answers():
    for name in ("level1_crash_moments.ipynb", "level2_reversed_ledger.ipynb"):
        nb = json.loads((ROOT / "exercises" / name).read_text(encoding="utf-8"))
        shown = "".join(
            "".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
        )
        assert "✓" not in shown and "✗" not in shown and "正しくは" not in shown
        assert not re.search(r"pendingToolUse=\w+ \(toolu", shown)  # no look() output
