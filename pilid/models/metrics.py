"""The paper's metrics on a test split: the scores an estimator gives and MSE / AUC of them.

``predict_scores(estimator, X, task)`` turns the test split into one score per row (the
prediction, or a positive-class score) and ``score(metric, y, scores)`` reduces them to the
paper's metric over the whole split (Section 4: MSE for regression, AUC for classification).
"""

from __future__ import annotations

import numpy as np

from pilid.errors import PilidError
from pilid.tasks import METRIC_LABELS, TASKS

__all__ = ["METRICS", "predict_scores", "score"]

#: The metric names `score` takes (those of `pilid.tasks.METRIC_LABELS`, plus an alias).
METRICS = {**{name: name for name in METRIC_LABELS}, "roc_auc": "auc"}


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise PilidError(f"task={task!r} is unknown; use 'regression' or 'classification'")


def predict_scores(estimator, X, task: str) -> np.ndarray:
    """Test-split scores, shape (n,): the prediction (regression) or a positive-class score.

    For classification the score is `decision_function` when the estimator has one (a logit or
    margin: no ties from probabilities rounded to 0 or 1), else `predict_proba[:, 1]`, the
    column of `classes_[1]`. AUC depends only on the order of the scores, so both give the AUC
    of the model. An estimator fitted on K > 2 classes gives `predict_proba`, (n, K), for the
    one-vs-rest AUC of `score`.
    """
    _check_task(task)
    if task == "classification" and len(getattr(estimator, "classes_", ())) > 2:
        return np.asarray(estimator.predict_proba(X), dtype=np.float64)
    if task == "regression":
        scores = estimator.predict(X)
    elif hasattr(estimator, "decision_function"):
        scores = estimator.decision_function(X)
    elif hasattr(estimator, "predict_proba"):
        scores = np.asarray(estimator.predict_proba(X))[:, 1]
    else:
        raise PilidError(
            f"{type(estimator).__name__} has neither decision_function nor predict_proba; "
            "a classifier needs one of them to be scored by AUC"
        )
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim != 1:
        raise PilidError(
            f"{type(estimator).__name__} returned scores of shape {scores.shape}; "
            "a binary classifier or regressor must return one score per row"
        )
    return scores


def score(metric: str, y_true, scores) -> float:
    """The paper's metric on a whole test split: `mse` = mean((y - s)^2); `auc`/`roc_auc` = ROC AUC.

    AUC is the probability that a random positive scores above a random negative (ties count
    one half), computed once over all test rows, not averaged over mini-batches. Scores of
    shape (n, K) (class probabilities, y coded 0..K-1): the macro one-vs-rest AUC, the mean
    over classes of the AUC of class k against the rest by column k (beyond the paper).
    """
    if np.ndim(scores) == 2 and np.shape(scores)[1] > 2:
        return _ovr_auc(metric, y_true, scores)
    name = METRICS.get(str(metric).lower())
    if name is None:
        raise PilidError(f"unknown metric {metric!r}; use 'mse' or 'auc' (alias 'roc_auc')")
    y = np.asarray(y_true).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise PilidError(
            f"y_true has {y.size} values but scores has {s.size}; score the same test rows"
        )
    if y.size == 0:
        raise PilidError("the test split is empty; use a larger dataset or test_size")
    if not np.all(np.isfinite(s)):
        raise PilidError(
            f"{np.count_nonzero(~np.isfinite(s))} of {s.size} scores are not finite; the model "
            "diverged: lower train.lr or raise the regularisation"
        )
    if name == "mse":
        return float(np.mean((y.astype(np.float64) - s) ** 2))
    from sklearn.metrics import roc_auc_score

    if np.unique(y).size != 2:
        raise PilidError(
            f"AUC needs both classes in the test split; y_true has {np.unique(y).size} class(es): "
            "use a stratified split or more test rows"
        )
    return float(roc_auc_score(y, s))


def _ovr_auc(metric: str, y_true, proba) -> float:
    """Macro one-vs-rest AUC of class probabilities (n, K) for labels coded 0..K-1."""
    from sklearn.metrics import roc_auc_score

    if METRICS.get(str(metric).lower()) != "auc":
        raise PilidError(f"metric {metric!r} cannot score K > 2 classes; use 'auc'")
    y = np.asarray(y_true).ravel()
    p = np.asarray(proba, dtype=np.float64)
    if y.shape[0] != p.shape[0]:
        raise PilidError(
            f"y_true has {y.size} values but scores has {p.shape[0]} rows; score the same rows"
        )
    if not np.all(np.isfinite(p)):
        raise PilidError(
            f"{np.count_nonzero(~np.isfinite(p))} of {p.size} scores are not finite; the model "
            "diverged: lower train.lr or raise the regularisation"
        )
    if np.unique(y).size < 2:
        raise PilidError("AUC needs two classes or more in the test split; use more test rows")
    return float(
        roc_auc_score(y, p, multi_class="ovr", average="macro", labels=np.arange(p.shape[1]))
    )
