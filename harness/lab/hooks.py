"""What the Crash Lab asks of a real `python -m harness` process: each event appended to HARNESS_EVENTS_FILE as one
JSON line (which harness.lab.process reads back), and a pause after each step (HARNESS_SLOW_MS), so a class can watch
a run and kill it. The command line imports this only when either setting is given.
"""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

from .. import texts
from ..errors import HarnessError
from ..store import append_line, open_checked
from ..transcript import untrusted
from ..vocab import CLEANED_BY_A_FRESH_START, LABEL_AFTER_EVENT, NOTES_FILE, STATE_FILES

# The steps a slow-motion run pauses after: the moments a crash can be placed at, and the resume's two.
STEP_EVENTS = (*LABEL_AFTER_EVENT, "resume", "reconcile")


def event_log(path: str):
    """A listener appending each event as one JSON line: how the Crash Lab watches a process."""

    def write(event) -> None:  # never through a planted link, never blocking on a FIFO
        append_line(Path(path), json.dumps({"kind": event.kind, **event.data}, ensure_ascii=False))

    return write


def slow_motion(ms: int):
    """A listener pausing `ms` milliseconds after each step."""

    def pause(event) -> None:
        if event.kind in STEP_EVENTS:
            time.sleep(ms / 1000)

    return pause


def crash_lab_listeners(env, slow_ms: int | None) -> list:
    """The listeners the environment asks for (the command line has checked the events file against its folder)."""
    events = events_file(env)
    return [*([event_log(events)] if events else []), *([slow_motion(slow_ms)] if slow_ms else [])]


def _spellings(path) -> set[str]:
    """The path as written (made absolute, `..` folded) and as the system resolves it (links followed)."""
    return {os.path.abspath(path), os.path.realpath(path)}


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def events_file(env, workdir=None) -> str | None:
    """HARNESS_EVENTS_FILE, or None. Refused when it names the work folder or anything in it (the task's notes and
    outputs, the checkpoint, the ledger, the tool log, their temp files, the engine's database), however spelt, and
    when it carries the name of one of the harness's files, is the work folder's own place, or is not a plain file
    this process can append to (a folder, a link, a FIFO, a device, a missing folder): said before the run, never
    found out halfway, and nothing made for it before the run. (The engine's database given by URL:
    harness/beyond/engine_dbos.check_settings.)"""
    value = env.get("HARNESS_EVENTS_FILE") or ""
    if not value:
        return None
    shown = untrusted(value)
    if Path(value).name in (*STATE_FILES, *CLEANED_BY_A_FRESH_START, NOTES_FILE):
        raise HarnessError(texts.BAD_EVENTS_FILE.format(value=shown))
    targets, folders = _spellings(value), _spellings(workdir) if workdir is not None else set()
    if any(_inside(t, w) for t in targets for w in folders):
        raise HarnessError(texts.EVENTS_FILE_IN_WORKDIR.format(value=shown, workdir=untrusted(workdir)))
    parent = Path(value).parent
    try:
        if any(_inside(w, t) for t in targets for w in folders):  # where the work folder goes: a folder
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if os.path.lexists(value):
            os.close(open_checked(Path(value), os.O_WRONLY | os.O_APPEND))
        elif not parent.is_dir():  # (nothing is made before the run: only whether it could be)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        elif not os.access(parent, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as err:
        raise HarnessError(
            texts.EVENTS_FILE_UNWRITABLE.format(value=shown, detail=err.strerror or err)
        ) from None
    return value
