"""Outputs of a binary classifier whose `decision_function` is a logit (or a margin).

Shared by the neural estimators and the baselines: `predict_proba` is [1 - p, p] with
p = sigmoid(logit) of `classes_[1]`, overflow-free (`scipy.special.expit`); `predict` is the
class whose probability is larger. A `decision_function` of shape (n, K) (the neural
estimators on K > 2 classes, `pilid.models.multiclass`) gives the softmax and the argmax.

`RegressorOutput` and `ClassifierOutput` are the neural estimators' outputs (their fitted
description's, `pilid.nn.fitted.FittedEnsemble.output`, of validated X, ``_check_fitted_X``): a
regressor's in the target's units, a classifier's logit.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin, RegressorMixin


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
        """[P(classes_[0]), P(classes_[1])]: the logistic function of the logit; the softmax
        of the K logits when `decision_function` gives one per class (n, K)."""
        z = np.asarray(self.decision_function(X))
        if z.ndim == 2:
            return softmax(z, axis=1)
        return proba_from_logit(z)

    def predict(self, X) -> np.ndarray:
        """The class whose logit side ``X`` falls on (`classes_[1]` where the logit > 0); with
        K class logits, the class of the largest."""
        z = np.asarray(self.decision_function(X))
        if z.ndim == 2:
            return self.classes_[np.argmax(z, axis=1)]
        return self.classes_[(z > 0).astype(np.int64)]


class RegressorOutput(RegressorMixin):
    """The regression output of a neural estimator: `predict` in the target's units."""

    _task = "regression"

    def predict(self, X) -> np.ndarray:
        """Predicted targets in the original units. A DataFrame is read by column name, in any
        order (a column of fit that it lacks is refused, naming it), an array by position
        (`pilid.models.inputs`)."""
        X = self._check_fitted_X(X)
        return self._description().output(X)


class ClassifierOutput(LogitClassifierMixin):
    """The binary output of a neural estimator: the logit, probabilities, labels."""

    _task = "classification"

    def decision_function(self, X) -> np.ndarray:
        """Logit of the positive class `classes_[1]`, (n,); K > 2 classes: the K class logits,
        (n, K) (`pilid.models.multiclass`). A DataFrame is read by column name, in any order,
        an array by position (`pilid.models.inputs`)."""
        X = self._check_fitted_X(X)
        return self._description().output(X)

    def __sklearn_tags__(self):
        """scikit-learn's tags: two or more classes (K > 2: a softmax of K class logits)."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags
