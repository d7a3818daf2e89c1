"""The model clients: a deterministic scripted model (the default, no key needed) and the real anthropic SDK adapter."""

from __future__ import annotations

import contextlib
import json
import os
import time

from . import texts
from .files import parse_json
from .scene import response_problem
from .vocab import MANY_TOOL_USES, NOTES_FILE, REPORT_FILE

DEFAULT_MODEL = "claude-sonnet-5-5"  # the one place the model id lives; ANTHROPIC_MODEL overrides it
SCRIPTED_MODEL = "scripted-lesson-6"


class APIError(Exception):
    """What the real API would answer with an HTTP error (the scripted model uses 400, like a bad request)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"Error code: {status} - {message}")
        self.status = status
        self.message = message


def pairing_problem(messages: list[dict]) -> str | None:
    """The real API's complaint if a tool_use is not answered first thing in the next user message, else None."""
    if not messages or messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    for i, msg in enumerate(messages):
        blocks = msg["content"] if isinstance(msg["content"], list) else []
        if msg["role"] == "assistant":
            ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            nxt = messages[i + 1]["content"] if i + 1 < len(messages) else None
            answered = (
                {b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"}
                if isinstance(nxt, list)
                else set()
            )
            missing = [x for x in ids if x not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                    "in the next message."
                )
        else:
            prev = messages[i - 1]["content"] if i > 0 and messages[i - 1]["role"] == "assistant" else []
            asked = {b.get("id") for b in prev if isinstance(b, dict) and b.get("type") == "tool_use"}
            stray = [
                b.get("tool_use_id")
                for b in blocks
                if b.get("type") == "tool_result" and b.get("tool_use_id") not in asked
            ]
            if stray:
                return (
                    f"messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {', '.join(stray)}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                )
    return None


def _result_of(messages: list[dict], tool_use_id: str) -> dict | None:
    for msg in messages:
        if msg["role"] == "user" and isinstance(msg["content"], list):
            for b in msg["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id:
                    return b
    return None


def _report(messages: list[dict]) -> str:
    """The report R3 writes, composed from what the tools returned in this conversation."""
    notes = _result_of(messages, "toolu_01")
    count = _result_of(messages, "toolu_02")
    points = [ln for ln in str(notes.get("content") if notes else "").splitlines() if ln.startswith("- ")]
    body = "\n".join(points) if points else "（メモの要点を読み取れませんでした）"
    tally = count.get("content") if count else "不明"
    return f"# 営業メモのレポート\n\n要点（{len(points)}件）:\n{body}\n\n元のメモ: {tally}\n"


class ScriptedModel:
    """A stand-in for client.messages.create that picks R1..R4 from the conversation, so any crash point can resume."""

    model = SCRIPTED_MODEL

    def __init__(self) -> None:
        self.messages = self  # so the loop calls client.messages.create(...), as with the real SDK
        self.calls = 0

    def create(self, *, messages: list[dict], tools: list[dict] | None = None, **_: object) -> dict:
        self.calls += 1
        problem = pairing_problem(messages)
        if problem:
            raise APIError(400, problem)
        step = sum(1 for m in messages if m["role"] == "assistant")
        if step == 0:
            content = [_tool_use("toolu_01", "read_notes", {"path": NOTES_FILE})]
        elif step == 1:
            content = [_tool_use("toolu_02", "count_words", {"path": NOTES_FILE})]
        elif step == 2:
            content = [
                _tool_use("toolu_03", "write_report", {"path": REPORT_FILE, "content": _report(messages)})
            ]
        elif step == 3:
            last = messages[-1]["content"]
            failed = (
                [b for b in last if isinstance(last, list) and b.get("is_error")]
                if isinstance(last, list)
                else []
            )
            text = texts.DONE_UNKNOWN.format(name="write_report") if failed else texts.DONE_OK
            content = [{"type": "text", "text": text}]
        else:
            raise APIError(
                400,
                f"スクリプト化されたモデルのレスポンスは R1〜R4 の4つだけです（{step + 1}個目を要求されました）",
            )
        stop = "tool_use" if content[0]["type"] == "tool_use" else "end_turn"
        return {
            "id": f"msg_scripted_{step + 1:02d}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            # deterministic stand-in for token counts: about four characters per token
            "usage": {
                "input_tokens": len(json.dumps(messages, ensure_ascii=False)) // 4,
                "output_tokens": len(json.dumps(content, ensure_ascii=False)) // 4,
            },
        }


def _tool_use(id: str, name: str, input: dict) -> dict:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


# A model call (the SDK's retries included) is given up after this long; HARNESS_API_DEADLINE_S changes it.
DEFAULT_DEADLINE_S = 120.0


def wait_notice_every(deadline_s: float) -> float:
    """How often a waiting caller hears that the call is still running: every 10 s, or 4 times within a short deadline."""
    return min(10.0, deadline_s / 4)


class ResponseRefused(APIError):
    """A response the harness will not take (odd values, not JSON, a second tool_use): nothing of it is saved.

    Its status is the HTTP status the body came with (a success, 200: the body is what is wrong)."""


class AnthropicClient:
    """The real Messages API behind the same create() call; anthropic is imported only when this is built.

    The key comes only from the environment (ANTHROPIC_API_KEY, read by the SDK itself) and the model id from
    ANTHROPIC_MODEL, else DEFAULT_MODEL. SDK errors become APIError, so the loop and the command line treat the
    real API and the scripted model alike.

    Nothing the server sends is believed: the body is parsed as strict JSON (no NaN) and checked against the same
    rules the checkpoint loader applies (scene.response_problem) before the loop sees it, so an odd response stops
    the run with the last checkpoint intact instead of being saved. A call, retries included, is given up after
    `deadline_s` seconds however the server behaves (a stall, one byte every few seconds); while it waits,
    `on_wait(elapsed_s, deadline_s)` is called every few seconds.
    """

    def __init__(
        self,
        model: str | None = None,
        max_tokens: int = 1024,
        *,
        deadline_s: float = DEFAULT_DEADLINE_S,
        on_wait=None,
        parallel: bool = False,
        max_tool_uses: int | None = None,
        **client_kwargs: object,
    ) -> None:
        import anthropic  # lazy: importing it costs seconds

        self.model = model or os.environ.get("ANTHROPIC_MODEL") or DEFAULT_MODEL
        self.max_tokens = max_tokens
        self.parallel = bool(parallel)  # beyond the lesson: --parallel (several tool_use blocks a turn)
        self.deadline_s = float(deadline_s)
        self.on_wait = on_wait
        self.max_tool_uses = (
            max_tool_uses if max_tool_uses is not None else (MANY_TOOL_USES if parallel else 1)
        )
        self._anthropic = anthropic
        self._kwargs = {"timeout": self.deadline_s, "max_retries": 2, **client_kwargs}
        self._client = anthropic.Anthropic(**self._kwargs)
        self.messages = self

    def create(self, *, messages: list[dict], tools: list[dict] | None = None, **_: object) -> dict:
        status, body = self._call_within_deadline(messages, tools or [])
        try:
            response = parse_json(body)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ResponseRefused(status, texts.RESPONSE_NOT_JSON) from None
        problem = response_problem(response, messages, self.max_tool_uses)
        if problem:
            raise ResponseRefused(status, texts.RESPONSE_REFUSED.format(detail=problem))
        return _without_nulls(response)

    def _request(self, messages: list[dict], tools: list[dict]) -> tuple[int, bytes]:
        raw = self._client.messages.with_raw_response.create(
            model=self.model,
            max_tokens=self.max_tokens,
            tools=tools,
            messages=messages,
            # one tool per turn: the lesson's single-pending-call protocol (--parallel: several)
            tool_choice={"type": "auto", **({} if self.parallel else {"disable_parallel_tool_use": True})},
        )
        return raw.http_response.status_code, raw.read()

    def _call_within_deadline(self, messages: list[dict], tools: list[dict]) -> tuple[int, bytes]:
        """(HTTP status, raw body) of one call made in a worker thread, waited for at most deadline_s (Ctrl-C
        still works)."""
        import threading  # here: only --real needs it, and the scripted command line starts without it

        outcome: dict = {}

        def call() -> None:
            try:
                outcome["answer"] = self._request(messages, tools)
            except BaseException as err:  # noqa: BLE001 (handed to the waiting thread)
                outcome["error"] = err

        worker = threading.Thread(target=call, name="harness-model-call", daemon=True)
        start = time.monotonic()
        deadline, every = start + self.deadline_s, wait_notice_every(self.deadline_s)
        next_notice = start + every
        worker.start()
        while True:
            now = time.monotonic()
            if now >= deadline:
                break
            worker.join(min(deadline, next_notice) - now)
            if not worker.is_alive():
                break
            now = time.monotonic()
            if now >= next_notice and now < deadline:
                if self.on_wait is not None:
                    self.on_wait(now - start, self.deadline_s)
                next_notice += every
        if worker.is_alive():
            self._abandon()
            raise APIError(0, texts.API_DEADLINE.format(seconds=f"{self.deadline_s:g}"))
        if "error" in outcome:
            raise self._translate(outcome["error"]) from None
        return outcome["answer"]

    def _abandon(self) -> None:
        """Close the connection the abandoned call is stuck on (so its thread ends), and start a fresh client."""
        if "http_client" in self._kwargs:  # someone else's client: leave it open
            return
        with contextlib.suppress(Exception):  # best effort: the thread is a daemon anyway
            self._client.close()
        self._client = self._anthropic.Anthropic(**self._kwargs)

    def _translate(self, err: BaseException) -> BaseException:
        sdk = self._anthropic
        if isinstance(err, sdk.APITimeoutError):
            return APIError(0, texts.API_TIMEOUT)
        if isinstance(err, sdk.APIConnectionError):
            return APIError(0, texts.API_CONNECTION.format(error=err))
        if isinstance(err, sdk.APIStatusError):
            return APIError(err.status_code, _status_message(err))
        if isinstance(err, sdk.APIError):
            return APIError(0, texts.API_ODD_ERROR.format(error=err))
        return err


def _without_nulls(response: dict) -> dict:
    """The response as the SDK's model_dump(exclude_none=True) stores it: no null fields in it or its blocks."""
    plain = {k: v for k, v in response.items() if v is not None}
    plain["content"] = [{k: v for k, v in block.items() if v is not None} for block in response["content"]]
    return plain


def _status_message(err) -> str:
    body = err.body if isinstance(err.body, dict) else {}
    detail = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else None
    return str(detail or err.message)
