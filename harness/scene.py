"""What a valid scene is: the shapes the strict loaders accept and the model's responses must have.

One set of rules for both directions, so the harness never saves what its loader would refuse.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import texts
from .errors import HarnessError
from .files import is_json_safe, read_json

CHECKPOINT_VERSION = 1
CHECKPOINT_KEYS = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUse")
# What the real API accepts for tool names and tool_use ids; anything else never reaches a file or a terminal.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")


def _count(x: object) -> bool:
    return type(x) is int and x >= 0


def tool_use_problem(block: object, where: str) -> str | None:
    """What is wrong with a tool_use block (or a pendingToolUse: {id, name, input}), or None."""
    if not isinstance(block, dict):
        return f"{where} がオブジェクトではありません"
    if not isinstance(block.get("id"), str) or not ID_PATTERN.fullmatch(block["id"]):
        return f"{where}.id が英数字・_・- の文字列ではありません"
    if not isinstance(block.get("name"), str) or not NAME_PATTERN.fullmatch(block["name"]):
        return f"{where}.name が英数字・_・- の文字列ではありません"
    if not isinstance(block.get("input"), dict):
        return f"{where}.input がオブジェクトではありません"
    return None


def content_problem(content: object, where: str) -> str | None:
    """What is wrong with a message's content (a string, or a list of typed blocks), or None."""
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"{where} が文字列でも配列でもありません"
    for j, block in enumerate(content):
        here = f"{where}[{j}]"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"{here} に type がありません"
        if block["type"] == "tool_use":
            problem = tool_use_problem(block, here)
            if problem:
                return problem
        if block["type"] == "tool_result":
            tid = block.get("tool_use_id")
            if not isinstance(tid, str) or not ID_PATTERN.fullmatch(tid):
                return f"{here}.tool_use_id が英数字・_・- の文字列ではありません"
    if not is_json_safe(content):
        return f"{where} に JSON にできない値（NaN など）があります"
    return None


def checkpoint_problem(cp: object) -> str | None:
    """What is wrong with a parsed checkpoint's shape, in Japanese, or None if it is the lesson's format."""
    if not isinstance(cp, dict):
        return "JSON オブジェクトではありません"
    missing = [k for k in CHECKPOINT_KEYS if k not in cp]
    if missing:
        return "キー " + ", ".join(missing) + " がありません"
    extra = sorted(set(cp) - set(CHECKPOINT_KEYS))
    if extra:
        return "未知のキー " + ", ".join(extra) + " があります"
    if type(cp["version"]) is not int:
        return "version が整数ではありません"
    if not isinstance(cp["task"], str):
        return "task が文字列ではありません"
    if not _count(cp["turns"]) or not _count(cp["tokensUsed"]):
        return "turns と tokensUsed は 0 以上の整数でなければなりません"
    messages = cp["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages が空でない配列ではありません"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return f"messages[{i}] に role (user/assistant) がありません"
        problem = content_problem(m.get("content"), f"messages[{i}].content")
        if problem:
            return problem
    pending = cp["pendingToolUse"]
    if pending is not None:
        if not isinstance(pending, dict) or set(pending) != {"id", "name", "input"}:
            return "pendingToolUse は null か {id, name, input} でなければなりません"
        problem = tool_use_problem(pending, "pendingToolUse")
        if problem:
            return problem
        if not is_json_safe(pending["input"]):
            return "pendingToolUse.input に JSON にできない値があります"
    return None


def effects_problem(effects: object) -> str | None:
    """What is wrong with a parsed ledger's shape, in Japanese, or None if it is the lesson's format."""
    if not isinstance(effects, dict):
        return "JSON オブジェクトではありません"
    for key, entry in effects.items():
        if not ID_PATTERN.fullmatch(key):
            return "キーが tool_use_id の形（英数字・_・-）ではありません"
        if not isinstance(entry, dict) or not {"name", "result", "at"} <= set(entry):
            return f"{key} のレコードに name, result, at がそろっていません"
        if not isinstance(entry["name"], str) or not NAME_PATTERN.fullmatch(entry["name"]):
            return f"{key} の name が文字列ではありません"
        if not _count(entry["at"]):
            return f"{key} の at が 0 以上の整数ではありません"
    return None


def response_problem(response: object) -> str | None:
    """What is wrong with a model response before anything of it is saved, or None."""
    if not isinstance(response, dict):
        return "応答がオブジェクトではありません"
    problem = content_problem(response.get("content"), "content")
    if problem:
        return problem
    if not isinstance(response["content"], list):
        return "content が配列ではありません"
    if not isinstance(response.get("stop_reason"), str):
        return "stop_reason が文字列ではありません"
    usage = response.get("usage")
    if not isinstance(usage, dict) or not (
        _count(usage.get("input_tokens")) and _count(usage.get("output_tokens"))
    ):
        return "usage の input_tokens と output_tokens が 0 以上の整数ではありません"
    return None


def read_ledger(path: Path) -> dict[str, dict]:
    """The ledger on disk: {} when there is none; a HarnessError naming the file when it is corrupt or odd."""
    try:
        effects = read_json(path, texts.LEDGER_UNPARSABLE)
    except FileNotFoundError:
        return {}
    problem = effects_problem(effects)
    if problem:
        raise HarnessError(texts.LEDGER_SHAPE.format(path=path, detail=problem))
    return effects


def ledger_problem(cp: dict, effects: dict) -> str | None:
    """What makes a checkpoint disagree with the ledger beside it, or None.

    Every record must belong to a call the checkpoint knows (a tool_use in messages, or the pending call): a record
    the checkpoint has never heard of means the checkpoint is older than the ledger (an old copy put back, or a
    harness that skipped point A), and resuming from it would ask the model again for work already done. A record
    under the pending call's id must be for the same tool.
    """
    known = {
        b["id"]
        for m in cp["messages"]
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    }
    pending = cp["pendingToolUse"]
    if pending:
        known.add(pending["id"])
        hit = effects.get(pending["id"])
        if hit and hit["name"] != pending["name"]:
            return f"台帳の {pending['id']} は {hit['name']} の記録で、宙ぶらりんな呼び出し {pending['name']} のものではありません"
    unknown = [k for k in effects if k not in known]
    if unknown:
        return (
            f"台帳にはこのチェックポイントが知らない呼び出し {', '.join(unknown)} の記録があります"
            "（チェックポイントが台帳より古い）"
        )
    return None
