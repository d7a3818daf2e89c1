"""Reading a learner's answers: the offered words in any width or spacing, one vocabulary for null/None, and a clear
word (never an exception) for any other shape."""

from __future__ import annotations

import inspect
import re
import unicodedata

from .. import texts
from ..lab import BRANCH_WORDS as LESSON_BRANCH_WORDS
from ..lab import HEDGED, NOT_JA, as_bool, plain_answer

# What a learner may answer (the same words the notebooks offer).
PENDING_CALL = texts.ANSWER_WORDS["pending_call"]
NULL = "null"
HIT = texts.ANSWER_WORDS["hit"]
RERUN = texts.ANSWER_WORDS["rerun"]
IS_ERROR = texts.ANSWER_WORDS["is_error"]
NO_RECONCILE = texts.ANSWER_WORDS["no_reconcile"]
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


# A choice's word said only to deny it ("ヒットしない", "not a rerun") does not name that choice; denied twice
# ("ヒットしないということはない") it does.
_DENIED_AFTER = re.compile(rf"^(?:に|が|は|と)?(?:し|せ|され|でき|なら|なさ)?(?:ず|{NOT_JA})")
_DENIED_BEFORE = re.compile(r"(?:not|no|never|n't|nota|notan|notthe)$")
_DENIED_AGAIN = re.compile(r"(?:という)?(?:こと|わけ)(?:は|では|でも)?(?:ない|なく|ありません)")


def said_plainly(said: str, word: str) -> bool:
    """Whether the (loose) answer holds the (loose) word at least once without denying it."""
    at = said.find(word)
    while at >= 0 and word:
        after, before = said[at + len(word) :], said[:at]
        denied = _DENIED_AFTER.match(after) or _DENIED_BEFORE.search(before)
        if not denied or _DENIED_AGAIN.match(after[denied.end() :] if _DENIED_AFTER.match(after) else after):
            return True
        at = said.find(word, at + 1)
    return False


def show(value: object, limit: int = 120) -> str:
    """A learner's value as Python shows it (quotes on strings, so 'False' and False look different), cut."""
    text = "..." if blank(value) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


ANSWER_LIMIT = 300  # characters of one cell of an answer sheet (a value, perhaps with a short reason)


