"""The grid on which a pair of features' joint effect is read (the paper's Figure 5).

PiLiB and NIT (`pilid.estimators.gated`) read a pair's joint effect from their blocks, PiLiD
(`pilid.inspection.pair_effect`) from its output by partial dependence; both lay the same grid over
the two features and average the features they do not draw over the same kept training rows:

* `keep_grid_rows` keeps, at fit, up to `N_BACKGROUND` training rows (the background of partial
  dependence), each feature's range and the values of a feature with at most
  `MAX_GRID_LEVELS` of them (``x_min_``, ``x_max_``); with them, up to `N_REFERENCE` training
  rows (the first `N_BACKGROUND` of which are the background), on which
  `pilid.inspection.importance` reads the terms' importance when no rows are given, and each
  feature's distribution over all the training rows (`feature_counts`), which
  `pilid.inspection.displays.ShapeDisplay` draws under the shapes;
* `grid_axis` is a feature's axis: n evenly spaced points over its training range, or its
  values where it has few;
* `check_pair` reads and checks the two features and the grid size the user asked for.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from pilid.errors import PilidError

__all__ = [
    "HISTOGRAM_BINS",
    "MAX_GRID_LEVELS",
    "N_BACKGROUND",
    "N_REFERENCE",
    "FeatureCounts",
    "check_pair",
    "feature_counts",
    "grid_axis",
    "keep_grid_rows",
]

#: Rows of the training data kept for partial dependence (the grid's background).
N_BACKGROUND = 200
#: Rows of the training data kept as the reference of the terms' importance.
N_REFERENCE = 1000
#: A feature with at most this many distinct values is gridded at its values.
MAX_GRID_LEVELS = 64
#: Bins of the histogram of a numeric feature with more than `MAX_GRID_LEVELS` values.
HISTOGRAM_BINS = 30


@dataclasses.dataclass(frozen=True)
class FeatureCounts:
    """A feature's distribution over some rows: ``values`` and their row ``counts`` (a feature
    with at most `MAX_GRID_LEVELS` distinct values, or a categorical one: its codes), or a
    histogram (``edges``, ``counts`` per bin); ``missing``, the rows with NaN."""

    counts: np.ndarray
    values: np.ndarray | None = None
    edges: np.ndarray | None = None
    missing: int = 0


def feature_counts(X: np.ndarray, categorical=None) -> list[FeatureCounts]:
    """The `FeatureCounts` of each column of validated `X` (n, m): the counts of its distinct
    values where it is categorical (`categorical`, one flag per column) or has at most
    `MAX_GRID_LEVELS` of them, else a histogram of `HISTOGRAM_BINS` equal bins over its range."""
    flags = np.zeros(X.shape[1], dtype=bool) if categorical is None else np.asarray(categorical)
    out = []
    for j in range(X.shape[1]):
        column = X[:, j]
        present = column[~np.isnan(column)]
        missing = int(len(column) - len(present))
        values, counts = np.unique(present, return_counts=True)
        if flags[j] or len(values) <= MAX_GRID_LEVELS:
            out.append(FeatureCounts(counts, values=values, missing=missing))
            continue
        counts, edges = np.histogram(present, bins=HISTOGRAM_BINS)
        out.append(FeatureCounts(counts, edges=edges, missing=missing))
    return out


def keep_grid_rows(est, X: np.ndarray, rng: np.random.Generator) -> None:
    """Keep on `est` what a grid needs of the training rows `X`: up to `N_BACKGROUND` of them
    (``_background_X``, drawn by `rng`), each feature's range (``x_min_``, ``x_max_``; missing
    values skipped) and the values of the features with few of them (``_grid_values``); and up
    to `N_REFERENCE` of them (``_reference_X``: the same draw, the background among them) and
    each feature's `feature_counts` over all of them (``_feature_counts``)."""
    order = rng.permutation(len(X))
    est._background_X = X[np.sort(order[:N_BACKGROUND])]
    est._reference_X = X[np.sort(order[:N_REFERENCE])]
    est._feature_counts = feature_counts(X, getattr(est, "categorical_", None))
    with np.errstate(all="ignore"):
        est.x_min_ = np.nanmin(X, axis=0)
        est.x_max_ = np.nanmax(X, axis=0)
    est._grid_values = [  # the distinct values `feature_counts` found (one pass per column)
        c.values if c.values is not None and len(c.values) <= MAX_GRID_LEVELS else None
        for c in est._feature_counts
    ]


def grid_axis(est, j: int, n: int) -> np.ndarray:
    """Feature `j`'s axis: its values where it has at most `n` (and `MAX_GRID_LEVELS`), else `n`
    evenly spaced points from its training minimum to its maximum."""
    values = est._grid_values[j]
    if values is not None and len(values) <= n:
        return values.astype(np.float64)
    return np.linspace(est.x_min_[j], est.x_max_[j], n)


def check_pair(est, i, j, n) -> tuple[int, int]:
    """The column positions of features `i` and `j` (positions or names) of `est`; one line
    naming the fix when they are the same feature or `n` is not a grid size."""
    a, b = est._index(i), est._index(j)
    if a == b:
        raise PilidError(f"interaction_grid needs two different features; got {i!r} twice")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise PilidError(f"n={n!r} is invalid; use a whole number >= 2 grid points")
    return a, b
