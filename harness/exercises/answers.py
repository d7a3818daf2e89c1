"""Reading a learner's answers: the offered words in any width or spacing, one vocabulary for null/None, and a clear
word (never an exception) for any other shape."""

from __future__ import annotations

import inspect
import re
import unicodedata

from ..texts import RECONCILE_LINES

# What a learner may answer (the same words the notebooks offer).
PENDING_CALL = "このターンの呼び出し"
NULL = "null"
HIT = "台帳ヒット、再利用"
RERUN = "台帳ミス、再実行"
IS_ERROR = "台帳ミス、is_error"
NO_RECONCILE = "reconcile なし"
BRANCH_WORDS = {"hit": HIT, "rerun": RERUN, "unknown": IS_ERROR, None: NO_RECONCILE}
NULL_SPELLINGS = ("null", "none", "nil", "ヌル")


class Missing:
    """An answer the learner has not given: `...` in the sheet, a key left out, a cell never run."""

    def __repr__(self) -> str:
        return "..."


MISSING = Missing()


class FromNotebook:
    """Default of a check's answer argument: take the variable of that name from the notebook that called it."""

    def __repr__(self) -> str:
        return "<from the notebook>"


FROM_NOTEBOOK = FromNotebook()


def from_notebook(value: object, name: str, depth: int = 2) -> object:
    """value itself, or (when the check was called without it) the caller's global `name`, or MISSING.

    So a check cell reads `check_level1()` and still says 未完了 when the answer cell was deleted or never run,
    where `check_level1(answers)` would stop at a NameError before the check could say anything.
    """
    if value is not FROM_NOTEBOOK:
        return value
    frame = inspect.currentframe()
    try:
        for _ in range(depth):
            frame = frame.f_back if frame is not None else None
        if frame is None:
            return MISSING
        return frame.f_globals.get(name, MISSING)
    finally:
        del frame


def blank(value: object) -> bool:
    return value is Ellipsis or value is MISSING


def key(text: object) -> str:
    """A word as compared: full-width folded (NFKC), case folded, without spaces, one kind of comma."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    folded = re.sub(r"\s+", "", folded)
    return folded.replace("、", ",").replace("，", ",").strip("\"'`「」『』()（）.。")


def loose(text: object) -> str:
    """An identifier as compared: like key(), and also without _ and - (write_report, writeReport, write-report)."""
    return key(text).replace("_", "").replace("-", "")


def show(value: object, limit: int = 120) -> str:
    """A learner's value as Python shows it (quotes on strings, so 'False' and False look different), cut."""
    text = "..." if blank(value) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


class Question:
    """One answer slot: the words it offers, and how a given value reads as one of them."""

    def __init__(
        self,
        what: str,
        kind: str,
        words: dict | None = None,
        aliases: dict | None = None,
        prefix: bool = False,
    ) -> None:
        self.what = what
        self.kind = kind  # "word", "bool" or "value"
        self.prefix = (
            prefix  # also read "save_effect(run.effects_path, ...)" as "save_effect", "B: ..." as "B"
        )
        self.words = words or {}  # canonical value -> how the notebook names it (PENDING_CALL, NULL, ...)
        self.aliases = {key(k): v for k, v in (aliases or {}).items()}
        for word in self.words:
            self.aliases.setdefault(key(word), word)

    def read(self, given: object) -> tuple[object, str | None]:
        """(canonical value, None), or (MISSING, None) when not answered, or (None, what is wrong with it)."""
        if blank(given):
            return MISSING, None
        if self.kind == "bool":
            return read_bool(given)
        if self.kind == "value":
            return read_null(given), None
        text = "null" if given is None else given
        if isinstance(text, str):
            word = "null" if key(text) in NULL_SPELLINGS else key(text)
            if word in self.aliases:
                return self.aliases[word], None
            for alias, value in self.aliases.items():
                if loose(alias) == loose(word):
                    return value, None
            if self.prefix:
                for alias, value in sorted(self.aliases.items(), key=lambda a: -len(a[0])):
                    rest = loose(word)[len(loose(alias)) :]
                    if loose(word).startswith(loose(alias)) and rest[:1] in ("(", "[", ":", ".", ")", ","):
                        return value, None
        return None, f"{show(given)} は選択肢にありません（選べるのは {self.offer()}）"

    def offer(self) -> str:
        return " / ".join(
            f"{name}（{word!r}）" if name != repr(word) else name for word, name in self.words.items()
        )


def read_bool(given: object) -> tuple[object, str | None]:
    if isinstance(given, bool):
        return given, None
    if isinstance(given, str) and key(given) in ("true", "false"):
        return key(given) == "true", None
    if given is None or (isinstance(given, str) and key(given) in NULL_SPELLINGS):
        return None, f"{show(given)} ではなく True か False で答えてください"
    return None, f"{show(given)} は True / False ではありません。True か False（引用符なし）で答えてください"


def read_null(given: object) -> object:
    """One vocabulary for null across the levels: None, "null", "None" (any width or case) all mean JSON null."""
    if given is None or (isinstance(given, str) and key(given) in NULL_SPELLINGS):
        return None
    return given


def branch_question(what: str) -> Question:
    """Which reconcile branch: the four offered words, the lesson's own log lines, None for no reconcile."""
    aliases = {line: BRANCH_WORDS[b] for b, line in RECONCILE_LINES.items()}
    aliases.update(
        {
            "hit": HIT,
            "台帳ヒット": HIT,
            "rerun": RERUN,
            "再実行": RERUN,
            "unknown": IS_ERROR,
            "is_error": IS_ERROR,
            "なし": NO_RECONCILE,
            "null": NO_RECONCILE,
            "no_reconcile": NO_RECONCILE,
            "reconcileなし": NO_RECONCILE,
        }
    )
    words = {HIT: "HIT", RERUN: "RERUN", IS_ERROR: "IS_ERROR", NO_RECONCILE: "NO_RECONCILE"}
    return Question(what, "word", words, aliases)


def keys_problem(given: dict, valid: dict, where: str) -> tuple[dict, list[str]]:
    """given's values under the valid keys (matched loosely: "1" for "①", "pending_tool_use" for "pendingToolUse"),
    and a message for every key that is not one of them."""
    by_loose = {loose(k): k for k in valid}
    found: dict = {}
    problems = []
    for k, v in given.items():
        name = by_loose.get(loose(k)) if isinstance(k, (str, int)) else None
        if name is None:
            problems.append(
                f"{where} に知らないキー {show(k)} があります（使えるキー: {', '.join(repr(x) for x in valid)}）"
            )
        elif name in found and not blank(found[name]) and not blank(v) and found[name] != v:
            problems.append(f"{where} のキー {name!r} が2回（別の書き方で）あり、答えが食い違っています")
        elif name not in found or blank(found[name]):
            found[name] = v
    return found, problems


def shape_problem(given: object, what: str) -> tuple[dict | None, str | None]:
    """The answer dict, unwrapped from a one-element tuple (a trailing comma), or why it is not a dict at all."""
    if isinstance(given, dict):
        return given, None
    if isinstance(given, (tuple, list)) and len(given) == 1 and isinstance(given[0], dict):
        return given[0], (
            f"{what} が dict ではなく {type(given).__name__} になっています（最後の }} のあとにカンマがありませんか）。"
            "中身は採点しました"
        )
    if blank(given):
        return None, None
    return (
        None,
        f"{what} は dict（{{...}}）で書いてください（いまは {type(given).__name__}: {show(given, 60)}）",
    )
