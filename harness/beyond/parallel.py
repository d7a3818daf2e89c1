"""Beyond the lesson (1): a pending set. One response may name several tools; checkpoint version 2 keeps them all.

The lesson draws this line on purpose and names how to cross it: pendingToolUse becomes an array, and reconcile runs
for each call. The blocks learners read in notebook 11 (run_agent_v2, resume_from_checkpoint_v2, load_checkpoint_v2)
keep the lesson's shape and reuse its blocks unchanged (run_tool_uses, reconcile, save_checkpoint, load_checkpoint).
Beside them: the version-2 shape checks, the --parallel task's scripted model, and the pairing rule for a turn with
several tool_use blocks.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import texts
from ..checkpoint import load_checkpoint, save_checkpoint
from ..errors import HarnessError
from ..loop import MAX_TURNS, done, final_text, run_tool_uses
from ..models import (
    LESSON_SCRIPT,
    ScriptedModel,
    note_points,
    pairing_problem,  # noqa: F401 (the full pairing rule, as notebook 11 and the tests import it here)
    report_text,
)
from ..reconcile import reconcile
from ..store import read_json, read_ledger
from ..vocab import (
    CHECKPOINT_VERSION_2,
    EFFECTS_FILE,
    NOTES_FILE,
    REPORT_FILE,
    SUMMARY_FILE,
)
from ..workdir import start_fresh  # the lesson's: it removes summary.txt too
from .store_v2 import checkpoint_problem_v2, ledger_problem_v2


# fmt: off
def load_checkpoint_v2(path: Path) -> dict:
    """version 2 を読む。version 1（レッスンの形式）も、宙ぶらりんな呼び出しが0個か1個の配列として読む。"""
    try:
        cp = read_json(path, texts.CHECKPOINT_UNPARSABLE)
    except FileNotFoundError:
        raise HarnessError(texts.CHECKPOINT_MISSING.format(path=path)) from None
    if isinstance(cp, dict) and cp.get("version") == 1:
        cp = load_checkpoint(path)  # version 1 の確かめは、レッスンのローダーにそのまま任せる
        pending = cp.pop("pendingToolUse")
        return {**cp, "version": 2, "pendingToolUses": [pending] if pending else []}
    if isinstance(cp, dict) and cp.get("version", CHECKPOINT_VERSION_2) != CHECKPOINT_VERSION_2:
        # 知らない version を、無理やり今のフォーマットとして読まない（レッスンと同じ理由）
        raise HarnessError(texts.CHECKPOINT_VERSION_2.format(path=path, version=json.dumps(cp["version"])))
    problem = checkpoint_problem_v2(cp)
    if problem:
        raise HarnessError(texts.CHECKPOINT_SHAPE.format(path=path, detail=problem))
    problem = ledger_problem_v2(cp, read_ledger(path.with_name(EFFECTS_FILE)))  # 隣の台帳と食い違っていないか
    if problem:
        raise HarnessError(texts.LEDGER_DISAGREES.format(path=path, detail=problem))
    return cp


def resume_from_checkpoint_v2(run, load_checkpoint, reconcile, save_checkpoint) -> tuple:
    """--resume: 読み込み、宙ぶらりんな呼び出しの1つ1つに reconcile を走らせ、結果をまとめて1つの user メッセージで補完する。"""
    cp = load_checkpoint(run.checkpoint_path)
    task, turns, tokens_used, messages = cp["task"], cp["turns"], cp["tokensUsed"], cp["messages"]
    pending = cp["pendingToolUses"]
    run.emit("resume", turn=turns, pending=pending_names(pending))
    if pending:
        # レッスンの reconcile は宙ぶらりんな呼び出しを1つ受け取る: 1つずつ見せる。分岐は呼び出しごとに違ってよい
        tool_results = [reconcile(run, {**cp, "pendingToolUse": call}) for call in pending]
        messages.append({"role": "assistant", "content": [{"type": "tool_use", **call} for call in pending]})
        messages.append({"role": "user", "content": tool_results})  # tool_use と同じ順に、1つのメッセージで
        save_checkpoint(run.checkpoint_path, {
            "version": 2, "task": task, "turns": turns, "tokensUsed": tokens_used,
            "messages": messages, "pendingToolUses": [],
        })
        run.emit("save_b", turn=turns, resumed=True)
    return task, turns, tokens_used, messages


def run_agent_v2(run, client, task: str = texts.PARALLEL_TASK, tools: list[dict] | None = None, *,
                 resume: bool = False, run_tool_uses=run_tool_uses, reconcile=reconcile,
                 save_checkpoint=save_checkpoint, load_checkpoint=load_checkpoint_v2) -> str:
    """レッスンの run_agent と同じループ。違いは、地点Aがこのターンに名指しされた呼び出しを「すべて」配列で記録すること。"""
    tools = tools or []
    if resume:
        task, turns, tokens_used, messages = resume_from_checkpoint_v2(run, load_checkpoint, reconcile,
                                                                       save_checkpoint)
        if messages[-1]["role"] == "assistant":  # 締めくくりまで保存済み: モデルにもう一度は頼まない
            return done(run, final_text(messages[-1]))
    else:
        start_fresh(run)  # 前回の残りのチェックポイントと台帳と出力を片付けて、きれいな出発点から
        turns, tokens_used, messages = 0, 0, [{"role": "user", "content": task}]

    response = client.messages.create(tools=tools, messages=messages)
    tokens_used += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]

    while response["stop_reason"] == "tool_use":
        if turns >= MAX_TURNS:
            return done(run, texts.MAX_TURNS_REACHED.format(max_turns=MAX_TURNS))
        turns += 1

        tool_uses = [b for b in response["content"] if b["type"] == "tool_use"]
        if not tool_uses:
            raise HarnessError(texts.NO_TOOL_USES)
        # —— 地点A: このターンに名指しされた呼び出しを「すべて」、名指しされた順に記録する ——
        save_checkpoint(run.checkpoint_path, {
            "version": 2, "task": task, "turns": turns, "tokensUsed": tokens_used, "messages": messages,
            "pendingToolUses": [{"id": b["id"], "name": b["name"], "input": b["input"]} for b in tool_uses],
        })
        run.emit("save_a", turn=turns, pending=pending_names(tool_uses))

        messages.append({"role": "assistant", "content": response["content"]})
        tool_results = run_tool_uses(run, response["content"])  # レッスンのまま: 1つずつ順に、実行が先、記録が後
        messages.append({"role": "user", "content": tool_results})  # 全部の結果を1つの user メッセージで、同じ順に

        # —— 地点B: このターンの結果がすべて messages に入った。宙ぶらりんな呼び出しは空の配列に ——
        save_checkpoint(run.checkpoint_path, {
            "version": 2, "task": task, "turns": turns, "tokensUsed": tokens_used,
            "messages": messages, "pendingToolUses": [],
        })
        run.emit("save_b", turn=turns)

        response = client.messages.create(tools=tools, messages=messages)
        tokens_used += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]

    # 締めくくりも同じ形式で保存しておく: 完了したタスクを --resume しても、モデルを二度呼ばない
    messages.append({"role": "assistant", "content": response["content"]})
    save_checkpoint(run.checkpoint_path, {
        "version": 2, "task": task, "turns": turns, "tokensUsed": tokens_used,
        "messages": messages, "pendingToolUses": [],
    })
    return done(run, final_text(response))
# fmt: on


def pending_names(calls: list[dict]) -> str | None:
    """The pending set as the log shows it, e.g. "[read_notes, count_words]"; None when it is empty."""
    return "[" + ", ".join(call["name"] for call in calls) + "]" if calls else None


# ---- the --parallel task's scripted model ----------------------------------------------------------------------------


def summary_text(messages: list[dict]) -> str:
    """The one-line summary P2 writes beside the report."""
    names = [p[2:].replace("：", ":").split(":")[0].strip() for p in note_points(messages)]
    return texts.PARALLEL_SUMMARY.format(count=len(names), names=texts.LIST_JOIN.join(names) or texts.NOTHING)


def _closing(messages: list[dict]) -> str:
    asked = {b["id"]: b["input"].get("path") for b in messages[-2]["content"] if b["type"] == "tool_use"}
    failed = [asked.get(b["tool_use_id"]) for b in messages[-1]["content"] if b.get("is_error")]
    if failed:
        return texts.PARALLEL_DONE_UNKNOWN.format(files=texts.AND_JOIN.join(str(f) for f in failed))
    return texts.PARALLEL_DONE_OK


# The --parallel task as data (models.LESSON_SCRIPT's form): P1 names read_notes and count_words in one response,
# P2 write_report for report.txt and for summary.txt in one response, P3 closes.
PARALLEL_SCRIPT = {
    "task": texts.PARALLEL_TASK,
    "model": "scripted-parallel",
    "letter": "P",
    "message_id": "msg_scripted_parallel_{n:02d}",
    "turns": [
        [("toolu_01", "read_notes", {"path": NOTES_FILE}), ("toolu_02", "count_words", {"path": NOTES_FILE})],
        [
            ("toolu_03", "write_report", {"path": REPORT_FILE, "content": report_text}),
            ("toolu_04", "write_report", {"path": SUMMARY_FILE, "content": summary_text}),
        ],
    ],
    "closing": _closing,
}


class ParallelScriptedModel(ScriptedModel):
    """The scripted model playing the --parallel task (a conversation of the lesson's own task, a version-1
    checkpoint resumed by the version-2 loop, is answered from the lesson's script)."""

    def __init__(self) -> None:
        super().__init__(PARALLEL_SCRIPT, LESSON_SCRIPT)
