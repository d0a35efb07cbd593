"""The two learning tasks of the paper (Section 4): regression (MSE) and binary classification
(AUC). Every layer that branches on the task reads this tuple."""

from __future__ import annotations

TASKS = ("regression", "classification")
