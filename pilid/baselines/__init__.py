"""pilid.baselines: the harness's baselines (layer 7 of CONTRIBUTING.md, "Layers").

The comparison models of the paper's Section 4 that are not PiLiD's family, one module each,
named by the model configs (`conf/model/{svm,gam,ga2m,ga,ebm,nit}.yaml`):

- SVM, random forest and linear/logistic regression are scikit-learn's own estimators; the SVM
  classifier gains a `predict_proba` (`pilid.baselines.svm.SVMClassifier`).
- GAM (Hastie & Tibshirani 1986) over pygam: `pilid.baselines.gam`.
- GA2M (Lou et al. 2013) over InterpretML's EBM: `pilid.baselines.ga2m`.
- GA, global additive explanation by distillation (Tan et al. 2018): `pilid.baselines.ga` (its
  teacher is the MLP of `pilid.estimators.pilid`).
- NIT (Tsang et al. 2018), PiLiB's comparison of Section 3.3: `pilid.baselines.nit`, on the
  gated blocks of `pilid.estimators.gated`.

The classes (and `categorical_mask`, the check of their ``categorical_features``) are also names
of this package (``from pilid.baselines import GAMRegressor``), resolved on first use: importing
one module of the package loads no other (nor pygam, InterpretML or torch).
"""

from __future__ import annotations

_LAZY = {
    "SVMClassifier": "pilid.baselines.svm",
    "GAMRegressor": "pilid.baselines.gam",
    "GAMClassifier": "pilid.baselines.gam",
    "GA2MRegressor": "pilid.baselines.ga2m",
    "GA2MClassifier": "pilid.baselines.ga2m",
    "GARegressor": "pilid.baselines.ga",
    "GAClassifier": "pilid.baselines.ga",
    "NITRegressor": "pilid.baselines.nit",
    "NITClassifier": "pilid.baselines.nit",
    "categorical_mask": "pilid.models.inputs",
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pilid.baselines' has no attribute {name!r}")
