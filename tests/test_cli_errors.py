"""The command line on bad input: one or two Japanese lines on stderr, no traceback, files untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import run_cli

HEAVY = ("anthropic", "ipywidgets", "matplotlib")


def assert_clean_refusal(proc, *fragments):
    assert proc.returncode not in (0, 137), proc.stdout
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr


def crashed_workdir(workdir, label="after-effect-write:3"):
    assert run_cli(workdir, env={"CRASH_AFTER": label}).returncode == 137
    return {p.name: p.read_bytes() for p in workdir.iterdir()}


@pytest.mark.parametrize(
    "name, content, fragment",
    [
        ("checkpoint.json", b'{"version":1,"turns":3,"pendingT', "のパースに失敗しました"),
        ("checkpoint.json", b'{"version": 3}', "version=3 です"),
        ("checkpoint.json", b'{"version": 1, "task": 3}', "形が正しくありません"),
        ("checkpoint.json", bytes(range(256)), "のパースに失敗しました"),
        ("checkpoint.json", '{"task": "営業"}'.encode("utf-16"), "のパースに失敗しました"),
        ("effects.json", b'{"toolu_03": {"name": "write_rep', "副作用台帳"),
        ("effects.json", b'["toolu_03"]', "副作用台帳"),
    ],
)
def test_resume_refuses_a_hostile_file_and_changes_nothing(workdir, name, content, fragment):
    crashed_workdir(workdir)
    (workdir / name).write_bytes(content)
    before = {p.name: p.read_bytes() for p in workdir.iterdir()}
    proc = run_cli(workdir, "--resume")
    assert_clean_refusal(proc, fragment, name)
    assert {p.name: p.read_bytes() for p in workdir.iterdir()} == before


def test_resume_with_nothing_to_resume(workdir):
    assert_clean_refusal(run_cli(workdir, "--resume"), "checkpoint.json が見つかりません", "--resume なし")
    assert_clean_refusal(run_cli(workdir / "nowhere", "--resume"), "作業フォルダ")


def test_resume_refuses_a_directory_in_place_of_the_checkpoint(workdir):
    crashed_workdir(workdir)
    (workdir / "checkpoint.json").unlink()
    (workdir / "checkpoint.json").mkdir()
    assert_clean_refusal(run_cli(workdir, "--resume"), "ファイルではありません")


@pytest.mark.parametrize("value", ["after-save-c:1", "after-save-a", "after-save-a:0", "after-save-a:x"])
def test_bad_crash_after_is_refused_before_anything_happens(workdir, value):
    proc = run_cli(workdir, env={"CRASH_AFTER": value})
    assert_clean_refusal(proc, f"CRASH_AFTER={value}", "after-effect-write")
    assert list(workdir.iterdir()) == []


@pytest.mark.parametrize("digits", [19, 5000])
def test_a_crash_count_no_run_reaches_is_refused_by_name_in_one_short_line(workdir, digits):
    value = "after-save-a:" + "9" * digits
    proc = run_cli(workdir, env={"CRASH_AFTER": value})
    assert_clean_refusal(proc, "CRASH_AFTER=after-save-a:99", "after-effect-write")
    assert max(len(line) for line in proc.stderr.splitlines()) < 400  # not the 5,000 digits
    assert list(workdir.iterdir()) == []


def test_bad_crash_mode_and_bad_argument(workdir):
    assert_clean_refusal(run_cli(workdir, env={"CRASH_MODE": "nuke"}), "CRASH_MODE=nuke")
    assert_clean_refusal(run_cli(workdir, "--frobnicate"), "使い方")


def test_fresh_run_cleans_outputs_but_keeps_and_creates_notes(workdir):
    crashed_workdir(workdir)
    (workdir / "checkpoint.json.tmp").write_text("stray")
    (workdir / "sales-notes.txt").write_text("- 自分のメモ\n", encoding="utf-8")
    assert run_cli(workdir, env={"CRASH_AFTER": "after-save-a:1"}).returncode == 137
    assert sorted(p.name for p in workdir.iterdir()) == [
        ".harness-workdir",
        "checkpoint.json",
        "sales-notes.txt",
    ]
    assert (workdir / "sales-notes.txt").read_text(encoding="utf-8") == "- 自分のメモ\n"
    assert run_cli(workdir, "--resume").returncode == 0
    assert "- 自分のメモ" in (workdir / "report.txt").read_text(encoding="utf-8")


def test_fixed_clock_makes_two_runs_byte_identical(tmp_path):
    outputs = []
    for name in ("one", "two"):
        wd = tmp_path / name
        run_cli(wd, env={"CRASH_AFTER": "after-effect-write:2", "HARNESS_FIXED_TIME_MS": "1767225600000"})
        run_cli(wd, "--resume", env={"HARNESS_FIXED_TIME_MS": "1767225600000"})
        outputs.append({p.name: p.read_bytes() for p in wd.iterdir()})
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0]["effects.json"])["toolu_02"]["at"] == 1767225600000


@pytest.mark.parametrize("crash_lab", [False, True], ids=["plain", "crash-lab-hooks"])
def test_command_line_does_not_import_heavy_libraries(workdir, tmp_path, crash_lab):
    """Nor does a run the Crash Lab watches (its hooks live in harness.lab, beside the notebook helpers)."""
    events = tmp_path / "events.jsonl"
    env = {**os.environ, "HARNESS_EVENTS_FILE": str(events), "HARNESS_SLOW_MS": "1"} if crash_lab else None
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", "--workdir", str(workdir)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 0
    lines = [line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    imported = {name.split(".")[0] for name in lines}
    assert "harness" in imported  # the probe sees the package's own imports
    assert not imported & {*HEAVY, "IPython"}
    assert ("harness.lab.hooks" in lines) == crash_lab and events.exists() == crash_lab


def test_a_kill_inside_the_writer_says_the_save_never_reached_the_disk(workdir):
    proc = run_cli(workdir, env={"CRASH_AFTER": "checkpoint-before-rename:3"})
    assert proc.returncode == 137
    lines = proc.stdout.splitlines()
    assert lines[-2] == "[turn 2][save A] pending=count_words"  # the save's own line came first
    assert lines[-1].startswith(
        "[kill] checkpoint-before-rename:3 で疑似キル（直前の保存は rename の前で止まり"
    )
    assert '"turns": 1' in (workdir / "checkpoint.json").read_text(encoding="utf-8")


def test_the_engine_does_not_silently_drop_the_scenario_flags(workdir):
    for flag in ("--parallel", "--idempotent"):
        proc = run_cli(workdir, "--engine", "dbos", flag)
        assert proc.returncode == 2 and proc.stdout == ""
        assert "--engine dbos は --parallel や --idempotent と一緒には使えません" in proc.stderr


def test_a_folder_that_cannot_be_made_is_not_told_to_resume(tmp_path):
    """A run that could not even make its folder has no checkpoint: the advice is a fresh run, never --resume."""
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    proc = run_cli(blocker / "sub")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "--resume なしで最初から" in proc.stderr and "--resume で続きから" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "name", ["we ird\nx", "tab\there", "esc\x1b[31m", "nel\x85x"], ids=["newline", "tab", "esc", "nel"]
)
@pytest.mark.parametrize("resume", [False, True])
def test_a_work_folder_name_that_cannot_be_shown_is_refused_in_one_line_before_anything_is_made(
    tmp_path, name, resume
):
    """A newline in the folder's name would split every message that names it, and the command a refusal gives would
    name another folder: such a name is refused up front (exit 2), nothing is created."""
    proc = run_cli(tmp_path / name, *(["--resume"] if resume else []))
    assert_clean_refusal(proc, "改行などの制御文字")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "workdir", ["x" * 256, "x/" * 2100, "日本語" * 30], ids=["name", "path", "utf8-bytes"]
)
def test_a_work_folder_name_too_long_for_the_system_is_a_usage_error_in_one_short_line(tmp_path, workdir):
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--workdir", workdir, "--resume"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "は長すぎます" in proc.stderr, proc
    assert len(proc.stderr) < 400 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("plan", ["after-tool-run:4", "after-save-b:99"])
def test_a_crash_the_task_never_reaches_is_said_not_silently_skipped(workdir, plan):
    """An instructor who asks for a crash the run never gets to is told it did not crash (the task still finishes)."""
    proc = run_cli(workdir, env={"CRASH_AFTER": plan})
    assert proc.returncode == 0 and "[done]" in proc.stdout and "[kill]" not in proc.stdout, proc
    assert proc.stderr.startswith(f"注意: CRASH_AFTER={plan} の時点に届く前にタスクが終わりました"), (
        proc.stderr
    )


def test_a_crash_that_happens_adds_no_note(workdir):
    proc = run_cli(workdir, env={"CRASH_AFTER": "after-tool-run:3"})
    assert proc.returncode == 137 and proc.stderr == "", proc


def test_resume_of_a_folder_that_is_not_there_names_where_it_looked_and_both_ways_on(tmp_path):
    """Typed in the wrong folder, a relative --workdir names nothing; the refusal shows the full path it looked at and
    says to go to the folder the task was started in, or to start a new one without --resume."""
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--workdir", "作業 1", "--resume"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1 and proc.stdout == "", proc
    assert f"作業フォルダ {tmp_path / '作業 1'} がありません" in proc.stderr, proc.stderr
    assert "そのフォルダへ移るか --workdir にその場所を指定して" in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []
