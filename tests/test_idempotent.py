"""Beyond the lesson (2): an idempotent write_report and reconcile's fourth branch. With it, a crash at ① and at ②
both recover exactly (the report written once, no is_error), beside the lesson's honest is_error."""

from __future__ import annotations

import json

import pytest

from conftest import TESTS, TRANSCRIPTS, parse_transcripts, read_json, run_cli
from harness import CrashPlan, HarnessError, Run, ScriptedModel, SimulatedCrash, ToolError, run_agent
from harness.beyond.idempotent import (
    IDEMPOTENT_TOOL_IMPLS,
    IdempotentTool,
    lookup_report,
    reconcile_idempotent,
    run_tool_uses_keyed,
    with_key,
    write_report_with_key,
)
from harness.beyond.scenarios import crash_moments, run_in_folder
from harness.models import pairing_problem
from harness.tools import TOOL_IMPLS, TOOL_SCHEMAS
from harness.vocab import ALL_LABELS, FIXED_TIME_MS

BEYOND = parse_transcripts((TESTS / "transcripts_beyond.md").read_text(encoding="utf-8"))
DONE_OK = "[done] report.txt にレポートを書き出しました。タスク完了。"
KEY_LINE = "<!-- 冪等キー: toolu_03 -->"
REPORT = {"path": "report.txt", "content": "# レポート\n本文\n"}