class Question:
    """One answer slot: the words it offers, and how a given value reads as one of them."""

    def __init__(
        self,
        what: str,
        kind: str,
        words: dict | None = None,
        aliases: dict | None = None,
        prefix: bool = False,
        phrases: dict | None = None,
    ) -> None:
        self.what = what
        self.phrases = phrases or {}  # value -> words that name it inside a longer answer (see phrased())
        self.kind = kind  # "word", "bool" or "value"
        self.prefix = (
            prefix  # also read "save_effect(run.effects_path, ...)" as "save_effect", "B: ..." as "B"
        )
        self.words = words or {}  # canonical value -> how the notebook names it (PENDING_CALL, NULL, ...)
        self.aliases = {key(k): v for k, v in (aliases or {}).items()}
        for word in self.words:
            self.aliases.setdefault(key(word), word)

    def read(self, given: object) -> tuple[object, str | None]:
        """(canonical value, None), or (MISSING, None) when not answered, or (None, what is wrong with it): also
        when a reason in parentheses offers another choice with a hedge ("IS_ERROR（でも台帳ヒットかも）")."""
        if isinstance(given, str) and len(given) > ANSWER_LIMIT:
            return None, texts.ANSWER_TOO_LONG.format(
                given=show(given, 40), length=len(given), limit=ANSWER_LIMIT
            )
        value, problem = self._read(given)
        if problem is None and value in self.words and isinstance(given, str):
            for reason in re.findall(r"[（(]([^（）()]*)[）)]", given):
                other = self.phrased(reason) if HEDGED.search(reason.strip()) else None
                if other is not None and other[0] not in (None, value):
                    both = texts.ANSWER_CHOICE_JOIN.join(
                        self.words.get(v, repr(v)) for v in (value, other[0])
                    )
                    return None, texts.ANSWER_TORN.format(given=show(given), both=both)
        return value, problem

    def _read(self, given: object) -> tuple[object, str | None]:
        if blank(given):
            return MISSING, None
        if self.kind == "bool":
            return read_bool(given)
        if self.kind == "value":
            return read_null(given), None
        text = "null" if given is None else given
        if isinstance(text, str):
            # a letter with its reason in parentheses, "B（…）": the reason may name another choice or contradict it
            lettered = self.letter(LEAD.sub("", text.strip()) or text)
            if lettered is not None and lettered[0] is None:
                return lettered
            text = LEAD.sub("", plain_answer(text)) or text
            word = "null" if key(text) in NULL_SPELLINGS else key(text)
            if word in self.aliases:
                return self.aliases[word], None
            for alias, value in self.aliases.items():
                if loose(alias) == loose(word):
                    return value, None
            letter = self.letter(text)
            if letter is not None:
                return letter
            phrased = self.phrased(text)
            if phrased is not None:
                return phrased
            if self.prefix:
                named = self.named(text)
                if len(named) > 1:
                    both = texts.ANSWER_CHOICE_JOIN.join(self.words.get(v, repr(v)) for v in named)
                    return None, texts.ANSWER_NAMES_MANY.format(given=show(given), both=both, n=len(named))
                for alias, value in sorted(self.aliases.items(), key=lambda a: -len(a[0])):
                    rest = loose(word)[len(loose(alias)) :]
                    if loose(word).startswith(loose(alias)) and (
                        not rest[:1].isascii() or rest[:1] in "([:.),—"
                    ):
                        return value, None
            # A part of exactly one choice's own words ("出番なし", option B's key clause); of two, asked.
            part = self.one_of(text, self.within(text))
            if part is not None:
                return part
        return None, texts.ANSWER_NOT_A_CHOICE.format(given=show(given), offer=self.offer())

    def letter(self, text: str) -> tuple[object, str | None] | None:
        """A one-letter choice written first ("B", "Bです", "B — 理由", "B: ..."): that choice, unless a second
        letter follows it ("B, D"), or the reason after it is another choice's own text."""
        letters = {k: v for k, v in self.aliases.items() if len(k) == 1 and k.isascii() and k.isalpha()}
        if not letters:
            return None
        folded = unicodedata.normalize("NFKC", text).strip().casefold()
        # a letter denied first is not the choice: "Dではなく B", "Dじゃなくて、B", "not D but B", "not D, B"
        folded = re.sub(
            r"^(?:[a-z]\s*(?:では|じゃ)(?:なくて?|ない)|not\s+[a-z]\s*(?:,\s*but|,|but))[、,]?\s*", "", folded
        )
        found = re.match(r"^([a-z])(?![a-z0-9_])\s*(.*)$", folded, re.DOTALL)
        if not found or found.group(1) not in letters:
            return None
        choice, rest = letters[found.group(1)], found.group(2)
        second = re.match(
            r"^(?:[,、/・&+.:：]|と|か|または|や|もしくは|or\b|and\b)?\s*([a-z])(?![a-z0-9_])(?!\s+[a-z])",
            rest,
        )
        other = second.group(1) if second else self.hedged_letter(folded, found.group(1))
        if other in letters and letters[other] != choice:
            both = texts.ANSWER_CHOICE_JOIN.join(self.words.get(v, repr(v)) for v in (choice, letters[other]))
            return None, texts.ANSWER_NAMES_MANY.format(given=show(text), both=both, n=2)
        # a sentence about another choice that argues against it ("A は…と言うが、…") is not this choice's reason
        rest = "".join(
            part
            for part in re.split(r"(?<=[。\n])|(?<=\.)(?=\s)", rest)
            if not re.match(rf"\s*([a-z])(?![a-z0-9_])(?:{_REFUTED.pattern})", part)
        )
        for alias, value in [*self.aliases.items(), *((w, v) for v, ws in self.phrases.items() for w in ws)]:
            head = re.split(r"[。.]", alias)[0]
            if value != choice and len(head) >= 6 and loose(head) in loose(rest):
                return None, texts.ANSWER_REASON_OF_ANOTHER.format(
                    given=show(text), choice=self.words.get(choice, choice)
                )
        return choice, None

    @staticmethod
    def hedged_letter(text: str, first: str) -> str | None:
        """Another choice letter further on that is not denied ("Bか、もしかするとA", "B, or perhaps A"; not
        "B（Aではない）", "B, not D", the lesson's 地点A / point A, nor an English article "a" before a word), lower-cased;
        else None."""
        plain = unicodedata.normalize("NFKC", text).strip()
        for found in re.finditer(r"(?<![A-Za-z0-9_'])([A-Za-z])(?![A-Za-z0-9_'])(?!\s+[A-Za-z])", plain[1:]):
            letter, at = found.group(1).casefold(), found.start() + 1
            before, after = plain[max(0, at - 8) : at], plain[at + 1 : at + 9]
            if letter == first or re.search(r"\bnot\s*$|n't\s*$|地点\s*$|\bpoint\s*$", before, re.IGNORECASE):
                continue
            if re.match(r"\s*(?:でも|では|じゃ|で)?(?:は|も)?(?:ない|なく|ありません)", after):
                continue
            if _REFUTED.match(plain[at + 1 :]):
                continue  # "B。A は「…」と決めつけているが、…": another choice named only to argue against it
            return letter
        return None

    def phrased(self, text: str) -> tuple[object, str | None] | None:
        """The answer in the lesson's or the notebook's words: (value, None) when it holds the words of exactly one
        value (self.phrases: value -> words; a word inside a longer matched word of another value does not count);
        (None, a question) when it reads as two; None when it reads as none."""
        said = loose(text)
        matched = {
            (loose(w), v) for v, words in self.phrases.items() for w in words if said_plainly(said, loose(w))
        }
        hits = {
            v for w, v in matched if not any(w != longer and w in longer and u != v for longer, u in matched)
        }
        return self.one_of(text, hits)

    def one_of(self, text: str, hits: set) -> tuple[object, str | None] | None:
        if len(hits) == 1:
            return hits.pop(), None
        if len(hits) > 1:
            both = texts.ANSWER_CHOICE_JOIN.join(self.words.get(v, repr(v)) for v in self.words if v in hits)
            return None, texts.JUDGE_READS_AS_MANY.format(given=show(text), both=both, n=len(hits))
        return None

    def within(self, text: str) -> set:
        """The choices whose own words hold the answer's clauses (3 characters or more; "台帳ミス" is part of two)."""
        own: dict = {}
        for alias, value in self.aliases.items():
            own.setdefault(value, []).append(loose(alias))
        for value, words in self.phrases.items():
            own.setdefault(value, []).extend(loose(w) for w in words)
        found: set = set()
        for clause in re.split(r"[,.。、;；:：!?！？\n]", key(text)):
            part = loose(clause)
            if len(part) >= 3:
                found |= {v for v, words in own.items() if any(part in w for w in words)}
        return found

    def named(self, text: str) -> list:
        """The choices an answer read by prefix names anywhere in it ("B, D" names two, "save_effect → execute_tool"
        too): a one-letter choice only as a token of its own, a longer one anywhere."""
        folded = unicodedata.normalize("NFKC", text).casefold()
        found: list = []
        for alias, value in self.aliases.items():
            word = loose(alias)
            if len(word) == 1:
                hit = re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", folded)
            else:
                hit = word in loose(text)
            if hit and value not in found:
                found.append(value)
        return found

    def offer(self) -> str:
        return " / ".join(
            texts.ANSWER_OFFER_WORD.format(name=name, word=repr(word)) if name != repr(word) else name
            for word, name in self.words.items()
        )


