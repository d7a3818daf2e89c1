"""Level 1 (クラッシュ瞬間の訓練マニュアル): what the disk holds at moments ①②③ and which branch a resume takes."""

from __future__ import annotations

import json
from pathlib import Path

from ..vocab import MOMENT_NAMES, MOMENTS
from . import BRANCH_WORDS, NULL, PENDING_CALL, Verdict, crash_and_resume, crash_then_look, scratch_dir

TOOLS = {"read_notes": (1, "toolu_01"), "write_report": (3, "toolu_03")}
QUESTIONS = {
    "pendingToolUse": "checkpoint.json の pendingToolUse",
    "ledger_entry": "effects.json にこの呼び出しのレコード",
    "reconcile": "--resume での reconcile の分岐",
}


def blank_answers() -> dict:
    """The answer sheet with every cell unanswered (...)."""
    sheet: dict = {m: {t: {q: ... for q in QUESTIONS} for t in TOOLS} for m in MOMENTS}
    sheet["same_disk_1_2"] = ...
    sheet["same_recovery_1_2"] = ...
    return sheet


def observe(moment: str, tool: str) -> dict:
    """Crash the real harness at that moment of that tool's turn; what the disk and the resume really show."""
    turn, tool_use_id = TOOLS[tool]
    with scratch_dir() as tmp:
        seen = crash_and_resume(Path(tmp), f"{MOMENTS[moment]}:{turn}")
    cp = json.loads(seen["disk"]["checkpoint.json"])
    effects = json.loads(seen["disk"]["effects.json"] or "{}")
    pending = cp["pendingToolUse"]
    return {
        "pendingToolUse": PENDING_CALL if pending and pending["id"] == tool_use_id else NULL,
        "ledger_entry": tool_use_id in effects,
        "reconcile": BRANCH_WORDS[seen["branch"]],
        "files": (seen["disk"]["checkpoint.json"], seen["disk"]["effects.json"]),
        "tool_ran": f"{tool} {tool_use_id}" in (seen["disk"]["tool-runs.log"] or ""),
        "ledger_keys": list(effects),
    }


def look(moment: str, tool: str) -> None:
    """Print what the disk holds when the real harness dies at that moment of that tool's turn (no resume)."""
    from ..lab import summary

    turn, _ = TOOLS[tool]
    with scratch_dir() as tmp:
        crash_then_look(Path(tmp), f"{MOMENTS[moment]}:{turn}")
        print(
            f"{moment}（{MOMENT_NAMES[moment]}）で {tool} のターン（{turn} ターン目）に落ちた直後のディスク:"
        )
        print(summary(Path(tmp)))


def check_level1(answers: dict, meaning: str = "") -> Verdict:
    """Compare every answer with the real harness crashed at ①②③ on read_notes and write_report."""
    verdict = Verdict("レベル1")
    truth = {(m, t): observe(m, t) for m in MOMENTS for t in TOOLS}
    for m in MOMENTS:
        for t in TOOLS:
            seen = truth[(m, t)]
            given = answers.get(m, {}).get(t, {}) if isinstance(answers.get(m), dict) else {}
            for q, label in QUESTIONS.items():
                evidence = {
                    "pendingToolUse": f"checkpoint.json の pendingToolUse は {seen['pendingToolUse']}",
                    "ledger_entry": f"effects.json のキーは {seen['ledger_keys'] or 'なし'}"
                    + (
                        f"。ただし tool-runs.log では {t} は実行済み"
                        if seen["tool_ran"] and not seen["ledger_entry"]
                        else ""
                    ),
                    "reconcile": f"--resume のログは「{seen['reconcile']}」",
                }[q]
                verdict.compare(f"{m}（{MOMENT_NAMES[m]}）{t}: {label}", given.get(q, ...), seen[q], evidence)
    one, two = truth[("①", "write_report")], truth[("②", "write_report")]
    same_disk = one["files"] == two["files"]
    verdict.compare(
        "write_report で ① と ② の checkpoint.json と effects.json は同じか",
        answers.get("same_disk_1_2", ...),
        same_disk,
        "2つの瞬間のファイルをバイト単位で比べた結果",
    )
    verdict.compare(
        "write_report で ① と ② の再開の振る舞い（reconcile の分岐）は同じか",
        answers.get("same_recovery_1_2", ...),
        one["reconcile"] == two["reconcile"],
        f"① は「{one['reconcile']}」、② は「{two['reconcile']}」",
    )
    if not meaning.strip():
        verdict.notes.append(
            "（自由記述: ① と ② が同じであることの意味は採点しません。解答例と見比べてください）"
        )
    return verdict
