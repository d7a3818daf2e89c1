"""Level 1 (クラッシュ瞬間の訓練マニュアル): what the disk holds at moments ①②③ and which branch a resume takes.

No learner code runs here: the checks crash the real harness at each moment and compare with the answers.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import texts
from ..lab import summary
from ..vocab import CHECKPOINT_FILE, EFFECTS_FILE, MOMENT_NAMES, MOMENTS, TOOL_LOG_FILE
from . import Verdict, crash_and_resume, crash_then_look, internal_error, no_paths, scratch_dir
from .answers import (
    BRANCH_WORDS,
    FROM_NOTEBOOK,
    MISSING,
    NULL,
    PENDING_CALL,
    Question,
    blank,
    branch_question,
    from_notebook,
    loose,
    show,
    take_sheet,
)

TITLE = texts.LEVEL1_TITLE
# The tools the answer sheet asks about (read-only and side-effecting), and every tool look() can show.
TOOLS = {"read_notes": (1, "toolu_01"), "write_report": (3, "toolu_03")}
LOOK_TOOLS = {"read_notes": (1, "toolu_01"), "count_words": (2, "toolu_02"), "write_report": (3, "toolu_03")}
QUESTIONS = {
    "pendingToolUse": texts.LEVEL1_QUESTIONS["pendingToolUse"],
    "ledger_entry": texts.LEVEL1_QUESTIONS["ledger_entry"],
    "reconcile": texts.LEVEL1_QUESTIONS["reconcile"],
}
SAME_DISK = texts.LEVEL1_SAME_DISK
SAME_RECOVERY = texts.LEVEL1_SAME_RECOVERY
INSIGHT = texts.LEVEL1_INSIGHT
# The lesson's completion criterion, "the code cannot tell ① from ②", as a choice (the notebook lists them).
INSIGHT_CHOICES = {letter: texts.LEVEL1_INSIGHT_CHOICES[letter] for letter in ("A", "B", "C", "D")}
# Each choice's key clause, so a choice answered in its own words (not the letter) reads as that choice.
INSIGHT_PHRASES = {
    "A": ("もう一度実行すればよい", "再実行すればよい", "実行すればよい", "まだ走っていない"),
    "B": ("区別がつかない", "区別できない", "区別は付かない", "区別はつかない", "見分けがつかない", "見分けられない",
          "推測せず", "is_error で正直に", "cannot tell", "can't tell", "cannot distinguish", "can't distinguish",
          "indistinguishable", "no way to tell", "can't tell them apart", "cannot tell them apart"),
    "C": ("記録された結果を再利用", "再利用すればよい", "台帳ヒットになるので"),
    "D": ("見分けて", "別の分岐に入れる", "checkpoint.json が違う"),
}  # fmt: skip
TOP_KEYS = {**{m: m for m in MOMENTS}, "same_disk_1_2": 0, "same_recovery_1_2": 0, "insight_1_2": 0}


def blank_answers() -> dict:
    """The answer sheet with every cell unanswered (...)."""
    sheet: dict = {m: {t: {q: ... for q in QUESTIONS} for t in TOOLS} for m in MOMENTS}
    sheet.update(same_disk_1_2=..., same_recovery_1_2=..., insight_1_2=...)
    return sheet


def observe(moment: str, tool: str) -> dict:
    """Crash the real harness at that moment of that tool's turn, then resume: what the disk and the resume show."""
    turn, tool_use_id = LOOK_TOOLS[tool]
    with scratch_dir() as tmp:
        seen = crash_and_resume(Path(tmp), f"{MOMENTS[moment]}:{turn}")
    cp = json.loads(seen["disk"][CHECKPOINT_FILE])
    effects = json.loads(seen["disk"][EFFECTS_FILE] or "{}")
    pending = cp["pendingToolUse"]
    results = [
        b.get("tool_use_id")
        for m in cp["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]
    line = f"{tool} {tool_use_id}"
    return {
        "pendingToolUse": PENDING_CALL if pending and pending["id"] == tool_use_id else NULL,
        "ledger_entry": tool_use_id in effects,
        "reconcile": BRANCH_WORDS[seen["branch"]],
        "files": (seen["disk"][CHECKPOINT_FILE], seen["disk"][EFFECTS_FILE]),
        "result_in_messages": tool_use_id in results,
        "tool_ran": line in (seen["disk"][TOOL_LOG_FILE] or "").splitlines(),
        "runs_after": seen["runs_after"].count(line),
        "report_after": seen["report_after"],
    }


def observe_all() -> dict:
    """observe() for every moment and tool of the answer sheet (the real harness only: no learner code runs)."""
    return {(m, t): observe(m, t) for m in MOMENTS for t in TOOLS}


def _moment(value: object) -> str | None:
    if isinstance(value, str) and value in MOMENTS.values():
        return next(m for m, label in MOMENTS.items() if label == value)
    return next((m for m in MOMENTS if loose(m) == loose(value)), None) if value is not None else None


def _tool(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    for name, (_, tool_use_id) in LOOK_TOOLS.items():
        if loose(value) in (loose(name), loose(tool_use_id)):
            return name
    return None


def look(moment: object = None, tool: object = None) -> None:
    """Print what the disk holds when the real harness dies at that moment of that tool's turn (no resume).

    Moments: "①" "②" "③" (or 1, "1", "１"); tools: "read_notes", "count_words", "write_report". Never raises.
    """
    m, t = _moment(moment), _tool(tool)
    if m is None and t is None and _moment(tool) and _tool(moment):  # look("write_report", "②")
        m, t = _moment(tool), _tool(moment)
    if m is None or t is None:
        if moment is not None or tool is not None:
            wrong = {(True, True): "both", (True, False): "moment", (False, True): "tool"}.get(
                (m is None and moment is not None, t is None and tool is not None)
            )
            if wrong:
                print(texts.LEVEL1_LOOK_WRONG[wrong].format(moment=show(moment), tool=show(tool)))
            # only one of the two can be missing here: the other was given
            if moment is None:
                print(texts.LEVEL1_LOOK_MISSING["moment"])
            if tool is None:
                print(texts.LEVEL1_LOOK_MISSING["tool"])
        print(texts.LEVEL1_LOOK_USAGE)
        moments = (
            texts.LEVEL1_LOOK_MOMENT.format(moment=repr(m), moment_name=MOMENT_NAMES[m]) for m in MOMENTS
        )
        print(texts.LEVEL1_LOOK_MOMENTS.format(moments=texts.LIST_JOIN.join(moments)))
        tools = (
            texts.LEVEL1_LOOK_TOOL.format(tool=repr(name), turn=turn)
            for name, (turn, _) in LOOK_TOOLS.items()
        )
        print(texts.LEVEL1_LOOK_TOOLS.format(tools=texts.LIST_JOIN.join(tools)))
        return
    turn, _ = LOOK_TOOLS[t]
    try:
        with scratch_dir() as tmp:
            crash_then_look(Path(tmp), f"{MOMENTS[m]}:{turn}")
            print(texts.LEVEL1_LOOK_HEADING.format(moment=m, moment_name=MOMENT_NAMES[m], tool=t, turn=turn))
            print(summary(Path(tmp)))
    except Exception as err:  # noqa: BLE001 (never a traceback in the learner's notebook)
        print(texts.LEVEL1_LOOK_FAILED.format(error=type(err).__name__, detail=no_paths(str(err))))


def check_level1(
    answers: object = FROM_NOTEBOOK, meaning: object = FROM_NOTEBOOK, *, show_answers: bool = False
) -> Verdict:
    """Compare every answer with the real harness crashed at ①②③ on read_notes and write_report.

    Called without arguments, it reads `answers` and `meaning` from the notebook (a deleted cell is 未回答).
    show_answers=True also prints the right answer after each ✗.
    """
    answers = from_notebook(answers, "answers")
    meaning = from_notebook(meaning, "meaning")
    try:
        return _check(answers, meaning, show_answers)
    except Exception as err:  # noqa: BLE001
        return internal_error(TITLE, err)


def _check(answers: object, meaning: object, show_answers: bool) -> Verdict:
    verdict = Verdict(TITLE, show_answers, "check_level1(show_answers=True)")
    top = take_sheet(verdict, answers, "answers", TOP_KEYS)
    truth = observe_all()
    for m in MOMENTS:
        row = _sub(verdict, top.get(m, MISSING), TOOLS, f"answers[{m!r}]")
        for t, (_, tool_use_id) in TOOLS.items():
            cell = _sub(verdict, row.get(t, MISSING), QUESTIONS, f"answers[{m!r}][{t!r}]")
            seen = truth[(m, t)]
            what = {
                q: texts.LEVEL1_WHAT.format(moment=m, moment_name=MOMENT_NAMES[m], tool=t, question=label)
                for q, label in QUESTIONS.items()
            }
            look_at = texts.LEVEL1_LOOK_AT.format(moment=repr(m), tool=repr(t))
            questions = {
                "pendingToolUse": (
                    Question(what["pendingToolUse"], "word",
                             {PENDING_CALL: "PENDING_CALL", NULL: "NULL"}, pending_aliases(t)),
                    texts.LEVEL1_HINT_PENDING["in_messages" if seen["result_in_messages"] else "not_in_messages"]
                    .format(id=tool_use_id, look_at=look_at),
                ),
                "ledger_entry": (
                    Question(what["ledger_entry"], "bool"),
                    texts.LEVEL1_HINT_LEDGER["ran" if seen["tool_ran"] else "not_ran"].format(tool=t, look_at=look_at),
                ),
                "reconcile": (
                    branch_question(what["reconcile"]),
                    texts.LEVEL1_HINT_RECONCILE.format(tool=t, runs=seen["runs_after"],
                                                       report=_present(seen["report_after"])),
                ),
            }  # fmt: skip
            questions["pendingToolUse"][0].phrases = pending_phrases(t)
            for q, (question, hint) in questions.items():
                given = cell.get(q, MISSING)
                if q == "pendingToolUse":
                    given = _pending_as_word(verdict, given, question.what)
                verdict.grade(question, given, seen[q], hint)
    one, two = truth[("①", "write_report")], truth[("②", "write_report")]
    same_disk = one["files"] == two["files"]
    same_recovery = one["reconcile"] == two["reconcile"]
    verdict.grade(
        Question(SAME_DISK, "bool"),
        top.get("same_disk_1_2", MISSING),
        same_disk,
        texts.LEVEL1_HINT_SAME_DISK,
    )
    verdict.grade(
        Question(SAME_RECOVERY, "bool"),
        top.get("same_recovery_1_2", MISSING),
        same_recovery,
        texts.LEVEL1_HINT_SAME_RECOVERY,
    )
    if same_disk and same_recovery and two["tool_ran"] and not one["tool_ran"]:
        insight = "B"
    elif same_disk and one["reconcile"] == BRANCH_WORDS["hit"]:
        insight = "C"
    else:
        insight = "D" if not same_disk else "A"
    verdict.grade(
        Question(
            INSIGHT,
            "word",
            {c: repr(c) for c in INSIGHT_CHOICES},
            {t: c for c, t in INSIGHT_CHOICES.items()},
            prefix=True,
            phrases=INSIGHT_PHRASES,
        ),
        top.get("insight_1_2", MISSING),
        insight,
        texts.LEVEL1_HINT_INSIGHT.format(one=_present(one["tool_ran"]), two=_present(two["tool_ran"])),
    )
    # "ここに書く" is the notebook's placeholder in the meaning cell (a reading rule, not a message)
    if not isinstance(meaning, str) or not meaning.strip() or "ここに書く" in meaning:
        verdict.notes.append(texts.LEVEL1_MEANING_NOT_GRADED)
    return verdict


def _present(there: object) -> str:
    """Whether something is there, in the hints' words."""
    return texts.LEVEL1_PRESENT if there else texts.LEVEL1_ABSENT


OTHER_CALL = texts.LEVEL1_OTHER_CALL


def pending_aliases(tool: str) -> dict:
    """pendingToolUse answered by the call itself: this turn's tool name or tool_use_id is PENDING_CALL; another
    turn's is a wrong answer of its own (graded with the hint, not "not a choice")."""
    aliases = {"PENDING_CALL": PENDING_CALL}
    for name, (_, tool_use_id) in LOOK_TOOLS.items():
        aliases[name] = aliases[tool_use_id] = PENDING_CALL if name == tool else OTHER_CALL
    return aliases


def pending_phrases(tool: str) -> dict:
    """pendingToolUse described in words: this turn's call (its tool or id, or the notebook's word), another turn's
    call, or nothing pending."""
    phrases: dict = {
        # the notebook's gloss: PENDING_CALL（このターンの呼び出しが残っている）
        PENDING_CALL: [
            PENDING_CALL,
            "pending call",
            "呼び出しが残",
            "残っている",
            "残ってる",
            "残る",
            "still pending",
            "this turn's call",
            "still the call",
            "call saved at point a",
            "still there",
            "remains",
        ],
        OTHER_CALL: [],
        NULL: [
            "null",
            "none",
            "なし",
            "空",
            "残っていない",
            "残らない",
            "消え",
            "nothing",
            "cleared",
            "empty",
        ],
    }
    for name, (_, tool_use_id) in LOOK_TOOLS.items():
        phrases[PENDING_CALL if name == tool else OTHER_CALL] += [name, tool_use_id]
    return phrases


def _pending_as_word(verdict: Verdict, given: object, what: str) -> object:
    """pendingToolUse answered with the object itself ({"id", "name", "input"}): read as that call, with a note."""
    if isinstance(given, dict) and isinstance(given.get("id", given.get("name")), str):
        verdict.notes.append(texts.LEVEL1_PENDING_AS_CALL.format(what=what, call=show(given, 60)))
        return given.get("id", given.get("name"))
    return given


def _sub(verdict: Verdict, given: object, valid: dict, where: str) -> dict:
    """A nested answer dict (a moment's row, a tool's cell), its keys matched loosely; {} when it is not a dict."""
    return {} if blank(given) else take_sheet(verdict, given, where, valid)
