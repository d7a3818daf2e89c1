"""Beyond the lesson, the command line's other modes: --parallel and --idempotent (harness/beyond/scenarios.py), --engine dbos
(harness/beyond/engine_dbos.py), and what any --resume must know of them. __main__.cli() calls these; the lesson's own
main() stays in __main__.py.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from .. import texts
from ..errors import HarnessError
from ..lock import hold_workdir
from ..settings import switch
from ..transcript import harness_command, untrusted
from ..vocab import CHECKPOINT_FILE, DB_FILE, EFFECTS_FILE
from .modes import folder_workflows, refuse_another_mode

# The modes' arguments, each with the Options attribute it sets, and its value when not given.
MODE_FLAGS = {"--parallel": "parallel", "--idempotent": "idempotent"}
MODE_VALUED = {"--engine": "engine", "--database-url": "database_url"}
MODE_OPTIONS = {"parallel": False, "idempotent": False, "engine": None, "database_url": None}
# Settings only the engine reads (harness/beyond/engine_dbos.py); without --engine dbos they are refused, never ignored.
ENGINE_SETTINGS = (
    "HARNESS_DATABASE_URL",
    "HARNESS_TASK_ID",
    "HARNESS_EXECUTOR_ID",
    "HARNESS_IDEMPOTENT_TOOLS",
    "HARNESS_DATABASE_DEADLINE_S",
)


def mode_arguments_problem(options) -> str | None:
    """What is wrong with the modes' arguments (a usage error), or None."""
    engine = options.engine
    if engine not in (None, "dbos"):
        return texts.DBOS_BAD_ENGINE.format(value=untrusted(engine) or '""')  # an empty one shown as ""
    if options.database_url is not None and engine is None:
        return texts.DBOS_OPTION_NEEDS_ENGINE.format(option="--database-url")
    if options.database_url == "":
        return texts.DBOS_EMPTY_URL
    if engine and (options.parallel or options.idempotent):
        return texts.ENGINE_WITH_SCENARIO
    return None


def run_mode(options, env, run_from_env, make_client) -> bool:
    """Run the mode the options name and say True; False when they name none (the lesson's main() runs)."""
    if options.engine == "dbos":  # notebook 13
        main_dbos(options, run_from_env(options, env), make_client(options.real), env)
    elif options.parallel or options.idempotent:  # notebooks 11, 12
        # the scenario's scripted model, or the real API (several tool_use blocks a turn with --parallel)
        real = make_client(True, env, parallel=options.parallel) if options.real else None
        main_beyond(options, run_from_env(options, env), real)
    else:
        return False
    return True


def check_mode_settings(options, env) -> None:
    """The engine's settings, read before anything is written: one not as documented, or set without --engine dbos
    (HARNESS_IDEMPOTENT_TOOLS may be off), is refused by name and leaves no folder behind."""
    idempotent = switch(env, "HARNESS_IDEMPOTENT_TOOLS")  # `yes` is refused with or without the engine
    on = [
        name
        for name in ENGINE_SETTINGS
        if env.get(name) and (name != "HARNESS_IDEMPOTENT_TOOLS" or idempotent)
    ]
    if on and options.engine is None:
        raise HarnessError(texts.ENGINE_SETTING_WITHOUT_ENGINE.format(name=on[0]))
    if options.engine == "dbos":
        from .engine_dbos import check_settings  # imports dbos: only with --engine dbos

        check_settings(options, env)


def main_dbos(options, run, client, env) -> str:
    """--engine dbos: the same task as a DBOS workflow (harness/beyond/engine_dbos.py, notebook 13)."""
    from .engine_dbos import main as dbos_main  # imports dbos and SQLAlchemy: only with --engine dbos

    return dbos_main(options, run, client, env)


def main_beyond(options, run, client=None) -> str:
    """--parallel, --idempotent: the same run as main(), the scenario of harness/beyond/scenarios.py (client None: its
    scripted model)."""
    from .scenarios import run_scenario, scenario_of

    with hold_workdir(run.workdir):
        scenario = scenario_of(options.parallel, options.idempotent)
        return run_scenario(run, scenario, resume=options.resume, client=client)


def refuse_another_mode_on_disk(options) -> None:
    """A --resume continues the task on disk in the mode it was started in (harness/beyond/modes.py), read while no other
    run changes it (a folder in use is refused as such); the lesson's --resume also names an engine's task."""
    if options.engine is None:
        refuse_engine_left_here(options)
    if options.resume:
        with hold_workdir(options.workdir):
            if options.engine and engine_workflows_here(Path(options.workdir)):
                return  # what the lesson's --resume names here too, whatever a mode.json beside it says
            refuse_another_mode(
                Path(options.workdir), options.parallel, options.idempotent, bool(options.engine)
            )


def engine_workflows_here(folder: Path) -> list[str]:
    """The workflows of the folder's task when it is an engine's: no file of the lesson's state, a dbos.sqlite holding
    a workflow ([] otherwise)."""
    if any(os.path.lexists(folder / name) for name in (CHECKPOINT_FILE, EFFECTS_FILE)):
        return []
    return folder_workflows(folder)


def shared_database(options, env) -> bool:
    """--engine dbos with a database given by URL: a worker taking over a task may resume in a new folder."""
    return options.engine == "dbos" and bool(options.database_url or env.get("HARNESS_DATABASE_URL"))


def engine_resumable(options, env=os.environ) -> bool:
    """Whether an --engine dbos run stopped early has a workflow to continue: a --resume, a shared database, or the
    folder's own dbos.sqlite (a Ctrl-C while DBOS was still being imported has started nothing)."""
    return options.resume or shared_database(options, env) or os.path.lexists(Path(options.workdir) / DB_FILE)


def engine_interrupted(options, resumable: bool) -> str:
    if resumable:
        return texts.DBOS_INTERRUPTED
    command = harness_command(("--engine", "dbos"), options.workdir, resume=False)
    return texts.DBOS_INTERRUPTED_BEFORE_START.format(command=command)


def refuse_engine_left_here(options) -> None:
    """--resume without --engine in a folder whose task is an --engine dbos workflow (engine_workflows_here): name the
    command that continues it, rather than the lesson's "no checkpoint"."""
    folder = Path(options.workdir)
    ids = engine_workflows_here(folder) if options.resume else []
    if not ids:
        return
    prefix = f"HARNESS_TASK_ID={shlex.quote(ids[0])} " if len(ids) == 1 and ids[0] != "sales-report" else ""
    command = f"{prefix}python -m harness --engine dbos --resume --workdir {shlex.quote(str(folder))}"
    path = folder / CHECKPOINT_FILE
    raise HarnessError(texts.LESSON_ENGINE_ON_DISK.format(path=path, command=untrusted(command, limit=2000)))
