"""Block 1: the atomic writer and the strict loader (DESIGN section 3)."""

from __future__ import annotations

import json
import os
import re

import pytest

from conftest import cli_in_process
from harness import (
    TOOL_SCHEMAS,
    HarnessError,
    Run,
    ScriptedModel,
    load_checkpoint,
    run_agent,
    save_checkpoint,
    texts,
)
from harness.checkpoint import write_json_atomic
from harness.vocab import SCENARIOS

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


# ---- a conversation the API would refuse on every resume: tool_use and tool_result out of pairs ---------------------


def _use(id):
    return {"type": "tool_use", "id": id, "name": "read_notes", "input": {"path": "sales-notes.txt"}}


def _result(id):
    return {"type": "tool_result", "tool_use_id": id, "content": "ok"}


def _text(text="x"):
    return {"type": "text", "text": text}


def _turns(*pairs):
    """A conversation: the task, then for each (assistant content, user content) the two messages."""
    messages = [{"role": "user", "content": "t"}]
    for said, answered in pairs:
        messages += [{"role": "assistant", "content": said}, {"role": "user", "content": answered}]
    return messages


BROKEN_PAIRS = {
    "a tool_use with no answer": (_turns(([_use("toolu_01")], "飛ばしました")), "toolu_01"),
    "an answer to another id": (_turns(([_use("toolu_01")], [_result("toolu_99")])), "toolu_01"),
    "an answer to no call at all": (_turns(([_text()], [_result("toolu_99")])), "toolu_99"),
    "a second answer to no call": (
        _turns(([_use("toolu_01")], [_result("toolu_01"), _result("toolu_99")])),
        "toolu_99",
    ),
    "an answer after a text block": (_turns(([_use("toolu_01")], [_text(), _result("toolu_01")])), "先頭"),
    "two answers to one call": (
        _turns(([_use("toolu_01")], [_result("toolu_01"), _result("toolu_01")])),
        "2つ",
    ),
    "answers in the other order": (
        _turns(([_use("toolu_01"), _use("toolu_02")], [_result("toolu_02"), _result("toolu_01")])),
        "同じ順",
    ),
    "turns' answers swapped": (
        _turns(([_use("toolu_01")], [_result("toolu_02")]), ([_use("toolu_02")], [_result("toolu_01")])),
        "toolu_01",
    ),
    "an answer one message late": (
        _turns(([_use("toolu_01")], "待って"), ([_text()], [_result("toolu_01")])),
        "toolu_01",
    ),
    "an answer before its call": (
        [
            {"role": "user", "content": [_result("toolu_01")]},
            {"role": "assistant", "content": [_use("toolu_01")]},
        ],
        "messages[0]",
    ),
    "a conversation the assistant starts": (
        [{"role": "assistant", "content": [_text()]}, {"role": "user", "content": "t"}],
        "messages[0]",
    ),
    "a tool_use in a user message": (
        _turns(([_text()], [_use("toolu_01")])),
        "user のメッセージには置けません",
    ),
    "a tool_result in an assistant message": (
        _turns(([_result("toolu_01")], "t")),
        "assistant のメッセージには置けません",
    ),
    "the last call unanswered, with a pending call after it": (
        [*_turns(), {"role": "assistant", "content": [_use("toolu_01")]}],
        "toolu_01",
    ),
}


def _with(messages, pending=None):
    return {**GOOD, "messages": messages, "pendingToolUse": pending}


@pytest.mark.parametrize("pending", [None, {"id": "toolu_50", "name": "write_report", "input": {}}])
@pytest.mark.parametrize("case", BROKEN_PAIRS)
def test_loader_refuses_a_conversation_whose_tool_use_and_tool_result_are_not_pairs(tmp_path, case, pending):
    messages, fragment = BROKEN_PAIRS[case]
    if pending is None and case.startswith("the last call unanswered"):
        pending = {
            "id": "toolu_50",
            "name": "write_report",
            "input": {},
        }  # its point: a call is still to come
    path = tmp_path / "checkpoint.json"
    path.write_bytes(json.dumps(_with(messages, pending), ensure_ascii=False).encode())
    before = path.read_bytes()
    with pytest.raises(HarnessError) as err:
        load_checkpoint(path)
    lines = str(err.value).splitlines()
    assert len(lines) == 2 and str(path) in lines[0] and fragment in lines[0], lines
    assert "--resume なし" in lines[1]
    assert path.read_bytes() == before


