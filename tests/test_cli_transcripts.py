"""The command line, as a real subprocess, prints exactly the spec's transcripts (DESIGN section 2)."""

from __future__ import annotations

import pytest

from conftest import SPEC_TRANSCRIPTS, TRANSCRIPTS, parse_transcripts, read_json, run_cli

CRASH_CASES = [name for name in TRANSCRIPTS if name != "clean run"]


def test_spec_has_the_clean_run_and_twelve_crash_cases():
    assert "clean run" in TRANSCRIPTS
    assert len(CRASH_CASES) == 12
    assert {c.rsplit(":", 1)[0] for c in CRASH_CASES} == {
        "after-save-a",
        "after-tool-run",
        "after-effect-write",
        "after-save-b",
    }


def test_spec_copy_matches_shared_spec():
    shared = SPEC_TRANSCRIPTS.parents[2] / "shared" / "spec" / "transcripts.md"
    if not shared.exists():
        pytest.skip("../shared is not beside this clone")
    assert parse_transcripts(shared.read_text(encoding="utf-8")) == TRANSCRIPTS


@pytest.mark.parametrize("case", list(TRANSCRIPTS))
def test_command_line_prints_the_spec_transcript(case, workdir):
    for step in TRANSCRIPTS[case]:
        proc = run_cli(workdir, *step["args"], env=step["env"])
        assert proc.stdout.splitlines() == step["stdout"], f"{case}: {step['env']} {step['args']}"
        assert proc.returncode == step["exit"]
        assert proc.stderr == ""
    cp = read_json(workdir / "checkpoint.json")
    assert cp["pendingToolUse"] is None


@pytest.mark.parametrize("case", CRASH_CASES)
def test_real_sigkill_then_resume_runs_write_report_at_most_once(case, workdir):
    crashed = run_cli(workdir, env={"CRASH_AFTER": case, "CRASH_MODE": "sigkill"})
    assert crashed.returncode == -9  # really killed by the kernel, not an exit code the program chose
    assert crashed.stdout.splitlines()[-1] == f"[kill] {case} で SIGKILL（本物のキル）"
    resumed = run_cli(workdir, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    runs = (workdir / "tool-runs.log").read_text(encoding="utf-8").splitlines()
    assert runs.count("write_report toolu_03") <= 1
    cp = read_json(workdir / "checkpoint.json")
    assert cp["pendingToolUse"] is None
    assert not (workdir / "checkpoint.json.tmp").exists()
    # the same resume as the simulated crash: the spec's resume transcript
    assert resumed.stdout.splitlines() == TRANSCRIPTS[case][1]["stdout"]
