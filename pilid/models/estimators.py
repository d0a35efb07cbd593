"""Index of the neural estimators, under the name `conf/model/mlp.yaml` gives.

New code imports from the family modules: `pilid.models.pilid` (PiLiD and the MLP baseline),
`pilid.models.pilib` (PiLiB), `pilid.models.nit` (NIT); their shared base is
`pilid.models.neural` and their training `pilid.train.fit_batched`.
"""

from __future__ import annotations

from pilid.models.nit import NITClassifier, NITRegressor
from pilid.models.pilib import PiLiBClassifier, PiLiBRegressor
from pilid.models.pilid import MLPClassifier, MLPRegressor, PiLiDClassifier, PiLiDRegressor

__all__ = [
    "MLPClassifier",
    "MLPRegressor",
    "NITClassifier",
    "NITRegressor",
    "PiLiBClassifier",
    "PiLiBRegressor",
    "PiLiDClassifier",
    "PiLiDRegressor",
]
