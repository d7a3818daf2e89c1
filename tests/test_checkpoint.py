"""Block 1: the atomic writer and the strict loader (DESIGN section 3)."""

from __future__ import annotations

import json
import os
import re

import pytest

from harness import (
    TOOL_SCHEMAS,
    HarnessError,
    Run,
    ScriptedModel,
    load_checkpoint,
    run_agent,
    save_checkpoint,
)
from harness.checkpoint import write_json_atomic

GOOD = {
    "version": 1,
    "task": "t",
    "turns": 1,
    "tokensUsed": 10,
    "messages": [{"role": "user", "content": "t"}],
    "pendingToolUse": {"id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}},
}


def test_saved_checkpoint_is_indented_utf8_with_readable_japanese(tmp_path):
    path = tmp_path / "checkpoint.json"
    save_checkpoint(path, {**GOOD, "task": "営業メモ"})
    raw = path.read_bytes().decode("utf-8")
    assert '"task": "営業メモ"' in raw and "\\u" not in raw
    assert raw.startswith('{\n  "version": 1,')
    assert load_checkpoint(path) == {**GOOD, "task": "営業メモ"}
    assert not (tmp_path / "checkpoint.json.tmp").exists()


def test_crash_between_temp_write_and_rename_leaves_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.json"
    save_checkpoint(path, GOOD)
    before = path.read_bytes()

    def killed(*_):
        raise KeyboardInterrupt("killed before rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(path, {**GOOD, "turns": 2})
    assert path.read_bytes() == before
    assert (
        json.loads((tmp_path / "checkpoint.json.tmp").read_text())["turns"] == 2
    )  # the new scene, not yet visible
    monkeypatch.undo()
    assert load_checkpoint(path)["turns"] == 1


def test_writer_fsyncs_file_and_folder(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(
        os, "fsync", lambda fd: (synced.append(os.path.realpath(f"/proc/self/fd/{fd}")), real_fsync(fd))
    )
    write_json_atomic(tmp_path / "x.json", {"a": 1})
    assert synced == [str(tmp_path / "x.json.tmp"), str(tmp_path)]


@pytest.mark.parametrize(
    "content, fragment",
    [
        (None, "が見つかりません"),
        (b'{"version":1,"turns":3,"pendingT', "のパースに失敗しました"),
        (json.dumps({**GOOD, "version": 3}).encode(), "version=3 です"),
        (json.dumps({**GOOD, "version": "1"}).encode(), 'version="1" です'),
        (b"[]", "JSON オブジェクトではありません"),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "messages"}).encode(),
            "キー messages がありません",
        ),
        (json.dumps({**GOOD, "turns": "3"}).encode(), "turns と tokensUsed"),
        (json.dumps({**GOOD, "turns": True}).encode(), "turns と tokensUsed"),
        (json.dumps({**GOOD, "messages": []}).encode(), "messages が空でない配列ではありません"),
        (json.dumps({**GOOD, "pendingToolUse": "read_notes"}).encode(), "pendingToolUse は null か"),
        (
            json.dumps({**GOOD, "pendingToolUse": {"id": "x", "name": "y", "input": []}}).encode(),
            "input がオブジェクト",
        ),
        (json.dumps({**GOOD, "extra": 1}).encode(), "未知のキー extra"),
        (b"\x00\x01\x02\xff\xfe binary", "のパースに失敗しました"),
        ('{"version": 1, "task": "営業"}'.encode("shift_jis"), "のパースに失敗しました"),
    ],
)
def test_loader_refuses_bad_checkpoint_with_advice_and_never_returns_defaults(tmp_path, content, fragment):
    path = tmp_path / "checkpoint.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(HarnessError) as err:
        load_checkpoint(path)
    message = str(err.value)
    assert fragment in message
    assert str(path) in message
    assert "--resume なし" in message
    assert (path.read_bytes() if content is not None else None) == content  # untouched, not deleted


def test_loader_refuses_a_directory_in_place_of_the_file(tmp_path):
    (tmp_path / "checkpoint.json").mkdir()
    with pytest.raises(HarnessError, match="ファイルではありません"):
        load_checkpoint(tmp_path / "checkpoint.json")


def _real_checkpoint_bytes(tmp_path) -> bytes:
    run = Run(tmp_path / "real")
    run.workdir.mkdir()
    from harness import CrashPlan, SimulatedCrash

    run.crash = CrashPlan("after-save-a", 3)
    with pytest.raises(SimulatedCrash):
        run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS)
    return run.checkpoint_path.read_bytes()


def test_every_truncation_of_a_real_checkpoint_is_refused(tmp_path):
    data = _real_checkpoint_bytes(tmp_path)
    assert len(data) > 1000
    path = tmp_path / "checkpoint.json"
    refused = 0
    for cut in range(len(data) - 1):  # every proper prefix, byte by byte
        path.write_bytes(data[:cut])
        with pytest.raises(HarnessError):
            load_checkpoint(path)
        refused += 1
    assert refused == len(data) - 1


@pytest.mark.parametrize("version", [1.0, True, "1", 1.5, None, [1], {"v": 1}])
def test_a_version_that_is_not_the_integer_1_is_refused_and_named(tmp_path, version):
    """JSON's 1.0 and true compare equal to 1 in Python: the loader must still refuse them, naming version."""
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps({**GOOD, "version": version}), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(HarnessError) as err:
        load_checkpoint(path)
    assert "version" in str(err.value) and str(path) in str(err.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize("version", ["1.0", "true", '"1"', "1e0", "2.0", "2.5", "-1", "null"])
@pytest.mark.parametrize("flags", [[], ["--parallel"]], ids=["lesson", "parallel"])
def test_the_command_line_refuses_a_version_that_is_not_an_integer_it_knows(workdir, version, flags):
    from conftest import run_cli

    assert run_cli(workdir, env={"CRASH_AFTER": "after-save-a:3"}).returncode == 137
    text = (workdir / "checkpoint.json").read_text(encoding="utf-8")
    (workdir / "checkpoint.json").write_text(text.replace('"version": 1,', f'"version": {version},', 1))
    before = {p.name: p.read_bytes() for p in workdir.iterdir()}
    proc = run_cli(workdir, *flags, "--resume")
    assert proc.returncode == 1 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "予期しないエラー" not in proc.stderr
    assert "checkpoint.json" in proc.stderr and "version" in proc.stderr
    # only the integer 2 was written by --parallel: nothing else is told to resume with it
    assert "--parallel --resume" not in proc.stderr
    assert {p.name: p.read_bytes() for p in workdir.iterdir()} == before
    assert "write_report" not in (workdir / "tool-runs.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("key", ["turns", "tokensUsed"])
def test_a_count_too_large_to_write_again_is_refused_on_load(workdir, key):
    """A count the loader accepted must be writable at the next save: 4,300 digits (Python's limit for writing an int)
    is refused on load, naming the key, never an unexpected error on every resume."""
    from conftest import run_cli

    assert run_cli(workdir, env={"CRASH_AFTER": "after-save-b:2"}).returncode == 137
    path = workdir / "checkpoint.json"
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(rf'"{key}": \d+', f'"{key}": ' + "9" * 4300, text, count=1), encoding="utf-8")
    before = path.read_bytes()
    proc = run_cli(workdir, "--resume")
    assert proc.returncode == 1 and "予期しないエラー" not in proc.stderr, proc.stderr
    assert key in proc.stderr and "checkpoint.json" in proc.stderr, proc.stderr
    assert path.read_bytes() == before
