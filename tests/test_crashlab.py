"""The Crash Lab widget driven in-process: for every moment x turn, the views show the files on disk and the branch
is the one the lesson gives."""

from __future__ import annotations

import html
import json
import re

import pytest

pytest.importorskip("ipywidgets")

from harness.lab import COMPARED, file_bytes, pretty, read_text
from harness.lab.crashlab import NO_RECONCILE, CrashLab
from harness.lab.process import run_harness

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


# The facts that decide a resume, on top of the file views, and their changes marked


def facts_on_disk(workdir):
    """turns, pending id and whether the ledger holds it, read straight from the files (independent of the lab)."""
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    effects_file = workdir / "effects.json"
    effects = json.loads(effects_file.read_text(encoding="utf-8")) if effects_file.exists() else {}
    pending = cp["pendingToolUse"]
    return cp["turns"], pending and pending["id"], bool(pending and pending["id"] in effects)


def fact(lab, name):
    """(text, marked as changed) of one fact on the lab's facts panel."""
    match = re.search(rf"data-fact='{name}'>(.*?)</span>", lab.facts.value)
    assert match, name
    return text_of(match.group(1)), "lab-fact-changed" in match.group(1)


@pytest.mark.parametrize("moment", list(EXPECTED))
def test_facts_panel_shows_what_decides_the_resume_and_marks_what_changed(lab, moment):
    lab.moment.value, lab.turn.value = moment, 3
    lab.run_button.click()
    turns, pending_id, in_ledger = facts_on_disk(lab.workdir)
    assert fact(lab, "turns") == (f"turns: {turns}（← —）", True)
    pending_text, pending_marked = fact(lab, "pendingToolUse")
    assert pending_marked
    assert pending_text.startswith(f"pendingToolUse: {'write_report (toolu_03)' if pending_id else 'null'}")
    ledger_text, _ = fact(lab, "ledger")
    if pending_id:
        assert ledger_text.startswith(f"台帳に pending の id: {pending_id} {'あり' if in_ledger else 'なし'}")
        assert in_ledger == (moment == "after-effect-write")
    lab.resume_button.click()
    assert fact(lab, "turns") == ("turns: 3", False)  # the resume continues turn 3: unchanged, not marked
    pending_text, pending_marked = fact(lab, "pendingToolUse")
    assert pending_text.startswith("pendingToolUse: null")
    assert pending_marked == (pending_id is not None)
    if pending_id:
        assert pending_text == "pendingToolUse: null（← write_report (toolu_03)）"


def holds(widget, target) -> bool:
    return widget is target or any(holds(child, target) for child in getattr(widget, "children", ()))


def test_facts_panel_sits_above_the_file_views(lab):
    children = list(lab.widget.children)
    files = next(i for i, c in enumerate(children) if holds(c, lab.views["checkpoint.json"]))
    assert children.index(lab.facts) < files and children.index(lab.branch) < files


def test_step_marks_only_what_the_last_step_changed(lab):
    lab.moment.value, lab.turn.value = "after-effect-write", 1
    lab.step_button.click()  # save_a
    lab.step_button.click()  # tool_ran: the ledger is not written yet, nothing the panel shows changes
    assert not fact(lab, "pendingToolUse")[1] and not fact(lab, "ledger")[1]
    lab.step_button.click()  # effect_written
    assert fact(lab, "ledger") == ("台帳に pending の id: toolu_01 あり（← toolu_01 なし）", True)


# Compare mode: moments ① and ② side by side


def verdicts(lab):
    rows = re.findall(r"data-file='([^']+)'.*?class='lab-(same|differ)'", lab.compare_view.value)
    return dict(rows)


@pytest.mark.parametrize("turn", [1, 2, 3])
def test_compare_shows_moments_1_and_2_side_by_side_byte_for_byte(lab, tmp_path, turn):
    lab.turn.value = turn
    lab.compare_button.click()
    # the independent truth: the command line crashed at ① and ② in two other folders
    disks = {}
    for moment, label in (("①", "after-save-a"), ("②", "after-tool-run")):
        folder = tmp_path / f"cli-{label}"
        folder.mkdir()
        assert run_harness(folder, env={"CRASH_AFTER": f"{label}:{turn}"}).returncode == 137
        disks[moment] = {name: file_bytes(folder / name) for name in COMPARED}
    expected = {name: "same" if disks["①"][name] == disks["②"][name] else "differ" for name in COMPARED}
    assert verdicts(lab) == expected
    assert expected["checkpoint.json"] == expected["effects.json"] == "same"
    assert expected["tool-runs.log"] == "differ"
    assert expected["report.txt"] == ("differ" if turn == 3 else "same")
    for row in lab.compared["rows"]:  # what the lab shows is what the command line leaves
        assert (row["a"], row["b"]) == (disks["①"][row["name"]], disks["②"][row["name"]])
    one, two = lab.compared["facts"]["①"], lab.compared["facts"]["②"]
    tool = ["read_notes", "count_words", "write_report"][turn - 1]
    assert one["pendingToolUse"] == two["pendingToolUse"] == f"{tool} ({TOOL_IDS[turn]})"
    assert one["ledger"] == two["ledger"] == f"{TOOL_IDS[turn]} なし"
    assert (one["write_report"], two["write_report"]) == (("0回", "1回") if turn == 3 else ("0回", "0回"))
    assert "lab-compare-facts" in lab.compare_view.value
    branch = EXPECTED["after-save-a"][turn]
    assert lab.compared["resumed"]["①"].endswith(branch) and lab.compared["resumed"]["②"].endswith(branch)
    assert "同一: checkpoint.json, effects.json" in lab.status.value


def test_compare_leaves_the_labs_own_run_alone(lab):
    lab.moment.value, lab.turn.value = "after-effect-write", 3
    lab.run_button.click()
    before = {p.name: p.read_bytes() for p in lab.workdir.iterdir()}
    lab.compare_button.click()
    assert {p.name: p.read_bytes() for p in lab.workdir.iterdir()} == before
    lab.resume_button.click()
    assert lab.branch.value.endswith(HIT) and lab.compare_view.value == ""
