"""The transcript: the lesson's log line for each event, and how text from outside is made safe for a terminal.

The words are texts.py's; this module only fills them in.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from .texts import (
    CHECKPOINT_OTHER_VERSION,
    CHECKPOINT_VERSION_2_BY_PARALLEL,
    IDEMPOTENT_RECONCILE_LINES,
    LOG_LINES,
    NOTHING,
    RECONCILE_LINES,
    TOOL_ERROR_RESULT,
    WRITER_KILL_NOTES,
)
from .vocab import DEFAULT_WORKDIR


def untrusted(value: object, limit: int = 300, indent_lines: bool = False) -> str:
    """Text from outside (a model, a server, an argument) made safe for the terminal: control characters and escape
    sequences shown as escapes, cut at `limit` characters. Newlines too, unless indent_lines: then each further line
    is indented, so no line of it can pass for one of the harness's own `[...]` lines."""
    text = str(value)
    shown = "".join(
        "\n    " if c == "\n" and indent_lines else c if c.isprintable() else repr(c)[1:-1] for c in text
    )
    return shown if len(shown) <= limit else shown[:limit] + "…"


def version_refused(path, version: object) -> str:
    """Why a checkpoint of another version is refused, and what to do: a version 2 written by --parallel is not
    deleted but resumed with --parallel --resume (in its folder); any other version, the lesson's advice."""
    if version == 2 and type(version) is int:
        command = harness_command(("--parallel",), Path(path).parent)
        return CHECKPOINT_VERSION_2_BY_PARALLEL.format(path=path, command=command)
    return CHECKPOINT_OTHER_VERSION.format(path=path, version=json.dumps(version, ensure_ascii=False))


def harness_command(flags, workdir, resume: bool = True) -> str:
    """The command line that runs the task in `workdir` with these mode flags, as a person would type it again:
    `python -m harness --parallel --resume --workdir DIR` (no --workdir for the default folder)."""
    words = ["python", "-m", "harness", *flags, *(["--resume"] if resume else [])]
    if Path(workdir) != Path(DEFAULT_WORKDIR):
        words += ["--workdir", shlex.quote(str(workdir))]
    return untrusted(" ".join(words), limit=1000)


def reconcile_line(branch: str) -> str:
    """The log line of a reconcile branch: the lesson's three, or the idempotent tools' fourth (notebook 12)."""
    return RECONCILE_LINES.get(branch) or IDEMPOTENT_RECONCILE_LINES[branch]


def format_event(kind: str, data: dict) -> str | None:
    """The lesson's log line for one event, or None if the event has no line."""
    if kind == "save_b" and data.get("resumed"):
        kind = "save_b_resumed"
    if kind == "crash" and data.get("mode") == "sigkill":
        kind = "crash_sigkill"
    line = LOG_LINES.get(kind)
    if line is None:
        return None
    if kind == "resume":
        data = {**data, "pending": data["pending"] or NOTHING}
    if kind == "reconcile":
        data = {**data, "line": reconcile_line(data["branch"])}
    if kind == "tool_error":
        data = {**data, "error": TOOL_ERROR_RESULT.format(error=untrusted(data["error"]))}
    if kind in ("crash", "crash_sigkill"):
        data = {**data, "note": WRITER_KILL_NOTES.get(data["label"].split(":")[0], "")}
    if kind == "done":
        data = {**data, "text": untrusted(data["text"], limit=4000, indent_lines=True)}
    if kind == "ledger_write_failed":
        data = {**data, "error": untrusted(data["error"])}
    return line.format(**data)


def terminal_safe(text: str) -> str:
    """A message as it may reach a terminal: every control character (escape sequences, bidi overrides, ...)
    shown as an escape, except the newlines between the message's own lines."""
    return "".join(c if c == "\n" or c.isprintable() else repr(c)[1:-1] for c in text)


def print_transcript(event) -> None:
    """The transcript listener: the lesson's log line for each event on stdout, the ledger alert on stderr."""
    line = format_event(event.kind, event.data)
    stream = sys.stderr if event.kind == "ledger_write_failed" else sys.stdout
    if line is not None and stream is not None:
        print(terminal_safe(line), file=stream, flush=True)