# a choice letter as the topic of a sentence that argues against it ("A は…と言うが", "C says … but", "D: wrong")
_REFUTED = re.compile(
    r"\s*(?:は|って|の|says|is|claims|assumes|:|：)(?:[^。.\n]|\.(?!\s|$))*?(?:が[、,]|けど|けれど|\bbut\b|違|誤|wrong|incorrect|×)"
)


LEAD = re.compile(
    r"^(?:答えは|こたえは|選択肢は?|正解は|answer(?:\s*is)?\s*:?|result\s*[:=])\s*", re.IGNORECASE
)


def read_bool(given: object) -> tuple[object, str | None]:
    if isinstance(given, bool):
        return given, None
    if isinstance(given, str) and key(given) in ("true", "false"):
        return key(given) == "true", None
    if isinstance(given, str) and not re.fullmatch(r"\s*[01]\s*", unicodedata.normalize("NFKC", given)):
        said = as_bool(plain_answer(given))
        if said is not None:
            return said, None
    if given is None or (isinstance(given, str) and key(given) in NULL_SPELLINGS):
        return None, texts.ANSWER_BOOL_NOT_NULL.format(given=show(given))
    if isinstance(given, (int, float)) or (isinstance(given, str) and key(given) in ("0", "1")):
        return None, texts.ANSWER_BOOL_NOT_NUMBER.format(given=show(given))
    return None, texts.ANSWER_BOOL_OTHER.format(given=show(given))


def read_null(given: object) -> object:
    """One vocabulary for null across the levels: None, "null", "None" (any width or case, with a reason in
    parentheses or a "result:" in front) all mean JSON null."""
    if given is None or (isinstance(given, str) and key(given) in NULL_SPELLINGS):
        return None
    if isinstance(given, str) and key(LEAD.sub("", plain_answer(given))) in NULL_SPELLINGS:
        return None
    return given


