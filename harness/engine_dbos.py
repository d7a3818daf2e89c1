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

This module imports dbos (and SQLAlchemy): `harness.__main__` imports it only for --engine dbos.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sqlite3
import stat
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from dbos import DBOS, DBOSClient, DBOSConfig, DBOSPortableJSONSerializer, SetWorkflowID
from sqlalchemy.exc import SQLAlchemyError

from . import texts
from .crash import CrashPlan
from .errors import HarnessError
from .files import read_bytes
from .lock import hold_workdir
from .loop import MAX_TURNS, final_text
from .models import APIError, ResponseRefused
from .run import Run
from .tools import TOOL_SCHEMAS, ToolError, execute_tool, inside, write_report
from .vocab import MARKER_FILE, WRITER_LABELS
from .workdir import start_fresh

APP_NAME = "harness"
# Fixed, so a workflow started before an edit of this file is still recovered after it (DBOS recovers only the
# workflows of the running application version, which it would otherwise compute from the code).
APP_VERSION = "lesson6-dbos-1"
QUEUE = "harness-tasks"  # the task is enqueued here, so recovery hands it back to a queue polled every POLL_S
POLL_S = 0.02
DB_FILE = "dbos.sqlite"  # the default system database, in the work folder
DB_FILES = (DB_FILE, DB_FILE + "-journal", DB_FILE + "-wal", DB_FILE + "-shm")
DEFAULT_TASK_ID = "sales-report"
DEFAULT_EXECUTOR = "local"  # DBOS's own default executor id
EXIT_CRASHED = 137
EXIT_ERROR = 1
# After the workflow function returned, DBOS writes its final status; if that has not happened within this long, the
# database no longer takes writes (DBOS retries a locked SQLite file with a back-off, so not a few seconds only).
FINAL_WRITE_S = 30.0
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,100}")
_URL_SCHEMES = ("postgresql://", "postgresql+psycopg://", "sqlite:///")
TOOL_NAMES = tuple(schema["name"] for schema in TOOL_SCHEMAS)
DATABASE_ERRORS = (SQLAlchemyError, sqlite3.Error)

# Learner-facing lines of this engine only (texts.py holds the lesson's; these are here to keep the engine in one place).
API_FAILED_HINT = (
    "ワークフロー {task_id} は記録済みのステップのまま残っています（失敗としては記録していません）。"
    "原因が解消したら --resume で続きから再開できます（このモデル呼び出しからやり直します）。"
)
RESPONSE_NOT_STORABLE = (
    "UTF-8 で書けない文字（対になっていないサロゲート）を含みます。応答のどの部分も記録していません"
)
WORKFLOW_FAILED_HINT = (
    "この記録からは再開できません（--resume は同じエラーを返すだけです）。"
    "原因を確かめてから --resume なしで最初からやり直してください。"
)
NO_REASON = "（理由は記録されていません）"
DB_NOT_PLAIN = (
    "作業フォルダの {name} は普通のファイルではありません（{kind}）。システムデータベースとして開かず、何も書いていません。\n"
    "それが何かを確かめて取り除いてから、--resume なしで最初から実行してください。"
)
DB_KINDS = {"link": "シンボリックリンク", "hardlink": "ほかの場所と共有されたファイル（ハードリンク）",
            "folder": "フォルダ", "other": "FIFO などの特殊なファイル"}  # fmt: skip
DB_DAMAGED = (
    "システムデータベース {db} は壊れています（{detail}）。ワークフローの記録を読めないので、再開できません。\n"
    "--resume なしで最初からやり直してください（そのとき {db} は片付けられます。この実行では何も消していません）。"
)
DB_LOST = (
    "システムデータベース {db} が実行中に使えなくなりました（{detail}）。記録を書けないので、ここで止めました。\n"
    "{db} を確かめてください。置き換えられたり壊れたりしていれば --resume では続けられないので、"
    "--resume なしで最初からやり直してください。"
)
DB_REPLACED = "実行中に置き換えられたか、消されました"
DB_FINAL_WRITE = "ワークフローの終わりを {seconds:g} 秒待っても記録できません"


class _Process:
    """What this process's DBOS steps report to. DBOS keeps one application per process (its workflows and steps are
    registered globally), so the run it serves is per process too, set by main() before DBOS launches."""

    def __init__(self) -> None:
        self.run: Run | None = None
        self.client = None
        self.runs: dict[str, Run] = {}
        # (workflow id, step id) of every step executed in this process; the others were replayed from their record
        self.ran: set[tuple[str, int]] = set()
        self.db = DB_FILE  # the system database as the messages show it
        self.returned_at: float | None = None  # when the workflow function last returned (time.monotonic())

    def run_for(self, workdir: str) -> Run:
        """The run for the work folder a workflow was started with (a recovering worker may have another one)."""
        base = self.run
        if base is None:
            raise HarnessError("--engine dbos: no run set before DBOS launched")
        if Path(workdir) == base.workdir.resolve():
            return base
        if workdir not in self.runs:
            self.runs[workdir] = Run(workdir, clock=base.clock, crash=base.crash, listeners=base.listeners)
        return self.runs[workdir]


