"""Crash Lab: pick a crash moment, run in the kernel or as a real process, watch the files, kill, resume.

The lab is one more listener of the loop's events: in the kernel it listens directly, for a real process it reads the
events the command line appends to HARNESS_EVENTS_FILE. Views are widget values (HTML, Image), never printed output,
so a notebook showing the lab stays stable under nbval.

Any scenario of harness/beyond/scenarios.py runs in it (the lesson's by default): in the kernel through run_in_folder, as a
process with the scenario's flags (cli_args). A parallel turn holds several calls, so the lab then lists every
occurrence of the chosen moment (crash_moments) instead of the lesson's three turns, shows pendingToolUses (checkpoint
version 2), and every reconcile of one resume.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import html
import os
import shutil
import signal
import time
from pathlib import Path

import ipywidgets as w

from .. import texts
from ..beyond.idempotent import key_of
from ..beyond.scenarios import cli_args, crash_moments, run_in_folder
from ..crash import CrashPlan, SimulatedCrash
from ..errors import HarnessError
from ..run import Event
from ..transcript import format_event, reconcile_line
from ..vocab import CHECKPOINT_FILE, EFFECTS_FILE, REPORT_FILE, SUMMARY_FILE, TOOL_LOG_FILE
from . import (
    compare_folders,
    pending_calls,
    pretty,
    read_folder,
    read_text,
    size_text,
)
from .process import IN_BROWSER, WatchedProcess

# The lab's choices: (the words shown, the value), in the catalogue's order (the lab's words are texts.LAB_*).
MOMENTS = [(words, None if label == "none" else label) for label, words in texts.LAB_MOMENTS.items()]
# The lesson's turns: one call per turn, so the N-th occurrence of every label is turn N.
TURNS = [(words, n) for n, words in enumerate(texts.LAB_TURNS.values(), 1)]
# The scenarios of harness/beyond/scenarios.py, the lesson's first (the default; the others never change it).
SCENARIO_OPTIONS = [(words, scenario) for scenario, words in texts.LAB_SCENARIOS.items()]
SCENARIO_NAMES = texts.LAB_SCENARIO_NAMES
HOW = [(words, how) for how, words in texts.LAB_HOW.items()]
NO_RECONCILE = texts.LAB_NO_RECONCILE
if (
    IN_BROWSER
):  # no process to start: a real kill here ends this interpreter, and the page restarts the kernel
    HOW = [HOW[0], (texts.LAB_BROWSER_KILL_HOW, "sigkill")]
# The browser edition: after a real kill the page restarts the kernel and runs the lab's cell again. It waits for
# the lab's marker (.lab-dying set to "killed", sent just before the kill), never for a time.
RESTART_AFTER_KILL = """
const app = window.jupyterapp, out = element;
if (app && !out.dataset.labWatch) {
  out.dataset.labWatch = '1';
  const panel = () => Array.from(app.shell.widgets('main')).find(w => w.content && w.node.contains(out));
  const watch = setInterval(async () => {
    const nb = panel();
    if (!nb) { if (!out.isConnected) clearInterval(watch); return; }
    const cell = nb.content.widgets.findIndex(c => c.node.contains(out));
    const dying = nb.content.widgets[cell] && nb.content.widgets[cell].node.querySelector('.lab-dying');
    if (!dying || dying.textContent.trim() !== 'killed') return;
    clearInterval(watch);
    await nb.sessionContext.restartKernel();
    await nb.sessionContext.ready;
    nb.content.activeCellIndex = cell;
    await app.commands.execute('notebook:run-cell');
  }, 200);
}
"""
FILES = (CHECKPOINT_FILE, EFFECTS_FILE, TOOL_LOG_FILE)
STEPS = ("save_a", "tool_ran", "effect_written", "save_b", "crash", "resume", "reconcile", "done")
# inline, so it holds in any page (JupyterLab, Voila) whatever the page's own stylesheet does to <pre>
PRE_STYLE = (
    "font-family:monospace;font-size:12px;line-height:1.35;margin:0;padding:4px;white-space:pre-wrap;"
    "max-height:320px;overflow:auto;background:#fafafa"
)
# description, style, icon, CSS class (for a stylesheet and the browser test), method
BUTTONS = [
    (texts.LAB_BUTTONS[method], style, icon, css, method)
    for style, icon, css, method in (
        ("primary", "play", "lab-run", "run"),
        ("success", "redo", "lab-resume", "resume"),
        ("", "step-forward", "lab-step", "step"),
        ("", "trash", "lab-reset", "reset"),
        ("danger", "skull", "lab-kill", "kill_now"),
        ("info", "columns", "lab-compare", "compare"),
    )
]


@functools.cache
def moments_of(scenario: str) -> dict[str, list[str]]:
    """scenarios.crash_moments, once per process (it runs the scenario cleanly in a temporary folder; read only)."""
    return crash_moments(scenario)


def branch_html(reconciled: list[dict]) -> str:
    """Every reconcile of one resume, in order, in the lesson's words (one line per pending call)."""
    lines = [
        texts.LABVIEW_RECONCILE_LINE.format(
            id=html.escape(r["id"]),
            name=html.escape(r["name"]),
            line=html.escape(reconcile_line(r["branch"])),
        )
        for r in reconciled
    ]
    if len(lines) == 1:
        return f"<b>{texts.LAB_DECISION}:</b> {lines[0]}"
    head = f"<b>{texts.LAB_DECISION}{texts.LAB_WORDS['each_pending'].format(count=len(lines))}:</b><br>"
    return head + "<br>".join(lines)


