"""The randomized kill benchmark, in small: one task in each mode (the lesson's, --parallel, --idempotent, both, and
--engine dbos on SQLite), real processes SIGKILLed at random moments and resumed until done, every invariant checked
after every process. Whatever moments the kills hit, no invariant may break: the outcome does not depend on timing.
(The full run, PostgreSQL included, is `python bench/kill_random.py`.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "kill_random.py"
MODES = ["lesson", "parallel", "idempotent", "parallel+idempotent", "dbos-sqlite"]


def test_random_kills_and_resumes_break_no_invariant_in_any_mode():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--runs", "1", "--seed", "3", "--modes", ",".join(MODES)],
        capture_output=True,
        text=True,
        timeout=900,  # only a hung run fails on time
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tasks 5, finished 5," in proc.stdout and "violations 0," in proc.stdout, proc.stdout
    for mode in MODES:
        assert any(line.split()[:3] == [mode, "1", "1"] for line in proc.stdout.splitlines()), (
            mode,
            proc.stdout,
        )
