"""Beyond the lesson: which scenario a work folder's task was started in, so that --resume continues it with the same
guarantees, and every refusal names the exact command that does.

The lesson's runs write nothing new: a folder without mode.json holds the lesson's task, or one whose checkpoint says
more by itself (version 2: --parallel). Every other scenario's fresh start writes mode.json ({"mode": "idempotent"})
with the lesson's atomic writer, after the clean-up and before point A, so a checkpoint of such a task always has it
beside it. A resume may add a mode (the version-2 loop reads a lesson checkpoint; the idempotent reconcile asks, and
falls back to the lesson's honest is_error when it cannot tell), never drop one: --parallel --resume of a
--parallel --idempotent task would answer is_error where the task was promised an exact recovery at ①, ②.
An engine task is told by its workflows in the folder's own dbos.sqlite (folder_workflows, read with sqlite3 alone:
the command line asks it without importing DBOS, and the engine asks it too).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import urllib.parse
from pathlib import Path

from .. import texts
from ..checkpoint import load_checkpoint, write_json_atomic
from ..errors import HarnessError
from ..store import read_json
from ..transcript import harness_command, version_refused
from ..vocab import CHECKPOINT_FILE, DB_FILE, EFFECTS_FILE, MODE_FILE, SCENARIOS
from ..workdir import not_ours
from .parallel import load_checkpoint_v2

# The scenarios a mode file may name (the lesson's is the absence of one).
RECORDED = tuple(name for name in SCENARIOS if SCENARIOS[name])
_BY_FLAGS = {frozenset(flags): name for name, flags in SCENARIOS.items()}


def scenario_with(flags) -> str:
    """The scenario of a set of flags (--parallel, --idempotent)."""
    return _BY_FLAGS[frozenset(flags)]


def record_mode(folder: Path, scenario: str) -> None:
    """Write mode.json for a task of this scenario (atomically, as the checkpoint is written)."""
    if scenario not in RECORDED:
        raise ValueError(f"not a recorded scenario: {scenario!r}")
    write_json_atomic(Path(folder) / MODE_FILE, {"mode": scenario})


def read_mode(folder: Path) -> str | None:
    """The scenario mode.json names, None without one; a HarnessError naming the file when it is anything else."""
    path = Path(folder) / MODE_FILE
    shapes = " / ".join(f'{{{{"mode": "{name}"}}}}' for name in RECORDED)  # braces kept through two formats
    odd = texts.MODE_FILE_ODD.replace("{shapes}", shapes)
    try:
        obj = read_json(path, odd)
    except FileNotFoundError:
        return None
    if not (isinstance(obj, dict) and set(obj) == {"mode"} and obj["mode"] in RECORDED):
        raise HarnessError(odd.format(path=path))
    return obj["mode"]


def _checkpoint_version(folder: Path) -> object:
    """The checkpoint's version as written, or None when there is none or it cannot be read (its loader says why)."""
    try:
        cp = read_json(folder / CHECKPOINT_FILE, "")
    except (FileNotFoundError, HarnessError):
        return None
    return cp.get("version") if isinstance(cp, dict) else None


def task_flags(folder: Path) -> tuple[str | None, frozenset[str]]:
    """(what mode.json names, the flags the task on disk needs): the recorded scenario's, plus --parallel for a
    version-2 checkpoint."""
    recorded = read_mode(folder)
    flags = set(SCENARIOS[recorded or "lesson"])
    version = _checkpoint_version(folder)
    if version == 2 and type(version) is int:
        flags.add("--parallel")
    return recorded, frozenset(flags)


