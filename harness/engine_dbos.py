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

This module imports dbos (and SQLAlchemy): `harness.__main__` imports it only for --engine dbos.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import signal
import sqlite3
import stat
import sys
import threading
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, DBOSConfig, DBOSPortableJSONSerializer, SetWorkflowID
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from . import settings, texts
from .crash import CrashPlan
from .errors import HarnessError
from .lock import hold_workdir
from .loop import MAX_TURNS, final_text
from .models import APIError, ResponseRefused
from .run import Run
from .store import read_bytes, write_new_file
from .tools import TOOL_SCHEMAS, ToolError, ensure_notes, execute_tool, inside, write_report
from .transcript import format_event, print_transcript, terminal_safe, untrusted
from .vocab import DB_FILE, DB_FILES, MARKER_FILE, WRITER_LABELS
from .workdir import start_fresh

try:
    import fcntl
    import resource
except ImportError:  # not on this platform: no task lock file, no open-file limit to check
    fcntl = resource = None  # type: ignore[assignment]

APP_NAME = "harness"
# Fixed, so a workflow started before an edit of this file is still recovered after it (DBOS recovers only the
# workflows of the running application version, which it would otherwise compute from the code).
APP_VERSION = "lesson6-dbos-1"
QUEUE_PREFIX = "harness-task/"  # each task has a queue of its own: only a worker for that task listens to it
POLL_S = 0.02
DEFAULT_TASK_ID = "sales-report"
DEFAULT_EXECUTOR = "local"  # DBOS's own default executor id: the worker's name when none is given
EXIT_CRASHED = 137
EXIT_ERROR = 1
# After the workflow function returned, DBOS writes its final status; if that has not happened within this long, the
# database no longer takes writes (DBOS retries a locked SQLite file with a back-off, so not a few seconds only).
FINAL_WRITE_S = 30.0
DEFAULT_DEADLINE_S = 60.0  # HARNESS_DATABASE_DEADLINE_S: how long a worker waits for an unreachable database
WAIT_LINE_S = 10.0  # a [待機中] line this often while it waits
FIRST_WAIT_LINE_S = 1.0  # the first one when the database has not answered for this long
PROBE_S = 0.5  # how often the watch asks the database
MIN_OPEN_FILES = 64  # DBOS's threads and connections, SQLite's files, the interpreter's own
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,100}")
TOOL_NAMES = tuple(schema["name"] for schema in TOOL_SCHEMAS)
DATABASE_ERRORS = (SQLAlchemyError, sqlite3.Error)
# Query parameters of a URL shown as they are; any other value (password=, sslpassword=, ...) is shown as ***
SHOWN_QUERY = ("host", "port", "dbname", "sslmode", "connect_timeout", "application_name", "uri", "mode")
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


class _Process:
    """What this process's DBOS steps report to. DBOS keeps one application per process (its workflows and steps are
    registered globally), so the run it serves is per process too, set by main() before DBOS launches."""

    def __init__(self) -> None:
        self.run: Run | None = None
        self.client = None
        # (workflow id, step id) of every step executed in this process; the others were replayed from their record
        self.ran: set[tuple[str, int]] = set()
        self.db = DB_FILE  # the system database as the messages show it
        self.secrets: tuple[str, ...] = ()  # what no message may contain (the URL's password, in every form)
        self.resume_command = ""  # the command that continues this task (in every message that ends the run)
        self.returned_at: float | None = None  # when the workflow function last returned (time.monotonic())
        self.target: Database | None = None  # the system database (when main() runs)
        self.task_id = DEFAULT_TASK_ID
        self.deadline = DEFAULT_DEADLINE_S
        self.check = None  # how the database is asked whether it answers (TaskLock.check)
        self.prefix = ""  # what every transcript line starts with ([task-id] on a shared database)
        self.waiting = threading.Lock()
        self.begun = False  # whether the task's workflow is in the database (else nothing was started yet)
        self.command = ""  # the command as given (what to run again when nothing was started)


HERE = _Process()


def _executing() -> None:
    HERE.ran.add((DBOS.workflow_id, DBOS.step_id))


