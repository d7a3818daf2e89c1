"""What --engine dbos costs: DBOS's own start and stop, whole command-line runs, and one turn, on this machine.

Usage: python bench/dbos_engine.py [RUNS]   (default 7)
       python bench/dbos_engine.py --workers [N]   (default 5; needs the PostgreSQL server binaries)

1. DBOS.launch() and DBOS.destroy() on a fresh SQLite file, in a fresh process each time: with DBOS's defaults (its
   log at INFO, its notification thread polling every 1.0 s) and with the settings harness.beyond.engine_dbos uses (log at
   CRITICAL, polling every 0.01 s); the log lines DBOS prints on the way.
2. Whole processes: `python -m harness` (the lesson's files), `python -m harness --engine dbos` (a clean run), and
   `--engine dbos --resume` after a kill at moment ② on turn 3.
3. One turn of the task in one process: harness.lab.dbos_view.measure_cost (files vs DBOS on SQLite).
Medians of RUNS.

--workers: on a throwaway PostgreSQL cluster (harness/lab/postgres.py), N workers on N tasks started together (wall
time until the last ends; each folder's report and tool-runs.log checked); a worker killed by SIGKILL at moment ②
and taken over by another worker from a new folder after the first folder was deleted (time of the --resume); the
server stopped for 5 s mid-run (the worker waits and goes on: total time) and stopped for good with
HARNESS_DATABASE_DEADLINE_S=5 (time until the worker ends with its message).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LIFECYCLE = r"""
import json, sys, time
t0 = time.perf_counter()
from dbos import DBOS
t1 = time.perf_counter()
config = {"name": "bench", "system_database_url": "sqlite:///" + sys.argv[1]}
if sys.argv[2] == "harness":
    config.update(log_level="CRITICAL", notification_listener_polling_interval_sec=0.01)
