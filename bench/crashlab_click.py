"""Time from a click on the Crash Lab's buttons to updated views (in-kernel run, ② on write_report).

Usage: python bench/crashlab_click.py [RUNS]   (default 21)
"views" is when every file view, the facts panel, the transcript and the branch are updated; "with timeline" adds
the matplotlib picture, drawn once the run ends. 「①と②を比べる」 crashes twice, resumes twice and draws the two disks.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness.lab.crashlab import CrashLab


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    with tempfile.TemporaryDirectory() as tmp:
        lab = CrashLab(Path(tmp) / "lab")
        lab.moment.value, lab.turn.value = "after-tool-run", 3
        marks: dict[str, float] = {}
        draw = lab._draw_timeline

        def timed_draw() -> None:
            marks["views"] = time.perf_counter()
            draw()

        lab._draw_timeline = timed_draw
        lab.run_button.click()  # warm: imports, font cache
        lab.resume_button.click()
        lab.compare_button.click()
        results: dict[str, list[float]] = {
            "実行: views": [],
            "実行: with timeline": [],
            "再開: views": [],
            "再開: with timeline": [],
            "①と②を比べる": [],
        }
        for _ in range(runs):
            for name, button in (("実行", lab.run_button), ("再開", lab.resume_button)):
                start = time.perf_counter()
                button.click()
                end = time.perf_counter()
                results[f"{name}: views"].append((marks["views"] - start) * 1000)
                results[f"{name}: with timeline"].append((end - start) * 1000)
            start = time.perf_counter()
            lab.compare_button.click()
            results["①と②を比べる"].append((time.perf_counter() - start) * 1000)
    for name, values in results.items():
        print(f"{name:22s} median {statistics.median(values):6.1f} ms  max {max(values):6.1f} ms")
    print(f"({runs} runs each, python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
