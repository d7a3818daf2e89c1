"""Beyond the lesson (2): idempotent tools, and reconcile's fourth branch.

The lesson's reconcile cannot tell ① (point A saved, tool not started) from ② (tool finished, ledger not written) for
a side-effecting tool, and honestly answers is_error. A tool that takes an idempotency key (its tool_use_id) and can
be asked "did call K happen, and with what result?" closes that gap: reconcile asks by key, then reuses or runs.

The blocks learners read in notebook 12 (write_report_with_key, lookup_report, with_key, run_tool_uses_keyed,
reconcile_idempotent) reuse the lesson's run_tool_uses and reconcile unchanged; the lesson's three branches and their
log lines stay as they are for every tool that cannot be asked.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from .. import texts
from ..errors import HarnessError
from ..ledger import load_effects, save_effect
from ..loop import run_tool_uses
from ..reconcile import reconcile
from ..store import read_bytes
from ..tools import TOOL_IMPLS, ToolError, inside, write_report


class IdempotentTool:
    """A side-effecting tool that takes an idempotency key, and a lookup the outside world answers by that key."""

    def __init__(self, name: str, impl: Callable[[Path, dict, str], str], lookup: Callable) -> None:
        self.name, self.impl, self.lookup = name, impl, lookup

    def __repr__(self) -> str:
        return f"IdempotentTool({self.name!r})"

    def __call__(self, workdir: Path, input: dict, key: str | None = None) -> str:
        # run without its key, the call could never be found by lookup afterwards: refuse to run
        if key is None:
            raise HarnessError(texts.NO_IDEMPOTENCY_KEY.format(name=self.name))
        return self.impl(workdir, input, key)


# fmt: off
def write_report_with_key(workdir: Path, input: dict, key: str) -> str:
    """レポートの1行目に冪等キー（tool_use_id）を書き、本文と一緒に1回の rename でアトミックに書き出す。"""
    content = input.get("content")
    if not isinstance(content, str):
        raise ToolError(texts.BAD_TOOL_INPUT.format(name="write_report", detail=texts.NOT_TEXT.format(key="content")))
    first_line = texts.IDEMPOTENCY_KEY_LINE.format(key=key)  # <!-- 冪等キー: toolu_03 -->
    write_report(workdir, {**input, "content": first_line + "\n" + content})  # キーと本文は同時にしか現れない
    return texts.REPORT_WRITTEN.format(path=input["path"], chars=len(content))


def lookup_report(workdir: Path, input: dict, key: str) -> str | None:
    """「呼び出し key は起きたか、結果は何か」にレポート自身が答える。起きた（キーも本文もこの呼び出しのもの）→結果、
    起きていない→None、分からない→ToolError。"""
    path = inside(workdir, input.get("path"))
    try:
        text = read_bytes(path).decode("utf-8")
    except FileNotFoundError:
        return None  # 書き込みは rename 1回: ファイルがなければ、この呼び出しはまだ何も書いていない
    except (OSError, UnicodeDecodeError) as err:  # フォルダ、リンク、読めないファイル、UTF-8 でない
        detail = getattr(err, "strerror", None) or type(err).__name__
        raise ToolError(texts.LOOKUP_FAILED.format(path=input["path"], key=key, detail=detail)) from None
    first_line, _, body = text.partition("\n")
    if first_line != texts.IDEMPOTENCY_KEY_LINE.format(key=key) or body != input.get("content"):
        # 別のキー、または同じキーで中身が違う（キーを使い回した別の呼び出し）。この呼び出しが書いた後で上書きされたのかも
        # しれない: ファイルからは決められない。「起きていない」と答えて書き直すと、起きていた呼び出しの2回目になりうる
        raise ToolError(texts.LOOKUP_CANNOT_TELL.format(path=input["path"], key=key))
    return texts.REPORT_WRITTEN.format(path=input["path"], chars=len(body))


def key_of(text: str) -> str | None:
    """The idempotency key a report's first line carries (write_report_with_key's format), None without one."""
    prefix, suffix = texts.IDEMPOTENCY_KEY_LINE.split("{key}")
    first_line = text.partition("\n")[0]
    if first_line.startswith(prefix) and first_line.endswith(suffix) and len(first_line) >= len(prefix + suffix):
        return first_line[len(prefix) : len(first_line) - len(suffix)]
    return None


def with_key(run, key: str):
    """この1回の呼び出しのための run の写し。冪等なツールは key（tool_use_id）を冪等キーとして受け取って走る。"""
    keyed = copy.copy(run)
    keyed.tool_impls = {name: functools.partial(tool, key=key) if isinstance(tool, IdempotentTool) else tool
                        for name, tool in run.tool_impls.items()}
    return keyed


def run_tool_uses_keyed(run, content: list[dict]) -> list[dict]:
    """レッスンの run_tool_uses を1呼び出しずつ使う。冪等なツールには、その tool_use_id を冪等キーとして渡す。"""
    results = []
    for block in [b for b in content if b["type"] == "tool_use"]:
        results += run_tool_uses(with_key(run, block["id"]), [block])
    return results


def reconcile_idempotent(run, cp: dict) -> dict | None:
    """第4の分岐: 台帳ミスかつ副作用ありでも、問い合わせられるツールなら冪等キーで外の世界に聞き、再利用か実行かを決める。"""
    pending = cp["pendingToolUse"]
    tool = run.tool_impls.get(pending["name"]) if pending else None
    if not isinstance(tool, IdempotentTool) or pending["id"] in load_effects(run.effects_path):
        return reconcile(run, cp)  # 問い合わせられないツール、または台帳ヒット: レッスンの3分岐のまま

    try:
        output = tool.lookup(run.workdir, pending["input"], pending["id"])  # 冪等キーで問い合わせる
    except ToolError:
        return reconcile(run, cp)  # 外の世界にも分からない: 推測せず、レッスンどおり正直に is_error

    if output is None:  # 起きていなかった: いま、同じ冪等キーで実行する（レッスンの run_tool_uses で: 実行が先、記録が後）
        run.emit("reconcile", branch="asked-run", id=pending["id"], name=pending["name"])
        return run_tool_uses_keyed(run, [{"type": "tool_use", **pending}])[0]
    # 起きていた: その結果を再利用し、再実行しない。本物の結果を手にしているので、台帳へ記録する
    run.emit("reconcile", branch="asked-done", id=pending["id"], name=pending["name"])
    save_effect(run.effects_path, pending["id"],
                {"name": pending["name"], "result": output, "at": run.clock()})
    run.emit("effect_written", id=pending["id"], name=pending["name"])
    return {"type": "tool_result", "tool_use_id": pending["id"], "content": output}
# fmt: on


# The lesson's tools, with write_report replaced by its idempotent version (read-only, like TOOL_IMPLS).
IDEMPOTENT_TOOL_IMPLS = MappingProxyType(
    {**TOOL_IMPLS, "write_report": IdempotentTool("write_report", write_report_with_key, lookup_report)}
)