@pytest.mark.parametrize("case", BROKEN_PAIRS)
def test_the_writer_never_saves_a_conversation_the_loader_would_refuse_for_its_pairs(tmp_path, case):
    messages, _ = BROKEN_PAIRS[case]
    path = tmp_path / "checkpoint.json"
    save_checkpoint(path, GOOD)
    before = path.read_bytes()
    with pytest.raises(HarnessError, match="読み込むときに拒否される形"):
        save_checkpoint(path, _with(messages, GOOD["pendingToolUse"]))
    assert path.read_bytes() == before and load_checkpoint(path) == GOOD


def test_a_pending_call_after_the_closing_words_is_refused(tmp_path):
    path = tmp_path / "checkpoint.json"
    path.write_bytes(
        json.dumps(
            _with([*_turns(), {"role": "assistant", "content": [_text()]}], GOOD["pendingToolUse"])
        ).encode()
    )
    with pytest.raises(HarnessError, match="最後が user"):
        load_checkpoint(path)


def test_a_finished_task_whose_closing_turn_names_a_tool_is_saved_loaded_and_resumed_as_done(tmp_path):
    """A model that stops (max_tokens) with a tool_use block: the loop saves that closing turn as it is, so the loader
    must take it (a resume only reports it, never sends it)."""

    class StopsMidCall:
        def __init__(self):
            self.messages, self.calls = self, 0

        def create(self, **_):
            self.calls += 1
            content = [_text("途中"), _use("toolu_01")]
            return {
                "content": content,
                "stop_reason": "max_tokens",
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }

    run = Run(tmp_path / "work")
    run.workdir.mkdir()
    first = run_agent(run, StopsMidCall(), tools=TOOL_SCHEMAS)
    cp = load_checkpoint(run.checkpoint_path)
    assert cp["messages"][-1]["content"][1]["type"] == "tool_use" and cp["pendingToolUse"] is None
    again = StopsMidCall()
    assert run_agent(run, again, tools=TOOL_SCHEMAS, resume=True) == "途中" and "途中" in first
    assert again.calls == 0  # reported from the file, never sent to the model


def test_every_checkpoint_of_a_clean_run_keeps_its_pairs(tmp_path):
    """What the harness writes at every save of the lesson's task loads (the check is not stricter than the loop)."""
    from harness import CrashPlan, SimulatedCrash

    for label in ("after-save-a", "after-save-b"):
        for n in (1, 2, 3):
            run = Run(tmp_path / f"{label}-{n}", crash=CrashPlan(label, n))
            run.workdir.mkdir()
            with pytest.raises(SimulatedCrash):
                run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS)
            load_checkpoint(run.checkpoint_path)


# A finished task's checkpoint edited so that the model's words are not what the API returns (a list of blocks) or a
# text block holds no text: refused by name on load, never an unexpected error on the resume that reads them.
def _closing_as(content):
    return lambda cp: cp["messages"][-1].update(content=content)


def _closing_twice(cp):
    cp["messages"].append({"role": "assistant", "content": "hi"})


NOT_THE_MODELS_WORDS = {
    "closing words as a string": (_closing_as("done"), "配列ではありません"),
    "closing words as a number": (_closing_as(5), "配列ではありません"),
    "closing words as null": (_closing_as(None), "配列ではありません"),
    "a text block with a number": (_closing_as([{"type": "text", "text": 5}]), "text が文字列ではありません"),
    "a text block without text": (_closing_as([{"type": "text"}]), "text が文字列ではありません"),
    "a second closing message as a string": (_closing_twice, "配列ではありません"),
}


@pytest.mark.parametrize("case", NOT_THE_MODELS_WORDS)
@pytest.mark.parametrize("flags", [[], ["--parallel"]], ids=["lesson", "parallel"])
def test_a_finished_checkpoint_whose_model_words_are_not_blocks_is_refused_by_name(workdir, case, flags):
    from conftest import run_cli

    assert run_cli(workdir, *flags).returncode == 0
    path = workdir / "checkpoint.json"
    cp = json.loads(path.read_text(encoding="utf-8"))
    edit, fragment = NOT_THE_MODELS_WORDS[case]
    edit(cp)
    path.write_text(json.dumps(cp, ensure_ascii=False), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in workdir.iterdir()}
    proc = run_cli(workdir, *flags, "--resume")
    assert proc.returncode == 1 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert "予期しないエラー" not in proc.stderr and "Traceback" not in proc.stderr
    assert "checkpoint.json" in proc.stderr and fragment in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in workdir.iterdir()} == before


