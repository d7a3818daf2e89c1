"""Block 4: reconcile, the three branches for the one call left pending by a crash."""

from __future__ import annotations

from . import texts
from .crash import crash_point
from .ledger import load_effects, record_effect
from .tools import READ_ONLY, ToolError, execute_tool, tool_error_result


def reconcile(run, cp: dict) -> dict | None:
    """The tool_result that answers cp's pending call (ledger hit / read-only re-run / honest is_error), or None."""
    pending = cp["pendingToolUse"]
    if not pending:
        return None  # nothing pending: carry on

    effects = load_effects(run.effects_path)
    hit = effects.get(pending["id"])

    if hit:
        run.emit("reconcile", branch="hit", id=pending["id"], name=pending["name"])
        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}

    if pending["name"] in READ_ONLY:
        run.emit("reconcile", branch="rerun", id=pending["id"], name=pending["name"])
        try:
            output = execute_tool(run.workdir, pending["name"], pending["id"], pending["input"])
        except ToolError as err:
            return tool_error_result(pending["id"], err)
        run.emit("tool_ran", id=pending["id"], name=pending["name"])
        crash_point(run, "after-tool-run")
        record_effect(run, pending["id"], pending["name"], output)
        return {"type": "tool_result", "tool_use_id": pending["id"], "content": output}

    run.emit("reconcile", branch="unknown", id=pending["id"], name=pending["name"])
    return {
        "type": "tool_result",
        "tool_use_id": pending["id"],
        "is_error": True,
        "content": texts.UNKNOWN_RESULT.format(name=pending["name"]),
    }
