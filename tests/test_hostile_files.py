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
    from harness import load_checkpoint, store

    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan("after-effect-write", 3)), ScriptedModel(), tools=TOOL_SCHEMAS)
    real_read = store.read_bytes

    def no_permission(path):
        if path.name == name:
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path)

    monkeypatch.setattr(store, "read_bytes", no_permission)
    with pytest.raises(HarnessError) as err:
        load_checkpoint(workdir / "checkpoint.json")
    assert "chmod" in str(err.value) and "削除しないでください" in str(err.value) and name in str(err.value)


# ---- text and numbers JSON can carry but Python, UTF-8 or the strict loader cannot ---------------------------------
# Each is refused where it enters, naming the file and the key, with nothing changed; or stored losslessly. Never
# 予期しないエラー, never a file the harness would refuse to load.

BIG = 1.5e300  # stands for an overflowing number, written in the file as 1e400 / -1e400 (JSON allows it)


def encode(obj, *, big=b"1e400"):
    """The file's bytes: ASCII JSON (a lone surrogate as its \\u escape), BIG written as `big`."""
    return json.dumps(obj, indent=2).encode("ascii").replace(b"1.5e+300", big)


def nest(depth):
    value = "x"
    for _ in range(depth):
        value = [value]
    return value


def edit(name, change, *, big=b"1e400"):
    def mutate(work):
        path = work / name
        obj = json.loads(path.read_text(encoding="utf-8"))
        change(obj)
        path.write_bytes(encode(obj, big=big))

    return mutate


def raw_edit(name, change):
    def mutate(work):
        (work / name).write_bytes(change((work / name).read_bytes()))

    return mutate


def record(obj):
    return obj["toolu_01"]


ODD_LEDGERS = {
    "result-overflow": (edit("effects.json", lambda o: record(o).update(result=BIG)), "toolu_01"),
    "result-negative-overflow": (
        edit("effects.json", lambda o: record(o).update(result=BIG), big=b"-1e400"),
        "toolu_01",
    ),
    "extra-field-overflow": (edit("effects.json", lambda o: record(o).update(note=[BIG])), "toolu_01"),
    "at-overflow": (edit("effects.json", lambda o: record(o).update(at=BIG)), "toolu_01 の at"),
    "result-nan": (
        raw_edit("effects.json", lambda b: b.replace(b'"at": 1767225600000', b'"at": NaN', 1)),
        "パース",
    ),
    "result-lone-surrogate": (
        edit("effects.json", lambda o: record(o).update(result="ok\ud800")),
        "toolu_01",
    ),
    "result-lone-low-surrogate": (
        edit("effects.json", lambda o: record(o).update(result="\udc80")),
        "toolu_01",
    ),
    "key-lone-surrogate": (edit("effects.json", lambda o: o.update({"toolu_\ud800": record(o)})), "キー"),
    "extra-key-lone-surrogate": (
        edit("effects.json", lambda o: record(o).update({"\udfff": 1})),
        "toolu_01",
    ),
    "result-too-deep": (edit("effects.json", lambda o: record(o).update(result=nest(150))), "toolu_01"),
    "result-deeper-than-python": (
        raw_edit("effects.json", lambda b: b.replace(b'"at": 1767225600000', b'"at": ' + b"[" * 100000, 1)),
        "パース",
    ),
    "at-huge-int": (
        raw_edit("effects.json", lambda b: b.replace(b'"at": 1767225600000', b'"at": ' + b"9" * 5000, 1)),
        "パース",
    ),
    "record-twice": (
        raw_edit("effects.json", lambda b: b.replace(b'"toolu_02"', b'"toolu_01"', 1)),
        "パース",
    ),
    "bom": (raw_edit("effects.json", lambda b: b"\xef\xbb\xbf" + b), "パース"),
    "latin-1-byte": (
        raw_edit("effects.json", lambda b: b.replace(b'"read_notes"', b'"read_n\xf6tes"', 1)),
        "パース",
    ),
}


def first_user(o):
    return o["messages"][0]