def test_a_version_2_checkpoint_with_pending_calls_after_the_models_words_is_refused(workdir):
    from conftest import run_cli

    assert run_cli(workdir, "--parallel", env={"CRASH_AFTER": "after-save-a:2"}).returncode == 137
    path = workdir / "checkpoint.json"
    cp = json.loads(path.read_text(encoding="utf-8"))
    cp["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "hi"}]})
    path.write_text(json.dumps(cp, ensure_ascii=False), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in workdir.iterdir()}
    proc = run_cli(workdir, "--parallel", "--resume")
    assert proc.returncode == 1 and "最後が user" in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in workdir.iterdir()} == before


@pytest.mark.parametrize("flags", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_a_finished_task_resumed_after_its_output_was_removed_says_the_file_is_gone(tmp_path, flags):
    """--resume of a finished task reports the model's recorded closing words ("report.txt を書き出しました"); when a
    file write_report wrote has been removed since, one more line says so and what to do, and nothing runs again."""
    work = tmp_path / "work"
    code, _, err = cli_in_process(*flags, "--workdir", str(work))
    assert code == 0 and err == ""
    written = [name for name in ("report.txt", "summary.txt") if (work / name).exists()]
    assert written == (["report.txt", "summary.txt"] if "--parallel" in flags else ["report.txt"])
    code, _, err = cli_in_process(*flags, "--resume", "--workdir", str(work))
    assert code == 0 and err == ""  # everything still there: nothing to add
    runs = (work / "tool-runs.log").read_bytes()
    for gone in written:
        (work / gone).unlink()
        code, out, err = cli_in_process(*flags, "--resume", "--workdir", str(work))
        assert code == 0 and "[done]" in out
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("注意: "), err
        missing = [name for name in written if not (work / name).exists()]
        assert lines[0] == texts.OUTPUTS_GONE.format(files=", ".join(missing))
        assert (work / "tool-runs.log").read_bytes() == runs and not (
            work / gone
        ).exists()  # nothing ran again


@pytest.mark.parametrize(
    "messages, empty",
    [
        ([{"role": "user", "content": ""}], 0),
        ([{"role": "user", "content": []}], 0),
        (_turns(([], [_text()])), 1),  # the model's turn with nothing in it, answered
        (_turns(([_use("toolu_01")], [])), 2),  # the answer to a call, empty
        ([*_turns(([_use("toolu_01")], [_result("toolu_01")])), {"role": "assistant", "content": []}], None),
    ],
    ids=[
        "task as empty text",
        "task as no blocks",
        "an empty model turn",
        "an empty answer",
        "empty closing words",
    ],
)
def test_an_empty_message_is_refused_unless_it_is_the_models_closing_words(tmp_path, messages, empty):
    """The API refuses a message with empty content, so a checkpoint holding one could never be sent again; the
    model's closing words may be empty (the loop saves a response with no text as it came, and never sends it)."""
    path = tmp_path / "checkpoint.json"
    path.write_text(json.dumps(_with(messages)), encoding="utf-8")
    if empty is None:
        assert load_checkpoint(path)["messages"] == messages
    else:
        with pytest.raises(HarnessError, match=re.escape(f"messages[{empty}].content が空です")):
            load_checkpoint(path)


def test_a_model_that_closes_with_no_words_leaves_a_checkpoint_that_loads_and_resumes(tmp_path):
    """What the loop writes itself always loads: a response with an empty content list ends the task as done."""

    class SaysNothing:
        def __init__(self):
            self.messages = self

        def create(self, **_):
            return {
                "content": [],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 0},
            }

    run = Run(tmp_path / "work")
    run.workdir.mkdir()
    assert run_agent(run, SaysNothing(), tools=TOOL_SCHEMAS) == ""
    assert load_checkpoint(run.checkpoint_path)["messages"][-1] == {"role": "assistant", "content": []}
    assert run_agent(run, SaysNothing(), tools=TOOL_SCHEMAS, resume=True) == ""
