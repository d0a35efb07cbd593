"""Index of the baselines of the paper's Section 4 that are not neural networks of our own.

Each lives in its own module; this one re-exports them under the name the model configs
(`conf/model/{svm,gam,ga2m,ga}.yaml`) give:

- SVM, random forest and linear/logistic regression are scikit-learn's own estimators; the SVM
  classifier gains a `predict_proba` (`pilid.models.svm.SVMClassifier`).
- GAM (Hastie & Tibshirani 1986) over pygam: `pilid.models.gam`.
- GA2M (Lou et al. 2013) over InterpretML's EBM: `pilid.models.ga2m`.
- GA, global additive explanation by distillation (Tan et al. 2018): `pilid.models.ga`.
"""

from __future__ import annotations

from pilid.models.ga import GAClassifier, GARegressor
from pilid.models.ga2m import GA2MClassifier, GA2MRegressor
from pilid.models.gam import GAMClassifier, GAMRegressor
from pilid.models.inputs import categorical_mask
from pilid.models.svm import SVMClassifier

__all__ = [
    "SVMClassifier",
    "GAMRegressor",
    "GAMClassifier",
    "GA2MRegressor",
    "GA2MClassifier",
    "GARegressor",
    "GAClassifier",
    "categorical_mask",
]
