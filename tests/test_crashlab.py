"""The Crash Lab widget driven in-process: for every moment x turn, the views show the files on disk and the branch
is the one the lesson gives."""

from __future__ import annotations

import html
import json
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

from harness import texts
from harness.lab import COMPARED, file_bytes, pretty, read_text
from harness.lab.crashlab import NO_RECONCILE, CrashLab, landed
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
ROOT = Path(__file__).resolve().parents[1]


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
    assert "SIGKILL で死にました" in lab.status.value
    assert_views_match_disk(lab)
    assert any("SIGKILL" in o["text"] for o in lab.transcript.outputs)
    lab.resume_button.click()
    lab.wait()
    assert lab.phase == "done"
    assert lab.branch.value.endswith(EXPECTED[moment][3] or NO_RECONCILE)
    assert_views_match_disk(lab)


def kill_by_hand_once(lab, reached, in_time=lambda lab: True) -> int:
    """Run slowed and kill by hand once `reached()`; on a machine so busy that the run got past the moment first
    (`in_time` says no), again, slower: no outcome depends on how fast the machine is. Returns the slow-motion ms."""
    for slow in (200, 1000, 2000):
        lab.moment.value, lab.how.value, lab.slow.value = None, "sigkill", slow
        lab.run_button.click()
        # the line beside the controls names the command, never "a run to the end" (a kill by hand is coming)
        assert "落とさずに最後まで" not in lab.where.value
        assert f"HARNESS_SLOW_MS={slow} python -m harness" in text_of(lab.where.value)
        while lab.poll() and not reached():
            time.sleep(0.01)
        lab.kill_button.click()
        lab.wait()
        if lab.phase == "crashed" and in_time(lab):
            return slow
    raise AssertionError("even at 2 s a step, the run got past its moment before the kill")


def test_kill_now_stops_a_slowed_real_process_and_resume_finishes(lab):
    def at_turn_two() -> bool:
        return any(e.kind == "save_a" and e.data["turn"] == 2 for e in lab.events)

    kill_by_hand_once(lab, at_turn_two, in_time=lambda lab: not (lab.workdir / "report.txt").exists())
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


def disk_of(workdir):
    return {p.name: p.read_bytes() for p in workdir.iterdir() if p.is_file()}


def test_step_after_a_real_process_crash_resumes_from_the_disk_the_kill_left(lab):
    lab.moment.value, lab.turn.value, lab.how.value = "after-tool-run", 3, "sigkill"
    lab.run_button.click()
    lab.wait()
    assert lab.phase == "crashed"
    killed = disk_of(lab.workdir)
    lab.how.value = "simulated"
    lab.step_button.click()  # the first step of the resume: it loads the checkpoint the kill left
    assert lab.phase == "stepping" and [e.kind for e in lab.events] == ["resume"]
    assert disk_of(lab.workdir) == killed
    assert_views_match_disk(lab)
    assert fact(lab, "pendingToolUse")[0] == "pendingToolUse: write_report (toolu_03)"
    for _ in range(10):
        if lab.phase != "stepping":
            break
        lab.step_button.click()
        assert_views_match_disk(lab)
    assert lab.phase == "done" and "checkpoint.json" not in lab.status.value
    assert lab.branch.value.endswith(UNKNOWN)
    assert (lab.workdir / "tool-runs.log").read_text().splitlines().count("write_report toolu_03") == 1


def test_a_resume_that_fails_leaves_the_facts_and_the_views_as_the_disk_is(lab):
    lab.moment.value, lab.turn.value = "after-tool-run", 3
    lab.run_button.click()
    assert fact(lab, "pendingToolUse")[0].startswith("pendingToolUse: write_report (toolu_03)")
    (lab.workdir / "checkpoint.json").unlink()  # gone before the resume: the loader refuses
    lab.resume_button.click()
    assert "checkpoint.json が見つかりません" in lab.status.value
    assert fact(lab, "pendingToolUse")[0].startswith("pendingToolUse: — checkpoint.json なし")
    assert_views_match_disk(lab)


