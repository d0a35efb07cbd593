"""The plotting functions, kept for their callers: each is a call of a display of
`pilid.inspection.displays` (the one way pilid draws a shape or a joint effect).

`plot_shapes` is `ShapeDisplay.from_shapes(...).axes_`, `plot_interaction` is
`InteractionDisplay.from_grid(...).ax_` and `draw_joint_effect` is `InteractionDisplay(...).plot`
on given axes; `plain_text` is `pilid.inspection.displays.plain_text`. New code uses the displays,
which also keep the drawn artists (``lines_``, ``mesh_``, ...).
"""

from __future__ import annotations

import pandas as pd

from pilid.inspection.displays import ShapeDisplay, plain_text
from pilid.inspection.interaction_display import InteractionDisplay

__all__ = ["draw_joint_effect", "plain_text", "plot_interaction", "plot_shapes"]


def plot_shapes(
    shapes: pd.DataFrame,
    names: list[str],
    categorical,
    features=None,
    ax=None,
    ncols: int = 4,
    output=None,
):
    """One small panel per feature of `shapes` (`feature`, `x`, `value`); returns the axes.

    `ShapeDisplay.from_shapes` with `names` (all feature names in column order) and
    `categorical` (one flag per name); see there for bands, missing values, levels and
    classes. `features` (names or indices) picks the panels; `ax` takes one axes per panel,
    else a grid of `ncols` columns is made (tight layout). `output` names what the values are
    contributions to (e.g. ``"logit of class 'yes'"``), the first column's y label.
    """
    display = ShapeDisplay.from_shapes(
        shapes,
        features=features,
        categorical=categorical,
        ax=ax,
        ncols=ncols,
        feature_names=names,
        output=output,
    )
    return display.axes_


def plot_interaction(grid: pd.DataFrame, name_a: str, name_b: str, ax=None, cmap="RdBu_r"):
    """Heat map of a joint effect on a grid (`x_a`, `x_b`, `value`); returns the axes
    (`InteractionDisplay.from_grid`)."""
    return InteractionDisplay.from_grid(grid, name_a, name_b, ax=ax, cmap=cmap).ax_


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
    """A pair's joint effect `values[b, a]` over the grid `xa` x `xb` as a heat map on `ax`;
    returns the axes (`InteractionDisplay.plot`; ``title`` as given: escape names in it with
    `plain_text`)."""
    display = InteractionDisplay(xa, xb, values, name_a, name_b)
    display.plot(
        ax=ax, cmap=cmap, title=title, label=label, label_size=label_size, title_size=title_size
    )
    return ax
