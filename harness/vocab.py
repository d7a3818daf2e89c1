"""The harness's vocabulary, each word defined once: file names, events, crash labels and moments, branches, clock.

Learner-facing sentences live in texts.py; this module holds the names they and the code refer to.
"""

from __future__ import annotations

from .texts import CRASH_MOMENT_WORDS, MOMENT_MARK_WORDS

# The work folder (DESIGN section 3), and the one the command line uses when --workdir is not given.
DEFAULT_WORKDIR = "harness-work"
CHECKPOINT_FILE = "checkpoint.json"
EFFECTS_FILE = "effects.json"
NOTES_FILE = "sales-notes.txt"
REPORT_FILE = "report.txt"
TOOL_LOG_FILE = "tool-runs.log"
# Written by the harness into every folder it has started a run in: only such a folder is ever cleaned up.
MARKER_FILE = ".harness-workdir"
# Beyond the lesson: the scenario a task was started in (--parallel, --idempotent), so --resume continues it as started.
# The lesson's own runs never write it (harness/beyond/modes.py).
MODE_FILE = "mode.json"
# The files the harness itself keeps; the model's tools may neither read nor write them.
STATE_FILES = (CHECKPOINT_FILE, EFFECTS_FILE, TOOL_LOG_FILE, MARKER_FILE, MODE_FILE)
# What a fresh run removes (the checkpoint first): the previous run's state and outputs, never the input notes.
OUTPUT_FILES = (
    CHECKPOINT_FILE,
    EFFECTS_FILE,
    REPORT_FILE,
    TOOL_LOG_FILE,
    CHECKPOINT_FILE + ".tmp",
    EFFECTS_FILE + ".tmp",
    REPORT_FILE + ".tmp",
    MODE_FILE,
    MODE_FILE + ".tmp",
)

# The lesson's checkpoint: its version number and keys (DESIGN section 3).
CHECKPOINT_VERSION = 1
CHECKPOINT_KEYS = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUse")

# A fixed clock for the ledger's `at` (2026-01-01 00:00 UTC): notebooks and tests get the same bytes every run.
FIXED_TIME_MS = 1767225600000

# What the loop reports to its listeners (DESIGN section 5).
EVENT_KINDS = (
    "start",  # a fresh run has cleaned its folder
    "resume",  # a checkpoint was loaded for --resume
    "save_a",  # point A saved
    "tool_start",  # a tool is about to run (nothing has happened yet)
    "tool_ran",  # the tool implementation returned
    "tool_error",  # the tool refused its input or failed; nothing was recorded
    "effect_written",  # the ledger record is on disk
    "ledger_write_failed",  # the side effect happened but the ledger could not be written
    "save_b",  # point B saved
    "reconcile",  # reconcile chose a branch for the pending call
    "crash",  # the crash plan stopped the run here
    "done",  # the loop ended with the model's closing text
)

# The moments where a crash can be placed (CRASH_AFTER=LABEL:N): one row each, the label, the event it follows (a
# writer label: the file whose write it breaks), and the exercise's mark (①②③) if it has one; their words are
# texts.CRASH_MOMENT_WORDS. Adding a moment is a row here, its words there, and its transcript.
CRASH_MOMENTS = (
    ("after-save-a", "save_a", "①"),
    ("after-tool-run", "tool_ran", "②"),
    ("after-effect-write", "effect_written", None),
    ("after-save-b", "save_b", "③"),
    # beyond the lesson: inside the atomic writer, for each of the two files it writes
    ("checkpoint-torn-write", CHECKPOINT_FILE, None),
    ("checkpoint-before-rename", CHECKPOINT_FILE, None),
    ("effects-torn-write", EFFECTS_FILE, None),
    ("effects-before-rename", EFFECTS_FILE, None),
)
_TURN = CRASH_MOMENTS[:4]
CRASH_LABELS = {label: CRASH_MOMENT_WORDS[label] for label, _, _ in _TURN}
LABEL_AFTER_EVENT = {event: label for label, event, _ in _TURN}
WRITER_LABELS = {label: CRASH_MOMENT_WORDS[label] for label, _, _ in CRASH_MOMENTS[4:]}
# The lesson's exercise names the three moments ①②③.
MOMENTS = {mark: label for label, _, mark in _TURN if mark}
MOMENT_NAMES = {mark: MOMENT_MARK_WORDS[mark] for mark in MOMENTS}
ALL_LABELS = {**CRASH_LABELS, **WRITER_LABELS}
CRASH_MODES = ("simulated", "sigkill")
# How a crashed run ends, simulated or real: what a shell shows for a process killed by SIGKILL.
EXIT_CRASHED = 137

# reconcile's three branches (their log lines are texts.RECONCILE_LINES).
BRANCHES = ("hit", "rerun", "unknown")

# ---- Beyond the lesson: the pending set (--parallel) and idempotent tools (--idempotent) -------------------------
# The --parallel task's second output (its fresh start removes it, as the lesson's removes report.txt).
SUMMARY_FILE = "summary.txt"
# The engine's default system database (--engine dbos) and SQLite's companions beside it.
DB_FILE = "dbos.sqlite"
DB_FILES = (DB_FILE, DB_FILE + "-journal", DB_FILE + "-wal", DB_FILE + "-shm")
# Every name a fresh start of any scenario may remove: in a folder without the marker, none of them may exist.
CLEANED_BY_A_FRESH_START = (*OUTPUT_FILES, SUMMARY_FILE, *DB_FILES)
# Checkpoint version 2: the same keys as version 1, except pendingToolUses (an array) instead of pendingToolUse.
CHECKPOINT_VERSION_2 = 2
CHECKPOINT_KEYS_2 = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUses")
# --parallel: how many tool_use blocks one response may carry, and so how many calls a version-2 checkpoint may hold.
MANY_TOOL_USES = 64
# The scenarios beside the lesson's, and the command-line flags that select each.
SCENARIOS = {
    "lesson": (),
    "parallel": ("--parallel",),
    "idempotent": ("--idempotent",),
    "parallel+idempotent": ("--parallel", "--idempotent"),
}
