"""Drawing the learned functions (matplotlib, imported on first use).

`plot_shapes` draws the marginal value functions u_j (Definition 3) from a tidy `shape_functions`
table (a bag's `lower` / `upper` columns, `pilid.models.bagging`, as a shaded band);
`plot_interaction` draws a pair's joint effect from an `interaction_grid` table as a heat map
(the paper's Figure 5). The estimators' `plot_shapes` / `plot_interaction` call these; the
report's Figure 5 (`pilid.report.figures`) draws its mean heat maps with `draw_joint_effect`.

Feature names are drawn as they are written (`plain_text`): a ``$`` in a column name
(``price $ and $ tax``) is a dollar sign, not the start of matplotlib's mathtext.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from pilid.errors import PilidError


def plain_text(text) -> str:
    """``text`` as matplotlib draws it literally: every ``$`` escaped (two of them would
    otherwise start and end mathtext, and an unmatched one could fail the drawing)."""
    return str(text).replace("$", r"\$")


def plot_shapes(
    shapes: pd.DataFrame,
    names: list[str],
    categorical,
    features=None,
    ax=None,
    ncols: int = 4,
):
    """One small panel per feature of `shapes` (`feature`, `x`, `value`); returns the axes.

    With columns `lower` and `upper` (a bag's spread over its members) the band between them
    is shaded around each shape.

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
    bands = {"lower", "upper"} <= set(shapes.columns)
    for a, name in zip(axes, chosen):
        part = shapes[shapes["feature"] == name]
        step = categorical[names.index(name)]
        if bands:
            a.fill_between(
                part["x"],
                part["lower"],
                part["upper"],
                step="mid" if step else None,
                alpha=0.25,
                lw=0,
                label="bag spread",
            )
        if step:
            a.step(part["x"], part["value"], where="mid", marker="o", ms=3)
        else:
            a.plot(part["x"], part["value"], marker="o", ms=2, lw=1.2)
        a.axhline(0.0, color="0.7", lw=0.6)
        a.set_title(plain_text(name), fontsize=9)
        a.tick_params(labelsize=7)
    return axes[: len(chosen)]


def plot_interaction(grid: pd.DataFrame, name_a: str, name_b: str, ax=None, cmap="RdBu_r"):
    """Heat map of a joint effect on a grid (`x_a`, `x_b`, `value`); returns the axes."""
    import matplotlib.pyplot as plt

    xa, xb = np.unique(grid["x_a"]), np.unique(grid["x_b"])
    values = grid["value"].to_numpy().reshape(len(xa), len(xb))
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 3.4))
    return draw_joint_effect(ax, xa, xb, values.T, name_a, name_b, cmap=cmap, title_size=9)


def draw_joint_effect(
    ax,
    xa,
    xb,
    values,
    name_a: str,
    name_b: str,
    title: str | None = None,
    label: str = "joint effect",
    cmap="RdBu_r",
    label_size=None,
    title_size=None,
):
    """A pair's joint effect as a heat map on `ax`: `values[b, a]` over the grid `xa` x `xb`,
    coloured symmetrically about 0 (white: no effect), with a colour bar; returns the axes.
    Drawn for one fitted model by `plot_interaction` and for the mean over trials by the
    report's Figure 5. The feature names are drawn literally (`plain_text`); ``title`` as given
    (escape names in it with `plain_text`)."""
    limit = float(np.nanmax(np.abs(values))) or 1.0
    mesh = ax.pcolormesh(xa, xb, values, shading="nearest", cmap=cmap, vmin=-limit, vmax=limit)
    ax.figure.colorbar(mesh, ax=ax, label=label)
    sizes = {} if label_size is None else {"fontsize": label_size}
    name_a, name_b = plain_text(name_a), plain_text(name_b)
    ax.set_xlabel(name_a, **sizes)
    ax.set_ylabel(name_b, **sizes)
    title = f"{name_a} x {name_b}" if title is None else title
    ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
    return ax