HERE = _Process()


def _executing() -> None:
    HERE.ran.add((DBOS.workflow_id, DBOS.step_id))


def stop_now(message: str, code: int = EXIT_ERROR) -> None:
    """End the process at once with `エラー: message` on stderr: nothing DBOS could record as the workflow's end, so it
    stays as the last record left it (PENDING), and no worker thread is waited for."""
    try:
        sys.stdout.flush()
        print(f"エラー: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    os._exit(code)


def stop_for_api_error(err: APIError) -> None:
    """The command line's two lines for a failed model call, and the end of the process: the step is not recorded."""
    kind = texts.API_KINDS.get(err.status, "HTTP エラー")
    message = texts.API_FAILED.format(kind=kind, status=err.status, message=texts.untrusted(err.message))
    stop_now(f"{message}\n{API_FAILED_HINT.format(task_id=DBOS.workflow_id)}")


def stop_for_database(err: BaseException | str) -> None:
    """The system database stopped taking what the engine writes: say so and end, rather than wait for it."""
    stop_now(DB_LOST.format(db=HERE.db, detail=err if isinstance(err, str) else database_detail(err)))


def database_detail(err: BaseException) -> str:
    """The driver's own words for a database error, on one line and safe for a terminal."""
    orig = getattr(err, "orig", None) or err
    text = str(orig).splitlines()[0] if str(orig) else type(orig).__name__
    return texts.untrusted(text)


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
            raise ResponseRefused(200, RESPONSE_NOT_STORABLE) from None
    except APIError as err:
        stop_for_api_error(err)
    return response


def _run_tool(workdir: str, block: dict, idempotent: bool) -> dict:
    """One tool call as a tool_result (a step: the tool runs, then DBOS records the result)."""
    _executing()
    run = HERE.run_for(workdir)
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
def task_workflow(workdir: str, task: str, idempotent: bool) -> str:
    """The lesson's loop as a workflow: every model call and every tool call a step, no checkpoint file."""
    try:
        return _task(workdir, task, idempotent)
    except DATABASE_ERRORS as err:  # a step's record could not be written: nothing after it could be either
        stop_for_database(err)
        raise  # not reached
    finally:
        HERE.returned_at = time.monotonic()


def _task(workdir: str, task: str, idempotent: bool) -> str:
    run = HERE.run_for(workdir)
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
        tool_result = tool_step(workdir, tool_use, idempotent)
        step += 1
        _told(run, step, "effect_written", turn=turns, id=tool_use["id"], name=tool_use["name"])
        if (DBOS.workflow_id, step) in HERE.ran:
            run.emit("save_b", turn=turns, step=step)  # ledger and point B are the same record here
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
            turn=data["turn"], step=data["step"], how=how, pending=texts.untrusted(data["pending"])
        )
    if what == "effect_written":
        return texts.DBOS_LINES["tool"].format(
            turn=data["turn"], step=data["step"], how=how, name=texts.untrusted(data["name"])
        )
    if what == "closing":
        return texts.DBOS_LINES["closing"].format(step=data["step"], how=how)
    if kind in texts.DBOS_LINES:
        return texts.DBOS_LINES[kind].format(**data)
    if kind in ("crash", "done", "tool_error"):
        return texts.format_event(kind, data)
    return None


def print_dbos_transcript(event) -> None:
    line = format_dbos_event(event.kind, event.data)
    if line is not None:
        print(line, flush=True)


def database_url(options, env, workdir: Path) -> tuple[str, str, Path | None]:
    """(URL, how to show it, the default SQLite file or None): --database-url, else HARNESS_DATABASE_URL, else
    dbos.sqlite in the work folder."""
    url = getattr(options, "database_url", None) or env.get("HARNESS_DATABASE_URL")
    if not url:
        path = workdir.resolve() / DB_FILE
        return f"sqlite:///{path}", DB_FILE, path
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if not url.startswith(_URL_SCHEMES):
        raise HarnessError(texts.DBOS_BAD_URL.format(url=texts.untrusted(_hide_password(url))))
    return url, texts.untrusted(_hide_password(url)), None


