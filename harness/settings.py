"""The settings the command line takes from the environment: exactly as documented, or refused with the name and
the values accepted, never silently ignored (`yes` for a switch, a misspelt HARNESS_ name). check(env, modes) runs
once, before anything is written; the readers below are what the rest of the package calls. (The Crash Lab's HARNESS_EVENTS_FILE is checked by harness/lab/hooks.py.)
"""

from __future__ import annotations

import math
import re

from . import texts
from .crash import CrashPlan
from .errors import HarnessError
from .transcript import untrusted

# On/off settings: "1" is on; "0" or empty (or unset) is off; anything else is refused.
SWITCHES = ("HARNESS_DEBUG",)
SWITCH_VALUES = {"": False, "0": False, "1": True}
# The lesson's settings (README, `python -m harness --help`), each once; the modes' are in harness/beyond/cli.py. Any
# other HARNESS_ or CRASH_ name is a typo.
OTHERS = ("HARNESS_SLOW_MS", "HARNESS_EVENTS_FILE", "HARNESS_FIXED_TIME_MS", "HARNESS_API_DEADLINE_S")
KNOWN = (*SWITCHES, *OTHERS, "CRASH_AFTER", "CRASH_MODE")
# A model id as the API spells them (claude-sonnet-4-5, claude-3-5-haiku@20241022, ...): no spaces, no controls.
MODEL_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}")
SECONDS_PATTERN = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6})?")
MAX_DEADLINE_S = 86400  # a day


def _value(env, name: str) -> str:
    return env.get(name) or ""


def switch(env, name: str) -> bool:
    """An on/off setting: True for "1", False for "0", empty or unset; a HarnessError naming it for anything else."""
    value = _value(env, name)
    if value not in SWITCH_VALUES:
        raise HarnessError(texts.BAD_SWITCH.format(name=name, value=untrusted(value)))
    return SWITCH_VALUES[value]


def debug_on(env) -> bool:
    """HARNESS_DEBUG=1, read while an error is being handled: never raises (check() refused any other value)."""
    return env.get("HARNESS_DEBUG") == "1"


def whole_number(env, name: str, max_digits: int, message: str) -> int | None:
    """A setting of ASCII digits (at most max_digits), or None when unset or empty."""
    value = _value(env, name)
    if not value:
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= max_digits):
        raise HarnessError(message.format(value=untrusted(value)))
    return int(value)


def seconds(env, name: str, message: str) -> float | None:
    """A positive number of seconds, at most a day, written as digits with an optional decimal part ("30", "2.5")."""
    value = _value(env, name)
    if not value:
        return None
    number = float(value) if SECONDS_PATTERN.fullmatch(value) else math.nan
    if not 0 < number <= MAX_DEADLINE_S:
        raise HarnessError(message.format(value=untrusted(value)))
    return number


def model_id(env) -> str | None:
    """ANTHROPIC_MODEL, or None for the default model."""
    value = _value(env, "ANTHROPIC_MODEL")
    if value and not MODEL_PATTERN.fullmatch(value):
        raise HarnessError(texts.BAD_MODEL.format(value=untrusted(value)))
    return value or None


def check(env, modes: tuple = ()) -> None:
    """Read every setting once, before anything is written (the modes' own names known too): a HarnessError naming
    the first one that is not as documented (the command line turns it into its message and exit 1)."""
    known = (*KNOWN, *modes)
    unknown = sorted(k for k in env if k.upper().startswith(("HARNESS_", "CRASH_")) and k not in known)
    if unknown:
        raise HarnessError(texts.UNKNOWN_SETTING.format(name=untrusted(unknown[0]), known=", ".join(known)))
    for name in SWITCHES:
        switch(env, name)
    whole_number(env, "HARNESS_SLOW_MS", 6, texts.BAD_SLOW_MS)
    whole_number(env, "HARNESS_FIXED_TIME_MS", 15, texts.BAD_FIXED_TIME)
    seconds(env, "HARNESS_API_DEADLINE_S", texts.BAD_API_DEADLINE)
    model_id(env)
    CrashPlan.from_env(env.get("CRASH_AFTER"), env.get("CRASH_MODE"))
