"""Beyond the lesson (--parallel): what a valid version-2 checkpoint is, on the lesson's rules (harness/store.py).

Importing this module lets the writer check a version-2 checkpoint before it saves one, as it does version 1.
"""

from __future__ import annotations

from .. import store
from ..store import (
    _no,
    checkpoint_problem,
    keys_problem,
    ledger_problem,
    pending_call_problem,
    pending_record_problem,
    used_id_problem,
)
from ..vocab import CHECKPOINT_KEYS_2, CHECKPOINT_VERSION_2, MANY_TOOL_USES


def checkpoint_problem_v2(cp: object) -> str | None:
    """What is wrong with a parsed version-2 checkpoint, in Japanese, or None.

    The same rules as version 1 (checkpoint_problem) for every key but pendingToolUses, which must be an array of
    at most MANY_TOOL_USES {id, name, input} with distinct ids the conversation has not used yet.
    """
    problem = keys_problem(cp, CHECKPOINT_KEYS_2)
    if problem:
        return problem
    pending = cp["pendingToolUses"]
    if not isinstance(pending, list):
        return _no("pending_not_list")
    if len(pending) > MANY_TOOL_USES:
        return _no("too_many_pending", count=len(pending), most=MANY_TOOL_USES)
    for i, call in enumerate(pending):
        problem = pending_call_problem(call, f"pendingToolUses[{i}]")
        if problem:
            return problem
    ids = [call["id"] for call in pending]
    if len(set(ids)) != len(ids):
        return _no("pending_twice")
    if pending and isinstance(cp.get("messages"), list) and cp["messages"]:
        last = cp["messages"][-1]
        if isinstance(last, dict) and last.get("role") != "user":  # (version 1's rule, for the pending set)
            return _no("pending_after_assistant")
    rest = {k: v for k, v in cp.items() if k != "pendingToolUses"}
    return checkpoint_problem({**rest, "pendingToolUse": None}) or used_id_problem(
        pending, cp["messages"], "pendingToolUses"
    )


def ledger_problem_v2(cp: dict, effects: dict) -> str | None:
    """What makes a version-2 checkpoint disagree with the ledger beside it, or None (ledger_problem's rules, with the
    pending calls counted as the assistant turn a resume puts back)."""
    pending = cp["pendingToolUses"]
    for call in pending:
        problem = pending_record_problem(call, effects)
        if problem:
            return problem
    turn = {"role": "assistant", "content": [{"type": "tool_use", **call} for call in pending]}
    return ledger_problem({"messages": [*cp["messages"], turn], "pendingToolUse": None}, effects)


store.SAVED_CHECKPOINTS[CHECKPOINT_VERSION_2] = checkpoint_problem_v2
