"""Beyond the lesson: the same task as a DBOS durable workflow (`python -m harness --engine dbos`).

The lesson's harness records a turn in files it writes itself (checkpoint.json at points A and B, effects.json after
each tool). Here a real durable-execution engine records it: the task is one DBOS workflow whose id is the task's id,
and each model call and each tool call is a DBOS step whose output the engine writes to its system database
(SQLite in the work folder by default, Postgres when a database URL is given) before the workflow goes on. A relaunch
with --resume recovers the workflow through DBOS itself: recorded steps are replayed from the database, the first
step without a record runs (again, if it had started before the kill).

The crash labels keep their meaning as closely as the engine allows:

| label                | lesson harness                  | here                                                        |
|----------------------|---------------------------------|-------------------------------------------------------------|
| after-save-a ①       | point A saved, tool not started | the model step that named the tool is recorded              |
| after-tool-run ②     | tool returned, ledger not written | inside the tool step, after the effect, before its record |
| after-effect-write   | ledger written, point B not yet | the tool step is recorded (one write: ledger and point B)   |
| after-save-b ③       | point B saved                   | the tool step is recorded (the same moment)                 |

A crash here always ends the process at once, without any clean-up DBOS could notice: the lesson's simulated crash
exits with 137 on the spot (os._exit), CRASH_MODE=sigkill sends itself SIGKILL. The writer-internal labels do not
apply (the engine writes through database transactions, not temp files) and are refused.

A failed model call (an HTTP error, a deadline, a response the harness refuses) ends the process the same way, with
the command line's two lines and exit 1, before DBOS could record the step as failed: the workflow stays PENDING and
--resume asks the model again, as the lesson's harness resumes from its last checkpoint. A system database that
becomes unusable during a run (replaced, removed, damaged, read-only) ends the process too, with a line saying so,
instead of waiting for a record that can never be written.

Several workers (processes, machines) may share one system database (--database-url). Who runs what:

- One worker runs exactly one task, the one it was asked (HARNESS_TASK_ID; the workflow id is the task id). The
  task goes on a queue of its own (`harness-task/<id>`), and a worker listens to its own task's queue only, so no
  worker can dequeue another's task. DBOS's executor id is `<HARNESS_EXECUTOR_ID>/<task id>`: DBOS's recovery at
  launch (every PENDING workflow of the launching executor id) can only ever find this task.
- While a worker starts or runs a task it holds the task's lock: a PostgreSQL advisory lock (the server releases it
  when the worker's connection ends, i.e. when the worker dies) or, on SQLite, a lock on a byte of the file beside
  the database (`<file>-lock`; the kernel releases it when the process dies). A second worker for a task that a
  live process holds is refused: recovery and takeover are for the dead only.
- The work folder is the worker's: a tool step writes into the folder of the process running it (a takeover from
  another folder, even another machine, writes there); the workflow's recorded input names the folder it was
  started in, for information only. Replayed steps return their recorded output from the database.
- The database is watched: unreachable at start or during a run (a stopped server, a lock held by another program),
  the worker prints a [待機中] line every 10 s and ends after HARNESS_DATABASE_DEADLINE_S (default 60) with the
  command that resumes it; the workflow stays PENDING. A URL is never shown with its password.

Here: the workflow and its steps, the log lines, and main(). Beside it: dbos_database.py (the URL, how it is shown,
whether the database answers) and dbos_worker.py (this process's state, its task lock, the watch on the database).
This module imports dbos (and SQLAlchemy): `harness.__main__` imports it only for --engine dbos.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from dbos import DBOS, DBOSClient, DBOSConfig, DBOSPortableJSONSerializer, SetWorkflowID

from .. import settings, texts
from ..crash import CrashPlan
from ..errors import HarnessError
from ..lock import hold_workdir
from ..loop import MAX_TURNS, final_text
from ..models import APIError, ResponseRefused, api_kind
from ..run import Run
from ..store import read_bytes, write_new_file
from ..tools import TOOL_SCHEMAS, ToolError, ensure_notes, execute_tool, inside
from ..transcript import format_event, print_transcript, untrusted
from ..vocab import DB_FILE, EXIT_CRASHED, MARKER_FILE, WRITER_LABELS
from ..workdir import start_fresh
from .dbos_database import (
    DATABASE_ERRORS,
    Database,
    database_detail,
    database_target,
    default_database,
    is_away,
    is_damaged,
    ready,
    refuse_odd_database_files,
    scrub,
)
from .dbos_worker import (
    APP_NAME,
    DEFAULT_DEADLINE_S,
    DEFAULT_TASK_ID,
    HERE,
    POLL_S,
    TaskLock,
    Watch,
    await_database,
    stop_for_database,
    stop_now,
    wait_for_database,
    wait_for_result,
)
from .idempotent import key_of, write_report_with_key
from .modes import folder_workflows

try:
    import resource
except ImportError:  # not on this platform: no open-file limit to check
    resource = None  # type: ignore[assignment]

# Fixed, so a workflow started before an edit of this file is still recovered after it (DBOS recovers only the
# workflows of the running application version, which it would otherwise compute from the code).
APP_VERSION = "lesson6-dbos-1"
QUEUE_PREFIX = "harness-task/"  # each task has a queue of its own: only a worker for that task listens to it
DEFAULT_EXECUTOR = "local"  # DBOS's own default executor id: the worker's name when none is given
MIN_OPEN_FILES = 64  # DBOS's threads and connections, SQLite's files, the interpreter's own
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,100}")
TOOL_NAMES = tuple(schema["name"] for schema in TOOL_SCHEMAS)


def _executing() -> None:
    HERE.ran.add((DBOS.workflow_id, DBOS.step_id))


def stop_for_api_error(err: APIError) -> None:
    """The command line's two lines for a failed model call, and the end of the process: the step is not recorded."""
    kind = api_kind(err.status)
    message = texts.API_FAILED.format(kind=kind, status=err.status, message=untrusted(err.message))
    hint = texts.DBOS_API_FAILED_HINT.format(task_id=DBOS.workflow_id, command=HERE.resume_command)
    stop_now(f"{message}\n{hint}")


