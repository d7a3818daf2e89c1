"""How long each judge takes on the answer corpus (tests/answer_corpus): seconds per answer, median and slowest.

    .venv/bin/python bench/judge_times.py [N]     # N answers per part (default 10), taken evenly from the corpus

Every part's answers run as the corpus test runs them (tests/test_answer_corpus.py); a verdict that disagrees with
the label is counted too, so the figure is never taken on a judge that misreads its input.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import test_answer_corpus as corpus  # the corpus test's own readers


def judged(part: str, row: dict) -> str:
    """'accept' or 'reject', as the judge of PART reads ROW's answer."""
    if part == "prediction":
        return corpus.predicted(row)[0]
    if part == "fix":
        from harness.exercises.level2 import check_level2_fix

        return "accept" if check_level2_fix(row["answer"]).passed else "reject"
    if part == "repro":
        from harness.exercises.level2 import check_level2_repro

        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "level2_repro.py"
            script.write_text(row["answer"], encoding="utf-8")
            return "accept" if check_level2_repro(script).passed else "reject"
    try:
        corpus.test_answer_sheet_is_judged_as_the_lesson_demands(row)
    except AssertionError:
        return "reject" if row["label"] == "accept" else "accept"
    return row["label"]


def main(per_part: int) -> None:
    for part in ("prediction", "level1", "diagnosis", "fix", "repro"):
        rows = [p.values[0] for p in corpus.rows(part)]
        picked = rows[:: max(1, len(rows) // per_part)][:per_part]
        times, wrong = [], 0
        for row in picked:
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                verdict = judged(part, row)
            times.append(time.perf_counter() - t0)
            wrong += verdict != row["label"]
        print(
            f"{part}: {len(picked)} answers, median {statistics.median(times):.2f} s, "
            f"slowest {max(times):.2f} s, judged against the label: {wrong}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
