"""Write every notebook from its MyST Markdown source: src/notebooks/*.md and src/solutions/*.md (jupytext, md:myst).

Usage: python scripts/build_notebooks.py && python scripts/run_notebooks.py

Edit a .md in any editor, or open it as a notebook in JupyterLab (right-click > Open With > Notebook); then this script
1. fills each code cell tagged `block` from the package: its metadata (e.g. `block: ['harness.loop:run_agent']`) names
   the functions it shows, and its source becomes theirs, verbatim, joined by two blank lines (the .md is rewritten
   only if a function changed; a name the package does not have stops the build, naming notebook and function);
2. writes each src/FOLDER/NAME.md as FOLDER/NAME.ipynb (notebooks/, solutions/), unexecuted, without the cells
   tagged `blank` (the sources live apart, so a learner's file browser shows one notebook per lesson);
3. writes exercises/*.ipynb from src/solutions/*.md, without the cells tagged `answer`: in the .md each answer cell is
   followed by a cell tagged `blank`, what the learner gets in its place.
Cell ids are cell-01, cell-02, ...; a notebook whose cells already match its source is left as it is (outputs kept),
so a rebuild of unchanged sources changes no byte. tests/test_notebooks.py checks notebooks, sources and package agree.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import jupytext
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's harness, whatever is installed

FMT = "md:myst"
KERNEL = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}
NEW_CELL = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}


class BuildError(Exception):
    pass


def tagged(cell, tag: str) -> bool:
    return tag in cell.metadata.get("tags", [])


def block_source(names: list[str], where: str) -> str:
    """The source of each function named "module:function" in the package, verbatim, joined by two blank lines."""
    if not names:
        raise BuildError(f"{where}: a cell tagged 'block' needs metadata block: ['module:function', ...]")
    parts = []
    for name in names:
        module, _, qualname = name.partition(":")
        try:
            obj = importlib.import_module(module)
            for attr in qualname.split("."):
                obj = getattr(obj, attr)
            parts.append(inspect.getsource(obj).rstrip())
        except (ImportError, AttributeError, TypeError, OSError) as err:
            raise BuildError(
                f"{where}: the block cell shows {name!r}, not found in the package ({err})"
            ) from err
    return "\n\n\n".join(parts)


def read_source(md: Path, root: Path):
    """The .md as a notebook, its block cells filled from the package (and written back if they changed)."""
    nb = jupytext.read(md, fmt=FMT)
    changed = False
    for i, cell in enumerate(nb.cells, 1):
        if tagged(cell, "block"):
            text = block_source(cell.metadata.get("block", []), f"{md.relative_to(root)} (cell {i})")
            changed |= cell.source != text
            cell.source = text
    if changed:
        md.write_text(jupytext.writes(nb, fmt=FMT), encoding="utf-8")
        print("filled blocks in", md.relative_to(root))
    return nb


def notebook(cells, leave_out: str):
    kept = [c for c in cells if not tagged(c, leave_out)]
    return new_notebook(
        cells=[
            NEW_CELL[c.cell_type](c.source, metadata=dict(c.metadata), id=f"cell-{i:02d}")
            for i, c in enumerate(kept, 1)
        ],
        metadata=KERNEL,
    )


def cells(nb) -> list[tuple]:
    return [(c.id, c.cell_type, c.source, c.metadata) for c in nb.cells]


def write(nb, path: Path) -> list[Path]:
    """Write nb unless path already holds these cells (then its outputs stay); the path if written."""
    if path.exists():
        old = nbformat.read(path, as_version=4)
        if cells(old) == cells(nb) and old.metadata.get("kernelspec") == nb.metadata.kernelspec:
            return []
    nbformat.write(nb, path)
    return [path]


FOLDERS = ("notebooks", "solutions")  # src/FOLDER/*.md -> FOLDER/*.ipynb


def sources(root: Path = ROOT) -> list[Path]:
    """Every MyST source: src/notebooks/*.md and src/solutions/*.md."""
    return sorted(md for folder in FOLDERS for md in (root / "src" / folder).glob("*.md"))


def notebook_of(md: Path, root: Path = ROOT) -> Path:
    """Where a source's notebook goes: src/notebooks/02_checkpoint.md -> notebooks/02_checkpoint.ipynb."""
    return root / md.parent.name / f"{md.stem}.ipynb"


def build(root: Path = ROOT) -> list[Path]:
    """Build every notebook under root from its source; the notebooks written."""
    written = []
    for md in sources(root):
        nb = read_source(md, root)
        notebook_of(md, root).parent.mkdir(exist_ok=True)
        written += write(notebook(nb.cells, leave_out="blank"), notebook_of(md, root))
        if md.parent.name == "solutions":
            (root / "exercises").mkdir(exist_ok=True)
            written += write(notebook(nb.cells, leave_out="answer"), root / "exercises" / f"{md.stem}.ipynb")
    return written


def main() -> None:
    try:
        written = build()
    except BuildError as err:
        sys.exit(f"build_notebooks: {err}")
    for path in written:
        print("wrote", path.relative_to(ROOT))
    print(f"{len(written)} notebook(s) written; now run: python scripts/run_notebooks.py")


if __name__ == "__main__":
    main()