# The decision's box: the largest text of the lab, its edge coloured by the branch (is_error red, a ledger hit green).
DECISION_STYLE = {"font_size": "19px", "background": "#fff8e1"}
DECISION_EDGE = {
    "unknown": "#cf222e",
    "hit": "#1a7f37",
    "asked-done": "#1a7f37",
    "rerun": "#0969da",
    "asked-run": "#0969da",
    None: "#6e7781",
}


class _Pause(BaseException):
    """Stops a step-by-step replay after the requested number of events (a BaseException, like a crash, so that
    neither the run's listener guard nor a learner's `except Exception` swallows it)."""


def highlight(before: str | None, after: str | None) -> str:
    """A <pre> of the file, with the lines added since `before` marked."""
    if after is None:
        return f"<pre class='lab-file lab-missing' style='{PRE_STYLE};color:#888'>{texts.LAB_WORDS['no_file']}</pre>"
    old, new = (before or "").splitlines(), after.splitlines()
    changed = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(range(j1, j2))
    rows = [
        f"<mark class='lab-changed' style='background:#ffe58a'>{html.escape(line)}</mark>"
        if i in changed
        else html.escape(line)
        for i, line in enumerate(new)
    ]
    return f"<pre class='lab-file' style='{PRE_STYLE}'>" + "\n".join(rows) + "</pre>"


FACT_NAMES = ("turns", "pendingToolUse", "ledger", "report", "write_report")
WRITE_REPORT = "write_report"


def one_call_per_turn(scenario: str) -> bool:
    """The lesson's shape: one tool per turn (checkpoint version 1), so the N-th crash point of a label is turn N."""
    return "parallel" not in scenario


def recovery_facts(workdir: Path, scenario: str = "lesson") -> dict[str, str]:
    """What decides a resume, read from the disk: turns, the pending call(s) (pendingToolUse in version 1,
    pendingToolUses in version 2: the file says which), whether the ledger holds each pending id; and the outside
    world: report.txt (with the idempotency key it carries, if any), summary.txt for the parallel task, and how many
    times a run of write_report began (its lines in tool-runs.log, written just before the tool runs)."""
    field = "pendingToolUse" if one_call_per_turn(scenario) else "pendingToolUses"
    words = texts.LAB_FACT_WORDS
    facts = {"turns": "—", field: words["no_checkpoint"], "ledger": "—"}
    found = read_folder(workdir)
    cp, pending_ids = found["checkpoint"], None
    if cp is not None:
        try:
            kind, calls, shown = pending_calls(cp)
            facts.pop(field)
            field, facts[kind] = kind, shown
            pending_ids = [call["id"] for call in calls]
            facts["turns"] = str(cp["turns"])
        except (KeyError, TypeError):
            facts[field] = words["checkpoint_unreadable"]
            pending_ids = None
    ledger = {} if found["ledger"] is None else found["ledger"]
    if pending_ids and isinstance(ledger, dict):
        facts["ledger"] = texts.LABVIEW_LEDGER_JOIN.join(
            texts.LABVIEW_LEDGER_ID.format(id=i, holds=words["there" if i in ledger else "not_there"])
            for i in pending_ids
        )
    elif pending_ids:
        facts["ledger"] = words["ledger_unreadable"]
    elif cp is not None:
        facts["ledger"] = words["no_pending"]
    facts["report"] = words["there" if found["exists"][REPORT_FILE] else "not_there"]
    key = key_of(found["report"] or "")
    if key is not None:  # the idempotent write_report's answer
        facts["report"] += words["key"].format(key=key)
    if not one_call_per_turn(scenario):
        facts["summary"] = words["there" if found["exists"][SUMMARY_FILE] else "not_there"]
    ids = [line.split(" ")[1] for line in found["runs"] if line.split(" ")[0] == WRITE_REPORT and " " in line]
    facts["write_report"] = words["times"].format(count=len(ids))
    if len(set(ids)) > 1:  # several calls of it (the parallel task): how many times each one ran
        each = texts.LIST_JOIN.join(
            texts.LABVIEW_RUNS_OF_CALL.format(id=i, times=words["times"].format(count=ids.count(i)))
            for i in dict.fromkeys(ids)
        )
        facts["write_report"] += words["each"].format(each=each)
    return facts


FACT_LABELS = texts.LAB_FACT_LABELS
FACTS_STYLE = "font-size:13px;line-height:1.6;padding:4px 6px;border:1px solid #ccc;background:#f6f8fa"
MARK_STYLE = "background:#ffe58a;padding:0 2px"


def facts_html(now: dict[str, str], before: dict[str, str] | None) -> str:
    """The facts on one panel; each one that changed since `before` is marked and shows what it was."""

    def fact(name: str) -> str:
        value = f"<b>{html.escape(now[name])}</b>"
        if before is not None and before.get(name) != now[name]:
            was = html.escape(before.get(name, "—"))
            value = texts.LABVIEW_FACT_WAS.format(now=value, was=was)
            value = f"<mark class='lab-fact-changed' style='{MARK_STYLE}'>{value}</mark>"
        return f"<span class='lab-fact' data-fact='{name}'>{FACT_LABELS[name]}: {value}</span>"

    pending = "pendingToolUses" if "pendingToolUses" in now else "pendingToolUse"
    deciding = texts.LABVIEW_FACTS_JOIN.join(fact(n) for n in ("turns", pending, "ledger"))
    outside = texts.LABVIEW_FACTS_JOIN.join(
        fact(n) for n in ("report", "summary", "write_report") if n in now
    )
    return (
        f"<div style='{FACTS_STYLE}'><b>{texts.LAB_WORDS['deciding']}</b>: {deciding}<br>"
        f"<b>{texts.LAB_WORDS['outside']}</b>: {outside}</div>"
    )


