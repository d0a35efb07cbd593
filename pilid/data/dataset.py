"""The two data containers every experiment passes along: a whole dataset and one trial's split."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.tasks import TASK_METRIC, TASKS


@dataclass
class Dataset:
    """A whole dataset after the documented preprocessing, before any split.

    ``X`` holds one column per raw feature (categorical columns have pandas ``category`` dtype,
    the others float64), NaN where a table loaded with ``missing="keep"`` has a missing value
    (`pilid.data.table`; `pilid.data.split.make_split` keeps it); ``y`` is float64 for
    regression and int64 0/1 for classification (0..K-1 for K > 2 classes, scored by
    one-vs-rest AUC), never missing.
    ``feature_names`` defaults to ``X``'s columns and ``categorical`` to its ``category``
    columns. ``info`` carries provenance (file, sha256, rows removed per rule) and flags such as
    ``scale_features`` (False: ``make_split`` leaves the numeric columns unscaled).
    """

    name: str
    task: str
    metric: str
    X: pd.DataFrame
    y: np.ndarray
    feature_names: list[str] | None = None
    categorical: list[str] | None = None
    true_shapes: Any = None
    standardize_target: bool = False
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check the task, metric, X and y; code a classification target 0/1 (or 0..K-1)."""
        if self.task not in TASKS:
            raise PilidError(f"task={self.task!r} is invalid; use 'regression' or 'classification'")
        if self.metric not in TASK_METRIC.values():
            raise PilidError(f"metric={self.metric!r} is invalid; use 'mse' or 'auc'")
        if not isinstance(self.X, pd.DataFrame):
            raise PilidError("Dataset.X must be a pandas DataFrame; wrap the array in pd.DataFrame")
        y = np.asarray(self.y)
        if y.ndim != 1 or len(y) != len(self.X):
            raise PilidError(
                f"Dataset.y has shape {y.shape} but X has {len(self.X)} rows; pass one target "
                "per row"
            )
        if self.task == "classification":
            values = np.unique(y)
            if not np.isin(values, np.arange(max(2, len(values)))).all():
                raise PilidError(
                    f"classification target of {self.name!r} has values {values[:5].tolist()}; "
                    "encode the classes as 0/1 (K > 2 classes: 0..K-1)"
                )
            y = y.astype(np.int64)
        else:
            y = y.astype(np.float64)
        self.y = y
        if self.feature_names is None:
            self.feature_names = [str(c) for c in self.X.columns]
        if self.categorical is None:
            self.categorical = [
                str(c) for c in self.X.columns if isinstance(self.X[c].dtype, pd.CategoricalDtype)
            ]
        unknown = [c for c in self.categorical if c not in self.X.columns]
        if unknown:
            raise PilidError(
                f"categorical column(s) {unknown} are not columns of X; list names of X's columns"
            )

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return len(self.X)

    @property
    def n_features(self) -> int:
        """Raw features (before one-hot encoding)."""
        return self.X.shape[1]


@dataclass
class Split:
    """One trial's 80/20 split, encoded and scaled with training statistics only.

    ``original = x * x_scale + x_offset`` per encoded column (one-hot columns: offset 0,
    scale 1); a regression target in original units is ``y * y_scale + y_offset``.
    ``train_index``/``test_index`` are the rows of ``Dataset.X`` (in split order).
    """

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    feature_names: list[str]
    categorical: np.ndarray
    x_offset: np.ndarray
    x_scale: np.ndarray
    y_offset: float = 0.0
    y_scale: float = 1.0
    seed: int = 0
    task: str | None = None
    train_index: np.ndarray | None = None
    test_index: np.ndarray | None = None

    def original_X(self, X: np.ndarray) -> np.ndarray:
        """Encoded, scaled ``X`` back in the dataset's units (one-hot columns unchanged)."""
        return np.asarray(X, dtype=np.float64) * self.x_scale + self.x_offset

    def original_y(self, y: np.ndarray) -> np.ndarray:
        """A (standardised) regression target or prediction back in the dataset's units."""
        return np.asarray(y, dtype=np.float64) * self.y_scale + self.y_offset