@DBOS.step(name="call_model")
def call_model(messages: list[dict]) -> dict:
    """One model call (a step: its response is recorded, and replayed on recovery instead of asking again).

    A failed call never becomes the step's record (DBOS would replay the failure on every --resume): the process ends
    with the error and the step stays unrecorded, so --resume asks the model again."""
    _executing()
    try:
        response = HERE.client.messages.create(tools=TOOL_SCHEMAS, messages=messages)
        try:  # what DBOS cannot write would fail the workflow while recording it: refuse it here, as a bad response
            json.dumps(response, ensure_ascii=False).encode("utf-8")
        except (UnicodeEncodeError, TypeError, ValueError):
            raise ResponseRefused(200, texts.DBOS_RESPONSE_NOT_STORABLE) from None
    except APIError as err:
        stop_for_api_error(err)
    return response


def _run_tool(started_in: str, block: dict, idempotent: bool) -> dict:
    """One tool call as a tool_result (a step: the tool runs, then DBOS records the result).

    The tool works in this worker's folder, whichever folder the workflow was started in (`started_in`, recorded as
    the workflow's input): a worker that takes over a dead one's task writes the outputs where it runs."""
    _executing()
    run = HERE.run
    plain = run.tool_impls.get("write_report")
    if idempotent:
        run.tool_impls["write_report"] = write_report_once(run, f"{DBOS.workflow_id}/{DBOS.step_id}")
    try:
        output = execute_tool(run, block)  # writes tool-runs.log, runs the tool, emits tool_ran (label ②)
    except ToolError as err:
        return {"type": "tool_result", "tool_use_id": block["id"], "is_error": True,
                "content": texts.TOOL_ERROR_RESULT.format(error=err)}  # fmt: skip
    finally:
        run.tool_impls["write_report"] = plain
    return {"type": "tool_result", "tool_use_id": block["id"], "content": output}


# One step per tool, named after it (operation_outputs.function_name reads like tool-runs.log), and one for any
# other name a model may invent (execute_tool turns it into an is_error result).
TOOL_STEPS = {name: DBOS.step(name=name)(_run_tool) for name in TOOL_NAMES}
OTHER_TOOL_STEP = DBOS.step(name="unknown_tool")(_run_tool)


def _told(run: Run, step: int, kind: str, **data) -> None:
    """Report a step the workflow just got back: executed here and recorded (`kind`), or replayed from its record."""
    if (DBOS.workflow_id, step) in HERE.ran:
        run.emit(kind, step=step, **data)
    else:
        run.emit("step_replayed", step=step, what=kind, **data)


