"""A real browser: JupyterLab and Voila in headless Chromium show the Crash Lab, and its widgets react to clicks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from site_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    UI_WAIT_MS,
    free_port,
)  # one launch recipe for every browser test

ARTIFACTS = ROOT / "test-artifacts"

sync_api = pytest.importorskip("playwright.sync_api")
sync_api.expect.set_options(timeout=UI_WAIT_MS)
if not Path(CHROMIUM).exists():
    if os.environ.get("REQUIRE_BROWSER"):
        raise RuntimeError(
            f"REQUIRE_BROWSER is set but Chromium is missing at {CHROMIUM} (apt-get install chromium)"
        )
    pytest.skip(
        "Chromium is not installed (apt-get install chromium); .ci/run installs it", allow_module_level=True
    )

BIN = Path(sys.executable).parent


def wait_for_http(url: str, proc: subprocess.Popen, output, timeout: float = 600) -> None:
    """Until URL answers. A request is never cut short while the server works on it (Voilà answers its page only
    once the notebook has run, which takes long on a busy machine; a request given up on would only be asked again);
    `timeout` only ends a server that never answers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            output.seek(0)
            said = output.read().decode("utf-8", errors="replace")
            raise RuntimeError(f"server exited with {proc.returncode}: {said[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=max(1.0, deadline - time.monotonic())):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(url)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    """A folder with a copy of the notebook, and Jupyter/IPython/matplotlib state kept out of $HOME."""
    root = tmp_path_factory.mktemp("browser")
    for name in ("crash_lab.ipynb", "crash_lab_presenter.ipynb"):
        shutil.copy(ROOT / "notebooks" / name, root / name)
    state = root / ".state"
    settings = state / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
        "IPYTHONDIR": str(state / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "JUPYTERLAB_SETTINGS_DIR": str(state / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(state / "ws"),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    SCREENS.mkdir(parents=True, exist_ok=True)
    return root, env


def stop(proc: subprocess.Popen) -> None:
    """The server ended: asked first, killed if it does not end within a minute."""
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def serve(command, cwd: Path, env: dict, ready_path: str) -> tuple[subprocess.Popen, str]:
    """COMMAND(port, base) started on a free port under a base path of its own, once READY_PATH answers there: (the
    server, its base URL). The server may not move to another port (port_retries=0: it would answer where nobody
    looks), so a port that another run took between free_port() and the server's bind ends the server, and the next
    free port is tried; the base path is this server's alone, so another run's server on that port never answers."""
    for _ in range(5):
        port, base = free_port(), f"/run-{uuid.uuid4().hex[:12]}/"
        # Its output into a file, never a pipe nobody reads while the browser works (a full pipe stops the server).
        output = tempfile.TemporaryFile()  # noqa: SIM115 (open as long as the server)
        proc = subprocess.Popen(
            command(port, base), cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT
        )
        try:
            wait_for_http(f"http://127.0.0.1:{port}{base}{ready_path}", proc, output)
            return proc, f"http://127.0.0.1:{port}{base}"
        except RuntimeError as err:  # the server exited
            if "in use" not in str(err) and "no available port" not in str(err):
                raise
        except Exception:
            proc.kill()
            raise
    raise RuntimeError("five free ports were taken before the server could bind one")


# The projector: 1920x1080 at 150 % zoom is a 1280x720 page drawn with 1.5 device pixels per CSS pixel.
SCREEN = {"width": 1280, "height": 720}
SCREENS = Path(os.environ.get("CRASHLAB_SCREENS", ARTIFACTS))


def facts_sit_by_the_buttons(page) -> None:
    """The facts that decide a resume are just below the buttons, above the file views: seen without scrolling."""
    buttons = page.locator("button.lab-run").bounding_box()
    facts = page.locator(".lab-facts").bounding_box()
    views = page.locator(".lab-view-checkpoint").bounding_box()
    assert buttons and facts and views
    assert 0 <= facts["y"] - (buttons["y"] + buttons["height"]) < 120, (buttons, facts)
    assert facts["y"] + facts["height"] <= views["y"], (facts, views)


def no_button_label_is_cut(page) -> None:
    """Every button shows its whole label (the row wraps instead of squeezing a button)."""
    cut = page.evaluate(
        "() => [...document.querySelectorAll('.lab-root button')]"
        ".filter(b => b.scrollWidth > b.clientWidth + 1).map(b => b.textContent)"
    )
    assert cut == [], cut


def the_decision_is_the_largest_text(page) -> None:
    """No text of the lab is drawn larger than the reconcile decision."""
    sizes = page.evaluate(
        """() => {
        const decision = parseFloat(getComputedStyle(document.querySelector('.lab-branch')).fontSize);
        let largest = 0, where = '';
        for (const el of document.querySelectorAll('.lab-root *')) {
          if (el.closest('.lab-branch')) continue;
          const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
          const size = parseFloat(getComputedStyle(el).fontSize);
          if (own && el.getClientRects().length && size > largest) { largest = size; where = el.textContent.slice(0, 40); }
        }
        return [decision, largest, where];
      }"""
    )
    assert sizes[0] > sizes[1], sizes


def marked(page, view: str) -> list[str]:
    return page.locator(f".lab-{view} mark.lab-changed").all_inner_texts()


def buttons_on_top(page) -> None:
    page.locator("button.lab-run").evaluate("b => b.scrollIntoView({block: 'start'})")


def within_the_screen(page, selector: str) -> None:
    box = page.locator(selector).bounding_box()
    assert box and 0 <= box["y"] and box["y"] + box["height"] <= SCREEN["height"], (selector, box)


def timeline_svg(page) -> str:
    return page.locator("img.lab-timeline").evaluate("img => fetch(img.src).then(r => r.text())")


def drive_crash_lab(page, name: str, on_top=buttons_on_top) -> None:
    """Choose ② on write_report, run, check the views and the facts, resume, check the branch and its marks; compare
    ① and ②; kill a slowed real process by hand; a parallel scenario. `on_top` brings the lab's buttons to the top of
    the screen (in Voila: the page as it opens)."""
    expect = sync_api.expect
    page.wait_for_selector(".lab-view-effects")
    no_button_label_is_cut(page)
    page.get_by_label("② ツール完了・台帳未記録").check()
    page.get_by_label("write_report（3ターン目）").check()
    page.get_by_label("カーネル内（疑似キル）").check()
    page.locator("button.lab-run").click()
    expect(page.locator(".lab-status")).to_contain_text("after-tool-run:3 で疑似キル")
    expect(page.locator(".lab-view-effects")).to_contain_text("toolu_02")
    expect(page.locator(".lab-view-effects")).not_to_contain_text("toolu_03")
    expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")
    assert "write_report toolu_03" in marked(page, "view-log")  # the run wrote it
    expect(page.locator(".lab-report")).to_contain_text("あり")
    expect(page.locator(".lab-facts")).to_contain_text("pendingToolUse: write_report (toolu_03)")
    expect(page.locator(".lab-facts")).to_contain_text("台帳に pending の id: toolu_03 なし")
    facts_sit_by_the_buttons(page)
    page.locator("button.lab-resume").click()
    expect(page.locator(".lab-branch")).to_contain_text("台帳ミスかつ副作用あり、判断不能、is_error を追加")
    expect(page.locator(".lab-transcript")).to_contain_text("write_report の実行状態が不明です")
    expect(page.locator(".lab-facts [data-fact='pendingToolUse'] mark.lab-fact-changed")).to_have_text(
        "null（← write_report (toolu_03)）"
    )
    # only what the resume changed is marked: not the run's write_report line, which the resume never ran
    expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")
    assert marked(page, "view-log") == [] and marked(page, "view-effects") == []
    assert marked(page, "view-checkpoint")  # the resume's is_error result and save B
    facts_sit_by_the_buttons(page)
    the_decision_is_the_largest_text(page)
    # a second resume keeps the decision and says it had nothing to do
    page.locator("button.lab-resume").click()
    expect(page.locator(".lab-branch")).to_contain_text("することはありませんでした")
    expect(page.locator(".lab-branch")).to_contain_text("is_error を追加")
    on_top(page)
    page.screenshot(path=str(SCREENS / f"{name}_resume.png"))

    # compare mode: ① and ② on write_report; the conclusion on the first screen, the old decision gone
    page.locator("button.lab-compare").click()
    expect(page.locator(".lab-status")).to_contain_text(
        "同一: checkpoint.json, effects.json ／ 異なる: tool-runs.log, report.txt"
    )
    view = page.locator(".lab-compare-view")
    for file in ("checkpoint.json", "effects.json"):
        expect(view.locator(f"tr[data-file='{file}'] .lab-same")).to_be_visible()
    for file in ("tool-runs.log", "report.txt"):
        expect(view.locator(f"tr[data-file='{file}'] .lab-differ")).to_be_visible()
    expect(view.locator("tr.lab-compare-resume")).to_contain_text("台帳ミスかつ副作用あり")
    expect(page.locator(".lab-branch")).to_be_hidden()
    on_top(page)
    within_the_screen(page, "tr.lab-compare-resume")
    page.screenshot(path=str(SCREENS / f"{name}_compare.png"))

    # the same moment with a real process killed by SIGKILL, watched while it runs
    page.get_by_label("本物のプロセス（SIGKILL）").check()
    page.locator("button.lab-run").click()
    expect(page.locator(".lab-status")).to_contain_text("SIGKILL で死にました")
    expect(page.locator(".lab-transcript")).to_contain_text(
        "[kill] after-tool-run:3 で SIGKILL（本物のキル）"
    )
    expect(page.locator(".lab-where")).to_contain_text(
        "実行したコマンド: CRASH_AFTER=after-tool-run:3 CRASH_MODE=sigkill python -m harness"
    )
    expect(page.locator(".lab-view-effects")).not_to_contain_text("toolu_03")
    expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")
    page.locator("button.lab-resume").click()
    expect(page.locator(".lab-status")).to_contain_text("終了コード 0 で完了しました")
    expect(page.locator(".lab-branch")).to_contain_text("台帳ミスかつ副作用あり、判断不能、is_error を追加")

    # 今すぐキル in slow motion: where it landed, the command really run, the kill on the timeline
    page.get_by_label("なし（最後まで走る）").check()
    readout = page.locator(".lab-slow .widget-readout")
    readout.fill("800")
    readout.press("Enter")
    page.locator("button.lab-run").click()
    expect(page.locator(".lab-where")).to_contain_text("実行中: HARNESS_SLOW_MS=800 python -m harness")
    expect(page.locator(".lab-transcript")).to_contain_text("[turn 2][save A]")
    page.locator("button.lab-kill").click()
    expect(page.locator(".lab-status")).to_contain_text("今すぐキル: ")
    where = page.locator(".lab-where")
    expect(where).to_contain_text("実行したコマンド: HARNESS_SLOW_MS=800 python -m harness → ")
    expect(where).to_contain_text(re.compile(r"落ちた瞬間: (①|②|③|台帳記録済み).*ターン[23]"))
    expect(page.locator(".lab-where")).not_to_contain_text("落とさずに最後まで")
    page.wait_for_function(
        "() => fetch(document.querySelector('img.lab-timeline').src).then(r => r.text())"
        ".then(t => t.includes('timeline-kill-by-hand'))",
    )
    on_top(page)
    page.screenshot(path=str(SCREENS / f"{name}_kill.png"))
    page.locator("img.lab-timeline").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENS / f"{name}_kill_timeline.png"))
    readout.fill("0")
    readout.press("Enter")
    page.locator("button.lab-resume").click()
    expect(page.locator(".lab-status")).to_contain_text("終了コード 0 で完了しました")

    # another scenario: the pending set, crashed in the middle of its second turn; one resume, two branches
    page.locator(".lab-scenario select").select_option(label="並列: 1ターンに複数のツール（--parallel）")
    expect(page.locator(".lab-status")).to_contain_text("シナリオを「並列」に切り替え")
    expect(page.locator("button.lab-compare")).to_be_disabled()
    page.get_by_label("カーネル内（疑似キル）").check()
    page.get_by_label("台帳記録済み・B未保存（レッスンのデモ）").check()
    page.get_by_label("ターン2 write_report toolu_03 台帳記録直後（地点B未保存）").check()
    expect(page.locator(".lab-where")).to_contain_text(
        "CRASH_AFTER=after-effect-write:3 python -m harness --parallel"
    )
    page.locator("button.lab-run").click()
    expect(page.locator(".lab-status")).to_contain_text("after-effect-write:3 で疑似キル")
    facts = page.locator(".lab-facts")
    expect(facts).to_contain_text("pendingToolUses: [write_report (toolu_03), write_report (toolu_04)]")
    expect(facts).to_contain_text("台帳に pending の id: toolu_03 あり・toolu_04 なし")
    page.locator("button.lab-resume").click()
    branch = page.locator(".lab-branch")
    expect(branch).to_contain_text(
        "tool_use_id=toolu_03 name=write_report 台帳ヒット、結果を再利用、再実行しない"
    )
    expect(branch).to_contain_text(
        "tool_use_id=toolu_04 name=write_report 台帳ミスかつ副作用あり、判断不能、is_error を追加"
    )
    no_button_label_is_cut(page)
    on_top(page)
    page.screenshot(path=str(SCREENS / f"{name}_parallel.png"))


def test_crash_lab_in_jupyterlab(sandbox):
    """At 1280x720 with the file browser open beside the notebook."""
    root, env = sandbox
    proc, url = serve(
        lambda port, base: [
            str(BIN / "jupyter"),
            "lab",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            "--ip=127.0.0.1",
            "--allow-root",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            "--LabApp.expose_app_in_browser=True",
            f"--ServerApp.root_dir={root}",
            f"--ServerApp.base_url={base}",
        ],
        root,
        env,
        "api/status",
    )
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=SCREEN)
            page.set_default_timeout(UI_WAIT_MS)
            page.goto(f"{url}lab/tree/crash_lab.ipynb")
            page.wait_for_function(
                "window.jupyterapp && window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
                " === 'idle'",
            )
            page.evaluate("window.jupyterapp.shell.activateById('filebrowser')")
            sync_api.expect(page.locator("#filebrowser")).to_be_visible()
            # before its cell runs, the lab's cell shows no widget tree as text
            sync_api.expect(page.locator(".jp-OutputArea-output").first).to_be_attached()
            assert "VBox(children" not in page.locator(".jp-Notebook").inner_text()
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            drive_crash_lab(page, "crash_lab_jupyterlab_1280x720")
            browser.close()
    finally:
        stop(proc)


def voila_top(page) -> None:
    """Voila as it opens: the page at its top."""
    page.evaluate("window.scrollTo(0, 0)")


def test_crash_lab_in_voila(sandbox):
    """The presenter notebook on a projector: 1920x1080 at 150 % zoom. The lab is the first thing on the screen."""
    root, env = sandbox
    proc, url = serve(
        lambda port, base: [
            str(BIN / "voila"),
            "crash_lab_presenter.ipynb",
            "--no-browser",
            f"--port={port}",
            "--Voila.port_retries=0",
            "--Voila.ip=127.0.0.1",
            f"--Voila.base_url={base}",
        ],
        root,
        env,
        "",
    )
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=SCREEN, device_scale_factor=1.5)
            page.set_default_timeout(UI_WAIT_MS)
            page.goto(url)
            page.wait_for_selector(".lab-root button.lab-run")
            within_the_screen(page, "button.lab-run")
            top = page.locator(".lab-root").bounding_box()
            assert top and top["y"] < 100, top  # nothing before the lab but the page's margin
            page.screenshot(path=str(SCREENS / "crash_lab_voila_1920x1080_at_150_open.png"))
            drive_crash_lab(page, "crash_lab_voila_1920x1080_at_150", on_top=voila_top)
            browser.close()
    finally:
        stop(proc)
