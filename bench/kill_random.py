"""Randomized kill benchmark: real `python -m harness` processes SIGKILLed at random moments, resumed until done.

Usage: python bench/kill_random.py [--runs N] [--seed S] [--slow-ms MS] [--kill-chance P] [--json]

Each of N tasks starts with a fresh run in its own folder. Every process (the fresh run and each `--resume`) is
SIGKILLed after a random delay with probability P (default 0.7), else left to finish; HARNESS_SLOW_MS (default 10)
spreads the steps so the moments land everywhere: in start-up, inside a save, between a tool's effect and its
ledger record, after point B. A kill before the first checkpoint leaves nothing to resume: the harness says so and
the task starts again fresh. After every process the folder is checked:

  - no traceback (nor "Exception ignored") on stderr, and no exit other than 0, -9, or 1 saying "nothing to resume";
  - every checkpoint and ledger on disk loads with the strict loaders (load_checkpoint also checks the ledger);
  - in the checkpoint, every tool_use is answered by its tool_result (the API's pairing rule);
  - write_report ran at most once per tool_use_id (tool-runs.log); exactly once if the ledger recorded it;
and when the task is done: nothing pending, the conversation ends with the model's closing message.

Prints the counts (tasks, processes, kills, resumes, fresh restarts, violations, elapsed) and where the kills
landed (the last event each killed process reported). Exit status 1 if any invariant was violated.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import HarnessError, load_checkpoint, load_effects
from harness.models import pairing_problem

NOTHING_TO_RESUME = "--resume する対象がありません"  # no checkpoint yet, or not even the folder


def child_env(slow_ms: int) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["HARNESS_SLOW_MS"] = str(slow_ms)
    return env


def start(work: Path, resume: bool, env: dict, events: Path | None = None) -> subprocess.Popen:
    argv = [sys.executable, "-m", "harness", "--workdir", str(work), *(["--resume"] if resume else [])]
    if events is not None:
        env = {**env, "HARNESS_EVENTS_FILE": str(events)}
    return subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )


def last_event(events: Path, offset: int) -> str:
    """The last event a process reported (its events file from `offset` on): where a kill landed."""
    try:
        with open(events, "rb") as f:
            f.seek(offset)
            lines = [ln for ln in f.read().decode("utf-8", "replace").splitlines() if ln.endswith("}")]
    except FileNotFoundError:
        lines = []
    if not lines:
        return "(no event yet: start-up)"
    event = json.loads(lines[-1])
    kind, turn, name = event.pop("kind"), event.get("turn"), event.get("name") or event.get("pending")
    return " ".join(str(x) for x in (f"after {kind}", name, f"turn {turn}" if turn else None) if x)


def clean_run_seconds(env: dict, folder: Path) -> float:
    """The median wall time of three unkilled runs: the window the random delays are drawn from."""
    times = []
    for i in range(3):
        began = time.perf_counter()
        proc = start(folder / f"probe{i}", False, env)
        proc.communicate()
        times.append(time.perf_counter() - began)
    return sorted(times)[1]


def check_disk(work: Path, finished: bool) -> list[str]:
    """The invariants, as violations (empty when all hold)."""
    problems = []
    cp = None
    try:
        if (work / "checkpoint.json").exists():
            cp = load_checkpoint(work / "checkpoint.json")
        effects = load_effects(work / "effects.json")
    except HarnessError as err:
        return [f"a state file does not load: {str(err).splitlines()[0]}"]
    log = (
        (work / "tool-runs.log").read_text(encoding="utf-8").splitlines()
        if (work / "tool-runs.log").exists()
        else []
    )
    runs = Counter(line for line in log if line.startswith("write_report "))
    for line, count in runs.items():
        if count > 1:
            problems.append(f"{line} ran {count} times")
    for tool_use_id, entry in effects.items():
        if entry["name"] == "write_report" and runs[f"write_report {tool_use_id}"] != 1:
            problems.append(
                f"the ledger records write_report {tool_use_id}, tool-runs.log shows it {runs[f'write_report {tool_use_id}']} times"
            )
    if cp is not None:
        problem = pairing_problem(cp["messages"])  # a closing message with a tool_use would be unanswered too
        if problem:
            problems.append(f"unpaired tool_use in checkpoint.json: {problem[:80]}")
    if finished:
        if cp is None or cp["pendingToolUse"] is not None:
            problems.append("finished with a pending call (or no checkpoint)")
        elif cp["messages"][-1]["role"] != "assistant":
            problems.append("finished, but the closing message is not saved")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="tasks to run to the end (default 300)")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument(
        "--slow-ms", type=int, default=10, help="HARNESS_SLOW_MS for every process (default 10)"
    )
    parser.add_argument("--kill-chance", type=float, default=0.7, help="chance each process is killed (0.7)")
    parser.add_argument("--json", action="store_true", help="print the counts as one JSON line too")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    env = child_env(args.slow_ms)
    counts = Counter()
    landed = Counter()
    violations: list[str] = []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kill-random-") as tmp:
        window = clean_run_seconds(env, Path(tmp))
        for task in range(args.runs):
            work = Path(tmp) / f"t{task}"
            resume, done, attempt = False, False, 0
            while not done:
                attempt += 1
                if attempt > 50:
                    violations.append(f"task {task}: not finished after 50 processes")
                    break
                kill = rng.random() < args.kill_chance
                events = Path(tmp) / f"events-{task}.jsonl"
                offset = events.stat().st_size if events.exists() else 0
                proc = start(work, resume, env, events)
                counts["processes"] += 1
                counts["resumes" if resume else "fresh runs"] += 1
                if kill:
                    time.sleep(rng.uniform(0, window * 1.1))
                    if proc.poll() is None:
                        proc.send_signal(signal.SIGKILL)
                _, err = proc.communicate()
                code = proc.returncode
                if "Traceback" in err or "Exception ignored" in err:
                    violations.append(f"task {task}: traceback on stderr: {err.strip().splitlines()[-1]}")
                if code == -9:
                    counts["kills"] += 1
                    landed[last_event(events, offset)] += 1
                    resume = True
                elif code == 0:
                    done = True
                elif code == 1 and NOTHING_TO_RESUME in err:
                    counts["fresh restarts (nothing to resume)"] += 1
                    resume = False
                else:
                    violations.append(f"task {task}: exit {code}: {err.strip()[:160]}")
                    break
                violations.extend(f"task {task}: {p}" for p in check_disk(work, finished=done))
            counts["tasks finished"] += done
    elapsed = time.perf_counter() - began
    print(
        f"tasks {args.runs}, finished {counts['tasks finished']}, processes {counts['processes']}, "
        f"kills {counts['kills']}, resumes {counts['resumes']}, "
        f"fresh restarts {counts['fresh restarts (nothing to resume)']}, violations {len(violations)}, "
        f"elapsed {elapsed:.1f} s"
    )
    print(
        f"(seed {args.seed}, HARNESS_SLOW_MS={args.slow_ms}, kill chance {args.kill_chance}, "
        f"delays drawn from 0-{window * 1.1 * 1000:.0f} ms, python {sys.version.split()[0]}, {os.cpu_count()} cores)"
    )
    print("where the kills landed (the last event the killed process reported):")
    for line, n in landed.most_common():
        print(f"  {n:5d}  {line}")
    for v in violations[:20]:
        print("VIOLATION", v)
    if args.json:
        print(
            json.dumps(
                {"tasks": args.runs, **counts, "violations": len(violations), "elapsed_s": round(elapsed, 1)},
                ensure_ascii=False,
            )
        )
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