@DBOS.workflow(name="lesson6_task")
def task_workflow(started_in: str, task: str, idempotent: bool) -> str:
    """The lesson's loop as a workflow: every model call and every tool call a step, no checkpoint file."""
    try:
        return _task(started_in, task, idempotent)
    except DATABASE_ERRORS as err:  # a step's record could not be written: nothing after it could be either
        if HERE.target is not None and is_away(err, HERE.target):
            back_then_resume()  # the database went away: wait for it (the deadline), then go on as a --resume
        stop_for_database(err)
        raise  # not reached
    finally:
        HERE.returned_at = time.monotonic()


def back_then_resume() -> None:
    """The workflow lost its database in the middle of a step: DBOS cannot go on with it in this process (the step
    failed), and must not record it as failed. Once the database answers again, this process becomes the task's
    --resume (the same command line, the same worker): DBOS recovers the workflow from its last record."""
    await_database()
    argv = list(getattr(sys, "orig_argv", []))
    if (
        "harness" not in argv
    ):  # not `python -m harness` (a test or a notebook calling main()): say what to run
        stop_now(texts.DBOS_BACK.format(command=HERE.resume_command))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRASH_")}  # the crash asked for is spent
    print(HERE.prefix + texts.DBOS_LINES["dbos_back"].format(task_id=HERE.task_id), flush=True)
    sys.stderr.flush()
    os.execve(sys.executable, [*argv, *([] if "--resume" in argv else ["--resume"])], env)


def _task(started_in: str, task: str, idempotent: bool) -> str:
    run = HERE.run
    messages = [{"role": "user", "content": task}]
    turns, step = 0, 1
    response = call_model(messages)
    while response["stop_reason"] == "tool_use":
        if turns >= MAX_TURNS:
            return texts.MAX_TURNS_REACHED.format(max_turns=MAX_TURNS)
        turns += 1
        tool_uses = [b for b in response["content"] if b["type"] == "tool_use"]
        if len(tool_uses) != 1:  # the lesson's promise: one pending call per turn
            raise HarnessError(texts.MULTIPLE_TOOL_USES.format(count=len(tool_uses)))
        tool_use = tool_uses[0]
        _told(
            run, step, "save_a", turn=turns, pending=tool_use["name"]
        )  # ≈ point A: the model step is recorded
        messages.append({"role": "assistant", "content": response["content"]})
        tool_step = TOOL_STEPS.get(tool_use["name"], OTHER_TOOL_STEP)
        tool_result = tool_step(started_in, tool_use, idempotent)
        step += 1
        _told(run, step, "effect_written", turn=turns, id=tool_use["id"], name=tool_use["name"])
        if (DBOS.workflow_id, step) in HERE.ran:
            run.emit("save_b", turn=turns, step=step)  # ledger and point B are the same record here
        elif tool_use["name"] == "write_report" and not tool_result.get("is_error"):
            tell_if_not_here(run, tool_use.get("input"), started_in)
        messages.append({"role": "user", "content": [tool_result]})
        response = call_model(messages)
        step += 1
    _told(run, step, "closing")
    return final_text(response)


def tell_if_not_here(run: Run, tool_input: object, started_in: str) -> None:
    """A write_report this process did not run (its record replayed): when its file is not in this folder, say so,
    and where the workflow started, rather than let the closing words claim a report here."""
    path = tool_input.get("path") if isinstance(tool_input, dict) else None
    if isinstance(path, str) and not os.path.lexists(run.workdir / path):
        if _same_folder(started_in, run.workdir):  # written here, and gone since
            run.emit("dbos_gone_here", name="write_report", path=untrusted(path))
            return
        run.emit("dbos_not_here", name="write_report", path=untrusted(path),
                 started_in=untrusted(started_in))  # fmt: skip


