"""An estimator that only takes pandas DataFrames, fed by the runner's arrays.

Some estimators index their input with ``.iloc`` or refuse arrays (IGANN, DNAMite). A model config
asks for this adapter with ``_input_: dataframe`` in a class's block
(``pilid.experiments.model_config``): the estimator is wrapped, and every array it is given
becomes a DataFrame with columns ``x0``, ``x1``, ... The wrapped estimator's own code is used as
it is; nothing of it is re-implemented here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone, is_classifier


def _frame(X) -> pd.DataFrame:
    if isinstance(X, pd.DataFrame):
        return X
    X = np.asarray(X, dtype=np.float64)
    # one array per column: pandas then builds a fresh, writable array for ``to_numpy()``
    # (a frame over one 2-D block hands out a read-only view under copy-on-write)
    return pd.DataFrame({f"x{j}": X[:, j].copy() for j in range(X.shape[1])})


class FrameInput(BaseEstimator):
    """``estimator`` fitted and asked on DataFrames (see the module).

    Parameters
    ----------
    estimator : object
        An unfitted estimator with ``fit`` and ``predict`` (and, for a classifier,
        ``predict_proba`` or ``decision_function``) that takes DataFrames.

    Attributes
    ----------
    estimator_ : object
        The fitted copy of ``estimator``.
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def __sklearn_tags__(self):
        """The wrapped estimator's kind (classifier or not)."""
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier" if is_classifier(self.estimator) else None
        return tags

    def fit(self, X, y, **fit_params):
        """Fit a copy of ``estimator`` on ``X`` as a DataFrame."""
        try:
            self.estimator_ = clone(self.estimator)
        except TypeError:  # not clonable (no scikit-learn get_params): use it as given
            self.estimator_ = self.estimator
        self.estimator_.fit(_frame(X), np.asarray(y), **fit_params)
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X):
        """The fitted estimator's predictions for ``X`` as a DataFrame."""
        return np.asarray(self.estimator_.predict(_frame(X)))

    def predict_proba(self, X):
        """Class probabilities (n, 2); a 1-d positive-class probability is completed."""
        proba = np.asarray(self.estimator_.predict_proba(_frame(X)), dtype=np.float64)
        return np.column_stack([1 - proba, proba]) if proba.ndim == 1 else proba
