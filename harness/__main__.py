"""The command line, mirroring the lesson's `node agent.js`: python -m harness [--resume] [--workdir DIR] [--real].

main() is the lesson's main(): its one decision is --resume or a fresh start. cli() beside it turns every way a run
can end into an exit code and at most two Japanese lines (137 crashed, 130 Ctrl-C, 1 an error, 2 a bad argument),
never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from pathlib import Path

from . import settings, texts
from .beyond.cli import (
    ENGINE_SETTINGS,
    MODE_FLAGS,
    MODE_OPTIONS,
    MODE_VALUED,
    check_mode_settings,
    engine_interrupted,
    engine_resumable,
    mode_arguments_problem,
    refuse_another_mode_on_disk,
    run_mode,
    shared_database,
)
from .crash import CrashPlan, SimulatedCrash
from .errors import HarnessError
from .lock import hold_workdir
from .loop import run_agent
from .models import DEFAULT_DEADLINE_S, APIError, ScriptedModel, api_kind
from .run import Run, wall_clock_ms
from .tools import TOOL_SCHEMAS
from .transcript import print_transcript, terminal_safe, untrusted
from .vocab import CHECKPOINT_FILE, CRASH_LABELS, DEFAULT_WORKDIR, EXIT_CRASHED
from .workdir import outputs_gone

EXIT_INTERRUPTED = 130  # what a shell shows for Ctrl-C
EXIT_ERROR = 1
EXIT_USAGE = 2

USAGE = texts.USAGE.format(
    workdir=DEFAULT_WORKDIR, labels=", ".join(CRASH_LABELS), deadline=f"{DEFAULT_DEADLINE_S:g}"
)


class Options:
    """What the command line asked for."""

    def __init__(self, resume: bool = False, workdir: str = DEFAULT_WORKDIR, real: bool = False) -> None:
        self.resume, self.workdir, self.real = resume, workdir, real
        # beyond the lesson: --parallel, --idempotent, --engine dbos, --database-url (harness/beyond/cli.py)
        self.__dict__.update(MODE_OPTIONS)


# fmt: off
def main(options: Options, env=os.environ) -> str:
    """レッスンの main(): 決めることはちょうど1つ、--resume があるかどうか。"""
    run = Run(options.workdir, clock=clock_from_env(env), crash=crash_plan_from_env(env),
              listeners=listeners_from_env(env))
    client = make_client(options.real)  # スクリプト化されたモデル（既定）か、本物の Messages API
    with hold_workdir(run.workdir):  # 1つの作業フォルダに書くのは1プロセスだけ
        return run_agent(run, client, texts.TASK, TOOL_SCHEMAS, resume=options.resume)
# fmt: on


def run_from_env(options: Options, env) -> Run:
    """The run main() builds, for the modes beyond the lesson."""
    return Run(options.workdir, clock=clock_from_env(env), crash=crash_plan_from_env(env),
               listeners=listeners_from_env(env))  # fmt: skip


# The switches and the options that take a value, each with the Options attribute it sets.
FLAGS = {"--resume": "resume", "--real": "real", **MODE_FLAGS}
VALUED = {"--workdir": "workdir", **MODE_VALUED}


def parse_args(argv: list[str]) -> Options:
    """Options from the arguments; argparse is not used because it alone costs ~8 ms of start-up (and its messages
    are not the lesson's)."""
    options, rest = Options(), list(argv)
    while rest:
        arg = rest.pop(0)
        if arg in FLAGS:
            setattr(options, FLAGS[arg], True)
        elif arg in VALUED and rest and not rest[0].startswith("--") and rest[0] != "-h":
            setattr(options, VALUED[arg], rest.pop(0))
        elif arg in VALUED:  # at the end, or before another option (which is not a value)
            _usage_error(texts.OPTION_WITHOUT_VALUE.format(option=arg, usage=USAGE.splitlines()[0]))
        elif arg.startswith("--workdir="):
            options.workdir = arg.split("=", 1)[1]
        elif arg in ("-h", "--help"):
            _say(USAGE)
            raise SystemExit(0)
        else:
            _usage_error(texts.BAD_ARGUMENT.format(arg=untrusted(arg), usage=USAGE.splitlines()[0]))
    if not options.workdir.strip():
        _usage_error(texts.EMPTY_WORKDIR)
    if re.search("[\x00-\x1f\x7f-\x9f\u2028\u2029]", options.workdir):  # a newline splits each line naming it
        _usage_error(texts.UNPRINTABLE_WORKDIR.format(shown=untrusted(options.workdir)))
    longest = max((len(os.fsencode(name)) for name in Path(options.workdir).parts), default=0)
    if longest > 255 or len(os.fsencode(options.workdir)) >= 4096:  # what the system refuses as too long
        _usage_error(texts.WORKDIR_TOO_LONG.format(shown=untrusted(options.workdir, limit=80)))
    if problem := mode_arguments_problem(options):
        _usage_error(problem)
    return options


def _usage_error(message: str) -> None:
    _say(message, sys.stderr)
    raise SystemExit(EXIT_USAGE)


def clock_from_env(env):
    """HARNESS_FIXED_TIME_MS fixes the ledger's `at` (byte-identical runs for notebooks and tests)."""
    fixed = settings.whole_number(env, "HARNESS_FIXED_TIME_MS", 15, texts.BAD_FIXED_TIME)
    return wall_clock_ms if fixed is None else lambda: fixed


def crash_plan_from_env(env) -> CrashPlan | None:
    return CrashPlan.from_env(env.get("CRASH_AFTER"), env.get("CRASH_MODE"))


def listeners_from_env(env) -> list:
    """The transcript, and what the Crash Lab asks for: an events file, slow motion (harness/lab/hooks.py)."""
    slow = settings.whole_number(env, "HARNESS_SLOW_MS", 6, texts.BAD_SLOW_MS)
    if not (slow or env.get("HARNESS_EVENTS_FILE")):
        return [print_transcript]
    from .lab.hooks import crash_lab_listeners

    return [print_transcript, *crash_lab_listeners(env, slow)]


def make_client(real: bool, env=os.environ, parallel: bool = False):
    if not real:
        return ScriptedModel()
    deadline = api_deadline_from_env(env)
    from .models import AnthropicClient  # imports anthropic: only on --real

    return AnthropicClient(
        model=settings.model_id(env), deadline_s=deadline, on_wait=say_waiting, parallel=parallel
    )


def api_deadline_from_env(env) -> float:
    """HARNESS_API_DEADLINE_S: how long one model call (retries included) may take before it is given up."""
    seconds = settings.seconds(env, "HARNESS_API_DEADLINE_S", texts.BAD_API_DEADLINE)
    return DEFAULT_DEADLINE_S if seconds is None else seconds


def say_waiting(elapsed_s: float, deadline_s: float) -> None:
    """The line a person sees on stderr while the model call is still running."""
    _say(texts.API_WAITING.format(elapsed=f"{round(elapsed_s, 1):g}", deadline=f"{deadline_s:g}"), sys.stderr)


def _resumable(options) -> bool:
    """Whether --resume has something to continue after a run stopped: a checkpoint on disk, or the engine's workflow
    (the engine keeps its state in its database). Without one, the advice is to start again without --resume."""
    if options.engine is not None:
        return engine_resumable(options)
    return os.path.lexists(Path(options.workdir, CHECKPOINT_FILE))


def _interrupted(options) -> str:
    """The line after a Ctrl-C that cli() handles: resume, or start again (the engine's words for its workflow)."""
    if options.engine is not None:
        return engine_interrupted(options, _resumable(options))
    return texts.INTERRUPTED if _resumable(options) else texts.INTERRUPTED_BEFORE_SAVE


def cli(argv: list[str] | None = None, env=os.environ) -> int:
    """The command: read the arguments, then run_command()."""
    _tolerate_any_terminal()
    return run_command(parse_args(sys.argv[1:] if argv is None else argv), env)


def run_command(options: Options, env=os.environ) -> int:
    """Run main() and turn how it ended into an exit code and at most two Japanese lines on stderr."""
    if options.real and not env.get("ANTHROPIC_API_KEY"):
        _say(texts.NO_API_KEY, sys.stderr)
        return EXIT_ERROR
    try:
        # every setting as documented, or refused by name (harness/settings.py); the engine's too (beyond/cli.py)
        settings.check(env, ENGINE_SETTINGS)
        check_mode_settings(options, env)  # the engine's (harness/beyond/cli.py)
        if env.get("HARNESS_EVENTS_FILE"):  # the Crash Lab's: never a file of the task (harness/lab/hooks.py)
            from .lab.hooks import events_file

            events_file(env, options.workdir)
        workdir = Path(options.workdir)
        if os.path.lexists(workdir) and not workdir.is_dir():
            raise HarnessError(texts.WORKDIR_NOT_FOLDER.format(path=workdir))
        if options.resume and not workdir.is_dir() and not shared_database(options, env):
            raise HarnessError(texts.NO_WORKDIR_TO_RESUME.format(path=workdir.absolute()))
        workdir.mkdir(parents=True, exist_ok=True)
        refuse_another_mode_on_disk(options)  # a --resume continues the task in the mode it was started in
        if not run_mode(options, env, run_from_env, make_client):  # beyond the lesson (harness/beyond/cli.py)
            main(options, env)
        if gone := outputs_gone(workdir):  # a finished task resumed after its output was removed: say so
            _say(texts.OUTPUTS_GONE.format(files=untrusted(", ".join(gone))), sys.stderr)
        if env.get("CRASH_AFTER"):  # the task ended before the crash asked for: a class expecting one is told
            _say(texts.CRASH_NOT_REACHED.format(plan=env["CRASH_AFTER"]), sys.stderr)
    except SimulatedCrash:
        return EXIT_CRASHED  # the [kill] line was printed by the crash event
    except KeyboardInterrupt:
        _say(_interrupted(options), sys.stderr)
        return EXIT_INTERRUPTED
    except HarnessError as err:
        _say(texts.ERROR_LINE.format(message=err), sys.stderr)
        return EXIT_ERROR
    except APIError as err:
        kind = api_kind(err.status)
        hint = texts.API_RESUME_HINT if _resumable(options) else texts.API_RESTART_HINT
        message = texts.API_FAILED.format(kind=kind, status=err.status, message=untrusted(err.message))
        _say(texts.ERROR_LINE.format(message=f"{message}\n{hint}"), sys.stderr)
        return EXIT_ERROR
    except OSError as err:  # a full disk, a read-only folder: ordinary trouble, not a bug
        if settings.debug_on(env):
            raise
        detail = untrusted(err.strerror or err)
        hint = texts.DISK_RESUME_HINT if _resumable(options) else texts.DISK_RESTART_HINT
        message = texts.DISK_PROBLEM.format(detail=detail, path=options.workdir, hint=hint)
        _say(texts.ERROR_LINE.format(message=message), sys.stderr)
        return EXIT_ERROR
    except Exception as err:  # a bug: still no traceback unless asked for
        if settings.debug_on(env):
            raise
        message = texts.UNEXPECTED.format(kind=type(err).__name__, error=untrusted(err))
        _say(texts.ERROR_LINE.format(message=message), sys.stderr)
        return EXIT_ERROR
    return 0


def _tolerate_any_terminal() -> None:
    """A terminal that cannot show Japanese gets escapes instead of a crash; and no "Exception ignored" noise from an
    object Ctrl-C left half-built (the SDK's HTTP client) at exit (HARNESS_DEBUG=1 keeps Python's report)."""
    if not settings.debug_on(os.environ):
        sys.unraisablehook = lambda unraisable: None
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):  # None when started with it closed (`>&-`)
            pass


