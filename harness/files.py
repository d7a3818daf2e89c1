"""How the harness opens files: never through a planted link, never blocking on a special file, strict JSON.

The lesson's blocks call these instead of open(): the checks belong where a file is opened, not in the blocks.
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
from .vocab import CHECKPOINT_FILE, EFFECTS_FILE

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UnsafeFile(OSError):
    """A work file that is not a plain file of its own (a link, a FIFO, a device, a folder)."""


def _open_checked(path: Path, flags: int, mode: int = 0o644) -> int:
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
    fd = _open_checked(Path(path), os.O_RDONLY)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def append_line(path: Path, line: str) -> None:
    """Append one line to a plain file of the work folder, flushed to disk."""
    fd = _open_checked(Path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "ab") as f:
        f.write((line + "\n").encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())


def write_new_file(path: Path, data: bytes) -> None:
    """Write a brand-new file (whatever stood under that name is unlinked first, never written through), fsynced.

    The temp file of a state file (checkpoint.json.tmp, effects.json.tmp) is written only if the loader would read
    it back: whatever a model or a learner's client hands over, the harness never saves a file it would refuse.
    """
    path = Path(path)
    _refuse_unloadable(path, data)
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


def _refuse_unloadable(path: Path, data: bytes) -> None:
    final = _STATE_TEMP_FILES.get(path.name)
    if final is None:
        return
    from .scene import saved_state_problem  # here, not at the top: scene imports this module

    problem = saved_state_problem(path.with_name(final), data)
    if problem:
        raise HarnessError(texts.REFUSED_TO_SAVE.format(path=path.with_name(final), detail=problem))


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
    raise ValueError(f"JSON ではない数値 {name}")


def _no_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):  # json would keep the last silently: a record or a pending call could hide
        raise ValueError("同じキーが2回あります")
    return obj


def parse_json(raw: bytes) -> object:
    """Strict JSON from UTF-8 bytes: NaN and Infinity are refused, as they are when saving, and so is an object
    with a key twice (which value is meant cannot be known)."""
    return json.loads(raw.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_no_repeated_keys)


# A lone surrogate (JSON's "\ud800" without its pair) is text Python holds but UTF-8 cannot encode.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_json(obj: object) -> bytes:
    """Indented UTF-8 JSON with Japanese readable; refuses NaN and Infinity (the loader would refuse them).

    A lone surrogate is written as its JSON escape (\\ud800), which reads back as the same text: the bytes are always
    UTF-8, and whether such text may be saved at all is the state-file check's decision (is_json_safe), not a crash.
    """
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
    """A state file's JSON; FileNotFoundError passes through, every other failure is a HarnessError naming the file.

    Never modifies or deletes the file.
    """
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