def test_a_resume_or_a_step_with_nothing_to_draw_warns_nothing(tmp_path):
    import warnings

    lab = CrashLab(tmp_path / "lab", timeline=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lab.resume_button.click()  # an empty folder: no checkpoint, no events for the timeline
        assert "checkpoint.json が見つかりません" in lab.status.value
        # killed by hand before the child process has even started Python: a crash with nothing on disk
        lab.moment.value, lab.how.value = None, "sigkill"
        lab.run_button.click()
        lab.kill_button.click()
        lab.wait()
        assert lab.phase == "crashed" and not (lab.workdir / "checkpoint.json").exists()
        lab.how.value = "simulated"
        lab.step_button.click()  # the step-by-step resume finds no checkpoint either
        assert "checkpoint.json が見つかりません" in lab.status.value
        assert fact(lab, "pendingToolUse")[0].startswith("pendingToolUse: — checkpoint.json なし")


def test_changed_lines_are_highlighted(lab):
    lab.moment.value, lab.turn.value = "after-save-b", 1
    lab.run_button.click()
    assert "lab-changed" in lab.views["checkpoint.json"].value
    assert "&quot;pendingToolUse&quot;: null" in lab.views["checkpoint.json"].value


def marked_lines(view_html: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r"<mark class='lab-changed'[^>]*>(.*?)</mark>", view_html)]


def lines_added(before: str | None, after: str | None) -> list[str]:
    """The lines of `after` that `before` does not have at all (independent of the lab's diff)."""
    old = set((before or "").splitlines())
    return [line for line in (after or "").splitlines() if line not in old]


@pytest.mark.parametrize("how", ["simulated", "sigkill"])
@pytest.mark.parametrize("moment", list(EXPECTED))
def test_after_a_resume_only_the_lines_the_resume_changed_are_highlighted(lab, how, moment):
    lab.moment.value, lab.turn.value, lab.how.value = moment, 3, how
    lab.run_button.click()
    lab.wait()
    crashed = {name: pretty(read_text(lab.workdir / name)) for name in lab.views}
    lab.resume_button.click()
    lab.wait()
    assert_marks_only_what_changed(lab, crashed)  # the run's marks are gone
    # the resume never runs write_report after ②: its line in tool-runs.log is the run's, not marked
    if moment == "after-tool-run":
        assert "write_report toolu_03" in text_of(lab.views["tool-runs.log"].value)
        assert "write_report toolu_03" not in marked_lines(lab.views["tool-runs.log"].value)


def test_a_fresh_run_marks_every_line_it_wrote(lab):
    lab.moment.value, lab.turn.value = "after-save-b", 2
    lab.run_button.click()
    for name, view in lab.views.items():
        assert marked_lines(view.value) == pretty(read_text(lab.workdir / name)).splitlines(), name


def assert_marks_only_what_changed(lab, before: dict) -> None:
    """Every line added since `before` is marked; nothing in a file the action left alone is."""
    for name, view in lab.views.items():
        now = pretty(read_text(lab.workdir / name))
        marked = marked_lines(view.value)
        if now == before[name]:
            assert marked == [], name
        else:
            assert set(lines_added(before[name], now)) <= set(marked) <= set(now.splitlines()), name


def test_each_step_marks_only_the_lines_that_step_wrote(lab):
    lab.moment.value, lab.turn.value = "after-save-b", 1
    before = {name: None for name in lab.views}
    for _ in range(4):  # save_a, tool_ran, effect_written, save_b of turn 1
        lab.step_button.click()
        assert_marks_only_what_changed(lab, before)
        before = {name: pretty(read_text(lab.workdir / name)) for name in lab.views}


# A second resume: the decision that mattered stays, and the lab says there was nothing to do

DECISION_OF = {moment: (branch[3] if branch[3] else NO_RECONCILE) for moment, branch in EXPECTED.items()}


@pytest.mark.parametrize("how", ["simulated", "sigkill"])
@pytest.mark.parametrize("moment", list(EXPECTED))
def test_a_second_resume_keeps_the_decision_and_says_it_had_nothing_to_do(lab, how, moment):
    lab.moment.value, lab.turn.value, lab.how.value = moment, 3, how
    lab.run_button.click()
    lab.wait()
    lab.resume_button.click()
    lab.wait()
    first = lab.branch.value
    assert first.endswith(DECISION_OF[moment]) and texts.LAB_NOTHING_TO_DO not in first
    for _ in range(
        2
    ):  # a second and a third resume: the same decision, one note, never 「reconcile なし」 instead
        lab.resume_button.click()
        lab.wait()
        assert lab.phase == "done"
        shown = text_of(lab.branch.value)
        assert shown.startswith(text_of(first)), shown
        assert shown.count(texts.LAB_NOTHING_TO_DO) == 1
        if DECISION_OF[moment] != NO_RECONCILE:
            assert NO_RECONCILE not in shown
    assert lab.branch.layout.display != "none"