def _hide_password(url: str) -> str:
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def _name(env, variable: str, default: str) -> str:
    value = env.get(variable) or default
    if not _NAME.fullmatch(value):
        raise HarnessError(texts.DBOS_BAD_NAME.format(name=variable, value=texts.untrusted(value)))
    return value


def _fresh(run: Run, db_file: Path | None) -> None:
    """A fresh start: the lesson's clean-up, plus the previous system database when it is ours (in the work folder)."""
    if db_file is not None:
        folder = run.workdir
        if not os.path.lexists(folder / MARKER_FILE) and any(os.path.lexists(folder / n) for n in DB_FILES):
            raise HarnessError(texts.NOT_OUR_FOLDER.format(path=folder, files=DB_FILE))
    start_fresh(run)
    if db_file is not None:
        for name in DB_FILES:
            try:
                os.unlink(run.workdir / name)
            except FileNotFoundError:
                pass
            except OSError as err:
                raise HarnessError(
                    texts.CANNOT_CLEAN.format(path=run.workdir / name, detail=err.strerror)
                ) from None


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
            raise HarnessError(DB_NOT_PLAIN.format(name=name, kind=kind)) from None
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
            continue
        kind = ("link" if stat.S_ISLNK(info.st_mode) else "folder" if stat.S_ISDIR(info.st_mode)
                else "hardlink" if stat.S_ISREG(info.st_mode) else "other")  # fmt: skip
        raise HarnessError(DB_NOT_PLAIN.format(name=name, kind=DB_KINDS[kind]))


def file_id(path: Path | None) -> tuple[int, int] | None:
    try:
        info = os.lstat(path) if path is not None else None
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if info is not None and stat.S_ISREG(info.st_mode) else None


def wait_for_result(handle, db_file: Path | None) -> str:
    """The workflow's result, polled every POLL_S; gives up (ends the process) when the system database stops being
    usable: the SQLite file replaced or removed under the engine, a read that fails, or a finished workflow function
    whose end DBOS cannot write within FINAL_WRITE_S. DBOS itself would wait for its record forever."""
    watched = file_id(db_file)
    try:
        while handle.get_status().status in ("PENDING", "ENQUEUED"):
            if db_file is not None and file_id(db_file) != watched:
                stop_for_database(DB_REPLACED)
            returned = HERE.returned_at
            if returned is not None and time.monotonic() - returned > FINAL_WRITE_S:
                stop_for_database(DB_FINAL_WRITE.format(seconds=FINAL_WRITE_S))
            time.sleep(POLL_S)
    except DATABASE_ERRORS as err:
        stop_for_database(err)
    return handle.get_result(polling_interval_sec=POLL_S)


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
    }


def prepare(url: str, task_id: str, debug: bool = False):
    """Before launch: create the schema if missing, register the task queue, and read the task's workflow as the
    previous process left it (status, number of recorded steps), before DBOS's own recovery touches it.

    The queue is registered before launch (DBOS.migrate creates the schema, a DBOSClient writes the queue's row), so
    the launch already polls it: a recovered task is picked up within POLL_S, not after DBOS's internal queue's 1 s.
    """
    logging.getLogger("dbos").setLevel(logging.INFO if debug else logging.CRITICAL)
    DBOS.migrate(url)
    client = DBOSClient(
        system_database_url=url, application_name=APP_NAME, serializer=DBOSPortableJSONSerializer()
    )
    try:
        client.register_queue(QUEUE, polling_interval_sec=POLL_S)
        # load_output: the status's error (the reason a failed workflow ended) comes with the output
        found = client.list_workflows(workflow_ids=[task_id], load_input=False, load_output=True)
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
def launched(url: str, executor: str, debug: bool = False):
    """DBOS launched on this system database for the duration of the block (its own recovery runs at launch)."""
    _log_to_current_stderr()
    DBOS(config=dbos_config(url, executor, debug))
    try:
        DBOS.launch()
        yield
    finally:
        DBOS.destroy()


def start(run: Run, task_id: str, db: str, task: str, idempotent: bool):
    """Enqueue a new workflow under the task's id."""
    run.emit("dbos_start", task_id=task_id, db=db)
    with SetWorkflowID(task_id):
        return DBOS.retrieve_queue(QUEUE).enqueue(task_workflow, str(run.workdir.resolve()), task, idempotent)


