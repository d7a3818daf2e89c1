"""Beyond the lesson: the four scenarios (the lesson's, --parallel, --idempotent, both) and one way to run any of them
in a folder, shared by the command line, the notebooks, the tests and the Crash Lab.

  lesson               the lesson's loop (checkpoint version 1), model R1..R4, its three tools and blocks
  parallel             run_agent_v2 (version 2, a pending set), model P1..P3, the lesson's tools and blocks
  idempotent           the lesson's loop, model R1..R4, write_report asked by key, run_tool_uses_keyed and
                       reconcile_idempotent swapped in
  parallel+idempotent  both
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from .. import texts
from ..checkpoint import load_checkpoint
from ..loop import run_agent
from ..models import ScriptedModel
from ..run import Event, Run
from ..tools import TOOL_SCHEMAS
from ..vocab import (
    ALL_LABELS,
    FIXED_TIME_MS,
    LABEL_AFTER_EVENT,
    SCENARIOS,
)
from .idempotent import IDEMPOTENT_TOOL_IMPLS, reconcile_idempotent, run_tool_uses_keyed
from .modes import continue_in_mode
from .parallel import ParallelScriptedModel, load_checkpoint_v2, run_agent_v2


def scenario_of(parallel: bool, idempotent: bool) -> str:
    """The scenario the command-line flags select."""
    return {(False, False): "lesson", (True, False): "parallel", (False, True): "idempotent"}.get(
        (parallel, idempotent), "parallel+idempotent"
    )


def cli_args(scenario: str) -> list[str]:
    """The `python -m harness` flags of a scenario (for WatchedProcess / run_harness)."""
    return list(SCENARIOS[scenario])


def run_scenario(run: Run, scenario: str = "parallel", *, resume: bool = False, client=None) -> str:
    """Run (or --resume) a scenario's task with `run`: its final text, or SimulatedCrash where run.crash says.

    For an idempotent scenario, run.tool_impls["write_report"] becomes the idempotent write_report.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; one of {', '.join(SCENARIOS)}")
    loader = load_checkpoint_v2 if "parallel" in scenario else load_checkpoint
    # mode.json: a resume never drops a mode the task was started in, and records one it adds once the loader agreed
    blocks = {"load_checkpoint": continue_in_mode(run, scenario, resume, loader)}
    if "idempotent" in scenario:
        run.tool_impls["write_report"] = IDEMPOTENT_TOOL_IMPLS["write_report"]
        blocks.update(run_tool_uses=run_tool_uses_keyed, reconcile=reconcile_idempotent)
    if "parallel" in scenario:
        client = client or ParallelScriptedModel()
        return run_agent_v2(run, client, texts.PARALLEL_TASK, TOOL_SCHEMAS, resume=resume, **blocks)
    return run_agent(run, client or ScriptedModel(), texts.TASK, TOOL_SCHEMAS, resume=resume, **blocks)


def run_in_folder(
    workdir: str | Path,
    scenario: str = "parallel",
    *,
    resume: bool = False,
    crash=None,
    listeners=(),
    clock=None,
    client=None,
) -> str:
    """The Crash Lab's entry point: run a scenario in `workdir` with a CrashPlan (or None) and event listeners, on the
    fixed clock unless another is given. Raises SimulatedCrash at the planned moment, as run_agent does."""
    run = Run(
        workdir,
        clock=clock or (lambda: FIXED_TIME_MS),
        crash=crash,
        listeners=list(listeners),
    )
    return run_scenario(run, scenario, resume=resume, client=client)


def clean_events(scenario: str) -> list[Event]:
    """Every event of a clean run of the scenario (in a temporary folder)."""
    events: list[Event] = []
    with tempfile.TemporaryDirectory() as tmp:
        run_in_folder(Path(tmp) / "work", scenario, listeners=[events.append])
    return events


def crash_moments(scenario: str) -> dict[str, list[str]]:
    """For each crash label, what its 1st, 2nd, ... occurrence is in a clean run of the scenario (CRASH_AFTER=LABEL:N
    hits the N-th), in the words of the lesson: the Crash Lab's list of moments, and the sweep's cases."""
    moments: dict[str, list[str]] = {}
    turn = 0
    for event in clean_events(scenario):
        d = event.data
        if event.kind == "save_a":
            turn = d["turn"]
        if event.kind in LABEL_AFTER_EVENT:
            text = {
                "save_a": texts.MOMENT_SAVE_A,
                "tool_ran": texts.MOMENT_TOOL_RAN,
                "effect_written": texts.MOMENT_EFFECT_WRITTEN,
                "save_b": texts.MOMENT_SAVE_B,
            }[event.kind]
            moments.setdefault(LABEL_AFTER_EVENT[event.kind], []).append(text.format(**{**d, "turn": turn}))
        if event.kind in ("save_a", "save_b"):
            point = "A" if event.kind == "save_a" else "B"
            for label in ("checkpoint-torn-write", "checkpoint-before-rename"):
                moments.setdefault(label, []).append(
                    texts.MOMENT_CHECKPOINT_WRITE.format(turn=turn, point=point)
                )
        if event.kind == "effect_written":
            for label in ("effects-torn-write", "effects-before-rename"):
                moments.setdefault(label, []).append(texts.MOMENT_EFFECTS_WRITE.format(**{**d, "turn": turn}))
    return moments


def choose_moment(scenario: str, text: str) -> tuple[str, int, str] | None:
    """A try-it cell's "LABEL:N" read against the scenario's crash moments: (label, n, what that moment is), or None
    after printing which LABEL:N the scenario has (a notebook shows a message, never a traceback)."""
    moments = crash_moments(scenario)
    label, _, n = str(text).strip().partition(":")
    # digits only ("3", or full-width "３"): "①" and "²" are digits to str.isdigit() but no number to int()
    if label in moments and re.fullmatch(r"[0-9０-９]+", n.strip()) and 1 <= int(n) <= len(moments[label]):
        return label, int(n), moments[label][int(n) - 1]
    print(texts.UNKNOWN_MOMENT.format(text=text))
    # the turn's four moments first, then the writers'
    for name in sorted(moments, key=list(ALL_LABELS).index):
        occurrences = moments[name]
        line = texts.MOMENT_ONLY_ONE if len(occurrences) == 1 else texts.MOMENT_RANGE
        print(line.format(label=name, count=len(occurrences)))
    return None
