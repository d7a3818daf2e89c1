"""Block 1: the checkpoint writer (temp file + rename, survives power loss) and its strict loader."""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import texts
from .errors import HarnessError

VERSION = 1
CHECKPOINT_KEYS = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUse")


def write_json_atomic(path: Path, obj: object, crash=None) -> None:
    """Write JSON so the file on disk is always either the old version or the new one, never half of each.

    `crash`, if given, is called at the two moments a crash inside the writer can hit (torn temp file, before rename).
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    data = json.dumps(obj, ensure_ascii=False, indent=2).encode("utf-8")
    with open(tmp, "wb") as f:
        if crash:
            f.write(data[: len(data) // 2])
            f.flush()
            crash(f"{path.stem}-torn-write")
            data = data[len(data) // 2 :]
        f.write(data)
        f.flush()
        os.fsync(f.fileno())  # the bytes are on the disk before the rename makes them visible
    if crash:
        crash(f"{path.stem}-before-rename")
    os.replace(tmp, path)  # atomic within one file system
    _fsync_folder(path.parent)  # the rename itself survives a power loss


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some systems (Windows) cannot open a folder
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_json(path: Path, missing: str, unparsable: str) -> object:
    """Read and parse a JSON file; every failure becomes a HarnessError naming the file. Never modifies it."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise HarnessError(missing.format(path=path)) from None
    except OSError as err:  # a directory in its place, no permission, ...
        raise HarnessError(texts.NOT_A_FILE.format(path=path, detail=err.strerror or err)) from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise HarnessError(unparsable.format(path=path)) from None


def save_checkpoint(path: Path, cp: dict, crash=None) -> None:
    """Serialise the scene {version, task, turns, tokensUsed, messages, pendingToolUse} atomically."""
    write_json_atomic(path, cp, crash)


def load_checkpoint(path: Path) -> dict:
    """Load a checkpoint or refuse it: missing, unparsable, another version or the wrong shape never yields defaults."""
    cp = read_json(path, texts.CHECKPOINT_MISSING, texts.CHECKPOINT_UNPARSABLE)
    if isinstance(cp, dict) and "version" in cp and cp["version"] != VERSION:
        raise HarnessError(texts.CHECKPOINT_VERSION.format(path=path, version=json.dumps(cp["version"])))
    problem = checkpoint_shape_problem(cp)
    if problem:
        raise HarnessError(texts.CHECKPOINT_SHAPE.format(path=path, detail=problem))
    return cp


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def checkpoint_shape_problem(cp: object) -> str | None:
    """What is wrong with a parsed checkpoint's shape, in Japanese, or None if it is the lesson's format."""
    if not isinstance(cp, dict):
        return "JSON オブジェクトではありません"
    missing = [k for k in CHECKPOINT_KEYS if k not in cp]
    if missing:
        return "キー " + ", ".join(missing) + " がありません"
    extra = sorted(set(cp) - set(CHECKPOINT_KEYS))
    if extra:
        return "未知のキー " + ", ".join(extra) + " があります"
    if not isinstance(cp["task"], str):
        return "task が文字列ではありません"
    if not _is_int(cp["turns"]) or not _is_int(cp["tokensUsed"]):
        return "turns と tokensUsed は 0 以上の整数でなければなりません"
    messages = cp["messages"]
    if not isinstance(messages, list) or not messages:
        return "messages が空でない配列ではありません"
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            return f"messages[{i}] に role (user/assistant) がありません"
        if not isinstance(m.get("content"), (str, list)):
            return f"messages[{i}].content が文字列でも配列でもありません"
    pending = cp["pendingToolUse"]
    if pending is not None:
        if not isinstance(pending, dict) or set(pending) != {"id", "name", "input"}:
            return "pendingToolUse は null か {id, name, input} でなければなりません"
        if not isinstance(pending["id"], str) or not isinstance(pending["name"], str):
            return "pendingToolUse の id と name は文字列でなければなりません"
        if not isinstance(pending["input"], dict):
            return "pendingToolUse.input がオブジェクトではありません"
    return None
