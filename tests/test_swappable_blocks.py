"""The blocks are swappable: a learner's run_tool_uses or save_checkpoint plugs into the real loop."""

from __future__ import annotations

import json

import pytest

from harness import (
    TOOL_SCHEMAS,
    CrashPlan,
    HarnessError,
    Run,
    ScriptedModel,
    SimulatedCrash,
    execute_tool,
    run_agent,
)
from harness.ledger import save_effect
from harness.transcript import format_event


def run_tool_uses_prod(run, content):
    """The lesson's level-2 production bug: the ledger is written (with a placeholder) before the tool runs."""
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()})
        run.emit(
            "effect_written", id=block["id"], name=block["name"]
        )  # the crash point: after the ledger write
        output = execute_tool(run, block)
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def test_reversed_ledger_makes_a_tool_that_never_ran_count_as_done(workdir):
    with pytest.raises(SimulatedCrash):
        run_agent(
            Run(workdir, crash=CrashPlan("after-effect-write", 3)),
            ScriptedModel(),
            tools=TOOL_SCHEMAS,
            run_tool_uses=run_tool_uses_prod,
        )
    assert json.loads((workdir / "effects.json").read_text())["toolu_03"]["result"] is None
    lines = []
    run_agent(
        Run(workdir, listeners=[lambda e: lines.append(format_event(e.kind, e.data))]),
        ScriptedModel(),
        tools=TOOL_SCHEMAS,
        resume=True,
    )
    assert (
        "[resume][reconcile] tool_use_id=toolu_03 name=write_report 台帳ヒット、結果を再利用、再実行しない"
        in lines
    )
    assert (
        lines[-1] == "[done] report.txt にレポートを書き出しました。タスク完了。"
    )  # the incident: claimed done
    assert not (workdir / "report.txt").exists()
    assert "write_report" not in (workdir / "tool-runs.log").read_text()


def test_the_lesson_order_leaves_no_entry_at_the_same_crash(workdir):
    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan("after-tool-run", 3)), ScriptedModel(), tools=TOOL_SCHEMAS)
    assert "toolu_03" not in json.loads((workdir / "effects.json").read_text())


def lesson_load_checkpoint(path):
    """The lesson's loadCheckpoint: missing, unparsable, version; nothing more (no check against the ledger)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HarnessError(f"{path}が見つかりません") from None
    cp = json.loads(raw)
    if cp["version"] != 1:
        raise HarnessError(f"{path}の version={cp['version']} です")
    return cp


def crash_without_point_a(workdir):
    from harness import save_checkpoint

    def only_point_b(path, cp):
        if cp["pendingToolUse"] is None:
            save_checkpoint(path, cp)

    with pytest.raises(SimulatedCrash):
        run_agent(
            Run(workdir, crash=CrashPlan("after-effect-write", 3)),
            ScriptedModel(),
            tools=TOOL_SCHEMAS,
            save_checkpoint=only_point_b,
        )
    return only_point_b


def test_a_swapped_save_checkpoint_without_point_a_lets_write_report_run_twice(workdir):
    only_point_b = crash_without_point_a(workdir)
    run_agent(
        Run(workdir),
        ScriptedModel(),
        tools=TOOL_SCHEMAS,
        resume=True,
        save_checkpoint=only_point_b,
        load_checkpoint=lesson_load_checkpoint,
    )
    runs = (workdir / "tool-runs.log").read_text().splitlines()
    assert runs.count("write_report toolu_03") == 2


def test_the_packages_loader_refuses_a_checkpoint_older_than_its_ledger(workdir):
    crash_without_point_a(workdir)
    with pytest.raises(HarnessError, match="知らない呼び出し toolu_03"):
        run_agent(Run(workdir), ScriptedModel(), tools=TOOL_SCHEMAS, resume=True)
    assert (workdir / "tool-runs.log").read_text().splitlines().count("write_report toolu_03") == 1