def recover(run: Run, task_id: str, status, steps: int, executor: str):
    """--resume: hand the task's workflow (`status`, as the previous process left it) back to DBOS; its handle.

    A workflow left PENDING by this executor is handed back by DBOS.launch() itself (its recovery); one left by
    another executor (a worker that died) is taken over with DBOS.resume_workflow. --resume is the operator's word that
    the other worker is gone, as it is the lesson's word that no other process holds the checkpoint.
    """
    if status is None:
        raise HarnessError(texts.DBOS_NO_WORKFLOW.format(task_id=task_id))
    if status.status == "SUCCESS":
        run.emit("dbos_finished", task_id=task_id, status=status.status)
    elif status.status not in ("PENDING", "ENQUEUED"):
        raise HarnessError(workflow_failed(task_id, status.status, status.error))
    elif status.status == "PENDING" and status.executor_id != executor:
        run.emit("dbos_takeover", task_id=task_id, status=status.status, owner=texts.untrusted(status.executor_id),
                 executor=executor, steps=steps)  # fmt: skip
        DBOS.resume_workflow(task_id, queue_name=QUEUE)
    else:
        run.emit("dbos_recover", task_id=task_id, status=status.status, steps=steps)
    return DBOS.retrieve_workflow(task_id)


def workflow_failed(task_id: str, status: str, error: object) -> str:
    """Two lines for a workflow DBOS recorded as ended without a result: why (the error's first line), what to do."""
    reason = str(error).split("\n")[0].strip() if error is not None else ""
    reason = texts.untrusted(reason) if reason else NO_REASON
    failed = texts.DBOS_WORKFLOW_FAILED.format(task_id=task_id, status=status, error=reason)
    return f"{failed}\n{WORKFLOW_FAILED_HINT}"


def is_damaged(err: BaseException) -> bool:
    """Whether a database error says the SQLite file is not a database (or a damaged one)."""
    orig = getattr(err, "orig", None) or err
    return getattr(orig, "sqlite_errorname", "") in ("SQLITE_NOTADB", "SQLITE_CORRUPT")


def main(options, run: Run, client, env=os.environ) -> str:
    """`python -m harness --engine dbos [--resume]`: the task as a DBOS workflow (see the module's docstring)."""
    if run.crash is not None:
        if run.crash.label in WRITER_LABELS:
            raise HarnessError(texts.DBOS_NO_WRITER_LABELS.format(label=run.crash.label))
        run.crash = ProcessCrashPlan(run.crash.label, run.crash.n, run.crash.mode)
    run.listeners = [print_dbos_transcript if f is texts.print_transcript else f for f in run.listeners]
    url, shown, db_file = database_url(options, env, run.workdir)
    task_id = _name(env, "HARNESS_TASK_ID", DEFAULT_TASK_ID)
    executor = _name(env, "HARNESS_EXECUTOR_ID", DEFAULT_EXECUTOR)
    idempotent = env.get("HARNESS_IDEMPOTENT_TOOLS") == "1"
    HERE.run, HERE.client, HERE.db, HERE.returned_at = run, client, shown, None
    with hold_workdir(run.workdir):  # one process per work folder, as in the lesson's harness
        if options.resume and db_file is not None:
            refuse_odd_database_files(run.workdir)  # before anything opens them
            if not db_file.exists():
                raise HarnessError(texts.DBOS_NO_DATABASE.format(path=run.workdir / DB_FILE))
        if not options.resume and db_file is not None:
            _fresh(run, db_file)  # the previous database goes with the previous checkpoint
        debug = bool(env.get("HARNESS_DEBUG"))
        try:
            status, steps = prepare(url, task_id, debug)
            if not options.resume and status is not None:  # a database we do not own: never start over in it
                raise HarnessError(texts.DBOS_ALREADY_EXISTS.format(task_id=task_id, status=status.status))
            if not options.resume and db_file is None:
                _fresh(run, None)
            with launched(url, executor, debug):
                if options.resume:
                    handle = recover(run, task_id, status, steps, executor)
                else:
                    handle = start(run, task_id, shown, texts.TASK, idempotent)
                try:
                    text = wait_for_result(handle, db_file)
                except (HarnessError, *DATABASE_ERRORS):
                    raise
                except Exception as err:  # noqa: BLE001 (the workflow itself failed: DBOS recorded the error)
                    raise HarnessError(workflow_failed(task_id, "ERROR", err)) from None
        except KeyboardInterrupt:
            print(texts.INTERRUPTED, file=sys.stderr, flush=True)
            os._exit(130)  # the workflow stays PENDING in the database: --resume recovers it
        except DATABASE_ERRORS as err:
            if db_file is not None and is_damaged(err):
                raise HarnessError(DB_DAMAGED.format(db=shown, detail=database_detail(err))) from None
            raise HarnessError(texts.DBOS_CANNOT_OPEN.format(db=shown, detail=database_detail(err))) from None
    run.emit("done", text=text)
    return text
