"""Shape fidelity: how well learned marginal value functions match known true ones.

Beyond the paper: on synthetic data the true main effects f_j are known. The fidelity
of feature j is the R^2 of the learned, centred contribution u_j(x_ij) (Definition 3's marginal
value function, as returned by `feature_contributions`) against the true, centred f_j(x_ij) over
the rows given:

    R^2_j = 1 - sum_i (u~_ij - f~_ij)^2 / sum_i f~_ij^2,   u~, f~ centred over the rows,

1 for a perfect shape, 0 for a flat one, negative when the shape is worse than flat. Features
whose true effect is constant on the rows have no defined R^2 (NaN) and are left out of the mean.
Pure NumPy: importable without torch or training.
"""

from __future__ import annotations

import numpy as np

from pilid.errors import PilidError


def shape_fidelity(learned, true, scale: float = 1.0) -> tuple[np.ndarray, float]:
    """R^2 per feature of centred `learned` (n, m) against centred `true` (n, m), and its mean.

    `scale` divides the true values first (e.g. the target's standard deviation when the model
    was fitted on a standardised target but the true shapes are in original units).
    """
    u = np.asarray(learned, dtype=np.float64)
    f = np.asarray(true, dtype=np.float64) / float(scale)
    if u.ndim != 2 or u.shape != f.shape:
        raise PilidError(
            f"learned {u.shape} and true {f.shape} contributions must be (n, m) arrays of one "
            "shape; evaluate both on the same rows"
        )
    if not (np.isfinite(u).all() and np.isfinite(f).all()):
        raise PilidError("contributions contain NaN or inf; evaluate on finite rows")
    u = u - u.mean(axis=0)
    f = f - f.mean(axis=0)
    ss_true = (f**2).sum(axis=0)
    ss_err = ((u - f) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(ss_true > 1e-12 * max(ss_true.max(), 1e-300), 1.0 - ss_err / ss_true, np.nan)
    mean = float(np.nanmean(r2)) if np.isfinite(r2).any() else float("nan")
    return r2, mean


def estimator_fidelity(estimator, X, true, scale: float = 1.0) -> tuple[np.ndarray, float]:
    """`shape_fidelity` of a fitted estimator's `feature_contributions(X)` against `true`."""
    return shape_fidelity(estimator.feature_contributions(X), true, scale=scale)
