"""Drawing the learned functions (matplotlib, imported on first use).

`plot_shapes` draws the marginal value functions u_j (Definition 3) from a tidy `shape_functions`
table; `plot_interaction` draws a pair's joint effect from an `interaction_grid` table as a heat
map (the paper's Figure 5). The estimators' `plot_shapes` / `plot_interaction` call these.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from pilid.errors import PilidError


def plot_shapes(
    shapes: pd.DataFrame,
    names: list[str],
    categorical,
    features=None,
    ax=None,
    ncols: int = 4,
):
    """One small panel per feature of `shapes` (`feature`, `x`, `value`); returns the axes.

    `names` are all feature names in column order, `categorical` one flag per feature (steps
    instead of lines); `features` (names or indices) picks the panels; `ax` takes one axes per
    panel, else a grid of `ncols` columns is made.
    """
    import matplotlib.pyplot as plt

    if features is None:
        chosen = list(names)
    else:
        chosen = [names[f] if isinstance(f, numbers.Integral) else str(f) for f in features]
        missing = [f for f in chosen if f not in names]
        if missing:
            raise PilidError(f"unknown feature(s) {missing}; choose from {names}")
    if ax is None:
        ncols = min(ncols, len(chosen))
        nrows = -(-len(chosen) // ncols)
        _, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.1 * nrows), squeeze=False)
        axes = axes.ravel()
        for extra in axes[len(chosen) :]:
            extra.set_visible(False)
    else:
        axes = np.atleast_1d(ax).ravel()
        if len(axes) < len(chosen):
            raise PilidError(
                f"ax has {len(axes)} panels for {len(chosen)} features; pass enough axes"
            )
    for a, name in zip(axes, chosen):
        part = shapes[shapes["feature"] == name]
        if categorical[names.index(name)]:
            a.step(part["x"], part["value"], where="mid", marker="o", ms=3)
        else:
            a.plot(part["x"], part["value"], marker="o", ms=2, lw=1.2)
        a.axhline(0.0, color="0.7", lw=0.6)
        a.set_title(name, fontsize=9)
        a.tick_params(labelsize=7)
    return axes[: len(chosen)]


def plot_interaction(grid: pd.DataFrame, name_a: str, name_b: str, ax=None, cmap="RdBu_r"):
    """Heat map of a joint effect on a grid (`x_a`, `x_b`, `value`); returns the axes."""
    import matplotlib.pyplot as plt

    xa, xb = np.unique(grid["x_a"]), np.unique(grid["x_b"])
    values = grid["value"].to_numpy().reshape(len(xa), len(xb))
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 3.4))
    lim = float(np.abs(values).max()) or 1.0
    mesh = ax.pcolormesh(xa, xb, values.T, shading="nearest", cmap=cmap, vmin=-lim, vmax=lim)
    ax.figure.colorbar(mesh, ax=ax, label="joint effect")
    ax.set_xlabel(name_a)
    ax.set_ylabel(name_b)
    ax.set_title(f"{name_a} x {name_b}", fontsize=9)
    return ax
