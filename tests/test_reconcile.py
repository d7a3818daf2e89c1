"""Block 4: reconcile's three branches, each from a hand-made checkpoint and ledger, with the lesson's log lines."""

from __future__ import annotations

import json

from harness import Run, reconcile
from harness.transcript import format_event

# The log lines as DESIGN section 2 fixes them (an independent truth, not the code's own output).
HIT = "[resume][reconcile] tool_use_id=toolu_03 name=write_report 台帳ヒット、結果を再利用、再実行しない"
RERUN = "[resume][reconcile] tool_use_id=toolu_01 name=read_notes 台帳ミス、読み取り専用ツール、再実行する"
UNKNOWN = "[resume][reconcile] tool_use_id=toolu_03 name=write_report 台帳ミスかつ副作用あり、判断不能、is_error を追加"


def checkpoint(pending):
    return {
        "version": 1,
        "task": "t",
        "turns": 3,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": "t"}],
        "pendingToolUse": pending,
    }


WRITE = {"id": "toolu_03", "name": "write_report", "input": {"path": "report.txt", "content": "R"}}
READ = {"id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}}


def reconcile_lines(workdir, cp):
    events = []
    result = reconcile(Run(workdir, clock=lambda: 5, listeners=[events.append]), cp)
    return result, [format_event(e.kind, e.data) for e in events if format_event(e.kind, e.data)]


def test_no_pending_call_returns_none_and_logs_nothing(workdir):
    assert reconcile_lines(workdir, checkpoint(None)) == (None, [])


def test_ledger_hit_reuses_the_result_and_does_not_run_again(workdir):
    (workdir / "effects.json").write_text(
        json.dumps({"toolu_03": {"name": "write_report", "result": "前回の結果", "at": 1}}), encoding="utf-8"
    )
    result, lines = reconcile_lines(workdir, checkpoint(WRITE))
    assert lines == [HIT]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_03", "content": "前回の結果"}
    assert not (workdir / "report.txt").exists()
    assert not (workdir / "tool-runs.log").exists()


def test_ledger_miss_on_read_only_tool_runs_it_again_and_records_it(workdir):
    (workdir / "sales-notes.txt").write_text("メモ", encoding="utf-8")
    result, lines = reconcile_lines(workdir, checkpoint(READ))
    assert lines == [RERUN]
    assert result == {"type": "tool_result", "tool_use_id": "toolu_01", "content": "メモ"}
    assert json.loads((workdir / "effects.json").read_text(encoding="utf-8")) == {
        "toolu_01": {"name": "read_notes", "result": "メモ", "at": 5}
    }
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8") == "read_notes toolu_01\n"


def test_ledger_miss_on_side_effecting_tool_is_an_honest_is_error(workdir):
    result, lines = reconcile_lines(workdir, checkpoint(WRITE))
    assert lines == [UNKNOWN]
    assert result["is_error"] is True and result["tool_use_id"] == "toolu_03"
    assert "実行状態は不明" in result["content"]
    assert not (workdir / "report.txt").exists()
    assert not (workdir / "effects.json").exists()


# ---- the decision comes from the read-only list (READ_ONLY), not from a tool's name -------------------------------


def spy_tool(calls):
    def send_mail(workdir, input):
        calls.append(input)
        return "送信しました"

    return send_mail


SEND = {"id": "toolu_05", "name": "send_mail", "input": {"to": "a@example.com"}}


def test_a_fourth_side_effecting_tool_with_no_record_is_an_honest_is_error_and_does_not_run(workdir):
    calls, events = [], []
    run = Run(workdir, clock=lambda: 5, listeners=[events.append])
    run.tool_impls["send_mail"] = spy_tool(calls)
    result = reconcile(run, checkpoint(SEND))
    assert calls == []  # not run again: it may have sent the mail already
    assert result["is_error"] is True and result["tool_use_id"] == "toolu_05"
    assert [format_event(e.kind, e.data) for e in events] == [
        "[resume][reconcile] tool_use_id=toolu_05 name=send_mail 台帳ミスかつ副作用あり、判断不能、is_error を追加"
    ]
    assert not (workdir / "tool-runs.log").exists() and not (workdir / "effects.json").exists()


def test_count_words_a_read_only_tool_that_is_not_read_notes_is_run_again(workdir):
    (workdir / "sales-notes.txt").write_text("一二三\n四五\n", encoding="utf-8")
    result, lines = reconcile_lines(
        workdir, checkpoint({"id": "toolu_02", "name": "count_words", "input": {"path": "sales-notes.txt"}})
    )
    assert lines == [
        "[resume][reconcile] tool_use_id=toolu_02 name=count_words 台帳ミス、読み取り専用ツール、再実行する"
    ]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_02",
        "content": "文字数: 5（空白と改行を除く）、行数: 2",
    }
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8") == "count_words toolu_02\n"


def test_a_tool_put_on_the_read_only_list_is_run_again(workdir, monkeypatch):
    """The list decides: a learner who declares send_mail read-only gets it re-run (and recorded)."""
    import sys

    monkeypatch.setattr(sys.modules["harness.reconcile"], "READ_ONLY", frozenset({"send_mail"}))
    calls = []
    run = Run(workdir, clock=lambda: 5)
    run.tool_impls["send_mail"] = spy_tool(calls)
    result = reconcile(run, checkpoint(SEND))
    assert calls == [{"to": "a@example.com"}] and result["content"] == "送信しました"
    # and a tool taken off the list is no longer re-run
    result = reconcile(run, checkpoint({**READ, "id": "toolu_06"}))
    assert result["is_error"] is True and not (workdir / "report.txt").exists()
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8") == "send_mail toolu_05\n"
