"""Randomized kill benchmark: real `python -m harness` processes SIGKILLed at random moments, resumed until done, in
every mode: the lesson's, --parallel, --idempotent, both, and --engine dbos on SQLite and on PostgreSQL.

Usage: python bench/kill_random.py [--runs N] [--modes M,M,...] [--seed S] [--slow-ms MS] [--kill-chance P]
                                  [--aim events|time] [--json]

Each of N tasks per mode starts with a fresh run in its own folder. Every process (the fresh run and each `--resume`,
always with the mode's own flags) is SIGKILLed with probability P (default 0.7), else left to finish: after a random
number of the events it reports (0 up to a clean run's count) plus a random part of a step (--aim events, the
default: every moment is reached however slow the machine is), or after a random delay within a clean run's time
(--aim time: on a busy machine most of those land in start-up). HARNESS_SLOW_MS (default 10) spreads the steps so
the moments land everywhere: in start-up, inside a save, between a tool's effect and its record, after point B. A kill before anything was saved leaves nothing to resume:
the harness says so and the task starts again fresh. After every process:

  - no traceback (nor "Exception ignored") on stderr; an exit of 0, -9, or 1 saying "nothing to resume", and any
    other ending counts as a violation with its one-line reason;
  - file modes: the checkpoint and ledger on disk load with the strict loaders (the version-2 loader reads both
    versions and checks the ledger); every tool_use in the checkpoint has its tool_result; mode.json names the mode
    (and is absent for the lesson's);
  - no side effect beyond what the mode promises. write_report's starts are tool-runs.log's lines (written before the
    tool runs). The lesson's and --parallel: each call starts at most once, ever. --idempotent: a call starts again
    only if its report did not carry its key when the process began (so its first start never wrote), and at most
    once a process. --engine dbos: a call starts again only in the process after a kill that came before DBOS
    recorded its step (no effect_written for it in the killed process's events: at-least-once exactly where a crash
    forces it), and at most once a process. A call the ledger recorded has started;
and when the task is done: nothing pending and the closing message saved (file modes); no false success: a closing
line that says the task is done has every output on disk with exactly the bytes of a clean run (its idempotency key
line included); the idempotent modes recover exactly (never the honest "unknown").

Prints the counts per mode (tasks, finished, processes, kills, resumes, fresh restarts, violations, seconds) and
where the kills landed (the last event each killed process reported). Exit status 1 if any invariant was violated.
PostgreSQL: a throwaway cluster in a temporary folder (initdb, pg_ctl, as in tests/test_dbos.py); without the server
binaries that mode is skipped with a note (or fails with --require-postgres).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import HarnessError, load_effects
from harness.beyond.modes import read_mode
from harness.beyond.parallel import load_checkpoint_v2, pairing_problem

# No checkpoint yet, no workflow or database yet, or not even the folder: the harness says so, and to start again.
NOTHING_TO_RESUME = re.compile(r"--resume する対象(のワークフロー)?がありません")
KEY_LINE = re.compile(r"<!-- 冪等キー: ([A-Za-z0-9_-]+) -->")
MODES = {
    "lesson": [],
    "parallel": ["--parallel"],
    "idempotent": ["--idempotent"],
    "parallel+idempotent": ["--parallel", "--idempotent"],
    "dbos-sqlite": ["--engine", "dbos"],
    "dbos-postgres": ["--engine", "dbos"],
}
OUTPUTS = ("report.txt", "summary.txt")


def child_env(slow_ms: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["HARNESS_SLOW_MS"] = str(slow_ms)
    return env


class Mode:
    """How to run one mode: its flags and settings, and what it promises."""

    def __init__(self, name: str, env: dict, database_url: str | None = None) -> None:
        self.name, self.flags = name, MODES[name]
        self.engine = name.startswith("dbos")
        self.idempotent = "idempotent" in name
        self.env, self.database_url = env, database_url
        self.expected: dict[str, bytes] = {}  # the outputs of a clean run
        self.clean_events = 0  # how many events a clean run reports

    def task_env(self, task: str) -> dict:
        env = dict(self.env)
        if self.database_url:  # one database for all tasks: each its own workflow id and worker
            env.update(HARNESS_DATABASE_URL=self.database_url, HARNESS_TASK_ID=task, HARNESS_EXECUTOR_ID=task)
        return env

    def start(self, work: Path, resume: bool, task: str, events: Path | None = None) -> subprocess.Popen:
        argv = [
            sys.executable,
            "-m",
            "harness",
            *self.flags,
            "--workdir",
            str(work),
            *(["--resume"] * resume),
        ]
        env = self.task_env(task)
        if events is not None:
            env["HARNESS_EVENTS_FILE"] = str(events)
        return subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
        )


def read_events(events: Path, offset: int) -> list[dict]:
    """The events a process reported (its events file from `offset` on)."""
    try:
        with open(events, "rb") as f:
            f.seek(offset)
            lines = [ln for ln in f.read().decode("utf-8", "replace").splitlines() if ln.endswith("}")]
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in lines]


def wait_for_events(
    proc: subprocess.Popen, events: Path, offset: int, count: int, limit_s: float = 300
) -> None:
    """Until the process has reported `count` events (or has ended): so a kill can aim at any moment of the run,
    however slow the machine is."""
    deadline = time.monotonic() + limit_s
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with open(events, "rb") as f:
                f.seek(offset)
                if f.read().count(b"\n") >= count:
                    return
        except FileNotFoundError:
            if count == 0:
                return
        time.sleep(0.002)


def landed(events: list[dict]) -> str:
    """Where a kill landed: the last event the killed process reported."""
    if not events:
        return "(no event yet: start-up)"
    event = dict(events[-1])
    kind, turn, name = event.pop("kind"), event.get("turn"), event.get("name") or event.get("pending")
    return " ".join(str(x) for x in (f"after {kind}", name, f"turn {turn}" if turn else None) if x)


def clean_run(mode: Mode, folder: Path) -> float:
    """Three unkilled runs: the median wall time (the window the random delays are drawn from); the outputs of a
    clean run (what a finished task must have, byte for byte)."""
    times = []
    folder.mkdir(parents=True, exist_ok=True)  # for the events files: the harness makes no folder for them
    for i in range(3):
        began = time.perf_counter()
        proc = mode.start(folder / f"probe{i}", False, f"probe-{mode.name}-{i}", folder / f"probe{i}.events")
        _, err = proc.communicate()
        times.append(time.perf_counter() - began)
        if proc.returncode != 0:
            raise SystemExit(f"{mode.name}: a clean run failed: {err.strip()}")
    mode.clean_events = len(read_events(folder / "probe0.events", 0))
    mode.expected = {
        n: (folder / "probe0" / n).read_bytes() for n in OUTPUTS if (folder / "probe0" / n).exists()
    }
    return sorted(times)[1]


def tool_log(work: Path) -> list[str]:
    path = work / "tool-runs.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def keys_on_disk(work: Path) -> set[str]:
    """The idempotency keys the outputs carry right now (their first line)."""
    keys = set()
    for name in OUTPUTS:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            found = KEY_LINE.fullmatch((work / name).read_text(encoding="utf-8").split("\n", 1)[0])
            if found:
                keys.add(found.group(1))
    return keys


class Task:
    """One task's history: what each process started, and what the engine recorded."""

    def __init__(self, mode: Mode, work: Path | None) -> None:
        self.mode, self.work = mode, work
        self.starts: Counter = Counter()  # write_report id -> starts so far
        self.recorded: set[str] = (
            set()
        )  # engine: write_report ids whose step DBOS recorded (an event said so)
        self.in_flight: set[str] = set()  # engine: ids started by a killed process before their record

    def check_process(
        self, keys_before: set[str], new_lines: list[str], events: list[dict], killed: bool
    ) -> list[str]:
        """The side-effect invariants for one process: its new tool-runs.log lines against the mode's promise."""
        problems = []
        started = Counter(line.split()[1] for line in new_lines if line.startswith("write_report "))
        for call, n in started.items():
            again = self.starts[call] > 0
            if n > 1:
                problems.append(f"write_report {call} started {n} times in one process")
            if again and not (self.mode.idempotent or self.mode.engine):
                problems.append(f"write_report {call} started again (the lesson's promise: at most once)")
            if again and self.mode.idempotent and call in keys_before:
                problems.append(
                    f"write_report {call} ran again although its report already carried key {call}"
                )
            if again and self.mode.engine and call not in self.in_flight:
                problems.append(f"write_report {call} ran again although DBOS had recorded its step")
            self.starts[call] += n
        if self.mode.engine:
            for e in events:
                if e.get("kind") == "effect_written" or e.get("what") == "effect_written":
                    self.recorded.add(e.get("id"))
            if killed:  # started, not recorded before a kill: DBOS runs the step again (at-least-once)
                self.in_flight |= set(started)
            self.in_flight -= self.recorded
        return problems

    def check_disk(self, finished: bool, last_line: str) -> list[str]:
        """The state on disk after a process, and the outputs when the task is done."""
        work, problems, cp = self.work, [], None
        if not self.mode.engine:
            try:
                if (work / "checkpoint.json").exists():
                    cp = load_checkpoint_v2(
                        work / "checkpoint.json"
                    )  # both versions, and the ledger beside it
                effects = load_effects(work / "effects.json")
                recorded_mode = read_mode(work)
            except HarnessError as err:
                return [f"a state file does not load: {str(err).splitlines()[0]}"]
            if cp is not None and recorded_mode != (None if self.mode.name == "lesson" else self.mode.name):
                problems.append(f"mode.json names {recorded_mode!r}")
            for call, entry in effects.items():
                if entry["name"] == "write_report" and not self.starts[call]:
                    problems.append(f"the ledger records write_report {call}, tool-runs.log never shows it")
            if cp is not None:
                problem = pairing_problem(
                    cp["messages"]
                )  # a closing message with a tool_use would be unanswered too
                if problem:
                    problems.append(f"unpaired tool_use in checkpoint.json: {problem[:80]}")
        if not finished:
            return problems
        if not self.mode.engine and (
            cp is None or cp["pendingToolUses"] or cp["messages"][-1]["role"] != "assistant"
        ):
            problems.append("finished with a pending call, or without the closing message saved")
        done_ok = last_line in ("[done] report.txt にレポートを書き出しました。タスク完了。",
                                "[done] report.txt と summary.txt を書き出しました。タスク完了。")  # fmt: skip
        if self.mode.idempotent and not done_ok:
            problems.append(f"an idempotent task did not recover exactly: {last_line[:80]}")
        if done_ok:  # no false success: the outputs are there, exactly those of a clean run
            for name, data in self.mode.expected.items():
                if not (work / name).exists() or (work / name).read_bytes() != data:
                    problems.append(f"finished as done, but {name} is not the clean run's")
        return problems


