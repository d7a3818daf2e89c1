"""The DBOS engine's worker (harness/beyond/engine_dbos.py): what this process serves (HERE), how it ends at once
(stop_now: nothing DBOS could record), its hold on its task (TaskLock), and the watch on the system database that
waits for it up to the deadline ([待機中] lines) instead of DBOS's waiting forever.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import time

import sqlalchemy as sa

from .. import texts
from ..errors import HarnessError
from ..run import Run
from ..transcript import terminal_safe
from ..vocab import DB_FILE
from .dbos_database import DATABASE_ERRORS, Database, database_detail, file_id, is_away, probe, ready, scrub

try:
    import fcntl
except ImportError:  # not on this platform: no task lock file
    fcntl = None  # type: ignore[assignment]

APP_NAME = "harness"
POLL_S = 0.02
DEFAULT_TASK_ID = "sales-report"
EXIT_ERROR = 1
# After the workflow function returned, DBOS writes its final status; if that has not happened within this long, the
# database no longer takes writes (DBOS retries a locked SQLite file with a back-off, so not a few seconds only).
FINAL_WRITE_S = 30.0
DEFAULT_DEADLINE_S = 60.0  # HARNESS_DATABASE_DEADLINE_S: how long a worker waits for an unreachable database
WAIT_LINE_S = 10.0  # a [待機中] line this often while it waits
FIRST_WAIT_LINE_S = 1.0  # the first one when the database has not answered for this long
PROBE_S = 0.5  # how often the watch asks the database


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


_STOPPING = threading.Lock()  # taken by the first thread that ends the process, never given back


def stop_now(message: str, code: int = EXIT_ERROR) -> None:
    """End the process at once with `エラー: message` on stderr: nothing DBOS could record as the workflow's end, so it
    stays as the last record left it (PENDING), and no worker thread is waited for. When two threads find the end at
    once (the watch and the workflow, say), the first one says why; the other waits here for the process to end."""
    _STOPPING.acquire()
    try:
        sys.stdout.flush()
        print(
            terminal_safe(texts.ERROR_LINE.format(message=scrub(message, HERE.secrets))),
            file=sys.stderr,
            flush=True,
        )
    except (OSError, ValueError):
        pass
    os._exit(code)


def stop_for_database(err: BaseException | str) -> None:
    """The system database stopped taking what the engine writes: say so and end, rather than wait for it."""
    detail = err if isinstance(err, str) else database_detail(err, HERE.secrets)
    if (
        HERE.target is not None and not HERE.target.default
    ):  # a shared database is never wiped by a fresh start
        stop_now(texts.DBOS_DB_LOST_SHARED.format(db=HERE.db, detail=detail, command=HERE.resume_command))
    stop_now(texts.DBOS_DB_LOST.format(db=HERE.db, detail=detail))


def await_database() -> None:
    """Block this thread until the database answers again ([待機中] lines), or end the process at the deadline.
    One thread waits and prints at a time; the others wait for it."""
    with HERE.waiting:
        wait_for_database(HERE.target, HERE.deadline, HERE.task_id, check=HERE.check)


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
        # The watch thread and a thread waiting for the database both ask: one at a time on the lock's connection
        # (two at once, the second closed what the first had already dropped: "'NoneType' ... 'close'").
        self.asking = threading.Lock()

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
        with self.asking:
            return self._check_postgres()

    def _check_postgres(self) -> str | None:
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
            return database_detail(err, self.db.secrets)
        return None


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
        while not self.stop.is_set():
            try:
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
            except Exception as err:  # noqa: BLE001 (a driver tripping over a connection the server dropped)
                if self.stop.is_set():
                    return
                if answers(self.db):
                    stop_for_database(f"{type(err).__name__}: {err}")
                await_database()  # the server went away under the driver: wait for it as for any outage


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
        except (
            Exception
        ):  # DBOS's own code tripping over a connection the server dropped ("'NoneType' ... 'close'")
            if answers(db):
                raise  # the database is there: the workflow itself failed
            await_database()


def answers(db: Database) -> bool:
    """Whether the system database answers right now (after an error that may have been its going away)."""
    try:
        return ready(db) is None
    except Exception:  # noqa: BLE001 (any way of not answering is "not now")
        return False


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
