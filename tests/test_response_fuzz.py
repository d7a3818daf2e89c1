"""Never write a file it would refuse to load: hundreds of generated odd model responses, through the real SDK adapter
(a mock transport) and through a learner's own client (plain dicts, any Python value), each in a fresh folder.
Afterwards every checkpoint and ledger on disk loads with the strict loaders, no temp file is left, and a refused
response leaves a checkpoint that resumes."""

from __future__ import annotations

import copy
import json
import math
import random

import pytest

from harness import (
    TOOL_SCHEMAS,
    APIError,
    HarnessError,
    Run,
    ScriptedModel,
    load_checkpoint,
    load_effects,
    run_agent,
)
from harness.store import response_problem

SEED = 20261130
CASES = 300  # per path
DELETE = object()
DEEP = json.loads("[" * 150 + "]" * 150)

PATHS = [
    ("usage", "input_tokens"),
    ("usage", "output_tokens"),
    ("usage",),
    ("content",),
    ("content", 0),
    ("content", 0, "type"),
    ("content", 0, "id"),
    ("content", 0, "name"),
    ("content", 0, "input"),
    ("content", 0, "input", "path"),
    ("content", 0, "text"),
    ("stop_reason",),
    ("id",),
    ("type",),
]
JSON_VALUES = [
    -1,
    -0.5,
    0,
    1.5,
    3.0,
    True,
    False,
    None,
    "",
    "x",
    "toolu_01",
    "toolu\n02",
    "\x1b[2J[done] 偽",
    "count words",
    "a" * 300,
    2**80,
    [],
    {},
    [1],
    {"path": "report.txt"},
    math.nan,
    math.inf,
    -math.inf,
    {"a": math.nan},
    DEEP,
    DELETE,
]
PY_VALUES = [(1, 2), {1, 2}, b"bytes", object(), {1: "int key"}, 1 + 2j]


def duplicate_block(r):
    if isinstance(r.get("content"), list) and r["content"]:
        r["content"].append(copy.deepcopy(r["content"][0]))


def second_tool(r):
    if isinstance(r.get("content"), list) and r["content"] and isinstance(r["content"][0], dict):
        r["content"].append({**r["content"][0], "id": "toolu_zz"})


def earlier_id(r):
    if isinstance(r.get("content"), list) and r["content"] and isinstance(r["content"][0], dict):
        r["content"][0]["id"] = "toolu_01"


SPECIAL = [duplicate_block, second_tool, earlier_id]


def set_path(r, path, value):
    node = r
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return
    try:
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = copy.deepcopy(value) if isinstance(value, (list, dict)) else value
    except (KeyError, IndexError, TypeError):
        pass


def mutation(rng: random.Random, python_values: bool):
    """One random change to a response: a value put at a path, or a structural trick."""
    if rng.random() < 0.15:
        return rng.choice(SPECIAL)
    values = JSON_VALUES + (PY_VALUES if python_values else [])
    path, value = rng.choice(PATHS), rng.choice(values)
    return lambda r: set_path(r, path, value)


def plan(rng: random.Random, python_values: bool) -> tuple[int, list]:
    """(which request is odd, 1..4; the changes to make to its response)"""
    return rng.randint(1, 4), [mutation(rng, python_values) for _ in range(rng.randint(1, 3))]


class OddModel(ScriptedModel):
    """A learner's own client: the scripted conversation, with request `n` changed by `changes`."""

    def __init__(self, n, changes):
        super().__init__()
        self.n, self.changes = n, changes

    def create(self, **kw):
        response = super().create(**kw)
        if self.calls == self.n:
            for change in self.changes:
                change(response)
        return response


def assert_disk_loads(work):
    """Every state file on disk loads with the strict loaders; no temp file of theirs is left behind."""
    if (work / "checkpoint.json").exists():
        load_checkpoint(work / "checkpoint.json")
    load_effects(work / "effects.json")
    assert not (work / "checkpoint.json.tmp").exists() and not (work / "effects.json.tmp").exists()


