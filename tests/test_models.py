"""The scripted model: real Message shapes, the API's pairing rule, R1..R4 chosen from the conversation."""

from __future__ import annotations

import json

import pytest

from harness import TOOL_SCHEMAS, APIError, CrashPlan, Run, ScriptedModel, SimulatedCrash, run_agent
from harness.models import AnthropicClient

anthropic = pytest.importorskip("anthropic")


def clean_run_requests(workdir):
    """Every request the loop sends in a clean run, and each response, recorded."""
    model = ScriptedModel()
    log = []
    real_create = model.create

    def recording_create(**kw):
        response = real_create(**kw)
        log.append((json.loads(json.dumps(kw["messages"])), response))
        return response

    model.create = recording_create
    model.messages = model
    run_agent(Run(workdir), model, tools=TOOL_SCHEMAS)
    return log


def test_every_scripted_response_validates_as_an_anthropic_message(workdir):
    log = clean_run_requests(workdir)
    assert [r["stop_reason"] for _, r in log] == ["tool_use", "tool_use", "tool_use", "end_turn"]
    for _, response in log:
        message = anthropic.types.Message.model_validate(response)
        assert message.model_dump(mode="json", exclude_none=True) == {
            k: v for k, v in response.items() if v is not None
        }
    names = [r["content"][0].get("name") for _, r in log[:3]]
    assert names == ["read_notes", "count_words", "write_report"]


def test_tool_schemas_are_valid_sdk_tool_params():
    for schema in TOOL_SCHEMAS:
        anthropic.types.ToolParam(**schema)  # a TypedDict: check the keys the SDK knows
        assert schema["input_schema"]["type"] == "object"
        assert set(schema["input_schema"]["required"]) <= set(schema["input_schema"]["properties"])


def test_unanswered_tool_use_is_rejected_like_the_real_api(workdir):
    log = clean_run_requests(workdir)
    messages = log[2][0]  # the request that asked for R3: [user, asst R1, user result, asst R2, user result]
    broken = messages[:-1]  # drop the last tool_result: R2's tool_use is left unanswered
    with pytest.raises(APIError) as err:
        ScriptedModel().create(messages=broken + [{"role": "user", "content": "続けて"}])
    assert err.value.status == 400
    assert "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_02" in str(
        err.value
    )


def test_tool_result_without_its_tool_use_is_rejected(workdir):
    orphan = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_03", "content": "x"}]}
    ]
    with pytest.raises(APIError, match="unexpected `tool_use_id`"):
        ScriptedModel().create(messages=orphan)


def test_asking_past_the_last_response_raises(workdir):
    log = clean_run_requests(workdir)
    final_messages, r4 = log[3]
    more = final_messages + [
        {"role": "assistant", "content": r4["content"]},
        {"role": "user", "content": "もう一度"},
    ]
    with pytest.raises(APIError, match="R1〜R4"):
        ScriptedModel().create(messages=more)


def test_same_conversation_gives_same_response_whatever_the_call_count(workdir):
    log = clean_run_requests(workdir)
    fresh = ScriptedModel()
    assert fresh.create(messages=log[2][0]) == log[2][1]  # a resumed process starts with a new model


def test_two_runs_in_one_process_do_not_share_crash_counts(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for wd in (a, b):
        with pytest.raises(SimulatedCrash, match="after-save-a:2"):
            run_agent(Run(wd, crash=CrashPlan("after-save-a", 2)), ScriptedModel(), tools=TOOL_SCHEMAS)
        assert json.loads((wd / "checkpoint.json").read_text())["pendingToolUse"]["name"] == "count_words"


def test_anthropic_adapter_sends_tools_and_single_call_tool_choice_offline():
    httpx2 = pytest.importorskip("httpx2")
    sent = []
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [
            {"type": "tool_use", "id": "toolu_x", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 7},
    }

    def handler(request):
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=body)

    client = AnthropicClient(
        model="claude-test",
        api_key="sk-test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    response = client.messages.create(tools=TOOL_SCHEMAS, messages=[{"role": "user", "content": "t"}])
    assert sent[0]["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert sent[0]["tools"] == TOOL_SCHEMAS and sent[0]["model"] == "claude-test"
    assert response["content"] == body["content"] and response["stop_reason"] == "tool_use"


def test_the_deadline_is_for_the_whole_call_and_the_caller_hears_it_is_waiting():
    httpx2 = pytest.importorskip("httpx2")
    import time

    from harness.models import DEFAULT_DEADLINE_S, wait_notice_every

    def slow(request):
        time.sleep(60)  # the mock transport has no per-read timeout: only the harness's deadline can end this
        return httpx2.Response(500)

    heard = []
    client = AnthropicClient(
        api_key="sk-test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(slow)),
        deadline_s=2,  # notices every 0.5 s: a busy machine still wakes the caller for one before the deadline
        on_wait=lambda elapsed, deadline: heard.append((elapsed, deadline)),
    )
    start = time.monotonic()
    with pytest.raises(APIError, match="上限の 2 秒以内に返りませんでした"):
        client.messages.create(tools=TOOL_SCHEMAS, messages=[{"role": "user", "content": "t"}])
    assert time.monotonic() - start < 50  # given up at the deadline, not when the server answered
    assert heard and all(
        deadline == 2 and 0 < elapsed <= 2 for elapsed, deadline in heard
    )  # told before giving up
    assert wait_notice_every(DEFAULT_DEADLINE_S) == 10 and wait_notice_every(2) == 0.5


def test_a_caller_too_busy_to_wake_for_a_notice_still_hears_once_before_the_call_is_given_up(monkeypatch):
    httpx2 = pytest.importorskip("httpx2")
    import time

    from harness import models

    def slow(request):
        time.sleep(60)
        return httpx2.Response(500)

    monkeypatch.setattr(models, "wait_notice_every", lambda deadline_s: 3600)  # no notice falls due in time
    heard = []
    client = AnthropicClient(
        api_key="sk-test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(slow)),
        deadline_s=0.5,
        on_wait=lambda elapsed, deadline: heard.append((elapsed, deadline)),
    )
    with pytest.raises(APIError, match="上限の 0.5 秒以内に返りませんでした"):
        client.messages.create(tools=TOOL_SCHEMAS, messages=[{"role": "user", "content": "t"}])
    assert heard == [(0.5, 0.5)]
