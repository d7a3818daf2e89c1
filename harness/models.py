"""The model clients: a deterministic scripted model (the default, no key needed) and the real anthropic SDK adapter."""

from __future__ import annotations

import contextlib
import json
import os
import time

from . import texts
from .store import pairing_fault, parse_json, response_problem
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
    fault = pairing_fault(messages)
    if fault is None:
        return None
    kind, i, ids = fault
    expected, _, got = ids.partition(" / ")
    return texts.API_PAIRING_ERRORS[kind].format(i=i, ids=ids, before=i - 1, expected=expected, got=got)


def result_of(messages: list[dict], tool_use_id: str) -> dict:
    """The tool_result that answers tool_use_id in this conversation ({} if none)."""
    for msg in messages:
        if msg["role"] == "user" and isinstance(msg["content"], list):
            for b in msg["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id:
                    return b
    return {}


def note_points(messages: list[dict]) -> list[str]:
    """The notes' points ("- ..." lines) as read_notes (toolu_01) returned them."""
    notes = result_of(messages, "toolu_01")
    text = "" if notes.get("is_error") else str(notes.get("content", ""))
    return [line for line in text.splitlines() if line.startswith("- ")]


def report_text(messages: list[dict]) -> str:
    """The report write_report writes, composed from what the two reads returned in this conversation."""
    points = note_points(messages)
    count = result_of(messages, "toolu_02")
    tally = count.get("content") if count and not count.get("is_error") else texts.REPORT_UNKNOWN
    body = "\n".join(points) if points else texts.REPORT_NO_POINTS
    return texts.REPORT.format(count=len(points), body=body, tally=tally)


def _lesson_closing(messages: list[dict]) -> str:
    last = messages[-1]["content"]
    failed = isinstance(last, list) and any(b.get("is_error") for b in last)
    return texts.DONE_UNKNOWN.format(name="write_report") if failed else texts.DONE_OK


# The lesson's task as data: the calls of each turn (R1..R3) as (tool_use_id, tool, input), an input's value either
# fixed or composed from the conversation so far, then the closing words (R4). Adding a call is one line here.
LESSON_SCRIPT = {
    "task": texts.TASK,
    "model": SCRIPTED_MODEL,
    "letter": "R",
    "message_id": "msg_scripted_{n:02d}",
    "turns": [
        [("toolu_01", "read_notes", {"path": NOTES_FILE})],
        [("toolu_02", "count_words", {"path": NOTES_FILE})],
        [("toolu_03", "write_report", {"path": REPORT_FILE, "content": report_text})],
    ],
    "closing": _lesson_closing,
}


class ScriptedModel:
    """A stand-in for client.messages.create that plays a script (the lesson's by default): the reply is chosen from
    the conversation (how many assistant turns it holds), so any crash point can resume. It refuses a conversation
    that breaks the pairing rule with the real API's 400. A conversation of another script's task (a version-1
    checkpoint resumed by the version-2 loop) is answered from that script (`also`)."""

    def __init__(self, script: dict = LESSON_SCRIPT, *also: dict) -> None:
        self.script, self.scripts = script, {s["task"]: s for s in (*also, script)}
        self.model = script["model"]
        self.messages = self  # so the loop calls client.messages.create(...), as with the real SDK
        self.calls = 0

    def create(self, *, messages: list[dict], tools: list[dict] | None = None, **_: object) -> dict:
        self.calls += 1
        problem = pairing_problem(messages)
        if problem:
            raise APIError(400, problem)
        task = messages[0]["content"]
        script = self.scripts.get(task, self.script) if isinstance(task, str) else self.script
        step, turns = sum(1 for m in messages if m["role"] == "assistant"), script["turns"]
        if step < len(turns):
            content = [
                {"type": "tool_use", "id": id, "name": name,
                 "input": {k: v(messages) if callable(v) else v for k, v in input.items()}}
                for id, name, input in turns[step]
            ]  # fmt: skip
        elif step == len(turns):
            content = [{"type": "text", "text": script["closing"](messages)}]
        else:
            last, count = f"{script['letter']}{len(turns) + 1}", len(turns) + 1
            raise APIError(400, texts.SCRIPT_EXHAUSTED.format(
                first=script["letter"] + "1", last=last, count=count, n=step + 1))  # fmt: skip
        return {
            "id": script["message_id"].format(n=step + 1),
            "type": "message",
            "role": "assistant",
            "model": script["model"],
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            # deterministic stand-in for token counts: about four characters per token
            "usage": {
                "input_tokens": len(json.dumps(messages, ensure_ascii=False)) // 4,
                "output_tokens": len(json.dumps(content, ensure_ascii=False)) // 4,
            },
        }


# A model call (the SDK's retries included) is given up after this long; HARNESS_API_DEADLINE_S changes it.
DEFAULT_DEADLINE_S = 120.0


def wait_notice_every(deadline_s: float) -> float:
    """How often a waiting caller hears that the call is still running: every 10 s, or 4 times within a short deadline."""
    return min(10.0, deadline_s / 4)


def api_kind(status: int) -> str:
    """The catalogue's word for the HTTP status a failed model call came back with."""
    return texts.API_KINDS.get(str(status), texts.API_KIND_OTHER)


class ResponseRefused(APIError):
    """A response the harness will not take (odd values, not JSON, a second tool_use): nothing of it is saved.

    Its status is the HTTP status the body came with (a success, 200: the body is what is wrong)."""


class AnthropicClient:
    """The real Messages API behind the same create() call (anthropic is imported only when this is built): the key
    from ANTHROPIC_API_KEY (read by the SDK), SDK errors as APIError, as the scripted model raises them.

    Nothing the server sends is believed: the body is strict JSON checked by store.response_problem before the loop
    sees it, so an odd response stops the run with the last checkpoint intact. A call, retries included, is given
    up after `deadline_s` however the server behaves; while it waits, on_wait(elapsed_s, deadline_s) is called.
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
        self.max_tool_uses = max_tool_uses or (MANY_TOOL_USES if parallel else 1)
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
        next_notice, told = start + every, False
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
                next_notice, told = next_notice + every, True
        if worker.is_alive():
            # a machine too busy to wake for a notice: the caller hears once before the call is given up
            if self.on_wait is not None and not told:
                self.on_wait(min(time.monotonic() - start, self.deadline_s), self.deadline_s)
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