ODD_CHECKPOINTS = {
    "task-lone-surrogate": (edit("checkpoint.json", lambda o: o.update(task="営業\ud83d")), "task"),
    "turns-overflow": (edit("checkpoint.json", lambda o: o.update(turns=BIG)), "turns"),
    "tokens-negative-overflow": (
        edit("checkpoint.json", lambda o: o.update(tokensUsed=BIG), big=b"-1e400"),
        "tokensUsed",
    ),
    "message-lone-surrogate": (
        edit("checkpoint.json", lambda o: first_user(o).update(content="\udc00")),
        "messages[0]",
    ),
    "message-extra-key-overflow": (
        edit("checkpoint.json", lambda o: o["messages"][1].update(note=BIG)),
        "messages[1]",
    ),
    "pending-input-overflow": (
        edit("checkpoint.json", lambda o: o["pendingToolUse"]["input"].update(n=BIG)),
        "pendingToolUse.input",
    ),
    "pending-input-lone-surrogate": (
        edit("checkpoint.json", lambda o: o["pendingToolUse"]["input"].update(content="\ud800")),
        "pendingToolUse.input",
    ),
    "pending-input-too-deep": (
        edit("checkpoint.json", lambda o: o["pendingToolUse"]["input"].update(x=nest(150))),
        "pendingToolUse.input",
    ),
    "pending-twice": (
        raw_edit("checkpoint.json", lambda b: b.replace(b"\n}", b',\n  "pendingToolUse": null\n}', 1)),
        "パース",
    ),
    "turns-huge-int": (
        raw_edit("checkpoint.json", lambda b: b.replace(b'"turns": 3', b'"turns": ' + b"7" * 5000)),
        "パース",
    ),
    "nul-byte": (raw_edit("checkpoint.json", lambda b: b.replace(b'"task"', b'"ta\x00sk"', 1)), "パース"),
    "bom": (raw_edit("checkpoint.json", lambda b: b"\xef\xbb\xbf" + b), "パース"),
    "deeper-than-python": (
        raw_edit("checkpoint.json", lambda b: b[:-2] + b',"x":' + b"[" * 100000),
        "パース",
    ),
}


@pytest.mark.parametrize("flags", [[], ["--parallel"]], ids=["lesson", "parallel"])
@pytest.mark.parametrize(
    "case", [f"effects.json {k}" for k in ODD_LEDGERS] + [f"checkpoint.json {k}" for k in ODD_CHECKPOINTS]
)
def test_odd_text_and_numbers_in_a_state_file_are_refused_naming_the_file_and_the_key(workdir, case, flags):
    name, key = case.split()
    mutate, fragment = (ODD_LEDGERS if name == "effects.json" else ODD_CHECKPOINTS)[key]
    crashed(workdir, "after-save-a:3")  # write_report is pending; the ledger holds toolu_01 and toolu_02
    mutate(workdir)
    before = snapshot(workdir)
    proc = run_cli(workdir, *flags, "--resume")
    assert "予期しないエラー" not in proc.stderr
    assert_refused(proc, workdir, before, fragment)
    assert name in proc.stderr and proc.stdout == ""


def test_text_json_and_utf8_can_both_carry_is_stored_losslessly(workdir):
    """NUL characters, a character outside the BMP written as a surrogate pair, a 4000-digit integer: all plain
    JSON that reads back the same; a resume keeps them byte for byte in meaning."""
    crashed(workdir, "after-save-b:1")  # the resume runs turns 2 and 3, rewriting both files
    odd = {"text": "a\u0000b\U0001f600\u202e", "big": int("9" * 4000), "nested": nest(90)}
    effects = json.loads((workdir / "effects.json").read_text(encoding="utf-8"))
    effects["toolu_01"]["note"] = odd
    (workdir / "effects.json").write_text(json.dumps(effects), encoding="utf-8")
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    cp["task"] += "\u0000\U0001f600"
    cp["tokensUsed"] = 10**30
    (workdir / "checkpoint.json").write_text(json.dumps(cp), encoding="utf-8")
    proc = run_cli(workdir, "--resume")
    assert proc.returncode == 0, proc.stderr
    after = json.loads((workdir / "effects.json").read_text(encoding="utf-8"))
    assert after["toolu_01"]["note"] == odd and {"toolu_02", "toolu_03"} <= set(after)
    final = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    assert final["task"] == cp["task"] and final["tokensUsed"] > 10**30


def test_a_lone_surrogate_handed_to_the_writer_is_refused_cleanly_and_never_saved(workdir):
    """A client of one's own (a notebook) may hand over text UTF-8 cannot carry: the save is refused with the
    file named, and the previous checkpoint stays."""
    from harness import save_checkpoint

    path = workdir / "checkpoint.json"
    good = {
        "version": 1,
        "task": "t",
        "turns": 0,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": "t"}],
        "pendingToolUse": None,
    }
    save_checkpoint(path, good)
    before = path.read_bytes()
    for bad in ({**good, "task": "\ud800"}, {**good, "messages": [{"role": "user", "content": "\udfff"}]}):
        with pytest.raises(HarnessError, match="checkpoint.json"):
            save_checkpoint(path, bad)
        assert path.read_bytes() == before
    with pytest.raises(HarnessError, match="effects.json"):
        from harness import save_effect

        save_effect(workdir / "effects.json", "toolu_01", {"name": "read_notes", "result": "\ud800", "at": 1})
    assert not (workdir / "effects.json").exists()
