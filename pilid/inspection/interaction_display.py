"""`InteractionDisplay`: a pair's joint effect on a grid as a heat map (the paper's Figure 5),
coloured symmetrically about 0, and `InteractionPlotMixin`, the estimators' ``plot_interaction``
that draws through it. A display object as `pilid.inspection.displays` describes them (the numbers
it draws, ``from_*`` class methods, ``plot(ax=...)``, artists in attributes ending in ``_``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.inspection.displays import plain_text, require_columns

__all__ = ["InteractionDisplay", "InteractionPlotMixin"]


class InteractionDisplay:
    """A pair's joint effect as a heat map (the paper's Figure 5).

    ``values[b, a]`` over the grid ``x_a`` by ``x_b``, coloured symmetrically about 0 (white:
    no effect), with a colour bar. Build it with `from_estimator` (a fitted PiLiB or NIT: its
    `interaction_grid`), `from_grid` (a tidy ``x_a``, ``x_b``, ``value`` table), or from the
    matrix and `plot` (the report's Figure 5 draws its mean over trials so).

    Parameters
    ----------
    x_a, x_b : array-like
        The grid's values of the first and the second feature (ascending).
    values : array-like of shape (len(x_b), len(x_a))
        The joint effect at each grid point, ``values[b, a]``.
    name_a, name_b : str
        The two features' names (drawn literally).
    table : pandas.DataFrame or None, default=None
        The tidy grid the matrix was read from (`from_grid`, `from_estimator`), kept as is.

    Attributes
    ----------
    ax_ : matplotlib.axes.Axes
        The axes drawn on (after `plot`).
    figure_ : matplotlib.figure.Figure
        Their figure.
    mesh_ : matplotlib.collections.QuadMesh
        The heat map.
    colorbar_ : matplotlib.colorbar.Colorbar
        Its colour bar.
    """

    def __init__(self, x_a, x_b, values, name_a: str, name_b: str, table=None):
        self.x_a = np.asarray(x_a)
        self.x_b = np.asarray(x_b)
        self.values = np.asarray(values, dtype=np.float64)
        if self.values.shape != (len(self.x_b), len(self.x_a)):
            raise PilidError(
                f"values have shape {self.values.shape} for a grid of {len(self.x_a)} x "
                f"{len(self.x_b)}; pass values[b, a] of shape ({len(self.x_b)}, {len(self.x_a)})"
            )
        self.name_a, self.name_b = str(name_a), str(name_b)
        self.table = table

    @classmethod
    def from_grid(
        cls, grid: pd.DataFrame, name_a: str, name_b: str, ax=None, cmap="RdBu_r", target=None
    ):
        """Draw a tidy grid (``x_a``, ``x_b``, ``value``; as `interaction_grid` returns).

        Parameters
        ----------
        grid : pandas.DataFrame
            One row per grid point, in any order; with a ``class`` column, `target` picks one.
        name_a, name_b : str
            The features of ``x_a`` and ``x_b``.
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure.
        cmap : str, default="RdBu_r"
            The colour map (symmetric about 0).
        target : object or None, default=None
            The class drawn when `grid` has a ``class`` column.

        Returns
        -------
        InteractionDisplay
            The display, drawn (`ax_`, `figure_`, `mesh_`).
        """
        require_columns(grid, ("x_a", "x_b", "value"), "interaction grid", "interaction_grid")
        part = grid
        if "class" in grid.columns:
            classes = list(dict.fromkeys(grid["class"]))
            if target not in classes:
                raise PilidError(
                    f"the grid has one effect per class {classes}; pick one with "
                    f"target=<class>, e.g. target={classes[0]!r}"
                )
            part = grid[(grid["class"] == target).to_numpy()]
        xa, ia = np.unique(part["x_a"].to_numpy(), return_inverse=True)
        xb, ib = np.unique(part["x_b"].to_numpy(), return_inverse=True)
        values = np.full((len(xb), len(xa)), np.nan)
        values[ib, ia] = part["value"].to_numpy(dtype=np.float64)
        return cls(xa, xb, values, name_a, name_b, table=grid).plot(ax=ax, cmap=cmap)

    @classmethod
    def from_estimator(
        cls, estimator, i, j, grid: int = 50, X=None, ax=None, cmap="RdBu_r", target=None
    ):
        """Draw a fitted estimator's joint effect of features `i` and `j`: a PiLiB's or NIT's
        blocks, or a PiLiD's interaction of the two (its MLP and pair terms together,
        `pilid.inspection.pair_effect`).

        Parameters
        ----------
        estimator : fitted PiLiB, NIT or PiLiD estimator
            Anything with ``interaction_grid(i, j, n, X)``.
        i, j : int or str
            The two features (column positions or names).
        grid : int, default=50
            Grid points per feature (`interaction_grid`'s ``n``).
        X : array-like or None, default=None
            Rows over which the blocks' other features are averaged; None: the training
            rows kept at fit.
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure.
        cmap : str, default="RdBu_r"
            The colour map (symmetric about 0).
        target : object or None, default=None
            The class drawn when the grid has one effect per class.

        Returns
        -------
        InteractionDisplay
            The display, drawn; ``table`` is ``estimator.interaction_grid(i, j, n=grid, X=X)``.
        """
        if not callable(getattr(estimator, "interaction_grid", None)):
            raise PilidError(
                f"{type(estimator).__name__} has no interaction blocks or pair terms; draw the "
                "joint effect of a fitted PiLiB, NIT or PiLiD estimator"
            )
        table = estimator.interaction_grid(i, j, n=grid, X=X)
        names = estimator._feature_names()
        a, b = estimator._index(i), estimator._index(j)
        return cls.from_grid(table, names[a], names[b], ax=ax, cmap=cmap, target=target)

    def plot(
        self,
        ax=None,
        cmap="RdBu_r",
        title: str | None = None,
        label: str = "joint effect",
        label_size=None,
        title_size=9,
    ):
        """Draw the heat map on `ax` (None: a new pyplot figure); returns self.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure.
        cmap : str, default="RdBu_r"
            The colour map; the colours are symmetric about 0.
        title : str or None, default=None
            The title as given (escape names in it with `plain_text`); None:
            ``name_a x name_b``.
        label : str, default="joint effect"
            The colour bar's label.
        label_size, title_size : float or None
            Font sizes of the axis labels and the title (None: matplotlib's).

        Returns
        -------
        InteractionDisplay
            self, with `ax_`, `figure_`, `mesh_` and `colorbar_` set.
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(4.2, 3.4))
        values = self.values
        limit = float(np.nanmax(np.abs(values))) if np.isfinite(values).any() else 0.0
        limit = limit or 1.0
        self.mesh_ = ax.pcolormesh(
            self.x_a, self.x_b, values, shading="nearest", cmap=cmap, vmin=-limit, vmax=limit
        )
        self.colorbar_ = ax.figure.colorbar(self.mesh_, ax=ax, label=label)
        sizes = {} if label_size is None else {"fontsize": label_size}
        name_a, name_b = plain_text(self.name_a), plain_text(self.name_b)
        ax.set_xlabel(name_a, **sizes)
        ax.set_ylabel(name_b, **sizes)
        title = f"{name_a} x {name_b}" if title is None else title
        ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
        self.ax_, self.figure_ = ax, ax.figure
        return self


class InteractionPlotMixin:
    """``plot_interaction`` for an estimator with ``interaction_grid`` (PiLiB and NIT: their
    blocks; PiLiD: its MLP and pair terms together, `pilid.inspection.pair_effect`)."""

    def plot_interaction(
        self, i, j, ax=None, grid: int = 50, X=None, cmap: str = "RdBu_r", target=None
    ):
        """Heat map of `interaction_grid(i, j)` (the paper's Figure 5); returns the axes.

        ``target``: the class drawn, for a model of K > 2 classes (one grid per class).
        ``InteractionDisplay.from_estimator(self, i, j, ...)`` draws the same and returns the
        display."""
        display = InteractionDisplay.from_estimator(
            self, i, j, grid=grid, X=X, ax=ax, cmap=cmap, target=target
        )
        return display.ax_
