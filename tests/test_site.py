"""The browser edition: the static JupyterLite site (scripts/site.sh) runs the lesson in Chromium's Pyodide kernel,
served from 127.0.0.1 with every request to another host refused."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import site_browser as sb

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(sb.CHROMIUM).exists():
    if os.environ.get("REQUIRE_BROWSER"):
        raise RuntimeError(f"REQUIRE_BROWSER is set but Chromium is missing at {sb.CHROMIUM}")
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

sync_api.expect.set_options(timeout=sb.UI_WAIT_MS)
# Spread over the workers: each has its own server and browser, on the one site built once (the `site` fixture).
pytestmark = pytest.mark.any_worker

TRACEBACK_MARKS = ("Traceback", "Error:", "エラー: 予期しない")


@pytest.fixture(scope="module")
def site():
    """The site built from this checkout (scripts/site.sh: cached downloads, so a rebuild is quick), once per run of
    the suite: the first worker to need it builds it while the others wait, and nobody rebuilds it under the pages
    the others have open (that gave 404s and "kernel not idle")."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid-{os.getpid()}")
    built = ROOT / ".cache" / "site-built-for-run"
    built.parent.mkdir(exist_ok=True)
    with open(ROOT / ".cache" / "site-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists() or built.read_text(encoding="utf-8") != run:
            subprocess.run(
                ["bash", str(ROOT / "scripts" / "site.sh")],
                check=True,
                timeout=1800,
                stdout=subprocess.DEVNULL,
            )
            built.write_text(run, encoding="utf-8")
    assert (sb.SITE / "static" / "pyodide" / "pyodide.asm.wasm").exists()
    with sb.served() as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p, sb.offline_browser(p) as (chromium, refused):
        yield chromium, refused
        assert refused == [], f"the site asked another host for: {refused[:5]}"


@contextlib.contextmanager
def opened(browser, site: str, notebook: str):
    """The notebook opened in the site, in a fresh browser context (closed afterwards, whatever happened)."""
    chromium, refused = browser
    context, page = sb.new_page(chromium, refused)
    context.set_default_timeout(sb.UI_WAIT_MS)
    try:
        sb.open_notebook(page, site, notebook)
        yield page
    finally:
        context.close()


def ran_whole(browser, site: str, notebook: str) -> str:
    """The notebook opened in the site and run whole; its text, after checking that no cell raised."""
    with opened(browser, site, notebook) as page:
        out = sb.text_of(sb.run_all(page))
    assert not any(mark in out for mark in TRACEBACK_MARKS), out[-3000:]
    return out


def test_notebook_01_crashes_and_resumes_in_the_browser(site, browser):
    out = ran_whole(browser, site, "notebooks/01_run_first.ipynb")
    lines = out.splitlines()
    # the lesson's demo: killed after the ledger's record of write_report, resumed from the ledger
    assert "[kill] after-effect-write:3 で疑似キル" in lines, out
    assert lines[lines.index("[kill] after-effect-write:3 で疑似キル") + 1] == "EXIT=137"
    assert any("台帳ヒット、結果を再利用、再実行しない" in line for line in lines), out
    assert "[done] report.txt にレポートを書き出しました。タスク完了。" in lines, out
    # said once, before the first command: no process was started, none was killed
    assert out.count("（ブラウザ版: ここでは子プロセスを起動できないので") == 1, out
    assert out.index("（ブラウザ版: ここでは子プロセス") < out.index("$ CRASH_AFTER=")


def test_crash_lab_runs_moment_two_then_resumes_in_the_browser(site, browser):
    with opened(browser, site, "notebooks/crash_lab.ipynb") as page:
        out = sb.text_of(sb.run_all(page))
        assert not any(mark in out for mark in TRACEBACK_MARKS), out[-3000:]
        expect = sync_api.expect
        page.wait_for_selector(".lab-view-effects")
        assert page.get_by_label("本物のプロセス（SIGKILL）").count() == 0  # nothing to start or kill here
        page.get_by_label("② ツール完了・台帳未記録").check()
        page.get_by_label("write_report（3ターン目）").check()
        page.locator("button.lab-run").click()
        expect(page.locator(".lab-status")).to_contain_text("after-tool-run:3 で疑似キル")
        at_moment_two_then_is_error(page)
        expect(page.locator(".lab-transcript")).to_contain_text("write_report の実行状態が不明です")
        # not run a second time
        expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")


def at_moment_two_then_is_error(page) -> None:
    """The lab's views show moment ② of write_report (run, not recorded); 再開 then takes the honest is_error branch
    and never runs write_report again."""
    expect = sync_api.expect
    expect(page.locator(".lab-view-effects")).to_contain_text("toolu_02")
    expect(page.locator(".lab-view-effects")).not_to_contain_text("toolu_03")
    expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")
    page.locator("button.lab-resume").click()
    expect(page.locator(".lab-branch")).to_contain_text("台帳ミスかつ副作用あり、判断不能、is_error を追加")
    expect(page.locator(".lab-view-log")).not_to_contain_text("write_report toolu_04")


def stored_lines(notebook: str, marks: tuple[str, ...]) -> list[str]:
    """The lines starting with MARKS that the repository's notebook printed when run on a desktop (real processes)."""
    cells = [c for c in json.loads((ROOT / notebook).read_text())["cells"] if c["cell_type"] == "code"]
    return [line for line in sb.text_of(cells).splitlines() if line.startswith(marks)]


@pytest.mark.parametrize("notebook", ["notebooks/11_parallel.ipynb", "notebooks/12_idempotent.ipynb"])
def test_notebooks_beyond_the_lesson_run_in_the_browser_as_on_a_desktop(site, browser, notebook):
    """11 and 12 run whole in the kernel; every command they run ends as the real processes on a desktop ended
    (the same [done] line and exit code, in the same order), and the page says once that no process ran."""
    out = ran_whole(browser, site, notebook)
    marks = ("[done]", "EXIT=")
    expected = stored_lines(notebook, marks)
    assert len(expected) >= 4, expected  # the stored notebook was executed
    assert [line for line in out.splitlines() if line.startswith(marks)] == expected, out
    assert out.count("（ブラウザ版: ここでは子プロセスを起動できないので") == 1, out
    # a command shown is the command run: no real SIGKILL is asked for where none can happen
    assert [line for line in out.splitlines() if line.startswith("$ ") and "CRASH_MODE=" in line] == [], out


def test_level_two_checks_run_in_the_browser_and_name_what_needs_a_laptop(site, browser):
    """The level-2 solution: (a)(b) are checked in the kernel and pass; (c) and (d), which run the answer as other
    processes, say so in one line instead of failing."""
    out = ran_whole(browser, site, "solutions/level2_reversed_ledger.ipynb")
    assert "レベル2 (a)(b) 診断: 合格" in out, out
    assert "チェック自体が失敗しました" not in out, out
    # (c), (d) and show_repro: the one line, nothing run
    assert out.count("ブラウザ版では確かめられません。") == 3, out


def site_notebooks() -> list[Path]:
    return sorted((sb.SITE / "files").rglob("*.ipynb"))


def test_every_link_between_the_sites_pages_resolves(site):
    """Every relative link in the site's notebooks names a file the site serves (a link to 13, 11 or an exercise
    must not lead nowhere); no link leaves the site for the repository's own folders."""
    files = sb.SITE / "files"
    pages = site_notebooks()
    assert {p.relative_to(files).as_posix() for p in pages} >= {
        "notebooks/01_run_first.ipynb",
        "notebooks/11_parallel.ipynb",
        "notebooks/13_dbos.ipynb",
        "exercises/level2_reversed_ledger.ipynb",
        "solutions/level2_reversed_ledger.ipynb",
    }
    links = 0
    for page in pages:
        for cell in json.loads(page.read_text())["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            # code is not a link
            source = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", source, flags=re.DOTALL))
            for target in re.findall(r"\]\(([^)\s]+)\)", source):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                links += 1
                path = (page.parent / target.split("#")[0]).resolve()
                assert path.is_file() and files.resolve() in path.parents, f"{page.name}: {target}"
    assert links >= 15, links


def test_notebook_13_is_a_read_only_page_saying_why(site):
    """13 (DBOS) cannot run in Pyodide (no threads): the site shows its desktop outputs, locked, under one line that
    says why and how to run it on a laptop."""
    nb = json.loads((sb.SITE / "files" / "notebooks" / "13_dbos.ipynb").read_text())
    first = "".join(nb["cells"][0]["source"])
    assert "ブラウザ版では、この notebook は実行できません" in first and "bash scripts/lab.sh" in first
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    stored = [
        c
        for c in json.loads((ROOT / "notebooks" / "13_dbos.ipynb").read_text())["cells"]
        if c["cell_type"] == "code"
    ]
    assert any(c["outputs"] for c in stored)
    assert [c["outputs"] for c in code] == [c["outputs"] for c in stored]
    assert all(c["metadata"].get("editable") is False for c in nb["cells"])


def test_crash_lab_kills_the_interpreter_and_resumes_in_a_fresh_one(site, browser):
    """The browser's real kill: at ② the interpreter itself gets SIGKILL; the page restarts the kernel and opens the
    lab again in the new interpreter, on the folder the dead one left in /drive; 再開 then decides as after any ②."""
    with opened(browser, site, "notebooks/crash_lab.ipynb") as page:
        out = sb.text_of(sb.run_all(page))
        assert not any(mark in out for mark in TRACEBACK_MARKS), out[-3000:]
        page.wait_for_selector(".lab-view-effects")
        sb.execute(page, "BEFORE_THE_KILL = 1")
        sb.real_kill_at_moment_two(page)
        # a new interpreter: what the old one held is gone; the folder on /drive is as the kill left it
        assert sb.execute(page, "print('BEFORE_THE_KILL' in globals())").strip() == "False"
        at_moment_two_then_is_error(page)
