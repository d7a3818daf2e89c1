"""The work folder: a fresh start cleans only a folder the harness has used before, and never the input notes."""

from __future__ import annotations

import os

from . import texts
from .errors import HarnessError
from .store import fsync_folder, read_bytes, read_json, read_ledger, write_new_file
from .tools import ensure_notes
from .vocab import CHECKPOINT_FILE, CLEANED_BY_A_FRESH_START, EFFECTS_FILE, MARKER_FILE


def start_fresh(run) -> None:
    """Remove the previous run's state and outputs (the checkpoint first), so --resume can never revive it. Only a
    folder carrying the harness's marker is cleaned: another folder holding a name a fresh start of any scenario
    removes is refused, rather than delete a file the harness did not create."""
    folder = run.workdir
    if os.path.lexists(folder) and not folder.is_dir():
        raise HarnessError(texts.WORKDIR_NOT_FOLDER.format(path=folder))
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / MARKER_FILE
    if found := not_ours(folder):
        raise HarnessError(texts.NOT_OUR_FOLDER.format(path=folder, files=", ".join(found)))
    # every scenario's outputs go, the engine's database too: a later `--engine dbos --resume` (or a look at
    # summary.txt) must not revive the task abandoned here
    for name in CLEANED_BY_A_FRESH_START:
        try:
            os.unlink(folder / name)  # a link goes, never what it points to
        except FileNotFoundError:
            continue
        except OSError as err:  # a folder in its place, no permission
            raise HarnessError(
                texts.CANNOT_CLEAN.format(path=folder / name, detail=err.strerror or err)
            ) from None
        if name == CHECKPOINT_FILE:
            fsync_folder(folder)  # the old checkpoint is gone for good before anything else changes
    if not os.path.lexists(marker):
        write_new_file(marker, texts.MARKER_TEXT.encode("utf-8"))
    # beyond the lesson (harness/beyond/modes.py: mode.json): what the run's scenario keeps, after the marker that makes
    # this folder ours
    for keep in getattr(run, "at_fresh_start", ()):
        keep(folder)
    ensure_notes(folder)
    run.emit("start")


def not_ours(folder) -> list[str]:
    """What a fresh start would have to remove from a folder without the harness's marker (so it starts nowhere)."""
    if marks_our_folder(folder / MARKER_FILE):
        return []
    return [name for name in CLEANED_BY_A_FRESH_START if os.path.lexists(folder / name)]


def marks_our_folder(marker) -> bool:
    """Whether the marker is the one a fresh start writes: a plain file of its own (not a link, a folder, a FIFO or a
    second name of another file) holding the marker's text. Anything else there does not make a folder ours."""
    try:
        return read_bytes(marker) == texts.MARKER_TEXT.encode("utf-8")
    except OSError:  # missing, or files.UnsafeFile: a link, a folder, a FIFO, a hard link
        return False


def outputs_gone(folder) -> list[str]:
    """The files of the write_report calls the ledger records that are not in FOLDER: removed after the run (a finished
    task resumed reports the model's recorded closing words, which name the file), or never written at all (a ledger
    written before the tool ran, level 2's bug)."""
    try:
        effects = read_ledger(folder / EFFECTS_FILE)
        messages = read_json(folder / CHECKPOINT_FILE, "")["messages"]
        paths = [
            block["input"]["path"]
            for message in messages
            if message["role"] == "assistant" and isinstance(message["content"], list)
            for block in message["content"]
            if block["type"] == "tool_use" and block["name"] == "write_report" and block["id"] in effects
        ]
        return [path for path in dict.fromkeys(paths) if not os.path.lexists(folder / path)]
    except (OSError, HarnessError, KeyError, TypeError):  # no checkpoint, or another mode's files
        return []
