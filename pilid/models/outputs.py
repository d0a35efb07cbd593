"""Outputs of a binary classifier whose `decision_function` is a logit (or a margin).

Shared by the neural estimators and the baselines: `predict_proba` is [1 - p, p] with
p = sigmoid(logit) of `classes_[1]`, overflow-free (`scipy.special.expit`); `predict` is the
class whose probability is larger.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin


def proba_from_logit(z) -> np.ndarray:
    """[1 - p, p] with p = sigmoid(z): the class probabilities of a binary logit, (n, 2)."""
    p = expit(np.asarray(z, dtype=np.float64))
    return np.column_stack([1.0 - p, p])


class LogitClassifierMixin(ClassifierMixin):
    """Binary classifier whose `decision_function` is the logit: probabilities and labels."""

    def __sklearn_tags__(self):
        """scikit-learn's tags: binary only."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def predict_proba(self, X) -> np.ndarray:
        """[P(classes_[0]), P(classes_[1])]: the logistic function of the logit."""
        return proba_from_logit(self.decision_function(X))

    def predict(self, X) -> np.ndarray:
        """The class whose logit side ``X`` falls on (`classes_[1]` where the logit > 0)."""
        positive = np.asarray(self.decision_function(X)) > 0
        return self.classes_[positive.astype(np.int64)]