@contextlib.contextmanager
def postgres_cluster():
    """A throwaway PostgreSQL cluster (initdb, pg_ctl) in a temporary folder, reached over a unix socket; yields its
    URL, or None without the server binaries. As root, the cluster runs as postgres (or nobody): postgres refuses
    root."""
    found = shutil.which("initdb") or next(
        iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))[-1:]), None
    )
    if found is None:
        yield None
        return
    folder = Path(
        tempfile.mkdtemp(prefix="kill-random-pg-")
    )  # not inside a root-only folder: the server's user
    bindir = Path(found).resolve().parent
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        try:
            user = pwd.getpwnam("postgres").pw_name
        except KeyError:
            user = "nobody"
        shutil.chown(folder, user)
        as_user = ["runuser", "-u", user, "--"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = folder / "data"
    subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                    "--no-locale", "--no-sync"], check=True, capture_output=True, timeout=120)  # fmt: skip
    options = f"-k {folder} -c listen_addresses= -p {port} -F"
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"),
                    "-w", "start"], check=True, capture_output=True, timeout=120)  # fmt: skip
    try:
        yield f"postgresql://postgres@/bench?host={folder}&port={port}"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60, check=False)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


def run_mode(mode: Mode, args, rng: random.Random, tmp: Path) -> tuple[Counter, Counter, list[str], float]:
    """Every task of one mode to its end: the counts, where the kills landed, the violations, the seconds."""
    counts, where, violations = Counter(), Counter(), []
    began = time.perf_counter()
    window = clean_run(mode, tmp / "probes")
    for number in range(args.runs):
        name = f"{mode.name.replace('+', '-')}-{args.seed}-{number}"
        work = tmp / name
        task = None
        resume, done, attempt = False, False, 0
        events = tmp / f"{name}.events.jsonl"
        while not done:
            attempt += 1
            if attempt > 50:
                violations.append(f"task {number}: not finished after 50 processes")
                break
            kill = rng.random() < args.kill_chance
            offset = events.stat().st_size if events.exists() else 0
            keys_before = keys_on_disk(work)
            lines_before = len(tool_log(work)) if resume else 0  # a fresh run starts a new tool-runs.log
            if not resume:
                task = Task(mode, work)
            proc = mode.start(work, resume, name, events)
            counts["processes"] += 1
            counts["resumes" if resume else "fresh runs"] += 1
            if kill:
                if args.aim == "events":  # after the k-th event of this process, within the step that follows
                    wait_for_events(proc, events, offset, rng.randint(0, mode.clean_events))
                    time.sleep(rng.uniform(0, args.slow_ms * 1.5 / 1000))
                else:
                    time.sleep(rng.uniform(0, window * 1.1))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate()
            code = proc.returncode
            reported = read_events(events, offset)
            if "Traceback" in err or "Exception ignored" in err:
                violations.append(f"task {number}: traceback on stderr: {err.strip().splitlines()[-1]}")
            if code == -9:
                counts["kills"] += 1
                where[landed(reported)] += 1
                resume = True
            elif code == 0:
                done = True
            elif code == 1 and NOTHING_TO_RESUME.search(err):
                counts["fresh restarts (nothing to resume)"] += 1
                resume = False
            else:
                violations.append(f"task {number}: exit {code}: {' '.join(err.split())[:200]}")
            new_lines = tool_log(work)[lines_before:]
            found = task.check_process(keys_before, new_lines, reported, killed=code == -9)
            last = out.strip().splitlines()[-1] if done and out.strip() else ""
            found += task.check_disk(finished=done, last_line=last)
            violations.extend(f"task {number}: {p}" for p in found)
            if code not in (0, -9, 1) or (code == 1 and not NOTHING_TO_RESUME.search(err)):
                break
        counts["tasks finished"] += done
    return counts, where, violations, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=50, help="tasks per mode, each run to its end (default 50)"
    )
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of: {', '.join(MODES)}")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument(
        "--slow-ms", type=int, default=10, help="HARNESS_SLOW_MS for every process (default 10)"
    )
    parser.add_argument("--kill-chance", type=float, default=0.7, help="chance each process is killed (0.7)")
    parser.add_argument(
        "--aim",
        choices=("events", "time"),
        default="events",
        help="kill after a random number of the process's events, plus a random part of a step (default), or after "
        "a random delay within a clean run's time (most kills then land in start-up on a slow machine)",
    )
    parser.add_argument(
        "--require-postgres", action="store_true", help="fail instead of skipping without initdb"
    )
    parser.add_argument("--json", action="store_true", help="print the counts as one JSON line too")
    args = parser.parse_args()
    names = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODES]
    if unknown:
        parser.error(f"unknown mode {unknown[0]!r}; the modes are {', '.join(MODES)}")
    rng = random.Random(args.seed)
    env = child_env(args.slow_ms)
    results, where, violations, skipped = {}, Counter(), [], []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kill-random-") as tmp, contextlib.ExitStack() as stack:
        for name in names:
            url = None
            if name == "dbos-postgres":
                url = stack.enter_context(postgres_cluster())
                if url is None:
                    if args.require_postgres:
                        raise SystemExit("--require-postgres: no PostgreSQL server binaries (initdb, pg_ctl)")
                    skipped.append(name)
                    continue
            folder = Path(tmp) / name.replace("+", "-")
            folder.mkdir()
            counts, landed_here, found, seconds = run_mode(Mode(name, env, url), args, rng, folder)
            results[name] = {**counts, "violations": len(found), "seconds": round(seconds, 1)}
            where.update({f"{name}: {k}": v for k, v in landed_here.items()})
            violations += [f"{name} {v}" for v in found]
    elapsed = time.perf_counter() - began
    total = Counter()
    for row in results.values():
        total.update({k: v for k, v in row.items() if k != "seconds"})
    print(
        f"tasks {args.runs * len(results)}, finished {total['tasks finished']}, processes {total['processes']}, "
        f"kills {total['kills']}, resumes {total['resumes']}, "
        f"fresh restarts {total['fresh restarts (nothing to resume)']}, violations {len(violations)}, "
        f"elapsed {elapsed:.1f} s"
    )
    print(
        f"{'mode':22} {'tasks':>5} {'finished':>8} {'processes':>9} {'kills':>5} {'violations':>10} {'seconds':>8}"
    )
    for name, row in results.items():
        print(
            f"{name:22} {args.runs:5d} {row.get('tasks finished', 0):8d} {row.get('processes', 0):9d} "
            f"{row.get('kills', 0):5d} {row['violations']:10d} {row['seconds']:8.1f}"
        )
    for name in skipped:
        print(f"{name:22} skipped: no PostgreSQL server binaries (initdb, pg_ctl)")
    print(
        f"(seed {args.seed}, HARNESS_SLOW_MS={args.slow_ms}, kill chance {args.kill_chance}, aim {args.aim}, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores)"
    )
    print("where the kills landed (the last event the killed process reported), the 12 most frequent:")
    for line, n in where.most_common(12):
        print(f"  {n:5d}  {line}")
    for v in violations[:40]:
        print("VIOLATION", v)
    if args.json:
        print(json.dumps({"tasks": args.runs * len(results), "modes": results, "violations": len(violations),
                          "elapsed_s": round(elapsed, 1)}, ensure_ascii=False))  # fmt: skip
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
