"""Real model mode, offline: the real anthropic SDK talks to a mock transport (in-process) or to a local HTTP server
(the command line with --real), both answering like the Messages API with the scripted conversation."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import TRANSCRIPTS, read_json, run_cli
from harness import (
    TOOL_SCHEMAS,
    APIError,
    CrashPlan,
    Run,
    ScriptedModel,
    SimulatedCrash,
    load_checkpoint,
    run_agent,
)
from harness.models import DEFAULT_MODEL, AnthropicClient, pairing_problem
from harness.vocab import CRASH_LABELS

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

KEY = "sk-ant-test-DO-NOT-LEAK-3f9a1c"
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class FakeAPI:
    """Answers POST /v1/messages like the Messages API: the scripted conversation, a 400 on a broken pairing, and
    an injected failure on chosen request numbers. Records every request body."""

    def __init__(self, fail_on=(), status=529, body=OVERLOADED, tweak=None):
        self.requests: list[dict] = []
        self.fail_on, self.status, self.body, self.tweak = set(fail_on), status, body, tweak

    def answer(self, body: dict) -> tuple[int, dict]:
        self.requests.append(body)
        if len(self.requests) in self.fail_on:
            return self.status, self.body
        try:
            response = ScriptedModel().create(messages=body["messages"])
        except APIError as err:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": err.message}}
        response["model"] = body["model"]
        return 200, self.tweak(response) if self.tweak else response

    def handler(self, request):
        status, body = self.answer(json.loads(request.content))
        return httpx2.Response(status, json=body)


def client_for(api: FakeAPI, **kw) -> AnthropicClient:
    http = httpx2.Client(transport=httpx2.MockTransport(api.handler))
    return AnthropicClient(api_key=KEY, max_retries=0, http_client=http, **kw)


def test_three_turns_through_the_real_sdk_send_valid_requests(workdir, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-test-model")
    api = FakeAPI()
    text = run_agent(Run(workdir), client_for(api), tools=TOOL_SCHEMAS)
    assert text == "report.txt にレポートを書き出しました。タスク完了。"
    assert len(api.requests) == 4
    for body in api.requests:
        assert body["model"] == "claude-test-model"
        assert body["tools"] == TOOL_SCHEMAS
        assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
        assert pairing_problem(body["messages"]) is None
    assert [m["role"] for m in api.requests[-1]["messages"]] == ["user"] + ["assistant", "user"] * 3
    # the SDK's content blocks were stored as plain JSON, without nulls
    cp = load_checkpoint(workdir / "checkpoint.json")
    assert cp["messages"][1]["content"] == [
        {"type": "tool_use", "id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
    ]


def test_the_model_id_lives_in_one_place(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_MODEL", raising=False)
    assert client_for(FakeAPI()).model == DEFAULT_MODEL
    from anthropic._data import DEPRECATED_MODELS

    assert DEFAULT_MODEL not in DEPRECATED_MODELS


@pytest.mark.parametrize("label", list(CRASH_LABELS))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_crash_then_resume_sends_a_valid_conversation(workdir, label, n):
    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan(label, n)), client_for(FakeAPI()), tools=TOOL_SCHEMAS)
    api = FakeAPI()
    text = run_agent(Run(workdir), client_for(api), tools=TOOL_SCHEMAS, resume=True)
    assert api.requests, "the resume asked the model to continue"
    for body in api.requests:
        assert pairing_problem(body["messages"]) is None
    assert text in (
        "report.txt にレポートを書き出しました。タスク完了。",
        "write_report の実行状態が不明です。report.txt を確認してください。",
    )


def test_an_api_error_mid_run_leaves_a_checkpoint_that_resumes(workdir):
    with pytest.raises(APIError) as err:
        run_agent(Run(workdir), client_for(FakeAPI(fail_on={3})), tools=TOOL_SCHEMAS)
    assert err.value.status == 529 and err.value.message == "Overloaded"
    cp = load_checkpoint(workdir / "checkpoint.json")
    assert cp["turns"] == 2 and cp["pendingToolUse"] is None
    text = run_agent(Run(workdir), client_for(FakeAPI()), tools=TOOL_SCHEMAS, resume=True)
    assert text == "report.txt にレポートを書き出しました。タスク完了。"
    assert (workdir / "tool-runs.log").read_text().splitlines().count("write_report toolu_03") == 1


def test_a_max_tokens_stop_is_reported_not_looped_on(workdir):
    def cut_off(response):
        if response["content"][0].get("name") == "count_words":
            return {
                **response,
                "content": [{"type": "text", "text": "メモの文字数を"}],
                "stop_reason": "max_tokens",
            }
        return response

    api = FakeAPI(tweak=cut_off)
    text = run_agent(Run(workdir), client_for(api), tools=TOOL_SCHEMAS)
    assert len(api.requests) == 2
    assert "stop_reason=max_tokens" in text and "メモの文字数を" in text


def test_the_key_is_in_no_file_of_the_work_folder(workdir):
    with pytest.raises(SimulatedCrash):
        run_agent(
            Run(workdir, crash=CrashPlan("after-tool-run", 3)), client_for(FakeAPI()), tools=TOOL_SCHEMAS
        )
    run_agent(Run(workdir), client_for(FakeAPI()), tools=TOOL_SCHEMAS, resume=True)
    files = list(workdir.iterdir())
    assert len(files) >= 5
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path.name


# ---- the command line with --real, against a local server (ANTHROPIC_BASE_URL) ------------------------------------


@pytest.fixture
def server():
    api = FakeAPI()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, answer = api.answer(body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield api, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def real_env(url, **extra):
    return {
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_MODEL": "claude-test-model",
        **extra,
    }


def test_real_without_a_key_says_so_in_one_line(workdir):
    proc = run_cli(workdir, "--real")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "エラー: --real には環境変数 ANTHROPIC_API_KEY が必要です（鍵なしならスクリプト化されたモデルで --real を外してください）。"
    ]
    assert list(workdir.iterdir()) == []


def test_real_crash_and_resume_print_the_lessons_transcript(workdir, server):
    api, url = server
    case = TRANSCRIPTS["after-effect-write:3"]
    crashed = run_cli(workdir, "--real", env=real_env(url, CRASH_AFTER="after-effect-write:3"))
    assert crashed.stdout.splitlines() == case[0]["stdout"] and crashed.returncode == 137
    resumed = run_cli(workdir, "--real", "--resume", env=real_env(url))
    assert resumed.stdout.splitlines() == case[1]["stdout"] and resumed.returncode == 0
    assert all(b["model"] == "claude-test-model" for b in api.requests) and len(api.requests) == 4
    for proc in (crashed, resumed):
        assert KEY not in proc.stdout + proc.stderr
    for path in workdir.iterdir():
        assert KEY.encode() not in path.read_bytes()


def test_real_transient_overload_is_retried_by_the_sdk(workdir, server):
    api, url = server
    api.fail_on = {3}
    proc = run_cli(workdir, "--real", env=real_env(url))
    assert proc.returncode == 0 and len(api.requests) == 5  # the 529 was retried once, transparently


def test_real_api_error_gives_a_clear_message_and_resume_continues(workdir, server):
    api, url = server
    api.fail_on = {3, 4, 5}  # the first try and both retries
    failed = run_cli(workdir, "--real", env=real_env(url))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert failed.stderr.splitlines() == [
        "エラー: モデルの API 呼び出しが失敗しました（API が過負荷、HTTP 529）: Overloaded",
        "チェックポイントは直前の保存のまま有効です。原因が解消したら --resume で続きから再開できます。",
    ]
    assert read_json(workdir / "checkpoint.json")["turns"] == 2
    api.fail_on = set()
    resumed = run_cli(workdir, "--real", "--resume", env=real_env(url))
    assert resumed.returncode == 0
    assert resumed.stdout.splitlines()[-1] == "[done] report.txt にレポートを書き出しました。タスク完了。"
