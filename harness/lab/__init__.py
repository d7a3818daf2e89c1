"""Notebook helpers: scratch folders, the command line as a subprocess, and live views of the files on disk.

Plain text only, so outputs are stable under nbval. The widgets (ipywidgets) and plots (matplotlib) live in
harness.lab.crashlab and harness.lab.plots and are imported only there.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
import shutil
import sys
import unicodedata
from pathlib import Path

from .. import texts
from ..run import Event
from ..transcript import format_event, print_transcript  # print_transcript is also for notebooks
from ..vocab import CHECKPOINT_FILE, EFFECTS_FILE, FIXED_TIME_MS, REPORT_FILE, SUMMARY_FILE, TOOL_LOG_FILE
from .process import IN_BROWSER, in_memory, run_harness

WATCHED = (CHECKPOINT_FILE, EFFECTS_FILE, TOOL_LOG_FILE)


def fixed_clock() -> int:
    """A clock that always says FIXED_TIME_MS, so ledger files are the same bytes on every run."""
    return FIXED_TIME_MS


def scratch(name: str) -> Path:
    """An empty scratch folder _work/NAME next to the notebook (a relative path, so outputs are stable)."""
    folder = Path("_work") / name
    if IN_BROWSER:
        in_memory(folder)  # JupyterLite's /drive is slow: a scratch folder in memory
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def cli(workdir: Path, *args: str, env: dict | None = None) -> None:
    """Run `python -m harness` as a real process, printing the command, its output and EXIT= like a terminal."""
    proc = run_harness(workdir, *args, env=env)
    # the command as it ran: in the browser run_in_kernel drops CRASH_MODE (a real kill would end this kernel)
    ran = {k: v for k, v in (env or {}).items() if not (IN_BROWSER and k == "CRASH_MODE")}
    prefix = "".join(f"{k}={v} " for k, v in ran.items())
    print(f"$ {prefix}python -m harness --workdir {workdir} {' '.join(args)}".rstrip())
    print(proc.stdout, end="")
    print(proc.stderr, end="")  # where a terminal shows it: right after stdout, before the exit code
    print(f"EXIT={137 if proc.returncode == -9 else proc.returncode}")
    if (env or {}).get("CRASH_AFTER") and proc.returncode == 0:
        print(texts.FOLDER_WORDS["crash_not_reached"].format(crash_after=env["CRASH_AFTER"]))


def resume_in_kernel(workdir: Path, load_checkpoint) -> str:
    """`python -m harness --resume` run in this kernel with another checkpoint loader (notebook 02's lenient one):
    the lesson's loop and scripted model, a fixed clock, the log lines printed. Returns the closing words."""
    from ..loop import run_agent  # the loop is taught in 03; 02 only swaps its loader
    from ..models import ScriptedModel
    from ..run import Run
    from ..tools import TOOL_SCHEMAS

    run = Run(workdir, clock=fixed_clock, listeners=[print_transcript])
    return run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS, resume=True, load_checkpoint=load_checkpoint)


def width(text: str) -> int:
    """Columns the text takes in a monospace font (a Japanese character takes two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def table(rows: list[list[object]]) -> str:
    """Rows as aligned text columns (the first row is the header), correct for Japanese text."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(width(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join(
        "  ".join(c + " " * (w - width(c)) for c, w in zip(row, widths)).rstrip() for row in cells
    )


