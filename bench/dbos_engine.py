"""What --engine dbos costs: DBOS's own start and stop, whole command-line runs, and one turn, on this machine.

Usage: python bench/dbos_engine.py [RUNS]   (default 7)

1. DBOS.launch() and DBOS.destroy() on a fresh SQLite file, in a fresh process each time: with DBOS's defaults (its
   log at INFO, its notification thread polling every 1.0 s) and with the settings harness.engine_dbos uses (log at
   CRITICAL, polling every 0.01 s); the log lines DBOS prints on the way.
2. Whole processes: `python -m harness` (the lesson's files), `python -m harness --engine dbos` (a clean run), and
   `--engine dbos --resume` after a kill at moment ② on turn 3.
3. One turn of the task in one process: harness.lab.dbos_view.measure_cost (files vs DBOS on SQLite).
Medians of RUNS.
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


if __name__ == "__main__":
    main()
