"""What a valid scene is: the shapes the strict loaders accept and the model's responses must have.

One set of rules for both directions, so the harness never saves what its loader would refuse.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import texts
from .errors import HarnessError
from .files import is_json_safe, parse_json, read_json
from .vocab import CHECKPOINT_KEYS_2, CHECKPOINT_VERSION_2, EFFECTS_FILE, MANY_TOOL_USES

CHECKPOINT_VERSION = 1
CHECKPOINT_KEYS = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUse")
# What the real API accepts for tool names and tool_use ids; anything else never reaches a file or a terminal.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")


# The largest count a file may hold: far beyond any real count, and far below the 4,300 digits Python refuses to
# write (a sum of two loaded counts must still be writable at the next save).
MAX_COUNT = 10**100


def _count(x: object) -> bool:
    return type(x) is int and 0 <= x < MAX_COUNT


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
        return f"{where} に {NOT_JSON_SAFE}があります"
    return None


# What is_json_safe refuses, in the words of a refusal.
NOT_JSON_SAFE = (
    "JSON や UTF-8 にできない値（NaN、範囲外の数、対になっていないサロゲートなど）か深すぎる入れ子"
)


def checkpoint_problem(cp: object) -> str | None:
    """What is wrong with a parsed checkpoint's shape, in Japanese, or None if it is the lesson's format."""
    if not isinstance(cp, dict):
        return "JSON オブジェクトではありません"
    missing = [k for k in CHECKPOINT_KEYS if k not in cp]
    if missing:
        return "キー " + ", ".join(missing) + " がありません"
    extra = sorted(set(cp) - set(CHECKPOINT_KEYS))
    if extra:
        return "未知のキー " + texts.untrusted(", ".join(extra), limit=80) + " があります"
    if type(cp["version"]) is not int:
        return "version が整数ではありません"
    if not isinstance(cp["task"], str):
        return "task が文字列ではありません"
    if not is_json_safe(cp["task"]):
        return f"task に {NOT_JSON_SAFE}があります"
    if not _count(cp["turns"]) or not _count(cp["tokensUsed"]):
        return "turns と tokensUsed は 0 以上の整数（10 の 100 乗未満）でなければなりません"
    messages = cp["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages が空でない配列ではありません"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return f"messages[{i}] に role (user/assistant) がありません"
        problem = content_problem(m.get("content"), f"messages[{i}].content")
        if problem:
            return problem
        if not is_json_safe(m):
            return f"messages[{i}] に {NOT_JSON_SAFE}があります"
    uses = [b["id"] for m in messages for b in _blocks(m) if b["type"] == "tool_use"]
    twice = sorted({x for x in uses if uses.count(x) > 1})
    if twice:
        return f"messages に同じ tool_use id {twice[0]} が2回あります"
    pending = cp["pendingToolUse"]
    if pending is not None:
        if not isinstance(pending, dict) or set(pending) != {"id", "name", "input"}:
            return "pendingToolUse は null か {id, name, input} でなければなりません"
        problem = tool_use_problem(pending, "pendingToolUse")
        if problem:
            return problem
        if not is_json_safe(pending["input"]):
            return f"pendingToolUse.input に {NOT_JSON_SAFE}があります"
        return used_id_problem([pending], messages, "pendingToolUse")
    return None


def _blocks(message: dict) -> list:
    return message["content"] if isinstance(message.get("content"), list) else []


def used_ids(messages: list) -> set[str]:
    """Every id the conversation has used: its tool_use blocks', and those its tool_result blocks answer."""
    return {
        b.get("id") if b.get("type") == "tool_use" else b.get("tool_use_id")
        for m in messages
        if isinstance(m, dict)
        for b in _blocks(m)
        if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
    }


def used_id_problem(calls: list[dict], messages: list, where: str) -> str | None:
    """A pending call whose id the conversation already used (a resume would answer it twice, or run it again)."""
    used = used_ids(messages)
    again = [call["id"] for call in calls if call["id"] in used]
    if again:
        return f"{where} の id {again[0]} はこの会話ですでに使われています"
    return None


