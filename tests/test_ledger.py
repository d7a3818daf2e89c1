"""Block 2: the ledger, and run_tool_uses's order: execute first, record after."""

from __future__ import annotations

import json

import pytest

from harness import TOOL_IMPLS, HarnessError, Run, load_effects, run_tool_uses, save_effect

BLOCK = {
    "type": "tool_use",
    "id": "toolu_03",
    "name": "write_report",
    "input": {"path": "report.txt", "content": "レポート"},
}


def make_run(workdir, events=None):
    return Run(workdir, clock=lambda: 1700000000000, listeners=[events.append] if events is not None else [])


def test_missing_ledger_is_empty_but_corrupt_ledger_is_an_error(workdir):
    assert load_effects(workdir / "effects.json") == {}
    for bad in (
        b'{"toolu_01": {"name": "read',
        b"[1, 2]",
        b'{"toolu_01": "done"}',
        b"\xff\xfe",
        b'{"toolu_01": {"name": 3, "result": "x", "at": 1}}',
    ):
        (workdir / "effects.json").write_bytes(bad)
        with pytest.raises(HarnessError, match="副作用台帳"):
            load_effects(workdir / "effects.json")
        assert (workdir / "effects.json").read_bytes() == bad


def test_save_effect_refuses_to_overwrite_a_corrupt_ledger(workdir):
    (workdir / "effects.json").write_text('{"toolu_01": {"name": "read_notes", "res', encoding="utf-8")
    with pytest.raises(HarnessError):
        save_effect(workdir / "effects.json", "toolu_02", {"name": "count_words", "result": "1", "at": 1})
    assert (workdir / "effects.json").read_text(
        encoding="utf-8"
    ) == '{"toolu_01": {"name": "read_notes", "res'


def test_run_tool_uses_executes_first_then_records(workdir):
    seen_at_execution = []
    real = TOOL_IMPLS["write_report"]

    def spy(wd, input):
        seen_at_execution.append(load_effects(workdir / "effects.json"))
        return real(wd, input)

    events = []
    run = make_run(workdir, events)
    run.tool_impls["write_report"] = spy
    results = run_tool_uses(run, [BLOCK])
    assert seen_at_execution == [{}]  # nothing was recorded before the tool ran
    effects = json.loads((workdir / "effects.json").read_text(encoding="utf-8"))
    assert effects == {
        "toolu_03": {"name": "write_report", "result": results[0]["content"], "at": 1700000000000}
    }
    assert (workdir / "report.txt").read_text(encoding="utf-8") == "レポート"
    assert [e.kind for e in events] == ["tool_start", "tool_ran", "effect_written"]
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8") == "write_report toolu_03\n"


def test_failed_ledger_write_still_returns_the_result_and_raises_an_alert(workdir):
    (workdir / "effects.json").write_text("{ torn", encoding="utf-8")  # the ledger cannot be written
    events = []
    results = run_tool_uses(make_run(workdir, events), [BLOCK])
    assert "is_error" not in results[0]
    assert results[0]["content"].startswith("report.txt に")
    alerts = [e for e in events if e.kind == "ledger_write_failed"]
    assert len(alerts) == 1 and alerts[0].data["id"] == "toolu_03"
    assert (workdir / "effects.json").read_text(encoding="utf-8") == "{ torn"


def test_tool_error_becomes_is_error_and_is_not_recorded(workdir):
    block = {**BLOCK, "input": {"path": "../outside.txt", "content": "x"}}
    results = run_tool_uses(make_run(workdir), [block])
    assert results[0]["is_error"] is True
    assert "作業フォルダの外" in results[0]["content"]
    assert not (workdir.parent / "outside.txt").exists()
    assert not (workdir / "effects.json").exists()
    assert not (workdir / "tool-runs.log").exists()


ALERT = "[台帳の書き込みに失敗] tool_use_id=toolu_03: 副作用はすでに起きています。"


def test_the_ledger_alert_goes_to_stderr_and_the_log_lines_to_stdout(workdir, capsys):
    from harness.transcript import print_transcript

    (workdir / "effects.json").write_text("{ torn", encoding="utf-8")  # the ledger cannot be written
    run_tool_uses(Run(workdir, clock=lambda: 1, listeners=[print_transcript]), [BLOCK])
    out, err = capsys.readouterr()
    assert err.startswith(ALERT) and err.count("\n") == 1
    assert "台帳の書き込みに失敗" not in out


def test_the_command_line_prints_the_ledger_alert_on_stderr_and_finishes_the_task(workdir):
    from conftest import run_cli

    assert run_cli(workdir, env={"CRASH_AFTER": "after-save-b:2"}).returncode == 137
    (workdir / "effects.json.tmp").mkdir()  # the next ledger write cannot put its temp file there
    proc = run_cli(workdir, "--resume")
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].startswith("[done] report.txt に"), (
        proc.stderr
    )
    assert proc.stderr.splitlines() == [line for line in proc.stderr.splitlines() if line.startswith(ALERT)]
    assert len(proc.stderr.splitlines()) == 1 and "effects.json.tmp" in proc.stderr
    assert "台帳の書き込みに失敗" not in proc.stdout
    assert (workdir / "report.txt").exists()  # the side effect the alert is about really happened
    assert "toolu_03" not in json.loads((workdir / "effects.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("at", ["1700000000000", "1700000000.123"])
def test_a_record_timed_in_ms_or_in_seconds_is_kept(workdir, at):
    """The lesson's Date.now() (ms) or a Python port's time.time() (seconds, a float): both are a time."""
    save_effect(
        workdir / "effects.json", "toolu_01", {"name": "read_notes", "result": "x", "at": json.loads(at)}
    )
    assert load_effects(workdir / "effects.json")["toolu_01"]["at"] == json.loads(at)


@pytest.mark.parametrize("at", ["-1", "-0.5", "true", '"1700000000000"', "null", "1e400"])
def test_a_record_whose_at_is_not_a_time_is_refused_by_name(workdir, at):
    data = '{"toolu_01": {"name": "read_notes", "result": "x", "at": ' + at + "}}"
    (workdir / "effects.json").write_text(data, encoding="utf-8")
    with pytest.raises(HarnessError, match="toolu_01 の at が 0 以上の数"):
        load_effects(workdir / "effects.json")


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b'"\\ud800"'])
@pytest.mark.parametrize("field", ["result", "note"])
def test_a_value_json_or_utf8_cannot_carry_in_any_ledger_field_is_refused(workdir, field, value):
    """README: NaN and Infinity are refused, in the fields the shape rules look at and in any other (1e400 parses
    as infinity; a lone surrogate cannot be written as UTF-8)."""
    record = b'{"name": "read_notes", "result": "x", "at": 1, "' + field.encode() + b'": ' + value + b"}"
    data = b'{"toolu_01": ' + record.replace(b'"result": "x", ', b"", 1 if field == "result" else 0) + b"}"
    (workdir / "effects.json").write_bytes(data)
    with pytest.raises(HarnessError, match="副作用台帳") as err:
        load_effects(workdir / "effects.json")
    assert str(workdir / "effects.json") in str(err.value)
    with pytest.raises(HarnessError):  # and never written over, nor written
        save_effect(workdir / "effects.json", "toolu_02", {"name": "count_words", "result": "1", "at": 1})
    assert (workdir / "effects.json").read_bytes() == data