def test_a_resume_of_a_run_that_never_crashed_says_it_had_nothing_to_do(lab):
    lab.moment.value = None
    lab.run_button.click()
    assert lab.phase == "done" and lab.branch.value == "" and lab.branch.layout.display == "none"
    lab.resume_button.click()
    assert text_of(lab.branch.value) == texts.LAB_NOTHING_TO_DO_ALONE


def test_a_new_crash_after_a_resume_shows_the_new_resumes_decision(lab):
    lab.moment.value, lab.turn.value = "after-tool-run", 3
    lab.run_button.click()
    lab.resume_button.click()
    lab.moment.value = "after-effect-write"
    lab.run_button.click()
    assert lab.branch.value == ""  # a new run: the old decision is not this run's
    lab.resume_button.click()
    assert lab.branch.value.endswith(HIT) and UNKNOWN not in lab.branch.value


# 今すぐキル: where it landed, and the command that was really run


def moment_on_disk(workdir) -> str:
    """Which moment the disk is at, read from the files alone: ①, ②, the lesson's demo point, or ③."""
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    pending = cp["pendingToolUse"]
    if pending is None:
        return "③"
    effects_file = workdir / "effects.json"
    ledger = json.loads(effects_file.read_text(encoding="utf-8")) if effects_file.exists() else {}
    if pending["id"] in ledger:
        return "台帳記録済み"
    ran = f"{pending['name']} {pending['id']}" in tool_runs(workdir)
    return "②" if ran else "①"


@pytest.mark.parametrize(
    "after",
    [("save_a", 2), ("tool_ran", "toolu_02"), ("effect_written", "toolu_02"), ("save_b", 2)],
    ids=lambda a: a[0],
)
def test_kill_now_says_where_it_landed_and_the_command_that_ran(lab, after):
    kind, which = after

    def reached() -> bool:
        return any(e.kind == kind and which in (e.data.get("turn"), e.data.get("id")) for e in lab.events)

    slow = kill_by_hand_once(lab, reached)
    assert lab.phase == "crashed"
    moment = moment_on_disk(lab.workdir)  # the disk's own answer, not the lab's events
    turn = json.loads((lab.workdir / "checkpoint.json").read_text(encoding="utf-8"))["turns"]
    where = text_of(lab.where.value)
    assert where.startswith(f"実行したコマンド: HARNESS_SLOW_MS={slow} python -m harness → ")
    landed_text = where.split("落ちた瞬間: ", 1)[1]
    assert landed_text.startswith(moment) and f"ターン{turn}" in landed_text, (landed_text, moment, turn)
    assert landed_text in text_of(lab.status.value)
    assert landed_text in lab.transcript.outputs[-1]["text"]
    assert lab.events[-1].kind == "crash" and lab.events[-1].data["label"] == texts.LAB_KILL_MARK
    lab.moment.value = "after-save-a"  # choosing again: the line says what the controls now choose
    assert text_of(lab.where.value).startswith("CRASH_AFTER=after-save-a:")


def test_a_planned_real_kill_shows_its_command_with_crash_after(lab):
    lab.moment.value, lab.turn.value, lab.how.value = "after-tool-run", 3, "sigkill"
    lab.run_button.click()
    lab.wait()
    assert text_of(lab.where.value) == (
        "実行したコマンド: CRASH_AFTER=after-tool-run:3 CRASH_MODE=sigkill python -m harness"
    )
    lab.resume_button.click()
    lab.wait()
    assert text_of(lab.where.value) == "実行したコマンド: python -m harness --resume"


def clean_run_events(scenario="lesson"):
    from harness.beyond.scenarios import clean_events

    return clean_events(scenario)


def test_where_a_kill_landed_is_named_after_the_last_step_for_every_prefix_of_a_run():
    from harness.vocab import CRASH_LABELS, LABEL_AFTER_EVENT

    events = clean_run_events()
    turn = None
    for i, event in enumerate(events):
        if event.kind == "save_a":
            turn = event.data["turn"]
        text = landed(events[: i + 1])
        if event.kind in LABEL_AFTER_EVENT:
            name = CRASH_LABELS[LABEL_AFTER_EVENT[event.kind]]
            assert text.startswith(name.split("（")[0].split("・")[0]), (event, text)
            assert f"ターン{turn}" in text, (event, text)
    assert landed([]) == texts.LAB_LANDED["start"]