def branch_question(what: str) -> Question:
    """Which reconcile branch: the four offered words, the lesson's own log lines, None for no reconcile."""
    aliases = {line: BRANCH_WORDS[b] for b, line in texts.RECONCILE_LINES.items()}
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
            "出番なし": NO_RECONCILE,  # the notebook's gloss: NO_RECONCILE（reconcile の出番なし）
            "reconcileの出番なし": NO_RECONCILE,
        }
    )
    words = {HIT: "HIT", RERUN: "RERUN", IS_ERROR: "IS_ERROR", NO_RECONCILE: "NO_RECONCILE"}
    question = Question(what, "word", words, aliases)
    ours = {"hit": HIT, "rerun": RERUN, "unknown": IS_ERROR, "なし": NO_RECONCILE}
    question.phrases = {ours[b]: LESSON_BRANCH_WORDS[b] for b in ours}
    extra = {
        NO_RECONCILE: (
            "no reconcile",
            "no_reconcile",
            "reconcile は none",
            "none を返す",
            "null を返す",
            "出番なし",
            "出番はない",
            "nothing to reconcile",
            "no reconciliation",
            "reconcile not called",
            "reconcile is not called",
            "reconcile isn't called",
            "reconcile is skipped",
            "reconcile skipped",
            "skips reconcile",
            "reconcile しない",
            "reconcile されない",
            "reconcile は呼ばれない",
            "reconcile は走らない",
            "not needed",
            "何もしない",
            "なにもしない",
            "does nothing",
            "nothing to do",
            "no-op",
        ),
        RERUN: ("rerun",),
        HIT: ("hit",),
        IS_ERROR: ("unknown",),
    }
    for value, words in extra.items():
        question.phrases[value] = (*question.phrases[value], *words)
    return question


def keys_problem(given: dict, valid: dict, where: str) -> tuple[dict, list[str]]:
    """given's values under the valid keys (matched loosely: "1" for "①", "pending_tool_use" for "pendingToolUse"),
    and a message for every key that is not one of them."""
    by_loose = {loose(k): k for k in valid}
    by_loose.update({"一": "①", "二": "②", "三": "③"} if "①" in valid else {})
    found: dict = {}
    problems = []
    for k, v in given.items():
        name = by_loose.get(loose(k)) if isinstance(k, (str, int)) else None
        if name is None:
            keys = ", ".join(repr(x) for x in valid)
            problems.append(texts.ANSWER_UNKNOWN_KEY.format(where=where, key=show(k), keys=keys))
        elif name in found and not blank(found[name]) and not blank(v) and found[name] != v:
            problems.append(texts.ANSWER_KEY_TWICE.format(where=where, key=repr(name)))
        elif name not in found or blank(found[name]):
            found[name] = v
    return found, problems


def unwrap(given: object, what: str) -> tuple[object, str | None]:
    """A value a trailing comma turned into a one-element tuple (`x = {...},`), unwrapped, with a note saying so."""
    if isinstance(given, tuple) and len(given) == 1:
        return given[0], texts.ANSWER_ONE_ELEMENT_TUPLE.format(what=what, content=show(given[0], 40))
    return given, None


def shape_problem(given: object, what: str) -> tuple[dict | None, str | None]:
    """The answer dict, or why it is not a dict at all (a one-element tuple is unwrapped by unwrap() first)."""
    if isinstance(given, dict):
        return given, None
    if blank(given):
        return None, None
    if isinstance(given, (tuple, list)) and len(given) == 1 and isinstance(given[0], dict):
        return None, texts.ANSWER_DICT_IN_BRACKETS.format(what=what, type=type(given).__name__)
    return None, texts.ANSWER_NOT_A_DICT.format(what=what, type=type(given).__name__, given=show(given, 60))


def take_sheet(verdict, given: object, what: str, valid: dict) -> dict:
    """An answer sheet as the checks read it: a trailing comma's tuple unwrapped (with a note), the wrong shape and
    unknown keys as ✗ lines, a sheet never defined as a note; the answers under the valid keys."""
    given, note = unwrap(given, what)
    if note:
        verdict.notes.append(note)
    sheet, problem = shape_problem(given, what)
    if problem:
        verdict.fail(problem)
    if given is MISSING:
        verdict.notes.append(texts.ANSWER_SHEET_MISSING.format(what=what))
    found, problems = keys_problem(sheet or {}, valid, what)
    for p in problems:
        verdict.fail(p)
    return found