def test_a_learners_client_with_odd_responses_never_leaves_an_unloadable_file(tmp_path):
    rng = random.Random(SEED)
    outcomes = {"refused": 0, "finished": 0}
    for i in range(CASES):
        work = tmp_path / f"c{i}"
        work.mkdir()
        n, changes = plan(rng, python_values=True)
        try:
            run_agent(Run(work, clock=lambda: 1), OddModel(n, changes), tools=TOOL_SCHEMAS)
            outcomes["finished"] += 1
        except Exception:  # noqa: BLE001 (whatever the loop makes of it: the disk is what is checked)
            outcomes["refused"] += 1
        assert_disk_loads(work)
    assert outcomes["refused"] > CASES // 2 and outcomes["finished"] > 0, outcomes


@pytest.fixture(scope="module")
def adapter():
    """The real SDK adapter over a mock transport whose answers the test sets per request."""
    httpx2 = pytest.importorskip("httpx2")
    pytest.importorskip("anthropic")
    from harness.models import AnthropicClient

    state = {"n": 0, "odd": None, "changes": []}

    def handler(request):
        body = json.loads(request.content)
        state["n"] += 1
        try:
            response = ScriptedModel().create(messages=body["messages"])
        except APIError as err:
            return httpx2.Response(
                400,
                json={"type": "error", "error": {"type": "invalid_request_error", "message": err.message}},
            )
        if state["n"] == state["odd"]:
            for change in state["changes"]:
                change(response)
        data = json.dumps(response, allow_nan=True, ensure_ascii=False).encode()
        return httpx2.Response(200, content=data, headers={"content-type": "application/json"})

    client = AnthropicClient(
        api_key="sk-test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(handler))
    )
    return client, state


def test_odd_responses_through_the_sdk_adapter_are_refused_and_the_checkpoint_resumes(tmp_path, adapter):
    client, state = adapter
    rng = random.Random(SEED + 1)
    refused = resumed = 0
    for i in range(CASES):
        work = tmp_path / f"c{i}"
        work.mkdir()
        state["n"], (state["odd"], state["changes"]) = 0, plan(rng, python_values=False)
        try:
            run_agent(Run(work, clock=lambda: 1), client, tools=TOOL_SCHEMAS)
        except (APIError, HarnessError):  # the adapter turns every odd answer into one of these, nothing else
            refused += 1
        assert_disk_loads(work)
        if (work / "checkpoint.json").exists():
            try:  # the checkpoint left behind is one the loader takes: a resume runs (scripted from here)
                run_agent(Run(work, clock=lambda: 1), ScriptedModel(), tools=TOOL_SCHEMAS, resume=True)
                resumed += 1
            except (
                APIError
            ):  # an odd-but-valid answer was accepted, and the scripted model does not follow it
                pass
            assert_disk_loads(work)
    assert refused > CASES // 2 and resumed > CASES // 2, (refused, resumed)


def test_every_scripted_response_passes_the_response_rules(workdir):
    model = ScriptedModel()
    create = model.create
    seen = []

    def checked(**kw):
        response = create(**kw)
        assert response_problem(response, kw["messages"]) is None
        seen.append(response)
        return response

    model.create = checked
    run_agent(Run(workdir), model, tools=TOOL_SCHEMAS)
    assert len(seen) == 4


@pytest.mark.parametrize(
    "response, fragment",
    [
        (
            {"content": [], "stop_reason": "end_turn", "usage": {"input_tokens": -1, "output_tokens": 0}},
            "usage",
        ),
        (
            {"content": [], "stop_reason": "end_turn", "usage": {"input_tokens": 1.5, "output_tokens": 0}},
            "usage",
        ),
        (
            {"content": [], "stop_reason": "end_turn", "usage": {"input_tokens": True, "output_tokens": 0}},
            "usage",
        ),
        (
            {"content": "x", "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 0}},
            "content",
        ),
        (
            {
                "content": [{"type": "text", "text": 5}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
            "text",
        ),
        (
            {"content": [], "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 0}},
            "tool_use",
        ),
    ],
)
def test_response_rules_name_the_problem(response, fragment):
    assert fragment in response_problem(response)