def scrub(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """Text with every secret of the database URL (in each of its spellings) replaced by ***."""
    for secret in sorted(secrets if secrets is not None else HERE.secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


def stop_now(message: str, code: int = EXIT_ERROR) -> None:
    """End the process at once with `エラー: message` on stderr: nothing DBOS could record as the workflow's end, so it
    stays as the last record left it (PENDING), and no worker thread is waited for."""
    try:
        sys.stdout.flush()
        print(terminal_safe(f"エラー: {scrub(message)}"), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    os._exit(code)


def stop_for_api_error(err: APIError) -> None:
    """The command line's two lines for a failed model call, and the end of the process: the step is not recorded."""
    kind = texts.API_KINDS.get(err.status, "HTTP エラー")
    message = texts.API_FAILED.format(kind=kind, status=err.status, message=untrusted(err.message))
    hint = texts.DBOS_API_FAILED_HINT.format(task_id=DBOS.workflow_id, command=HERE.resume_command)
    stop_now(f"{message}\n{hint}")


def stop_for_database(err: BaseException | str) -> None:
    """The system database stopped taking what the engine writes: say so and end, rather than wait for it."""
    detail = err if isinstance(err, str) else database_detail(err)
    if (
        HERE.target is not None and not HERE.target.default
    ):  # a shared database is never wiped by a fresh start
        stop_now(texts.DBOS_DB_LOST_SHARED.format(db=HERE.db, detail=detail, command=HERE.resume_command))
    stop_now(texts.DBOS_DB_LOST.format(db=HERE.db, detail=detail))


def database_detail(err: BaseException) -> str:
    """The driver's own words for a database error, on one line, safe for a terminal and without the password."""
    orig = getattr(err, "orig", None) or err
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    return untrusted(scrub(text))


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


def is_away(err: BaseException, db: Database) -> bool:
    """Whether a database error means "not reachable now" (worth waiting for) rather than "broken"."""
    if db.sqlite is not None:
        return _busy(err)
    orig = getattr(err, "orig", None) or err
    return (
        getattr(err, "connection_invalidated", False)
        or isinstance(err, sa.exc.OperationalError)
        or (type(orig).__name__ == "OperationalError" and type(orig).__module__.startswith("psycopg"))
    )


def await_database() -> None:
    """Block this thread until the database answers again ([待機中] lines), or end the process at the deadline.
    One thread waits and prints at a time; the others wait for it."""
    with HERE.waiting:
        wait_for_database(HERE.target, HERE.deadline, HERE.task_id, check=HERE.check)


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
            path = tool_use.get("input", {}).get("path") if isinstance(tool_use.get("input"), dict) else None
            if isinstance(path, str) and not os.path.lexists(run.workdir / path):
                run.emit("dbos_not_here", name="write_report", path=untrusted(path),
                         started_in=untrusted(started_in))  # fmt: skip
        messages.append({"role": "user", "content": [tool_result]})
        response = call_model(messages)
        step += 1
    _told(run, step, "closing")
    return final_text(response)


def write_report_once(run: Run, key: str):
    """write_report made idempotent by the engine's ids: the report carries the key (workflow id/step id) of the call
    that wrote it, in the same atomic write; a call whose key and content are already there writes nothing and
    answers as the first call did.

    A key names one call, and one call's input is fixed (DBOS replays the model step that chose it), so "this call
    already wrote" means the file holds this key AND exactly this content. The same key with other content is another
    call that carried the same key: the workflow id is the task's id and the step ids count from 1 again, so a fresh
    run of the task makes the same keys as the run before it, and a file the fresh start does not clean keeps the
    earlier run's key. That call is not this one: the file cannot say whether this call happened (its write may have
    been replaced since by the other call), so the answer is the lesson's "cannot tell", an is_error, and nothing is
    written. "Not happened, write now" is not safe: it would be a second write of a call that may have happened,
    which is what the key is there to prevent, over a file whose writer we cannot name.
    """

    def impl(workdir: Path, input: dict) -> str:
        path = inside(workdir, input.get("path"))
        content = input.get("content")
        if not isinstance(content, str):
            raise ToolError(texts.BAD_TOOL_INPUT.format(name="write_report", detail="content は文字列です"))
        mark = f"\n<!-- idempotency-key: {key} -->\n"
        try:
            found = read_bytes(path).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            found = None  # no report, or not text: write_report replaces it (or says why it cannot)
        if found == content + mark:
            run.emit("already_written", name="write_report", key=key)
        elif found is not None and found.endswith(mark):
            raise ToolError(texts.LOOKUP_CANNOT_TELL.format(path=input["path"], key=key))
        else:
            write_report(workdir, {**input, "content": f"{content}{mark}"})
        # the words write_report answers with, for the report on disk (without the key line): this content
        return texts.REPORT_WRITTEN.format(path=input["path"], chars=len(content))

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


# ------------------------------------------------------------------------------------------- the system database


@dataclass
class Database:
    """The system database: the URL DBOS is given, how messages show it, and what kind it is."""

    url: str
    shown: str
    sqlite: Path | None = None  # the SQLite file, when it is one
    default: bool = False  # the work folder's own dbos.sqlite
    secrets: tuple[str, ...] = field(default_factory=tuple)

    @property
    def lock_file(self) -> Path | None:
        """Beside a SQLite file given by URL (the work folder's own database is held by the folder's lock)."""
        return (
            None if self.sqlite is None or self.default else self.sqlite.with_name(self.sqlite.name + "-lock")
        )


def sqlite_uri(path: Path) -> str:
    """SQLite's URI filename for this file, percent-encoded from the path's bytes: whatever the path holds (`?`, `#`,
    `%41`, spaces, bytes that are not UTF-8), SQLite opens exactly this file."""
    return "file:" + urllib.parse.quote(os.fsencode(path), safe="/")


def sqlite_url(path: Path) -> str:
    """A SQLAlchemy URL for this SQLite file: its URI filename, percent-encoded once more for the URL."""
    url = sa.engine.URL.create("sqlite", database=sqlite_uri(path), query={"uri": "true"})
    return url.render_as_string(hide_password=False)


def default_database(workdir: Path) -> Database:
    path = workdir.resolve() / DB_FILE
    return Database(sqlite_url(path), DB_FILE, path, default=True)


def database_target(options, env, workdir: Path) -> Database:
    """--database-url, else HARNESS_DATABASE_URL, else dbos.sqlite in the work folder; refused up front (with the
    reason, never the password) when the engine could not use it."""
    url = getattr(options, "database_url", None) or env.get("HARNESS_DATABASE_URL")
    if not url:
        return default_database(workdir)
    db = parse_database_url(url)
    if (
        db.sqlite is not None
    ):  # the work folder's files are the harness's: a database given by URL stays outside
        folder, file = os.path.realpath(workdir), os.path.realpath(db.sqlite)
        if os.path.commonpath([folder, file]) == folder:
            raise HarnessError(texts.DBOS_URL_IN_WORKDIR.format(db=db.shown, path=workdir))
    return db


def url_secrets(url: str) -> tuple[str, ...]:
    """Every spelling of every secret a URL may carry, read without trusting its shape: the userinfo after the first
    `:` up to the LAST `@` of the authority (a password with an unencoded @ included), and each query value that is
    not a plain connection setting. Raw and percent-decoded, each."""
    found: list[str] = []
    _, _, rest = url.partition("://")
    before_query, _, query = rest.partition("?")
    if "@" in before_query:  # userinfo up to the last @ (a password may hold / or @ unencoded)
        userinfo = before_query.rsplit("@", 1)[0]
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
    for part in re.split(r"[&;]", query):
        key, _, value = part.partition("=")
        if value and urllib.parse.unquote(key).strip().lower() not in SHOWN_QUERY:
            found.append(value)
    spelled = {
        *found,
        *(urllib.parse.unquote(s) for s in found),
        *(urllib.parse.unquote_plus(s) for s in found),
    }
    return tuple(s for s in spelled if s)


def _shown(u: sa.engine.URL, scheme: str) -> str:
    """A parsed URL as messages show it: the password and every query value but plain settings as ***."""
    user = u.username or ""
    auth = f"{user}{':***' if u.password is not None else ''}@" if user or u.password is not None else ""
    host = u.host or ""
    host = f"[{host}]" if ":" in host else host
    port = f":{u.port}" if u.port is not None else ""
    query = "&".join(
        f"{k}={v if k.lower() in SHOWN_QUERY else '***'}"
        for k, values in u.query.items()
        for v in (values if isinstance(values, tuple) else (values,))
    )
    return untrusted(f"{scheme}://{auth}{host}{port}/{u.database or ''}{'?' + query if query else ''}")


def parse_database_url(url: str) -> Database:
    secrets = url_secrets(url)
    scheme, sep, rest = url.partition("://")
    scheme = scheme.lower()

    def refuse(reason: str, shown: str | None = None):
        shown = shown or untrusted(f"{scheme}://…" if sep else "…")
        return HarnessError(scrub(texts.DBOS_BAD_URL.format(url=shown, reason=texts.DBOS_URL_REASONS[reason]),
                                  secrets))  # fmt: skip

    if not sep or scheme not in (*POSTGRES_SCHEMES, "sqlite"):
        raise refuse("scheme", untrusted(scheme + "://…") if sep else None)
    authority = rest.split("/", 1)[0].split("?", 1)[0]
    if authority.count("@") > 1:
        raise refuse("at")
    hostport = authority.rsplit("@", 1)[-1]
    if hostport.startswith("[") and "]" not in hostport:
        raise refuse("bracket")
    port = hostport.rsplit("]", 1)[-1] if hostport.startswith("[") else hostport
    if ":" in port and not re.fullmatch(r"[0-9]{1,5}", port.split(":", 1)[1]):
        raise refuse("port")
    driver = "postgresql+psycopg" if scheme in POSTGRES_SCHEMES else "sqlite"
    try:
        u = sa.make_url(f"{driver}://{rest}")
        port = u.port
        query_port = u.query.get("port")
        query_mode = u.query.get("mode")
    except (ArgumentError, ValueError, TypeError):
        raise refuse("unreadable") from None
    shown = _shown(u, "postgresql" if driver != "sqlite" else "sqlite")
    if driver == "sqlite":
        if query_mode == "memory":
            raise refuse("memory", shown)
        return _sqlite_database(u, shown, secrets, refuse)
    ports = [port] if port is not None else []
    for value in query_port if isinstance(query_port, tuple) else ([query_port] if query_port else []):
        ports += [int(v) if v.strip().isdigit() else -1 for v in value.split(",")]
    if any(not 1 <= p <= 65535 for p in ports):
        raise refuse("port", shown)
    if not u.database:
        raise refuse("no_database", shown)
    if (
        "connect_timeout" not in u.query
    ):  # no connection attempt may outlast the deadline (libpq waits forever)
        u = u.update_query_dict({"connect_timeout": "5"})
    return Database(u.render_as_string(hide_password=False), shown, secrets=secrets)


def _sqlite_database(u: sa.engine.URL, shown: str, secrets: tuple[str, ...], refuse) -> Database:
    database = u.database or ""
    uri = str(u.query.get("uri", "")).lower() in ("true", "1")
    if uri and database.startswith("file:"):
        parts = urllib.parse.urlsplit(database)
        query = urllib.parse.parse_qs(parts.query)
        if "memory" in query.get("mode", []) or parts.path in ("", ":memory:"):
            raise refuse("memory" if parts.path in (":memory:",) or query.get("mode") else "no_file", shown)
        path = Path(os.fsdecode(urllib.parse.unquote_to_bytes(parts.path)))
    elif database in ("", ":memory:") or str(u.query.get("mode", "")) == "memory":
        raise refuse("memory" if database else "no_file", shown)
    else:
        path = Path(database)
    path = path if path.is_absolute() else Path.cwd() / path
    return Database(sqlite_url(path), shown, path, secrets=secrets)


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


def _fresh(run: Run) -> None:
    """A fresh start: the lesson's clean-up (which removes the folder's previous dbos.sqlite too)."""
    start_fresh(run)


def _adopt_folder(folder: Path) -> None:
    """--resume in a folder of a worker that takes over (it may be new): the marker and the input notes, nothing
    removed. A folder the harness did not make gets no marker, so its files are never cleaned later."""
    if not any(folder.iterdir()):
        write_new_file(folder / MARKER_FILE, texts.MARKER_TEXT.encode("utf-8"))
    ensure_notes(folder)


def refuse_odd_database_files(folder: Path) -> None:
    """The default system database and SQLite's files beside it must be plain files of their own (or absent): SQLite
    follows a link, opens a FIFO and blocks, and writes through a hard link into a file somewhere else."""
    for name in DB_FILES:
        try:
            info = os.lstat(folder / name)
        except FileNotFoundError:
            continue
        except OSError as err:
            kind = err.strerror or type(err).__name__
            raise HarnessError(texts.DBOS_DB_NOT_PLAIN.format(name=name, kind=kind)) from None
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
            continue
        kind = ("link" if stat.S_ISLNK(info.st_mode) else "folder" if stat.S_ISDIR(info.st_mode)
                else "hardlink" if stat.S_ISREG(info.st_mode) else "other")  # fmt: skip
        raise HarnessError(texts.DBOS_DB_NOT_PLAIN.format(name=name, kind=texts.DBOS_DB_KINDS[kind]))


def file_id(path: Path | None) -> tuple[int, int] | None:
    try:
        info = os.lstat(path) if path is not None else None
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if info is not None and stat.S_ISREG(info.st_mode) else None


# ------------------------------------------------------------------------------- the task's lock and the watch


def _lock_key(task_id: str) -> int:
    """The task's lock as a signed 64-bit number (PostgreSQL's advisory lock key; a byte offset on SQLite)."""
    digest = hashlib.blake2b(f"{APP_NAME}/{task_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class TaskLock:
    """This worker's hold on its task, for as long as the process lives (see the module's docstring)."""

    def __init__(self, db: Database, task_id: str) -> None:
        self.db, self.task_id, self.key = db, task_id, _lock_key(task_id)
        self.fd: int | None = None
        self.conn = None
        self.engine = None

    def take(self) -> bool:
        """True when this worker now holds the task; False when a live process holds it."""
        if self.db.sqlite is not None:
            return self._take_file()
        return self._take_postgres()

    def _take_file(self) -> bool:
        if fcntl is None or self.db.lock_file is None:
            return True
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            self.fd = os.open(self.db.lock_file, flags, 0o600)
        except (
            OSError
        ) as err:  # (its folder is the database's: the same words as when the database cannot open)
            raise HarnessError(texts.DBOS_CANNOT_OPEN.format(db=self.db.shown, detail=err.strerror)) from None
        try:  # one byte per task, far beyond any content: POSIX record locks end with the process
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, self.key & (2**62 - 1))
        except OSError:
            os.close(self.fd)
            self.fd = None
            return False
        return True

    def _take_postgres(self) -> bool:
        if self.engine is None:
            # keepalives: a worker whose machine died is noticed (its lock freed) within a minute, not hours
            self.engine = sa.create_engine(self.db.url, poolclass=sa.NullPool, connect_args={
                "connect_timeout": 5, "application_name": f"harness-lock/{self.task_id}",
                "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3})  # fmt: skip
        conn = self.engine.connect()
        try:
            conn.execute(sa.text("SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; "
                                 "SET tcp_keepalives_count = 3"))  # fmt: skip
            got = conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": self.key}).scalar()
            conn.commit()
        except BaseException:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self.conn = conn
        return True

    def check(self) -> str | None:
        """None while this worker holds its task and the database answers; else why not (a SQLite file: whether it
        takes a write; PostgreSQL: the lock's own connection, taken again if the server lost it). Ends the process
        when another worker took the task meanwhile."""
        if self.db.sqlite is not None:
            return probe(self.db)  # a record lock lasts as long as the process
        try:
            if self.conn is not None:
                self.conn.execute(sa.text("SELECT 1")).scalar()
                self.conn.commit()
                return None
        except DATABASE_ERRORS:
            try:
                self.conn.close()
            except DATABASE_ERRORS:
                pass
            self.conn = None
        try:  # the server forgot the lock with the connection: take it again, unless another worker has it now
            if not self._take_postgres():
                stop_now(texts.DBOS_TASK_TAKEN.format(task_id=self.task_id))
        except DATABASE_ERRORS as err:
            return database_detail(err)
        return None


def probe(db: Database) -> str | None:
    """None when the database takes a write right now; the driver's words when it is away or locked (worth waiting
    for). Any other error (a file that is not a database, one that cannot be opened) is raised: waiting would not
    help."""
    try:
        if db.sqlite is not None:
            if not db.sqlite.exists():
                return None  # not created yet (DBOS creates it): nothing to wait for
            con = sqlite3.connect(sqlite_uri(db.sqlite) + "?mode=rw", uri=True, timeout=1.0)
            try:
                con.execute("BEGIN IMMEDIATE")  # the write lock another program may hold
                con.execute("ROLLBACK")
            finally:
                con.close()
            return None
        engine = sa.create_engine(db.url, poolclass=sa.NullPool)
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        finally:
            engine.dispose()
        return None
    except sqlite3.Error as err:
        if _busy(err):
            return database_detail(err)
        raise
    except (
        sa.exc.OperationalError
    ) as err:  # PostgreSQL: no connection (a server away, a name that does not answer)
        return database_detail(err)


def ready(db: Database) -> str | None:
    """At start: None once the database is there with DBOS's schema (DBOS creates both when missing)."""
    problem = probe(db) if db.sqlite is not None else None
    if problem is None:
        try:
            DBOS.migrate(db.url)
        except sa.exc.OperationalError as err:
            if db.sqlite is not None and not _busy(err):
                raise
            return database_detail(err)
    return problem


def _busy(err: BaseException) -> bool:
    orig = getattr(err, "orig", None) or err
    return getattr(orig, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED")


def wait_for_database(db: Database, deadline: float, task_id: str, check=None) -> None:
    """Return once `check` (default: probe) finds the database usable; a [待機中] line on stderr at once and every
    WAIT_LINE_S meanwhile; at the deadline, end the process with the command that resumes the task."""
    check = check or (lambda: probe(db))
    since, next_line = time.monotonic(), FIRST_WAIT_LINE_S  # a moment's lock contention is not worth a line
    while (problem := check()) is not None:
        waited = time.monotonic() - since
        if waited >= deadline:
            said = texts.DBOS_UNREACHABLE if HERE.begun else texts.DBOS_UNREACHABLE_AT_START
            stop_now(said.format(db=db.shown, deadline=f"{deadline:g}", detail=problem, task_id=task_id,
                                 command=HERE.resume_command if HERE.begun else HERE.command))  # fmt: skip
        if waited >= next_line:
            next_line += WAIT_LINE_S
            print(terminal_safe(texts.DBOS_WAITING.format(db=db.shown, elapsed=f"{round(waited, 1):g}",
                  deadline=f"{deadline:g}", detail=problem)), file=sys.stderr, flush=True)  # fmt: skip
        time.sleep(min(PROBE_S, max(0.05, deadline - waited)))


class Watch(threading.Thread):
    """A thread beside DBOS's: DBOS waits for its database without limit (it retries every write until it succeeds);
    this thread asks the database itself every PROBE_S and ends the process when it has been unreachable for the
    deadline, or when another worker took the task over meanwhile. The workflow stays PENDING: resumable."""

    def __init__(self, db: Database, lock: TaskLock, deadline: float, task_id: str) -> None:
        super().__init__(daemon=True, name="harness-watch")
        self.db, self.lock, self.deadline, self.task_id = db, lock, deadline, task_id
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                time.sleep(
                    PROBE_S
                )  # not Event.wait: its timeout follows the wall clock under some fake clocks
                if self.lock.check() is not None:
                    await_database()
        except (
            DATABASE_ERRORS
        ) as err:  # not away but broken (replaced, damaged): no record can be written now
            if not self.stop.is_set():
                stop_for_database(err)


def wait_for_result(handle, db: Database, deadline: float) -> str:
    """The workflow's result, polled every POLL_S; gives up (ends the process) when the system database stops being
    usable: the SQLite file replaced or removed under the engine, a read that fails, a finished workflow function
    whose end DBOS cannot write within FINAL_WRITE_S, or a workflow DBOS never takes off its queue. DBOS itself would
    wait for its record forever."""
    watched = file_id(db.sqlite) if db.default else None
    while True:
        try:
            return _poll(handle, db, deadline, watched)
        except DATABASE_ERRORS as err:
            if not is_away(err, db):
                stop_for_database(err)
            await_database()


def _poll(handle, db: Database, deadline: float, watched) -> str:
    enqueued_since: float | None = None
    while (status := handle.get_status().status) in ("PENDING", "ENQUEUED"):
        if db.default and file_id(db.sqlite) != watched:
            stop_for_database(texts.DBOS_DB_REPLACED)
        returned = HERE.returned_at
        if returned is not None and time.monotonic() - returned > FINAL_WRITE_S:
            stop_for_database(texts.DBOS_DB_FINAL_WRITE.format(seconds=FINAL_WRITE_S))
        if status == "ENQUEUED":  # on this task's own queue, which this worker polls every POLL_S
            enqueued_since = enqueued_since or time.monotonic()
            if time.monotonic() - enqueued_since > deadline:
                stop_now(texts.DBOS_NOT_DEQUEUED.format(deadline=f"{deadline:g}", task_id=handle.workflow_id,
                                                        command=HERE.resume_command))  # fmt: skip
        else:
            enqueued_since = None
        time.sleep(POLL_S)
    return handle.get_result(polling_interval_sec=POLL_S)


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


def recover(run: Run, task_id: str, status, steps: int, executor: str):
    """--resume: hand the task's workflow (`status`, as the previous process left it) back to DBOS; its handle.

    This worker holds the task's lock, so whoever left it PENDING is dead. Left by this worker's executor id: DBOS's
    recovery at launch has already put it back on its queue. Left by another (a worker that died, here or on another
    machine): DBOS.resume_workflow puts it on this task's queue, which only this worker listens to.
    """
    if status.status == "SUCCESS":
        run.emit("dbos_finished", task_id=task_id, status=status.status)
    elif status.status == "PENDING" and status.executor_id != executor:
        run.emit("dbos_takeover", task_id=task_id, status=status.status, executor=worker_of(executor, task_id),
                 owner=untrusted(worker_of(status.executor_id, task_id)), steps=steps)  # fmt: skip
        DBOS.resume_workflow(task_id, queue_name=queue_name(task_id))
    else:
        if status.status == "ENQUEUED" and status.queue_name != queue_name(task_id):
            DBOS.resume_workflow(task_id, queue_name=queue_name(task_id))  # left on a queue nobody listens to
        run.emit("dbos_recover", task_id=task_id, status=status.status, steps=steps)
    return DBOS.retrieve_workflow(task_id)


def workflow_failed(task_id: str, status: str, error: object, hint: str) -> str:
    """Two lines for a workflow DBOS recorded as ended without a result: why (the error's first line), what to do."""
    reason = str(error).split("\n")[0].strip() if error is not None else ""
    reason = untrusted(reason) if reason else texts.DBOS_NO_REASON
    failed = texts.DBOS_WORKFLOW_FAILED.format(task_id=task_id, status=status, error=reason)
    return f"{failed}\n{hint}"


def is_damaged(err: BaseException) -> bool:
    """Whether a database error says the SQLite file is not a database (or a damaged one)."""
    orig = getattr(err, "orig", None) or err
    return getattr(orig, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def main(options, run: Run, client, env=os.environ) -> str:
    """`python -m harness --engine dbos [--resume]`: the task as a DBOS workflow (see the module's docstring)."""
    try:
        return _main(options, run, client, env)
    except HarnessError as err:
        raise HarnessError(scrub(str(err))) from None


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
            if not db.sqlite.exists():  # (a task of the files was refused by cli(): harness/modes.py)
                fresh = resume_command(run.workdir, db, task_id, options, env, resume=False)
                raise HarnessError(texts.DBOS_NO_DATABASE.format(path=run.workdir / DB_FILE, command=fresh))
        debug = settings.debug_on(env)
        try:
            if not options.resume and db.default:  # the previous database goes with the previous checkpoint
                _fresh(run)
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
                _fresh(run)
            watch = Watch(db, lock, deadline, task_id)
            watch.start()
            with launched(db.url, executor, debug, queues=[queue_name(task_id)]):
                if options.resume:
                    handle = recover(run, task_id, status, steps, executor)
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
            print(texts.INTERRUPTED, file=sys.stderr, flush=True)
            os._exit(130)  # the workflow stays PENDING in the database: --resume recovers it
        except DATABASE_ERRORS as err:
            if db.default and is_damaged(err):
                raise HarnessError(
                    texts.DBOS_DB_DAMAGED.format(db=db.shown, detail=database_detail(err))
                ) from None
            raise HarnessError(
                texts.DBOS_CANNOT_OPEN.format(db=db.shown, detail=database_detail(err))
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
        command = resume_command(workdir, db, task_id, options, env, resume=False)
        raise HarnessError(texts.DBOS_NO_WORKFLOW.format(task_id=task_id, db=db.shown, command=command))
    if status.status not in ("PENDING", "ENQUEUED", "SUCCESS"):
        hint = failed_hint(db, task_id, workdir, options, env)
        raise HarnessError(workflow_failed(task_id, status.status, status.error, hint))
    if status.status != "SUCCESS" and status.app_version not in (None, APP_VERSION):
        other = resume_command(workdir, db, f"{task_id}-2", options, env, resume=False)
        raise HarnessError(texts.DBOS_OTHER_VERSION.format(task_id=task_id, version=untrusted(
            status.app_version), command=other))  # fmt: skip