DBOS(config=config)
t2 = time.perf_counter()
DBOS.launch()
t3 = time.perf_counter()
DBOS.destroy()
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "launch": t3 - t2, "destroy": t4 - t3}), file=sys.__stdout__)
"""


def lifecycle(settings: str, runs: int, env: dict) -> dict:
    samples, lines = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.run(
                [sys.executable, "-c", LIFECYCLE, str(Path(tmp) / "sys.sqlite"), settings],
                capture_output=True, text=True, env=env, check=True,
            )  # fmt: skip
        *log, last = proc.stdout.splitlines() or [""]
        samples.append(json.loads(last))
        lines.append(len(log) + len(proc.stderr.splitlines()))
    out = {k: statistics.median(s[k] for s in samples) * 1000 for k in samples[0]}
    out["log lines"] = statistics.median(lines)
    return out


def process_ms(cmd: list[str], runs: int, env: dict, before=None) -> float:
    times = []
    for _ in range(runs):
        if before:
            before()
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT)
    print("1. DBOS start and stop (fresh process and fresh SQLite file each time), median ms")
    for settings in ("defaults", "harness"):
        r = lifecycle(settings, runs, env)
        print(
            f"   {settings:9s} import dbos {r['import']:6.0f}  launch {r['launch']:6.1f}  destroy {r['destroy']:7.1f}"
            f"  log lines {r['log lines']:.0f}"
        )
    print("2. Whole processes, median ms")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        base = [sys.executable, "-m", "harness", "--workdir", str(work)]
        crash_env = {**env, "CRASH_AFTER": "after-tool-run:3"}
        cases = {
            "python -m harness (lesson files)": (base, env, None),
            "python -m harness --engine dbos": ([*base, "--engine", "dbos"], env, None),
            "--engine dbos --resume after (2)": (
                [*base, "--engine", "dbos", "--resume"],
                env,
                lambda: subprocess.run(
                    [*base, "--engine", "dbos"], env=crash_env, capture_output=True, check=False
                ),
            ),
        }
        for name, (cmd, e, before) in cases.items():
            print(f"   {name:34s} {process_ms(cmd, runs, e, before):7.0f}")
    print("3. One turn in one process (clean task, 3 turns), median ms per turn; write transactions per task")
    sys.path.insert(0, str(ROOT))
    from harness.lab.dbos_view import measure_cost

    with tempfile.TemporaryDirectory() as tmp:
        cost = measure_cost(Path(tmp), runs=runs)
    for name, c in cost.items():
        print(f"   {name:7s} {c['ms_per_turn']:6.1f} ms/turn   {c['writes_per_task']:.0f} writes/task")
    print(f"({runs} runs each, python {sys.version.split()[0]}, {os.cpu_count()} cores)")


def workers(n: int) -> None:
    import shutil
    import threading

    sys.path.insert(0, str(ROOT))
    from harness.lab.postgres import Cluster

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    env["PYTHONPATH"] = str(ROOT)
    cluster = Cluster()
    cluster.start()
    tmp = Path(tempfile.mkdtemp(prefix="harness-bench-"))

    def cmd(folder: Path, *args: str) -> list[str]:
        return [sys.executable, "-m", "harness", "--engine", "dbos", "--workdir", str(folder), *args]

    try:
        url = cluster.url("bench")
        start = time.perf_counter()
        procs = [subprocess.Popen(cmd(tmp / f"w{i}"), env={**env, "HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID":
                 f"t{i}", "HARNESS_EXECUTOR_ID": f"worker-{i}"}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for i in range(n)]  # fmt: skip
        codes = [p.wait(timeout=600) for p in procs]
        wall = time.perf_counter() - start
        ok = all((tmp / f"w{i}" / "tool-runs.log").read_text().count("write_report") == 1 for i in range(n))
        print(
            f"1. {n} workers on {n} tasks, one PostgreSQL: {wall:.1f} s wall, exit codes {codes}, "
            f"write_report once in each folder: {ok}"
        )
        a, b = tmp / "machine-a", tmp / "machine-b"
        take = {**env, "HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": "take"}
        subprocess.run(cmd(a), env={**take, "HARNESS_EXECUTOR_ID": "a", "CRASH_AFTER": "after-tool-run:3",
                       "CRASH_MODE": "sigkill"}, capture_output=True, check=False, timeout=300)  # fmt: skip
        shutil.rmtree(a)
        start = time.perf_counter()
        proc = subprocess.run(cmd(b, "--resume"), env={**take, "HARNESS_EXECUTOR_ID": "b"}, capture_output=True,
                              check=False, timeout=300)  # fmt: skip
        print(
            f"2. takeover from a new folder (the dead worker's deleted): {time.perf_counter() - start:.1f} s, "
            f"exit {proc.returncode}, report in the new folder: {(b / 'report.txt').exists()}"
        )
        for name, outage, deadline in (("back after 5 s", 5, 120), ("gone for good", None, 5)):
            out = {**env, "HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": f"outage-{deadline}",
                   "HARNESS_SLOW_MS": "500", "HARNESS_DATABASE_DEADLINE_S": str(deadline)}  # fmt: skip
            start = time.perf_counter()
            proc = subprocess.Popen(cmd(tmp / f"outage-{deadline}"), env=out, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)  # fmt: skip
            for line in proc.stdout:
                if "[step 2 " in line:
                    break
            cluster.stop()
            stopped = time.perf_counter()
            if outage is not None:
                threading.Timer(outage, cluster.start).start()
            rest, err = proc.communicate(timeout=600)
            waits = sum(line.startswith("[待機中]") for line in err.splitlines())
            print(
                f"3. server stopped mid-run, {name}: exit {proc.returncode} {time.perf_counter() - stopped:.1f} s "
                f"after the stop ({waits} [待機中] lines), finished: {rest.rstrip().endswith('タスク完了。')}"
            )
            cluster.start()
    finally:
        cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--workers":
        workers(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    else:
        main()
