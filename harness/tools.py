"""The task's three tools, their JSON schemas and READ_ONLY, and execute_tool: how the loop really runs one.

The model's tool inputs are untrusted: a path must stay inside the work folder, may not name the harness's own
files, and is opened without following a planted link or blocking on a special file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType

from . import texts
from .errors import HarnessError
from .store import UnsafeFile, append_line, fsync_folder, read_bytes, write_new_file
from .vocab import DB_FILES, NOTES_FILE, OUTPUT_FILES, REPORT_FILE, STATE_FILES, TOOL_LOG_FILE


class ToolError(Exception):
    """A tool refused its input or failed for an ordinary reason; the loop turns it into an is_error tool_result."""


# Tools whose re-execution changes nothing outside: reconcile may simply run them again.
READ_ONLY = frozenset({"read_notes", "count_words"})

TOOL_SCHEMAS = [
    {
        "name": "read_notes",
        "description": "作業フォルダ内のテキストファイル（営業メモ）を読み、その内容をそのまま返す。読み取り専用。",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "作業フォルダからの相対パス。例: sales-notes.txt"}
            },
            "required": ["path"],
        },
    },
    {
        "name": "count_words",
        "description": "作業フォルダ内のテキストファイルの文字数（空白と改行を除く）と行数を数える。読み取り専用。",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "作業フォルダからの相対パス。"}},
            "required": ["path"],
        },
    },
    {
        "name": "write_report",
        "description": "作業フォルダ内のファイルにレポートを書き出す（既存なら上書き）。副作用あり。",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "作業フォルダからの相対パス。例: report.txt"},
                "content": {"type": "string", "description": "書き出すレポート本文。"},
            },
            "required": ["path", "content"],
        },
    },
]

# Compared case-insensitively: on macOS and Windows, CHECKPOINT.json is the same file as checkpoint.json.
_HARNESS_NAMES = frozenset(
    n.casefold()
    for n in (frozenset(STATE_FILES) | frozenset(OUTPUT_FILES) - {REPORT_FILE} | frozenset(DB_FILES))
)


def inside(workdir: Path, relpath: object) -> Path:
    """The path inside the work folder, or a ToolError if it escapes it or names one of the harness's own files.
    The folders on the way are resolved; the last name is not (a link there is refused or replaced, never followed).
    """
    if not isinstance(relpath, str) or not relpath or "\x00" in relpath:
        raise ToolError(texts.BAD_TOOL_INPUT.format(name="path", detail=texts.PATH_NOT_TEXT))
    try:
        root = Path(workdir).resolve()
        lexical = root / relpath
        if lexical.name in ("", ".", ".."):
            raise ToolError(texts.PATH_ESCAPES.format(path=relpath))
        folder = lexical.parent.resolve()
    except (OSError, RuntimeError) as err:  # a link loop, a name too long
        raise ToolError(
            texts.CANNOT_OPEN.format(path=relpath, detail=getattr(err, "strerror", None) or err)
        ) from None
    if folder != root and root not in folder.parents:
        raise ToolError(texts.PATH_ESCAPES.format(path=relpath))
    target = folder / lexical.name
    name = target.name.casefold()
    if folder == root and (name in _HARNESS_NAMES or name.endswith(".tmp")):
        raise ToolError(texts.PATH_IS_HARNESS_FILE.format(path=relpath))
    return target


def _read_text(workdir: Path, relpath: object) -> str:
    path = inside(workdir, relpath)
    try:
        return read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        raise ToolError(texts.FILE_NOT_FOUND.format(path=relpath)) from None
    except UnicodeDecodeError:
        raise ToolError(texts.NOT_UTF8.format(path=relpath)) from None
    except OSError as err:  # a folder, a link, a FIFO, no permission
        raise ToolError(texts.CANNOT_OPEN.format(path=relpath, detail=err.strerror or err)) from None


def read_notes(workdir: Path, input: dict) -> str:
    return _read_text(workdir, input.get("path"))


def count_words(workdir: Path, input: dict) -> str:
    text = _read_text(workdir, input.get("path"))
    chars = sum(1 for c in text if not c.isspace())
    return texts.COUNT_WORDS_RESULT.format(chars=chars, lines=len(text.splitlines()))


def write_report(workdir: Path, input: dict) -> str:
    """Write the report atomically (a new temp file renamed over it): never through a planted link."""
    content = input.get("content")
    if not isinstance(content, str):
        raise ToolError(
            texts.BAD_TOOL_INPUT.format(name="write_report", detail=texts.NOT_TEXT.format(key="content"))
        )
    path = inside(workdir, input.get("path"))
    try:
        is_folder = path.is_dir()
    except OSError as err:  # a name too long
        raise ToolError(texts.CANNOT_WRITE.format(path=input["path"], detail=err.strerror or err)) from None
    if is_folder:
        raise ToolError(texts.CANNOT_OPEN.format(path=input["path"], detail=texts.FOLDER_IN_PLACE))
    # report.txt.tmp: one a kill left goes at the next write or a fresh start; a planted link is unlinked, not followed
    tmp = path.with_name(path.name + ".tmp")
    try:
        write_new_file(tmp, content.encode("utf-8"))
        os.replace(tmp, path)
    # a missing sub-folder, a full disk, Ctrl-C: no half-written temp file is left
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):  # named as the learner sees it: the temp file when that is what failed
            shown = input["path"] + ".tmp" if err.filename == str(tmp) else input["path"]
            raise ToolError(texts.CANNOT_WRITE.format(path=shown, detail=err.strerror or err)) from None
        raise
    fsync_folder(path.parent)
    return texts.WRITE_REPORT_RESULT.format(path=input["path"], length=len(content))


ToolImpl = Callable[[Path, dict], str]
# The lesson's toolImpls. Read-only: a run gets its own copy (Run.tool_impls), which a check or a notebook may change.
TOOL_IMPLS: Mapping[str, ToolImpl] = MappingProxyType(
    {"read_notes": read_notes, "count_words": count_words, "write_report": write_report}
)


_SCHEMAS = {schema["name"]: schema["input_schema"] for schema in TOOL_SCHEMAS}


def check_input(workdir: Path, name: str, input: dict) -> None:
    """Refuse, before anything runs, an input its schema does not allow: a missing or non-string field, a path
    that leaves the work folder or names one of the harness's own files."""
    schema = _SCHEMAS.get(name)
    if schema is None:
        return
    for key in schema["required"]:
        if not isinstance(input.get(key), str):
            raise ToolError(texts.BAD_TOOL_INPUT.format(name=name, detail=texts.NOT_TEXT.format(key=key)))
    if "path" in input:
        inside(workdir, input["path"])


