"""Two promises checked with real processes: one writer per work folder (a second run is refused while the first
holds the folder; a SIGKILLed holder's lock is free again), and a fresh start's clean-up (interrupted inside its
very first checkpoint write, it leaves nothing an abandoned run could be revived from)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hostile import assert_refused, child_env, cli, crashed, log_lines

DONE_OK = "[done] report.txt にレポートを書き出しました。タスク完了。"
BUSY = "は別のプロセスが使用中です"


def slow_run(workdir, *args):
    """A run slowed to 300 ms a step, already holding the folder (its first line is printed) when this returns."""
    child = subprocess.Popen(
        [sys.executable, "-m", "harness", "--workdir", str(workdir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env({"HARNESS_SLOW_MS": "300"}),
    )
    first = child.stdout.readline()
    assert first.startswith(("[turn 1][save A]", "[resume]")), first
    return child


@pytest.mark.parametrize("second", [[], ["--resume"]])
def test_a_second_run_on_a_folder_in_use_is_refused(workdir, second):
    first = slow_run(workdir)
    try:
        proc = cli(workdir, *second)
        assert_refused(proc, str(workdir), BUSY)
        assert proc.stdout == ""
        out, err = first.communicate(timeout=30)
    finally:
        first.kill()
    assert first.returncode == 0 and out.splitlines()[-1] == DONE_OK, err
    assert log_lines(workdir) == ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]


def test_a_killed_holders_lock_is_free_again(workdir):
    first = slow_run(workdir)
    first.kill()  # SIGKILL: no clean-up code runs; the kernel drops the lock with the process
    assert first.wait(timeout=10) == -9
    resumed = cli(workdir, "--resume")
    assert resumed.returncode == 0 and resumed.stdout.splitlines()[-1] == DONE_OK, resumed.stderr
    again = slow_run(workdir, "--resume")  # and the next holder is again exclusive
    try:
        assert_refused(cli(workdir), BUSY)
    finally:
        again.kill()
        again.wait(timeout=10)


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