# The lab as a person sees it


def test_the_lab_cell_shows_a_line_not_the_widget_tree_before_it_runs(lab):
    data = lab._repr_mimebundle_()
    assert data["text/plain"] == texts.LAB_NOT_SHOWN_YET and "VBox" not in data["text/plain"]
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == lab.widget.model_id


@pytest.mark.parametrize("name", ["crash_lab.ipynb", "crash_lab_presenter.ipynb"])
def test_the_stored_lab_cell_has_no_widget_repr(name):
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    shown = [
        o["data"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert shown and all(d["text/plain"] == texts.LAB_NOT_SHOWN_YET for d in shown)


def test_the_presenter_notebook_shows_only_the_lab_first():
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "crash_lab_presenter.ipynb", as_version=4)
    assert nb.cells[0].cell_type == "code" and "CrashLab(" in nb.cells[0].source


def test_compare_hides_the_labs_own_decision_and_shows_its_conclusion_first(lab):
    lab.moment.value, lab.turn.value = "after-effect-write", 3
    lab.run_button.click()
    lab.resume_button.click()
    assert lab.branch.value.endswith(HIT)
    lab.moment.value = "after-tool-run"
    lab.compare_button.click()
    assert lab.branch.value == "" and lab.branch.layout.display == "none"
    assert lab.facts.layout.display == "none"  # the lab's own folder's facts are not the comparison's
    view = lab.compare_view.value
    conclusion = view.index("lab-compare-resume")
    assert conclusion < view.index("lab-compare-facts") < view.index("lab-compare-row")
    assert view.count(UNKNOWN) == 2
    lab.resume_button.click()  # any other action shows the lab's own folder again
    assert lab.facts.layout.display is None and lab.compare_view.value == ""


def text_extents_inside_the_figure(events) -> list:
    """The texts of the timeline that reach outside the picture (none may)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from harness.lab.plots import draw_timeline

    fig = Figure(figsize=(9, 3.2))
    ax = fig.add_subplot()
    draw_timeline(events, ax)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.3)
    renderer = FigureCanvasAgg(fig).get_renderer()
    box = fig.bbox
    outside = []
    for text in ax.texts:
        extent = text.get_window_extent(renderer)
        if (
            extent.x0 < box.x0 - 1
            or extent.x1 > box.x1 + 1
            or extent.y0 < box.y0 - 1
            or extent.y1 > box.y1 + 1
        ):
            outside.append(text.get_text())
    return outside


@pytest.mark.parametrize("scenario", ["lesson", "parallel", "idempotent", "parallel+idempotent"])
@pytest.mark.parametrize("moment", ["after-save-a", "after-tool-run", "after-save-b"])
def test_no_label_of_the_timeline_is_cut_off(tmp_path, scenario, moment):
    lab = CrashLab(tmp_path / "lab", timeline=False)
    lab.scenario.value = scenario
    lab.moment.value = moment
    lab.turn.value = len(lab.turn.options)  # the last occurrence: its labels sit at the right edge
    lab.run_button.click()
    lab.resume_button.click()
    lab.resume_button.click()
    assert text_extents_inside_the_figure(lab.events) == []


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
    assert compare_verdict(lab) == texts.LAB_COMPARE_SAME  # same disks, so the same decision


def test_compare_leaves_the_labs_own_run_alone(lab):
    lab.moment.value, lab.turn.value = "after-effect-write", 3
    lab.run_button.click()
    before = {p.name: p.read_bytes() for p in lab.workdir.iterdir()}
    lab.compare_button.click()
    assert {p.name: p.read_bytes() for p in lab.workdir.iterdir()} == before
    lab.resume_button.click()
    assert lab.branch.value.endswith(HIT) and lab.compare_view.value == ""


# Scenarios beyond the lesson: the pending set (--parallel) and the idempotent write_report (--idempotent)

ASKED_DONE = "台帳ミスかつ副作用あり、冪等キーで問い合わせ: 実行済み、結果を再利用、再実行しない"
ASKED_RUN = "台帳ミスかつ副作用あり、冪等キーで問い合わせ: 未実行、いま実行する"
# The parallel task: turn 1 names read_notes toolu_01 and count_words toolu_02, turn 2 write_report toolu_03 (report)
# and write_report toolu_04 (summary). For each crash point, the branch the lesson's rules give each pending call.
PARALLEL = {
    ("after-save-a", 1): {"toolu_01": RERUN, "toolu_02": RERUN},
    ("after-tool-run", 1): {"toolu_01": RERUN, "toolu_02": RERUN},
    ("after-effect-write", 1): {"toolu_01": HIT, "toolu_02": RERUN},
    ("after-effect-write", 2): {"toolu_01": HIT, "toolu_02": HIT},
    ("after-save-a", 2): {"toolu_03": UNKNOWN, "toolu_04": UNKNOWN},
    ("after-tool-run", 3): {"toolu_03": UNKNOWN, "toolu_04": UNKNOWN},
    ("after-effect-write", 3): {"toolu_03": HIT, "toolu_04": UNKNOWN},
    ("after-tool-run", 4): {"toolu_03": HIT, "toolu_04": UNKNOWN},
    ("after-effect-write", 4): {"toolu_03": HIT, "toolu_04": HIT},
    ("after-save-b", 2): {},
}
PARALLEL_TOOLS = {
    "toolu_01": "read_notes",
    "toolu_02": "count_words",
    "toolu_03": "write_report",
    "toolu_04": "write_report",
}


def branch_lines(lab) -> list[str]:
    """The branch view's lines, as text (the heading dropped)."""
    lines = [text_of(line) for line in lab.branch.value.split("<br>") if "reconcile →" in line]
    return [line[line.index("reconcile →") :] for line in lines]


def shown_branches(lab) -> dict[str, str]:
    """tool_use_id -> the lesson's line for it, as the branch view shows them."""
    found = {}
    for line in branch_lines(lab):
        match = re.fullmatch(r"reconcile → tool_use_id=(\S+) name=\S+ (.+)", line)
        assert match, line
        found[match.group(1)] = match.group(2)
    return found


def tool_runs(workdir) -> list[str]:
    log = workdir / "tool-runs.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def all_results(cp: dict) -> list[dict]:
    return [
        b
        for m in cp["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]


def test_the_lessons_scenario_is_the_default_with_its_three_turns(lab):
    assert lab.scenario.value == "lesson"
    assert [tuple(o) for o in lab.turn.options] == [
        ("read_notes（1ターン目）", 1),
        ("count_words（2ターン目）", 2),
        ("write_report（3ターン目）", 3),
    ]
    assert not lab.compare_button.disabled
    assert (
        text_of(lab.where.value)
        == "CRASH_AFTER=after-tool-run:3 python -m harness = ターン3 write_report toolu_03 実行直後（台帳未記録）"
    )


def test_choosing_another_scenario_and_back_leaves_the_lessons_run_as_it_was(tmp_path):
    def crash_and_resume(lab):
        lab.moment.value, lab.turn.value = "after-tool-run", 3
        lab.run_button.click()
        disk = {p.name: p.read_bytes() for p in lab.workdir.iterdir()}
        lab.resume_button.click()
        return disk, [o["text"] for o in lab.transcript.outputs], lab.branch.value, lab.facts.value

    plain = CrashLab(tmp_path / "plain", timeline=False)
    switched = CrashLab(tmp_path / "switched", timeline=False)
    switched.scenario.value = "parallel"
    switched.moment.value, switched.turn.value = "after-effect-write", 4
    switched.run_button.click()
    switched.scenario.value = "lesson"
    assert list(switched.workdir.iterdir()) == []  # the parallel run's files went with the switch
    assert [tuple(o) for o in switched.turn.options] == [tuple(o) for o in plain.turn.options]
    assert crash_and_resume(switched) == crash_and_resume(plain)


def test_parallel_lists_every_occurrence_of_the_chosen_moment(lab):
    lab.scenario.value = "parallel"
    assert "「①と②を比べる」は1ターンに1つのツールのシナリオ" in lab.status.value
    expected = {
        "after-save-a": ["ターン1 地点A保存直後 pending=[read_notes, count_words]",
                         "ターン2 地点A保存直後 pending=[write_report, write_report]"],
        "after-tool-run": ["ターン1 read_notes toolu_01 実行直後（台帳未記録）",
                           "ターン1 count_words toolu_02 実行直後（台帳未記録）",
                           "ターン2 write_report toolu_03 実行直後（台帳未記録）",
                           "ターン2 write_report toolu_04 実行直後（台帳未記録）"],
        "after-save-b": ["ターン1 地点B保存直後", "ターン2 地点B保存直後"],
    }  # fmt: skip
    for moment, occurrences in expected.items():
        lab.moment.value = moment
        assert [label for label, _ in lab.turn.options] == occurrences
        assert [n for _, n in lab.turn.options] == list(range(1, len(occurrences) + 1))
    lab.moment.value, lab.turn.value = "after-tool-run", 4
    assert lab.turn.description == "何回目"
    assert text_of(lab.where.value) == (
        "CRASH_AFTER=after-tool-run:4 python -m harness --parallel = ターン2 write_report toolu_04 実行直後（台帳未記録）"
    )
    lab.moment.value = "after-save-a"  # only two occurrences: the choice stays in range
    assert lab.turn.value == 2


def pending_on_disk(workdir):
    """The version-2 checkpoint's pending ids, and which of them the ledger holds, read straight from the files."""
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    effects_file = workdir / "effects.json"
    effects = json.loads(effects_file.read_text(encoding="utf-8")) if effects_file.exists() else {}
    assert cp["version"] == 2
    return [(p["id"], p["id"] in effects) for p in cp["pendingToolUses"]]


@pytest.mark.parametrize("moment, n", list(PARALLEL))
def test_parallel_crash_then_resume_shows_each_pending_calls_branch(lab, moment, n):
    lab.scenario.value = "parallel"
    lab.moment.value, lab.turn.value = moment, n
    lab.run_button.click()
    assert lab.phase == "crashed"
    assert_views_match_disk(lab)
    pending = pending_on_disk(lab.workdir)
    assert [i for i, _ in pending] == list(PARALLEL[moment, n])
    calls = ", ".join(f"{PARALLEL_TOOLS[i]} ({i})" for i, _ in pending)
    assert fact(lab, "pendingToolUses")[0].startswith(f"pendingToolUses: [{calls}]")
    if pending:
        ledger = "・".join(f"{i} {'あり' if held else 'なし'}" for i, held in pending)
        assert fact(lab, "ledger")[0].startswith(f"台帳に pending の id: {ledger}")
    lab.resume_button.click()
    assert lab.phase == "done"
    assert_views_match_disk(lab)
    assert shown_branches(lab) == PARALLEL[moment, n]
    if not pending:
        assert lab.branch.value.endswith(NO_RECONCILE)
    cp = json.loads((lab.workdir / "checkpoint.json").read_text(encoding="utf-8"))
    assert cp["pendingToolUses"] == []
    errors = [b["tool_use_id"] for b in all_results(cp) if b.get("is_error")]
    assert errors == [i for i, line in PARALLEL[moment, n].items() if line == UNKNOWN]
    runs = tool_runs(lab.workdir)
    assert runs.count("write_report toolu_03") <= 1 and runs.count("write_report toolu_04") <= 1
    wrote_summary = "write_report toolu_04" in runs  # the outside world: is_error or not, did it happen?
    assert (lab.workdir / "summary.txt").exists() == wrote_summary
    assert fact(lab, "summary")[0].startswith(f"summary.txt: {'あり' if wrote_summary else 'なし'}")


def test_parallel_resume_in_the_middle_of_the_second_turn_mixes_a_ledger_hit_and_is_error(lab):
    lab.scenario.value = "parallel"
    lab.moment.value, lab.turn.value = "after-tool-run", 4  # toolu_03 recorded; toolu_04 ran, not recorded
    lab.run_button.click()
    assert tool_runs(lab.workdir)[-2:] == ["write_report toolu_03", "write_report toolu_04"]
    assert fact(lab, "write_report")[0].startswith(
        "write_report の実行開始: 2回（toolu_03: 1回、toolu_04: 1回）"
    )
    lab.resume_button.click()
    assert branch_lines(lab) == [
        f"reconcile → tool_use_id=toolu_03 name=write_report {HIT}",
        f"reconcile → tool_use_id=toolu_04 name=write_report {UNKNOWN}",
    ]
    assert "宙ぶらりんな呼び出し 2 件" in lab.branch.value
    transcript = "".join(o["text"] for o in lab.transcript.outputs)
    assert transcript.endswith(
        "[resume] turn=2 pending=[write_report, write_report] を読み込み\n"
        f"[resume][reconcile] tool_use_id=toolu_03 name=write_report {HIT}\n"
        f"[resume][reconcile] tool_use_id=toolu_04 name=write_report {UNKNOWN}\n"
        "[turn 2][save B] 再開後にこのターンのツール結果を補完\n"
        "[done] write_report の実行状態が不明です。summary.txt を確認してください。\n"
    )
    assert tool_runs(lab.workdir).count("write_report toolu_03") == 1  # the hit was not run again


def test_parallel_step_shows_the_reconciles_of_one_resume_one_by_one(lab):
    lab.scenario.value = "parallel"
    lab.moment.value, lab.turn.value = "after-effect-write", 3
    lab.run_button.click()
    lab.step_button.click()
    assert [e.kind for e in lab.events] == ["resume"]
    lab.step_button.click()
    assert shown_branches(lab) == {"toolu_03": HIT}
    lab.step_button.click()
    assert shown_branches(lab) == {"toolu_03": HIT, "toolu_04": UNKNOWN}


@pytest.mark.parametrize("moment, n", [("after-tool-run", 4), ("after-save-a", 2)])
def test_parallel_real_process_sigkill_then_resume(lab, moment, n):
    lab.scenario.value = "parallel"
    lab.moment.value, lab.turn.value, lab.how.value = moment, n, "sigkill"
    lab.run_button.click()
    lab.wait()
    assert lab.phase == "crashed"
    assert any(f"[kill] {moment}:{n} で SIGKILL" in o["text"] for o in lab.transcript.outputs)
    assert_views_match_disk(lab)
    assert [i for i, _ in pending_on_disk(lab.workdir)] == [
        "toolu_03",
        "toolu_04",
    ]  # the process ran --parallel
    lab.resume_button.click()
    lab.wait()
    assert lab.phase == "done", lab.status.value
    assert shown_branches(lab) == PARALLEL[moment, n]
    assert_views_match_disk(lab)


@pytest.mark.parametrize("how", ["simulated", "sigkill"])
@pytest.mark.parametrize("moment, asked", [("after-tool-run", ASKED_DONE), ("after-save-a", ASKED_RUN)])
def test_idempotent_write_report_recovers_1_and_2_exactly(lab, how, moment, asked):
    lab.scenario.value = "idempotent"
    lab.moment.value, lab.turn.value, lab.how.value = moment, 3, how
    lab.run_button.click()
    lab.wait()
    assert lab.phase == "crashed"
    assert fact(lab, "ledger")[0].startswith("台帳に pending の id: toolu_03 なし")
    wrote = moment == "after-tool-run"
    assert fact(lab, "report")[0].startswith(
        f"report.txt: {'あり（冪等キー toolu_03）' if wrote else 'なし'}"
    )
    lab.resume_button.click()
    lab.wait()
    assert lab.phase == "done", lab.status.value
    assert branch_lines(lab) == [f"reconcile → tool_use_id=toolu_03 name=write_report {asked}"]
    assert tool_runs(lab.workdir).count("write_report toolu_03") == 1  # written exactly once
    report = (lab.workdir / "report.txt").read_text(encoding="utf-8")
    assert report.splitlines()[0] == "<!-- 冪等キー: toolu_03 -->"
    cp = json.loads((lab.workdir / "checkpoint.json").read_text(encoding="utf-8"))
    assert cp["pendingToolUse"] is None and not any(b.get("is_error") for b in all_results(cp))
    assert lab.transcript.outputs[-1]["text"].endswith(
        "[done] report.txt にレポートを書き出しました。タスク完了。\n"
    )
    assert_views_match_disk(lab)


def test_idempotent_keeps_the_lessons_branches_for_the_read_only_tools(lab):
    lab.scenario.value = "idempotent"
    lab.moment.value, lab.turn.value = "after-tool-run", 1
    lab.run_button.click()
    lab.resume_button.click()
    assert branch_lines(lab) == [f"reconcile → tool_use_id=toolu_01 name=read_notes {RERUN}"]


def test_compare_in_the_idempotent_scenario_shows_the_same_disks_and_the_two_answers(lab):
    lab.scenario.value = "idempotent"
    lab.turn.value = 3
    lab.compare_button.click()
    assert verdicts(lab) == {
        "checkpoint.json": "same",
        "effects.json": "same",
        "tool-runs.log": "differ",
        "report.txt": "differ",
    }
    assert lab.compared["resumed"]["①"].endswith(ASKED_RUN)
    assert lab.compared["resumed"]["②"].endswith(ASKED_DONE)
    assert (
        compare_verdict(lab) == texts.LAB_COMPARE_ASKED
    )  # same disks, two answers: the outside world decided


def compare_verdict(lab) -> str:
    match = re.search(r"class='lab-compare-verdict'.*?→ (.*?)</td>", lab.compare_view.value)
    return html.unescape(match.group(1)) if match else ""


@pytest.mark.parametrize("scenario", ["parallel", "parallel+idempotent"])
def test_compare_is_off_for_a_turn_of_several_calls_and_says_why(lab, scenario):
    lab.scenario.value = scenario
    assert lab.compare_button.disabled
    lab.compare()
    assert "1ターンに1つのツールのシナリオ（レッスン、冪等）だけで使えます" in lab.status.value
    assert lab.compare_view.value == "" and lab.compared is None
    lab.scenario.value = "lesson"
    assert not lab.compare_button.disabled


def test_parallel_and_idempotent_together_ask_by_key_for_each_pending_report(lab):
    lab.scenario.value = "parallel+idempotent"
    lab.moment.value, lab.turn.value = (
        "after-tool-run",
        3,
    )  # toolu_03 wrote its report; toolu_04 never started
    lab.run_button.click()
    lab.resume_button.click()
    assert shown_branches(lab) == {"toolu_03": ASKED_DONE, "toolu_04": ASKED_RUN}
    runs = tool_runs(lab.workdir)
    assert runs.count("write_report toolu_03") == runs.count("write_report toolu_04") == 1
    assert (lab.workdir / "summary.txt").exists()


@pytest.mark.parametrize("scenario", ["parallel", "idempotent"])
def test_the_timeline_draws_every_scenarios_branches(tmp_path, scenario):
    lab = CrashLab(tmp_path / "lab")
    lab.scenario.value = scenario
    lab.moment.value, lab.turn.value = "after-tool-run", 3
    lab.run_button.click()
    lab.resume_button.click()
    assert lab.phase == "done"
    assert b"<svg" in bytes(lab.timeline.value)[:400]


def test_in_a_kernel_the_status_goes_out_before_the_picture_is_drawn(tmp_path):
    """A kernel sends the page a click's changes when its handler returns: the picture is drawn after that."""
    import asyncio

    async def click_and_wait():
        lab = CrashLab(tmp_path / "lab")
        lab.moment.value, lab.turn.value = "after-tool-run", 3
        lab.run_button.click()
        assert "疑似キル" in lab.status.value and lab.views["effects.json"].value
        assert bytes(lab.timeline.value) == b""  # not drawn inside the click
        while not bytes(lab.timeline.value):  # the loop draws it next (pytest's timeout ends a hang)
            await asyncio.sleep(0.01)
        assert b"<svg" in bytes(lab.timeline.value)[:400] and lab.timeline.layout.display is None

    asyncio.run(asyncio.wait_for(click_and_wait(), timeout=60))


# ------------------------------------------------------------------------------- what a child process inherits


def test_a_child_never_inherits_the_crash_settings_nor_a_name_its_caller_unsets(monkeypatch):
    from harness.lab.process import child_env

    monkeypatch.setenv("CRASH_AFTER", "after-save-a:1")
    monkeypatch.setenv("REPRO_CRASH", "2")  # an exercise's own setting: the exercise says what its child gets
    assert "CRASH_AFTER" not in child_env() and child_env()["REPRO_CRASH"] == "2"
    assert "REPRO_CRASH" not in child_env({"REPRO_CRASH": None})
    assert child_env({"REPRO_CRASH": "3"})["REPRO_CRASH"] == "3"


@pytest.mark.parametrize(("n", "seen"), [(None, "なし"), ("3", "3")])
def test_a_repro_run_gets_exactly_its_own_repro_crash_whatever_the_notebook_has(
    tmp_path, monkeypatch, n, seen
):
    from harness.exercises.repro import run_script

    monkeypatch.setenv("REPRO_CRASH", "2")  # set in the learner's notebook, say
    script = tmp_path / "repro.py"
    script.write_text("import os\nprint(os.environ.get('REPRO_CRASH', 'なし'))\n", encoding="utf-8")
    proc = run_script(script, tmp_path / "run", "wrong", n, time_limit=60)
    assert proc.stdout.strip() == seen, proc.stderr
