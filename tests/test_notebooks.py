"""The committed notebooks: executed top to bottom with outputs stored, stable, and showing the package's own code."""

from __future__ import annotations

import ast
import inspect
import re
import sys
from pathlib import Path

import nbformat
import pytest

import harness  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for folder in ("notebooks", "exercises", "solutions") for p in (ROOT / folder).glob("*.ipynb")
)
LESSON = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MODULES = [sys.modules[f"harness.{m}"] for m in ("checkpoint", "ledger", "loop", "reconcile")]
# Every lesson block a notebook may define, mapped to the package's function of the same name.
BLOCKS = {
    name: fn
    for m in MODULES
    for name, fn in vars(m).items()
    if inspect.isfunction(fn) and fn.__module__ == m.__name__
}


def code_cells(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_there_is_one_lesson_notebook_per_section():
    assert [p.name[:2] for p in LESSON] == [f"{i:02d}" for i in range(1, 10)]
    for path in LESSON:
        first = nbformat.read(path, as_version=4).cells[0].source
        assert "**復習**" in first and "**目標**" in first, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_in_order_with_outputs_stored(path):
    counts = [c.execution_count for c in code_cells(path)]
    assert counts == list(range(1, len(counts) + 1)), "re-run with scripts/run_notebooks.py"
    for cell in code_cells(path):
        for out in cell.outputs:
            assert out.output_type != "error", cell.source[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_hold_no_absolute_paths_or_addresses(path):
    text = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in code_cells(path)
        for o in c.outputs
    )
    assert str(ROOT) not in text and "/tmp/" not in text
    assert not re.search(r"0x[0-9a-f]{6,}", text)


def _defs(source: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("path", LESSON, ids=lambda p: p.name)
def test_block_cells_are_the_packages_code(path):
    shown = {}
    for cell in code_cells(path):
        shown.update({k: v for k, v in _defs(cell.source).items() if k in BLOCKS})
    for name, node in shown.items():
        package = _defs(inspect.getsource(BLOCKS[name]))[name]
        assert ast.dump(node) == ast.dump(package), f"{path.name}: {name} differs from harness"


def test_the_lesson_blocks_are_all_shown_somewhere():
    shown = set()
    for path in LESSON:
        for cell in code_cells(path):
            shown |= set(_defs(cell.source)) & set(BLOCKS)
    assert {
        "save_checkpoint",
        "load_checkpoint",
        "save_effect",
        "load_effects",
        "run_tool_uses",
        "run_agent",
        "reconcile",
    } <= shown
