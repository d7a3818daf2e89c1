"""The message catalogue (harness/texts.ja.toml, read by harness/texts.py): every entry the package asks for is
there, every entry is asked for, every text is a template str.format can fill, and a broken catalogue is refused by
name instead of showing a learner half a message."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from string import Formatter

import pytest

from harness import texts

ROOT = Path(__file__).resolve().parents[1]
IMPORTED = re.compile(r"from (?:\.+|harness\.)texts import (\([^)]*\)|[^\n]+)")


def names_asked_for() -> dict[str, str]:
    """Every catalogue name the package and its scripts read (texts.NAME, or imported by name), with one file each."""
    found: dict[str, str] = {}
    for path in [*(ROOT / "harness").rglob("*.py"), *(ROOT / "scripts").glob("*.py")]:
        if path.name == "texts.py":
            continue
        text = path.read_text(encoding="utf-8")
        names = set(re.findall(r"\btexts\.([A-Z][A-Z0-9_]*[A-Z0-9])\b", text))
        for block in IMPORTED.findall(text):
            names |= set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", block))
        for name in names:
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def all_texts(value: object = texts.CATALOGUE):
    """Every text of the catalogue, inside groups and lists too."""
    for item in value.values() if isinstance(value, Mapping) else value:
        if isinstance(item, str):
            yield item
        else:
            yield from all_texts(item)


def test_every_entry_the_package_asks_for_is_in_the_catalogue():
    missing = {name: where for name, where in names_asked_for().items() if name not in texts.CATALOGUE}
    assert missing == {}


def test_every_group_key_the_package_asks_for_by_name_is_in_its_group():
    """Keys written out (texts.GROUP["key"]); a key chosen by an expression is the behaviour tests' to catch."""
    asked = set()
    for path in [*(ROOT / "harness").rglob("*.py"), *(ROOT / "scripts").glob("*.py")]:
        text = path.read_text(encoding="utf-8")
        asked |= set(re.findall(r"\btexts\.([A-Z][A-Z0-9_]*[A-Z0-9])\[[\"']([\w+-]+)[\"']\]", text))
    assert len(asked) > 20, "the reader must find the keys it judges"
    assert sorted((group, key) for group, key in asked if key not in texts.CATALOGUE[group]) == []


def placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in Formatter().parse(text) if field is not None}


def differences(reference, edition, where: str = "") -> list[str]:
    """What an edition lacks or adds against the reference catalogue: names, group keys, placeholders."""
    found = [f"{where}{name}: missing" for name in reference if name not in edition]
    found += [f"{where}{name}: not in the reference" for name in edition if name not in reference]
    for name in set(reference) & set(edition):
        mine, theirs = reference[name], edition[name]
        if isinstance(mine, Mapping) and isinstance(theirs, Mapping):
            found += differences(mine, theirs, f"{where}{name}.")
            if set(mine) == set(theirs) and list(mine) != list(
                theirs
            ):  # the lab numbers LAB_TURNS by their order
                found.append(f"{where}{name}: keys in another order")
        elif isinstance(mine, str) and isinstance(theirs, str):
            if placeholders(mine) != placeholders(theirs):
                found.append(
                    f"{where}{name}: placeholders {sorted(placeholders(theirs))}, not {sorted(placeholders(mine))}"
                )
        elif type(mine) is not type(theirs) or (isinstance(mine, tuple) and len(mine) != len(theirs)):
            found.append(f"{where}{name}: not the same kind of entry")
    return sorted(found)


def test_every_other_edition_has_the_same_names_keys_and_placeholders_as_the_japanese_one(tmp_path):
    for path in sorted((ROOT / "harness").glob("texts.*.toml")):
        assert differences(texts.CATALOGUE, texts.read_catalogue(path)) == [], path.name
    # the comparison itself, on an English edition that lacks things
    english = tmp_path / "texts.en.toml"
    english.write_text(
        'TASK = "Summarise sales-notes.txt into report.txt."\n'
        'RECONCILE_LINES.hit = "ledger hit: reuse the result, do not run again"\n'
        'MAX_TURNS_REACHED = "Stopping after {turns} turns"\n'
        'LAB_TURNS.write_report = "write_report (turn 3)"\n'
        'LAB_TURNS.read_notes = "read_notes (turn 1)"\n'
        'LAB_TURNS.count_words = "count_words (turn 2)"\n',
        encoding="utf-8",
    )
    found = differences(texts.CATALOGUE, texts.read_catalogue(english))
    assert "RECONCILE_LINES.rerun: missing" in found
    assert "MAX_TURNS_REACHED: placeholders ['turns'], not ['max_turns']" in found
    assert "DONE_OK: missing" in found and "TASK: missing" not in found
    assert "LAB_TURNS: keys in another order" in found  # the lab would crash another turn than its label says


def test_every_entry_of_the_catalogue_is_asked_for():
    catalogue = texts.CATALOGUE_FILE.read_text(encoding="utf-8")
    referenced = set(re.findall(r"\{@(\w+)\}", catalogue))
    unused = sorted(set(texts.CATALOGUE) - set(names_asked_for()) - referenced)
    assert unused == []


def test_every_text_is_a_template_str_format_can_read_and_no_reference_is_left():
    for text in all_texts():
        list(Formatter().parse(text))  # an unbalanced { or } raises here, not in front of a learner
        assert "{@" not in text


def test_a_reference_inside_a_reference_is_filled_and_a_loop_of_references_is_refused(tmp_path):
    nested = tmp_path / "texts.xx.toml"
    nested.write_text('A = "a"\nB = "b {@A}"\nC = "c {@B}"\n', encoding="utf-8")
    assert texts.read_catalogue(nested)["C"] == "c b a"
    nested.write_text('A = "a {@B}"\nB = "b {@A}"\n', encoding="utf-8")
    with pytest.raises(LookupError, match=r"refers back to itself \(A -> B -> A\)"):
        texts.read_catalogue(nested)


