"""Notebook helpers for --engine dbos: the engine's system database read as it is on disk, and what a turn costs.

The views read the SQLite file with the standard library (read-only), so showing the tables needs no DBOS import;
only measure_cost() imports dbos (through harness.beyond.engine_dbos).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from pathlib import Path

from .. import texts
from ..vocab import DB_FILE, TOOL_LOG_FILE
from . import outside_lines, read_folder, read_text, table

TASK_ID = "sales-report"


def query(workdir: Path, sql: str, *args: object) -> list[tuple]:
    """Rows of a read-only query on the work folder's system database, or on the SQLite file `workdir` names (a
    database shared through --database-url); [] when there is none yet."""
    path = Path(workdir) if Path(workdir).is_file() else Path(workdir) / DB_FILE
    if not path.exists():
        return []
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def table_names(workdir: Path) -> list[str]:
    return [r[0] for r in query(workdir, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]


def workflows(workdir: Path) -> str:
    """workflow_status: one row per workflow (what checkpoint.json's top holds: the task, is it finished)."""
    rows = query(
        workdir,
        "SELECT workflow_uuid, status, name, executor_id, queue_name, recovery_attempts FROM workflow_status "
        "ORDER BY workflow_uuid",
    )
    return table(
        [["workflow_uuid", "status", "name", "executor_id", "queue_name", "recovery_attempts"], *rows]
    )


def describe(output: str | None) -> str:
    """One step's recorded output in a few words: which tool the model named, or which tool_result came back."""
    if output is None:
        return texts.DBOS_VIEW_WORDS["no_output"]
    try:
        value = json.loads(output)
    except ValueError:
        return texts.DBOS_VIEW_WORDS["not_json"]
    if isinstance(value, dict) and value.get("type") == "message":
        uses = [b for b in value.get("content", []) if b.get("type") == "tool_use"]
        if uses:
            return " ".join(f"tool_use {b['name']} ({b['id']})" for b in uses)
        text = "".join(b.get("text", "") for b in value.get("content", []))
        return texts.DBOS_VIEW_WORDS["text"].format(text=text[:18])
    if isinstance(value, dict) and value.get("type") == "tool_result":
        first = str(value.get("content", "")).splitlines()[0] if value.get("content") else ""
        error = " is_error" if value.get("is_error") else ""
        return texts.DBOS_VIEW_WORDS["tool_result"].format(
            id=value.get("tool_use_id"), error=error, first=first[:16]
        )
    return str(value)[:40]


def steps(workdir: Path, workflow_id: str = TASK_ID) -> str:
    """operation_outputs: one row per recorded step (what effects.json and the checkpoint's messages hold)."""
    rows = query(
        workdir,
        "SELECT function_id, function_name, output, error FROM operation_outputs "
        "WHERE workflow_uuid = ? ORDER BY function_id",
        workflow_id,
    )
    body = [[fid, name, len(out or "").__str__(), describe(out) if err is None else f"error: {err[:30]}"]
            for fid, name, out, err in rows]  # fmt: skip
    return (
        table([["function_id", "function_name", *texts.DBOS_VIEW_WORDS["step_columns"]], *body])
        if body
        else texts.DBOS_VIEW_WORDS["no_steps"]
    )


def step_output(workdir: Path, function_id: int, workflow_id: str = TASK_ID) -> object:
    """One recorded step output, parsed (DBOS stores it as JSON here: the engine's portable serializer)."""
    rows = query(
        workdir,
        "SELECT output FROM operation_outputs WHERE workflow_uuid = ? AND function_id = ?",
        workflow_id,
        function_id,
    )
    return json.loads(rows[0][0]) if rows and rows[0][0] is not None else None


def recorded(workdir: Path, workflow_id: str = TASK_ID) -> int:
    """How many steps of the workflow the engine has recorded."""
    found = query(workdir, "SELECT COUNT(*) FROM operation_outputs WHERE workflow_uuid = ?", workflow_id)
    return found[0][0] if found else 0


def tool_runs(workdir: Path, name: str = "write_report") -> int:
    """How many times the tool really ran: lines of tool-runs.log, the outside world's view."""
    log = read_text(Path(workdir) / TOOL_LOG_FILE) or ""
    return sum(1 for line in log.splitlines() if line.split(" ", 1)[0] == name)


def summary(workdir: Path, workflow_id: str = TASK_ID) -> str:
    """One line each: the workflow's status and recorded steps, tool-runs.log, report.txt."""
    found = query(workdir, "SELECT status FROM workflow_status WHERE workflow_uuid = ?", workflow_id)
    wf = (
        texts.DBOS_VIEW_WORDS["workflow"].format(
            id=workflow_id, status=found[0][0], steps=recorded(workdir, workflow_id)
        )
        if found
        else texts.NOTHING
    )
    return "\n".join([f"{DB_FILE}: {wf}", *outside_lines(read_folder(workdir))])


def measure_cost(folder: Path, runs: int = 3) -> dict[str, dict[str, float]]:
    """The clean task run `runs` times in this process by each engine: ms per turn (median) and writes per turn.

    Lesson harness: every checkpoint save (points A and B, and the closing one) and every ledger write is one atomic
    file write (temp file, fsync, rename, folder fsync). DBOS (SQLite in `folder`): every
    committed transaction that wrote to the system database for the workflow (each one durable on its own),
    counted with SQLAlchemy's events on this thread: the workflow is called directly, not through the queue, so
    neither queue polling nor DBOS's background threads are counted or timed. Imports dbos (about 0.3 s the first
    time).
    """
    import statistics

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from .. import TOOL_SCHEMAS, Run, ScriptedModel, run_agent, save_checkpoint
    from ..beyond import engine_dbos as eng

    turns = 3
    writes: list[int] = []
    lesson_ms = []
    for i in range(runs):
        events: list = []
        saves: list = []

        def counted_save(path, cp, saves=saves):
            saves.append(path)
            save_checkpoint(path, cp)

        run = Run(Path(folder) / f"files-{i}", listeners=[events.append])
        t = time.perf_counter()
        run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS, save_checkpoint=counted_save)
        lesson_ms.append((time.perf_counter() - t) * 1000 / turns)
        writes.append(len(saves) + sum(1 for e in events if e.kind == "effect_written"))

    me = threading.get_ident()
    wrote: set[int] = set()  # connections with a write in their open transaction
    commits: list[int] = []

    def on_statement(conn, cursor, statement, *_):
        if threading.get_ident() == me and statement.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
            wrote.add(id(conn))

    def on_commit(conn):
        if id(conn) in wrote:
            wrote.discard(id(conn))
            commits.append(1)

    db = Path(folder) / "cost" / DB_FILE
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    url = f"sqlite:///{db.resolve()}"
    eng.HERE.run, eng.HERE.client = Run(db.parent), ScriptedModel()
    dbos_ms, dbos_writes = [], []
    eng.prepare(url, "none")
    with eng.launched(url, eng.DEFAULT_EXECUTOR):
        event.listen(Engine, "before_cursor_execute", on_statement)
        event.listen(Engine, "commit", on_commit)
        try:
            for i in range(runs):
                commits.clear()
                t = time.perf_counter()
                with eng.SetWorkflowID(f"cost-{i}"):
                    eng.task_workflow(str(db.parent.resolve()), "cost", False)
                dbos_ms.append((time.perf_counter() - t) * 1000 / turns)
                dbos_writes.append(len(commits))
        finally:
            event.remove(Engine, "before_cursor_execute", on_statement)
            event.remove(Engine, "commit", on_commit)
    return {
        "lesson": {"ms_per_turn": statistics.median(lesson_ms), "writes_per_task": statistics.median(writes)},
        "dbos": {
            "ms_per_turn": statistics.median(dbos_ms),
            "writes_per_task": statistics.median(dbos_writes),
        },
    }


