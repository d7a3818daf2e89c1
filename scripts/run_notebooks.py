"""Re-execute every notebook in place (outputs stored for GitHub and nbval), and print how long each took.

Usage: python scripts/run_notebooks.py [NOTEBOOK ...]   (default: notebooks/, exercises/, solutions/)
Each notebook runs in its own folder as the working directory, exactly as nbval runs it; the time includes the
kernel's start. Cell timing metadata is dropped so a re-run changes only what really changed.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("notebooks", "exercises", "solutions")
os.environ.pop("ANTHROPIC_API_KEY", None)  # stored outputs are the key-free ones, as nbval sees them


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    # "immediate": stop the kernel at once when done, instead of waiting for a graceful exit (which now and then
    # took 3 s more and said nothing about the notebook)
    NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.get("language_info", {}).pop("version", None)
    nbformat.write(nb, path)
    return elapsed


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or sorted(
        p for folder in FOLDERS for p in (ROOT / folder).glob("*.ipynb")
    )
    for path in paths:
        print(f"{execute(path):6.2f} s  {path.relative_to(ROOT) if path.is_absolute() else path}", flush=True)


if __name__ == "__main__":
    main()
