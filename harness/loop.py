"""ブロック3: run_agent（1ターンに2回のチェックポイント、地点Aと地点B）と、台帳つきの run_tool_uses。"""

from __future__ import annotations

from . import texts
from .checkpoint import load_checkpoint, save_checkpoint
from .errors import HarnessError
from .ledger import save_effect
from .reconcile import reconcile
from .tools import ToolError, execute_tool
from .vocab import CHECKPOINT_VERSION
from .workdir import start_fresh

MAX_TURNS = 10


# fmt: off
def run_tool_uses(run, content: list[dict]) -> list[dict]:
    """tool_use ブロックを順に実行し、ツールが成功したその瞬間に結果を台帳へ1件書く（実行が先、記録が後）。"""
    tool_use_blocks = [b for b in content if b["type"] == "tool_use"]
    results = []
    for block in tool_use_blocks:
        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append({"type": "tool_result", "tool_use_id": block["id"], "is_error": True,
                            "content": texts.TOOL_ERROR_RESULT.format(error=err)})
            continue
        # 副作用はすでに起きている: たとえ台帳の書き込みが失敗しても、is_error で嘘をついてはならない
        # （それはモデルに新しい tool_use_id で再試行させ、副作用の重複を招く）——人間が対処できるよう、
        # 別途アラートを上げるだけにする
        try:
            save_effect(run.effects_path, block["id"],
                        {"name": block["name"], "result": output, "at": run.clock()})
        except (OSError, HarnessError) as err:
            run.emit("ledger_write_failed", id=block["id"], error=str(err).splitlines()[0])
        else:
            run.emit("effect_written", id=block["id"], name=block["name"])
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def run_agent(run, client, task: str = texts.TASK, tools: list[dict] | None = None, *, resume: bool = False,
              run_tool_uses=run_tool_uses, reconcile=reconcile,
              save_checkpoint=save_checkpoint, load_checkpoint=load_checkpoint) -> str:
    """第7コースのループに、毎ターン2つのチェックポイント（地点Aと地点B）を差し込んだもの。"""
    tools = tools or []
    if resume:
        task, turns, tokens_used, messages = resume_from_checkpoint(run, load_checkpoint, reconcile,
                                                                    save_checkpoint)
        if messages[-1]["role"] == "assistant":  # 締めくくりまで保存済み: モデルにもう一度は頼まない
            return done(run, final_text(messages[-1]))
    else:
        start_fresh(run)  # 前回の残りのチェックポイントと台帳を片付けて、きれいな出発点から
        turns, tokens_used, messages = 0, 0, [{"role": "user", "content": task}]

    response = client.messages.create(tools=tools, messages=messages)
    tokens_used += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]

    while response["stop_reason"] == "tool_use":
        if turns >= MAX_TURNS:
            return done(run, texts.MAX_TURNS_REACHED.format(max_turns=MAX_TURNS))
        turns += 1

        tool_uses = [b for b in response["content"] if b["type"] == "tool_use"]
        if len(tool_uses) != 1:  # このレッスンの約束: 宙ぶらりんな呼び出しは1ターンに1つだけ
            raise HarnessError(texts.MULTIPLE_TOOL_USES.format(count=len(tool_uses)))
        tool_use = tool_uses[0]
        # —— 地点A: モデルのレスポンスを受け取った直後、このターンの宙ぶらりんなツール呼び出しを記録する ——
        save_checkpoint(run.checkpoint_path, {
            "version": CHECKPOINT_VERSION, "task": task, "turns": turns, "tokensUsed": tokens_used,
            "messages": messages,
            "pendingToolUse": {"id": tool_use["id"], "name": tool_use["name"], "input": tool_use["input"]},
        })
        run.emit("save_a", turn=turns, pending=tool_use["name"])

        messages.append({"role": "assistant", "content": response["content"]})
        tool_results = run_tool_uses(run, response["content"])
        messages.append({"role": "user", "content": tool_results})

        # —— 地点B: ツール結果が messages に入り（台帳もディスク上にあり）、宙ぶらりんな呼び出しは解消 ——
        save_checkpoint(run.checkpoint_path, {
            "version": CHECKPOINT_VERSION, "task": task, "turns": turns, "tokensUsed": tokens_used,
            "messages": messages, "pendingToolUse": None,
        })
        run.emit("save_b", turn=turns)

        response = client.messages.create(tools=tools, messages=messages)
        tokens_used += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]

    # 締めくくりも同じ形式で保存しておく: 完了したタスクを --resume しても、モデルを二度呼ばない
    messages.append({"role": "assistant", "content": response["content"]})
    save_checkpoint(run.checkpoint_path, {
        "version": CHECKPOINT_VERSION, "task": task, "turns": turns, "tokensUsed": tokens_used,
        "messages": messages, "pendingToolUse": None,
    })
    return done(run, final_text(response))


def resume_from_checkpoint(run, load_checkpoint, reconcile, save_checkpoint) -> tuple:
    """--resume: チェックポイントを読み込み、reconcile し、調整結果があれば messages に補完して地点Bを保存する。"""
    cp = load_checkpoint(run.checkpoint_path)
    task, turns, tokens_used, messages = cp["task"], cp["turns"], cp["tokensUsed"], cp["messages"]
    pending = cp["pendingToolUse"]
    run.emit("resume", turn=turns, pending=pending["name"] if pending else None)
    tool_result = reconcile(run, cp)
    if tool_result is not None:
        # 地点Aが記録した呼び出しを assistant のターンとして戻し、調整した tool_result と対にする
        messages.append({"role": "assistant", "content": [{"type": "tool_use", **pending}]})
        messages.append({"role": "user", "content": [tool_result]})
        save_checkpoint(run.checkpoint_path, {
            "version": CHECKPOINT_VERSION, "task": task, "turns": turns, "tokensUsed": tokens_used,
            "messages": messages, "pendingToolUse": None,
        })
        run.emit("save_b", turn=turns, resumed=True)
    return task, turns, tokens_used, messages
# fmt: on


def final_text(response: dict) -> str:
    """モデルの締めくくりの言葉。end_turn 以外で止まったなら（max_tokens など）そう伝える。"""
    text = "".join(b.get("text", "") for b in response["content"] if b["type"] == "text")
    if response.get("stop_reason", "end_turn") not in ("end_turn", "stop_sequence"):
        text = texts.STOPPED_EARLY.format(reason=response["stop_reason"], text=text or texts.NOTHING_SAID)
    return text


def done(run, text: str) -> str:
    """タスクの終わりを報告して、その言葉を返す（コマンドラインはこれを [done] として表示する）。"""
    run.emit("done", text=text)
    return text
