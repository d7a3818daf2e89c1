"""The command line, mirroring the lesson's `node agent.js`: python -m harness [--resume] [--workdir DIR]."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from . import texts
from .crash import CrashPlan, SimulatedCrash
from .errors import HarnessError
from .loop import run_agent
from .models import APIError, ScriptedModel
from .run import Run, wall_clock_ms
from .tools import TOOL_SCHEMAS

DEFAULT_WORKDIR = "harness-work"
EXIT_CRASHED = 137  # what a shell shows for a process killed by SIGKILL
EXIT_ERROR = 1
EXIT_USAGE = 2


USAGE = f"""使い方: python -m harness [--resume] [--workdir DIR] [--real]
  --resume        checkpoint.json から再開する（reconcile してから続ける）
  --real          本物の Messages API を使う（ANTHROPIC_API_KEY が必要。モデルは ANTHROPIC_MODEL で変えられる）
  --workdir DIR   作業フォルダ（既定: {DEFAULT_WORKDIR}）
環境変数: CRASH_AFTER=LABEL:N（LABEL は after-save-a, after-tool-run, after-effect-write, after-save-b）
          CRASH_MODE=sigkill（疑似キルではなく本物の SIGKILL で落ちる）
          HARNESS_SLOW_MS=N（1ステップごとに N ミリ秒止まる。授業で落とす瞬間を見せるため）
          HARNESS_EVENTS_FILE=PATH（イベントを1行1 JSON で追記する。Crash Lab が使う）"""


def parse_args(argv: list[str]) -> tuple[bool, str, bool]:
    """(resume, workdir, real) from the options; argparse is not used because it alone costs ~8 ms of start-up."""
    resume, workdir, real, rest = False, DEFAULT_WORKDIR, False, list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--resume":
            resume = True
        elif arg == "--real":
            real = True
        elif arg == "--workdir" and rest:
            workdir = rest.pop(0)
        elif arg.startswith("--workdir="):
            workdir = arg.split("=", 1)[1]
        elif arg in ("-h", "--help"):
            print(USAGE)
            raise SystemExit(0)
        else:
            print(f"引数 {arg} を読めません。\n{USAGE.splitlines()[0]}", file=sys.stderr)
            raise SystemExit(EXIT_USAGE)
    return resume, workdir, real


STEP_EVENTS = ("save_a", "tool_ran", "effect_written", "save_b", "resume", "reconcile")


def event_log(path: str):
    """A listener appending each event as one JSON line (HARNESS_EVENTS_FILE): how the Crash Lab watches a process."""

    def write(event) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"kind": event.kind, **event.data}, ensure_ascii=False) + "\n")

    return write


def slow_motion(ms: int):
    """A listener pausing after each step (HARNESS_SLOW_MS), so a class can watch a real process and kill it."""

    def pause(event) -> None:
        if event.kind in STEP_EVENTS:
            time.sleep(ms / 1000)

    return pause


def listeners_from_env(env) -> list:
    listeners = [texts.print_transcript]
    if env.get("HARNESS_EVENTS_FILE"):
        listeners.append(event_log(env["HARNESS_EVENTS_FILE"]))
    slow = env.get("HARNESS_SLOW_MS")
    if slow:
        if not slow.isdigit():
            raise HarnessError(
                f"HARNESS_SLOW_MS={slow} は読めません。\n1ステップごとに止まるミリ秒を整数で指定してください。"
            )
        listeners.append(slow_motion(int(slow)))
    return listeners


def main(argv: list[str] | None = None) -> int:
    resume, workdir_arg, real = parse_args(sys.argv[1:] if argv is None else argv)
    if real and not os.environ.get("ANTHROPIC_API_KEY"):
        print(texts.NO_API_KEY, file=sys.stderr)
        return EXIT_ERROR

    fixed = os.environ.get("HARNESS_FIXED_TIME_MS")  # deterministic ledger timestamps for notebooks and tests
    try:
        clock = (lambda: int(fixed)) if fixed and fixed.isdigit() else wall_clock_ms
        plan = CrashPlan.from_env(os.environ.get("CRASH_AFTER"), os.environ.get("CRASH_MODE"))
        workdir = Path(workdir_arg)
        if workdir.exists() and not workdir.is_dir():
            raise HarnessError(
                f"作業フォルダ {workdir} はフォルダではありません。\n別の --workdir を指定してください。"
            )
        if resume and not workdir.is_dir():
            raise HarnessError(
                f"作業フォルダ {workdir} がありません。--resume する対象がありません。\n"
                "--resume なしで最初から実行してください。"
            )
        workdir.mkdir(parents=True, exist_ok=True)
        run = Run(workdir, clock=clock, crash=plan, listeners=listeners_from_env(os.environ))
        run_agent(run, _client(real), texts.TASK, TOOL_SCHEMAS, resume=resume)
    except SimulatedCrash:
        return EXIT_CRASHED  # the [kill] line was printed by the crash event
    except HarnessError as err:
        print(f"エラー: {err}", file=sys.stderr)
        return EXIT_ERROR
    except APIError as err:
        kind = texts.API_KINDS.get(err.status, "HTTP エラー")
        hint = (
            texts.API_RESUME_HINT if Path(workdir_arg, "checkpoint.json").exists() else texts.API_RESTART_HINT
        )
        print(
            f"エラー: {texts.API_FAILED.format(kind=kind, status=err.status, message=err.message)}\n{hint}",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except Exception as err:  # a bug: still no traceback unless asked for
        if os.environ.get("HARNESS_DEBUG"):
            raise
        print(f"エラー: {texts.UNEXPECTED.format(kind=type(err).__name__, error=err)}", file=sys.stderr)
        return EXIT_ERROR
    return 0


def _client(real: bool):
    if not real:
        return ScriptedModel()
    from .models import AnthropicClient  # imports anthropic: only on --real

    return AnthropicClient()


if __name__ == "__main__":
    sys.exit(main())
