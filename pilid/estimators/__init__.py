"""pilid.estimators: the paper's estimators (layer 6 of CONTRIBUTING.md, "Layers").

One module per family, each a scikit-learn estimator that trains through
`pilid.models.fitting.fit_batched`:

- `pilid`: PiLiD (Section 3, Algorithm 1) and the MLP baseline (Eq. 6-8);
- `pilid_cv`: PiLiD with gamma (Definition 1), lambda (Eq. 11) and the network chosen by inner
  cross-validation;
- `pilib`: PiLiB (Section 3.3).

Their shared bases: `neural` (`NeuralEstimator`: hyper-parameters, data, outputs) and `gated`
(`BlockModel`: the gated blocks and Algorithm 2's phases of PiLiB, and of NIT in
`pilid.baselines.nit`). What they are built of lives in `pilid.models` (checks of X, y and the
hyper-parameters, bags, classes, monotone constraints, sample weights, the choice of shapes and
pairs); how a fitted one is read (shapes, displays, explanations, pair effects) in
`pilid.inspection`.

The classes are also names of this package (``from pilid.estimators import PiLiDRegressor``),
resolved on first use: importing one module of the package loads no other.
"""

from __future__ import annotations

_LAZY = {
    "PiLiDRegressor": "pilid.estimators.pilid",
    "PiLiDClassifier": "pilid.estimators.pilid",
    "MLPRegressor": "pilid.estimators.pilid",
    "MLPClassifier": "pilid.estimators.pilid",
    "PiLiDRegressorCV": "pilid.estimators.pilid_cv",
    "PiLiDClassifierCV": "pilid.estimators.pilid_cv",
    "PiLiBRegressor": "pilid.estimators.pilib",
    "PiLiBClassifier": "pilid.estimators.pilib",
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pilid.estimators' has no attribute {name!r}")
