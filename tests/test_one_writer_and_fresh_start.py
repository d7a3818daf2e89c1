"""Two promises checked with real processes: one writer per work folder (a second run is refused while the first
holds the folder; a SIGKILLed holder's lock is free again), and a fresh start's clean-up (interrupted inside its
very first checkpoint write, it leaves nothing an abandoned run could be revived from)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from hostile import assert_refused, child_env, cli, crashed, log_lines, snapshot

DONE_OK = "[done] report.txt にレポートを書き出しました。タスク完了。"
BUSY = "は別のプロセスが使用中です"


HOLD = "999999"  # HARNESS_SLOW_MS: the run pauses ~17 minutes after each step, i.e. until the test stops it


def holding_run(workdir, *args):
    """A run that holds the folder until it is stopped: its first line is printed (the lock is taken before the
    run starts) and it pauses after that step, so it still holds the folder however slow the machine is."""
    child = subprocess.Popen(
        [sys.executable, "-m", "harness", "--workdir", str(workdir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env({"HARNESS_SLOW_MS": HOLD}),
    )
    first = child.stdout.readline()
    assert first.startswith(("[turn 1][save A]", "[resume]")), (first, child.stderr.read())
    return child


def stop(child, sig=signal.SIGKILL):
    child.send_signal(sig)
    return child.communicate(timeout=120)  # only a hung child fails here


SCENARIOS = [[], ["--parallel"], ["--idempotent"], ["--parallel", "--idempotent"]]


@pytest.mark.parametrize("second", [[], ["--resume"]])
def test_a_second_run_on_a_folder_in_use_is_refused(workdir, second):
    first = holding_run(workdir)
    try:
        proc = cli(workdir, *second, timeout=120)
        assert_refused(proc, str(workdir), BUSY)
        assert proc.stdout == ""
        _, err = stop(first, signal.SIGINT)  # the holder was not disturbed: Ctrl-C stops it where it paused
    finally:
        first.kill()
    assert first.returncode == 130, err
    assert log_lines(workdir) == []  # nothing ran: neither the holder (paused at point A) nor the refused run
    resumed = cli(workdir, "--resume", timeout=120)
    assert resumed.returncode == 0 and resumed.stdout.splitlines()[-1] == DONE_OK, resumed.stderr
    assert log_lines(workdir) == ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]


# Each mode holds the folder once and is refused once, always by another mode (the lesson's against itself is above):
# every mode takes the lock and every mode respects it.
ROTATION = list(zip(SCENARIOS, SCENARIOS[1:] + SCENARIOS[:1]))


@pytest.mark.parametrize(
    "holder, second",
    ROTATION,
    ids=[f"{' '.join(h) or 'lesson'} holds, {' '.join(s) or 'lesson'} refused" for h, s in ROTATION],
)
def test_every_mode_takes_the_folder_and_respects_it(workdir, holder, second):
    """README: one writer per work folder, in every mode (--parallel, --idempotent, both), fresh or --resume."""
    first = holding_run(workdir, *holder)
    try:
        before = snapshot(workdir)
        for resume in ([], ["--resume"]):
            proc = cli(workdir, *second, *resume, timeout=120)
            assert_refused(proc, str(workdir), BUSY)
            assert proc.stdout == ""
        assert snapshot(workdir) == before  # the refused runs changed nothing
    finally:
        stop(first)


def test_a_killed_holders_lock_is_free_again(workdir):
    first = holding_run(workdir)
    stop(first)  # SIGKILL: no clean-up code runs; the kernel drops the lock with the process
    assert first.returncode == -9
    resumed = cli(workdir, "--resume", timeout=120)
    assert resumed.returncode == 0 and resumed.stdout.splitlines()[-1] == DONE_OK, resumed.stderr
    # and the next holder is again exclusive (it pauses after its [resume] line)
    again = holding_run(workdir, "--resume")
    try:
        assert_refused(cli(workdir, timeout=120), BUSY)
    finally:
        stop(again)


@pytest.mark.parametrize("mode", ["simulated", "sigkill"])
@pytest.mark.parametrize("old", ["after-effect-write:3", "after-save-a:2", "after-save-b:3"])
def test_a_fresh_start_killed_in_its_first_save_leaves_nothing_to_resume(workdir, old, mode):
    crashed(workdir, old)  # an abandoned run: its checkpoint and its ledger are on disk
    proc = cli(workdir, env={"CRASH_AFTER": "checkpoint-torn-write:1", "CRASH_MODE": mode})
    assert proc.returncode in (137, -9), proc.stderr
    assert not (workdir / "checkpoint.json").exists() and not (workdir / "effects.json").exists()
    resumed = cli(workdir, "--resume")
    assert_refused(resumed, "checkpoint.json が見つかりません", "--resume なしで最初から")
    assert resumed.stdout == ""  # the abandoned run was not revived
    fresh = cli(workdir)
    assert fresh.returncode == 0 and fresh.stdout.splitlines()[-1] == DONE_OK
    assert json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))["turns"] == 3


def restore(workdir, files):
    for p in workdir.iterdir():
        p.unlink()
    for name, data in files.items():
        (workdir / name).write_bytes(data)


@pytest.mark.parametrize(
    "scenario, last",  # the abandoned run: killed after the ledger recorded its last side effect
    [("lesson", 3), ("parallel", 4), ("idempotent", 3), ("parallel+idempotent", 4)],
)
def test_a_fresh_start_killed_at_any_removal_leaves_no_checkpoint_beside_what_it_removed(
    workdir, scenario, last, monkeypatch
):
    """README: a fresh start removes checkpoint.json first. Killed after any number of its removals, either the
    checkpoint is gone, or nothing else is: a checkpoint is never left beside a ledger or outputs it no longer
    matches (a --resume would then reuse a record of a report that is no longer there, or run a tool twice)."""
    import os

    from harness import SimulatedCrash
    from harness.beyond.parallel import load_checkpoint_v2
    from harness.beyond.scenarios import run_in_folder
    from harness.vocab import CRASH_LABELS

    assert "after-effect-write" in CRASH_LABELS
    with pytest.raises(SimulatedCrash):
        from harness import CrashPlan

        run_in_folder(workdir, scenario, crash=CrashPlan("after-effect-write", last))
    abandoned = {p.name: p.read_bytes() for p in workdir.iterdir()}
    outputs = {"report.txt", "summary.txt"} if "parallel" in scenario else {"report.txt"}
    assert {"checkpoint.json", "effects.json", "tool-runs.log", *outputs} <= set(abandoned)
    real_unlink = os.unlink
    kills = 0
    for k in range(50):
        restore(workdir, abandoned)
        removals, started = [], []  # the removals so far; whether the new run has begun (its first save)

        def dying_unlink(path, *args, _k=k, _removals=removals, _started=started, **kwargs):
            if not _started and len(_removals) == _k:
                raise SimulatedCrash(f"killed before removal {_k + 1}")
            _removals.append(path)
            return real_unlink(path, *args, **kwargs)

        monkeypatch.setattr(os, "unlink", dying_unlink)
        try:
            run_in_folder(
                workdir, scenario, listeners=[lambda e, s=started: e.kind == "save_a" and s.append(1)]
            )
        except SimulatedCrash:
            kills += 1
        else:
            break  # the clean-up had fewer than k + 1 removals: it was killed before each of them
        finally:
            monkeypatch.setattr(os, "unlink", real_unlink)
        now = {p.name: p.read_bytes() for p in workdir.iterdir()}
        if "checkpoint.json" in now:
            assert {n: now.get(n) for n in abandoned} == abandoned, f"killed before removal {k + 1}"
            load_checkpoint_v2(
                workdir / "checkpoint.json"
            )  # and it still loads, as the abandoned run left it
    assert kills >= 4  # killed before each of the removals of the previous run's files (and finished after)
