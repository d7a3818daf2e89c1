"""Hostile files beyond the lesson: every truncation of a real ledger, truncations through the real command line,
and the other ways a file can be wrong; each refused clearly with nothing changed, or (a stray temp file) ignored."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from harness import (
    TOOL_SCHEMAS,
    CrashPlan,
    HarnessError,
    Run,
    ScriptedModel,
    SimulatedCrash,
    load_effects,
    run_agent,
)


def crashed(work, label="after-effect-write:3"):
    assert run_cli(work, env={"CRASH_AFTER": label}).returncode == 137


def snapshot(work):
    return {p.name: (p.read_bytes() if p.is_file() else "dir") for p in work.iterdir()}


def assert_refused(proc, work, before, fragment):
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr and fragment in proc.stderr
    assert 1 <= len(proc.stderr.strip().splitlines()) <= 2
    assert snapshot(work) == before


def test_every_truncation_of_a_real_ledger_is_refused(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    with pytest.raises(SimulatedCrash):
        run_agent(Run(work, crash=CrashPlan("after-save-b", 3)), ScriptedModel(), tools=TOOL_SCHEMAS)
    data = (work / "effects.json").read_bytes()
    assert len(data) > 500
    for cut in range(len(data) - 1):
        (work / "effects.json").write_bytes(data[:cut] if cut else b" ")
        with pytest.raises(HarnessError, match="副作用台帳"):
            load_effects(work / "effects.json")


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json"])
def test_truncations_through_the_command_line_are_refused(workdir, name):
    crashed(workdir)
    data = (workdir / name).read_bytes()
    cuts = list(range(0, len(data) - 1, len(data) // 20))[:20]  # 20 offsets spread over the file
    for cut in cuts:
        (workdir / name).write_bytes(data[:cut])
        before = snapshot(workdir)
        fragment = "のパースに失敗しました" if name == "checkpoint.json" else "副作用台帳"
        assert_refused(run_cli(workdir, "--resume"), workdir, before, fragment)
    assert len(cuts) == 20


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b'{"toolu_03": {"name": "write_report", "result": "x"}}', "name, result, at がそろっていません"),
        (b'{"toolu_03": ["write_report"]}', "name, result, at がそろっていません"),
        (b'"toolu_03"', "JSON オブジェクトではありません"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "のパースに失敗しました"),
        ('{"toolu_03": {"name": "レポート"}}'.encode("euc_jp"), "のパースに失敗しました"),
        (b"", "のパースに失敗しました"),
    ],
)
def test_other_bad_ledgers_are_refused_through_the_command_line(workdir, content, fragment):
    crashed(workdir)
    (workdir / "effects.json").write_bytes(content)
    before = snapshot(workdir)
    assert_refused(run_cli(workdir, "--resume"), workdir, before, fragment)


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json"])
def test_a_directory_in_place_of_the_file_is_refused(workdir, name):
    crashed(workdir)
    (workdir / name).unlink()
    (workdir / name).mkdir()
    before = snapshot(workdir)
    assert_refused(run_cli(workdir, "--resume"), workdir, before, "ファイルではありません")


@pytest.mark.parametrize("content", [b'{"version": 1, "tu', b"\x00" * 64, b'{"version": 2}'])
def test_stray_temp_files_are_ignored_on_resume(workdir, content):
    crashed(workdir)
    (workdir / "checkpoint.json.tmp").write_bytes(content)
    (workdir / "effects.json.tmp").write_bytes(content)
    proc = run_cli(workdir, "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "台帳ヒット" in proc.stdout  # the real ledger was read, not the stray one
    assert json.loads((workdir / "checkpoint.json").read_text())["pendingToolUse"] is None
    assert not (workdir / "checkpoint.json.tmp").exists()  # the next save replaced it


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json"])
def test_a_permission_error_says_chmod_and_not_delete(workdir, monkeypatch, name):
    """Root ignores chmod, so the refusal is simulated where the file is opened (the command line is tested as an
    ordinary user in test_hostile_folder.py)."""
    from harness import files, load_checkpoint

    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan("after-effect-write", 3)), ScriptedModel(), tools=TOOL_SCHEMAS)
    real_read = files.read_bytes

    def no_permission(path):
        if path.name == name:
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path)

    monkeypatch.setattr(files, "read_bytes", no_permission)
    with pytest.raises(HarnessError) as err:
        load_checkpoint(workdir / "checkpoint.json")
    assert "chmod" in str(err.value) and "削除しないでください" in str(err.value) and name in str(err.value)
