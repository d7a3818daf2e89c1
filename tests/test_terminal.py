"""Hostile terminals, through the real command line: ASCII and Latin-1 output, --help, a reader that goes away
(`| head -1`), a closed stdout, a full disk behind stdout, an events file that cannot be written or is a FIFO, a work
folder whose name holds an escape sequence, Ctrl-C. The task always finishes or stops resumably, with no traceback and
no "Exception ignored"."""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
import sys

import pytest
from hostile import INTERRUPT_HOOK, child_env, cli, log_lines

from conftest import TRANSCRIPTS

DONE_OK = "[done] report.txt にレポートを書き出しました。タスク完了。"
INTERRUPTED = "[中断] Ctrl-C で止めました。チェックポイントは直前の保存のまま有効です。--resume で続きから再開できます。"
ALL_RAN = ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]
HOLD = "999999"  # HARNESS_SLOW_MS: a run pauses ~17 minutes after each step, i.e. until the test stops it


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def assert_finished(work) -> None:
    assert log_lines(work) == ALL_RAN
    assert "営業メモのレポート" in (work / "report.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("arg", ["--help", "-h"])
def test_help_works_on_a_terminal_without_japanese(tmp_path, arg, encoding):
    proc = subprocess.run(
        harness(arg),
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
        env=child_env({"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": encoding}),
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode(encoding)
    assert text.isascii() and "--resume" in text and "HARNESS_API_DEADLINE_S" in text
    assert codecs.decode(text, "unicode_escape").startswith("使い方: python -m harness")
    assert proc.stderr == b"" and list(tmp_path.iterdir()) == []  # help does nothing else


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_crash_and_resume_on_a_terminal_without_japanese_keep_their_exit_codes(workdir, encoding):
    env = {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": encoding}
    crashed = cli(workdir, env={**env, "CRASH_AFTER": "after-effect-write:3"})
    resumed = cli(workdir, "--resume", env=env)
    case = TRANSCRIPTS["after-effect-write:3"]
    for proc, step in ((crashed, case[0]), (resumed, case[1])):
        assert proc.returncode == step["exit"], proc.stderr
        assert proc.stdout.isascii() and "Traceback" not in proc.stderr
        assert codecs.decode(proc.stdout, "unicode_escape").splitlines() == step["stdout"]
    assert log_lines(workdir).count("write_report toolu_03") == 1


def test_a_reader_that_goes_away_does_not_stop_the_task(workdir):
    # the lesson's demo piped into `head -1`: head exits after one line, every later print meets a closed pipe
    script = (
        f'"{sys.executable}" -m harness --workdir "{workdir}" | head -1; echo "rc=${{PIPESTATUS[0]}}" >&2'
    )
    proc = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=child_env({"HARNESS_SLOW_MS": "30"}),
    )
    assert proc.stdout == "[turn 1][save A] pending=read_notes\n"
    assert proc.stderr == "rc=0\n"  # no "Exception ignored", no BrokenPipeError, no warning
    assert_finished(workdir)


def test_a_pipe_closed_by_the_reader_mid_run(workdir):
    child = subprocess.Popen(
        harness("--workdir", str(workdir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env({"HARNESS_SLOW_MS": "50"}),
    )
    assert child.stdout.readline() == b"[turn 1][save A] pending=read_notes\n"
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0 and err == ""
    assert_finished(workdir)


def test_a_full_disk_behind_stdout_does_not_stop_the_task(workdir):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            harness("--workdir", str(workdir)),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert len(proc.stderr.splitlines()) <= 1  # at most one warning that the output is gone
    assert_finished(workdir)


@pytest.mark.parametrize("where", ["missing-folder", "a-folder"])
def test_an_events_file_that_cannot_be_written_is_refused_before_the_task_starts(workdir, tmp_path, where):
    events = tmp_path / "nowhere" / "events.jsonl" if where == "missing-folder" else tmp_path
    proc = cli(workdir, env={"HARNESS_EVENTS_FILE": str(events)})
    assert proc.returncode == 1 and proc.stdout == "", proc
    assert len(proc.stderr.splitlines()) == 1 and "に追記できません" in proc.stderr, proc.stderr
    assert list(workdir.iterdir()) == []  # nothing written


def test_an_events_file_that_breaks_halfway_does_not_stop_the_task(workdir, tmp_path, capsys):
    """Written at first, then a folder in its place (a disk that filled, a file someone moved): the task goes on,
    with one warning; the listener that failed is dropped."""
    from harness import Run, ScriptedModel, run_agent
    from harness.lab.hooks import crash_lab_listeners
    from harness.transcript import print_transcript

    events = tmp_path / "events.jsonl"
    env = {"HARNESS_EVENTS_FILE": str(events)}

    def break_it(event) -> None:
        if event.kind == "save_b" and events.is_file():
            events.unlink()
            events.mkdir()

    run = Run(workdir, listeners=[print_transcript, break_it, *crash_lab_listeners(env, None)])
    assert run_agent(run, ScriptedModel(), "task", [], resume=False)
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == DONE_OK
    assert len(err.splitlines()) == 1 and err.startswith("[警告]"), err
    assert run.failed_listeners and events.is_dir()
    assert_finished(workdir)


@pytest.mark.parametrize("signals", [1, 2])
def test_ctrl_c_ends_with_one_line_and_the_run_resumes(workdir, signals):
    child = subprocess.Popen(
        harness("--workdir", str(workdir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env({"HARNESS_SLOW_MS": HOLD}),
    )
    try:
        # the state: point A saved, the run paused after it (HOLD: until it is stopped), nothing run yet
        assert child.stdout.readline() == "[turn 1][save A] pending=read_notes\n"
        for _ in range(signals):  # a second Ctrl-C at once, while the first is being handled
            child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=120)  # only a hung child fails here
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert err.splitlines() == [INTERRUPTED], err
    resumed = cli(workdir, "--resume")
    assert resumed.returncode == 0 and resumed.stdout.splitlines()[-1] == DONE_OK, resumed.stderr
    assert log_lines(workdir).count("write_report toolu_03") == 1


@pytest.mark.parametrize("saved", [False, True], ids=["before-the-first-save", "after-a-save"])
def test_ctrl_c_advice_follows_what_is_on_disk_and_following_it_finishes_the_task(
    workdir, monkeypatch, saved
):
    """Ctrl-C says --resume only when there is a checkpoint to resume; before the first save it says to start again,
    and the command it names (a fresh run, or --resume) finishes the task."""
    import harness.__main__ as entry
    from conftest import cli_in_process

    if saved:
        assert cli(workdir, env={"CRASH_AFTER": "after-save-b:1"}).returncode == 137

    def interrupted(options, env):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(entry, "main", interrupted)
        code, _, err = cli_in_process("--workdir", str(workdir))
    assert code == 130 and "Traceback" not in err, err
    if saved:
        assert err.splitlines() == [INTERRUPTED], err
        follow = cli(workdir, "--resume")
    else:
        assert "--resume なしで最初から" in err and "--resume で続きから" not in err, err
        follow = cli(workdir)
    assert follow.returncode == 0 and follow.stdout.splitlines()[-1] == DONE_OK, follow.stderr


# Ctrl-C while `python -m harness` is still starting: the signal lands as a module starts to be imported (a state, not
# a time: a hook installed by sitecustomize sends it to its own process right then), at each stage of start-up from
# the package's first line to the command line's own imports.
START_UP_MOMENTS = [
    ("harness.texts", False),  # the message catalogue itself loading (the Ctrl-C is held back until it has)
    ("tomllib", True),
    ("harness.transcript", False),
    ("harness.store", True),
    ("harness.models", False),
    ("harness.loop", True),
    ("harness.__main__", False),
    ("harness.settings", True),
    ("sqlite3", False),
]


def folder_bytes(work) -> dict:
    return {p.name: p.read_bytes() for p in sorted(work.iterdir())}


@pytest.mark.parametrize("module, saved", START_UP_MOMENTS, ids=[m for m, _ in START_UP_MOMENTS])
def test_ctrl_c_while_the_command_starts_ends_with_one_line_and_the_same_command_finishes(
    workdir, tmp_path, module, saved
):
    import os

    from harness.texts import INTERRUPTED_AT_START

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(INTERRUPT_HOOK, encoding="utf-8")
    args = ("--workdir", str(workdir), *(["--resume"] if saved else []))
    if saved:  # a task stopped at point B of turn 1: the interrupted command is its --resume
        assert cli(workdir, env={"CRASH_AFTER": "after-save-b:1"}).returncode == 137
    before = folder_bytes(workdir)
    path = os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        harness(*args),
        capture_output=True,
        text=True,
        env=child_env({"INTERRUPT_AT_IMPORT": module, "PYTHONPATH": path}),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.splitlines() == [INTERRUPTED_AT_START] and proc.stdout == "", proc.stderr
    assert folder_bytes(workdir) == before  # nothing was read into a decision or written
    again = subprocess.run(
        harness(*args), capture_output=True, text=True, env=child_env(), timeout=120, check=False
    )
    assert again.returncode == 0 and again.stdout.splitlines()[-1] == DONE_OK, again.stderr
    assert_finished(workdir)


@pytest.mark.parametrize("read_its_arguments", [False, True])
@pytest.mark.parametrize("saved", [False, True])
def test_a_ctrl_c_outside_the_command_lines_handling_advises_by_what_it_had_started(
    workdir, monkeypatch, capsys, read_its_arguments, saved
):
    """A Ctrl-C that escapes the command's handling (before it read its arguments, or while it reported an ending) ends with one
    line and 130: "nothing started" only before the arguments were read, else the advice follows the disk."""
    import harness.__main__ as entry
    from harness.texts import INTERRUPTED_AT_START, INTERRUPTED_BEFORE_SAVE

    if saved:
        assert cli(workdir, env={"CRASH_AFTER": "after-save-b:1"}).returncode == 137

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "argv", ["harness", "--workdir", str(workdir)])
    monkeypatch.setattr(entry, "run_command" if read_its_arguments else "parse_args", interrupted)
    before = signal.getsignal(signal.SIGINT)
    try:
        assert entry._run() == 130
    finally:
        signal.signal(signal.SIGINT, before)
    expected = INTERRUPTED_AT_START
    if read_its_arguments:
        expected = INTERRUPTED if saved else INTERRUPTED_BEFORE_SAVE
    assert capsys.readouterr().err.splitlines() == [expected]


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


def test_a_workdir_name_with_an_escape_sequence_is_shown_escaped(tmp_path):
    work = tmp_path / "w\x1b[2J"
    proc = cli(work, "--resume")
    assert (
        proc.returncode == 2 and "\x1b" not in proc.stderr and "\\x1b" in proc.stderr
    )  # refused, shown escaped


def test_an_events_file_on_a_fifo_is_refused_at_once_never_hanging_the_run(workdir, tmp_path):
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    proc = cli(workdir, env={"HARNESS_EVENTS_FILE": str(fifo)})
    assert proc.returncode == 1 and "に追記できません" in proc.stderr, proc.stderr
    assert list(workdir.iterdir()) == []  # nothing written


@pytest.mark.parametrize("state", ["empty", "database", "resume"])
def test_a_ctrl_c_before_the_engine_took_over_says_only_what_is_on_disk(tmp_path, state):
    """A Ctrl-C while DBOS is still being imported reaches cli()'s own handler: with no workflow anywhere it says to
    start again (the exact command), never that a checkpoint is valid; with the folder's dbos.sqlite, or on a
    --resume, that the workflow's record stays and --engine dbos --resume continues it."""
    from harness.__main__ import _interrupted, parse_args

    work = tmp_path / "w"
    work.mkdir()
    if state == "database":
        (work / "dbos.sqlite").write_bytes(b"")
    options = parse_args(
        ["--engine", "dbos", "--workdir", str(work), *(["--resume"] if state == "resume" else [])]
    )
    line = _interrupted(options)
    assert "チェックポイント" not in line
    if state == "empty":
        assert line.endswith(
            f"python -m harness --engine dbos --workdir {work} で最初から実行してください。"
        ), line
    else:
        assert "--engine dbos --resume で続きから再開できます" in line, line
