"""The task's tools: confined to the work folder, never writing the harness's own files (the engine's database
included), a path they cannot use a tool error rather than a crash, and every real execution visible in tool-runs.log."""

from __future__ import annotations

import os

import pytest

from harness import TOOL_SCHEMAS, HarnessError, Run, ScriptedModel, execute_tool, run_agent
from harness.tools import ToolError
from harness.vocab import DB_FILES


def tool_use(name: str, input: dict) -> dict:
    return {"type": "tool_use", "id": "toolu_x", "name": name, "input": input}


@pytest.mark.parametrize("path", ["../escape.txt", "/tmp/escape.txt", "sub/../../escape.txt", "", None])
def test_paths_outside_the_work_folder_are_tool_errors(workdir, path):
    with pytest.raises(ToolError):
        execute_tool(Run(workdir), tool_use("write_report", {"path": path, "content": "x"}))
    assert not (workdir.parent / "escape.txt").exists()
    assert not (workdir / "tool-runs.log").exists()


def test_symlink_out_of_the_work_folder_is_refused(workdir, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workdir / "link")
    with pytest.raises(ToolError, match="作業フォルダの外"):
        execute_tool(Run(workdir), tool_use("write_report", {"path": "link/r.txt", "content": "x"}))
    assert list(outside.iterdir()) == []


def test_unknown_tool_and_bad_input_are_tool_errors(workdir):
    with pytest.raises(ToolError, match="未知のツール"):
        execute_tool(Run(workdir), tool_use("rm_rf", {}))
    with pytest.raises(ToolError, match="content"):
        execute_tool(Run(workdir), tool_use("write_report", {"path": "r.txt", "content": 3}))


def test_clean_run_logs_each_tool_once_in_order(workdir):
    text = run_agent(Run(workdir), ScriptedModel(), tools=TOOL_SCHEMAS)
    assert text == "report.txt にレポートを書き出しました。タスク完了。"
    assert (workdir / "tool-runs.log").read_text().splitlines() == [
        "read_notes toolu_01",
        "count_words toolu_02",
        "write_report toolu_03",
    ]
    assert "文字数: " in (workdir / "report.txt").read_text(encoding="utf-8")


def test_a_response_with_two_tool_uses_stops_before_point_a(workdir):
    class TwoAtOnce(ScriptedModel):
        def create(self, **kw):
            r = super().create(**kw)
            r["content"] = r["content"] * 2
            return r

    with pytest.raises(HarnessError, match="2 個の tool_use") as refused:
        run_agent(Run(workdir), TwoAtOnce(), tools=TOOL_SCHEMAS)
    assert not (workdir / "checkpoint.json").exists()
    # on the first turn there is no checkpoint: the advice must not say one is valid, and must name the fresh start
    advice = str(refused.value).splitlines()[1]
    assert "有効" not in advice and "checkpoint.json がまだなければ --resume なしで最初から" in advice


@pytest.mark.parametrize("name", [*DB_FILES, "DBOS.SQLITE"])
def test_the_model_cannot_write_the_engines_database(workdir, name):
    block = {
        "type": "tool_use",
        "id": "toolu_x",
        "name": "write_report",
        "input": {"path": name, "content": "x"},
    }
    with pytest.raises(ToolError, match="ハーネス自身のファイル"):
        execute_tool(Run(workdir), block)
    assert not (workdir / name).exists()


def test_a_link_loop_in_a_model_path_is_a_tool_error_not_a_crash(workdir):
    os.symlink("loop", workdir / "loop")
    block = {"type": "tool_use", "id": "toolu_x", "name": "read_notes", "input": {"path": "loop/x"}}
    with pytest.raises(ToolError, match="を開けません"):
        execute_tool(Run(workdir), block)


def test_a_name_too_long_is_a_tool_error_not_a_crash(workdir):
    block = {
        "type": "tool_use",
        "id": "toolu_x",
        "name": "write_report",
        "input": {"path": "a" * 300, "content": "x"},
    }
    with pytest.raises(ToolError):
        execute_tool(Run(workdir), block)
