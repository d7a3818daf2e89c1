"""ブロック1: チェックポイントの読み書き。一時ファイルへ書いてから rename で入れ替え、読み込みは推測しない。"""

from __future__ import annotations

import os
from pathlib import Path

from . import texts
from .errors import HarnessError
from .store import (
    checkpoint_problem,
    dump_json,
    fsync_folder,
    ledger_problem,
    read_json,
    read_ledger,
    write_new_file,
)
from .transcript import version_refused
from .vocab import CHECKPOINT_VERSION, EFFECTS_FILE


def write_json_atomic(path: Path, obj: object) -> None:
    """まず一時ファイルへ書き、次に rename でアトミックに入れ替える。「半分だけ書かれた」状態は存在しない。"""
    tmp = path.with_name(path.name + ".tmp")
    write_new_file(tmp, dump_json(obj))  # 中身を一時ファイルへ書き、ディスクまで届ける（fsync）
    os.replace(tmp, path)  # 同一ファイルシステム内の rename は不可分
    fsync_folder(path.parent)  # rename そのものも電源断を生き延びるように


def save_checkpoint(path: Path, cp: dict) -> None:
    """場面 {version, task, turns, tokensUsed, messages, pendingToolUse} をディスクへシリアライズする。"""
    write_json_atomic(path, cp)


def load_checkpoint(path: Path) -> dict:
    """チェックポイントを読む。ない・パースできない・version が違う・形が違うなら、既定値を返さずに拒否する。"""
    try:
        cp = read_json(path, texts.CHECKPOINT_UNPARSABLE)
    except FileNotFoundError:
        raise HarnessError(texts.CHECKPOINT_MISSING.format(path=path)) from None
    if isinstance(cp, dict) and cp.get("version", CHECKPOINT_VERSION) != CHECKPOINT_VERSION:
        # 構造が変わった古い（新しい）ファイルを、無理やり今のフォーマットとして読まない
        raise HarnessError(version_refused(path, cp["version"]))
    problem = checkpoint_problem(cp)
    if problem:
        raise HarnessError(texts.CHECKPOINT_SHAPE.format(path=path, detail=problem))
    problem = ledger_problem(cp, read_ledger(path.with_name(EFFECTS_FILE)))  # 隣の台帳と食い違っていないか
    if problem:
        raise HarnessError(texts.LEDGER_DISAGREES.format(path=path, detail=problem))
    return cp
