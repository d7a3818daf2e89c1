"""Beyond the lesson: every crash label x every occurrence a run reaches x {simulated, SIGKILL}, crashed then resumed
in real processes; a second crash during the resume; crashes inside the writers."""

from __future__ import annotations

import json

import pytest

from conftest import read_json, run_cli
from harness import TOOL_SCHEMAS, CrashPlan, Run, ScriptedModel, SimulatedCrash, load_checkpoint, run_agent
from harness.models import pairing_problem
from harness.tools import READ_ONLY
from harness.vocab import ALL_LABELS, WRITER_LABELS

UNKNOWN_DONE = "[done] write_report の実行状態が不明です。report.txt を確認してください。"


def occurrences(tmp_path) -> dict[str, int]:
    """How many times a clean run passes each crash label (counted by the crash plan itself)."""
    counts = {}
    for label in ALL_LABELS:
        work = tmp_path / f"count-{label}"
        work.mkdir()
        plan = CrashPlan(label, 10**6)
        run_agent(Run(work, crash=plan), ScriptedModel(), tools=TOOL_SCHEMAS)
        counts[label] = plan.seen[label]
    return counts


def clean_messages(tmp_path):
    work = tmp_path / "clean"
    work.mkdir()
    run_agent(Run(work), ScriptedModel(), tools=TOOL_SCHEMAS)
    return load_checkpoint(work / "checkpoint.json")["messages"]


# The counts are those of the lesson's three-turn task: 3 saves A, 3 tool runs, 3 ledger writes, 3 saves B,
# 6 checkpoint writes and 3 ledger writes inside the writer.
EXPECTED_COUNTS = {
    "after-save-a": 3,
    "after-tool-run": 3,
    "after-effect-write": 3,
    "after-save-b": 3,
    "checkpoint-torn-write": 6,
    "checkpoint-before-rename": 6,
    "effects-torn-write": 3,
    "effects-before-rename": 3,
}
CASES = [(label, n) for label, count in EXPECTED_COUNTS.items() for n in range(1, count + 1)]


def test_the_sweep_covers_every_occurrence_a_run_reaches(tmp_path):
    assert occurrences(tmp_path) == EXPECTED_COUNTS
    assert len(CASES) == 30


def check_invariants(work, stdout_lines, clean, ledger_at_crash):
    runs = (work / "tool-runs.log").read_text().splitlines() if (work / "tool-runs.log").exists() else []
    cp = read_json(work / "checkpoint.json")
    assert cp["pendingToolUse"] is None
    assert pairing_problem(cp["messages"]) is None
    assert runs.count("write_report toolu_03") <= 1
    if "toolu_03" in ledger_at_crash:
        assert runs.count("write_report toolu_03") == 1
    for line in set(runs):  # a call that ran twice must be read-only and must not have been in the ledger
        if runs.count(line) > 1:
            name, tool_use_id = line.split()
            assert name in READ_ONLY and tool_use_id not in ledger_at_crash, line
    if stdout_lines[-1] == UNKNOWN_DONE:
        last_user = [m for m in cp["messages"] if m["role"] == "user"][-1]
        assert last_user["content"][0]["is_error"] is True
    else:
        assert stdout_lines[-1] == "[done] report.txt にレポートを書き出しました。タスク完了。"
        assert cp["messages"] == clean


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    return clean_messages(tmp_path_factory.mktemp("clean"))


@pytest.mark.parametrize("mode", ["simulated", "sigkill"])
@pytest.mark.parametrize("label, n", CASES, ids=[f"{label}:{n}" for label, n in CASES])
def test_crash_then_resume_in_real_processes(tmp_path, clean, label, n, mode):
    work = tmp_path / "work"
    crashed = run_cli(work, env={"CRASH_AFTER": f"{label}:{n}", "CRASH_MODE": mode})
    assert crashed.returncode == (137 if mode == "simulated" else -9), crashed.stderr
    ledger = read_json(work / "effects.json") if (work / "effects.json").exists() else {}
    before = {p.name: p.read_bytes() for p in work.iterdir() if p.name.endswith(".json")}
    if label in WRITER_LABELS:  # the crash hit inside the writer: the visible file is the old one, intact
        target = label.split("-")[0] + ".json"
        assert (work / (target + ".tmp")).exists()
        if target in before:
            json.loads(before[target])
    resumed = run_cli(work, "--resume")
    assert "Traceback" not in resumed.stderr
    if "checkpoint.json" not in before:
        # killed inside the very first checkpoint write: nothing was saved and no tool ran, so there is nothing to
        # resume. The harness says so (it never guesses from the stray temp file), and a fresh start is safe.
        assert (label, n) in (("checkpoint-torn-write", 1), ("checkpoint-before-rename", 1))
        assert resumed.returncode == 1 and "checkpoint.json が見つかりません" in resumed.stderr
        assert not (work / "tool-runs.log").exists()
        resumed = run_cli(work)
    assert resumed.returncode == 0, resumed.stderr
    check_invariants(work, resumed.stdout.splitlines(), clean, ledger)


