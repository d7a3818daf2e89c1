"""The lesson's crash-safe agent harness: checkpoints at points A and B, a side-effect ledger, reconcile on --resume.

Importing it loads neither anthropic, ipywidgets nor matplotlib.
"""

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
