"""The grid on which a pair of features' joint effect is read (the paper's Figure 5).

PiLiB and NIT (`pilid.estimators.gated`) read a pair's joint effect from their blocks, PiLiD
(`pilid.inspection.pair_effect`) from its output by partial dependence; both lay the same grid over
the two features and average the features they do not draw over the same kept training rows:

* `keep_grid_rows` keeps, at fit, up to `N_BACKGROUND` training rows (the background of partial
  dependence), each feature's range and the values of a feature with at most
  `MAX_GRID_LEVELS` of them (``x_min_``, ``x_max_``);
* `grid_axis` is a feature's axis: n evenly spaced points over its training range, or its
  values where it has few;
* `check_pair` reads and checks the two features and the grid size the user asked for.
"""

from __future__ import annotations

import numbers

import numpy as np

from pilid.errors import PilidError

__all__ = ["MAX_GRID_LEVELS", "N_BACKGROUND", "check_pair", "grid_axis", "keep_grid_rows"]

#: Rows of the training data kept for partial dependence (the grid's background).
N_BACKGROUND = 200
#: A feature with at most this many distinct values is gridded at its values.
MAX_GRID_LEVELS = 64


def keep_grid_rows(est, X: np.ndarray, rng: np.random.Generator) -> None:
    """Keep on `est` what a grid needs of the training rows `X`: up to `N_BACKGROUND` of them
    (``_background_X``, drawn by `rng`), each feature's range (``x_min_``, ``x_max_``; missing
    values skipped) and the values of the features with few of them (``_grid_values``)."""
    est._background_X = X[np.sort(rng.permutation(len(X))[:N_BACKGROUND])]
    with np.errstate(all="ignore"):
        est.x_min_ = np.nanmin(X, axis=0)
        est.x_max_ = np.nanmax(X, axis=0)
    est._grid_values = []
    for j in range(X.shape[1]):
        values = np.unique(X[~np.isnan(X[:, j]), j])
        est._grid_values.append(values if len(values) <= MAX_GRID_LEVELS else None)


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