def checkpoint_problem_v2(cp: object) -> str | None:
    """What is wrong with a parsed version-2 checkpoint, in Japanese, or None.

    The same rules as version 1 (checkpoint_problem) for every key but pendingToolUses, which must be an array of
    at most MANY_TOOL_USES {id, name, input} with distinct ids the conversation has not used yet.
    """
    if not isinstance(cp, dict):
        return "JSON オブジェクトではありません"
    # 2.0 or true: named as what it is, never read as another version's file
    if "version" in cp and type(cp["version"]) is not int:
        return "version が整数ではありません"
    missing = [k for k in CHECKPOINT_KEYS_2 if k not in cp]
    if missing:
        return "キー " + ", ".join(missing) + " がありません"
    extra = sorted(set(cp) - set(CHECKPOINT_KEYS_2))
    if extra:
        return "未知のキー " + texts.untrusted(", ".join(extra), limit=80) + " があります"
    pending = cp["pendingToolUses"]
    if not isinstance(pending, list):
        return "pendingToolUses が配列ではありません"
    if len(pending) > MANY_TOOL_USES:
        return f"pendingToolUses に {len(pending)} 個の呼び出しがあります（1ターンに記録できるのは {MANY_TOOL_USES} 個まで）"
    for i, call in enumerate(pending):
        where = f"pendingToolUses[{i}]"
        if not isinstance(call, dict) or set(call) != {"id", "name", "input"}:
            return f"{where} は {{id, name, input}} でなければなりません"
        problem = tool_use_problem(call, where)
        if problem:
            return problem
        if not is_json_safe(call["input"]):
            return f"{where}.input に {NOT_JSON_SAFE}があります"
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
        if not is_json_safe(entry):
            return f"{key} のレコードに {NOT_JSON_SAFE}があります"
    return None


def response_problem(response: object, messages: list | None = None, max_tool_uses: int = 1) -> str | None:
    """What is wrong with a model response before anything of it is saved, or None.

    The same rules as the loader's, plus what only a response can get wrong: a tool_use id the conversation
    already holds, more tool_use blocks than the single pending call the lesson's checkpoint can record, a
    stop_reason of tool_use with no tool to run.
    """
    if not isinstance(response, dict):
        return "応答が JSON オブジェクトではありません"
    content = response.get("content")
    if not isinstance(content, list):
        return "content が配列ではありません"
    problem = content_problem(content, "content")
    if problem:
        return problem
    for j, block in enumerate(content):
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return f"content[{j}].text が文字列ではありません"
    if not isinstance(response.get("stop_reason"), str):
        return "stop_reason が文字列ではありません"
    usage = response.get("usage")
    if not isinstance(usage, dict) or not (
        _count(usage.get("input_tokens")) and _count(usage.get("output_tokens"))
    ):
        return "usage の input_tokens と output_tokens が 0 以上の整数ではありません"
    ids = [b["id"] for b in content if b["type"] == "tool_use"]
    if len(ids) > max_tool_uses:
        return f"tool_use が {len(ids)} 個あります（宙ぶらりんな呼び出しとして記録できるのは {max_tool_uses} 個まで）"
    if response["stop_reason"] == "tool_use" and not ids:
        return "stop_reason が tool_use なのに tool_use ブロックがありません"
    if len(set(ids)) != len(ids):
        return "同じ tool_use id が2回あります"
    used = used_ids(messages or [])
    again = [i for i in ids if i in used]
    if again:
        return f"tool_use id {again[0]} はこの会話ですでに使われています"
    if not is_json_safe(response):  # what is not saved may still be printed (stop_reason, a text block)
        return f"応答に {NOT_JSON_SAFE}があります"
    return None


def saved_state_problem(path: Path, data: bytes) -> str | None:
    """Why the loader would refuse these bytes as the state file `path` (checkpoint.json or effects.json), or None.

    The writer asks this before it writes a state file: the harness never saves a file it would refuse to load
    for what it holds. A checkpoint of another version is left to the loader of that version.
    """
    try:
        obj = parse_json(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "JSON として読み戻せません"
    if path.name == EFFECTS_FILE:
        return effects_problem(obj)
    if not isinstance(obj, dict) or obj.get("version") not in (CHECKPOINT_VERSION, CHECKPOINT_VERSION_2):
        return None
    if obj["version"] == CHECKPOINT_VERSION:
        problem = checkpoint_problem(obj)
        pending = [] if problem or not obj["pendingToolUse"] else [obj["pendingToolUse"]]
    else:
        problem = checkpoint_problem_v2(obj)
        pending = [] if problem else obj["pendingToolUses"]
    if problem or not pending:
        return problem
    # What the model can make disagree with the ledger is a pending call (an id used before, for another tool).
    # A ledger the checkpoint does not know, or a broken one, is the ledger's problem: the loader names it.
    try:
        effects = read_ledger(path.with_name(EFFECTS_FILE))
    except HarnessError:
        return None
    return next(filter(None, (pending_record_problem(call, effects) for call in pending)), None)


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
        problem = pending_record_problem(pending, effects)
        if problem:
            return problem
    unknown = [k for k in effects if k not in known]
    if unknown:
        return (
            f"台帳にはこのチェックポイントが知らない呼び出し {', '.join(unknown)} の記録があります"
            "（チェックポイントが台帳より古い）"
        )
    return None


def pending_record_problem(pending: dict, effects: dict) -> str | None:
    """A ledger record under the pending call's id that is for another tool (an id used twice), or None."""
    hit = effects.get(pending["id"])
    if hit and hit["name"] != pending["name"]:
        return f"台帳の {pending['id']} は {hit['name']} の記録で、宙ぶらりんな呼び出し {pending['name']} のものではありません"
    return None