def cli_many(commands: list[tuple]) -> list:
    """Run several `python -m harness` commands at once (each in its own work folder), then print each one as
    harness.lab.cli does, in the order given: the same output, in less time. A command is (workdir, args, env)."""
    from concurrent.futures import ThreadPoolExecutor

    from .process import run_harness

    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        procs = list(pool.map(lambda c: run_harness(c[0], *c[1], env=c[2]), commands))
    for (workdir, args, env), proc in zip(commands, procs):
        prefix = "".join(f"{k}={v} " for k, v in (env or {}).items())
        print(f"$ {prefix}python -m harness --workdir {workdir} {' '.join(args)}".rstrip())
        print(proc.stdout, end="")
        if proc.stderr:
            print(proc.stderr, end="", file=sys.stderr)
        print(f"EXIT={137 if proc.returncode == -9 else proc.returncode}")
    return procs


def lesson_case(folder: Path, label: str, n: int = 3) -> dict:
    """The lesson's own harness crashed at `label`:n in this process and resumed: what reconcile chose and how many
    times write_report really ran (for a side-by-side with the engine)."""
    from .. import TOOL_SCHEMAS, CrashPlan, Run, ScriptedModel, SimulatedCrash, run_agent
    from . import fixed_clock

    branches: list[str] = []
    try:
        run_agent(
            Run(folder, clock=fixed_clock, crash=CrashPlan(label, n)), ScriptedModel(), tools=TOOL_SCHEMAS
        )
    except SimulatedCrash:
        pass
    listen = [lambda e: branches.append(e.data["branch"]) if e.kind == "reconcile" else None]
    text = run_agent(
        Run(folder, clock=fixed_clock, listeners=listen), ScriptedModel(), tools=TOOL_SCHEMAS, resume=True
    )
    return {"branch": branches[0] if branches else None, "write_report": tool_runs(folder), "done": text}
