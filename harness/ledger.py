"""Block 2: the side-effect ledger, keyed by tool_use_id. Execute first, record after: an entry means it really happened."""

from __future__ import annotations

from pathlib import Path

from . import texts
from .checkpoint import read_json, write_json_atomic
from .crash import crash_point, writer_hooks
from .errors import HarnessError


def load_effects(path: Path) -> dict[str, dict[str, object]]:
    """The ledger on disk. A missing file is an empty ledger; a corrupt one is an error, never read as empty."""
    if not Path(path).exists() and not Path(path).is_symlink():
        return {}
    effects = read_json(path, texts.LEDGER_UNPARSABLE, texts.LEDGER_UNPARSABLE)
    problem = effects_shape_problem(effects)
    if problem:
        raise HarnessError(texts.LEDGER_SHAPE.format(path=path, detail=problem))
    return effects


def save_effect(path: Path, tool_use_id: str, entry: dict[str, object], crash=None) -> None:
    """Add one record {name, result, at} for a tool that has already run, atomically."""
    effects = load_effects(path)
    effects[tool_use_id] = entry
    write_json_atomic(path, effects, crash)


def effects_shape_problem(effects: object) -> str | None:
    """What is wrong with a parsed ledger's shape, in Japanese, or None if it is the lesson's format."""
    if not isinstance(effects, dict):
        return "JSON オブジェクトではありません"
    for key, entry in effects.items():
        if not isinstance(entry, dict) or not {"name", "result", "at"} <= set(entry):
            return f"{key} のレコードに name, result, at がそろっていません"
        if not isinstance(entry["name"], str):
            return f"{key} の name が文字列ではありません"
    return None


def record_effect(run, tool_use_id: str, name: str, output: object) -> None:
    """Write the ledger record for a tool that has just returned its real output, then pass the crash point."""
    save_effect(
        run.effects_path,
        tool_use_id,
        {"name": name, "result": output, "at": run.clock()},
        **writer_hooks(run),
    )
    run.emit("effect_written", id=tool_use_id, name=name)
    crash_point(run, "after-effect-write")
