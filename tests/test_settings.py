"""Every setting from the environment is read exactly as documented, or refused with its name and what it accepts.

Nothing is silently ignored: a switch spelt `true`, a misspelt HARNESS_ name, an engine setting without the engine,
an events file aimed at the task's own files, a number with 400 digits. A refusal happens before anything is
written, and shows a control character in a value escaped.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import harness.__main__ as entry
from conftest import cli_in_process, run_cli
from harness import settings
from harness.lab.process import child_env
from harness.vocab import (
    CLEANED_BY_A_FRESH_START,
    MARKER_FILE,
    MODE_FILE,
    NOTES_FILE,
    STATE_FILES,
    SUMMARY_FILE,
)

# Values a person might mean as "on" or "off" but that are not the documented 1 / 0.
SWITCH_TYPOS = [
    "true",
    "yes",
    "on",
    "TRUE",
    "1 ",
    " 1",
    "01",
    "2",
    "-1",
    "１",
    "0 ",
    "false",
    "no",
    "off",
    "1\n",
]


def refused(code: int, out: str, err: str, name: str) -> None:
    assert code == 1 and out == "", (code, out, err)
    assert (
        err.startswith("エラー: ") and name in err and "Traceback" not in err and "予期しない" not in err
    ), err


def nothing_written(folder) -> None:
    assert not os.path.lexists(folder), sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize("name", [*settings.SWITCHES, "HARNESS_IDEMPOTENT_TOOLS"])
@pytest.mark.parametrize("value", SWITCH_TYPOS)
def test_a_switch_other_than_1_or_0_is_refused_with_its_accepted_values(tmp_path, name, value):
    work = tmp_path / "work"
    for engine in ([], ["--engine", "dbos"]):
        code, out, err = cli_in_process(*engine, "--workdir", str(work), env={name: value})
        refused(code, out, err, f"{name}=")
        assert "1（オン）か 0（オフ）" in err
        nothing_written(work)


@pytest.mark.parametrize("value", ["", "0"])
def test_idempotent_tools_off_is_read_as_off_without_the_engine(workdir, value):
    code, _, err = cli_in_process("--workdir", str(workdir), env={"HARNESS_IDEMPOTENT_TOOLS": value})
    assert code == 0, err
    assert not (workdir / "report.txt").read_text(encoding="utf-8").startswith("<!--")


@pytest.mark.parametrize("name", ["HARNESS_IDEMPOTENT_TOOLS", "HARNESS_TASK_ID", "HARNESS_EXECUTOR_ID"])
@pytest.mark.parametrize("flags", [[], ["--parallel"], ["--idempotent"], ["--parallel", "--idempotent"]])
def test_an_engine_setting_without_the_engine_is_refused_not_ignored(tmp_path, name, flags):
    work = tmp_path / "work"
    value = "1" if name == "HARNESS_IDEMPOTENT_TOOLS" else "task-1"
    for resume in ([], ["--resume"]):
        code, out, err = cli_in_process(*flags, *resume, "--workdir", str(work), env={name: value})
        refused(code, out, err, name)
        assert "--engine dbos" in err
        nothing_written(work)


def test_a_database_url_setting_without_the_engine_is_refused(tmp_path):
    work = tmp_path / "work"
    code, out, err = cli_in_process("--workdir", str(work), env={"HARNESS_DATABASE_URL": "sqlite:///x.db"})
    refused(code, out, err, "HARNESS_DATABASE_URL")
    nothing_written(work)


@pytest.mark.parametrize(
    "name", ["HARNESS_DEBGU", "HARNESS_IDEMPOTENT", "HARNESS_SLOW", "HARNESS_", "HARNESS_debug"]
)
def test_a_misspelt_setting_is_refused_by_name(tmp_path, name):
    work = tmp_path / "work"
    code, out, err = cli_in_process("--workdir", str(work), env={name: "1"})
    refused(code, out, err, name)
    assert "HARNESS_DEBUG" in err  # the settings there are
    nothing_written(work)


@pytest.mark.parametrize(
    "name, value",
    [("HARNESS_SLOW_MS", v) for v in ["1.5", " 10", "10 ", "-1", "1e3", "１０", "0x10", "9999999", "+5"]]
    + [("HARNESS_FIXED_TIME_MS", v) for v in ["-1", "1.0", " 1", "1" * 16, "1e12", "٣"]]
    + [
        ("HARNESS_API_DEADLINE_S", v)
        for v in [
            "1e3",
            " 5",
            "5 ",
            "1_0",
            "0",
            "0.0",
            "86401",
            "inf",
            "nan",
            "-1",
            ".5",
            "5.",
            "１０",
            "0x10",
        ]
    ]
    + [("ANTHROPIC_MODEL", v) for v in [" claude", "claude x", "claude\n", "-x", "claude\x1b[2J", "c" * 200]],
)
def test_a_number_or_name_not_as_documented_is_refused_before_anything_is_written(tmp_path, name, value):
    work = tmp_path / "work"
    for args in ([], ["--real"]):  # read the same way whether or not --real uses it
        code, out, err = cli_in_process(
            *args, "--workdir", str(work), env={name: value, "ANTHROPIC_API_KEY": "k"}
        )
        refused(code, out, err, f"{name}=")
        assert "\x1b" not in err
        nothing_written(work)


@pytest.mark.parametrize(
    "name, value, read",
    [
        ("HARNESS_API_DEADLINE_S", "30", 30.0),
        ("HARNESS_API_DEADLINE_S", "2.5", 2.5),
        ("HARNESS_API_DEADLINE_S", "86400", 86400.0),
        ("HARNESS_SLOW_MS", "0", 0),
        ("HARNESS_SLOW_MS", "999999", 999999),
        ("HARNESS_FIXED_TIME_MS", "0", 0),
        ("ANTHROPIC_MODEL", "claude-3-5-haiku@20241022", "claude-3-5-haiku@20241022"),
    ],
)
def test_documented_values_are_read_as_written(name, value, read):
    env = {name: value}
    got = {
        "HARNESS_API_DEADLINE_S": lambda: entry.api_deadline_from_env(env),
        "HARNESS_SLOW_MS": lambda: settings.whole_number(env, name, 6, "{value}"),
        "HARNESS_FIXED_TIME_MS": lambda: entry.clock_from_env(env)(),
        "ANTHROPIC_MODEL": lambda: settings.model_id(env),
    }[name]()
    assert got == read and type(got) is type(read)


@pytest.mark.parametrize("value", ["0", ""])
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), RuntimeError("a bug")])
def test_debug_off_keeps_an_ordinary_error_to_its_message(workdir, monkeypatch, value, error):
    def fail(options, env):
        raise error

    monkeypatch.setattr(entry, "main", fail)
    code, _, err = cli_in_process("--workdir", str(workdir), env={"HARNESS_DEBUG": value})
    assert code == 1 and err.startswith("エラー: ") and "Traceback" not in err, err


def test_debug_on_shows_the_error_itself(workdir, monkeypatch):
    def fail(options, env):
        raise RuntimeError("a bug")

    monkeypatch.setattr(entry, "main", fail)
    with pytest.raises(RuntimeError):
        cli_in_process("--workdir", str(workdir), env={"HARNESS_DEBUG": "1"})


def test_debug_0_is_off_and_1_is_on_for_every_reader_the_engine_included():
    # harness/beyond/engine_dbos.py reads HARNESS_DEBUG through settings.debug_on, like cli()
    assert settings.debug_on({"HARNESS_DEBUG": "0"}) is False
    assert settings.debug_on({}) is False
    assert settings.debug_on({"HARNESS_DEBUG": "1"}) is True


def test_debug_0_through_the_real_command_line_gives_no_traceback(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x", encoding="utf-8")
    proc = run_cli(not_a_folder / "work", env={"HARNESS_DEBUG": "0"})  # a file where a folder should be
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and proc.stderr.startswith("エラー: ")


# ---- HARNESS_EVENTS_FILE may not name any file of the task or the harness, however it is spelt -------------------

TASK_FILES = sorted(
    {*STATE_FILES, *CLEANED_BY_A_FRESH_START, NOTES_FILE, SUMMARY_FILE, MARKER_FILE, MODE_FILE}
    | {n + ".tmp" for n in (*STATE_FILES, NOTES_FILE, SUMMARY_FILE, "report.txt")}
    | {"events.jsonl", "lock"}
)


def spellings(workdir, name: str, tmp_path) -> dict[str, str]:
    """Ways to write the path of workdir/name: absolute, relative, with .., through a link to the file and to the
    folder."""
    link_to_file = tmp_path / f"link-{name}"
    link_to_file.symlink_to(workdir / name)
    link_to_folder = tmp_path / "folder-link"
    if not link_to_folder.exists():
        link_to_folder.symlink_to(workdir)
    return {
        "absolute": str(workdir / name),
        "relative": os.path.relpath(workdir / name),
        "dotdot": str(workdir / ".." / workdir.name / name),
        "dot": str(workdir / "." / name),
        "double-slash": str(workdir) + "//" + name,
        "link-to-file": str(link_to_file),
        "through-folder-link": str(link_to_folder / name),
    }


@pytest.mark.parametrize("name", TASK_FILES)
def test_an_events_file_inside_the_work_folder_is_refused_in_one_line(workdir, tmp_path, name):
    assert cli_in_process("--workdir", str(workdir), env={"CRASH_AFTER": "after-tool-run:3"})[0] == 137
    before = {p.name: p.read_bytes() for p in workdir.iterdir()}
    for how, value in spellings(workdir, name, tmp_path).items():
        for args in ([], ["--resume"], ["--parallel"], ["--idempotent", "--resume"]):
            code, out, err = cli_in_process(
                *args, "--workdir", str(workdir), env={"HARNESS_EVENTS_FILE": value}
            )
            refused(code, out, err, "HARNESS_EVENTS_FILE=")
            assert len(err.strip().splitlines()) == 1 and "作業フォルダ" in err, (how, err)
            assert {p.name: p.read_bytes() for p in workdir.iterdir()} == before, how


def test_an_events_file_naming_the_work_folder_itself_is_refused(workdir):
    for value in (str(workdir), str(workdir) + "/", str(workdir / ".")):
        code, out, err = cli_in_process("--workdir", str(workdir), env={"HARNESS_EVENTS_FILE": value})
        refused(code, out, err, "HARNESS_EVENTS_FILE=")


def test_an_events_file_is_compared_with_the_work_folder_however_that_is_spelt(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    for workdir, events in [
        ("alias", "real/report.txt"),
        ("real", "alias/report.txt"),
        ("./real/", "real/x"),
    ]:
        code, out, err = cli_in_process("--workdir", workdir, env={"HARNESS_EVENTS_FILE": events})
        refused(code, out, err, "HARNESS_EVENTS_FILE=")


@pytest.mark.parametrize("tail", ["", "-journal", "-wal", "-shm"])
def test_an_events_file_naming_the_engines_sqlite_database_is_refused(workdir, tmp_path, tail):
    database = tmp_path / "elsewhere.db"
    for url_setting in ("option", "env"):
        env = {"HARNESS_EVENTS_FILE": str(database) + tail}
        args = ["--engine", "dbos"]
        if url_setting == "option":
            args += ["--database-url", f"sqlite:///{database}"]
        else:
            env["HARNESS_DATABASE_URL"] = f"sqlite:///{database}"
        code, out, err = cli_in_process(*args, "--workdir", str(workdir), env=env)
        refused(code, out, err, "HARNESS_EVENTS_FILE=")
        assert len(err.strip().splitlines()) == 1 and not database.exists()


def test_an_events_file_outside_the_work_folder_is_written(workdir, tmp_path):
    events = tmp_path / "events.jsonl"
    code, _, err = cli_in_process("--workdir", str(workdir), env={"HARNESS_EVENTS_FILE": str(events)})
    assert code == 0, err
    assert events.read_text(encoding="utf-8").count("\n") > 5


def test_the_unknown_setting_message_lists_each_known_name_once(workdir):
    code, _, err = cli_in_process("--workdir", str(workdir), env={"HARNESS_DEBGU": "1"})
    assert code == 1 and "HARNESS_DEBGU" in err, err
    from harness.beyond.cli import ENGINE_SETTINGS

    known = [*settings.KNOWN, *ENGINE_SETTINGS]  # the lesson's, then the modes'
    assert len(set(known)) == len(known) == 12
    listed = [name for name in known if name in err]
    assert listed == known
    assert all(err.count(name) == 1 for name in known if name != "HARNESS_DEBUG"), err


@pytest.mark.parametrize(
    "variable, value",
    [("CRASH_AFTER", "\x1b[31mred"), ("CRASH_MODE", "\x1b]0;title\x07"), ("HARNESS_SLOW_MS", "\u202e9")],
)
def test_control_characters_in_settings_never_reach_the_terminal_raw(workdir, variable, value):
    proc = run_cli(workdir, env={variable: value})
    assert proc.returncode == 1
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr and "\u202e" not in proc.stderr
    assert "Traceback" not in proc.stderr


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


def command(cwd, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """python -m harness ARGS typed in folder cwd."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    "args, option",
    [
        (["--workdir", "--resume"], "--workdir"),
        (["--workdir", "-h"], "--workdir"),
        (["--workdir"], "--workdir"),
        (["--engine", "dbos", "--database-url", "--workdir", "W"], "--database-url"),
        (["--engine", "--parallel"], "--engine"),
        (["--workdir", "--workdir=x"], "--workdir"),
        (["--workdir", "--bogus"], "--workdir"),
        (["--engine", "dbos", "--database-url", "--workdir=w2"], "--database-url"),
    ],
)
def test_an_option_missing_its_value_is_a_usage_error_never_the_next_option_taken_as_it(
    tmp_path, args, option
):
    proc = command(tmp_path, *args)
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.startswith(f"{option} のあとに値がありません"), proc.stderr
    assert list(tmp_path.iterdir()) == []  # no folder named --resume or -h, no run


