"""Scoring: a trained trial's test metric, and the ``mean ± std`` summary of a setting's trials."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pilid.errors import PilidError
from pilid.experiments.store import ResultStore
from pilid.tasks import metric_label


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
    """Test-split metric (``pilid.models.registry.score``): MSE in the split's target units, or
    ROC AUC of the positive-class score."""
    from pilid.models.registry import predict_scores
    from pilid.models.registry import score as metric_value

    return metric_value(metric, split.y_test, predict_scores(estimator, split.X_test, task))