def _pre(data: bytes | None) -> str:
    if data is None:
        return f"<pre style='{PRE_STYLE};max-height:220px;color:#888'>{texts.LAB_WORDS['no_file']}</pre>"
    text = pretty(data.decode("utf-8", errors="replace"))
    return f"<pre style='{PRE_STYLE};max-height:160px'>{html.escape(text)}</pre>"


def compare_html(
    turn: int, tool: str, rows: list[dict], facts: dict[str, dict[str, str]], resumed: dict[str, str]
) -> str:
    """Two disks side by side: the facts that decide a resume, each file marked 同一 or 異なる, and the line each
    resume printed."""
    same = "color:#1a7f37;font-weight:bold"
    differ = "color:#cf222e;font-weight:bold"
    cells = [
        f"<tr><th></th><th>① after-save-a:{turn}</th><th>② after-tool-run:{turn}</th></tr>",
        f"<tr class='lab-compare-facts' style='font-size:12px'><td><b>{texts.LAB_WORDS['deciding']}</b></td>"
        + "".join(
            "<td>"
            + texts.LABVIEW_FACTS_JOIN.join(
                f"{FACT_LABELS[n]}: <b>{html.escape(facts[m][n])}</b>" for n in FACT_NAMES
            )
            + "</td>"
            for m in ("①", "②")
        )
        + "</tr>",
    ]
    for row in rows:
        if row["same"]:
            verdict = (
                f"<span class='lab-same' style='{same}'>{texts.LAB_WORDS['same']}</span>"
                + texts.LAB_WORDS["same_bytes"].format(size=size_text(row["a"]))
            )
        else:
            verdict = (
                f"<span class='lab-differ' style='{differ}'>{texts.LAB_WORDS['differ']}</span>"
                + texts.LAB_WORDS["sizes"].format(a=size_text(row["a"]), b=size_text(row["b"]))
            )
        cells.append(
            f"<tr class='lab-compare-row' data-file='{row['name']}'>"
            f"<td style='vertical-align:top;width:18%'><b>{row['name']}</b><br>{verdict}</td>"
            f"<td style='vertical-align:top;width:41%'>{_pre(row['a'])}</td>"
            f"<td style='vertical-align:top;width:41%'>{_pre(row['b'])}</td></tr>"
        )
    # the conclusion first, right under the heading: what each resume decided, then which files differ
    conclusion = (
        f"<tr class='lab-compare-resume' style='font-size:14px;background:#fff8e1'><td><b>{texts.LAB_COMPARE_CONCLUSION}"
        "</b></td>" + "".join(f"<td><b>{html.escape(resumed[m])}</b></td>" for m in ("①", "②")) + "</tr>"
    )
    disks = (
        f"<tr class='lab-compare-disks'><td><b>{texts.LAB_COMPARE_DISKS}</b></td><td colspan='2'>"
        + texts.LABVIEW_FACTS_JOIN.join(
            f"{row['name']} "
            + (
                f"<span style='{same}'>{texts.LAB_WORDS['same']}</span>"
                if row["same"]
                else f"<span style='{differ}'>{texts.LAB_WORDS['differ']}</span>"
            )
            for row in rows
        )
        + "</td></tr>"
    )
    state_same = all(row["same"] for row in rows if row["name"] in (CHECKPOINT_FILE, EFFECTS_FILE))
    if state_same:
        verdict = texts.LAB_COMPARE_SAME if resumed["①"] == resumed["②"] else texts.LAB_COMPARE_ASKED
        conclusion += (
            f"<tr class='lab-compare-verdict' style='background:#fff8e1'><td></td>"
            f"<td colspan='2' style='font-size:14px'>→ {html.escape(verdict)}</td></tr>"
        )
    cells[1:1] = [conclusion, disks]
    return (
        f"<div><b>{texts.LAB_WORDS['compare_title'].format(turn=turn, tool=tool)}</b> {texts.LAB_WORDS['compare_lead']}"
        f"<table style='width:100%;border-collapse:collapse;font-size:12px'>{''.join(cells)}</table></div>"
    )


def landed(events: list[Event]) -> str:
    """Where a kill by hand landed: after the last step the process reported (it reports a step, then pauses in slow
    motion, so the kill comes in that pause), in the lesson's words, with the turn and the call."""
    turn, call, last = "?", {}, None
    for event in events:
        if event.kind in ("save_a", "resume"):
            turn = event.data["turn"]
        if "id" in event.data:
            call = event.data
        if event.kind in texts.LAB_LANDED:
            last = event
    if last is None:
        return texts.LAB_LANDED["start"]
    data = {"turn": turn, "pending": "", "name": "", "id": "", **call, **last.data}
    return texts.LAB_LANDED[last.kind].format(**data)


