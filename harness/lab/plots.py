"""Pictures for the notebooks (matplotlib, Japanese labels through matplotlib-fontja's bundled font).

The browser edition has no matplotlib (Pyodide's build of it is not in the offline site): there the same numbers are
printed as a table, with one line saying so, and the Crash Lab's timeline picture stays empty.
"""

from __future__ import annotations

from .. import texts

try:
    import matplotlib.pyplot as plt
    import matplotlib_fontja  # noqa: F401  (sets the IPAexGothic font it ships, so no missing-glyph warnings)
except ImportError:
    plt = None


def print_cost(
    per_save: list[tuple[str, int]],
    turns: list[int],
    written: dict[str, list[int]],
    seconds: dict[str, list[float]],
) -> None:
    """plot_cost's three pictures as numbers, where there is no matplotlib."""
    from . import table

    print(texts.NO_PLOTS)
    words = texts.COST_WORDS
    print(words["sizes_table"].format(turns=turns[-1]))
    print(table([[words["save"], words["bytes"]], *([label, size] for label, size in per_save)]))
    print()
    print(words["totals_table"])
    names = list(written)
    header = [
        words["turns"],
        *(words["in_bytes"].format(name=n) for n in names),
        *(words["in_ms"].format(name=n) for n in seconds),
    ]
    rows = [
        [t, *(written[n][i] for n in names), *(f"{seconds[n][i] * 1000:.1f}" for n in seconds)]
        for i, t in enumerate(turns)
    ]
    print(table([header, *rows]))


