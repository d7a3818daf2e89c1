"""Pictures for the notebooks (matplotlib, Japanese labels through matplotlib-fontja's bundled font)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import matplotlib_fontja  # noqa: F401  (sets the IPAexGothic font it ships, so no missing-glyph warnings)


def plot_checkpoint_bytes(series: dict[str, list[tuple[str, int]]]) -> None:
    """Bytes of checkpoint.json after each save (1A, 1B, 2A, ...), one line per run."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, sizes in series.items():
        labels = [label for label, _ in sizes]
        ax.plot(labels, [size for _, size in sizes], marker="o", label=name)
    ax.set_title("保存のたびの checkpoint.json の大きさ")
    ax.set_xlabel("保存（ターン番号と地点）")
    ax.set_ylabel("バイト")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    plt.show()
