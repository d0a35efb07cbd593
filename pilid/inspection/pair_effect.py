"""A fitted PiLiD's interaction of two features, on a grid (beyond the paper).

PiLiD's shapes are its main effects; what two features do together lives in its deep part: the
MLP of Eq. (9) and, with ``pairs`` (``"auto"`` by default), the explicit pair terms of
``pairs_`` (`pilid.nn.pairs.PairTerms`), trained jointly and sharing the interactions between
them. `interaction_grid` reads the model's interaction of features a and b as a whole, from its
output alone (Friedman and Popescu's decomposition of partial dependence, 2008, behind their
H-statistic):

    I(a, b) = PD_ab(a, b) - PD_a(a) - PD_b(b) - c,

with PD_ab the output averaged over the kept training rows with features a and b set to (a, b),
PD_a and PD_b the same with one feature set, and c the constant that centres I to mean 0 over
those rows' own (a, b). The additive part cancels from I (a shape of a or b is in PD_ab and in
PD_a or PD_b alike), so I is what no shape can draw; a model whose deep part is one pair term
f_ab alone gets f_ab with its main effects removed, and I has the model's double differences
``out(a1, b1) - out(a1, b0) - out(a0, b1) + out(a0, b0)`` wherever the deep part depends on a
and b alone. Output units: the target's (regression) or the logit (classification). A bag: the
mean over its members (the bag's own I, partial dependence being linear in the output) and their
spread (``std``, ``lower``, ``upper``; `pilid.models.bagging.BAND_PERCENTILES`), as its shapes
have. K > 2 classes: one grid per class logit, a first column ``class``.

Cost: (n^2 + 4 n + 3 r) r rows through each member, r <= 200 kept rows: about a second per
member at the default n = 50 with 4 features on one CPU core, more with more features (a smaller
``n`` or ``X`` of fewer rows is faster).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from pilid.inspection.joint_grid import check_pair, grid_axis
from pilid.models import bagging, multiclass

__all__ = ["interaction_grid"]

#: Rows per forward pass of the partial dependence.
CHUNK_ROWS = 65536


def _partial_dependence(member, background: np.ndarray, values: dict) -> np.ndarray:
    """The output of one model (not a bag) in output units less its offset, averaged over the
    `background` rows with feature j set to ``values[j][p]``, for each point p: (points,)."""
    r, m = background.shape
    points = len(next(iter(values.values())))
    step = max(1, CHUNK_ROWS // r)
    out = np.empty(points)
    for s in range(0, points, step):
        rows = np.repeat(background[None], min(step, points - s), axis=0)  # (p, r, m)
        for j, v in values.items():
            rows[:, :, j] = v[s : s + step, None]
        raw = member._raw(rows.reshape(-1, m)).reshape(len(rows), r)
        out[s : s + step] = member.y_scale_ * raw.mean(1)
    return out


def _interaction(member, a: int, b: int, ga, gb, background: np.ndarray) -> np.ndarray:
    """I(a, b) of the module docstring for one model on the grid ``ga`` x ``gb``, flattened in
    the order of ``np.meshgrid(ga, gb, indexing="ij")``."""
    A, B = np.meshgrid(ga, gb, indexing="ij")
    joint = _partial_dependence(member, background, {a: A.ravel(), b: B.ravel()})
    only_a = np.repeat(_partial_dependence(member, background, {a: ga}), len(gb))
    only_b = np.tile(_partial_dependence(member, background, {b: gb}), len(ga))
    ra, rb = background[:, a], background[:, b]  # the kept rows' own (a, b): the centring
    own = (
        _partial_dependence(member, background, {a: ra, b: rb})
        - _partial_dependence(member, background, {a: ra})
        - _partial_dependence(member, background, {b: rb})
    )
    return joint - only_a - only_b - own.mean()


def _grid(est, a: int, b: int, ga, gb, background: np.ndarray) -> pd.DataFrame:
    """The tidy grid of one model or bag (`est`'s members, a bag's spread)."""
    A, B = np.meshgrid(ga, gb, indexing="ij")
    grid = pd.DataFrame({"x_a": A.ravel(), "x_b": B.ravel()})
    members = est.estimators_ if est._bagged() else [est]
    values = np.stack([_interaction(m, a, b, ga, gb, background) for m in members])
    if not est._bagged():
        return grid.assign(value=values[0])
    lower, upper = np.percentile(values, bagging.BAND_PERCENTILES, axis=0)
    return grid.assign(value=values.mean(0), std=values.std(0), lower=lower, upper=upper)


def interaction_grid(est, i, j, n: int = 50, X=None) -> pd.DataFrame:
    """A fitted PiLiD's interaction of features `i` and `j` on a grid (module docstring).

    Parameters
    ----------
    est : fitted PiLiDRegressor or PiLiDClassifier
    i, j : int or str
        The two features (column positions or names); ``x_a`` is `i`, ``x_b`` is `j`.
    n : int, default=50
        Grid points per feature: n evenly spaced over the training range, or the feature's
        values where it has at most n of them (`pilid.inspection.joint_grid.grid_axis`).
    X : array-like or None, default=None
        The rows the partial dependence averages over; None: up to 200 training rows kept at
        fit.

    Returns
    -------
    pandas.DataFrame
        ``x_a``, ``x_b`` and ``value`` (I, in output units); a bag adds ``std``, ``lower`` and
        ``upper`` over its members; K > 2 classes a first column ``class``.
    """
    check_is_fitted(est, "x_min_")
    a, b = check_pair(est, i, j, n)
    background = est._background_X if X is None else est._validate_X(X, fit=False)
    ga, gb = grid_axis(est, a, n), grid_axis(est, b, n)
    if est._multiclass():
        tables = [_grid(m, a, b, ga, gb, background) for m in est.class_estimators_]
        return multiclass.class_table(est, tables)
    return _grid(est, a, b, ga, gb, background)