def _say(line: str, stream=None) -> None:
    """Print a message (control characters escaped); a closed or full output is not a reason to fail."""
    stream = stream or sys.stdout
    if stream is None:  # started with that stream closed (`>&-`)
        return
    try:
        print(terminal_safe(line), file=stream, flush=True)
    except (OSError, ValueError):
        pass


def _exit(code: int) -> None:
    """Exit without Python's complaint about a closed stdout (`| head -1`)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(code)


def _interrupt_once(signum, frame) -> None:
    """Ctrl-C stops the run once: the first one raises KeyboardInterrupt, any later one (while the first is being
    handled, or while the process exits) is ignored, so it can never end the process with -2 and a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _run() -> int:
    """The command (its arguments, then run_command()) with Ctrl-C taken once (not when started with it ignored):
    one outside run_command()'s handling still exits 130, quietly. Before this, harness/__init__.py takes it."""
    with contextlib.suppress(ValueError):
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _interrupt_once)
    _tolerate_any_terminal()
    options = None  # until the arguments are read, nothing has been read or written
    try:
        options = parse_args(sys.argv[1:])
        return run_command(options)
    except KeyboardInterrupt:  # outside run_command()'s own handling: before it began, or while it reported
        _say(texts.INTERRUPTED_AT_START if options is None else _interrupted(options), sys.stderr)
        return EXIT_INTERRUPTED
    finally:  # the run has ended: a Ctrl-C now, while the process exits, changes nothing
        with contextlib.suppress(ValueError):
            signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    _exit(_run())
