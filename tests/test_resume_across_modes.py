"""A task continues in the mode it was started in: every mode x every crash moment x every way to ask for --resume.

A resume may add a mode to the task's (the version-2 loop reads a lesson checkpoint; the idempotent reconcile asks and
falls back honestly), never drop one. Every refusal names the exact command (all flags, the work folder) that
continues the task on disk; following it literally finishes the task with that mode's guarantees.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from conftest import cli_in_process
from harness import texts
from harness.beyond.modes import read_mode, record_mode, refuse_another_mode
from harness.beyond.parallel import load_checkpoint_v2, pairing_problem
from harness.beyond.scenarios import crash_moments
from harness.vocab import MODE_FILE, SCENARIOS

ROOT = Path(__file__).resolve().parents[1]

# (), (--parallel,), (--idempotent,), (--parallel, --idempotent), and the engine's --resume of a task of the files
ASKED = [*SCENARIOS.values(), ("--engine", "dbos")]
CONTINUE = re.compile(r"削除せずに、(.+) で続きから再開してください。")
START_AGAIN = re.compile(r"\n(python -m harness .+) で最初から実行してください。")
LESSON_START_AGAIN = "--resume なしで最初から実行してください。"


def harness(*argv: str, env: dict | None = None) -> tuple[int, str, str]:
    return cli_in_process(*argv, env=env)


def disk(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def advice(stderr: str, asked: list[str]) -> list[str]:
    """The command a refusal names, as argv after `python -m harness`; for the lesson's "start again without
    --resume", the same command without --resume."""
    found = CONTINUE.search(stderr) or START_AGAIN.search(stderr)
    if found:
        words = shlex.split(found.group(1))
        assert words[:3] == ["python", "-m", "harness"], stderr
        return words[3:]
    assert LESSON_START_AGAIN in stderr, stderr
    return [a for a in asked if a != "--resume"]


