"""The turn limit (the lesson's MAX_TURNS = 10): a model that never stops asking for tools is stopped after exactly
ten tool runs, with the lesson's message, in a clean run, across a crash and its --resume, and with --parallel."""

from __future__ import annotations

import pytest

from harness import TOOL_SCHEMAS, CrashPlan, Run, SimulatedCrash, run_agent
from harness.beyond.parallel import run_agent_v2

# The lesson's line: `最大${MAX_TURNS}ターンに達したため、自主的に停止します` with MAX_TURNS = 10 (written out, not read).
STOPPED = "最大10ターンに達したため、自主的に停止します"


class NeverStops:
    """Asks for read_notes again and again, a new id each turn, and never ends its turn; chosen from the
    conversation, so a resumed run gets the same answers."""

    def __init__(self, per_turn: int = 1):
        self.messages, self.per_turn, self.calls = self, per_turn, 0

    def create(self, *, messages, tools=None, **_):
        self.calls += 1
        turn = sum(1 for m in messages if m["role"] == "assistant")
        assert turn < 100, "the loop never stopped"  # a broken limit fails here instead of hanging the suite
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{turn:02d}_{k}",
                "name": "read_notes",
                "input": {"path": "sales-notes.txt"},
            }
            for k in range(self.per_turn)
        ]
        return {
            "content": content,
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }


def tool_runs(workdir):
    return (workdir / "tool-runs.log").read_text(encoding="utf-8").splitlines()


def test_a_model_that_never_stops_is_stopped_after_exactly_max_turns_tool_runs(workdir):
    events = []
    model = NeverStops()
    text = run_agent(Run(workdir, listeners=[events.append]), model, tools=TOOL_SCHEMAS)
    assert text == STOPPED
    assert len(tool_runs(workdir)) == 10
    assert [e.data["text"] for e in events if e.kind == "done"] == [STOPPED]
    assert model.calls == 11  # the eleventh answer still asks for a tool: that one is not run


@pytest.mark.parametrize("label", ["after-save-a:4", "after-tool-run:7", "after-save-b:9", "after-save-b:10"])
def test_the_limit_counts_the_turns_before_a_crash(workdir, label):
    name, _, n = label.partition(":")
    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan(name, int(n))), NeverStops(), tools=TOOL_SCHEMAS)
    assert run_agent(Run(workdir), NeverStops(), tools=TOOL_SCHEMAS, resume=True) == STOPPED
    # ten calls, each run once; a call that ran but was not recorded (after-tool-run) is read-only: run once more
    rerun = 1 if name == "after-tool-run" else 0
    assert sorted(set(tool_runs(workdir))) == [f"read_notes toolu_{t:02d}_0" for t in range(10)]
    assert len(tool_runs(workdir)) == 10 + rerun


def test_the_parallel_loop_has_the_same_limit(workdir):
    assert run_agent_v2(Run(workdir), NeverStops(per_turn=2), tools=TOOL_SCHEMAS) == STOPPED
    assert len(tool_runs(workdir)) == 20  # ten turns of two calls
