"""The randomized kill benchmark, in small: five tasks, real processes SIGKILLed at random moments and resumed until
done, every invariant checked after every process (the full run is `python bench/kill_random.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "kill_random.py"


def test_random_kills_and_resumes_break_no_invariant():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--runs", "5", "--seed", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tasks 5, finished 5," in proc.stdout and "violations 0," in proc.stdout, proc.stdout
