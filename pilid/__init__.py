"""pilid: interpretable piecewise-linear + deep models (PiLiD, PiLiB; Guo et al., IJCAI 2020).

The estimators are imported lazily so that `import pilid` stays cheap for the command line.
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "PiLiDRegressor": "pilid.models.estimators",
    "PiLiDClassifier": "pilid.models.estimators",
    "MLPRegressor": "pilid.models.estimators",
    "MLPClassifier": "pilid.models.estimators",
    "PiLiBRegressor": "pilid.models.pilib",
    "PiLiBClassifier": "pilid.models.pilib",
    "NITRegressor": "pilid.models.nit",
    "NITClassifier": "pilid.models.nit",
    "load_dataset": "pilid.data",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pilid' has no attribute {name!r}")
