"""Which pairs get an explicit pair term (PiLiD's ``pairs``; beyond the paper).

GA2M (Lou et al., KDD 2013) ranks every pair of features by FAST: the best gain of a pair's 2-D
step function over the pair's bins, on the residuals of the main effects. The estimators here
rank with InterpretML's implementation of FAST (`interpret.utils.measure_interactions`, the one
EBM uses) on the training rows (not the rows held out for early stopping), twice
(`ranked_pairs`):

* on the residuals of a main-effect model in PiLiD's own basis (`main_effect_scores`: least
  squares on Phi of Definition 2 for regression, a logistic regression on Phi for
  classification), GA2M's ranking: it finds a pair that interacts where neither feature has a
  main effect, and without that start a pair of two strong main effects would rank high where
  the two do not interact;
* on the target itself (no start), which ranks first the pairs of the features that carry the
  most signal, which the residual ranking can leave out (on the development suite both
  rankings together did better than either; the documentation's study pages).

`fast_pairs` keeps ``k`` pairs taking the two rankings in turn, the residual one first, each pair
once. Features with a monotone constraint take part in no pair: a pair term could break the
constraint (the deep part does not see them either, `pilid.models.monotone`).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge

from pilid.nn.piecewise import Knots, phi_numpy

__all__ = ["AUTO_PAIRS", "fast_pairs", "main_effect_scores", "ranked_pairs"]

#: The pairs of the candidate with pair terms when ``pairs="auto"`` (chosen on the development
#: suite; the documentation's study pages).
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


def ranked_pairs(
    X: np.ndarray,
    y: np.ndarray,
    candidates: list[tuple[int, int]],
    task: str,
    types: list[str],
    init_score: np.ndarray | None,
    weight: np.ndarray | None = None,
) -> list[tuple[int, int]]:
    """`candidates` (pairs of columns of `X`) sorted by FAST gain for `y`, the largest first
    (InterpretML's `measure_interactions`), starting from `init_score` (n,; None: from the
    target's mean); `types` the columns' ``"nominal"`` / ``"continuous"``."""
    from interpret.utils import measure_interactions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # interpret's notes on its own defaults
        ranked = measure_interactions(
            X,
            y,
            interactions=candidates,
            init_score=init_score,
            sample_weight=weight,
            feature_types=types,
            objective="rmse" if task == "regression" else "log_loss",
        )
    return [tuple(sorted(pair)) for pair, _ in sorted(ranked, key=lambda pair_gain: -pair_gain[1])]


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
    """The ``k`` pairs of columns of `X` (n, m) that FAST ranks first, as feature indices
    (k', 2), k' <= k (fewer when there are fewer pairs): the ranking on the residuals of the
    main effects (`main_effect_scores` at `knots`) and the ranking on the target itself
    (`ranked_pairs`) taken in turn, the residual one first, each pair once. `task`:
    "regression" (squared error; `target` standardised) or "classification" (log loss; `target`
    0/1); `categorical` (m,) marks nominal columns; `weight` (n,) sample weights; `exclude` (m,)
    features that take part in no pair. NaN is a missing value (FAST gives it its own bin)."""
    m = X.shape[1]
    allowed = np.ones(m, dtype=bool) if exclude is None else ~np.asarray(exclude, dtype=bool)
    candidates = [(a, b) for a in range(m) for b in range(a + 1, m) if allowed[a] and allowed[b]]
    if k <= 0 or not candidates:
        return np.zeros((0, 2), dtype=np.int64)
    regression = task == "regression"
    y = np.asarray(target, dtype=np.float64) if regression else np.asarray(target).astype(int)
    types = ["nominal" if c else "continuous" for c in np.asarray(categorical, dtype=bool)]
    start = main_effect_scores(X, y, knots, task, weight)
    by_residual = ranked_pairs(X, y, candidates, task, types, start, weight)
    by_target = ranked_pairs(X, y, candidates, task, types, None, weight)
    turns = [pair for both in zip(by_residual, by_target) for pair in both]
    chosen = list(dict.fromkeys(turns))[:k]  # each pair once, in the order of the turns
    return np.array(chosen, dtype=np.int64).reshape(-1, 2)