def refuse_another_mode(workdir, parallel: bool, idempotent: bool, engine: bool = False) -> None:
    """Before a --resume: refuse one whose flags would drop a mode the task on disk was started in (or that asks the
    engine to resume a task of the files), naming the exact command that continues it; and, for a recorded task with
    no checkpoint yet, the exact command that starts it again. Reads only; never changes a file."""
    folder = Path(workdir)
    checkpoint = folder / CHECKPOINT_FILE
    recorded, needed = task_flags(folder)
    if recorded and not os.path.lexists(checkpoint):
        command = harness_command(SCENARIOS[recorded], folder, resume=False)
        started = " ".join(SCENARIOS[recorded])
        raise HarnessError(
            texts.MODE_NOTHING_TO_RESUME.format(path=checkpoint, started=started, command=command)
        )
    found = [] if engine or os.path.lexists(checkpoint) else not_ours(folder)
    if found:  # a fresh start would refuse this folder too: advise another one, not a fresh start
        raise HarnessError(
            texts.RESUME_NOT_OUR_FOLDER.format(path=checkpoint, folder=folder, files=", ".join(found))
        )
    if engine and (os.path.lexists(checkpoint) or os.path.lexists(folder / EFFECTS_FILE)):
        # the engine keeps neither a checkpoint nor a ledger file: this is a task of the files
        flags = SCENARIOS[scenario_with(needed)]
        _advised_resume_loads(checkpoint, flags)
        found = CHECKPOINT_FILE if os.path.lexists(checkpoint) else EFFECTS_FILE
        raise HarnessError(
            texts.MODE_NOT_ENGINE.format(path=folder, file=found, command=harness_command(flags, folder))
        )
    asked = {flag for flag, on in (("--parallel", parallel), ("--idempotent", idempotent)) if on}
    missing = needed - asked
    if not missing:
        return
    flags = SCENARIOS[scenario_with(needed)]  # in the usual order
    _advised_resume_loads(checkpoint, flags)
    version = _checkpoint_version(folder)
    if flags == ("--parallel",) and version == 2 and type(version) is int:
        raise HarnessError(
            version_refused(checkpoint, 2)
        )  # only the checkpoint needs the flag: its loader's words
    # what says so: mode.json, and the checkpoint's version 2 when it adds --parallel to the recorded mode
    on_disk = (
        MODE_FILE
        if set(SCENARIOS[recorded or "lesson"]) == set(flags)
        else texts.LIST_JOIN.join((MODE_FILE, CHECKPOINT_FILE))
    )
    raise HarnessError(
        texts.MODE_DROPPED.format(
            path=folder,
            file=on_disk,
            started=" ".join(flags),
            missing=" ".join(f for f in flags if f in missing),
            command=harness_command(flags, folder),
        )
    )


def _advised_resume_loads(checkpoint: Path, flags) -> None:
    """Advice to continue with these flags is given only when that resume's loader reads the checkpoint (and its
    ledger): otherwise the loader's own refusal, raised here, is what is true of the folder."""
    (load_checkpoint_v2 if "--parallel" in flags else load_checkpoint)(checkpoint)


def continue_in_mode(run, scenario: str, resume: bool, load_checkpoint):
    """What a scenario's run records: its mode for a fresh start (written by the clean-up, before point A); for a
    resume, the check above, then the loader the resume uses: when the resume adds a mode to the task's, one that
    records it once the checkpoint (and its ledger) loaded, so a resume the loader refuses changes no file."""
    run.mode = scenario if scenario in RECORDED else None
    run.at_fresh_start = [lambda folder: record_mode(folder, scenario)] if run.mode else []
    if not resume:
        return load_checkpoint
    flags = SCENARIOS[scenario]
    refuse_another_mode(run.workdir, "--parallel" in flags, "--idempotent" in flags)
    if not run.mode or read_mode(run.workdir) == run.mode:
        return load_checkpoint

    def load_then_record_mode(path):
        cp = load_checkpoint(path)
        record_mode(run.workdir, run.mode)
        return cp

    return load_then_record_mode


def folder_workflows(folder: Path) -> list[str]:
    """The ids of the workflows in the folder's own dbos.sqlite, read-only ([] when it is absent, not a plain file, or
    unreadable): what a refusal names so that its command continues the task that is there."""
    path = folder / DB_FILE
    with contextlib.suppress(sqlite3.Error, OSError):
        if not stat.S_ISREG(os.lstat(path).st_mode):  # a FIFO would block the read
            return []
        uri = "file:" + urllib.parse.quote(os.fsencode(path.resolve()), safe="/") + "?mode=ro"
        con = sqlite3.connect(uri, uri=True, timeout=1.0)
        try:
            return [str(r[0]) for r in con.execute("SELECT workflow_uuid FROM workflow_status")]
        finally:
            con.close()
    return []
