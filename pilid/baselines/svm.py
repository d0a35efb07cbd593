"""The SVM baseline's classifier: scikit-learn's `SVC` with a `predict_proba` from its margin.

The SVM regressor is scikit-learn's `SVR` itself (`conf/model/svm.yaml` names both, with the
settings of `conf/model/svm.yaml`).
"""

from __future__ import annotations

import numpy as np
from sklearn.svm import SVC

from pilid.errors import PilidError
from pilid.models.outputs import proba_from_logit

__all__ = ["SVMClassifier"]


class SVMClassifier(SVC):
    """scikit-learn's `SVC` (RBF kernel by default) with `predict_proba` = sigmoid(margin).

    The contract asks every classifier for `predict_proba`; scikit-learn 1.9 deprecates SVC's
    Platt scaling (an internal 5-fold cross-validation: five extra fits). This score is the
    logistic function of `decision_function`, a monotone map of the margin, NOT a calibrated
    probability: it gives the SVM's AUC exactly, nothing more.
    """

    def predict_proba(self, X) -> np.ndarray:
        """[1 - p, p] with p = sigmoid(margin): a monotone score, not a calibrated probability."""
        margin = self.decision_function(X)
        if margin.ndim != 1:
            raise PilidError(
                f"SVMClassifier.predict_proba needs a binary problem; this one has "
                f"{len(self.classes_)} classes: use decision_function"
            )
        return proba_from_logit(margin)