def read_text(path: Path) -> str | None:
    """A work file's text as it is on disk, or None when there is none (or it is not a readable text file)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def pretty(text: str | None) -> str | None:
    """JSON re-indented with Japanese readable; anything unparsable is shown as it is."""
    if text is None:
        return None
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text


UNREADABLE = texts.FOLDER_WORDS["unreadable"]


def read_folder(workdir: Path) -> dict:
    """A work folder as every notebook view shows it, read once and leniently (a torn file is shown, not refused):
    checkpoint and ledger as parsed JSON (None: no file; UNREADABLE: not JSON), the tool runs, report.txt's text,
    and which of the task's outputs exist. The one reader behind summary, the Crash Lab's facts and the DBOS view."""
    folder = Path(workdir)
    found: dict = {}
    for key, name in (("checkpoint", CHECKPOINT_FILE), ("ledger", EFFECTS_FILE)):
        text = read_text(folder / name)
        try:
            found[key] = None if text is None else json.loads(text)
        except ValueError:
            found[key] = UNREADABLE
    log = read_text(folder / TOOL_LOG_FILE)
    found["runs"] = log.splitlines() if log else []
    found["report"] = read_text(folder / REPORT_FILE)
    found["exists"] = {name: (folder / name).exists() for name in (REPORT_FILE, SUMMARY_FILE)}
    return found


def call_text(call: dict) -> str:
    return f"{call['name']} ({call['id']})"


def pending_calls(cp: object) -> tuple[str, list[dict], str]:
    """(the checkpoint's pending field, its calls, how a view shows them): pendingToolUse in version 1, the
    pendingToolUses array in version 2. KeyError or TypeError when the checkpoint has neither."""
    if isinstance(cp, dict) and "pendingToolUses" in cp:
        calls = list(cp["pendingToolUses"])
        return "pendingToolUses", calls, "[" + ", ".join(call_text(c) for c in calls) + "]"
    pending = cp["pendingToolUse"]  # type: ignore[index]
    return "pendingToolUse", [pending] if pending else [], call_text(pending) if pending else "null"


def checkpoint_line(cp: object, version: bool = False) -> str:
    if cp is None:
        return f"{CHECKPOINT_FILE}: {texts.NOTHING}"
    try:
        field, _, pending = pending_calls(cp)
        shown = f"version={cp['version']} " if version else ""  # type: ignore[index]
        return (
            f"{CHECKPOINT_FILE}: {shown}turns={cp['turns']} {field}={pending} "  # type: ignore[index]
            + texts.FOLDER_WORDS["messages"].format(count=len(cp["messages"]))  # type: ignore[index]
        )
    except (KeyError, TypeError, AttributeError):
        return f"{CHECKPOINT_FILE}: {UNREADABLE}"


def outside_lines(found: dict) -> list[str]:
    """The tool runs and the outputs: what the outside world saw."""
    runs = found["runs"]
    there = texts.LAB_FACT_WORDS
    lines = [f"{TOOL_LOG_FILE}: {' / '.join(runs) if runs else texts.FOLDER_WORDS['no_runs']}"]
    lines.append(f"{REPORT_FILE}: {there['there' if found['exists'][REPORT_FILE] else 'not_there']}")
    parallel = isinstance(found["checkpoint"], dict) and "pendingToolUses" in found["checkpoint"]
    if parallel or found["exists"][SUMMARY_FILE]:  # the --parallel task's second output
        lines.append(f"{SUMMARY_FILE}: {there['there' if found['exists'][SUMMARY_FILE] else 'not_there']}")
    return lines


def summary(workdir: Path, version: bool = False) -> str:
    """One line per file: what the lesson asks about (pendingToolUse, ledger keys, tool runs, report); with
    version=True also the checkpoint's version (notebooks 11 and 12, beside a version-2 checkpoint). Plain text with
    relative names, stable in a notebook."""
    found = read_folder(workdir)
    ledger = found["ledger"]
    if ledger is None:
        effects = f"{EFFECTS_FILE}: {texts.NOTHING}"
    elif isinstance(ledger, dict):
        effects = f"{EFFECTS_FILE}: {{{', '.join(ledger)}}}"
    else:
        effects = f"{EFFECTS_FILE}: {UNREADABLE}"
    return "\n".join([checkpoint_line(found["checkpoint"], version), effects, *outside_lines(found)])


def summary_with_version(workdir: Path) -> str:
    """summary(workdir, version=True): the view notebooks 11 and 12 print."""
    return summary(workdir, version=True)


class FileWatch:
    """Shows checkpoint.json, effects.json and tool-runs.log as they are on disk, marking what changed since last time."""

    def __init__(self, workdir: Path, files: tuple[str, ...] = WATCHED) -> None:
        self.workdir = Path(workdir)
        self.files = files
        self.last: dict[str, str | None] = {name: None for name in files}

    def snapshot(self) -> dict[str, str | None]:
        return {name: pretty(read_text(self.workdir / name)) for name in self.files}

    def changes(self) -> str:
        """The text of every watched file that changed since the previous call: new files whole, others as a diff."""
        now = self.snapshot()
        out = []
        for name in self.files:
            before, after = self.last[name], now[name]
            if before == after:
                continue
            if after is None:
                out.append("── " + texts.FOLDER_WORDS["deleted"].format(name=name))
            elif before is None:
                out.append("── " + texts.FOLDER_WORDS["new"].format(name=name))
                out.extend("+ " + line for line in after.splitlines())
            else:
                out.append("── " + texts.FOLDER_WORDS["changed"].format(name=name))
                diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=1)
                out.extend(
                    line if line.startswith(("+", "-", "@")) else "  " + line[1:] for line in list(diff)[2:]
                )
        self.last = now
        return "\n".join(out) if out else texts.FOLDER_WORDS["unchanged"]

    def show(self) -> None:
        print(summary(self.workdir))
        print(self.changes())

    def listener(self, kinds: tuple[str, ...] = ("save_a", "effect_written", "save_b", "crash")):
        """An event listener: prints each log line, and after the chosen events what changed on disk."""

        def on_event(event: Event) -> None:
            line = format_event(event.kind, event.data)
            if line is not None:
                print(line)
            if event.kind in kinds:
                print(self.changes())

        return on_event


# JavaScript's literals, so a prediction typed as in the lesson (`false`, `null`) is read, not a NameError: every
# notebook imports harness.lab in its first cell, which puts these three names in the notebook (never replacing a
# name the learner already has).
true, false, null = True, False, None


def _offer_js_literals() -> None:
    ipython = sys.modules.get(
        "IPython"
    )  # loaded in a kernel; never imported here (the command line imports .hooks)
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None:
        for name, value in (("true", True), ("false", False), ("null", None)):
            shell.user_ns.setdefault(name, value)


_offer_js_literals()

# What a prediction may say, read the way a person writes it. A number: digits (full-width too), kanji 〇〜十, kana
# and English words, with a counter or a unit around it ("1回だけ", "HTTP 400", "EXIT=1", "6+1=7"). A yes/no: the
# words for yes and no, or a verb turned round by each negation ("付かない", "消えない", "残らないことはない"). Anything
# in parentheses is the learner's reason and is not read (but a number alone there is, when the rest names none).
# An answer that names two values, or hedges ("たぶん", "≒2"), is never read as one; of "X ではなく Y", Y is read.
_KANJI = {"〇": 0, "零": 0, **{c: i for i, c in enumerate("一二三四五六七八九十", start=1)}}
_NUMBER_WORDS = {
    "zero": 0, "none": 0, "ゼロ": 0, "ぜろ": 0, "one": 1, "once": 1, "いっかい": 1, "いちど": 1, "いち": 1,
    "ひとつ": 1, "two": 2, "twice": 2, "にかい": 2, "にど": 2, "ふたつ": 2, "three": 3, "さんかい": 3, "みっつ": 3,
    "four": 4, "five": 5, "six": 6, "ろっかい": 6, "むっつ": 6, "seven": 7, "ななかい": 7, "eight": 8, "nine": 9,
    "ten": 10,
}  # fmt: skip
_COUNTER = r"(?:回|件|個|つ|行|ターン|度|times?|x)"
# One home for how a learner says "not", read by every judge (predictions here, the level-1 sheet and the level-2
# explanation in harness/exercises): standard, spoken, Kansai (走ってへん, 呼ばれへん) and Tohoku/Kanto (再実行しねえ,
# 走ってねくて) negation endings, and English.
NOT_JA = (  # ず after a verb's negative stem (残らず, 消えず, 読まず), not 必ず, まず, はず
    r"ない|無い|なく|ません|なかった|[たかさなばらがわえせれ]ず|おらず|(?<=[一-龥]ま)ず|ぬ$|(?<!たい)へん|ひん|"
    r"(?<=[しせらさたなまばがわれてで])ね[えぇー]|(?<=[てで])ねく|無え"
)
NOT_EN = r"\bnot\b|n't\b|\bnever\b"
_NEVER = re.compile(r"一度も|一回も|いちども|1度も|1回も|never")
_DENY = re.compile(rf"{NOT_JA}|なし|無し|^無$|いいえ|違う|ちゃう|異なる|^no\b|^false$|^x$|^×$|^✗$|{NOT_EN}")
_AFFIRM = re.compile(r"^はい|^yes\b|^true$|^○$|^◯$|^ok$|^有$")
# A yes/no said with a verb: a word that means yes (残る, 同じ, "stays") or no (消える, 違う, "deleted") by itself,
# turned round by each negation after it (消えない: yes; 残らないことはない: yes; "it doesn't stay": no).
_YES_WORD = re.compile(
    r"ある|あり|あっ|残|のこ|同じ|おなじ|おんなじ|同一|一緒|いっしょ|され|付|つく|つか|つき|書か|書き|保存|記録|"
    r"\b(?:stays?|remains?|kept|keeps?|same|identical|exists?|there|present|saved|written|recorded|attached|survives?)\b"
)
_NO_WORD = re.compile(
    r"消え|きえ|なくな|無くな|違う|違い|違わ|ちがう|ちがい|ちがわ|ちゃう|ちゃいま|異な|"
    r"\b(?:deleted|removed|gone|erased|wiped|disappear(?:s|ed)?|different|differs?|absent|missing)\b"
)
_NEGATION = re.compile(rf"{NOT_JA}|[るうくすつ]前に|{NOT_EN}")
_HEDGE = (  # not sure, or a hedge ("たぶん", "maybe 2", "2回くらい?", "≒2"): a prediction says one thing
    r"わから|分から|知らな|どちらとも|どっちとも|かもしれ|言い切れ|とは限らな|not sure|don'?t know|\?$|？$|"
    r"たぶん|多分|おそらく|恐らく|\bmaybe\b|\bprobably\b|\bperhaps\b|くらい|ぐらい|≒|約\s*\d|およそ|かも[ねなよ]?$|かな[ぁあー]?$|"
    r"\bapprox|\broughly\b|\babout\s*\d|"
    # two values offered, not one: "1か2", "1回か2回", "read_notes か count_words", "1 or 2"
    rf"(?:\d|[a-z_)]|{_COUNTER})\s*か\s*(?:\d|[a-z_]|[〇一二三四五六七八九十])|(?:\d|[a-z_])\s+or\s+(?:\d|[a-z_])"
)
_UNSURE = re.compile(rf"{_HEDGE}|不明|unknown")  # (as a yes/no or a number; 05's branch unknown is a word)
HEDGED = re.compile(_HEDGE)
_CLAUSES = re.compile(r"[？?、,…/・]|かも|\bor\b|または|それとも")
# "0回、保存されていないので1回呼ばれる": the reason before ので is a clause of its own, so its ない denies no number
_NUMBER_CLAUSES = re.compile(
    r"[、,;—]|\s-\s|ので|のに|けど|けれど|ため[にで]?|から(?![\d一二三四五六七八九十])|\bbecause\b"
)
_NEGATED_NUMBER = re.compile(r"ではな|じゃな|\bnot\b")
_PARENS = re.compile(r"[（(][^（）()]*[）)]")
_DENIED_OPTION = re.compile(
    r"[^\s、,]+\s*(?:ではなく(?:て)?|じゃなく(?:て)?|ではない|じゃない)[\s、,]*|[\s、,]*\bnot\s+[^\s、,]+\s*,?\s*(?:but\s+)?"
)
_NUMBER_ALONE = re.compile(rf"^(?:http\s*)?\d+\s*(?:{_COUNTER}|エラー|error)?$")
_ENDINGS = re.compile(r"(?:です|でした|だ|する|します|になる|になります|ます|。|!|！)+$")
_SQUARED = re.compile(r"2乗|二乗|n\^?2(?!\d)|n\*\*2|quadratic|二次")
# 09's own test for telling them apart: the amount added each time stays the same (比例) or itself grows (2乗)
_STEPS_GROW = re.compile(
    r"増える量(?:その(?:もの)?)?(?:が|は|も)(?:どんどん|だんだん|毎回|次第に)?(?:大きく|多く|増え)"
)
_STEPS_SAME = re.compile(r"増える量(?:が|は)(?:毎回)?(?:ほぼ|だいたい)?(?:同じ|一定|変わらな)")
_GROWTH = {"2乗": re.compile(r"^(?:o\()?n\^?2\)?$|^quadratic$|^2次関数$|^二次関数$"),
           "比例": re.compile(r"^(?:o\()?n\)?$|^linear$|^線形に?$")}  # fmt: skip
# a [reconcile] log line pasted whole: what follows the call's id and name is the branch in the lesson's words
_LOG_PREFIX = re.compile(r"^(?:\[resume\])?\[reconcile\]|^reconcile\s*→")
_CALL = re.compile(r"^\s*(?:tool_use_id=\S+\s*)?(?:name=\S+\s*)?")
_WORDS = {
    "true": True,
    "はい": True,
    "false": False,
    "いいえ": False,
    "null": None,
    "none": None,
    "なし": None,
}


# "2、いや1回", "1回、やっぱり2回", "2, no wait, 1": the answer is what the learner ends on
_CORRECTED = re.compile(
    r"[、,。.\s]\s*(?:いや|いえ|やっぱり?|訂正(?:して|します)?|no,?\s*wait|i\s+mean|actually)"
    r"(?:[、,:：\s]+|(?![ぁ-ん]))",  # (not いやな, いえる)
    re.IGNORECASE,
)
_TAKEN_BACK = re.compile(
    r"いや|やっぱ|訂正|じゃなく|ではなく|(?:^|[、,\s])(?:でも|しかし)|\bbut\b|\bactually\b|\bwait\b|\bno\b"
)


_EMOJI = re.compile(
    "[\U0001f000-\U0001faff\u2600-\u260f\u2613-\u26ff\ufe0f\u200d]"
)  # "ヒット 👍"; not ✓ ✗ ☑ ○ ×


def _fold(value: str) -> str:
    text = _EMOJI.sub("", unicodedata.normalize("NFKC", value))
    return text.strip().strip("\"'「」『』").strip().casefold()


def plain_answer(value: str) -> str:
    """The answer without quotes, reasons in parentheses or after a dash, and sentence endings; full-width folded,
    case folded."""
    text = re.split(r"\s[—–]\s", _fold(value), maxsplit=1)[0]
    inner = _PARENS.sub("", text).strip()
    return _ENDINGS.sub("", inner or text).strip()


def _numbers(text: str) -> set[int]:
    """Every number the text names (None-free), read the ways a person writes one."""
    if text in _NUMBER_WORDS:
        return {_NUMBER_WORDS[text]}
    if "=" in text:  # "6+1=7", "EXIT=1", "turns=1": the value is what follows the last "="
        text = text.rsplit("=", 1)[1]
    worked = re.search(rf"(?:で|\bso\b|つまり)\s*(\d+\s*{_COUNTER}?)$", text)  # "3ターン×2で6回"
    total = re.search(
        r"(?:合計|全部で|in\s+total|total(?:\s+of)?)\s*(\d+)", text
    )  # "毎ターン2回ずつで合計6回"
    if worked or total:
        text = (worked or total).group(1)
    found = {int(d) for d in re.findall(r"\d+", text)}
    found |= {_kanji(k) for k in re.findall(rf"([〇零一二三四五六七八九十百]+)(?=\s*{_COUNTER}|$)", text)}
    found |= {n for word, n in _NUMBER_WORDS.items() if len(word) > 3 and not word.isascii() and word in text}
    found |= {
        n
        for word, n in _NUMBER_WORDS.items()
        if word.isascii() and re.search(rf"(?<![\w-]){word}(?![\w-])", text)
    }
    return found


def _kanji(numeral: str) -> int:
    """A number in kanji: 二, 十二, 四百, 百一."""
    if len(numeral) == 1 or not re.search("[十百]", numeral):
        return int("".join(str(_KANJI[c]) for c in numeral))
    total = 0
    for digits, unit in re.findall(r"([〇零一二三四五六七八九]?)([十百]|$)", numeral):
        total += (_KANJI[digits] if digits else 1 if unit else 0) * {"十": 10, "百": 100, "": 1}[unit]
    return total


def _as_number(text: str, raw: str = "") -> int | None:
    """The one number a prediction names, or None (none, two different ones, one it denies, or a hedge).
    raw is the prediction as written: a number alone in parentheses counts when the rest names none
    ("通らない（400）")."""
    if _UNSURE.search(text):
        return None
    if _NEVER.search(text):  # "一度も呼ばれない", "0回、一度も", "never": not once
        return 0 if _numbers(_NEVER.sub(" ", text)) <= {0} else None
    clauses = [c for c in _NUMBER_CLAUSES.split(text) if c.strip()]
    kept = [c for c in clauses if _numbers(c) and not _DENY.search(c)]
    if kept and any(_numbers(c) and _DENY.search(c) for c in clauses):
        text = "、".join(kept)  # "一度だけ走る、二度目はない", "one line, not two": the one not denied
    denied = _DENIED_OPTION.sub(" ", text).strip(" 、,")
    if denied != text and _numbers(denied) and not _NEGATED_NUMBER.search(denied):
        text = denied  # "2件ではなく1件", "not 7 but 6": the one not denied
    if _NEGATED_NUMBER.search(text):
        return None
    found = _numbers(text)
    if not found:
        alone = [m for m in _PARENS.findall(_fold(raw)) if _NUMBER_ALONE.match(m[1:-1].strip())]
        found = set().union(*(_numbers(m[1:-1]) for m in alone))
    if not found and _DENY.search(text) and not _AFFIRM.search(text):
        return 0  # "呼ばれない", "none": not once
    return found.pop() if len(found) == 1 else None


def as_bool(text: str) -> bool | None:
    """Yes or no, from the words for them or a sentence with a verb; None when it says neither, or both ways in
    two clauses ("ある…かも、ない？", "いいえ、残ります")."""
    if text in _WORDS and isinstance(_WORDS[text], bool):
        return _WORDS[text]
    if _UNSURE.search(text):
        return None
    said = {_clause_says(clause.strip()) for clause in _CLAUSES.split(text)} - {None}
    return said.pop() if len(said) == 1 else None


def _clause_says(clause: str) -> bool | None:
    if clause in _WORDS and isinstance(_WORDS[clause], bool):
        return _WORDS[clause]
    yes, no = _YES_WORD.search(clause), _NO_WORD.search(clause)
    if yes and no:
        return None
    if yes or no:
        negations = len(_NEGATION.findall((_YES_WORD if yes else _NO_WORD).sub(" ", clause)))
        return bool(yes) != (negations % 2 == 1)
    negations = len(_NEGATION.findall(clause))
    if negations:
        return negations % 2 == 0  # "ない": no; "ないことはない": yes
    if _DENY.search(clause):
        return False
    if _AFFIRM.search(clause):
        return True
    return None


def _stem(text: str) -> str:
    """A word without its inflection, so 消える and 消えている, 保存される and 保存された meet."""
    return re.sub(r"(?:ている|ていた|てる|ます|ました|た|る)$", "", text)


def _norm(value: object) -> object:
    """A prediction as compared: strings without spaces and case, "," as "、"; "True"/"はい" as True,
    "null"/"None"/"なし" as None; a pasted [reconcile] log line as its branch's words; "n^2" as 2乗.
    Numbers and booleans stay apart."""
    if isinstance(value, str):
        text = plain_answer(value)
        if text in _WORDS:
            return _WORDS[text]
        whole = re.sub(r"\s+", "", unicodedata.normalize("NFKC", value).strip("\"'「」").casefold())
        kept = _DENIED_OPTION.sub(" ", text).strip(
            " 、,"
        )  # "比例ではなく2乗", "2乗, not 比例": the one not denied
        if kept and kept != text and not _DENIED_OPTION.search(kept):
            return _norm(kept)
        for word, pattern in _GROWTH.items():
            if pattern.match(whole) or pattern.match(re.sub(r"\s+", "", text)):
                return word
        squeezed = re.sub(r"\s+", "", text)
        grows, same = _STEPS_GROW.search(squeezed), _STEPS_SAME.search(squeezed)
        if bool(grows) != bool(same) and not _NEGATION.search(squeezed[(grows or same).end() :]):
            return "2乗" if grows else "比例"  # (not "増える量が同じではない")
        big_o = re.search(r"o\(n(?:\^|\*\*)?2\)", whole)  # (in parentheses, so not in text)
        if (_SQUARED.search(squeezed) or big_o) and not re.search(r"(?<!に)比例|linear|線形", squeezed):
            return "2乗"  # "二乗に比例して増える", "O(n^2) で増える"; not "比例か2乗"
        pasted = _LOG_PREFIX.match(text)
        if pasted:
            text = _CALL.sub("", text[pasted.end() :], count=1)
        return re.sub(r"\s+", "", text).replace(",", "、")  # "is_error を追加" = "is_errorを追加"
    return value


_BRANCH_KEYS = {"hit", "rerun", "unknown"}


def identifiers(text: str) -> set[str]:
    """The code names in a prediction (write_report, unknown), not call ids (toolu_03) or noise."""
    return {w for w in re.findall(r"[a-z_][a-z0-9_]{2,}", text) if not w.startswith("toolu_")}


def _same(prediction: object, actual: object) -> bool:
    if isinstance(prediction, str) and HEDGED.search(plain_answer(prediction)):
        return False  # "write_report?", "同じかも": not said for sure
    if isinstance(prediction, str) and not isinstance(actual, str):
        text = plain_answer(prediction)
        if isinstance(actual, bool):
            return as_bool(text) is actual
        if isinstance(actual, int):
            return _as_number(text, prediction) == actual
        if actual is None:
            return _norm(prediction) is None
    a, b = _norm(prediction), _norm(actual)
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    if (numbers or type(a) is type(b)) and a == b:
        return True
    if isinstance(a, str) and isinstance(b, str):
        text = plain_answer(prediction)
        if _DENIED_OPTION.search(text) and not _DENIED_OPTION.sub("", text).strip(" 、,"):
            return False  # "read_notes じゃない", "not read_notes": only denied
        if _stem(a) == _stem(b) and len(_stem(b)) >= 2:
            return True
        names = identifiers(plain_answer(prediction))
        values = names & ({"none", "null", "true", "false"} | _BRANCH_KEYS)
        if "_" in b and {n for n in names if "_" in n} == {b} and not values:
            return True  # "It's read_notes, the first tool": the one code name in a sentence
        if (
            b in _BRANCH_KEYS
            and names & _BRANCH_KEYS == {b}
            and not _DENIED_OPTION.search(plain_answer(prediction))
        ):
            return True  # "same as ①: ledger miss with side effects → unknown"
        if len(names) == 1 and b.isascii() and len(b) >= 8:  # "read_note": a name one letter off
            names = {b} if difflib.SequenceMatcher(None, next(iter(names)), b).ratio() >= 0.9 else names
        return bool(names) and names == {b} and b.isascii()  # "write_report()", "write_report ツール"
    return False


def _read_as(prediction: object, actual: object, accept: tuple) -> bool:
    """Whether the prediction says the actual value, or one of the notebook's own words for it."""
    if isinstance(
        prediction, str
    ):  # "2回。記録前に落ちたので…": the answer, then why (unless it is taken back)
        corrected = list(_CORRECTED.finditer(prediction))
        if corrected and corrected[0].start() <= 20:  # a short first answer, then the one it is corrected to
            prediction = prediction[corrected[-1].end() :]
        first, *rest = re.split(r"。|\.\s", prediction.strip(), maxsplit=1)
        if rest and rest[0].strip() and first.strip() and not _TAKEN_BACK.search(_fold(rest[0])):
            prediction = first
    return _same(prediction, actual) or any(_same(prediction, other) for other in accept)


PREDICTION_LIMIT = 300  # characters: a prediction is one value, perhaps with a short reason


def check_prediction(
    prediction: object, actual: object, what: str, evidence: str = "", accept: tuple = ()
) -> bool:
    """Compare a learner's 予想 with what the disk really showed; a blank prediction (...) prints 未記入, never raises.

    `evidence` says where the actual value was read (e.g. "tool-runs.log の行数"); `accept` lists other ways of
    writing the actual value that count as right (e.g. the lesson's own word for a branch).
    """
    where = texts.PREDICTION_EVIDENCE.format(evidence=evidence) if evidence else ""
    if prediction is Ellipsis or (isinstance(prediction, str) and not prediction.strip()):
        print(texts.PREDICTION_BLANK.format(what=what, actual=actual, where=where))
        return False
    if isinstance(prediction, str) and len(prediction) > PREDICTION_LIMIT:
        print(
            texts.PREDICTION_TOO_LONG.format(
                what=what, n=len(prediction), limit=PREDICTION_LIMIT, actual=actual
            )
        )
        return False
    try:
        right = _read_as(prediction, actual, tuple(accept))
    except Exception:  # noqa: BLE001 (a judge never raises: an odd object is simply not the value)
        right = False
    if right:
        print(texts.PREDICTION_RIGHT.format(what=what, actual=actual, where=where))
        return True
    if isinstance(prediction, str) and HEDGED.search(plain_answer(prediction)):
        print(texts.PREDICTION_HEDGED.format(what=what, prediction=prediction, actual=actual, where=where))
        return False
    print(texts.PREDICTION_WRONG.format(what=what, prediction=prediction, actual=actual, where=where))
    return False


# reconcile's branches in the lesson's words: a prediction written this way is right too (check_prediction's accept=).
# Besides these short words: the branch's whole log line (pasted with or without its "[resume][reconcile]
# tool_use_id=... name=..." head) and each part of it that no other branch's line holds (a part of the line, or two
# parts next to each other, e.g. "再実行しない", "is_error を追加", "台帳ヒット、結果を再利用").
_SHORT_WORDS = {
    "hit": ("台帳ヒット", "ヒット", "再利用", "ledger hit", "cache hit"),
    "rerun": ("再実行", "読み取り専用", "読み取り専用の再実行", "re-run", "run again"),
    "unknown": ("判断不能", "is_error", "不明", "undecidable"),
    "asked-done": ("問い合わせ→実行済み→再利用", "実行済み"),
    "asked-run": ("問い合わせ→未実行→実行", "未実行"),
}


def _line_words(branch: str, lines: dict[str, str]) -> tuple[str, ...]:
    """A branch's log line and its distinctive parts: one part, or two next to each other, found in no other line."""
    parts = lines[branch].split("、")
    pieces = [lines[branch], *parts, *("、".join(pair) for pair in itertools.pairwise(parts))]
    others = [line for name, line in lines.items() if name != branch]
    return tuple(p for p in dict.fromkeys(pieces) if not any(p in line for line in others))


# The lesson's three are told apart among themselves (a lesson task never asks by key); the fourth branch's two lines
# among all five, since their tails are the lesson's ("結果を再利用、再実行しない" is also the ledger hit).
_ALL_LINES = {**texts.RECONCILE_LINES, **texts.IDEMPOTENT_RECONCILE_LINES}
BRANCH_WORDS = {
    **{
        b: tuple(dict.fromkeys(_SHORT_WORDS[b] + _line_words(b, texts.RECONCILE_LINES)))
        for b in texts.RECONCILE_LINES
    },
    **{
        b: tuple(dict.fromkeys(_SHORT_WORDS[b] + _line_words(b, _ALL_LINES)))
        for b in texts.IDEMPOTENT_RECONCILE_LINES
    },
    "なし": ("reconcile なし", "補完なし", "宙ぶらりんな呼び出しなし", "そのまま続行"),
}


# Two work folders side by side (notebook 07 and the Crash Lab's compare mode put moments ① and ② next to each other).
COMPARED = (CHECKPOINT_FILE, EFFECTS_FILE, TOOL_LOG_FILE, REPORT_FILE)


def file_bytes(path: Path) -> bytes | None:
    """A file's bytes as they are on disk, or None when there is no such file."""
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def compare_folders(a: Path, b: Path, names: tuple[str, ...] = COMPARED) -> list[dict]:
    """For each file name: its bytes in folder a and in folder b (None when missing), and whether they are the same."""
    rows = []
    for name in names:
        left, right = file_bytes(Path(a) / name), file_bytes(Path(b) / name)
        rows.append({"name": name, "a": left, "b": right, "same": left == right})
    return rows


def size_text(data: bytes | None) -> str:
    """'1234 バイト', or 'なし' for a missing file."""
    return texts.NOTHING if data is None else texts.FOLDER_WORDS["size"].format(bytes=len(data))