def check_finished(work: Path, mode: tuple[str, ...], last_line: str, ledger_at_crash: dict) -> None:
    """The task ended with the guarantees of `mode` (the flags it was started with)."""
    cp = load_checkpoint_v2(work / "checkpoint.json")  # reads both versions, checks the ledger beside it
    assert cp["pendingToolUses"] == [] and cp["messages"][-1]["role"] == "assistant"
    assert pairing_problem(cp["messages"]) is None
    runs = Counter((work / "tool-runs.log").read_text(encoding="utf-8").splitlines())
    writes = {line.split()[1]: n for line, n in runs.items() if line.startswith("write_report ")}
    assert all(n == 1 for n in writes.values()), runs  # no side effect twice, whatever the mode
    assert all(writes.get(k) == 1 for k, e in ledger_at_crash.items() if e["name"] == "write_report")
    results = [
        b
        for m in cp["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]
    errors = [b["tool_use_id"] for b in results if b.get("is_error")]
    ok = texts.PARALLEL_DONE_OK if "--parallel" in mode else texts.DONE_OK
    outputs = ["report.txt", "summary.txt"] if "--parallel" in mode else ["report.txt"]
    if "--idempotent" in mode:  # ① and ② recover exactly: no unknown, each report written once, with its key
        assert last_line == f"[done] {ok}" and errors == [], (last_line, errors)
        for name in outputs:
            assert (work / name).read_text(encoding="utf-8").startswith("<!-- 冪等キー: toolu_0")
    if last_line == f"[done] {ok}":  # no false success: every output is there
        assert errors == [] and all((work / name).exists() for name in outputs)
    else:  # the honest unknown: only side effects the ledger did not have at the crash
        names = {b["id"]: b["name"] for m in cp["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
                 for b in m["content"] if b["type"] == "tool_use"}  # fmt: skip
        unknown = [e for e in errors if names[e] == "write_report" and e not in ledger_at_crash]
        assert errors and unknown == errors, (last_line, errors)
    if "--parallel" in mode:
        assert read_json_version(work) == 2
    assert set(SCENARIOS[read_mode(work) or "lesson"]) >= set(mode)  # the mode is still recorded


def read_json_version(work: Path) -> object:
    return json.loads((work / "checkpoint.json").read_text(encoding="utf-8"))["version"]


CASES = [
    (scenario, label, n)
    for scenario in SCENARIOS
    for label, moments in crash_moments(scenario).items()
    for n in range(1, len(moments) + 1)
]


def test_the_sweep_covers_every_mode_and_every_crash_label():
    assert {s for s, _, _ in CASES} == set(SCENARIOS)
    assert {(s, label) for s, label, _ in CASES} == {
        (s, label) for s in SCENARIOS for label in crash_moments(s)
    }
    assert len(CASES) > 100


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_resume_either_continues_with_the_modes_guarantees_or_names_the_command_that_does(
    tmp_path, scenario
):
    """For each crash moment of this mode, each of the four ways to ask for --resume: a resume that keeps every mode
    of the task runs it to its end; one that drops a mode is refused, leaves every file as it was, and the command
    it names, typed as it is, finishes the task with the mode's guarantees."""
    mode = SCENARIOS[scenario]
    refused = accepted = 0
    for _, label, n in [c for c in CASES if c[0] == scenario]:
        base = tmp_path / f"{label}-{n}"
        crashed = harness(*mode, "--workdir", str(base), env={"CRASH_AFTER": f"{label}:{n}"})
        assert crashed[0] == 137, crashed
        snapshot = disk(base)
        ledger_at_crash = json.loads(snapshot.get("effects.json", b"{}"))
        for asked in ASKED:
            work = tmp_path / f"{label}-{n}-{'-'.join(a[2:] for a in asked) or 'plain'}"
            shutil.copytree(base, work)
            argv = [*asked, "--resume", "--workdir", str(work)]
            code, out, err = harness(*argv)
            assert "Traceback" not in err and "予期しない" not in err, err
            if code == 1:
                refused += 1
                assert len(err.strip().splitlines()) == 2, err
                assert disk(work) == snapshot  # a refusal changes nothing
                argv = advice(err, argv)
                if "--engine" in argv:  # the lesson's folder killed before its first save: nothing to resume
                    assert not (work / "checkpoint.json").exists() and "dbos" in err, err
                    continue
                assert "--workdir" not in argv or argv[argv.index("--workdir") + 1] == str(work), argv
                if "--resume" in argv:  # it names the task's own flags, all of them
                    assert [
                        a for a in argv if a.startswith("--") and a not in ("--resume", "--workdir")
                    ] == list(mode), (argv, err)
                code, out, err = harness(*argv)
            else:
                accepted += 1
                assert set(mode) <= set(asked), (label, n, asked, out)  # never runs with a mode dropped
            assert code == 0, (label, n, asked, argv, err)
            done = out.splitlines()[-1]
            final_mode = tuple(a for a in argv if a in ("--parallel", "--idempotent"))
            check_finished(work, final_mode if "--resume" not in argv else mode, done, ledger_at_crash)
    assert accepted and (refused or not mode)
    print(f"{scenario}: {refused} refused and followed, {accepted} accepted")


def test_a_resume_that_adds_a_mode_records_it_so_the_next_resume_cannot_drop_it(tmp_path):
    work = tmp_path / "work"
    assert harness("--workdir", str(work), env={"CRASH_AFTER": "after-save-a:1"})[0] == 137
    assert not (work / MODE_FILE).exists()  # the lesson's folder has no mode file
    code, _, err = harness(
        "--idempotent", "--resume", "--workdir", str(work), env={"CRASH_AFTER": "after-save-a:1"}
    )
    assert code == 137, err
    assert read_mode(work) == "idempotent"
    code, _, err = harness("--resume", "--workdir", str(work))
    assert code == 1 and f"python -m harness --idempotent --resume --workdir {work}" in err


def test_the_advice_names_the_default_folder_by_leaving_workdir_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert harness("--parallel", "--idempotent", env={"CRASH_AFTER": "after-tool-run:3"})[0] == 137
    code, _, err = harness("--parallel", "--resume")
    assert code == 1 and err.endswith(
        "削除せずに、python -m harness --parallel --idempotent --resume で続きから再開してください。\n"
    )


def test_a_workdir_with_spaces_is_quoted_so_the_command_can_be_pasted(tmp_path):
    work = tmp_path / "my work"
    assert harness("--idempotent", "--workdir", str(work), env={"CRASH_AFTER": "after-tool-run:3"})[0] == 137
    code, _, err = harness("--resume", "--workdir", str(work))
    assert code == 1 and f"--idempotent --resume --workdir {shlex.quote(str(work))} で続きから" in err
    assert harness(*advice(err, []))[0] == 0


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"[]",
        b'{"mode": "lesson"}',
        b'{"mode": "idempotent", "also": 1}',
        b'{"mode": "Idempotent"}',
        b'{"mode": ["parallel"]}',
        b'{"mode": "parallel+idempotent "}',
        b"\xff\xfe",
    ],
)
def test_an_odd_mode_file_is_refused_by_name_and_left_alone(tmp_path, content):
    work = tmp_path / "work"
    assert harness("--idempotent", "--workdir", str(work), env={"CRASH_AFTER": "after-tool-run:3"})[0] == 137
    (work / MODE_FILE).write_bytes(content)
    before = disk(work)
    for asked in ASKED:
        code, out, err = harness(*asked, "--resume", "--workdir", str(work))
        assert code == 1 and out == "" and f"{work / MODE_FILE} の形が正しくありません" in err, err
        assert len(err.strip().splitlines()) == 2 and disk(work) == before


def test_a_mode_file_in_place_of_a_link_or_folder_is_refused(tmp_path):
    work = tmp_path / "work"
    assert harness("--parallel", "--workdir", str(work), env={"CRASH_AFTER": "after-tool-run:3"})[0] == 137
    (work / MODE_FILE).unlink()
    (work / MODE_FILE).symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text('{"mode": "parallel"}', encoding="utf-8")
    code, _, err = harness("--parallel", "--resume", "--workdir", str(work))
    assert code == 1 and "リンク" in err


def test_a_fresh_run_of_another_mode_replaces_the_mode_file(tmp_path):
    work = tmp_path / "work"
    assert harness("--parallel", "--idempotent", "--workdir", str(work))[0] == 0
    assert read_mode(work) == "parallel+idempotent"
    assert harness("--workdir", str(work), env={"CRASH_AFTER": "after-tool-run:3"})[0] == 137
    assert not (
        work / MODE_FILE
    ).exists()  # the lesson's run: the old task's mode is gone with its checkpoint
    assert harness("--resume", "--workdir", str(work))[0] == 0
    assert harness("--idempotent", "--workdir", str(work), env={"CRASH_AFTER": "after-save-a:2"})[0] == 137
    assert read_mode(work) == "idempotent"


def test_a_recorded_task_killed_before_its_first_checkpoint_names_the_fresh_command(tmp_path):
    work = tmp_path / "work"
    code, _, err = harness(
        "--idempotent", "--workdir", str(work), env={"CRASH_AFTER": "checkpoint-torn-write:1"}
    )
    assert code == 137 and not (work / "checkpoint.json").exists() and read_mode(work) == "idempotent"
    code, _, err = harness("--resume", "--workdir", str(work))
    assert code == 1 and "--resume する対象がありません" in err
    assert f"\npython -m harness --idempotent --workdir {work} で最初から実行してください。" in err


def test_the_mode_check_only_reads(tmp_path):
    work = tmp_path / "work"
    assert (
        harness("--parallel", "--idempotent", "--workdir", str(work), env={"CRASH_AFTER": "after-save-a:2"})[
            0
        ]
        == 137
    )
    before = disk(work)
    for parallel in (False, True):
        for idempotent in (False, True):
            with contextlib.suppress(Exception):
                refuse_another_mode(work, parallel, idempotent)
    assert disk(work) == before


def test_record_mode_refuses_a_scenario_it_does_not_record(tmp_path):
    with pytest.raises(ValueError):
        record_mode(tmp_path, "lesson")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("version", [3, "2", None, 2.0, True])
def test_a_parallel_task_resumed_without_the_flag_never_claims_a_version_the_file_does_not_hold(
    tmp_path, version
):
    """A hand-edited version in a --parallel folder: the refusal said version=2 whatever the file held, and following
    its advice met a loader that said otherwise. Now each step names what is on disk, touches nothing, and the advice
    ends at the loader's own 'delete it and start again'."""
    work = tmp_path / "work"
    assert harness("--parallel", "--workdir", str(work), env={"CRASH_AFTER": "after-save-a:2"})[0] == 137
    path = work / "checkpoint.json"
    checkpoint = json.loads(path.read_text(encoding="utf-8"))
    checkpoint["version"] = version
    path.write_text(json.dumps(checkpoint, ensure_ascii=False), encoding="utf-8")
    before = disk(work)
    asked = ["--resume", "--workdir", str(work)]
    for _ in range(2):
        code, out, err = harness(*asked)
        assert (code, out) == (1, "") and disk(work) == before, err
        assert "version=2 です" not in err, err
        if "このファイルを削除し、--resume なしで最初から" in err:
            break
        asked = advice(err, asked)
        assert asked[:2] == ["--parallel", "--resume"], err
    else:
        pytest.fail(f"the advice never reached the loader's refusal: {err}")


def edit_checkpoint(work: Path, **changes) -> None:
    path = work / "checkpoint.json"
    checkpoint = json.loads(path.read_text(encoding="utf-8"))
    checkpoint.update(changes)
    path.write_text(json.dumps(checkpoint, ensure_ascii=False), encoding="utf-8")


# (the flags the task was started with, the hand edit): checkpoints that the resume a mode refusal would advise
# cannot load
UNLOADABLE = [
    (("--idempotent",), {"version": 2}),
    (("--idempotent",), {"version": "1"}),
    (("--parallel", "--idempotent"), {"version": 1}),
    (("--parallel", "--idempotent"), {"pendingToolUses": "toolu_02"}),
    ((), {"version": 2}),
]


@pytest.mark.parametrize("started, edit", UNLOADABLE)
@pytest.mark.parametrize("asked", [(), ("--engine", "dbos")])
def test_a_refusal_says_continue_with_a_command_only_when_that_resume_loads_the_checkpoint(
    tmp_path, started, edit, asked
):
    """A mode refusal said 'do not delete it, continue with X', and X then said 'delete it and start again': the
    loader X uses is asked first, and its own refusal is the message (nothing on disk is claimed that is not there)."""
    work = tmp_path / "work"
    assert harness(*started, "--workdir", str(work), env={"CRASH_AFTER": "after-save-a:2"})[0] == 137
    edit_checkpoint(work, **edit)
    before = disk(work)
    code, out, err = harness(*asked, "--resume", "--workdir", str(work))
    assert (code, out) == (1, "") and disk(work) == before, err
    assert "このファイルを削除し、--resume なしで最初から" in err and "削除せずに" not in err, err
    assert "--parallel が書いた" not in err, err


def test_an_engine_resume_beside_a_ledger_of_the_files_never_runs_what_the_ledger_recorded(tmp_path):
    """A folder holding a finished task's effects.json and an engine's pending workflow (copied in by hand): the
    lesson's --resume named the engine, whose resume ran write_report again although the ledger had recorded it."""
    engine, work = tmp_path / "engine", tmp_path / "work"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    env.update(
        PYTHONPATH=str(ROOT), CRASH_AFTER="after-save-a:2"
    )  # a real process: the engine's crash ends it
    argv = [sys.executable, "-m", "harness", "--engine", "dbos", "--workdir", str(engine)]
    assert subprocess.run(argv, env=env, capture_output=True, timeout=120, check=False).returncode == 137
    assert harness("--workdir", str(work))[0] == 0
    (work / "checkpoint.json").unlink()
    shutil.copy(engine / "dbos.sqlite", work / "dbos.sqlite")
    before = disk(work)
    for asked in ((), ("--engine", "dbos")):
        code, out, err = harness(*asked, "--resume", "--workdir", str(work))
        assert (code, out) == (1, "") and disk(work) == before, err
        assert "--engine dbos --resume" not in err and "--resume なしで最初から" in err, err
    runs = (work / "tool-runs.log").read_text(encoding="utf-8").splitlines()
    assert runs.count("write_report toolu_03") == 1


def test_an_empty_system_database_is_not_called_a_workflow(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "dbos.sqlite").write_bytes(b"")
    code, _, err = harness("--resume", "--workdir", str(work))
    # not a workflow; and not ours either (no marker): a fresh start would refuse it too, so another folder is advised
    assert code == 1 and "ワークフロー" not in err and "新しい名前を --workdir に指定して" in err, err
    assert (work / "dbos.sqlite").read_bytes() == b""


@pytest.mark.parametrize("mode", ["parallel", "idempotent"])
def test_an_engine_workflow_is_resumed_by_the_engine_whatever_a_mode_file_beside_it_says(tmp_path, mode):
    """The lesson's --resume named the engine, and the engine's --resume then named the mode's fresh start, which
    removes dbos.sqlite and the pending workflow with it: both read the folder the same way now."""
    work = tmp_path / "work"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    env.update(PYTHONPATH=str(ROOT), CRASH_AFTER="after-save-a:2")
    argv = [sys.executable, "-m", "harness", "--engine", "dbos", "--workdir", str(work)]
    assert subprocess.run(argv, env=env, capture_output=True, timeout=120, check=False).returncode == 137
    record_mode(work, mode)  # by hand: no run of the harness leaves it beside a workflow
    code, _, err = harness("--resume", "--workdir", str(work))
    assert code == 1 and err.splitlines()[-1] == (
        f"その続きなら: python -m harness --engine dbos --resume --workdir {work}"
    ), err
    del env["CRASH_AFTER"]
    resumed = subprocess.run(
        [*argv, "--resume"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert resumed.returncode == 0, resumed.stderr
    runs = (work / "tool-runs.log").read_text(encoding="utf-8").splitlines()
    assert runs.count("write_report toolu_03") == 1 and (work / "dbos.sqlite").exists()
