"""The browser edition: the static JupyterLite site (scripts/site.sh) runs the lesson in Chromium's Pyodide kernel,
served from 127.0.0.1 with every request to another host refused."""

from __future__ import annotations

import os
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

TRACEBACK_MARKS = ("Traceback", "Error:", "エラー: 予期しない")


@pytest.fixture(scope="module")
def site():
    """The site built from this checkout (scripts/site.sh: cached downloads, so a rebuild is quick)."""
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "site.sh")], check=True, timeout=1800, stdout=subprocess.DEVNULL
    )
    assert (sb.SITE / "static" / "pyodide" / "pyodide.asm.wasm").exists()
    with sb.served() as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p, sb.offline_browser(p) as (chromium, refused):
        yield chromium, refused
        assert refused == [], f"the site asked another host for: {refused[:5]}"


def test_notebook_01_crashes_and_resumes_in_the_browser(site, browser):
    chromium, refused = browser
    context, page = sb.new_page(chromium, refused)
    sb.open_notebook(page, site, "notebooks/01_run_first.ipynb")
    out = sb.text_of(sb.run_all(page))
    context.close()
    assert not any(mark in out for mark in TRACEBACK_MARKS), out[-3000:]
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
    chromium, refused = browser
    context, page = sb.new_page(chromium, refused)
    sb.open_notebook(page, site, "notebooks/crash_lab.ipynb")
    out = sb.text_of(sb.run_all(page))
    assert not any(mark in out for mark in TRACEBACK_MARKS), out[-3000:]
    expect = sync_api.expect
    page.wait_for_selector(".lab-view-effects", timeout=120_000)
    assert page.get_by_label("本物のプロセス（SIGKILL）").count() == 0  # nothing to start or kill here
    page.get_by_label("② ツール完了・台帳未記録").check()
    page.get_by_label("write_report（3ターン目）").check()
    page.locator("button.lab-run").click()
    expect(page.locator(".lab-status")).to_contain_text("after-tool-run:3 で疑似キル", timeout=120_000)
    expect(page.locator(".lab-view-effects")).to_contain_text("toolu_02")
    expect(page.locator(".lab-view-effects")).not_to_contain_text("toolu_03")
    expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")
    page.locator("button.lab-resume").click()
    expect(page.locator(".lab-branch")).to_contain_text(
        "台帳ミスかつ副作用あり、判断不能、is_error を追加", timeout=120_000
    )
    expect(page.locator(".lab-transcript")).to_contain_text("write_report の実行状態が不明です")
    expect(page.locator(".lab-view-log")).to_contain_text("write_report toolu_03")  # not run a second time
    expect(page.locator(".lab-view-log")).not_to_contain_text("write_report toolu_04")
    context.close()
