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


USAGE = f"""使い方: python -m harness [--resume] [--workdir DIR]
  --resume        checkpoint.json から再開する（reconcile してから続ける）
  --workdir DIR   作業フォルダ（既定: {DEFAULT_WORKDIR}）
環境変数: CRASH_AFTER=LABEL:N（LABEL は after-save-a, after-tool-run, after-effect-write, after-save-b）
          CRASH_MODE=sigkill（疑似キルではなく本物の SIGKILL で落ちる）
          HARNESS_SLOW_MS=N（1ステップごとに N ミリ秒止まる。授業で落とす瞬間を見せるため）
          HARNESS_EVENTS_FILE=PATH（イベントを1行1 JSON で追記する。Crash Lab が使う）"""


def parse_args(argv: list[str]) -> tuple[bool, str]:
    """(resume, workdir) from the two options; argparse is not used because it alone costs ~8 ms of start-up."""
    resume, workdir, rest = False, DEFAULT_WORKDIR, list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--resume":
            resume = True
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
    return resume, workdir


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
    resume, workdir_arg = parse_args(sys.argv[1:] if argv is None else argv)

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
        run_agent(run, ScriptedModel(), texts.TASK, TOOL_SCHEMAS, resume=resume)
    except SimulatedCrash:
        return EXIT_CRASHED  # the [kill] line was printed by the crash event
    except HarnessError as err:
        print(f"エラー: {err}", file=sys.stderr)
        return EXIT_ERROR
    except APIError as err:
        print(
            f"エラー: モデルの API がリクエストを拒否しました: {err}\nチェックポイントはそのまま残っています。"
            "原因を確かめてから --resume してください。",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except Exception as err:  # a bug: still no traceback unless asked for
        if os.environ.get("HARNESS_DEBUG"):
            raise
        print(f"エラー: {texts.UNEXPECTED.format(kind=type(err).__name__, error=err)}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
