"""The lesson's crash-safe agent harness: checkpoints at points A and B, a side-effect ledger, reconcile on --resume.

Importing it loads neither anthropic, ipywidgets nor matplotlib.
"""

import os
import signal
import sys


def _interrupted_at_start(signum, frame) -> None:
    """Ctrl-C while `python -m harness` is still starting (importing): nothing has been read or written yet, so it
    ends here, quietly, with a shell's Ctrl-C code; __main__._run takes Ctrl-C over once the command line starts."""
    from .texts import INTERRUPTED_AT_START  # loaded by now: a Ctrl-C waits until it is (below)

    try:
        os.write(2, (INTERRUPTED_AT_START + "\n").encode("utf-8"))
    except OSError:  # stderr closed: nothing to tell
        pass
    os._exit(130)


def _starting_as_the_command() -> bool:
    """Whether this is `python -m harness` being located: never a notebook, a test, or `python -m harness.exercises...`."""
    argv = getattr(sys, "orig_argv", [])
    return sys.argv[:1] == ["-m"] and "-m" in argv and argv[argv.index("-m") + 1 :][:1] == ["harness"]


# The first thing the command runs of the package; not over a Ctrl-C the command was started with ignored. One that
# comes while the message catalogue loads is held back until it has loaded, then handled.
_AS_THE_COMMAND = _starting_as_the_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler
if _AS_THE_COMMAND:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, _interrupted_at_start)
from . import texts  # noqa: F401 (loaded while a Ctrl-C is held back)

if _AS_THE_COMMAND:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

from .checkpoint import load_checkpoint, save_checkpoint, write_json_atomic
from .crash import CrashPlan, SimulatedCrash, crash_on
from .errors import HarnessError
from .ledger import load_effects, save_effect
from .loop import MAX_TURNS, run_agent, run_tool_uses
from .models import APIError, ScriptedModel
from .reconcile import reconcile
from .run import Event, Run
from .tools import READ_ONLY, TOOL_IMPLS, TOOL_SCHEMAS, ToolError, execute_tool
from .vocab import CRASH_LABELS, FIXED_TIME_MS

__all__ = [
    "CRASH_LABELS",
    "FIXED_TIME_MS",
    "MAX_TURNS",
    "READ_ONLY",
    "TOOL_IMPLS",
    "TOOL_SCHEMAS",
    "APIError",
    "CrashPlan",
    "Event",
    "HarnessError",
    "Run",
    "ScriptedModel",
    "SimulatedCrash",
    "ToolError",
    "crash_on",
    "execute_tool",
    "load_checkpoint",
    "load_effects",
    "reconcile",
    "run_agent",
    "run_tool_uses",
    "save_checkpoint",
    "save_effect",
    "write_json_atomic",
]
