"""Time from a click on the Crash Lab's buttons to updated views (in-kernel runs), for each scenario.

Usage: python bench/crashlab_click.py [RUNS]   (default 21)
"views" is when every file view, the facts panel, the transcript and the branch are updated; "with timeline" adds
the matplotlib picture, drawn once the run ends. Crash points: ② on write_report (lesson and idempotent: after-tool-run:3;
parallel: after-tool-run:4, toolu_04 in the middle of its second turn). 「①と②を比べる」 crashes twice, resumes twice
and draws the two disks (lesson and idempotent; it is off for the parallel scenario). "シナリオ切り替え" is a change
of the selector (the list of crash points rebuilt, the folder emptied).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness.lab.crashlab import CrashLab

CRASH = {
    "lesson": ("after-tool-run", 3),
    "parallel": ("after-tool-run", 4),
    "idempotent": ("after-tool-run", 3),
}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    results: dict[str, list[float]] = {}

    def record(name: str, ms: float) -> None:
        results.setdefault(name, []).append(ms)

    with tempfile.TemporaryDirectory() as tmp:
        lab = CrashLab(Path(tmp) / "lab")
        marks: dict[str, float] = {}
        draw = lab._draw_timeline

        def timed_draw() -> None:
            marks["views"] = time.perf_counter()
            draw()

        lab._draw_timeline = timed_draw
        for scenario, (moment, n) in CRASH.items():  # warm: imports, fonts, each scenario's crash points
            lab.scenario.value = scenario
            lab.moment.value, lab.turn.value = moment, n
            lab.run_button.click()
            lab.resume_button.click()
        for _ in range(runs):
            for scenario, (moment, n) in CRASH.items():
                start = time.perf_counter()
                lab.scenario.value = scenario
                record("シナリオ切り替え", (time.perf_counter() - start) * 1000)
                lab.moment.value, lab.turn.value = moment, n
                for name, button in (("実行", lab.run_button), ("再開", lab.resume_button)):
                    start = time.perf_counter()
                    button.click()
                    end = time.perf_counter()
                    record(f"{scenario} {name}: views", (marks["views"] - start) * 1000)
                    record(f"{scenario} {name}: with timeline", (end - start) * 1000)
                if scenario != "parallel":
                    start = time.perf_counter()
                    lab.compare_button.click()
                    record(f"{scenario} ①と②を比べる", (time.perf_counter() - start) * 1000)
    for name, values in results.items():
        print(f"{name:34s} median {statistics.median(values):6.1f} ms  max {max(values):6.1f} ms")
    print(f"({runs} runs each, python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