def _same_folder(a: str, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def tell_finished_reports(run: Run, task_id: str, status) -> None:
    """--resume of a finished workflow: DBOS returns its recorded result and runs nothing, so every write_report it
    recorded as done was run by an earlier process, perhaps in another folder: tell_if_not_here for each."""
    args = (status.input or {}).get("args") if isinstance(status.input, dict) else None
    started_in = str(args[0]) if isinstance(args, (list, tuple)) and args else "?"
    steps = DBOS.list_workflow_steps(task_id)
    outputs = [step["output"] for step in steps if isinstance(step["output"], dict)]
    asked = {block.get("id"): block.get("input") for out in outputs if out.get("type") == "message"
             for block in out.get("content") or [] if isinstance(block, dict) and block.get("type") == "tool_use"}  # fmt: skip
    for step in steps:
        out = step["output"]
        if step["function_name"] == "write_report" and isinstance(out, dict) and not out.get("is_error"):
            tell_if_not_here(run, asked.get(out.get("tool_use_id")), started_in)


def write_report_once(run: Run, key: str):
    """write_report made idempotent by the engine's ids: the report carries the key (workflow id/step id) of the call
    that wrote it on its first line, in the same atomic write (write_report_with_key, notebook 12's format); a call
    whose key and content are already there writes nothing and answers as the first call did.

    A key names one call, and one call's input is fixed (DBOS replays the model step that chose it), so "this call
    already wrote" means the file holds this key AND exactly this content. The same key with other content is another
    call that carried the same key: the workflow id is the task's id and the step ids count from 1 again, so a fresh
    run of the task makes the same keys as the run before it, and a file the fresh start does not clean keeps the
    earlier run's key. That call is not this one: the file cannot say whether this call happened (its write may have
    been replaced since by the other call), so the answer is the lesson's "cannot tell", an is_error, and nothing is
    written. "Not happened, write now" is not safe: it would be a second write of a call that may have happened,
    which is what the key is there to prevent, over a file whose writer we cannot name. A file without this key (none,
    another call's, not text) is not this call's: write_report replaces it (or says why it cannot).
    """

    def impl(workdir: Path, input: dict) -> str:
        path = inside(workdir, input.get("path"))
        try:
            found = read_bytes(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            found = ""
        # not this call's key (no file, another call's, not text), or content that is no text: an ordinary write
        # (write_report_with_key checks the content, and writes the key and the report at once)
        if key_of(found) != key or not isinstance(input.get("content"), str):
            return write_report_with_key(workdir, input, key)
        if found.partition("\n")[2] != input.get("content"):
            raise ToolError(texts.LOOKUP_CANNOT_TELL.format(path=input["path"], key=key))
        run.emit("already_written", name="write_report", key=key)
        return texts.REPORT_WRITTEN.format(path=input["path"], chars=len(input["content"]))

    return impl


class ProcessCrashPlan(CrashPlan):
    """A crash that ends the process on the spot: to the engine, the simulated crash and SIGKILL look the same."""

    def die(self, run) -> None:
        run.emit("crash", label=f"{self.label}:{self.n}", mode=self.mode)
        sys.stdout.flush()
        sys.stderr.flush()
        if self.mode == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(EXIT_CRASHED)  # no exception through DBOS's code, no clean-up: as a kill leaves it


def format_dbos_event(kind: str, data: dict) -> str | None:
    """The log line of one event of a DBOS run (the lesson's [kill] and [done] lines as they are)."""
    how = texts.DBOS_HOW["replayed" if kind == "step_replayed" else "ran"]
    what = data.get("what", kind)
    if what == "save_a":
        return texts.DBOS_LINES["model"].format(
            turn=data["turn"], step=data["step"], how=how, pending=untrusted(data["pending"])
        )
    if what == "effect_written":
        return texts.DBOS_LINES["tool"].format(
            turn=data["turn"], step=data["step"], how=how, name=untrusted(data["name"])
        )
    if what == "closing":
        return texts.DBOS_LINES["closing"].format(step=data["step"], how=how)
    if kind in texts.DBOS_LINES:
        return texts.DBOS_LINES[kind].format(**data)
    if kind in ("crash", "done", "tool_error"):
        return format_event(kind, data)
    return None


def transcript(task_id: str | None):
    """The listener printing a DBOS run's lines; each line names its task when the database is shared (task_id)."""
    prefix = texts.DBOS_TASK_PREFIX.format(task_id=task_id) if task_id else ""

    def print_line(event) -> None:
        line = format_dbos_event(event.kind, event.data)
        if line is not None:
            print(prefix + line, flush=True)

    return print_line


print_dbos_transcript = transcript(None)


# ---------------------------------------------------------------------------- settings, commands and the folder


def _name(env, variable: str, default: str) -> str:
    value = env.get(variable) or default
    if not _NAME.fullmatch(value):
        raise HarnessError(texts.DBOS_BAD_NAME.format(name=variable, value=untrusted(value)))
    return value


def deadline_from_env(env) -> float:
    """HARNESS_DATABASE_DEADLINE_S: how long a worker waits for a database it cannot reach."""
    value = env.get("HARNESS_DATABASE_DEADLINE_S")
    if not value:
        return DEFAULT_DEADLINE_S
    try:
        seconds = float(value)
    except ValueError:
        seconds = float("nan")
    if not (value.isascii() and 1 <= seconds <= 86400):  # NaN fails both
        raise HarnessError(texts.DBOS_BAD_DEADLINE.format(value=untrusted(value), default=DEFAULT_DEADLINE_S))
    return seconds


def enough_open_files() -> None:
    """DBOS needs a few dozen file descriptors (its threads' connections, SQLite's files): raise a low soft limit up
    to the hard one, or refuse before anything starts (with too few, DBOS's threads fail and retry forever)."""
    if resource is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < MIN_OPEN_FILES:
        wanted = MIN_OPEN_FILES if hard == resource.RLIM_INFINITY else min(MIN_OPEN_FILES, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError):
            wanted = soft
        if wanted < MIN_OPEN_FILES:
            raise HarnessError(texts.DBOS_FEW_FILES.format(limit=soft, needed=MIN_OPEN_FILES))


def resume_command(workdir: Path, db: Database, task_id: str, options, env, resume: bool = True) -> str:
    """The exact command that continues this task (or starts it, resume=False), as a person types it."""
    prefix = f"HARNESS_TASK_ID={task_id} " if task_id != DEFAULT_TASK_ID else ""
    parts = [" --resume" if resume else "", f" --workdir {shlex.quote(str(workdir))}"]
    if not db.default:
        if getattr(options, "database_url", None):
            parts.append(f" --database-url {shlex.quote(db.shown)}")
        else:
            prefix = f"HARNESS_DATABASE_URL={shlex.quote(db.shown)} {prefix}"
    if env.get("HARNESS_EXECUTOR_ID") and resume:
        prefix = f"HARNESS_EXECUTOR_ID={env['HARNESS_EXECUTOR_ID']} {prefix}"
    command = prefix + texts.DBOS_START_COMMAND.format(options="".join(parts))
    secret = texts.DBOS_SECRET_IN_COMMAND if not db.default and "***" in db.shown else ""
    return untrusted(command, limit=2000) + secret


def _adopt_folder(folder: Path) -> None:
    """--resume in a folder of a worker that takes over (it may be new): the marker and the input notes, nothing
    removed. A folder the harness did not make gets no marker, so its files are never cleaned later."""
    if not any(folder.iterdir()):
        write_new_file(folder / MARKER_FILE, texts.MARKER_TEXT.encode("utf-8"))
    ensure_notes(folder)


# ------------------------------------------------------------------------------------------------ DBOS itself


def queue_name(task_id: str) -> str:
    return QUEUE_PREFIX + task_id


def executor_id(worker: str, task_id: str) -> str:
    """DBOS's executor id of this worker on this task (what DBOS recovers at launch: this task, never another)."""
    return f"{worker}/{task_id}"


def worker_of(executor: str | None, task_id: str) -> str:
    """The worker's name in an executor id (an id recorded by an earlier version is shown whole)."""
    executor = executor or "?"
    return executor.removesuffix("/" + task_id)


def dbos_config(url: str, executor: str, debug: bool = False) -> DBOSConfig:
    return {
        "name": APP_NAME,
        "system_database_url": url,
        "application_version": APP_VERSION,
        "executor_id": executor,
        # DBOS logs about 80 lines at INFO on a first launch (its migrations), and a traceback at ERROR when a
        # workflow fails; the transcript and the Japanese error are ours (HARNESS_DEBUG=1 shows DBOS's log)
        "log_level": "INFO" if debug else "CRITICAL",
        # step outputs stored as readable JSON (the default is pickled Python)
        "serializer": DBOSPortableJSONSerializer(),
        # the notification thread sleeps this long between polls, and destroy() waits for it: 1.0 s by default
        "notification_listener_polling_interval_sec": 0.01,
        # one task per process: a few connections are plenty (20 by default, times every worker on one server)
        "sys_db_pool_size": 5,
    }


def prepare(url: str, task_id: str, debug: bool = False):
    """Before launch: create the schema if missing, register the task's own queue, and read the task's workflow as the
    previous process left it (status, number of recorded steps), before DBOS's own recovery touches it.

    The queue is registered before launch (DBOS.migrate creates the schema, a DBOSClient writes the queue's row), so
    the launch already polls it: a recovered task is picked up within POLL_S, not after DBOS's queue check's 1 s.
    """
    logging.getLogger("dbos").setLevel(logging.INFO if debug else logging.CRITICAL)
    DBOS.migrate(url)  # again (cheap when done): measure_cost calls prepare() alone
    client = DBOSClient(
        system_database_url=url, application_name=APP_NAME, serializer=DBOSPortableJSONSerializer()
    )
    try:
        client.register_queue(queue_name(task_id), polling_interval_sec=POLL_S)
        # load_output: the status's error (the reason a failed workflow ended) comes with the output
        found = client.list_workflows(workflow_ids=[task_id], load_input=True, load_output=True)
        steps = len(client.list_workflow_steps(task_id, load_output=False)) if found else 0
    finally:
        client.destroy()
    return (found[0] if found else None), steps


def _log_to_current_stderr() -> None:
    """DBOS makes its console log handler once per process, on the sys.stderr of that moment; a kernel or a test may
    have replaced (and closed) that stream since. Point the handler at today's (not setStream: it flushes the old)."""
    for handler in logging.getLogger("dbos").handlers:
        if type(handler) is logging.StreamHandler:
            with handler.lock:
                handler.stream = sys.stderr


@contextmanager
def launched(url: str, executor: str, debug: bool = False, queues: list[str] | None = None):
    """DBOS launched on this system database for the duration of the block (its own recovery runs at launch),
    dequeuing from `queues` only (None: every queue, DBOS's default)."""
    _log_to_current_stderr()
    DBOS(config=dbos_config(url, executor, debug))
    try:
        if queues is not None:
            DBOS.listen_queues(queues)
        DBOS.launch()
        yield
    finally:
        DBOS.destroy()


def start(run: Run, task_id: str, db: str, task: str, idempotent: bool):
    """Enqueue a new workflow under the task's id, on the task's own queue."""
    run.emit("dbos_start", task_id=task_id, db=db)
    with SetWorkflowID(task_id):
        # the folder is recorded for information only, as text the database can store (odd bytes as \xNN)
        started_in = os.fsencode(run.workdir.resolve()).decode("utf-8", "backslashreplace")
        return DBOS.retrieve_queue(queue_name(task_id)).enqueue(task_workflow, started_in, task, idempotent)


def tell_recovery(run: Run, task_id: str, status, steps: int, executor: str) -> None:
    """--resume: say how the task's workflow is taken back, before DBOS launches: its recovery at launch may run the
    workflow at once, and the workflow's own lines come after this one."""
    if status.status == "PENDING" and status.executor_id != executor:
        run.emit("dbos_takeover", task_id=task_id, status=status.status, executor=worker_of(executor, task_id),
                 owner=untrusted(worker_of(status.executor_id, task_id)), steps=steps)  # fmt: skip
    elif status.status != "SUCCESS":
        run.emit("dbos_recover", task_id=task_id, status=status.status, steps=steps)


def recover(run: Run, task_id: str, status, executor: str):
    """--resume: hand the task's workflow (`status`, as the previous process left it) back to DBOS; its handle.

    This worker holds the task's lock, so whoever left it PENDING is dead. Left by this worker's executor id: DBOS's
    recovery at launch has already put it back on its queue. Left by another (a worker that died, here or on another
    machine): DBOS.resume_workflow puts it on this task's queue, which only this worker listens to.
    """
    if status.status == "SUCCESS":
        run.emit("dbos_finished", task_id=task_id, status=status.status)
        tell_finished_reports(run, task_id, status)
    elif status.status == "PENDING" and status.executor_id != executor:
        DBOS.resume_workflow(task_id, queue_name=queue_name(task_id))
    elif status.status == "ENQUEUED" and status.queue_name != queue_name(task_id):
        DBOS.resume_workflow(task_id, queue_name=queue_name(task_id))  # left on a queue nobody listens to
    return DBOS.retrieve_workflow(task_id)


def workflow_failed(task_id: str, status: str, error: object, hint: str) -> str:
    """Two lines for a workflow DBOS recorded as ended without a result: why (the error's first line), what to do."""
    reason = str(error).split("\n")[0].strip() if error is not None else ""
    reason = untrusted(reason) if reason else texts.DBOS_NO_REASON
    failed = texts.DBOS_WORKFLOW_FAILED.format(task_id=task_id, status=status, error=reason)
    return f"{failed}\n{hint}"


def main(options, run: Run, client, env=os.environ) -> str:
    """`python -m harness --engine dbos [--resume]`: the task as a DBOS workflow (see the module's docstring)."""
    try:
        return _main(options, run, client, env)
    except HarnessError as err:
        raise HarnessError(scrub(str(err), HERE.secrets)) from None


def check_settings(options, env) -> None:
    """Every setting the engine reads, refused before the command line makes any folder; and an events file that
    is the database's (however its URL spells it: the engine's own reading of it)."""
    plan = CrashPlan.from_env(env.get("CRASH_AFTER"), env.get("CRASH_MODE"))
    if plan is not None and plan.label in WRITER_LABELS:
        raise HarnessError(texts.DBOS_NO_WRITER_LABELS.format(label=plan.label))
    db = database_target(options, env, Path(options.workdir))
    _name(env, "HARNESS_TASK_ID", DEFAULT_TASK_ID)
    _name(env, "HARNESS_EXECUTOR_ID", DEFAULT_EXECUTOR)
    deadline_from_env(env)
    events = env.get("HARNESS_EVENTS_FILE")
    if events and db.sqlite is not None:
        files = {
            os.path.realpath(str(db.sqlite) + tail) for tail in ("", "-journal", "-wal", "-shm", "-lock")
        }
        if {os.path.realpath(events), os.path.abspath(events)} & files:
            raise HarnessError(texts.EVENTS_FILE_IS_DATABASE.format(value=untrusted(events)))


def _main(options, run: Run, client, env) -> str:
    if run.crash is not None:
        if run.crash.label in WRITER_LABELS:
            raise HarnessError(texts.DBOS_NO_WRITER_LABELS.format(label=run.crash.label))
        run.crash = ProcessCrashPlan(run.crash.label, run.crash.n, run.crash.mode)
    db = database_target(options, env, run.workdir)
    HERE.secrets = db.secrets
    task_id = _name(env, "HARNESS_TASK_ID", DEFAULT_TASK_ID)
    worker = _name(env, "HARNESS_EXECUTOR_ID", DEFAULT_EXECUTOR)
    deadline = deadline_from_env(env)
    enough_open_files()
    shared = None if db.default else task_id  # a shared database: every line names its task
    run.listeners = [transcript(shared) if f is print_transcript else f for f in run.listeners]
    idempotent = settings.switch(env, "HARNESS_IDEMPOTENT_TOOLS")
    HERE.run, HERE.client, HERE.db, HERE.returned_at = run, client, db.shown, None
    HERE.resume_command = resume_command(run.workdir, db, task_id, options, env)
    HERE.target, HERE.task_id, HERE.deadline, HERE.check = db, task_id, deadline, None
    HERE.begun, HERE.command = False, resume_command(run.workdir, db, task_id, options, env, options.resume)
    HERE.prefix = texts.DBOS_TASK_PREFIX.format(task_id=task_id) if shared else ""
    executor = executor_id(worker, task_id)
    with hold_workdir(run.workdir):  # one process per work folder, as in the lesson's harness
        if options.resume and db.default:
            refuse_odd_database_files(run.workdir)  # before anything opens them
            if not db.sqlite.exists():  # (a task of the files was refused by cli(): harness/beyond/modes.py)
                fresh = resume_command(run.workdir, db, task_id, options, env, resume=False)
                raise HarnessError(texts.DBOS_NO_DATABASE.format(path=run.workdir / DB_FILE, command=fresh))
        debug = settings.debug_on(env)
        try:
            if not options.resume and db.default:  # the previous database goes with the previous checkpoint
                start_fresh(run)  # the lesson's clean-up: it removes the previous dbos.sqlite too
            logging.getLogger("dbos").setLevel(logging.INFO if debug else logging.CRITICAL)
            lock = TaskLock(db, task_id)
            if (
                db.sqlite is not None
            ):  # a file lock: taken before waiting for a file its frozen holder may lock
                take_task(lock, db)
            wait_for_database(db, deadline, task_id, check=lambda: ready(db))
            if db.sqlite is None:  # PostgreSQL's lock lives in the server: taken once the server answers
                take_task(lock, db)
            HERE.check = lock.check
            status, steps = prepare(db.url, task_id, debug)
            HERE.begun = status is not None
            if not options.resume and status is not None:  # a database we do not own: never start over in it
                raise HarnessError(texts.DBOS_ALREADY_EXISTS.format(
                    task_id=task_id, db=db.shown, status=status.status, command=HERE.resume_command))  # fmt: skip
            if options.resume:
                refuse_unresumable(status, task_id, db, options, env, run.workdir)
                _adopt_folder(run.workdir)
            if not options.resume and not db.default:
                start_fresh(run)
            watch = Watch(db, lock, deadline, task_id)
            watch.start()
            if options.resume:
                tell_recovery(run, task_id, status, steps, executor)
            with launched(db.url, executor, debug, queues=[queue_name(task_id)]):
                if options.resume:
                    handle = recover(run, task_id, status, executor)
                else:
                    handle = start(run, task_id, db.shown, texts.TASK, idempotent)
                    HERE.begun = True
                try:
                    text = wait_for_result(handle, db, deadline)
                except (HarnessError, *DATABASE_ERRORS):
                    raise
                except Exception as err:  # noqa: BLE001 (the workflow itself failed: DBOS recorded the error)
                    raise HarnessError(
                        workflow_failed(
                            task_id, "ERROR", err, failed_hint(db, task_id, run.workdir, options, env)
                        )
                    ) from None
                finally:
                    watch.stop.set()
        except KeyboardInterrupt:
            if HERE.begun:  # the workflow stays PENDING in the database: --resume recovers it
                print(texts.DBOS_INTERRUPTED, file=sys.stderr, flush=True)
            else:  # no workflow yet: a --resume would find nothing
                fresh = resume_command(run.workdir, db, task_id, options, env, resume=False)
                print(texts.DBOS_INTERRUPTED_BEFORE_START.format(command=fresh), file=sys.stderr, flush=True)
            os._exit(130)
        except DATABASE_ERRORS as err:
            if db.default and is_damaged(err):
                raise HarnessError(
                    texts.DBOS_DB_DAMAGED.format(db=db.shown, detail=database_detail(err, db.secrets))
                ) from None
            raise HarnessError(
                texts.DBOS_CANNOT_OPEN.format(db=db.shown, detail=database_detail(err, db.secrets))
            ) from None
    run.emit("done", text=text)
    return text


def take_task(lock: TaskLock, db: Database) -> None:
    """This worker's hold on its task, or the refusal that names the live worker's task and what to run later."""
    if not lock.take():
        raise HarnessError(
            texts.DBOS_TASK_BUSY.format(task_id=lock.task_id, db=db.shown, command=HERE.resume_command)
        )


def failed_hint(db: Database, task_id: str, workdir: Path, options, env) -> str:
    """What to do after a failed workflow: in the folder's own database a fresh start (which removes it); in a shared
    one, where the record stays, a fresh start under another task id."""
    if db.default:
        command = resume_command(workdir, db, task_id, options, env, resume=False)
        return texts.DBOS_WORKFLOW_FAILED_HINT_HERE.format(command=command)
    other = f"{task_id}-2" if len(task_id) <= 98 else "new-task"
    command = resume_command(workdir, db, other, options, env, resume=False)
    return texts.DBOS_WORKFLOW_FAILED_HINT.format(command=command)


def refuse_unresumable(status, task_id: str, db: Database, options, env, workdir: Path) -> None:
    """--resume of a workflow that is not there, ended in an error, or belongs to another version of the harness."""
    if status is None:
        # the task on disk is in the folder's own database, or has another id: name the command that continues it
        here = [i for i in folder_workflows(workdir) if i != task_id or not db.default]
        if here:
            command = resume_command(workdir, default_database(workdir), here[0], options, env)
            raise HarnessError(texts.DBOS_WORKFLOW_IN_FOLDER.format(
                task_id=task_id, db=db.shown, ids=", ".join(untrusted(i) for i in here), command=command))  # fmt: skip
        command = resume_command(workdir, db, task_id, options, env, resume=False)
        raise HarnessError(texts.DBOS_NO_WORKFLOW.format(task_id=task_id, db=db.shown, command=command))
    if status.status not in ("PENDING", "ENQUEUED", "SUCCESS"):
        hint = failed_hint(db, task_id, workdir, options, env)
        raise HarnessError(workflow_failed(task_id, status.status, status.error, hint))
    if status.status != "SUCCESS" and status.app_version not in (None, APP_VERSION):
        other = resume_command(workdir, db, f"{task_id}-2", options, env, resume=False)
        raise HarnessError(texts.DBOS_OTHER_VERSION.format(task_id=task_id, version=untrusted(
            status.app_version), command=other))  # fmt: skip
