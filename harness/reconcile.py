"""ブロック4: reconcile。クラッシュ後に残った宙ぶらりんな呼び出し（あれば1つ）を、3つの分岐で対の tool_result にする。"""

from __future__ import annotations

from . import texts
from .ledger import load_effects, save_effect
from .tools import READ_ONLY, ToolError, execute_tool


# fmt: off
def reconcile(run, cp: dict) -> dict | None:
    """台帳ヒットなら再利用、台帳ミスで読み取り専用なら再実行、台帳ミスで副作用ありなら正直に is_error。"""
    pending = cp["pendingToolUse"]
    if not pending:
        return None  # 宙ぶらりんな呼び出しなし、そのまま続行

    effects = load_effects(run.effects_path)
    hit = effects.get(pending["id"])

    if hit:
        run.emit("reconcile", branch="hit", id=pending["id"], name=pending["name"])
        return {"type": "tool_result", "tool_use_id": pending["id"], "content": hit["result"]}

    if pending["name"] in READ_ONLY:
        run.emit("reconcile", branch="rerun", id=pending["id"], name=pending["name"])
        try:
            output = execute_tool(run, {"type": "tool_use", **pending})
        except ToolError as err:
            return {"type": "tool_result", "tool_use_id": pending["id"], "is_error": True,
                    "content": texts.TOOL_ERROR_RESULT.format(error=err)}
        save_effect(run.effects_path, pending["id"],
                    {"name": pending["name"], "result": output, "at": run.clock()})
        run.emit("effect_written", id=pending["id"], name=pending["name"])
        return {"type": "tool_result", "tool_use_id": pending["id"], "content": output}

    run.emit("reconcile", branch="unknown", id=pending["id"], name=pending["name"])
    return {
        "type": "tool_result",
        "tool_use_id": pending["id"],
        "is_error": True,
        "content": texts.UNKNOWN_RESULT.format(name=pending["name"]),
    }
# fmt: on
