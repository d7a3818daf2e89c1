"""ブロック2: 副作用台帳。tool_use_id をキーに、ツールが実際に走った結果だけを記録する（実行が先、記録が後）。"""

from __future__ import annotations

from pathlib import Path

from .checkpoint import write_json_atomic
from .store import read_ledger


def load_effects(path: Path) -> dict[str, dict]:
    """台帳を読む。ファイルがなければ空の台帳。壊れていればエラー（空として扱うと記録済みの副作用を失う）。"""
    return read_ledger(path)


def save_effect(path: Path, tool_use_id: str, entry: dict) -> None:
    """実際に走ったツールの記録 {name, result, at} を1件書き足す。書き方はチェックポイントと同じアトミックな書き込み。"""
    effects = load_effects(path)
    effects[tool_use_id] = entry
    write_json_atomic(path, effects)