@pytest.mark.parametrize(
    "args, env, name",
    [
        ([], {"CRASH_AFTER": "x"}, "CRASH_AFTER"),
        ([], {"CRASH_MODE": "x"}, "CRASH_MODE"),
        ([], {"CRASH_AFTR": "after-save-a:1"}, "CRASH_AFTR"),
        ([], {"crash_after": "after-save-a:1"}, "crash_after"),
        ([], {"Harness_Slow_MS": "5"}, "Harness_Slow_MS"),
        (["--engine", "dbos"], {"CRASH_MODE": "x"}, "CRASH_MODE"),
        (["--engine", "dbos"], {"CRASH_AFTER": "checkpoint-before-rename:1"}, "checkpoint-before-rename"),
        (["--engine", "dbos"], {"HARNESS_TASK_ID": "a b"}, "HARNESS_TASK_ID"),
        (["--engine", "dbos"], {"HARNESS_EXECUTOR_ID": "\x01"}, "HARNESS_EXECUTOR_ID"),
        (["--engine", "dbos"], {"HARNESS_DATABASE_DEADLINE_S": "-1"}, "HARNESS_DATABASE_DEADLINE_S"),
        (["--engine", "dbos", "--database-url", "mysql://x/y"], {}, "mysql://"),
        (["--engine", "dbos", "--database-url", "sqlite:///:memory:"], {}, "sqlite:///"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_a_refused_crash_or_engine_setting_leaves_no_folder_behind(tmp_path, args, env, name):
    proc = command(tmp_path, *args, "--workdir", "new/nested/work", env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc
    assert proc.stderr.startswith("エラー: ") and name in proc.stderr, proc.stderr
    assert not (tmp_path / "new").exists()  # refused before anything was made


@pytest.mark.parametrize("args", [["--database-url", ""], ["--engine", "dbos", "--database-url", ""]])
def test_an_empty_database_url_is_refused_never_read_as_no_url(tmp_path, args):
    proc = command(tmp_path, *args, "--workdir", "w")
    assert proc.returncode == 2 and "--database-url" in proc.stderr, proc
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///{d}/e%76.db",
        "SQLITE:///{d}/ev.db",
        "Sqlite:///{d}/ev.db",
        "sqlite:///file:{d}/ev.db?uri=true",
    ],
)
def test_an_events_file_naming_the_engines_database_is_refused_however_the_url_spells_it(tmp_path, url):
    events = tmp_path / "ev.db"
    url = url.format(d=tmp_path)
    proc = command(
        tmp_path,
        "--engine",
        "dbos",
        "--database-url",
        url,
        "--workdir",
        "w",
        env={"HARNESS_EVENTS_FILE": str(events)},
    )
    refused(proc.returncode, proc.stdout, proc.stderr, "HARNESS_EVENTS_FILE=")
    assert not events.exists() and not (tmp_path / "w").exists()


def test_an_events_file_the_harness_cannot_append_to_is_refused_before_the_run(tmp_path):
    work = tmp_path / "w"
    (tmp_path / "a-folder").mkdir()
    os.mkfifo(tmp_path / "a-fifo")
    (tmp_path / "elsewhere.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "a-link").symlink_to(tmp_path / "elsewhere.jsonl")
    assert command(tmp_path, "--workdir", "w").returncode == 0
    os.link(work / NOTES_FILE, tmp_path / "second-name-of-the-notes")
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    for value in (
        "a-folder",
        "no-such-folder/ev.jsonl",
        "a-fifo",
        "a-link",
        "/dev/null",
        "second-name-of-the-notes",
    ):
        proc = command(tmp_path, "--workdir", "w", env={"HARNESS_EVENTS_FILE": value})
        refused(proc.returncode, proc.stdout, proc.stderr, f"HARNESS_EVENTS_FILE={value} に追記できません")
        assert {p.name: p.read_bytes() for p in work.iterdir()} == before, value


@pytest.mark.parametrize(
    "events, args",
    [
        ("logs/report.txt", ["--workdir", "w"]),  # a name of the harness's files, outside the work folder
        ("logs/checkpoint.json", ["--workdir", "w"]),
        ("par", ["--workdir", "par/sub"]),  # where the work folder goes
        ("ev.jsonl", ["--resume", "--workdir", "nope"]),  # a run refused for another reason
    ],
)
def test_an_events_file_is_checked_without_making_anything_before_the_run(tmp_path, events, args):
    (tmp_path / "logs").mkdir()
    proc = command(tmp_path, *args, env={"HARNESS_EVENTS_FILE": events})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["logs"]  # no events file, no work folder
    assert command(tmp_path, "--workdir", "later").returncode == 0  # nothing left in the way


@pytest.mark.parametrize("value", ["sigkill\n", "x" * 100_000, "\x1b[2J"])
def test_a_bad_crash_mode_is_shown_escaped_and_cut(tmp_path, value):
    value = value.encode().decode("unicode_escape")
    proc = command(tmp_path, "--workdir", "w", env={"CRASH_MODE": value})
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1 and len(proc.stderr) < 600, (
        proc.stderr[:300]
    )
    assert "\x1b" not in proc.stderr and not (tmp_path / "w").exists()
