"""Sample weights (``fit(X, y, sample_weight=w)``, beyond the paper): their checks and the
weighted statistics, for the neural estimators and the baselines.

Neural estimators (`pilid.estimators.neural`): the weights enter the training loss and the
validation loss (weighted means, `pilid.train.trainer`), the least-squares start and the
purification (weighted least squares, `pilid.nn.least_squares.ridge_solve`), the quantile knots
(`pilid.nn.piecewise.fit_knots`: weights read as repeat counts), the standardisation of X and of
a regression target and the centring of the contributions (`weighted_mean_std`), and a bag's
bootstrap draws (`pilid.models.bagging`). The holdout split for early stopping is drawn over rows
as without weights. `check_sample_weight` refuses bad weights on one line and returns None for
weights that are all equal: those give the unweighted fit exactly (the same random draws and the
same arithmetic), so ``sample_weight=np.ones(n)`` is bit for bit ``sample_weight=None``.

Baselines (`pilid.baselines.gam`, `ga2m`, `ga`) and the CV wrappers: `check_weights` (equal
weights stay weights: a GAM's smoothing score counts them), and `weighted_quantiles` per column
(`pilid.nn.piecewise.weighted_quantile`: whole-number weights give exactly ``np.quantile`` of
the repeated rows).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import _check_sample_weight

from pilid.errors import PilidError
from pilid.nn.piecewise import weighted_quantile

__all__ = [
    "check_sample_weight",
    "check_weighted_rows",
    "check_weights",
    "weighted_mean_std",
    "weighted_quantiles",
]


def check_sample_weight(sample_weight, X: np.ndarray) -> np.ndarray | None:
    """`sample_weight` as float64 (n,) for the rows of `X`, or None when it is None or all its
    weights are equal (the unweighted fit). Negative, NaN/inf, all-zero weights or a wrong
    length raise a one-line `PilidError`."""
    if sample_weight is None:
        return None
    try:
        w = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True, copy=True
        )
    except ValueError as error:
        reason = str(error).splitlines()[0].rstrip(".!")
        if "non-zero" in reason:
            reason = "every weight is zero"
        raise PilidError(
            f"sample_weight is invalid ({reason}); pass one finite, non-negative weight per "
            f"row of X ({X.shape[0]} rows), not all zero"
        ) from None
    if not np.isfinite(w).all():
        raise PilidError("sample_weight contains inf; pass finite, non-negative weights")
    if np.all(w == w[0]):
        return None  # equal weights: the unweighted fit, exactly
    return w


def weighted_mean_std(a: np.ndarray, weights: np.ndarray | None):
    """Mean and standard deviation (ddof=0) of `a` over its rows (axis 0), weighted by
    `weights` (n,); None: ``a.mean(axis=0), a.std(axis=0)``, computed exactly as NumPy does."""
    if weights is None:
        return a.mean(axis=0), a.std(axis=0)
    mean = np.average(a, axis=0, weights=weights)
    var = np.average(np.square(a - mean), axis=0, weights=weights)
    return mean, np.sqrt(var)


def check_weighted_rows(est, weight, target, train_idx, val_idx) -> None:
    """Refuse weights that leave the fit without information: every training row or every
    validation row (early stopping) of weight 0, or (classification) fewer than two classes
    with positive weight. One line each, naming the fix."""
    if weight is None:
        return
    if est._task == "classification":
        present = np.unique(target[weight > 0])
        if present.size < 2:
            label = est.classes_[int(present[0])]
            raise PilidError(
                f"sample_weight is zero on every row but those of class {label!r}; "
                "classification needs rows of positive weight in at least two classes"
            )
    if not (weight[train_idx] > 0).any():
        raise PilidError(
            "sample_weight is zero on every training row (the rows not held out for early "
            "stopping); give more rows a positive weight or use another random_state"
        )
    if len(val_idx) and not (weight[val_idx] > 0).any():
        raise PilidError(
            f"sample_weight is zero on every validation row (val_fraction={est.val_fraction} of "
            "the rows held out for early stopping); use another random_state, a larger "
            "val_fraction, or patience=None"
        )


def check_weights(estimator, sample_weight, X) -> np.ndarray | None:
    """``sample_weight`` as float64 (n,), or None when None; one line naming the fix otherwise.

    Weights must be finite and >= 0, one per row of ``X``, and not all 0.
    """
    if sample_weight is None:
        return None
    name = type(estimator).__name__
    try:
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    except ValueError as error:
        text = " ".join(str(error).split())
        raise PilidError(
            f"{name}: sample_weight is invalid ({text}); pass one finite weight >= 0 per row "
            "of X, or sample_weight=None"
        ) from None
    if not weights.sum() > 0:
        raise PilidError(
            f"{name}: sample_weight sums to 0; give some rows a positive weight, or pass "
            "sample_weight=None"
        )
    return weights


def weighted_quantiles(X: np.ndarray, q: float, weights: np.ndarray) -> np.ndarray:
    """Per column of X (n, m), the q-quantile of the rows repeated ``weights`` times
    (`pilid.nn.piecewise.weighted_quantile`, column by column)."""
    X = np.asarray(X, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    return np.array([float(weighted_quantile(X[:, j], weights, q)) for j in range(X.shape[1])])
