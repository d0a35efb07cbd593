"""Scoring: a trained trial's test metric, and the ``mean ± std`` summary of a setting's trials."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pilid.errors import PilidError
from pilid.experiments.store import ResultStore
from pilid.tasks import metric_label
from pilid.train.divergence import DIVERGENCE_FACTOR, lr_advice


@dataclass
class Summary:
    """The outcome of a setting: the summary ``line`` and ``mean``/``std`` over ``n`` trials.

    ``std`` is the sample standard deviation over trials (ddof=1; 0 for a single trial), as in
    the paper's ``mean ± std`` tables. ``records`` holds the setting's records, by trial.
    """

    line: str
    mean: float
    std: float
    n: int
    records: list[dict[str, Any]] = field(default_factory=list)
    setting_id: str = ""
    ran: int = 0  # trials trained by this call (the others came from the store)


def summarize(store: ResultStore, sid: str, trials: int, label: str, ran: int = 0) -> Summary:
    """The summary of trials ``0..trials-1`` of setting ``sid`` from the store (newest records).

    Records that fail the store's schema (a ``null`` value, a string trial) were skipped with a
    warning when read, so every value here is a finite number.
    """
    records = [r for r in store.setting_records(sid) if r["trial"] < trials]
    values = np.array([r["value"] for r in records], dtype=float)
    n = len(values)
    if n == 0:
        raise PilidError(f"no finished trials for {label} (setting {sid}); run it again")
    mean = float(np.mean(values))
    std = float(np.std(values, ddof=1)) if n > 1 else 0.0
    metric = metric_label(records[0].get("metric", "value"))
    noun = "trial" if n == 1 else "trials"
    line = f"{label}: {metric} {mean:.4f} ± {std:.4f} over {n} {noun}"
    if n < trials:
        line += f" (of {trials})"
    return Summary(line, mean, std, n, records, sid, ran)


def score(estimator, split, metric: str, task: str) -> float:
    """Test-split metric (``pilid.models.metrics.score``): MSE in the split's target units, or
    ROC AUC of the positive-class score."""
    from pilid.models.metrics import predict_scores
    from pilid.models.metrics import score as metric_value

    return metric_value(metric, split.y_test, predict_scores(estimator, split.X_test, task))


def trial_value(estimator, split, metric: str, task: str) -> tuple[float, str | None]:
    """A trained trial's test metric (`score`) and, when the trial must not be recorded, why
    (a clause for `refusal_line`), else None.

    Refused: a trial whose training diverged (the engine's ``diverged_``, `pilid.train.
    divergence`: a NaN/inf training loss, or a training loss above 10 times a constant
    prediction's); non-finite test scores or metric; and, for MSE, a test MSE above
    `DIVERGENCE_FACTOR` times that of predicting the training mean, ``max(mean((y_test -
    mean(y_train))^2), var(y_train))``. The recorded regression trials of the paper's settings
    reach at most 0.58 times it (5,280 records of ``results/records``).
    """
    from pilid.models.metrics import predict_scores
    from pilid.models.metrics import score as metric_value

    diverged = getattr(estimator, "diverged_", None)
    if diverged:
        return math.nan, f"training diverged ({diverged})"
    scores = np.asarray(predict_scores(estimator, split.X_test, task), dtype=np.float64)
    bad = int(np.count_nonzero(~np.isfinite(scores)))
    if bad:
        return math.nan, f"{bad} of its {scores.size} test scores are not finite"
    value = metric_value(metric, split.y_test, scores)
    name = metric_label(metric)
    if not math.isfinite(value):
        return value, f"its test {name} is {value}"
    if metric == "mse":
        y_train = np.asarray(split.y_train, dtype=np.float64)
        y_test = np.asarray(split.y_test, dtype=np.float64)
        constant = max(float(np.mean((y_test - y_train.mean()) ** 2)), float(np.var(y_train)))
        if value > DIVERGENCE_FACTOR * constant:
            return value, (
                f"its test {name} {value:.3g} is {value / constant:.3g} times that of predicting "
                f"the training mean (limit {DIVERGENCE_FACTOR:g})"
            )
    return value, None


def refusal_line(
    label: str, sid: str, refused: Sequence[tuple[int, str]], lr: Any = None, recorded: int = 0
) -> str:
    """One line for the trials of setting ``sid`` that were not recorded: which, the first one's
    reason (`trial_value`) and what to change: ``train.lr`` when the model has a learning rate
    (``lr``, the run's value), else the model's settings."""
    trials = sorted(refused)
    first, why = trials[0]
    listed = ", ".join(str(t) for t, _ in trials)
    kept = ""
    if recorded:
        kept = " (the other trial was)" if recorded == 1 else f" (the other {recorded} were)"
    if len(trials) == 1:
        head = f"trial {listed} of {label} (setting {sid}) was not recorded{kept}: {why}"
    else:
        head = (
            f"trials {listed} of {label} (setting {sid}) were not recorded{kept}: "
            f"trial {first}: {why}"
        )
    fix = lr_advice(lr, "train.lr") if lr is not None else "check model.* and the data"
    return f"{head}; {fix}"
