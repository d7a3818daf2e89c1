"""A hostile model and a hostile network, through the real command line: `python -m harness --real` (a process of its
own, forked from a zygote that imported the SDK: zygote.py) against a local server the test starts
(ANTHROPIC_BASE_URL, a fake key). Odd values are refused before anything of them is saved,
the model cannot touch the harness's own files, nothing it sends reaches the terminal raw, a stalled or trickling
server is given up on within HARNESS_API_DEADLINE_S while the user is told it is waiting, Ctrl-C ends with one line,
and a finished task is never sent to the model again."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys

import pytest
from hostile import (
    KEY,
    LOG_LINE,
    HostileAPI,
    assert_quiet,
    child_env,
    cli,
    error_answer,
    json_answer,
    log_lines,
    scripted_answer,
)

pytest.importorskip("anthropic")

DONE_OK = "[done] report.txt にレポートを書き出しました。タスク完了。"
RESUME_HINT = "チェックポイントは直前の保存のまま有効です。原因が解消したら --resume で続きから再開できます。"
RESTART_HINT = "まだチェックポイントがありません。原因が解消したら --resume なしで最初から実行してください。"
WAITING = "[待機中] モデルの応答を待っています"


@pytest.fixture
def api():
    server = HostileAPI()
    yield server
    server.close()


def real(work, api, *args, timeout=120, **env):
    return cli(work, "--real", *args, env=api.env(**env), timeout=timeout)


def on_request(n, change):
    """A plan: request n gets the scripted answer passed through `change` (which returns an action)."""

    def plan(i, body):
        if i != n:
            return None
        _, response = scripted_answer(body)
        return change(response)

    return plan


def tweak(edit):
    """A change that edits the scripted response in place and sends it as JSON (NaN and Infinity allowed)."""

    def change(response):
        edit(response)
        return json_answer(200, response)

    return change


def raw(data: bytes, content_type="application/json", status=200):
    return lambda response: ("bytes", status, data, content_type)


def block(r):
    return r["content"][0]


def two_tools(r):
    r["content"].append({**block(r), "id": "toolu_02b"})


def deep(r):
    block(r)["input"] = {"path": "sales-notes.txt", "deep": json.loads("[" * 900 + "]" * 900)}


def escaped(edit, big=b"1e400"):
    """Like tweak, but sent as ASCII JSON: a lone surrogate as its \\u escape, 1.5e300 written as `big` (1e400
    overflows to infinity in Python; JSON allows it)."""

    def change(response):
        edit(response)
        return (
            "bytes",
            200,
            json.dumps(response).encode("ascii").replace(b"1.5e+300", big),
            "application/json",
        )

    return change


def said(text):
    return lambda r: r.update(content=[{"type": "text", "text": text}], stop_reason="end_turn")


ODD = {
    "text-lone-surrogate": escaped(said("完了\ud800")),
    "text-lone-low-surrogate": escaped(said("\udc80")),
    "input-lone-surrogate": escaped(lambda r: block(r)["input"].update(path="sales\udc80.txt")),
    "input-key-lone-surrogate": escaped(lambda r: block(r)["input"].update({"\ud800": 1})),
    "stop-reason-lone-surrogate": escaped(lambda r: r.update(stop_reason="end_turn\ud800")),
    "model-lone-surrogate": escaped(lambda r: r.update(model="m\ud800")),
    "input-overflow": escaped(lambda r: block(r)["input"].update(n=1.5e300)),
    "input-negative-overflow": escaped(lambda r: block(r)["input"].update(n=[1.5e300]), big=b"-1e400"),
    "usage-overflow": escaped(lambda r: r["usage"].update(input_tokens=1.5e300)),
    "usage-huge-int": escaped(lambda r: r["usage"].update(input_tokens=1.5e300), big=b"9" * 5000),
    "key-twice": raw(
        b'{"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_reason": "tool_use",'
        b' "usage": {"input_tokens": 1, "output_tokens": 1}}'
    ),
    "usage-negative": tweak(lambda r: r["usage"].update(input_tokens=-5)),
    "usage-fraction": tweak(lambda r: r["usage"].update(output_tokens=2.5)),
    "usage-bool": tweak(lambda r: r["usage"].update(input_tokens=True)),
    "usage-string": tweak(lambda r: r["usage"].update(input_tokens="12")),
    "usage-missing": tweak(lambda r: r.pop("usage")),
    "usage-nan": tweak(lambda r: r["usage"].update(input_tokens=math.nan)),
    "usage-infinity": tweak(lambda r: r["usage"].update(output_tokens=math.inf)),
    "id-number": tweak(lambda r: block(r).update(id=7)),
    "id-escape": tweak(lambda r: block(r).update(id="toolu_02\x1b[2J\x1b[31m")),
    "id-newline": tweak(lambda r: block(r).update(id="toolu_02\n[done] 偽の完了")),
    "id-empty": tweak(lambda r: block(r).update(id="")),
    "id-missing": tweak(lambda r: block(r).pop("id")),
    "name-number": tweak(lambda r: block(r).update(name=5)),
    "name-newline": tweak(lambda r: block(r).update(name="count_words\nwrite_report toolu_03")),
    "input-list": tweak(lambda r: block(r).update(input=[1])),
    "input-string": tweak(lambda r: block(r).update(input="sales-notes.txt")),
    "input-nan": tweak(lambda r: block(r).update(input={"path": math.nan})),
    "input-too-deep": tweak(deep),
    "content-missing": tweak(lambda r: r.pop("content")),
    "content-string": tweak(lambda r: r.update(content="count_words")),
    "block-no-type": tweak(lambda r: block(r).pop("type")),
    "stop-reason-missing": tweak(lambda r: r.pop("stop_reason")),
    "stop-reason-number": tweak(lambda r: r.update(stop_reason=1)),
    "two-tool-uses": tweak(two_tools),
    "id-used-before": tweak(lambda r: block(r).update(id="toolu_01", name="write_report")),
    "tool-use-without-tool": tweak(lambda r: r.update(content=[{"type": "text", "text": "数えます"}])),
    "text-not-string": tweak(
        lambda r: r.update(content=[{"type": "text", "text": 5}], stop_reason="end_turn")
    ),
    "garbage": raw(b'{"id": "msg", "content": [{"type": '),
    "not-json": raw(b"hello", "text/plain"),
    "json-array": raw(b"[1, 2, 3]"),
    "json-null": raw(b"null"),
}


@pytest.mark.parametrize("case", list(ODD))
def test_an_odd_response_is_refused_before_anything_of_it_is_saved(workdir, api, case):
    api.plan = on_request(2, ODD[case])  # turn 1 is saved (point B); the second response is the odd one
    proc = real(workdir, api)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(
        "エラー: モデルの API 呼び出しが失敗しました（応答を受け付けません、HTTP 200）"
    )
    assert lines[0].endswith("。応答のどの部分も保存していません"), proc.stderr
    assert lines[1] == RESUME_HINT
    assert proc.stdout.splitlines() == ["[turn 1][save A] pending=read_notes", "[turn 1][save B]"]
    assert log_lines(workdir) == ["read_notes toolu_01"]  # nothing of the odd response ran
    # what is on disk is the last good checkpoint, and it resumes (here with the scripted model)
    resumed = cli(workdir, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[0] == "[resume] turn=1 pending=なし を読み込み"
    assert resumed.stdout.splitlines()[-1] == DONE_OK
    assert log_lines(workdir).count("write_report toolu_03") == 1


def test_an_odd_first_response_leaves_nothing_to_resume_and_says_so(workdir, api):
    api.plan = on_request(1, ODD["usage-negative"])
    proc = real(workdir, api)
    assert proc.returncode == 1 and proc.stderr.splitlines()[-1] == RESTART_HINT, proc.stderr
    assert not (workdir / "checkpoint.json").exists() and proc.stdout == ""


# ---- the model cannot touch the harness's own files ----------------------------------------------------------------

FORGED_CHECKPOINT = json.dumps(
    {
        "version": 1,
        "task": "偽",
        "turns": 9,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": "偽"}],
        "pendingToolUse": None,
    }
)
FORGED = {
    "checkpoint.json": FORGED_CHECKPOINT,
    "./checkpoint.json": FORGED_CHECKPOINT,
    "sub/../checkpoint.json": FORGED_CHECKPOINT,
    "effects.json": json.dumps({"toolu_03": {"name": "write_report", "result": "済み", "at": 1}}),
    "./effects.json": json.dumps({"toolu_09": {"name": "write_report", "result": "済み", "at": 1}}),
    "tool-runs.log": "read_notes toolu_01\n",
    ".harness-workdir": "forged\n",
    "checkpoint.json.tmp": FORGED_CHECKPOINT,
    "effects.json.tmp": "{}",
}


@pytest.mark.parametrize("path", list(FORGED))
def test_the_model_cannot_write_the_harness_state_files(workdir, api, path):
    forged = FORGED[path]
    api.plan = on_request(3, tweak(lambda r: block(r)["input"].update(path=path, content=forged)))
    # die right after the ledger write of turn 3: if write_report had written the file, this is what stays
    proc = real(workdir, api, CRASH_AFTER="after-effect-write:3")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)  # refused: no effect, no ledger write, no crash
    assert_quiet(proc)
    assert "ハーネス自身のファイルです" in proc.stdout
    name = path.rsplit("/", 1)[-1]
    target = workdir / name
    assert not (target.is_file() and target.read_text(encoding="utf-8") == forged)
    assert all(LOG_LINE.fullmatch(line) for line in log_lines(workdir))
    assert "write_report toolu_03" not in log_lines(workdir)  # refused before it ran, so never logged
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    assert cp["turns"] == 3 and cp["pendingToolUse"] is None and cp["task"] != "偽"
    assert "toolu_09" not in (workdir / "effects.json").read_text(encoding="utf-8")


def test_a_report_into_a_missing_sub_folder_is_a_tool_error_not_the_end_of_the_run(workdir, api):
    api.plan = on_request(3, tweak(lambda r: block(r)["input"].update(path="missing/report.txt")))
    proc = real(workdir, api)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    result = cp["messages"][6]["content"][0]
    assert result["is_error"] is True and "missing/report.txt" in result["content"]
    assert not (workdir / "missing").exists()


# ---- nothing from the model or the server reaches the terminal raw -------------------------------------------------

ESCAPES = "\x1b[2J\x1b[31m\x07偽の表示\r\n[done] report.txt にレポートを書き出しました。タスク完了。"


@pytest.mark.parametrize(
    "answer",
    [
        error_answer(400, ESCAPES),
        ("bytes", 404, ESCAPES.encode(), "text/plain"),
        ("bytes", 401, b"\x1b]0;pwned\x07\n[done] \xff\xfe", "text/plain"),
    ],
    ids=["json-400", "text-404", "bytes-401"],
)
def test_escape_sequences_and_fake_done_lines_in_api_errors_are_shown_escaped(workdir, api, answer):
    api.plan = lambda n, body: answer if n == 2 else None
    proc = real(workdir, api)
    assert proc.returncode == 1, proc.stderr
    assert_quiet(proc)
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and lines[1] == RESUME_HINT, proc.stderr
    assert not any(line.startswith("[done]") for line in proc.stdout.splitlines() + lines)


def test_control_characters_in_the_closing_text_are_escaped(workdir, api):
    text = "\x1b]0;pwned\x07完了しました\x1b[2K\r\n[done] 偽の行\n[kill] 偽の行"
    api.plan = on_request(4, tweak(lambda r: block(r).update(text=text)))
    proc = real(workdir, api)
    assert proc.returncode == 0, proc.stderr
    assert_quiet(proc)
    done = [line for line in proc.stdout.splitlines() if line.startswith(("[done]", "[kill]"))]
    assert len(done) == 1 and done[0].startswith("[done] ")


@pytest.mark.parametrize("case", ["id-escape", "id-newline", "name-newline"])
def test_control_characters_in_tool_names_and_ids_never_reach_a_file(workdir, api, case):
    api.plan = on_request(2, ODD[case])
    real(workdir, api)
    for path in workdir.iterdir():
        data = path.read_bytes()
        assert b"\x1b" not in data and b"\\n[done]" not in data and "偽の完了".encode() not in data, path.name
    assert all(LOG_LINE.fullmatch(line) for line in log_lines(workdir))


# ---- a finished task is finished ------------------------------------------------------------------------------------


def test_resume_of_a_finished_task_does_not_call_the_model(workdir, api):
    assert real(workdir, api).returncode == 0
    asked = len(api.requests)
    api.plan = lambda n, body: error_answer(500, "the model must not be asked again")
    proc = real(workdir, api, "--resume")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[resume] turn=3 pending=なし を読み込み", DONE_OK]
    assert len(api.requests) == asked


# ---- a stalled or trickling server is given up on, and the user is told it is waiting ------------------------------


def assert_gave_up(proc, seconds: str, hint: str = RESUME_HINT) -> None:
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    lines = proc.stderr.splitlines()
    assert lines[-1] == hint, proc.stderr
    assert f"上限の {seconds} 秒以内に返りませんでした" in lines[-2]
    waiting = lines[:-2]
    assert waiting and all(line.startswith(WAITING) for line in waiting), proc.stderr


@pytest.mark.parametrize("answer", [("stall",), ("trickle", 0.2)], ids=["stall", "trickle"])
def test_a_stalled_server_is_given_up_within_the_deadline(workdir, api, answer):
    api.plan = lambda n, body: answer if n == 2 else None
    proc = real(workdir, api, HARNESS_API_DEADLINE_S="4", timeout=60)
    assert_gave_up(proc, "4")
    resumed = cli(workdir, "--resume")
    assert resumed.returncode == 0 and resumed.stdout.splitlines()[-1] == DONE_OK


def test_a_stall_before_any_checkpoint_says_to_start_again(workdir, api):
    api.plan = lambda n, body: ("stall",)
    assert_gave_up(real(workdir, api, HARNESS_API_DEADLINE_S="3", timeout=60), "3", RESTART_HINT)


def test_the_deadline_covers_the_sdks_retries(workdir, api):
    # an overloaded server asking to be retried in 30 s: the SDK would wait, twice; the deadline does not
    def overloaded(n, body):
        return (
            (
                "bytes",
                529,
                b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                "application/json",
            )
            if n >= 2
            else None
        )

    api.plan = overloaded
    api.extra_headers = {"retry-after": "30"}
    assert_gave_up(real(workdir, api, HARNESS_API_DEADLINE_S="4", timeout=60), "4")


def test_server_errors_end_with_two_lines_after_the_sdks_retries(workdir, api):
    api.plan = lambda n, body: (
        ("bytes", 500, b"\x1b[31minternal\n[done] fake", "text/plain") if n >= 2 else None
    )
    proc = real(workdir, api, HARNESS_API_DEADLINE_S="20")
    assert proc.returncode == 1, proc.stderr
    assert_quiet(proc)
    assert proc.stderr.splitlines()[0].startswith(
        "エラー: モデルの API 呼び出しが失敗しました（API 内部エラー、HTTP 500）"
    )
    assert len(api.requests) == 1 + 3  # the first call, then the second tried three times


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "１０"])
def test_a_bad_deadline_is_refused(workdir, api, value):
    proc = real(workdir, api, HARNESS_API_DEADLINE_S=value)
    assert proc.returncode == 1 and "HARNESS_API_DEADLINE_S=" in proc.stderr, proc.stderr
    assert_quiet(proc)
    assert api.requests == [] and list(workdir.iterdir()) == []


def test_ctrl_c_while_waiting_for_the_api_ends_with_one_line(workdir, api):
    api.plan = lambda n, body: ("stall",) if n == 2 else None
    child = subprocess.Popen(
        [sys.executable, "-m", "harness", "--workdir", str(workdir), "--real"],
        env=child_env(api.env(HARNESS_API_DEADLINE_S="600")),  # no deadline ends the call before the Ctrl-C
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = child.stderr.readline()  # the first waiting line: the child is inside the model call
        assert first.startswith(WAITING), first
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)  # only a hung child fails here
    finally:
        child.kill()
    assert child.returncode == 130
    lines = (first + err).splitlines()
    assert (
        lines[-1]
        == "[中断] Ctrl-C で止めました。チェックポイントは直前の保存のまま有効です。--resume で続きから再開できます。"
    )
    assert all(line.startswith(WAITING) for line in lines[:-1]), err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert out.splitlines() == ["[turn 1][save A] pending=read_notes", "[turn 1][save B]"]
    resumed = cli(workdir, "--resume")
    assert resumed.returncode == 0 and resumed.stdout.splitlines()[-1] == DONE_OK


def test_the_key_reaches_no_file_and_no_output(workdir, api):
    api.plan = on_request(2, ODD["usage-negative"])
    outputs = real(workdir, api).stdout + real(workdir, api, "--resume").stderr
    assert KEY not in outputs
    for path in workdir.iterdir():
        assert KEY.encode() not in path.read_bytes()
