"""Block 3: run_agent with points A and B, and run_tool_uses with the ledger (execute first, record after)."""

from __future__ import annotations

from . import texts
from .checkpoint import VERSION, load_checkpoint, save_checkpoint
from .crash import crash_point, writer_hooks
from .errors import HarnessError
from .ledger import record_effect
from .lock import holds_workdir
from .reconcile import reconcile
from .run import OUTPUT_FILES
from .tools import ToolError, ensure_notes, execute_tool, tool_error_result

MAX_TURNS = 10


def run_tool_uses(run, content: list[dict], turn: int = 0) -> list[dict]:
    """Run every tool_use block, recording each real result in the ledger right after the tool succeeds."""
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        try:
            output = execute_tool(run.workdir, block["name"], block["id"], block["input"])
        except ToolError as err:
            run.emit("tool_error", turn=turn, id=block["id"], name=block["name"], error=str(err))
            results.append(tool_error_result(block["id"], err))
            continue
        run.emit("tool_ran", turn=turn, id=block["id"], name=block["name"])
        crash_point(run, "after-tool-run")
        # The side effect has already happened: if the ledger write fails, do not lie with is_error (the model
        # would retry under a new tool_use_id and repeat the effect). Raise an alert for a human instead.
        try:
            record_effect(run, block["id"], block["name"], output)
        except (OSError, HarnessError) as err:
            run.emit("ledger_write_failed", id=block["id"], error=str(err).splitlines()[0])
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


@holds_workdir
def run_agent(
    run,
    client,
    task: str = texts.TASK,
    tools: list[dict] | None = None,
    *,
    resume: bool = False,
    run_tool_uses=run_tool_uses,
    reconcile=reconcile,
    save_checkpoint=save_checkpoint,
    load_checkpoint=load_checkpoint,
) -> str:
    """The tool-use loop with two checkpoints a turn; the keyword blocks can be swapped for a learner's own."""
    tools = tools or []
    path = run.checkpoint_path
    if resume:
        cp = load_checkpoint(path)
        task, turns, tokens_used, messages = cp["task"], cp["turns"], cp["tokensUsed"], cp["messages"]
        pending = cp["pendingToolUse"]
        run.emit("resume", turn=turns, pending=pending["name"] if pending else None)
        result = reconcile(run, cp)
        if result is not None:
            # Rebuild the assistant turn that point A saved as pendingToolUse, then answer it.
            messages.append({"role": "assistant", "content": [{"type": "tool_use", **pending}]})
            messages.append({"role": "user", "content": [result]})
            save_checkpoint(path, _scene(task, turns, tokens_used, messages, None), **writer_hooks(run))
            run.emit("save_b", turn=turns, resumed=True)
            crash_point(run, "after-save-b")
    else:
        for name in OUTPUT_FILES:  # a fresh start is never polluted by the previous run's half-finished scene
            run.path(name).unlink(missing_ok=True)
        ensure_notes(run.workdir)
        turns, tokens_used, messages = 0, 0, [{"role": "user", "content": task}]

    response = client.messages.create(tools=tools, messages=messages)
    tokens_used += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]

    while response["stop_reason"] == "tool_use":
        if turns >= MAX_TURNS:
            return _done(run, texts.MAX_TURNS_REACHED.format(max_turns=MAX_TURNS))
        turns += 1

        tool_uses = [b for b in response["content"] if b["type"] == "tool_use"]
        if len(tool_uses) != 1:
            raise HarnessError(texts.MULTIPLE_TOOL_USES.format(count=len(tool_uses)))
        block = tool_uses[0]
        # -- point A: right after the model's response, record this turn's pending tool call --
        pending = {"id": block["id"], "name": block["name"], "input": block["input"]}
        save_checkpoint(path, _scene(task, turns, tokens_used, messages, pending), **writer_hooks(run))
        run.emit("save_a", turn=turns, pending=block["name"])
        crash_point(run, "after-save-a")

        messages.append({"role": "assistant", "content": response["content"]})
        tool_results = run_tool_uses(run, response["content"], turns)
        messages.append({"role": "user", "content": tool_results})

        # -- point B: the tool_result is in messages (and the ledger on disk): nothing is pending --
        save_checkpoint(path, _scene(task, turns, tokens_used, messages, None), **writer_hooks(run))
        run.emit("save_b", turn=turns)
        crash_point(run, "after-save-b")

        response = client.messages.create(tools=tools, messages=messages)
        tokens_used += response["usage"]["input_tokens"] + response["usage"]["output_tokens"]

    text = "".join(b.get("text", "") for b in response["content"] if b["type"] == "text")
    if response["stop_reason"] not in (
        "end_turn",
        "stop_sequence",
    ):  # max_tokens, refusal, ...: report, never loop
        text = texts.STOPPED_EARLY.format(reason=response["stop_reason"], text=text or "（なし）")
    return _done(run, text)


def _scene(task, turns, tokens_used, messages, pending) -> dict:
    return {
        "version": VERSION,
        "task": task,
        "turns": turns,
        "tokensUsed": tokens_used,
        "messages": messages,
        "pendingToolUse": pending,
    }


def _done(run, text: str) -> str:
    run.emit("done", text=text)
    return text
