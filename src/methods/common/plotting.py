"""One plotting style for every paper: matplotlib with the Agg backend, PNG at 150 dpi."""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .io import atomic_path  # noqa: E402

STYLE = {
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "font.size": 9,
    "legend.frameon": False,
}


def new_figure(nrows: int = 1, ncols: int = 1, width: float = 6.4, height: float = 4.0, **kw):
    """A figure and its axes in the project style; `kw` goes to plt.subplots."""
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), **kw)
    for ax in fig.axes:  # rc_context only applies while active, so set the look on the axes
        ax.grid(True, alpha=STYLE["grid.alpha"])
        ax.spines[["top", "right"]].set_visible(False)
    return fig, axes


def save_figure(fig, path: str | os.PathLike) -> None:
    """Write `fig` as a PNG atomically and close it."""
    with atomic_path(path) as tmp:
        fig.tight_layout()
        fig.savefig(tmp, format="png", dpi=150)
    plt.close(fig)