def test_a_crash_during_resume_at_every_label_still_converges(tmp_path, clean):
    """In-process for speed: first crash (30 cases) x second crash at every label and occurrence the resume reaches."""
    tried = 0
    for label, n in CASES:
        base = tmp_path / f"{label}-{n}"
        base.mkdir()
        with pytest.raises(SimulatedCrash):
            run_agent(Run(base, crash=CrashPlan(label, n)), ScriptedModel(), tools=TOOL_SCHEMAS)
        snapshot = {p.name: p.read_bytes() for p in base.iterdir()}
        if "checkpoint.json" not in snapshot:
            continue  # nothing to resume (see test_crash_then_resume_in_real_processes)
        ledger_at_crash = json.loads(snapshot.get("effects.json", b"{}"))
        for label2 in ALL_LABELS:
            n2 = 1
            while True:
                work = tmp_path / f"{label}-{n}-{label2}-{n2}"
                work.mkdir()
                for name, data in snapshot.items():
                    (work / name).write_bytes(data)
                try:
                    run_agent(
                        Run(work, crash=CrashPlan(label2, n2)),
                        ScriptedModel(),
                        tools=TOOL_SCHEMAS,
                        resume=True,
                    )
                    break  # the resume never reached this occurrence: done with this label
                except SimulatedCrash:
                    tried += 1
                lines = []
                run_agent(
                    Run(
                        work,
                        listeners=[
                            lambda e, lines=lines: (
                                e.kind == "done" and lines.append(f"[done] {e.data['text']}")
                            )
                        ],
                    ),
                    ScriptedModel(),
                    tools=TOOL_SCHEMAS,
                    resume=True,
                )
                check_invariants(work, lines, clean, ledger_at_crash)
                n2 += 1
    print(f"double-crash cases: {tried}")
    assert tried > 300  # the double-crash cases really ran (the README states the exact figure)


# ---- the crash moments mean what they say, and the outside world's log misses no effect -------------------------

SCENARIO_NAMES = ["lesson", "parallel", "idempotent", "parallel+idempotent"]
# What each write_report of a scenario's clean run writes, in order of its tool runs.
WRITES = {"lesson": {3: "report.txt"}, "parallel": {3: "report.txt", 4: "summary.txt"}}


def _log(work):
    path = work / "tool-runs.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _run_until(work, scenario, plan=None, resume=False, completed=None):
    """Run (or resume) a scenario in-process; `completed` collects each tool implementation that returned."""
    from harness.beyond.scenarios import run_scenario

    run = Run(work, clock=lambda: 1, crash=plan)
    if completed is not None:
        for name, impl in list(run.tool_impls.items()):

            def spy(workdir, input, _name=name, _impl=impl):
                # a tool that has any effect has its tool-runs.log line before the effect can happen
                assert _log(work) and _log(work)[-1].startswith(_name + " "), (_name, _log(work))
                output = _impl(workdir, input)
                completed.append(_name)
                return output

            run.tool_impls[name] = spy
    try:
        run_scenario(run, scenario, resume=resume)
    except SimulatedCrash:
        return False
    return True


@pytest.mark.parametrize("scenario", ["lesson", "parallel"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_after_tool_run_comes_only_after_the_tool_really_ran(tmp_path, scenario, n):
    work = tmp_path / "w"
    work.mkdir()
    if scenario == "lesson" and n == 4:
        pytest.skip("the lesson's task runs three tools")
    completed = []
    assert not _run_until(work, scenario, CrashPlan("after-tool-run", n), completed=completed)
    assert len(completed) == n  # the n-th tool returned before the crash, and no later one started
    assert len(_log(work)) == n
    written = WRITES[scenario].get(n)
    if written:  # its effect is on the disk: the file it was asked to write, with what it was asked to write
        cp = read_json(work / "checkpoint.json")
        pending = cp.get("pendingToolUses") or [cp.get("pendingToolUse")]
        asked = next(p["input"]["content"] for p in pending if p["input"].get("path") == written)
        assert (work / written).read_text(encoding="utf-8") == asked
    ledger = read_json(work / "effects.json") if (work / "effects.json").exists() else {}
    assert f"toolu_0{n}" not in ledger  # and it is not yet recorded


@pytest.mark.parametrize("scenario", SCENARIO_NAMES)
@pytest.mark.parametrize("label", list(ALL_LABELS))
def test_every_tool_that_had_an_effect_has_its_tool_runs_log_line(tmp_path, scenario, label):
    """README: a tool that had any effect always has its tool-runs.log line, whatever moment a kill hits: checked
    at each crash moment, and inside the tools themselves during the run and the resume (reconcile's re-runs)."""
    n = 1
    while True:
        work = tmp_path / f"w{n}"
        work.mkdir()
        if _run_until(work, scenario, CrashPlan(label, n), completed=[]):
            break  # the run no longer reaches this occurrence
        for name, call in (("report.txt", "toolu_03"), ("summary.txt", "toolu_04")):
            if (work / name).exists():
                assert any(line.endswith(" " + call) for line in _log(work)), (label, n, name)
        ledger = read_json(work / "effects.json") if (work / "effects.json").exists() else {}
        assert set(ledger) <= {line.split()[1] for line in _log(work)}, (label, n)
        # the resume runs the tools again where reconcile says so (a killed first save: a fresh start)
        assert _run_until(work, scenario, resume=(work / "checkpoint.json").exists(), completed=[])
        n += 1
    assert n > 1
