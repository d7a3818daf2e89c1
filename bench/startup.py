"""Time a clean `python -m harness` run as a whole process: median wall time of several runs.

Usage: python bench/startup.py [RUNS]   (default 21)

Prints the median for the harness and, for scale, for an empty interpreter and for `import json` alone,
each measured the same way (fresh process, bytecode cache on as on a learner's machine).
Set BENCH_NO_BYTECODE=1 to keep PYTHONDONTWRITEBYTECODE (some sandboxes set it; the package is then recompiled
at every start).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def median_ms(cmd: list[str], runs: int, env: dict) -> float:
    subprocess.run(cmd, check=True, capture_output=True, env=env)  # warm caches once, not counted
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    env = dict(os.environ)
    if not os.environ.get("BENCH_NO_BYTECODE"):
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            "python -m harness (clean run)": [
                sys.executable,
                "-m",
                "harness",
                "--workdir",
                str(Path(tmp) / "w"),
            ],
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import json'": [sys.executable, "-c", "import json"],
        }
        for name, cmd in cases.items():
            print(f"{name:32s} median {median_ms(cmd, runs, env):6.1f} ms")
    cache = "off" if "PYTHONDONTWRITEBYTECODE" in env else "on"
    print(
        f"({runs} runs each, python {sys.version.split()[0]}, bytecode cache {cache}, {os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
