"""The exercise checks, both ways: the right answers pass, typical wrong answers fail with the message naming the mistake."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from harness import execute_tool
from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, NULL, PENDING_CALL, RERUN
from harness.exercises.level1 import blank_answers, check_level1
from harness.exercises.level2 import (
    check_level2_diagnosis,
    check_level2_fix,
    check_level2_repro,
    run_tool_uses_prod,
)
from harness.ledger import save_effect

ROOT = Path(__file__).resolve().parents[1]

# The lesson's answers (its 完了基準), written here independently of the checker.
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
}
DIAGNOSIS = {
    "first_call": "save_effect",
    "recorded_result": None,
    "branch_after_crash": HIT,
    "report_exists": False,
    "tool_ran": False,
}


def with_change(answers, path, value):
    changed = copy.deepcopy(answers)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


def test_level1_right_answers_pass():
    verdict = check_level1(LEVEL1)
    assert verdict.passed, verdict.report()
    assert verdict.report().startswith("レベル1: 合格")


def test_level1_blank_sheet_is_incomplete_not_an_error():
    verdict = check_level1(blank_answers())
    assert not verdict.passed and len(verdict.missing) == 20 and not verdict.problems
    assert "未完了" in verdict.report()


@pytest.mark.parametrize(
    "path, value, fragments",
    [
        (
            ("②", "write_report", "ledger_entry"),
            True,
            [
                "②（ツール完了、台帳未記録）write_report: effects.json にこの呼び出しのレコード",
                "正しくは=False",
                "tool-runs.log では write_report は実行済み",
            ],
        ),
        (("same_disk_1_2",), False, ["① と ② の checkpoint.json と effects.json は同じか", "正しくは=True"]),
        (
            ("same_recovery_1_2",),
            False,
            ["① と ② の再開の振る舞い", "① は「台帳ミス、is_error」、② は「台帳ミス、is_error」"],
        ),
        (
            ("③", "read_notes", "pendingToolUse"),
            PENDING_CALL,
            ["③（地点B保存直後）read_notes: checkpoint.json の pendingToolUse", "正しくは=null"],
        ),
        (
            ("②", "write_report", "reconcile"),
            HIT,
            [
                "②（ツール完了、台帳未記録）write_report: --resume での reconcile",
                "正しくは=台帳ミス、is_error",
            ],
        ),
        (
            ("①", "write_report", "reconcile"),
            RERUN,
            ["①（地点A保存直後、ツール未実行）write_report", "正しくは=台帳ミス、is_error"],
        ),
        (
            ("③", "write_report", "reconcile"),
            HIT,
            ["③（地点B保存直後）write_report", "正しくは=reconcile なし"],
        ),
        (
            ("①", "read_notes", "ledger_entry"),
            True,
            ["①（地点A保存直後、ツール未実行）read_notes: effects.json", "正しくは=False"],
        ),
    ],
)
def test_level1_wrong_answer_fails_naming_the_mistake(path, value, fragments):
    verdict = check_level1(with_change(LEVEL1, path, value))
    assert not verdict.passed
    assert len(verdict.problems) == 1
    for fragment in fragments:
        assert fragment in verdict.problems[0], verdict.problems[0]


def test_level2_right_diagnosis_passes():
    verdict = check_level2_diagnosis(DIAGNOSIS)
    assert verdict.passed, verdict.report()


@pytest.mark.parametrize(
    "key, value, fragment",
    [
        (
            "first_call",
            "execute_tool",
            "run_tool_uses_prod で先に呼ばれるのは: あなたの答え=execute_tool、正しくは=save_effect",
        ),
        ("recorded_result", "report.txt に書き出しました", "正しくは=None"),
        ("branch_after_crash", IS_ERROR, "正しくは=台帳ヒット、再利用"),
        ("report_exists", True, "report.txt はあるか: あなたの答え=True、正しくは=False"),
        ("tool_ran", True, "write_report は一度でも実際に実行されたか: あなたの答え=True、正しくは=False"),
    ],
)
def test_level2_wrong_diagnosis_fails_naming_the_mistake(key, value, fragment):
    verdict = check_level2_diagnosis({**DIAGNOSIS, key: value})
    assert not verdict.passed and len(verdict.problems) == 1
    assert fragment in verdict.problems[0], verdict.problems[0]


def fixed(run, content, turn=0):
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        output = execute_tool(run, block)
        save_effect(
            run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()}
        )
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def records_first_then_overwrites(run, content, turn=0):
    """Looks right after a clean run (real results in the end), but records before executing."""
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        save_effect(
            run.effects_path, block["id"], {"name": block["name"], "result": "予定", "at": run.clock()}
        )
        output = execute_tool(run, block)
        save_effect(
            run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()}
        )
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def records_none(run, content, turn=0):
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        output = execute_tool(run, block)
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()})
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def never_records(run, content, turn=0):
    return [
        {
            "type": "tool_result",
            "tool_use_id": b["id"],
            "content": execute_tool(run, b),
        }
        for b in content
        if b["type"] == "tool_use"
    ]


def test_level2_right_fix_passes():
    verdict = check_level2_fix(fixed)
    assert verdict.passed, verdict.report()


@pytest.mark.parametrize(
    "fn, fragment",
    [
        (run_tool_uses_prod, "result=None（プレースホルダ）"),
        (
            records_first_then_overwrites,
            "write_report を実行する前に台帳へ書いています。実行が先、記録が後です",
        ),
        (
            records_none,
            "台帳に result=None（プレースホルダ）が記録されています: toolu_01, toolu_02, toolu_03",
        ),
        (never_records, "台帳にあるべき toolu_01〜03 がそろっていません"),
    ],
)
def test_level2_wrong_fix_fails_naming_the_mistake(fn, fragment):
    verdict = check_level2_fix(fn)
    assert not verdict.passed
    assert any(fragment in p for p in verdict.problems), verdict.report()


def test_level2_unwritten_fix_is_incomplete_not_an_error():
    def stub(run, content, turn=0):
        raise NotImplementedError("ここに書く")

    verdict = check_level2_fix(stub)
    assert not verdict.passed and verdict.missing and not verdict.problems


def test_level2_solution_repro_passes():
    verdict = check_level2_repro(ROOT / "solutions" / "level2_repro.py")
    assert verdict.passed, verdict.report()


def repro_variant(tmp_path, old, new) -> Path:
    text = (ROOT / "solutions" / "level2_repro.py").read_text(encoding="utf-8")
    assert old in text
    script = tmp_path / "level2_repro.py"
    script.write_text(text.replace(old, new, 1), encoding="utf-8")
    return script


def test_level2_repro_with_crash_point_after_the_tool_fails(tmp_path):
    script = repro_variant(
        tmp_path,
        "            crash.point()\n            output = execute_tool(run, block)\n"
        "            results.append",
        "            output = execute_tool(run, block)\n"
        "            crash.point()\n            results.append",
    )
    verdict = check_level2_repro(script)
    assert not verdict.passed
    assert "wrong: クラッシュ地点が write_report の実行より後にあります" in verdict.problems[0]


def test_level2_repro_that_always_crashes_fails(tmp_path):
    script = repro_variant(tmp_path, 'int(os.environ.get("REPRO_CRASH", "0"))', "3")
    verdict = check_level2_repro(script)
    assert not verdict.passed
    assert "REPRO_CRASH なしなら最後まで走る" in verdict.problems[0]


def test_level2_repro_whose_wrong_order_is_the_fixed_one_fails(tmp_path):
    script = repro_variant(
        tmp_path, 'make_wrong(crash) if order == "wrong"', 'make_fixed(crash) if order == "wrong"'
    )
    verdict = check_level2_repro(script)
    assert not verdict.passed
    assert "誤った順序: クラッシュ時に台帳に toolu_03 があるか" in verdict.problems[0]


def test_level2_unfinished_repro_skeleton_fails_with_its_todo(tmp_path):
    shutil.copy(ROOT / "exercises" / "level2_repro.py", tmp_path / "level2_repro.py")
    verdict = check_level2_repro(tmp_path / "level2_repro.py")
    assert not verdict.passed and "TODO 2" in verdict.problems[0]
    assert not check_level2_repro(tmp_path / "missing.py").passed