def plot_cost(
    per_save: list[tuple[str, int]],
    turns: list[int],
    written: dict[str, list[int]],
    seconds: dict[str, list[float]],
) -> None:
    """The price of the mechanism, on linear axes: checkpoint.json's size at each save of one long task; the bytes
    written by whole tasks of 1..N turns; the time those tasks spent saving. Without matplotlib: print_cost."""
    if plt is None:
        print_cost(per_save, turns, written, seconds)
        return
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 3.8))
    labels = [label for label, _ in per_save]
    ax1.plot(range(len(per_save)), [size / 1000 for _, size in per_save], marker="o", color="tab:blue")
    step = max(1, len(labels) // 10)
    ax1.set_xticks(range(0, len(labels), step), labels[::step])
    words = texts.COST_WORDS
    ax1.set_title(words["sizes"].format(turns=turns[-1]))
    ax1.set_xlabel(words["save_axis"])
    ax1.set_ylabel(words["size_axis"])
    for name, values in written.items():
        ax2.plot(turns, [v / 1000 for v in values], marker="o", label=name)
    ax2.set_title(words["written"])
    ax2.set_ylabel("kB")
    for name, values in seconds.items():
        ax3.plot(turns, [v * 1000 for v in values], marker="o", label=name)
    ax3.set_title(words["spent"])
    ax3.set_ylabel(words["ms_axis"])
    for ax in (ax2, ax3):
        ax.set_xlabel(words["turns_axis"])
        ax.set_xticks(turns)
        ax.legend(fontsize=8)
    for ax in (ax1, ax2, ax3):
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    plt.show()


MARKS = {  # event kind: (label, marker, colour)
    kind: (texts.TIMELINE_MARKS[kind], marker, colour)
    for kind, marker, colour in (
        ("save_a", "^", "tab:blue"),
        ("tool_ran", "o", "tab:orange"),
        ("effect_written", "s", "tab:green"),
        ("save_b", "v", "tab:purple"),
        ("crash", "X", "red"),
        ("reconcile", "D", "tab:brown"),
        ("done", "*", "goldenrod"),
    )
}
BRANCH_SHORT = texts.TIMELINE_BRANCHES


def pending_names(pending: str | None) -> list[str]:
    """The tool names of a save_a / resume event's pending: "write_report", or "[write_report, write_report]"."""
    if not pending:
        return []
    return [name.strip() for name in pending.strip("[]").split(",")]


def draw_timeline(events, ax) -> None:
    """Each turn's events in order on two lanes (the first run, the resume), the kill, the unknown-outcome window.

    The window opens at point A when the turn names a side-effecting tool, and closes when the ledger holds every
    side-effecting call of the turn (one in the lesson; two write_report calls in the parallel task's second turn).
    """
    from ..tools import READ_ONLY

    lane, turn, x, pending = 1, 0, 0, {}
    window_start, unrecorded, reconciled, seen_labels = None, 0, 0, set()
    labels = []  # (x, text) of the labels above a point: aligned once the axis' length is known, so none is clipped
    points: dict[
        str, list[tuple[int, int]]
    ] = {}  # each kind's points, drawn in one go (a scatter each is slow)

    def label_above(text: str, x: int, lane: int) -> None:
        labels.append((x, ax.annotate(text, (x, lane), xytext=(0, 14), textcoords="offset points", fontsize=8,
                                      ha="left")))  # fmt: skip

    for event in events:
        kind, data = event.kind, event.data
        if kind == "resume":
            lane, turn = 0, data["turn"]
            x += 1
            label_above(
                texts.TIMELINE_WORDS["resume"].format(turn=turn, pending=data["pending"] or texts.NOTHING),
                x,
                lane,
            )
            continue
        if kind not in MARKS:
            continue
        x += 1
        if kind == "save_a":
            turn = data["turn"]
            pending[turn] = data["pending"]
            label_above(f"{turn}: {data['pending']}", x, lane)
            unrecorded = sum(1 for name in pending_names(data["pending"]) if name not in READ_ONLY)
            if unrecorded:
                window_start = x
        if kind == "effect_written" and data.get("name") not in READ_ONLY:
            unrecorded -= 1
        closes = kind == "crash" or (kind == "effect_written" and unrecorded <= 0)
        if closes and window_start is not None and lane == 1:
            ax.axvspan(
                window_start - 0.3,
                x - (0.3 if kind == "effect_written" else 0),
                color="red",
                alpha=0.12,
                label=None if "window" in seen_labels else texts.TIMELINE_WORDS["window"],
            )
            seen_labels.add("window")
            window_start = None
        points.setdefault(kind, []).append((x, lane))
        colour = MARKS[kind][2]
        if kind == "reconcile":
            # a resume of several pending calls reconciles each: name the call, and stagger the labels
            several = sum(1 for e in events if e.kind == "reconcile") > 1
            text = BRANCH_SHORT[data["branch"]]
            ax.annotate(
                f"{data['id']}: {text}" if several else text,
                (x, lane),
                xytext=(0, -18 - 13 * (reconciled % 2)),
                textcoords="offset points",
                fontsize=9,
                ha="center",
                color=colour,
            )
            reconciled += 1
        if kind == "crash":
            ax.annotate(
                data["label"],
                (x, lane),
                xytext=(0, -18),
                textcoords="offset points",
                fontsize=9,
                ha="center",
                color="red",
                # an id in the SVG: where a page (or a test) finds the kill, planned or by hand
                gid="timeline-kill-by-hand" if data.get("mode") == "by-hand" else "timeline-crash",
            )
    for kind, (label, marker, colour) in MARKS.items():
        if kind in points:
            xs, ys = zip(*points[kind])
            ax.scatter(
                xs, ys, marker=marker, s=220 if kind == "crash" else 90, color=colour, zorder=3, label=label
            )
    ax.set_yticks([0, 1], [texts.TIMELINE_WORDS["resumed"], texts.TIMELINE_WORDS["first_run"]])
    ax.set_ylim(-0.7, 1.7)
    ax.set_xlim(0, max(x, 1) + 1)
    for (
        at,
        text,
    ) in labels:  # a label in the right part of the axis ends at its point instead of starting there
        if at > 0.6 * (max(x, 1) + 1):
            text.set_horizontalalignment("right")
    ax.set_xticks([])
    ax.set_xlabel(texts.TIMELINE_WORDS["time_axis"])
    ax.grid(axis="y", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # nothing drawn yet (a resume that found no checkpoint): no legend
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=4, fontsize=8, frameon=False)
    else:
        ax.text(
            0.5, 0.5, texts.TIMELINE_WORDS["no_events"], transform=ax.transAxes, ha="center", color="#888"
        )


def timeline_svg(events) -> bytes:
    """The timeline as SVG bytes (for an ipywidgets Image): vector, so it stays sharp at any zoom; no bytes (an empty
    picture) without matplotlib."""
    if plt is None:
        return b""
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.2))  # not pyplot: no global figure registry, and faster
    ax = fig.add_subplot()
    draw_timeline(events, ax)
    fig.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.3)
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})  # no date: the same events give the same bytes
    return buf.getvalue()


def plot_timeline(events) -> None:
    """The timeline in a notebook cell."""
    if plt is None:
        print(texts.NO_TIMELINE)
        return
    fig, ax = plt.subplots(figsize=(9, 3.2))
    draw_timeline(events, ax)
    fig.tight_layout()
    plt.show()
