"""The task's three tools, their JSON schemas, and READ_ONLY. Tools touch only files inside the work folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from . import texts
from .run import NOTES_FILE, TOOL_LOG_FILE


class ToolError(Exception):
    """A tool refused its input; the loop turns this into an is_error tool_result."""


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


def inside(workdir: Path, relpath: object) -> Path:
    """The path inside the work folder, or a ToolError if it is not a string or escapes the folder."""
    if not isinstance(relpath, str) or not relpath:
        raise ToolError(texts.BAD_TOOL_INPUT.format(name="path", detail="空でない文字列が必要です"))
    root = Path(workdir).resolve()
    target = (root / relpath).resolve()
    if target != root and root not in target.parents:
        raise ToolError(texts.PATH_ESCAPES.format(path=relpath))
    return target


def _read_text(workdir: Path, relpath: object) -> str:
    path = inside(workdir, relpath)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ToolError(texts.FILE_NOT_FOUND.format(path=relpath)) from None


def read_notes(workdir: Path, input: dict) -> str:
    return _read_text(workdir, input.get("path"))


def count_words(workdir: Path, input: dict) -> str:
    text = _read_text(workdir, input.get("path"))
    chars = sum(1 for c in text if not c.isspace())
    return f"文字数: {chars}（空白と改行を除く）、行数: {len(text.splitlines())}"


def write_report(workdir: Path, input: dict) -> str:
    content = input.get("content")
    if not isinstance(content, str):
        raise ToolError(texts.BAD_TOOL_INPUT.format(name="write_report", detail="content は文字列です"))
    path = inside(workdir, input.get("path"))
    path.write_text(content, encoding="utf-8")
    return f"{input['path']} に {len(content)} 文字のレポートを書き出しました"


TOOL_IMPLS: dict[str, Callable[[Path, dict], str]] = {
    "read_notes": read_notes,
    "count_words": count_words,
    "write_report": write_report,
}


def execute_tool(workdir: Path, name: str, tool_use_id: str, input: dict) -> str:
    """Really run a tool, and append `<name> <tool_use_id>` to tool-runs.log: the outside world's view."""
    impl = TOOL_IMPLS.get(name)
    if impl is None:
        raise ToolError(texts.UNKNOWN_TOOL.format(name=name))
    if not isinstance(input, dict):
        raise ToolError(texts.BAD_TOOL_INPUT.format(name=name, detail="オブジェクトが必要です"))
    output = impl(Path(workdir), input)
    with open(Path(workdir) / TOOL_LOG_FILE, "a", encoding="utf-8") as log:
        log.write(f"{name} {tool_use_id}\n")
    return output


def tool_error_result(tool_use_id: str, err: Exception) -> dict:
    """The is_error tool_result for a tool that failed before doing anything."""
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": texts.TOOL_ERROR_RESULT.format(error=err),
        "is_error": True,
    }


def ensure_notes(workdir: Path) -> None:
    """Create the input sales-notes.txt with a short Japanese sample when it is missing."""
    notes = Path(workdir) / NOTES_FILE
    if not notes.exists():
        notes.write_text(texts.SAMPLE_NOTES, encoding="utf-8")
