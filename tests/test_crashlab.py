"""The Crash Lab widget driven in-process: for every moment x turn, the views show the files on disk and the branch
is the one the lesson gives."""

from __future__ import annotations

import html
import re

import pytest

pytest.importorskip("ipywidgets")

from harness.lab import pretty, read_text
from harness.lab.crashlab import NO_RECONCILE, CrashLab

# The lesson's branch for each crash moment on each turn (turns 1-2 are read-only tools, turn 3 writes the report).
HIT = "台帳ヒット、結果を再利用、再実行しない"
RERUN = "台帳ミス、読み取り専用ツール、再実行する"
UNKNOWN = "台帳ミスかつ副作用あり、判断不能、is_error を追加"
EXPECTED = {
    "after-save-a": {1: RERUN, 2: RERUN, 3: UNKNOWN},
    "after-tool-run": {1: RERUN, 2: RERUN, 3: UNKNOWN},
    "after-effect-write": {1: HIT, 2: HIT, 3: HIT},
    "after-save-b": {1: None, 2: None, 3: None},
}
TOOL_IDS = {1: "toolu_01", 2: "toolu_02", 3: "toolu_03"}


def text_of(view_html: str) -> str | None:
    if "（ファイルなし）" in view_html:
        return None
    return html.unescape(re.sub(r"<[^>]+>", "", view_html))


def assert_views_match_disk(lab):
    for name, view in lab.views.items():
        on_disk = pretty(read_text(lab.workdir / name))
        assert text_of(view.value) == (on_disk.rstrip("\n") if on_disk is not None else None), name
    assert ("あり" in lab.report.value) == (lab.workdir / "report.txt").exists()


@pytest.fixture
def lab(tmp_path):
    return CrashLab(tmp_path / "lab", timeline=False)


@pytest.mark.parametrize("moment", list(EXPECTED))
@pytest.mark.parametrize("turn", [1, 2, 3])
def test_run_and_resume_in_kernel_show_the_disk_and_the_lessons_branch(lab, moment, turn):
    lab.moment.value, lab.turn.value = moment, turn
    lab.run_button.click()
    assert lab.phase == "crashed"
    assert_views_match_disk(lab)
    effects = text_of(lab.views["effects.json"].value) or ""
    assert (TOOL_IDS[turn] in effects) == (moment in ("after-effect-write", "after-save-b"))
    lab.resume_button.click()
    assert lab.phase == "done"
    assert_views_match_disk(lab)
    expected = EXPECTED[moment][turn]
    assert lab.branch.value.endswith(expected if expected else NO_RECONCILE)
    log = (lab.workdir / "tool-runs.log").read_text().splitlines()
    assert log.count("write_report toolu_03") <= 1


@pytest.mark.parametrize("moment", list(EXPECTED))
def test_real_process_sigkill_then_resume(lab, moment):
    lab.moment.value, lab.turn.value, lab.how.value = moment, 3, "sigkill"
    lab.run_button.click()
    lab.wait()
    assert lab.phase == "crashed"
    assert_views_match_disk(lab)
    assert any("SIGKILL" in o["text"] for o in lab.transcript.outputs)
    lab.resume_button.click()
    lab.wait()
    assert lab.phase == "done"
    assert lab.branch.value.endswith(EXPECTED[moment][3] or NO_RECONCILE)
    assert_views_match_disk(lab)


def test_kill_now_stops_a_slowed_real_process_and_resume_finishes(lab):
    lab.moment.value, lab.how.value, lab.slow.value = None, "sigkill", 200
    lab.run_button.click()
    while lab.poll() and not any(e.kind == "save_a" and e.data["turn"] == 2 for e in lab.events):
        pass
    lab.kill_button.click()
    lab.wait()
    assert lab.phase == "crashed"
    assert "今すぐキル" in lab.transcript.outputs[-1]["text"]
    assert not (lab.workdir / "report.txt").exists()
    lab.slow.value = 0
    lab.resume_button.click()
    lab.wait()
    assert lab.phase == "done" and (lab.workdir / "report.txt").exists()


def test_step_shows_each_event_then_the_crash_then_the_resume(lab):
    lab.moment.value, lab.turn.value = "after-tool-run", 1
    kinds = []
    for _ in range(10):
        lab.step_button.click()
        kinds.append(lab.events[-1].kind)
        assert_views_match_disk(lab)
        if lab.phase == "crashed":
            break
    assert kinds == ["save_a", "tool_ran", "crash"]
    assert "toolu_01" not in (text_of(lab.views["effects.json"].value) or "")
    lab.step_button.click()
    assert [e.kind for e in lab.events] == ["resume"]
    lab.step_button.click()
    assert lab.events[-1].kind == "reconcile" and lab.branch.value.endswith(RERUN)


def test_changed_lines_are_highlighted(lab):
    lab.moment.value, lab.turn.value = "after-save-b", 1
    lab.run_button.click()
    assert "lab-changed" in lab.views["checkpoint.json"].value
    assert "&quot;pendingToolUse&quot;: null" in lab.views["checkpoint.json"].value
