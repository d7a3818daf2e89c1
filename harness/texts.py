"""Every learner-facing string of the package, the exercise checks' feedback too: the message catalogue is data,
harness/texts.ja.toml, one entry per message (how a check reads an answer, its words and patterns, stays in its code).
An English edition would be a second file beside it (texts.en.toml) with the same names, group keys and placeholders
(tests/test_catalogue.py compares every edition there with this one), read by setting EDITION below.

`texts.NAME` gives an entry; a group of entries (RECONCILE_LINES, SHAPE_PROBLEMS, ...) is a read-only mapping, a list
a tuple. "{@NAME}" inside an entry stands for another entry (a refusal that ends with the lesson's advice, START_OVER).
No logic beyond reading it: the formatter that fills the log lines is harness/transcript.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from types import MappingProxyType

EDITION = "ja"
CATALOGUE_FILE = Path(__file__).with_name(f"texts.{EDITION}.toml")


def read_catalogue(path: Path) -> MappingProxyType:
    """The catalogue's entries, each "{@NAME}" replaced by that entry (itself with its own references replaced)."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))

    def entry(value, seen: tuple[str, ...] = ()):
        if isinstance(value, dict):
            return MappingProxyType({key: entry(item) for key, item in value.items()})
        if isinstance(value, list):
            return tuple(entry(item) for item in value)
        return re.sub(r"\{@(\w+)\}", lambda m: reference(m.group(1), seen), value)

    def reference(name: str, seen: tuple[str, ...]) -> str:
        text = raw.get(name)
        if type(text) is not str:
            raise LookupError(f"{path.name}: {{@{name}}} names no entry that is a text")
        if name in seen:
            raise LookupError(
                f"{path.name}: {{@{name}}} refers back to itself ({' -> '.join((*seen, name))})"
            )
        return entry(text, (*seen, name))

    return MappingProxyType({name: entry(value, (name,)) for name, value in raw.items()})


CATALOGUE = read_catalogue(CATALOGUE_FILE)


def __getattr__(name: str):
    try:
        return CATALOGUE[name]
    except KeyError:
        raise AttributeError(f"{CATALOGUE_FILE.name} has no entry {name}") from None