def execute_tool(run, block: dict) -> str:
    """Really run one tool_use block (its shape was checked where it entered) with the run's tools, after writing
    `<name> <id>` to tool-runs.log: the outside world's view, so a tool that had any effect always has its line,
    whatever moment a kill hits. Whether a call already ran is reconcile's question, not this one's."""
    name, tool_use_id = block["name"], block["id"]
    run.emit("tool_start", id=tool_use_id, name=name)
    try:
        impl = run.tool_impls.get(name)
        if impl is None:
            raise ToolError(texts.UNKNOWN_TOOL.format(name=name))
        check_input(run.workdir, name, block["input"])
        try:
            append_line(run.path(TOOL_LOG_FILE), f"{name} {tool_use_id}")
        except OSError as err:
            raise HarnessError(
                texts.TOOL_LOG_FAILED.format(path=run.path(TOOL_LOG_FILE), detail=err.strerror)
            ) from None
        output = impl(run.workdir, block["input"])
    except ToolError as err:  # refused or failed: the person sees it too, not only the model
        run.emit("tool_error", id=tool_use_id, name=name, error=str(err))
        raise
    run.emit("tool_ran", id=tool_use_id, name=name)
    return output


def ensure_notes(workdir: Path) -> None:
    """Create the input sales-notes.txt with a short Japanese sample when it is missing (never through a link)."""
    notes = Path(workdir) / NOTES_FILE
    if not os.path.lexists(notes):
        write_new_file(notes, texts.SAMPLE_NOTES.encode("utf-8"))


__all__ = ["READ_ONLY", "TOOL_IMPLS", "TOOL_SCHEMAS", "ToolError", "UnsafeFile", "execute_tool", "inside"]
