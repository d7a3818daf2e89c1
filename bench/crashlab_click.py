"""Time from a click on the Crash Lab's buttons to updated views (in-kernel runs), for each scenario.

Usage:
  python bench/crashlab_click.py [RUNS]             in this process (default 21 runs)
  python bench/crashlab_click.py --browser [RUNS]   in Voila, in headless Chromium (default 11 runs)
  python bench/crashlab_click.py --browser --no-timeline [RUNS]   the same, the lab without its picture

In this process: "views" is when every file view, the facts panel, the transcript and the decision are updated; "with
timeline" adds the picture, drawn once the run ends; "messages" and "kB" are what the click sends to the page (widget
updates: each one is a message the browser parses and redraws). Crash points: ② on write_report (lesson and
idempotent: after-tool-run:3; parallel: after-tool-run:4, toolu_04 in the middle of its second turn). 「①と②を比べる」
crashes twice, resumes twice and draws the two disks (lesson and idempotent; it is off for the parallel scenario).
"シナリオ切り替え" is a change of the selector (the list of crash points rebuilt, the folder emptied).

In the browser: the presenter notebook in Voila, the lesson's ② on write_report; the time from the click (in the page)
to the status line's final text, and to the timeline's new picture, as the browser shows them (kernel, messages and
rendering included). It needs Chromium (apt-get install chromium) and starts Voila on a free local port.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ipywidgets as w
import nbformat

from harness.lab.crashlab import CrashLab

CRASH = {
    "lesson": ("after-tool-run", 3),
    "parallel": ("after-tool-run", 4),
    "idempotent": ("after-tool-run", 3),
}


def report(results: dict[str, list[float]], runs: int) -> None:
    for name, values in results.items():
        print(f"{name:40s} median {statistics.median(values):7.1f}  max {max(values):7.1f}")
    print(f"({runs} runs each, python {sys.version.split()[0]})")


def in_process(runs: int) -> None:
    results: dict[str, list[float]] = {}
    sent = {"messages": 0, "bytes": 0}
    original_send = w.Widget._send

    def counting_send(widget, msg, buffers=None):  # what a kernel would send to the page
        sent["messages"] += 1
        sent["bytes"] += len(json.dumps(msg, default=str)) + sum(len(b) for b in buffers or ())
        return original_send(widget, msg, buffers)

    w.Widget._send = counting_send

    def record(name: str, value: float) -> None:
        results.setdefault(name, []).append(value)

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
                record("シナリオ切り替え ms", (time.perf_counter() - start) * 1000)
                lab.moment.value, lab.turn.value = moment, n
                for name, button in (("実行", lab.run_button), ("再開", lab.resume_button)):
                    sent.update(messages=0, bytes=0)
                    start = time.perf_counter()
                    button.click()
                    end = time.perf_counter()
                    record(f"{scenario} {name}: views ms", (marks["views"] - start) * 1000)
                    record(f"{scenario} {name}: with timeline ms", (end - start) * 1000)
                    record(f"{scenario} {name}: messages", sent["messages"])
                    record(f"{scenario} {name}: kB sent", sent["bytes"] / 1000)
                if scenario != "parallel":
                    start = time.perf_counter()
                    lab.compare_button.click()
                    record(f"{scenario} ①と②を比べる ms", (time.perf_counter() - start) * 1000)
    w.Widget._send = original_send
    report(results, runs)


# In the page: click, then wait for the status line to change to its final text (a click first shows the reset's
# line) and for the new picture; times from performance.now(), in the browser's own clock. The next click waits for
# the picture, as a person would (the kernel draws it after the click's handler has returned).
CLICK_JS = """
async ([button, final]) => {
  const status = document.querySelector('.lab-status');
  const picture = document.querySelector('.lab-timeline');
  const before = picture ? picture.getAttribute('src') : null;
  const t0 = performance.now();
  let statusAt = null;
  const done = new Promise((resolve) => {
    const check = () => {
      if (statusAt === null && status.textContent.includes(final)) statusAt = performance.now() - t0;
      // the new picture: shown (a run first hides the old one) and not the one there before the click
      const now = picture && picture.offsetParent !== null ? picture.getAttribute('src') : null;
      if (statusAt !== null && (!picture || (now && now !== before))) {
        observer.disconnect();
        resolve([statusAt, picture ? performance.now() - t0 : null]);
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  });
  document.querySelector('button.' + button).click();
  return await done;
}
"""


LAB_CELL = "from harness.lab.crashlab import CrashLab\n\nCrashLab({})"


def in_browser(runs: int, cell: str = LAB_CELL.format("")) -> None:
    import subprocess

    from playwright.sync_api import sync_playwright

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tests"))
    from test_browser import BIN, CHROMIUM, CHROMIUM_ARGS, serve  # the browser test's recipe

    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # the presenter notebook's one cell (the lab), with or without its picture
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
        notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(notebook, folder / "nb.ipynb")
        env = {
            **__import__("os").environ,
            "JUPYTER_CONFIG_DIR": f"{tmp}/.state/config",
            "JUPYTER_RUNTIME_DIR": f"{tmp}/.state/runtime",
            "IPYTHONDIR": f"{tmp}/.state/ipython",
            "JUPYTER_PLATFORM_DIRS": "1",
        }
        proc, port = serve(
            lambda port: [str(BIN / "voila"), "nb.ipynb", "--no-browser", f"--port={port}", "--Voila.port_retries=0",
                          "--Voila.ip=127.0.0.1"],
            folder,
            env,
            "/",
        )  # fmt: skip
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"http://127.0.0.1:{port}/", timeout=90_000)
                page.wait_for_selector("button.lab-run", timeout=90_000)
                page.get_by_label("② ツール完了・台帳未記録").check()
                page.get_by_label("write_report（3ターン目）").check()
                for i in range(runs + 1):  # the first pair warms the kernel's imports and fonts: not counted
                    for name, button, final in (
                        ("実行", "lab-run", "疑似キル"),
                        ("再開", "lab-resume", "再開して完了"),
                    ):
                        status, picture = page.evaluate(CLICK_JS, [button, final])
                        if i:
                            results.setdefault(f"lesson {name}: status line ms", []).append(status)
                            if picture is not None:
                                results.setdefault(f"lesson {name}: timeline ms", []).append(picture)
                browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    report(results, runs)


def main() -> None:
    args = sys.argv[1:]
    browser = "--browser" in args
    numbers = [a for a in args if not a.startswith("--")]
    runs = int(numbers[0]) if numbers else (11 if browser else 21)
    if browser:
        in_browser(runs, LAB_CELL.format("timeline=False" if "--no-timeline" in args else ""))
    else:
        in_process(runs)


if __name__ == "__main__":
    main()
