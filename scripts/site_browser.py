"""Drive the browser edition in headless Chromium: serve site/ on 127.0.0.1, open a notebook with every request to
another host refused, run all its cells in the Pyodide kernel and hand back what they printed.

Used by tests/test_site.py and bench/site_load.py (nothing here decides what is right; the callers do).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# How long a test lets a page take to show what it waits for: a guard against a page that never shows it, not a speed
# the machine must have (two suites side by side make a run of the harness behind a button take a minute; Playwright's
# own default is 5 s).
UI_WAIT_MS = 300_000
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# Runs in the page: the open notebook's kernel, as "status/connectionStatus" ("idle/connected" once it has started),
# or "no kernel" (window.jupyterapp: exposeAppInBrowser).
KERNEL_STATE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return kernel ? kernel.status + '/' + kernel.connectionStatus : 'no kernel';
}"""
KERNEL_IDLE = "() => (" + KERNEL_STATE + ")().startsWith('idle/')"
# Runs in the page: run all cells.
RUN_ALL = """async () => {
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
}"""
# Runs in the page: the state of every code cell (execution count, outputs as saved in a notebook) and the kernel's.
CELLS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session?.kernel;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code').map(c => ({
    count: c.model.executionCount,
    running: c.promptNode ? c.promptNode.textContent.includes('*') : false,
    outputs: c.model.outputs.toJSON(),
  }));
  return {status: kernel ? kernel.status : 'none', cells};
}"""


# Runs in the page: CODE in the notebook's kernel, as a cell would; returns what it printed (and any error's name).
EXECUTE = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '';
  const future = kernel.requestExecute({code});
  future.onIOPub = (m) => {
    if (m.header.msg_type === 'stream') out += m.content.text;
    if (m.header.msg_type === 'error') out += m.content.ename + ': ' + m.content.evalue + '\\n';
  };
  await future.done;
  return out;
}"""


def execute(page, code: str) -> str:
    """Run CODE in the open notebook's kernel (not as a cell of the notebook); what it printed."""
    return page.evaluate(EXECUTE, code)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(site: Path = SITE):
    """python3 -m http.server -d SITE on a free port of 127.0.0.1 (the README's command); yields the base URL."""
    # port 0: the server takes a free port itself and says which (no window in which another run could take it)
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "-b", "127.0.0.1", "0", "-d", str(site)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        said = proc.stdout.readline()  # "Serving HTTP on 127.0.0.1 port NNNNN (http://...) ..."
        port = re.search(r" port (\d+)", said)
        if port is None:
            raise RuntimeError(f"http.server did not start: {said!r}")
        base = f"http://127.0.0.1:{port.group(1)}/"
        deadline = time.monotonic() + 600  # only a server that never answers; a request is never cut short
        while True:
            try:
                with urllib.request.urlopen(
                    base + "jupyter-lite.json", timeout=max(1.0, deadline - time.monotonic())
                ):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"http.server on {base} did not answer") from None
                time.sleep(0.2)
        yield base
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def offline_browser(playwright):
    """Chromium; every page it opens may only talk to 127.0.0.1. Yields (browser, refused), refused being the list of
    URLs the site tried to fetch from anywhere else (it should stay empty)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    refused: list[str] = []
    try:
        yield browser, refused
    finally:
        browser.close()


def new_page(browser, refused: list[str]):
    """A fresh context (empty cache, empty browser storage: a learner's first visit) whose requests stay local."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="allow")

    def route(r):
        host = urllib.parse.urlsplit(r.request.url).hostname
        if host in ("127.0.0.1", "localhost") or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    return context, context.new_page()


def open_notebook(page, base: str, path: str, timeout_s: float = 600, patience_s: float = 180) -> int:
    """Open PATH in the site and wait until its kernel is idle. JupyterLite's kernel, when the page is not
    cross-origin isolated (a plain static server), now and then stays at "connecting" for good; a learner then reloads
    the page, and so does this, after PATIENCE_S, at most twice, saying so on stderr. Returns how many reloads it took;
    on giving up, the error names the kernel's state and the page's last console lines."""
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.goto(f"{base}lab/index.html?path={urllib.parse.quote(path)}", timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    reloads = 0
    while True:
        try:
            wait_kernel(page, max(1.0, min(patience_s, deadline - time.monotonic())))
            return reloads
        except (
            Exception
        ) as error:  # playwright's TimeoutError (playwright is imported by the callers, not here)
            if type(error).__name__ != "TimeoutError":
                raise
            state = page.evaluate(KERNEL_STATE)
            if reloads == 2 or time.monotonic() >= deadline:
                tail = "\n".join(console[-20:])
                raise TimeoutError(
                    f"{path}: kernel not idle after {reloads} reloads ({state}); console:\n{tail}"
                ) from None
            reloads += 1
            print(
                f"site_browser: {path}: kernel {state} after {patience_s:.0f} s, reloading the page",
                file=sys.stderr,
            )
            page.reload(timeout=timeout_s * 1000)


def wait_kernel(page, timeout_s: float = 600) -> None:
    page.wait_for_function(KERNEL_IDLE, timeout=timeout_s * 1000, polling=250)


def run_all(page, timeout_s: float = 600) -> list[dict]:
    """Run every cell and wait until each has run or one failed; returns the code cells' states (see CELLS)."""
    wait_kernel(page, timeout_s)
    page.evaluate(RUN_ALL)
    deadline = time.monotonic() + timeout_s
    while True:
        state = page.evaluate(CELLS)
        failed = any(o.get("output_type") == "error" for c in state["cells"] for o in c["outputs"])
        finished = all(c["count"] is not None and not c["running"] for c in state["cells"])
        if state["status"] == "idle" and (finished or failed):
            return state["cells"]
        if time.monotonic() > deadline:
            raise TimeoutError(f"cells still running after {timeout_s} s: {state['status']}")
        page.wait_for_timeout(
            250
        )  # not time.sleep: the page's requests are routed only inside Playwright calls


def text_of(cells: list[dict]) -> str:
    """Everything the cells printed or displayed as text, tracebacks included, in order."""
    parts = []
    for cell in cells:
        for out in cell["outputs"]:
            if out["output_type"] == "stream":
                parts.append("".join(out["text"]) if isinstance(out["text"], list) else out["text"])
            elif out["output_type"] == "error":
                parts.append("\n".join(out.get("traceback", [])) + f"\n{out['ename']}: {out['evalue']}\n")
            else:
                text = out.get("data", {}).get("text/plain")
                if text:
                    parts.append(("".join(text) if isinstance(text, list) else text) + "\n")
    return "".join(parts)


def real_kill_at_moment_two(page, timeout_s: float = 600) -> None:
    """In the open Crash Lab: ② on write_report's turn, the real kill (the interpreter's own SIGKILL), 実行; returns
    when the page has restarted the kernel and the lab, reopened in the new interpreter, says where it died."""
    page.get_by_label("② ツール完了・台帳未記録").check()
    page.get_by_label("write_report（3ターン目）").check()
    page.get_by_label("本物のキル（Python ごと SIGKILL）").check()
    page.locator("button.lab-run").click()
    page.locator(".lab-status", has_text="after-tool-run:3 で SIGKILL され、終わりました").wait_for(
        timeout=timeout_s * 1000
    )
    wait_kernel(page, timeout_s)
