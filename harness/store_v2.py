"""Beyond the lesson (--parallel): what a valid version-2 checkpoint is, on the lesson's rules (harness/store.py).

Importing this module lets the writer check a version-2 checkpoint before it saves one, as it does version 1.
"""

from __future__ import annotations

from . import store
from .store import (
    checkpoint_problem,
    keys_problem,
    ledger_problem,
    pending_call_problem,
    pending_record_problem,
    used_id_problem,
)
from .vocab import CHECKPOINT_KEYS_2, CHECKPOINT_VERSION_2, MANY_TOOL_USES


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
        return "pendingToolUses が配列ではありません"
    if len(pending) > MANY_TOOL_USES:
        return f"pendingToolUses に {len(pending)} 個の呼び出しがあります（1ターンに記録できるのは {MANY_TOOL_USES} 個まで）"
    for i, call in enumerate(pending):
        problem = pending_call_problem(call, f"pendingToolUses[{i}]")
        if problem:
            return problem
    ids = [call["id"] for call in pending]
    if len(set(ids)) != len(ids):
        return "pendingToolUses に同じ id が2度あります"
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
