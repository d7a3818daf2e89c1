"""The store: how the harness keeps its files, and what a valid file is.

Safe open (never through a planted link, never blocking on a special file), the atomic writer's parts, strict JSON,
and the shapes the strict loaders accept (checkpoint, ledger) and a model's response must have: one set of rules for
both directions, so the harness never saves what its loader would refuse. The lesson's blocks call these instead of
open(); checkpoint.py and ledger.py stand on this module side by side, and it imports neither.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path

from . import texts
from .errors import HarnessError
from .transcript import untrusted
from .vocab import CHECKPOINT_FILE, CHECKPOINT_KEYS, CHECKPOINT_VERSION, EFFECTS_FILE

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafeFile(OSError):
    """A work file that is not a plain file of its own (a link, a FIFO, a device, a folder)."""


def open_checked(path: Path, flags: int, mode: int = 0o644) -> int:
    """os.open without following a final symlink or blocking on a FIFO; the result is a plain, unshared file."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeFile(errno.ELOOP, texts.LINK_REFUSED, str(path)) from None
        if err.errno == errno.ENXIO:  # a FIFO with no writer, opened for writing
            raise UnsafeFile(errno.ENXIO, texts.SPECIAL_FILE_REFUSED, str(path)) from None
        raise
    info = os.fstat(fd)
    problem = None
    if stat.S_ISDIR(info.st_mode):
        problem = (errno.EISDIR, texts.FOLDER_IN_PLACE)
    elif not stat.S_ISREG(info.st_mode):
        problem = (errno.EINVAL, texts.SPECIAL_FILE_REFUSED)
    elif info.st_nlink > 1:
        problem = (errno.EMLINK, texts.HARD_LINK_REFUSED)
    if problem:
        os.close(fd)
        raise UnsafeFile(problem[0], problem[1], str(path))
    return fd


