"""Which pairs get an explicit pair term (PiLiD's ``pairs``; beyond the paper).

GA2M (Lou et al., KDD 2013) ranks every pair of features by FAST: the best gain of a pair's 2-D
step function over the pair's bins, on the residuals of the main effects. The estimators here
rank with InterpretML's implementation of FAST (`interpret.utils.measure_interactions`, the one
EBM uses) on the training rows (not the rows held out for early stopping), starting from the
scores of a main-effect model in PiLiD's own basis (`main_effect_scores`: least squares on Phi
of Definition 2 for regression, a logistic regression on Phi for classification), and keep the
``k`` pairs with the largest gain (`pilid.nn.pairs.PairTerms` gives each its piecewise-linear
pair term). Without that start a pair of two strong main effects would rank high where the two
do not interact. Features with a monotone constraint take part in no pair: a pair term could
break the constraint (the deep part does not see them either, `pilid.models.monotone`).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge

from pilid.nn.piecewise import Knots, phi_numpy

__all__ = ["AUTO_PAIRS", "fast_pairs", "main_effect_scores"]

#: The pairs of the candidate with pair terms when ``pairs="auto"`` (the development suite's
#: screening, ``scripts/lever_study.py``).
AUTO_PAIRS = 10


def main_effect_scores(
    X: np.ndarray, target: np.ndarray, knots: Knots, task: str, weight: np.ndarray | None = None
) -> np.ndarray:
    """Per row of `X` (n, m) the score of an additive piecewise-linear model of `target`: Phi
    of Definition 2 at `knots` (a missing value: 0 and an indicator column for its feature),
    ridge least squares (regression; the prediction) or an L2 logistic regression
    (classification, `target` 0/1; the logit), weighted by `weight` (n,; None: unweighted)."""
    nan = np.isnan(X)
    phi = np.nan_to_num(phi_numpy(X, knots), nan=0.0)
    lacking = nan.any(0)
    if lacking.any():
        phi = np.hstack([phi, nan[:, lacking].astype(np.float64)])
    if task == "regression":
        return Ridge(alpha=1e-3).fit(phi, target, sample_weight=weight).predict(phi)
    model = LogisticRegression(max_iter=500).fit(phi, target.astype(int), sample_weight=weight)
    return model.decision_function(phi)


def fast_pairs(
    X: np.ndarray,
    target: np.ndarray,
    k: int,
    knots: Knots,
    task: str,
    categorical: np.ndarray,
    weight: np.ndarray | None = None,
    exclude: np.ndarray | None = None,
) -> np.ndarray:
    """The ``k`` pairs of columns of `X` (n, m) with the largest FAST gain for `target`, as
    feature indices (k', 2), k' <= k (fewer when there are fewer pairs). `task`:
    "regression" (squared error; `target` standardised) or "classification" (log loss; `target`
    0/1); `knots` the characteristic points of the main-effect start (`main_effect_scores`);
    `categorical` (m,) marks nominal columns; `weight` (n,) sample weights; `exclude` (m,)
    features that take part in no pair. NaN is a missing value (FAST gives it its own bin)."""
    from interpret.utils import measure_interactions

    m = X.shape[1]
    allowed = np.ones(m, dtype=bool) if exclude is None else ~np.asarray(exclude, dtype=bool)
    candidates = [(a, b) for a in range(m) for b in range(a + 1, m) if allowed[a] and allowed[b]]
    if k <= 0 or not candidates:
        return np.zeros((0, 2), dtype=np.int64)
    regression = task == "regression"
    y = np.asarray(target, dtype=np.float64) if regression else np.asarray(target).astype(int)
    types = ["nominal" if c else "continuous" for c in np.asarray(categorical, dtype=bool)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # interpret's notes on its own defaults
        ranked = measure_interactions(
            X,
            y,
            interactions=candidates,
            init_score=main_effect_scores(X, y, knots, task, weight),
            sample_weight=weight,
            feature_types=types,
            objective="rmse" if regression else "log_loss",
        )
    best = sorted(ranked, key=lambda pair_gain: -pair_gain[1])[:k]
    return np.array([sorted(pair) for pair, _ in best], dtype=np.int64).reshape(-1, 2)
