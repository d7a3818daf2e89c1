"""A second round of attacks, each found by a stranger probing the harness after the first round was fixed:
files any scenario would clean, a closed stdout, control characters in settings, a link loop in a model path, an
events file aimed at a FIFO or a state file, a full disk. Through the real command line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import run_cli
from harness import Run, execute_tool
from harness.tools import ToolError
from harness.vocab import DB_FILES, SUMMARY_FILE


@pytest.mark.parametrize("name", [SUMMARY_FILE, *DB_FILES])
def test_a_lesson_run_will_not_adopt_a_folder_holding_a_file_another_scenario_would_clean(workdir, name):
    """Once the marker is written, a later --parallel or --engine dbos fresh run may clean these names: so a folder
    that already holds one (the user's own) is refused before any marker is written."""
    (workdir / name).write_text("the user's own file\n", encoding="utf-8")
    proc = run_cli(workdir)
    assert (
        proc.returncode == 1
        and name in proc.stderr
        and "自分で作っていないファイルは消しません" in proc.stderr
    )
    assert (workdir / name).read_text(encoding="utf-8") == "the user's own file\n"
    assert not (workdir / ".harness-workdir").exists()


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


@pytest.mark.parametrize("crash, code", [(None, 0), ("after-save-a:2", 137)])
def test_a_closed_stdout_changes_neither_the_outcome_nor_the_exit_code(workdir, crash, code):
    env = {k: v for k, v in os.environ.items() if k not in ("CRASH_AFTER", "CRASH_MODE")}
    if crash:
        env["CRASH_AFTER"] = crash
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--workdir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=60,
        check=False,
        close_fds=True,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (workdir / "report.txt").exists() == (crash is None)


@pytest.mark.parametrize(
    "variable, value",
    [("CRASH_AFTER", "\x1b[31mred"), ("CRASH_MODE", "\x1b]0;title\x07"), ("HARNESS_SLOW_MS", "\u202e9")],
)
def test_control_characters_in_settings_never_reach_the_terminal_raw(workdir, variable, value):
    proc = run_cli(workdir, env={variable: value})
    assert proc.returncode == 1
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr and "\u202e" not in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_workdir_name_with_an_escape_sequence_is_shown_escaped(tmp_path):
    work = tmp_path / "w\x1b[2J"
    proc = run_cli(work, "--resume")
    assert proc.returncode == 1 and "\x1b" not in proc.stderr and "\\x1b" in proc.stderr


def test_an_events_file_on_a_fifo_does_not_hang_the_run(workdir, tmp_path):
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    proc = run_cli(workdir, env={"HARNESS_EVENTS_FILE": str(fifo)})
    assert proc.returncode == 0, proc.stderr
    assert (workdir / "report.txt").exists()


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json", "tool-runs.log"])
def test_an_events_file_aimed_at_a_state_file_is_refused(workdir, name):
    proc = run_cli(workdir, env={"HARNESS_EVENTS_FILE": str(workdir / name)})
    assert proc.returncode == 1 and "HARNESS_EVENTS_FILE" in proc.stderr
    assert not (workdir / "checkpoint.json").exists()


@pytest.mark.parametrize(
    "variable, value",
    [
        ("HARNESS_SLOW_MS", "9" * 400),
        ("HARNESS_FIXED_TIME_MS", "1" * 5000),
        ("HARNESS_API_DEADLINE_S", "1e300"),
    ],
)
def test_absurd_numbers_in_settings_are_refused_up_front(workdir, variable, value):
    args = ("--real",) if variable == "HARNESS_API_DEADLINE_S" else ()
    proc = run_cli(workdir, *args, env={variable: value, "ANTHROPIC_API_KEY": "fake"})
    assert proc.returncode == 1 and variable in proc.stderr and "Traceback" not in proc.stderr
    assert not (workdir / "tool-runs.log").exists()  # refused before any tool ran
