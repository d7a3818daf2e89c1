"""The command line, mirroring the lesson's `node agent.js`: python -m harness [--resume] [--workdir DIR]."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import texts
from .crash import CrashPlan, SimulatedCrash
from .errors import HarnessError
from .loop import run_agent
from .models import APIError, ScriptedModel
from .run import Event, Run, wall_clock_ms
from .tools import TOOL_SCHEMAS

DEFAULT_WORKDIR = "harness-work"
EXIT_CRASHED = 137  # what a shell shows for a process killed by SIGKILL
EXIT_ERROR = 1
EXIT_USAGE = 2


def print_transcript(event: Event) -> None:
    """The command line's listener: the lesson's log lines on stdout, alerts on stderr."""
    line = texts.format_event(event.kind, event.data)
    if line is not None:
        print(line, file=sys.stderr if event.kind == "ledger_write_failed" else sys.stdout, flush=True)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's English error, in the learner's language
        self.exit(EXIT_USAGE, f"引数を読めません（{message}）。\n使い方: python -m harness [--resume] [--workdir DIR]\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m harness", description="レッスン6のチェックポイントと再開を配線したハーネス")
    parser.add_argument("--resume", action="store_true", help="checkpoint.json から再開する")
    parser.add_argument("--workdir", default=DEFAULT_WORKDIR, help=f"作業フォルダ（既定: {DEFAULT_WORKDIR}）")
    args = parser.parse_args(argv)

    fixed = os.environ.get("HARNESS_FIXED_TIME_MS")  # deterministic ledger timestamps for notebooks and tests
    try:
        clock = (lambda: int(fixed)) if fixed and fixed.isdigit() else wall_clock_ms
        plan = CrashPlan.from_env(os.environ.get("CRASH_AFTER"), os.environ.get("CRASH_MODE"))
        workdir = Path(args.workdir)
        if workdir.exists() and not workdir.is_dir():
            raise HarnessError(f"作業フォルダ {workdir} はフォルダではありません。\n別の --workdir を指定してください。")
        if args.resume and not workdir.is_dir():
            raise HarnessError(f"作業フォルダ {workdir} がありません。--resume する対象がありません。\n"
                               "--resume なしで最初から実行してください。")
        workdir.mkdir(parents=True, exist_ok=True)
        run = Run(workdir, clock=clock, crash=plan, listeners=[print_transcript])
        run_agent(run, ScriptedModel(), texts.TASK, TOOL_SCHEMAS, resume=args.resume)
    except SimulatedCrash:
        return EXIT_CRASHED  # the [kill] line was printed by the crash event
    except HarnessError as err:
        print(f"エラー: {err}", file=sys.stderr)
        return EXIT_ERROR
    except APIError as err:
        print(f"エラー: モデルの API がリクエストを拒否しました: {err}\nチェックポイントはそのまま残っています。"
              "原因を確かめてから --resume してください。", file=sys.stderr)
        return EXIT_ERROR
    except Exception as err:  # a bug: still no traceback unless asked for
        if os.environ.get("HARNESS_DEBUG"):
            raise
        print(f"エラー: {texts.UNEXPECTED.format(kind=type(err).__name__, error=err)}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