def all_results(cp: dict) -> list[dict]:
    return [
        b
        for m in cp["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]


# ---- ① and ② with a real SIGKILL ------------------------------------------------------------------------------------


@pytest.mark.parametrize("moment, label", [("①", "after-save-a:3"), ("②", "after-tool-run:3")])
def test_sigkill_at_moment_then_resume_writes_the_report_exactly_once_without_is_error(
    workdir, moment, label
):
    crashed = run_cli(workdir, "--idempotent", env={"CRASH_AFTER": label, "CRASH_MODE": "sigkill"})
    assert crashed.returncode == -9
    report_at_crash = (workdir / "report.txt").exists()
    assert report_at_crash == (moment == "②")  # ① and ② differ only outside: the report, tool-runs.log
    resumed = run_cli(workdir, "--idempotent", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    asked = "実行済み、結果を再利用、再実行しない" if moment == "②" else "未実行、いま実行する"
    assert resumed.stdout.splitlines()[1].endswith(f"冪等キーで問い合わせ: {asked}")
    assert resumed.stdout.splitlines()[-1] == DONE_OK
    runs = (workdir / "tool-runs.log").read_text(encoding="utf-8").splitlines()
    assert runs.count("write_report toolu_03") == 1
    cp = read_json(workdir / "checkpoint.json")
    assert cp["pendingToolUse"] is None and pairing_problem(cp["messages"]) is None
    assert not any(b.get("is_error") for b in all_results(cp))
    assert (workdir / "report.txt").read_text(encoding="utf-8").splitlines()[0] == KEY_LINE


@pytest.mark.parametrize("label", ["after-save-a:3", "after-tool-run:3"])
def test_without_idempotent_the_lesson_answers_is_error_at_both_moments(workdir, label):
    run_cli(workdir, env={"CRASH_AFTER": label, "CRASH_MODE": "sigkill"})
    resumed = run_cli(workdir, "--resume")
    assert "台帳ミスかつ副作用あり、判断不能、is_error を追加" in resumed.stdout
    assert (
        resumed.stdout.splitlines()[-1]
        == "[done] write_report の実行状態が不明です。report.txt を確認してください。"
    )
    assert [b.get("is_error") for b in all_results(read_json(workdir / "checkpoint.json"))][-1] is True


# ---- the command line's transcripts: the lesson's, except where the fourth branch answers -------------------------


@pytest.mark.parametrize("case", list(TRANSCRIPTS))
def test_idempotent_prints_the_lessons_transcript_but_at_moments_1_and_2_of_write_report(case, workdir):
    steps = BEYOND.get(f"idempotent {case}") or TRANSCRIPTS[case]
    for step in steps:
        args = step["args"] if "--idempotent" in step["args"] else ["--idempotent", *step["args"]]
        proc = run_cli(workdir, *args, env=step["env"])
        assert proc.stdout.splitlines() == step["stdout"], f"{case}: {step['env']} {args}"
        assert proc.returncode == step["exit"] and proc.stderr == ""
    if case not in ("after-save-a:3", "after-tool-run:3"):
        assert f"idempotent {case}" not in BEYOND


PARALLEL = [name.split(" ", 1)[1] for name in BEYOND if name.startswith("parallel ")]


@pytest.mark.parametrize("case", PARALLEL)
def test_parallel_idempotent_prints_the_parallel_transcript_but_where_the_fourth_branch_answers(
    case, workdir
):
    steps = BEYOND.get(f"parallel+idempotent {case}") or BEYOND[f"parallel {case}"]
    for step in steps:
        args = step["args"] if "--idempotent" in step["args"] else [*step["args"], "--idempotent"]
        proc = run_cli(workdir, *args, env=step["env"])
        assert proc.stdout.splitlines() == step["stdout"], f"{case}: {step['env']} {args}"
        assert proc.returncode == step["exit"] and proc.stderr == ""
    assert "is_error" not in (workdir / "checkpoint.json").read_text(encoding="utf-8")


# ---- every crash point of the lesson's task recovers exactly (in-process, simulated) -------------------------------


def test_every_crash_point_of_the_lessons_task_recovers_exactly(tmp_path):
    clean = tmp_path / "clean"
    run_in_folder(clean, "idempotent")
    clean_messages = read_json(clean / "checkpoint.json")["messages"]
    cases = [
        (label, n)
        for label, moments in crash_moments("idempotent").items()
        for n in range(1, len(moments) + 1)
    ]
    assert len(cases) == 30 and {label for label, _ in cases} == set(ALL_LABELS)
    for label, n in cases:
        work = tmp_path / f"{label}-{n}"
        with pytest.raises(SimulatedCrash):
            run_in_folder(work, "idempotent", crash=CrashPlan(label, n))
        resume = (work / "checkpoint.json").exists()  # not when killed inside the very first checkpoint write
        assert run_in_folder(work, "idempotent", resume=resume) == DONE_OK[len("[done] ") :]
        runs = (work / "tool-runs.log").read_text(encoding="utf-8").splitlines()
        assert runs.count("write_report toolu_03") == 1, (label, n, runs)
        assert read_json(work / "checkpoint.json")["messages"] == clean_messages, (label, n)


# ---- the tool and its lookup ---------------------------------------------------------------------------------------


def test_the_report_carries_its_key_on_its_first_line_written_in_one_rename(workdir):
    out = write_report_with_key(workdir, REPORT, "toolu_03")
    assert out == "report.txt に 10 文字のレポートを書き出しました"
    assert (workdir / "report.txt").read_text(encoding="utf-8") == KEY_LINE + "\n" + REPORT["content"]
    assert [p.name for p in workdir.iterdir()] == ["report.txt"]  # no temp file left beside it


def test_lookup_answers_happened_not_happened_or_cannot_tell(workdir):
    assert lookup_report(workdir, REPORT, "toolu_03") is None  # no report: the call has not written
    write_report_with_key(workdir, REPORT, "toolu_03")
    assert lookup_report(workdir, REPORT, "toolu_03") == "report.txt に 10 文字のレポートを書き出しました"
    with pytest.raises(ToolError, match="呼び出し toolu_09 が起きたかどうかは分かりません"):
        lookup_report(workdir, REPORT, "toolu_09")  # another call's report
    (workdir / "report.txt").write_text("鍵のないレポート\n", encoding="utf-8")
    with pytest.raises(ToolError, match="分かりません"):
        lookup_report(workdir, REPORT, "toolu_03")
    (workdir / "report.txt").unlink()
    (workdir / "report.txt").mkdir()
    with pytest.raises(ToolError, match="を読めないので"):
        lookup_report(workdir, REPORT, "toolu_03")


def test_lookup_cannot_tell_when_the_key_is_there_with_other_content(workdir):
    """A key names one call and a call's input is fixed: the same key over other content is another call's."""
    write_report_with_key(workdir, REPORT, "toolu_03")
    with pytest.raises(ToolError, match="呼び出し toolu_03 が起きたかどうかは分かりません"):
        lookup_report(workdir, {**REPORT, "content": "# 別のレポート、もっと長い\n"}, "toolu_03")
    with pytest.raises(ToolError, match="分かりません"):
        lookup_report(workdir, {"path": "report.txt"}, "toolu_03")  # no content asked for: nothing to match
    assert lookup_report(workdir, REPORT, "toolu_03") == "report.txt に 10 文字のレポートを書き出しました"


def model_writing_keep_txt(content: str):
    """A plan for tests/hostile.py's server: a model that writes keep.txt under its own fixed id toolu_zz, then ends."""
    from hostile import json_answer

    def plan(_: int, body: dict) -> tuple:
        if len(body["messages"]) == 1:
            use = {"type": "tool_use", "id": "toolu_zz", "name": "write_report",
                   "input": {"path": "keep.txt", "content": content}}  # fmt: skip
            answer, reason = [use], "tool_use"
        else:
            answer, reason = [{"type": "text", "text": "書きました。"}], "end_turn"
        return json_answer(200, {"id": "msg_x", "type": "message", "role": "assistant", "model": "m",
                                 "content": answer, "stop_reason": reason,
                                 "usage": {"input_tokens": 1, "output_tokens": 1}})  # fmt: skip

    return plan


def test_a_model_reusing_its_tool_use_id_across_runs_is_not_told_its_call_already_happened(workdir):
    """Run 1 writes keep.txt as toolu_zz; a fresh run 2 asks for other content under the same id and is killed at ①:
    keep.txt (not cleaned by a fresh start) carries toolu_zz, but not this call's content. Cannot tell: is_error."""
    pytest.importorskip("anthropic")
    from hostile import HostileAPI

    api = HostileAPI(model_writing_keep_txt("一回目\n"))
    try:
        assert run_cli(workdir, "--idempotent", "--real", env=api.env()).returncode == 0
        api.plan = model_writing_keep_txt("二回目、中身が違う\n")
        crashed = run_cli(workdir, "--idempotent", "--real", env=api.env(CRASH_AFTER="after-save-a:1"))
        assert crashed.returncode == 137
        resumed = run_cli(workdir, "--idempotent", "--resume", "--real", env=api.env())
    finally:
        api.close()
    assert resumed.returncode == 0, resumed.stderr
    assert "冪等キーで問い合わせ: 実行済み" not in resumed.stdout  # nothing of run 2 ran
    assert "台帳ミスかつ副作用あり、判断不能、is_error を追加" in resumed.stdout
    assert (workdir / "keep.txt").read_text(encoding="utf-8") == "<!-- 冪等キー: toolu_zz -->\n一回目\n"
    assert all_results(read_json(workdir / "checkpoint.json"))[-1]["is_error"] is True


def test_an_idempotent_tool_refuses_to_run_without_its_key(workdir):
    tool = IDEMPOTENT_TOOL_IMPLS["write_report"]
    with pytest.raises(HarnessError, match="冪等キー（tool_use_id）なしで呼ばれた"):
        tool(workdir, REPORT)
    assert not (workdir / "report.txt").exists()


def test_the_lessons_run_tool_uses_with_idempotent_tools_stops_rather_than_write_without_key(workdir):
    with pytest.raises(HarnessError, match="run_tool_uses_keyed と一緒に使ってください"):
        run_agent(Run(workdir, tool_impls=IDEMPOTENT_TOOL_IMPLS), ScriptedModel(), tools=TOOL_SCHEMAS)
    assert not (workdir / "report.txt").exists()
    assert read_json(workdir / "checkpoint.json")["pendingToolUse"]["name"] == "write_report"


def test_with_key_binds_the_key_for_one_call_and_leaves_the_run_as_it_was(workdir):
    run = Run(workdir, tool_impls=IDEMPOTENT_TOOL_IMPLS)
    keyed = with_key(run, "toolu_07")
    keyed.tool_impls["write_report"](workdir, REPORT)
    assert (workdir / "report.txt").read_text(encoding="utf-8").startswith("<!-- 冪等キー: toolu_07 -->\n")
    assert isinstance(run.tool_impls["write_report"], IdempotentTool)
    assert keyed.tool_impls["read_notes"] is TOOL_IMPLS["read_notes"]
    assert keyed.crash is run.crash and keyed.listeners is run.listeners


def scene(pending: dict) -> dict:
    return {
        "version": 1,
        "task": "t",
        "turns": 3,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": "t"}],
        "pendingToolUse": pending,
    }


WRITE = {"id": "toolu_03", "name": "write_report", "input": REPORT}


def reconcile_lines(workdir, cp, tool_impls=IDEMPOTENT_TOOL_IMPLS):
    lines = []
    run = Run(workdir, clock=lambda: FIXED_TIME_MS, tool_impls=tool_impls, listeners=[lines.append])
    result = reconcile_idempotent(run, cp)
    return result, [(e.kind, e.data.get("branch")) for e in lines]


def test_fourth_branch_reuses_what_the_report_says_happened_and_records_it(workdir):
    write_report_with_key(workdir, REPORT, "toolu_03")
    result, events = reconcile_lines(workdir, scene(WRITE))
    assert events == [("reconcile", "asked-done"), ("effect_written", None)]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_03",
        "content": "report.txt に 10 文字のレポートを書き出しました",
    }
    assert read_json(workdir / "effects.json")["toolu_03"]["result"] == result["content"]
    assert not (workdir / "tool-runs.log").exists()  # asked, never run


def test_fourth_branch_runs_with_the_same_key_what_never_happened(workdir):
    result, events = reconcile_lines(workdir, scene(WRITE))
    assert [k for k in events if k[0] == "reconcile"] == [("reconcile", "asked-run")]
    assert "is_error" not in result
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8") == "write_report toolu_03\n"
    assert (workdir / "report.txt").read_text(encoding="utf-8").startswith(KEY_LINE + "\n")


def test_when_the_outside_world_cannot_tell_the_lesson_answers_is_error(workdir):
    (workdir / "report.txt").write_text("鍵のないレポート\n", encoding="utf-8")
    result, events = reconcile_lines(workdir, scene(WRITE))
    assert events == [("reconcile", "unknown")]
    assert result["is_error"] is True
    assert (workdir / "report.txt").read_text(encoding="utf-8") == "鍵のないレポート\n"  # never overwritten


def test_tools_that_cannot_be_asked_keep_the_lessons_three_branches(workdir):
    (workdir / "sales-notes.txt").write_text("- A社: メモ\n", encoding="utf-8")
    read = {"id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
    assert reconcile_lines(workdir, scene(read))[1][0] == ("reconcile", "rerun")
    assert reconcile_lines(workdir, scene(WRITE), tool_impls=TOOL_IMPLS)[1] == [("reconcile", "unknown")]
    effects = {"toolu_03": {"name": "write_report", "result": "記録済み", "at": 1}}
    (workdir / "effects.json").write_text(json.dumps(effects), encoding="utf-8")
    result, events = reconcile_lines(workdir, scene(WRITE))
    assert events == [("reconcile", "hit")] and result["content"] == "記録済み"
    assert reconcile_lines(workdir, scene(None)) == (None, [])


def test_a_report_written_without_key_is_never_written_again_by_an_idempotent_resume(workdir):
    """A lesson run killed at ② (report written, no key), resumed with --idempotent: cannot tell, so is_error."""
    run_cli(workdir, env={"CRASH_AFTER": "after-tool-run:3"})
    before = (workdir / "report.txt").read_bytes()
    resumed = run_cli(workdir, "--idempotent", "--resume")
    assert "判断不能、is_error を追加" in resumed.stdout
    assert (workdir / "report.txt").read_bytes() == before
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8").count("write_report") == 1


def test_run_tool_uses_keyed_gives_each_call_its_own_key(workdir):
    run = Run(workdir, clock=lambda: FIXED_TIME_MS, tool_impls=IDEMPOTENT_TOOL_IMPLS)
    content = [
        {"type": "tool_use", "id": "toolu_03", "name": "write_report", "input": REPORT},
        {
            "type": "tool_use",
            "id": "toolu_04",
            "name": "write_report",
            "input": {**REPORT, "path": "summary.txt"},
        },
    ]
    results = run_tool_uses_keyed(run, content)
    assert [r["tool_use_id"] for r in results] == ["toolu_03", "toolu_04"]
    assert (workdir / "summary.txt").read_text(encoding="utf-8").startswith("<!-- 冪等キー: toolu_04 -->")
    assert list(read_json(workdir / "effects.json")) == ["toolu_03", "toolu_04"]


def test_notebook_12_shows_the_packages_blocks_and_has_the_notebook_parts():
    from test_parallel import notebook_problems

    from harness.beyond import idempotent

    assert notebook_problems("12_idempotent.ipynb", idempotent) == []