class CrashLab:
    """The widget: controls, buttons, live views of the work folder, the transcript, the branch, the timeline."""

    def __init__(self, workdir: str | Path = "_work/crash-lab", timeline: bool = True) -> None:
        self.workdir = Path(workdir)
        self.events_file = self.workdir.parent / f"{self.workdir.name}.events.jsonl"
        # the browser edition: where the interpreter was when it was killed, for the lab that opens after it
        self.killed_file = self.workdir.parent / f"{self.workdir.name}.killed"
        self.with_timeline = timeline
        self.events: list[Event] = []
        self.shown: dict[str, tuple | None] = {name: None for name in FILES}  # (base, now) each view shows
        self.files_base: dict[str, str | None] = {
            name: None for name in FILES
        }  # the files when the action began
        self.lines: list[str] = []  # transcript lines not yet sent to the page (one message per action)
        self.decision: str | None = (
            None  # the decision of the resume after the crash (a later resume keeps it)
        )
        self.resuming_after_done = False
        self.command: str | None = None  # the command line of the latest real process, as run
        self.process_events = 0  # where the current process's events begin in self.events
        self.process: WatchedProcess | None = None
        self.crash_snapshot: dict[str, bytes] | None = None
        self.steps_taken = 0
        self.step_phase: str | None = None
        self.phase = "idle"  # idle, stepping, crashed, done
        self.reconciled: list[dict] = []  # the reconcile events of the latest resume, in order
        # whose crash points the occurrence list shows, in a scenario with several calls per turn
        self.occurrences_of = "after-tool-run"

        self.scenario = w.Dropdown(
            options=SCENARIO_OPTIONS,
            value="lesson",
            description=texts.LAB_WORDS["scenario"],
            layout=w.Layout(width="460px"),
        )
        self.where = w.HTML()  # the chosen crash point, as the command line would be told it
        words = texts.LAB_WORDS
        self.moment = w.RadioButtons(options=MOMENTS, value="after-tool-run", description=words["moment"])
        self.turn = w.RadioButtons(options=TURNS, value=3, description=words["turn"])
        self.how = w.RadioButtons(options=HOW, value="simulated", description=words["how"])
        self.slow = w.IntSlider(
            value=0,
            min=0,
            max=2000,
            step=100,
            description=words["slow"],
            tooltip=words["slow_tooltip"],
        )
        self.buttons = [self._button(*spec) for spec in BUTTONS]  # in BUTTONS' order
        self.run_button, self.resume_button, self.step_button, self.reset_button = self.buttons[:4]
        self.kill_button, self.compare_button = self.buttons[4:]
        if IN_BROWSER:  # slow motion is for a process watched while it runs; here nothing runs between clicks
            self.slow.layout.display = "none"
        self.kill_button.disabled = not IN_BROWSER  # in the browser it kills this interpreter, at any time
        self.dying = w.HTML(layout=w.Layout(display="none"))  # "killed": the page restarts the kernel
        self.dying.add_class("lab-dying")
        self.status = w.HTML()
        self.facts = w.HTML()  # what decides a resume, on top of the file views (no scrolling needed)
        self.facts_base: dict[str, str] | None = None  # the facts when the latest action began
        self.branch = w.HTML(style=DECISION_STYLE, layout=w.Layout(display="none", padding="4px 10px"))
        self.compare_view = w.HTML()
        self.compared: dict | None = None  # the latest comparison of ① and ② (for a test or a person)
        self.views = {name: w.HTML() for name in FILES}
        self.report = w.HTML()
        self.transcript = w.Output(layout=w.Layout(border="1px solid #ccc", padding="4px"))
        # SVG: sharp at any zoom (a projector at 150 %); its width follows the page, up to its drawn size
        self.timeline = w.Image(format="svg+xml", layout=w.Layout(width="100%", max_width="900px"))
        # stable CSS hooks, for a person's stylesheet and for the browser test
        for widget, css in (
            (self.scenario, "lab-scenario"),
            (self.where, "lab-where"),
            (self.turn, "lab-turn"),
            (self.status, "lab-status"),
            (self.facts, "lab-facts"),
            (self.branch, "lab-branch"),
            (self.compare_view, "lab-compare-view"),
            (self.report, "lab-report"),
            (self.transcript, "lab-transcript"),
            (self.timeline, "lab-timeline"),
            (self.slow, "lab-slow"),
        ):
            widget.add_class(css)
        for name, css in zip(FILES, ("lab-view-checkpoint", "lab-view-effects", "lab-view-log")):
            self.views[name].add_class(css)
        self.widget = self._layout()
        self.scenario.observe(lambda _: self.choose_scenario(), "value")
        self.moment.observe(lambda _: self._update_turns(), "value")
        self.turn.observe(lambda _: self._update_where(), "value")
        self._update_where()
        if IN_BROWSER and self.killed_file.exists():
            self._after_kill()
        else:
            self.reset()

    def _button(self, description: str, style: str, icon: str, css: str, action: str) -> w.Button:
        # as wide as its label (never cut), and the row wraps rather than squeezing a button
        button = w.Button(
            description=description,
            button_style=style,
            icon=icon,
            layout=w.Layout(width="auto", flex="0 0 auto", padding="0 12px"),
        )
        button.add_class(css)
        button.on_click(lambda _: getattr(self, action)())
        return button

    # ---- layout -------------------------------------------------------------------------------------------------
    def _layout(self) -> w.Widget:
        # in a narrow page the last column moves below rather than squeezing the list of crash points
        controls = w.HBox(
            [self.moment, self.turn, w.VBox([self.how, self.slow])], layout=w.Layout(flex_flow="row wrap")
        )
        buttons = w.HBox(self.buttons, layout=w.Layout(flex_flow="row wrap"))
        files = w.HBox(
            [
                w.VBox([w.HTML(f"<b>{name}</b>"), view], layout=w.Layout(width="33%"))
                for name, view in self.views.items()
            ]
        )
        parts = [
            w.HTML(
                f"<div style='font-size:15px;font-weight:bold;margin:4px 0'>{texts.LAB_WORDS['title']}</div>"
            ),
            w.HBox([self.scenario, self.where], layout=w.Layout(flex_flow="row wrap", align_items="center")),
            controls,
            buttons,
            self.status,
            self.facts,
            self.branch,
            self.compare_view,
            files,
            self.report,
            w.HTML(f"<b>{texts.LAB_WORDS['log']}</b>"),
            self.transcript,
        ]
        if self.with_timeline:
            parts += [w.HTML(f"<b>{texts.LAB_WORDS['timeline']}</b>"), self.timeline]
        return w.VBox([*parts, self.dying]).add_class("lab-root")

    def _repr_mimebundle_(self, **kwargs) -> dict:
        """The widget, and for a page that has no widget state yet (a notebook opened, its cell not yet run) one
        line saying so, instead of the widget tree's repr."""
        if IN_BROWSER:  # shown by running the cell, so the page trusts it and runs it
            from IPython.display import Javascript, display

            display(Javascript(RESTART_AFTER_KILL))
        data = self.widget._repr_mimebundle_(**kwargs)
        data["text/plain"] = texts.LAB_NOT_SHOWN_YET
        return data

    # ---- what every run reports to -------------------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        """The lab's listener: the transcript line, the branch in the lesson's words, and the files as on disk."""
        self.events.append(event)
        line = format_event(event.kind, event.data)
        if line is not None:
            self.lines.append(line)
        if event.kind == "resume":
            self.reconciled = []
            if event.data.get("pending") is None:
                if self.resuming_after_done:  # the run was complete: the decision that mattered stays
                    note = texts.LAB_NOTHING_TO_DO if self.decision else texts.LAB_NOTHING_TO_DO_ALONE
                    self._show_branch((self.decision + "<br>" if self.decision else "") + html.escape(note))
                else:
                    self.decision = f"<b>{texts.LAB_DECISION}:</b> {NO_RECONCILE}"
                    self._show_branch(self.decision)
        if event.kind == "reconcile":  # one per pending call: a parallel resume has several
            self.reconciled.append({k: event.data[k] for k in ("id", "name", "branch")})
            self.decision = branch_html(self.reconciled)
            self._show_branch(self.decision, event.data["branch"])

    def _show_branch(self, value: str, branch: str | None = None) -> None:
        """The decision box (hidden while empty), its edge coloured by the branch."""
        if not value:
            self.branch.value, self.branch.layout.display = "", "none"
            return
        edge = DECISION_EDGE.get(branch, DECISION_EDGE[None])
        if self.reconciled and any(r["branch"] == "unknown" for r in self.reconciled):
            edge = DECISION_EDGE["unknown"]
        self.branch.layout.border_left = f"6px solid {edge}"
        self.branch.layout.display = None
        self.branch.value = value

    def _say(self, line: str) -> None:
        self.lines.append(line)

    def flush(self) -> None:
        """Send what the action did to the page: the transcript's new lines in one message, then the views."""
        if self.lines:
            self.transcript.append_stdout("".join(line + "\n" for line in self.lines))
            self.lines = []
        self.refresh()

    def refresh(self) -> None:
        """Re-read the work folder; the lines the current action added or changed are highlighted (only those)."""
        for name in FILES:
            shown = (self.files_base[name], pretty(read_text(self.workdir / name)))
            if shown != self.shown[name] or not self.views[name].value:
                self.views[name].value = highlight(*shown)
                self.shown[name] = shown
        outputs = [REPORT_FILE] + ([] if one_call_per_turn(self.scenario.value) else [SUMMARY_FILE])
        self.report.value = texts.LABVIEW_FACTS_JOIN.join(
            f"<b>{name}:</b> {texts.LAB_FACT_WORDS['there' if (self.workdir / name).exists() else 'not_there']}"
            for name in outputs
        )
        self.facts.value = facts_html(recovery_facts(self.workdir, self.scenario.value), self.facts_base)

    def _begin(self) -> None:
        """An action starts: the facts and the files as they are now are what its changes are marked against."""
        self.facts_base = recovery_facts(self.workdir, self.scenario.value)
        self.files_base = self._files()
        self.facts.layout.display = None  # hidden while a comparison was shown

    def _files(self) -> dict[str, str | None]:
        return {name: pretty(read_text(self.workdir / name)) for name in FILES}

    def _clear_views(self) -> None:
        self.shown = {name: None for name in FILES}
        for view in self.views.values():
            view.value = ""
        self.transcript.outputs = ()
        self.lines = []
        self.facts.layout.display = None
        self.reconciled, self.decision = [], None
        self._show_branch("")
        self.compare_view.value = ""

    def _set_status(self, text: str) -> None:
        self.status.value = f"<b>{texts.LAB_WORDS['status']}:</b> {html.escape(text)}"

    def _plan(self) -> CrashPlan | None:
        if not self.moment.value:
            return None
        if IN_BROWSER and self.how.value == "sigkill":  # a real SIGKILL of this interpreter at that moment
            return CrashPlan(self.moment.value, self.turn.value, mode="sigkill")
        return CrashPlan(self.moment.value, self.turn.value)

    # ---- the browser edition's real kill: this interpreter dies, the page restarts the kernel ---------------------
    def _dying(self, where: str) -> None:
        """Just before this interpreter is killed: note where (on /drive, which outlives the kernel) and tell the
        page (.lab-dying), which restarts the kernel and runs the lab's cell again."""
        self.killed_file.write_text(where, encoding="utf-8")
        self._set_status(texts.LAB_BROWSER_DYING)
        self.dying.value = "killed"

    def _on_crash(self, event: Event) -> None:
        if event.kind == "crash" and event.data.get("mode") == "sigkill":
            self._dying(event.data["label"])

    def _after_kill(self) -> None:
        """The lab in a fresh interpreter after a real kill: the folder as the dead one left it, ready to resume."""
        where = self.killed_file.read_text(encoding="utf-8")
        self.killed_file.unlink()
        self.how.value = "sigkill"
        self.events, self.steps_taken, self.step_phase, self.phase = [], 0, None, "crashed"
        self.crash_snapshot = self._disk()
        self._clear_views()
        self.timeline.layout.display = "none"
        self._begin()
        self.refresh()
        self._say(texts.LAB_BROWSER_KILLED_TRANSCRIPT.format(where=where))
        self.flush()
        self._set_status(texts.LAB_BROWSER_KILLED.format(where=where))

    # ---- the scenario and its crash points ------------------------------------------------------------------------
    def choose_scenario(self) -> None:
        """Another scenario: the list of crash points follows it, and the work folder starts empty (a folder holds
        one scenario's run; the lesson's own runs never see another's files)."""
        scenario = self.scenario.value
        self._update_turns()
        self.compare_button.disabled = not one_call_per_turn(scenario)
        self.reset()
        note = "" if one_call_per_turn(scenario) else " " + texts.LAB_COMPARE_ONE_CALL_ONLY
        self._set_status(texts.LAB_STATUS["switched"].format(scenario=SCENARIO_NAMES[scenario], note=note))

    def _update_turns(self) -> None:
        """The lesson's three turns, or, when a turn holds several calls, every occurrence of the chosen moment."""
        scenario = self.scenario.value
        if one_call_per_turn(scenario):
            options, description = TURNS, texts.LAB_WORDS["turn"]
        else:
            self.occurrences_of = self.moment.value or self.occurrences_of
            moments = moments_of(scenario)[self.occurrences_of]
            options, description = (
                [(text, n) for n, text in enumerate(moments, 1)],
                texts.LAB_WORDS["occurrence"],
            )
        if [tuple(o) for o in self.turn.options] != options:
            keep = self.turn.value
            self.turn.options = options  # (this resets the value to the first option)
            self.turn.value = min(keep, len(options))
        self.turn.description = description
        # the lesson's short labels fit the default width; a parallel turn's crash points need their own
        wide = not one_call_per_turn(scenario)
        self.turn.layout.width, self.turn.layout.flex = ("max-content", "0 0 auto") if wide else (None, None)
        self._update_where()

    def _update_where(self) -> None:
        """The chosen crash point as the command line is told it, and what that point is in this scenario."""
        scenario, label, n = self.scenario.value, self.moment.value, self.turn.value
        command = " ".join(["python -m harness", *cli_args(scenario)])
        if label is None:
            text = texts.LAB_WORDS["no_crash"].format(command=command)
        else:
            moments = moments_of(scenario).get(label, [])
            what = moments[n - 1] if n and n <= len(moments) else texts.LAB_WORDS["never_reached"]
            text = texts.LABVIEW_CRASH_POINT.format(label=label, n=n, command=command, what=html.escape(what))
        self._show_where(text)

    def _show_where(self, text: str) -> None:
        self.where.value = f"<span style='font-size:12px'>{text}</span>"

    def _draw_timeline_later(self) -> None:
        """Draw the picture once the click's handler has returned. The page shows a click's changes only after its
        handler ends (measured in Voila: with the drawing made to take 1 s inside the handler, the status line
        appeared 1 s late), so drawing inside it would hold back the status and the views for as long as
        matplotlib takes. Outside a kernel's event loop (a script, a test) the picture is drawn at once."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._draw_timeline()
            return
        loop.call_later(0.02, self._draw_timeline)

    def _draw_timeline(self) -> None:
        if self.with_timeline:
            from .plots import timeline_svg

            self.timeline.value = timeline_svg(self.events)
            self.timeline.layout.display = None

    # ---- buttons ------------------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Empty the work folder and every view."""
        self.kill_now(quiet=True)
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.events_file.unlink(missing_ok=True)
        self.events, self.steps_taken, self.crash_snapshot, self.phase = [], 0, None, "idle"
        self.step_phase = None
        self._clear_views()
        self.timeline.value = b""
        self.timeline.layout.display = "none"  # no picture yet: no empty image frame either
        self._begin()
        self.refresh()
        self._set_status(texts.LAB_STATUS["nothing_yet"])
        if self.command is not None:  # the line beside the scenario says again what the controls choose
            self.command = None
            self._update_where()

    def run(self) -> None:
        """A fresh run, crashing where the controls say (in the kernel, or as a real process)."""
        self.reset()
        if self.how.value == "sigkill" and not IN_BROWSER:
            self._start_process([], crash=True)
            return
        self._in_kernel(resume=False)

    def resume(self) -> None:
        """--resume in the same folder: load, reconcile, continue."""
        if self.process is not None:
            self._set_status(texts.LAB_STATUS["busy_resume"])
            return
        self.compare_view.value = ""
        if self.decision is None and self.branch.value:  # a comparison's or an old line: not this run's
            self._show_branch("")
        self.resuming_after_done = self.phase == "done"
        self._begin()
        self._say("--- " + texts.LAB_BUTTONS["resume"])
        if self.how.value == "sigkill" and not IN_BROWSER:
            self._start_process(["--resume"], crash=False)
            return
        self._in_kernel(resume=True)

    def _in_kernel(self, resume: bool, limit: int | None = None) -> None:
        """One run in the kernel. The page is updated once, when it ends: the views, then the status line, then the
        (slower) picture. The run takes milliseconds; an update per event would only make the browser redraw the same
        views twenty times."""
        status, whole = None, False
        try:
            status, whole = self._run_in_kernel(resume, limit)
        finally:
            self.flush()
        self._set_status(status)
        if whole:
            self._draw_timeline_later()

    def _run_in_kernel(self, resume: bool, limit: int | None) -> tuple[str, bool]:
        """(the status line, whether the run or resume ended: a paused step leaves the picture as it was)."""
        try:
            run_in_folder(
                self.workdir,
                self.scenario.value,
                resume=resume,
                crash=None if resume else self._plan(),
                listeners=[self.on_event, self._on_crash] + ([self._stopper(limit)] if limit else []),
            )
            self.phase = "done"
            return texts.LAB_STATUS["resumed_done" if resume else "done"], True
        except SimulatedCrash as crash:
            self.phase = "crashed"
            self.crash_snapshot = self._disk()
            return texts.LAB_STATUS["killed_in_kernel"].format(label=crash.label), True
        except _Pause:
            self.phase = "stepping"
            return texts.LAB_STATUS["paused"].format(steps=self.steps_taken), False
        except HarnessError as err:
            return str(err).replace("\n", " "), True

    def _disk(self) -> dict[str, bytes]:
        """The work folder's files as they are now: what a step-by-step resume starts from, after either crash."""
        return {p.name: p.read_bytes() for p in self.workdir.iterdir() if p.is_file()}

    def _stopper(self, limit: int):
        seen = [0]

        def stop(event: Event) -> None:
            if event.kind in STEPS and event.kind not in (
                "crash",
                "done",
            ):  # those two end the phase themselves
                seen[0] += 1
                if seen[0] >= limit:
                    raise _Pause()

        return stop

    def step(self) -> None:
        """One more event. The loop is replayed from the start of this phase up to that event (it is deterministic),
        so the files shown are exactly what the real loop leaves on disk at that point."""
        if self.how.value == "sigkill" and not IN_BROWSER:
            self._set_status(texts.LAB_STATUS["step_in_kernel_only"])
            return
        if self.phase == "crashed":
            self.step_phase, self.steps_taken = "resume", 1
            if self.crash_snapshot is None:  # never wipe a crashed disk that was not kept
                self.crash_snapshot = self._disk()
        elif self.phase != "stepping":
            self.step_phase, self.steps_taken, self.crash_snapshot = "run", 1, None
        else:
            self.steps_taken += 1
        stepping = self.phase == "stepping"
        previous = recovery_facts(self.workdir, self.scenario.value) if stepping else None
        previous_files = self._files() if stepping else None
        self.kill_now(quiet=True)
        shutil.rmtree(self.workdir, ignore_errors=True)
        self.workdir.mkdir(parents=True)
        resuming = self.step_phase == "resume"
        for name, data in (self.crash_snapshot or {}).items() if resuming else ():
            (self.workdir / name).write_bytes(data)
        self.facts_base = (
            previous if previous is not None else recovery_facts(self.workdir, self.scenario.value)
        )
        self.events = []
        self._clear_views()
        self.files_base = previous_files if previous_files is not None else self._files()
        self.resuming_after_done = False
        if resuming:
            self._say("--- " + texts.LAB_STATUS["resume_by_step"])
        snapshot = self.crash_snapshot
        self._in_kernel(resume=resuming, limit=self.steps_taken)
        if resuming and self.phase == "stepping":
            self.crash_snapshot = snapshot

    def compare(self) -> None:
        """Crash at ① and at ② on the chosen turn, in two scratch folders beside the lab's; show both disks side by
        side (identical or not, byte for byte), then resume each and show the branch it took."""
        if self.process is not None:
            self._set_status(texts.LAB_STATUS["busy_compare"])
            return
        scenario = self.scenario.value
        if not one_call_per_turn(scenario):
            self._set_status(texts.LAB_COMPARE_ONE_CALL_ONLY)
            return
        turn = self.turn.value
        tool = list(texts.LAB_TURNS)[turn - 1]
        folders = {m: self.workdir.parent / f"{self.workdir.name}-compare-{i}" for i, m in enumerate("①②", 1)}
        for moment, folder in folders.items():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            label = "after-save-a" if moment == "①" else "after-tool-run"
            try:
                run_in_folder(folder, scenario, crash=CrashPlan(label, turn))
            except SimulatedCrash:
                pass
        rows = compare_folders(folders["①"], folders["②"])
        facts = {moment: recovery_facts(folder, scenario) for moment, folder in folders.items()}
        resumed = {}
        for moment, folder in folders.items():
            events: list[Event] = []
            run_in_folder(folder, scenario, resume=True, listeners=[events.append])
            reconcile = [format_event(e.kind, e.data) for e in events if e.kind == "reconcile"]
            resumed[moment] = reconcile[0] if reconcile else NO_RECONCILE
        self.compared = {"turn": turn, "rows": rows, "facts": facts, "resumed": resumed, "folders": folders}
        # the lab's own resume line and facts would sit above the table as if they were the comparison's
        self._show_branch("")
        self.facts.layout.display = "none"
        self.compare_view.value = compare_html(turn, tool, rows, facts, resumed)
        same = [r["name"] for r in rows if r["same"]]
        differ = [r["name"] for r in rows if not r["same"]]
        summary = texts.LAB_STATUS["compared"].format(
            turn=turn,
            tool=tool,
            same=texts.LABVIEW_FILES_JOIN.join(same) or texts.NOTHING,
            differ=texts.LABVIEW_FILES_JOIN.join(differ) or texts.NOTHING,
        )
        self._set_status(summary)
        self._say(f"--- {summary}")
        self.flush()

    # ---- a real process -------------------------------------------------------------------------------------------
    def _start_process(self, args: list[str], crash: bool) -> None:
        crash_after = f"{self.moment.value}:{self.turn.value}" if crash and self.moment.value else None
        args = cli_args(self.scenario.value) + args  # the scenario's flags, then --resume if resuming
        self.process = WatchedProcess(self.workdir, self.events_file, args, crash_after, self.slow.value)
        self.process_events = len(self.events)
        self.kill_button.disabled = False
        # the line beside the scenario: the command as run (the lab also sets HARNESS_EVENTS_FILE to watch it)
        settings = [f"CRASH_AFTER={crash_after} CRASH_MODE=sigkill"] if crash_after else []
        settings += [f"HARNESS_SLOW_MS={self.slow.value}"] if self.slow.value else []
        self.command = " ".join([*settings, "python -m harness", *args])
        self._show_where(texts.LAB_RUNNING_COMMAND.format(command=html.escape(self.command)))
        self._set_status(texts.LAB_STATUS["process_running"].format(pid=self.process.pid))
        try:
            asyncio.get_running_loop().create_task(self._watch())
        except RuntimeError:  # no event loop (a script or a test): the caller polls with wait()
            pass

    async def _watch(self) -> None:
        while self.poll():
            await asyncio.sleep(0.05)

    def wait(self, timeout: float = 300) -> None:
        """Poll a real process until it ends (outside a kernel's event loop); a process still running at the timeout
        is a hang, said as one (never a silent return that reads as a finished run)."""
        deadline = time.monotonic() + timeout
        while self.poll():
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the lab's process still runs after {timeout:g} s")
            time.sleep(0.02)

    def poll(self) -> bool:
        """Hand new events from the process to the listener; True while the process is still running."""
        if self.process is None:
            return False
        running = self.process.running()
        events = self.process.new_events()
        for event in events:
            self.on_event(event)
        if running:
            if events:
                self.flush()
            return True
        (code, stderr), by_hand = self.process.outcome(), self.process.killed_by_hand
        self._drop_process()
        ran = texts.LAB_RAN_COMMAND.format(command=html.escape(self.command or ""))
        self._show_where(ran)
        if code in (-9, 137):
            self.phase = "crashed"
            # the disk the kill left, as after a crash in the kernel: "1歩進む" replays the resume from it
            self.crash_snapshot = self._disk()
            self._set_status(texts.LAB_STATUS["process_killed"])
        elif code == 0:
            self.phase = "done"
            self._set_status(texts.LAB_STATUS["process_done"])
        else:
            self._set_status(texts.LAB_STATUS["process_failed"].format(code=code, stderr=stderr.strip()))
        if by_hand:
            where = landed(self.events[self.process_events :])
            self._say(texts.LAB_KILL_TRANSCRIPT.format(where=where))
            self._show_where(ran + " → " + html.escape(texts.LAB_KILL_LANDED.format(where=where)))
            if code in (-9, 137):
                self._set_status(texts.LAB_KILL_STATUS.format(where=where))
                # the timeline's kill marker, where the kill landed (the process could not report its own death)
                self.events.append(Event("crash", {"label": texts.LAB_KILL_MARK, "mode": "by-hand"}))
        self.flush()
        self._draw_timeline_later()
        return False

    def kill_now(self, quiet: bool = False) -> None:
        """Send SIGKILL to the running process, at whatever moment it is in (quiet: when resetting). In the browser,
        where nothing runs between clicks, to this interpreter, with the folder as it is now."""
        if IN_BROWSER and not quiet:
            self._dying(texts.LAB_KILL_MARK)
            self.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        if self.process is None:
            return
        self.process.kill(by_hand=not quiet)
        if quiet:
            self._drop_process()

    def _drop_process(self) -> None:
        """Forget the finished process (closing its stderr pipe) and turn the kill button off."""
        if self.process is not None and self.process.popen.stderr is not None:
            self.process.popen.stderr.close()
        self.process = None
        self.kill_button.disabled = True
