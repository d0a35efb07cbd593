"""The two learning tasks of the paper (Section 4): regression (MSE) and binary classification
(AUC), and their metrics. Every layer that branches on the task or names a metric reads these."""

from __future__ import annotations

TASKS = ("regression", "classification")

#: The metric of each task (Section 4: MSE for regression, AUC for classification).
TASK_METRIC = {"regression": "mse", "classification": "auc"}

#: How a metric is written in a summary line, a table or a figure.
METRIC_LABELS = {"mse": "MSE", "auc": "AUC"}

#: Whether a smaller value of the metric is better (MSE) or a larger one (AUC).
LOWER_IS_BETTER = {"mse": True, "auc": False}


def metric_label(metric) -> str:
    """``MSE``/``AUC``; another metric name in capitals."""
    return METRIC_LABELS.get(metric, str(metric).upper())
