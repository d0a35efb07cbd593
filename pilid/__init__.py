"""pilid: interpretable piecewise-linear + deep models (PiLiD, PiLiB; Guo et al., IJCAI 2020).

The public names are resolved lazily (`_LAZY`, on first use) so that `import pilid` stays cheap
for the command line: this module imports nothing from pilid, so every layer may import it (for
`__version__`). The layers and what each may import: CONTRIBUTING.md, "Layers".
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "PiLiDRegressor": "pilid.estimators.pilid",
    "PiLiDClassifier": "pilid.estimators.pilid",
    "PiLiDRegressorCV": "pilid.estimators.pilid_cv",
    "PiLiDClassifierCV": "pilid.estimators.pilid_cv",
    "MLPRegressor": "pilid.estimators.pilid",
    "MLPClassifier": "pilid.estimators.pilid",
    "PiLiBRegressor": "pilid.estimators.pilib",
    "PiLiBClassifier": "pilid.estimators.pilib",
    "NITRegressor": "pilid.baselines.nit",
    "NITClassifier": "pilid.baselines.nit",
    "load_dataset": "pilid.data",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pilid' has no attribute {name!r}")