def read_bytes(path: Path) -> bytes:
    """The bytes of a plain file; FileNotFoundError if missing, UnsafeFile or OSError otherwise."""
    fd = open_checked(Path(path), os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def append_line(path: Path, line: str) -> None:
    """Append one line to a plain file of the work folder, flushed to disk."""
    fd = open_checked(Path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "ab") as f:
        f.write((line + "\n").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def write_new_file(path: Path, data: bytes) -> None:
    """Write a brand-new file, fsynced (what stood under that name is unlinked, never written through); a state
    file's temp file only if the loader would read it back (the harness never saves a file it would refuse)."""
    path = Path(path)
    final = _STATE_TEMP_FILES.get(path.name)
    problem = final and saved_state_problem(final, data)
    if problem:
        raise HarnessError(texts.REFUSED_TO_SAVE.format(path=path.with_name(final), detail=problem))
    try:
        os.unlink(path)  # a stray temp file, or a planted link: only the name goes, never what it points to
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise UnsafeFile(errno.EISDIR, texts.FOLDER_IN_PLACE, str(path)) from None
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())  # the bytes are on the disk before a rename makes them visible


_STATE_TEMP_FILES = {name + ".tmp": name for name in (CHECKPOINT_FILE, EFFECTS_FILE)}


def fsync_folder(folder: Path) -> None:
    """Make a rename in this folder survive a power loss (where the system can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # Windows cannot open a folder
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _no_constant(name: str) -> float:
    raise ValueError(_no("not_a_json_number", name=name))


def _no_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # json would keep the last silently: a record or a pending call could hide
        raise ValueError(_no("key_twice"))
    return obj


def parse_json(raw: bytes) -> object:
    """Strict JSON from UTF-8 bytes: NaN and Infinity are refused, as they are when saving, and so is an object
    with a key twice (which value is meant cannot be known)."""
    return json.loads(raw.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_no_repeated_keys)


# A lone surrogate (JSON's "\ud800" without its pair) is text Python holds but UTF-8 cannot encode.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_json(obj: object) -> bytes:
    """Indented UTF-8 JSON with Japanese readable; refuses NaN and Infinity (the loader would refuse them). A lone
    surrogate is written as its escape (\\ud800); whether it may be saved is is_json_safe's decision, not a crash."""
    text = json.dumps(obj, ensure_ascii=False, indent=2, allow_nan=False)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


# Deeper nesting is refused where it enters: json and Python's recursion would fail on it later.
MAX_DEPTH = 100


def is_json_safe(obj: object) -> bool:
    """Whether obj is plain JSON the strict loader will read back and a terminal or a file can take as UTF-8: no NaN or
    infinity (1e400 parses as one), no lone surrogate in a string or a key, no odd types, at most MAX_DEPTH deep."""
    stack = [(obj, 0)]
    while stack:
        x, depth = stack.pop()
        if isinstance(x, str):
            if _LONE_SURROGATE.search(x):
                return False
            continue
        if x is None or isinstance(x, (bool, int)):
            continue
        if isinstance(x, float):
            if not math.isfinite(x):
                return False
            continue
        if depth >= MAX_DEPTH:
            return False
        if isinstance(x, list):
            stack.extend((v, depth + 1) for v in x)
        elif isinstance(x, dict):
            if not all(isinstance(k, str) and not _LONE_SURROGATE.search(k) for k in x):
                return False
            stack.extend((v, depth + 1) for v in x.values())
        else:
            return False
    return True


def file_problem_message(path: Path, err: OSError) -> str:
    """The Japanese two-line reason a state file could not be read, with the right thing to do."""
    if isinstance(err, PermissionError):
        return texts.NO_PERMISSION.format(path=path)
    detail = err.strerror if isinstance(err, UnsafeFile) else (err.strerror or str(err))
    return texts.NOT_A_FILE.format(path=path, detail=detail)


def read_json(path: Path, unparsable: str) -> object:
    """A state file's JSON (never modified): FileNotFoundError passes through, any other failure is a HarnessError
    naming the file."""
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raise
    except OSError as err:
        raise HarnessError(file_problem_message(path, err)) from None
    try:
        return parse_json(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise HarnessError(unparsable.format(path=path)) from None


# ---- the shapes: what the strict loaders accept, and what a model's response must be -----------------------------

# What the real API accepts for tool names and tool_use ids; anything else never reaches a file or a terminal.
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")
ID_PATTERN = NAME_PATTERN
# The largest count a file may hold: far beyond any real count, and far below the 4,300 digits Python refuses to
# write (a sum of two loaded counts must still be writable at the next save).
MAX_COUNT = 10**100
# Which role may carry which kind of block: a tool_use is the model's, a tool_result the harness's answer.
_BLOCK_ROLE = {"tool_use": "assistant", "tool_result": "user"}


def _no(problem: str, **values: object) -> str:
    """A shape problem in the catalogue's words (texts.SHAPE_PROBLEMS), filled in."""
    return texts.SHAPE_PROBLEMS[problem].format(**values)


def _count(x: object) -> bool:
    return type(x) is int and 0 <= x < MAX_COUNT


def _moment(x: object) -> bool:
    """A ledger record's `at`: the lesson's Date.now() (integer ms) or time.time() (seconds) as a Python port writes."""
    return _count(x) or (type(x) is float and 0 <= x < MAX_COUNT)


def tool_use_problem(block: object, where: str) -> str | None:
    """What is wrong with a tool_use block (or a pending call: {id, name, input}), or None."""
    if not isinstance(block, dict):
        return _no("not_object", where=where)
    for key in ("id", "name"):
        if not isinstance(block.get(key), str) or not NAME_PATTERN.fullmatch(block[key]):
            return _no("not_a_name", where=f"{where}.{key}")
    if not isinstance(block.get("input"), dict):
        return _no("not_object", where=f"{where}.input")
    return None


def content_problem(content: object, where: str, role: str) -> str | None:
    """What is wrong with a message's content (a string, or a list of typed blocks) in a message of `role`, or None.
    The model's own messages are always lists of blocks (as the API returns them and the harness saves them)."""
    if isinstance(content, str) and role == "user":
        return None
    if not isinstance(content, list):
        return _no("not_content" if role == "user" else "content_not_list", where=where)
    for j, block in enumerate(content):
        here = f"{where}[{j}]"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return _no("no_type", where=here)
        if _BLOCK_ROLE.get(block["type"], role) != role:
            return _no("wrong_role", where=here, type=block["type"], role=role)
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return _no("text_not_text", where=here)
        if block["type"] == "tool_use":
            problem = tool_use_problem(block, here)
            if problem:
                return problem
        if block["type"] == "tool_result":
            tid = block.get("tool_use_id")
            if not isinstance(tid, str) or not ID_PATTERN.fullmatch(tid):
                return _no("not_a_name", where=f"{here}.tool_use_id")
    if not is_json_safe(content):
        return _no("not_json_safe", where=where)
    return None


def pending_call_problem(call: object, where: str, shape: str = "{id, name, input}") -> str | None:
    """What is wrong with a pending call {id, name, input} as a checkpoint records it, or None."""
    if not isinstance(call, dict) or set(call) != {"id", "name", "input"}:
        return _no("must_be", where=where, shape=shape)
    problem = tool_use_problem(call, where)
    if not problem and not is_json_safe(call["input"]):
        return _no("not_json_safe", where=f"{where}.input")
    return problem


def keys_problem(cp: object, keys: tuple) -> str | None:
    """A checkpoint that is not an object of exactly these keys with an integer version, in Japanese, or None."""
    if not isinstance(cp, dict):
        return _no("not_an_object")
    # 2.0 or true: named as what it is, never read as another version's file
    if "version" in cp and type(cp["version"]) is not int:
        return _no("version_not_integer")
    missing = [k for k in keys if k not in cp]
    if missing:
        return _no("keys_missing", keys=", ".join(missing))
    extra = sorted(set(cp) - set(keys))
    if extra:
        return _no("keys_unknown", keys=untrusted(", ".join(extra), limit=80))
    return None


def checkpoint_problem(cp: object) -> str | None:
    """What is wrong with a parsed checkpoint's shape, in Japanese, or None; its conversation must be one the API
    accepts as it stands (pairing_fault), since a resume sends it again."""
    problem = keys_problem(cp, CHECKPOINT_KEYS)
    if problem:
        return problem
    if not isinstance(cp["task"], str):
        return _no("task_not_text")
    if not is_json_safe(cp["task"]):
        return _no("not_json_safe", where="task")
    if not _count(cp["turns"]) or not _count(cp["tokensUsed"]):
        return _no("counts")
    messages = cp["messages"]
    if not isinstance(messages, list) or not messages:
        return _no("no_messages")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return _no("no_role", i=i)
        problem = content_problem(m.get("content"), f"messages[{i}].content", m["role"])
        if problem:
            return problem
        # the API refuses an empty content: only the model's closing words may be empty
        if m["content"] in ("", []) and not (i == len(messages) - 1 and m["role"] == "assistant"):
            return _no("empty_content", i=i)
        if not is_json_safe(m):
            return _no("not_json_safe", where=f"messages[{i}]")
    uses = [b["id"] for m in messages for b in _blocks(m) if b["type"] == "tool_use"]
    twice = sorted({x for x in uses if uses.count(x) > 1})
    if twice:
        return _no("use_twice", id=twice[0])
    pending = cp.get("pendingToolUse")
    fault = pairing_fault(messages, open_end=pending is None)
    if fault:
        return texts.PAIRING_BROKEN.format(
            detail=texts.PAIRING_FAULTS[fault[0]].format(i=fault[1], ids=fault[2])
        )
    if pending is not None:
        if messages[-1]["role"] != "user":
            return _no("pending_after_assistant")
        shape = texts.SHAPE_PROBLEMS["pending_or_null"]
        return pending_call_problem(pending, "pendingToolUse", shape) or used_id_problem(
            [pending], messages, "pendingToolUse"
        )
    return None


def _blocks(message: dict) -> list:
    return message["content"] if isinstance(message.get("content"), list) else []


def pairing_fault(messages: list[dict], open_end: bool = False) -> tuple[str, int, str] | None:
    """Where a conversation breaks the API's pairing rule: (kind, message index, ids), or None. The kinds:
    "first" (the first message is not the user's), "unanswered" (a tool_use not answered in the next message),
    "stray" (a tool_result for no tool_use of the message before), "not_first" (a tool_result after another
    block), "twice" (two tool_results for one tool_use), "order" (the results not in the order of the calls; the
    scripted model's stricter rule). open_end: the last assistant message may leave its tool_use unanswered."""
    if not messages or messages[0].get("role") != "user":
        return ("first", 0, "")
    asked: list = []
    for i, msg in enumerate(messages):
        blocks = _blocks(msg)
        if msg["role"] == "assistant":
            asked = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
            nxt = _blocks(messages[i + 1]) if i + 1 < len(messages) else None
            answered = {b.get("tool_use_id") for b in nxt or () if b.get("type") == "tool_result"}
            missing = [x for x in asked if x not in answered]
            if missing and not (nxt is None and open_end):
                return ("unanswered", i, ", ".join(missing))
        else:
            stray = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
            stray = [x for x in stray if x not in asked]
            if stray:
                return ("stray", i, ", ".join(stray))
            asked = []
    for i, msg in enumerate(messages[1:], 1):
        ids = [b.get("id") for b in _blocks(messages[i - 1]) if b.get("type") == "tool_use"]
        if msg["role"] != "user" or messages[i - 1]["role"] != "assistant" or not ids:
            continue
        results = [b.get("tool_use_id") for b in _blocks(msg) if b.get("type") == "tool_result"]
        if any(b.get("type") != "tool_result" for b in _blocks(msg)[: len(results)]):
            return ("not_first", i, "")
        twice = sorted({x for x in results if results.count(x) > 1})
        if twice:
            return ("twice", i, ", ".join(twice))
        if results != ids:
            return ("order", i, ", ".join(ids) + " / " + ", ".join(results))
    return None


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
        return _no("id_used", where=where, id=again[0])
    return None


def effects_problem(effects: object) -> str | None:
    """What is wrong with a parsed ledger's shape, in Japanese, or None if it is the lesson's format."""
    if not isinstance(effects, dict):
        return _no("not_an_object")
    for key, entry in effects.items():
        if not ID_PATTERN.fullmatch(key):
            return _no("ledger_key")
        if not isinstance(entry, dict) or not {"name", "result", "at"} <= set(entry):
            return _no("record_incomplete", key=key)
        if not isinstance(entry["name"], str) or not NAME_PATTERN.fullmatch(entry["name"]):
            return _no("record_name", key=key)
        if not _moment(entry["at"]):
            return _no("record_at", key=key)
        if not is_json_safe(entry):
            return _no("not_json_safe", where=texts.SHAPE_PROBLEMS["record"].format(key=key))
    return None


def response_problem(response: object, messages: list | None = None, max_tool_uses: int = 1) -> str | None:
    """What is wrong with a model response, or None: its one check, where it enters (the clients call it; the loop
    and the tools trust what passed). The loader's rules, plus what only a response can get wrong: an id the
    conversation holds, more tool_use blocks than a checkpoint can record, stop_reason tool_use without one."""
    if not isinstance(response, dict):
        return _no("response_not_object")
    content = response.get("content")
    if not isinstance(content, list):
        return _no("content_not_list", where="content")
    problem = content_problem(content, "content", "assistant")
    if problem:
        return problem
    if not isinstance(response.get("stop_reason"), str):
        return _no("stop_not_text")
    usage = response.get("usage")
    if not isinstance(usage, dict) or not (
        _count(usage.get("input_tokens")) and _count(usage.get("output_tokens"))
    ):
        return _no("usage")
    ids = [b["id"] for b in content if b["type"] == "tool_use"]
    if len(ids) > max_tool_uses:
        return _no("too_many_uses", count=len(ids), most=max_tool_uses)
    if response["stop_reason"] == "tool_use" and not ids:
        return _no("no_tool_use")
    if len(set(ids)) != len(ids):
        return _no("same_id")
    used = used_ids(messages or [])
    again = [i for i in ids if i in used]
    if again:
        return _no("response_id_used", id=again[0])
    if not is_json_safe(response):  # what is not saved may still be printed (stop_reason, a text block)
        return _no("not_json_safe", where=texts.SHAPE_PROBLEMS["response"])
    return None


# How a checkpoint of each version is checked before it is written (harness/beyond/store_v2.py adds version 2).
SAVED_CHECKPOINTS = {CHECKPOINT_VERSION: checkpoint_problem}


def saved_state_problem(name: str, data: bytes) -> str | None:
    """Why the loader would refuse these bytes as the state file `name` for their shape, or None: asked before a
    state file is written. (Agreeing with the ledger is the loader's question; a checkpoint of a version no loader
    here knows is left to the loader of that version.)"""
    try:
        obj = parse_json(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _no("unreadable_back")
    if name == EFFECTS_FILE:
        return effects_problem(obj)
    check = SAVED_CHECKPOINTS.get(obj.get("version")) if isinstance(obj, dict) else None
    return check(obj) if check else None


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
    """What makes a checkpoint disagree with the ledger beside it, or None. Every record must be a call the
    checkpoint knows (else the checkpoint is older than the ledger, and a resume would ask the model again for work
    already done), and a record under the pending call's id must be for the same tool."""
    known = {b["id"] for m in cp["messages"] for b in _blocks(m) if b["type"] == "tool_use"}
    pending = cp["pendingToolUse"]
    if pending:
        known.add(pending["id"])
        problem = pending_record_problem(pending, effects)
        if problem:
            return problem
    unknown = [k for k in effects if k not in known]
    if unknown:
        return _no("ledger_newer", ids=", ".join(unknown))
    return None


def pending_record_problem(pending: dict, effects: dict) -> str | None:
    """A ledger record under the pending call's id that is for another tool (an id used twice), or None."""
    hit = effects.get(pending["id"])
    if hit and hit["name"] != pending["name"]:
        return _no("record_other_tool", id=pending["id"], name=hit["name"], pending=pending["name"])
    return None
