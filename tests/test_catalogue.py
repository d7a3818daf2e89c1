"""The message catalogue (harness/texts.ja.toml, read by harness/texts.py): every entry the package asks for is
there, every entry is asked for, every text is a template str.format can fill, and a broken catalogue is refused by
name instead of showing a learner half a message."""

from __future__ import annotations

import re
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


def test_every_entry_of_the_catalogue_is_asked_for():
    catalogue = texts.CATALOGUE_FILE.read_text(encoding="utf-8")
    referenced = set(re.findall(r"\{@(\w+)\}", catalogue))
    unused = sorted(set(texts.CATALOGUE) - set(names_asked_for()) - referenced)
    assert unused == []


def test_every_text_is_a_template_str_format_can_read_and_no_reference_is_left():
    for text in all_texts():
        list(Formatter().parse(text))  # an unbalanced { or } raises here, not in front of a learner
        assert "{@" not in text


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
