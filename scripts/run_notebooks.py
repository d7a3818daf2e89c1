"""Re-execute every notebook in place (outputs stored for GitHub and nbval), and print how long each took.

Usage: python scripts/run_notebooks.py [NOTEBOOK ...]   (default: notebooks/, exercises/, solutions/)
Each notebook runs in its own folder as the working directory, exactly as nbval runs it; the time includes the
kernel's start. Cell timing metadata is dropped so a re-run changes only what really changed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("notebooks", "exercises", "solutions")
os.environ.pop("ANTHROPIC_API_KEY", None)  # stored outputs are the key-free ones, as nbval sees them


WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def stable_widget_ids(nb):
    """Renumber the random widget model ids in the order the widget tree reaches them, so a re-run of an unchanged
    notebook leaves the file byte-identical (the saved widget state stays, for viewers that can render it)."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    if not state:
        return nb
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in state and model_id not in order:
            order.append(model_id)
            for ref in re.findall(r"IPY_MODEL_([0-9a-f]{32})", json.dumps(state[model_id], sort_keys=True)):
                visit(ref)

    for cell in nb.cells:
        for out in cell.get("outputs", []):
            visit(out.get("data", {}).get(WIDGET_VIEW, {}).get("model_id", ""))
    for model_id in sorted(state, key=lambda m: json.dumps(state[m], sort_keys=True)):  # any not reached
        visit(model_id)
    text = nbformat.writes(nb)
    for i, model_id in enumerate(order):
        text = text.replace(model_id, f"{i + 1:032x}")
    return nbformat.reads(text, as_version=4)


def coalesce_streams(cell) -> None:
    """Merge consecutive stdout (or stderr) outputs: how the kernel happened to flush them is not content."""
    merged = []
    for out in cell.get("outputs", []):
        if (
            merged
            and out.output_type == "stream"
            and merged[-1].output_type == "stream"
            and merged[-1].name == out.name
        ):
            merged[-1].text += out.text
        else:
            merged.append(out)
    cell.outputs = merged


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
        if cell.cell_type == "code":
            coalesce_streams(cell)
    nb.metadata.get("language_info", {}).pop("version", None)
    nbformat.write(stable_widget_ids(nb), path)
    return elapsed


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or sorted(
        p for folder in FOLDERS for p in (ROOT / folder).glob("*.ipynb")
    )
    for path in paths:
        print(f"{execute(path):6.2f} s  {path.relative_to(ROOT) if path.is_absolute() else path}", flush=True)


if __name__ == "__main__":
    main()
