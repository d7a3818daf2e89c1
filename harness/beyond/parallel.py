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
from ..files import read_json
from ..loop import MAX_TURNS, done, final_text, run_tool_uses
from ..models import APIError, ScriptedModel
from ..models import pairing_problem as lesson_pairing_problem
from ..reconcile import reconcile
from ..scene import checkpoint_problem_v2, ledger_problem_v2, read_ledger
from ..vocab import (
    CHECKPOINT_VERSION_2,
    EFFECTS_FILE,
    NOTES_FILE,
    REPORT_FILE,
    SUMMARY_FILE,
)
from ..workdir import start_fresh  # the lesson's: it removes summary.txt too


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


def pairing_problem(messages: list[dict]) -> str | None:
    """The lesson's pairing rule (models.pairing_problem), and for a turn with several tool_use blocks: their
    tool_results all in the next user message, before any other block, one each, in the order of the tool_use blocks.

    The API documents the first three; the order is this scripted model's stricter rule (the API's documentation
    calls the calls of one turn unordered), kept so that a resumed conversation is the clean run's, byte for byte.
    """
    problem = lesson_pairing_problem(messages)
    if problem:
        return problem
    for i, msg in enumerate(messages[:-1]):
        blocks = msg["content"] if msg["role"] == "assistant" and isinstance(msg["content"], list) else []
        ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if not ids:
            continue
        answer = messages[i + 1]["content"]  # a list: lesson_pairing_problem found every id answered there
        results = [b.get("tool_use_id") for b in answer if b.get("type") == "tool_result"]
        if any(b.get("type") != "tool_result" for b in answer[: len(results)]):
            return (
                f"messages.{i + 1}.content: `tool_result` blocks must come first in the user message, "
                "before any other content."
            )
        twice = sorted({x for x in results if results.count(x) > 1})
        if twice:
            return f"messages.{i + 1}.content: more than one `tool_result` for the same `tool_use`: {', '.join(twice)}."
        if results != ids:
            return (
                f"messages.{i + 1}.content: `tool_result` blocks must follow the order of the `tool_use` blocks in "
                f"messages.{i}: expected {', '.join(ids)}, got {', '.join(results)} (the scripted model's rule)."
            )
    return None


def _result(messages: list[dict], tool_use_id: str) -> dict:
    for msg in messages:
        if msg["role"] == "user" and isinstance(msg["content"], list):
            for b in msg["content"]:
                if b.get("type") == "tool_result" and b.get("tool_use_id") == tool_use_id:
                    return b
    return {}


def _points(messages: list[dict]) -> list[str]:
    notes = _result(messages, "toolu_01")
    text = "" if notes.get("is_error") else str(notes.get("content", ""))
    return [line for line in text.splitlines() if line.startswith("- ")]


def report_text(messages: list[dict]) -> str:
    """The report P2 writes, composed from what the two reads of P1 returned."""
    points = _points(messages)
    count = _result(messages, "toolu_02")
    tally = count.get("content") if count and not count.get("is_error") else "不明"
    body = "\n".join(points) if points else "（メモの要点を読み取れませんでした）"
    return f"# 営業メモのレポート\n\n要点（{len(points)}件）:\n{body}\n\n元のメモ: {tally}\n"


def summary_text(messages: list[dict]) -> str:
    """The one-line summary P2 writes beside the report."""
    names = [p[2:].replace("：", ":").split(":")[0].strip() for p in _points(messages)]
    return f"営業メモ{len(names)}件（{'、'.join(names) or 'なし'}）。詳しくは report.txt。\n"


def _tool_use(id: str, name: str, input: dict) -> dict:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


class ParallelScriptedModel:
    """A stand-in for client.messages.create for the --parallel task, chosen from the conversation (any crash point
    can resume): P1 names read_notes and count_words in one response, P2 write_report for report.txt and for
    summary.txt in one response, P3 closes. It rejects a conversation that breaks the pairing rule.

    A conversation of the lesson's own task (a version-1 checkpoint resumed by the version-2 loop) is answered by
    the lesson's ScriptedModel.
    """

    model = "scripted-parallel"

    def __init__(self) -> None:
        self.messages = self  # so the loop calls client.messages.create(...), as with the real SDK
        self.calls = 0
        self.lesson = ScriptedModel()

    def create(self, *, messages: list[dict], tools: list[dict] | None = None, **_: object) -> dict:
        if messages and messages[0].get("content") == texts.TASK:
            return self.lesson.create(messages=messages, tools=tools)
        self.calls += 1
        problem = pairing_problem(messages)
        if problem:
            raise APIError(400, problem)
        step = sum(1 for m in messages if m["role"] == "assistant")
        if step == 0:
            content = [
                _tool_use("toolu_01", "read_notes", {"path": NOTES_FILE}),
                _tool_use("toolu_02", "count_words", {"path": NOTES_FILE}),
            ]
        elif step == 1:
            content = [
                _tool_use(
                    "toolu_03", "write_report", {"path": REPORT_FILE, "content": report_text(messages)}
                ),
                _tool_use(
                    "toolu_04", "write_report", {"path": SUMMARY_FILE, "content": summary_text(messages)}
                ),
            ]
        elif step == 2:
            asked = {
                b["id"]: b["input"].get("path") for b in messages[-2]["content"] if b["type"] == "tool_use"
            }
            failed = [asked.get(b["tool_use_id"]) for b in messages[-1]["content"] if b.get("is_error")]
            text = (
                texts.PARALLEL_DONE_UNKNOWN.format(files=" と ".join(str(f) for f in failed))
                if failed
                else texts.PARALLEL_DONE_OK
            )
            content = [{"type": "text", "text": text}]
        else:
            raise APIError(
                400,
                f"スクリプト化されたモデルのレスポンスは P1〜P3 の3つだけです（{step + 1}個目を要求されました）",
            )
        return {
            "id": f"msg_scripted_parallel_{step + 1:02d}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            # deterministic stand-in for token counts: about four characters per token
            "usage": {
                "input_tokens": len(json.dumps(messages, ensure_ascii=False)) // 4,
                "output_tokens": len(json.dumps(content, ensure_ascii=False)) // 4,
            },
        }