def test_a_catalogue_naming_an_entry_it_does_not_have_is_refused_by_name(tmp_path):
    broken = tmp_path / "texts.xx.toml"
    broken.write_text('GREETING = "こんにちは"\nREFUSAL = "だめです。{@START_AGAIN}"\n', encoding="utf-8")
    with pytest.raises(LookupError, match=r"texts\.xx\.toml: \{@START_AGAIN\} names no entry"):
        texts.read_catalogue(broken)
    broken.write_text('GREETING = "こんにちは"\nREFUSAL = "だめです。{@GREETING}"\n', encoding="utf-8")
    assert texts.read_catalogue(broken)["REFUSAL"] == "だめです。こんにちは"


def test_a_name_the_catalogue_does_not_have_is_an_attribute_error_naming_the_file():
    with pytest.raises(AttributeError, match=r"texts\.ja\.toml has no entry NO_SUCH_MESSAGE"):
        texts.NO_SUCH_MESSAGE  # noqa: B018
    assert (
        texts.RECONCILE_LINES["hit"] == "台帳ヒット、結果を再利用、再実行しない"
    )  # the lesson's words, as it logs them


def test_groups_are_read_only():
    with pytest.raises(TypeError):
        texts.RECONCILE_LINES["hit"] = "ほかの言葉"
    with pytest.raises(TypeError):
        texts.CATALOGUE["TASK"] = "ほかのタスク"


JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# What may still hold Japanese in code (by file, the top-level name it sits in): how an answer is read (the words and
# patterns a check recognises, in Japanese and English), the fixture data a check runs the learner's function on, and
# the lesson's tool definitions sent to the model. Every message a learner reads is in the catalogue.
NOT_MESSAGES = {
    "harness/tools.py": {"TOOL_SCHEMAS"},  # the lesson's tools, described to the model as the lesson writes them
    "harness/exercises/runner.py": {"LONG_NOTES", "TWO_BLOCKS", "WRITE_THEN_READ", "prepare"},  # fixture data
    "harness/exercises/repro.py": {"ABOUT_RECORD", "ABSENT", "PRESENT"},
    "harness/exercises/answers.py": {"LEAD", "NULL_SPELLINGS", "Question", "_DENIED_AFTER", "_DENIED_AGAIN",
                                     "_REFUTED", "branch_question", "keys_problem"},
    "harness/exercises/level1.py": {"INSIGHT_PHRASES", "_check", "pending_phrases"},
    "harness/exercises/level2.py": {"ABOUT_FIX", "AFTER_THE_TOOL", "COUNTERFACTUAL", "CRASH_WORDS", "DENIED",
                                    "DENIED_AGAIN", "DENIED_NEXT", "DENIED_TWICE", "FALSE_CLAIMS", "HIT_ALWAYS",
                                    "HIT_WORDS", "JA_CLAUSE_END", "JA_NOT", "MISS_ALWAYS", "MISS_WORDS",
                                    "NEGATED_AFTER", "NOT_THE_TOOL_JA", "NO_RECONCILE_STORY", "OTHER_SUBJECT_JA",
                                    "RAN_FRAMED_JA", "RAN_JA", "REFUTED_QUOTE", "REPORT_JA", "RESUME_CONTEXT",
                                    "STILL_THE_FIX", "TEMPLATE", "THOUGHT", "THOUGHT_THEN", "TOOL_JA", "_diagnosis",
                                    "consequence", "false_claim", "ran_claim", "stated"},
    "harness/lab/__init__.py": {"BRANCH_WORDS", "NOT_JA", "_AFFIRM", "_CLAUSES", "_CORRECTED", "_COUNTER",
                                "_DENIED_OPTION", "_DENY", "_ENDINGS", "_GROWTH", "_HEDGE", "_KANJI",
                                "_NEGATED_NUMBER", "_NEGATION", "_NEVER", "_NO_WORD", "_NUMBER_ALONE",
                                "_NUMBER_CLAUSES", "_NUMBER_WORDS", "_SHORT_WORDS", "_SQUARED", "_STEPS_GROW",
                                "_STEPS_SAME", "_TAKEN_BACK", "_UNSURE", "_WORDS", "_YES_WORD", "_kanji", "_norm",
                                "_numbers", "_stem"},
}  # fmt: skip


def japanese_in_code() -> dict[str, set[str]]:
    """Each module's top-level names holding a Japanese string that is not a docstring or a comment."""
    import ast

    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "harness").rglob("*.py")):
        if path.name == "texts.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        }  # fmt: skip
        for top in tree.body:
            if any(
                isinstance(node, ast.Constant) and isinstance(node.value, str) and JAPANESE.search(node.value)
                and id(node) not in docstrings
                for node in ast.walk(top)
            ):  # fmt: skip
                target = top.targets[0] if isinstance(top, ast.Assign) else getattr(top, "target", None)
                name = getattr(top, "name", None) or getattr(target, "id", None) or ast.unparse(top)[:60]
                found.setdefault(str(path.relative_to(ROOT)), set()).add(name)
    return found


def test_no_message_is_written_in_code_only_the_rules_that_read_an_answer():
    assert japanese_in_code() == NOT_MESSAGES


def test_a_message_written_in_code_is_found(tmp_path, monkeypatch):
    fake = tmp_path / "harness"
    (fake / "exercises").mkdir(parents=True)
    (fake / "exercises" / "level9.py").write_text(
        '"""レベル9（docstring）"""\n# 日本語のコメント\n\n\ndef check():\n    return f"{1} 項目が未回答です"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert japanese_in_code() == {"harness/exercises/level9.py": {"check"}}
