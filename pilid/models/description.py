"""A fitted estimator's `pilid.nn.fitted.FittedEnsemble`: its one description, built at fit.

`describe` gathers what fit left (the members' T=1 modules and centring, the bag's one forward,
the scaling, the characteristic points, the columns) into the description that prediction, the
explanations, the shapes and the exports read. An estimator keeps it as ``fitted_``
(`pilid.models.fitting`); a pickle of a release before it had one gets it built on load
(`NeuralEstimator.__setstate__`).
"""

from __future__ import annotations

import numpy as np
import torch

from pilid.nn.bag import bag_forward
from pilid.nn.fitted import Columns, FittedEnsemble, Head, InputEncoding
from pilid.train.version import ENGINE_VERSION

__all__ = ["columns_of", "describe", "encoding_of"]


def columns_of(est) -> Columns:
    """What `est`'s fit columns are (`pilid.nn.fitted.Columns`)."""
    missing = getattr(est, "missing_", None)
    monotone = getattr(est, "monotone_constraints_", None)
    return Columns(
        names=tuple(est._feature_names()),
        levels=dict(getattr(est, "categories_", None) or {}),
        infrequent=dict(getattr(est, "infrequent_categories_", None) or {}),
        missing=None if missing is None else np.asarray(missing, dtype=bool),
        monotone=None if monotone is None else np.asarray(monotone),
    )


def _dtype(module) -> torch.dtype:
    return next(iter(module.parameters())).dtype


def encoding_of(est, module=None, columns: Columns | None = None) -> InputEncoding:
    """`est`'s input encoding (its scaling, deep-part coding and knots), in the dtype of
    `module` (default: its own ``module_``), for its `columns` (default: `columns_of`)."""
    module = est.module_ if module is None else module
    return InputEncoding(
        est.x_mean_,
        est.x_scale_,
        columns_of(est) if columns is None else columns,
        est.knots_,
        getattr(est, "deep_onehot_", None),
        getattr(est, "deep_bins_", None),
        dtype=_dtype(module),
    )


def _head(est, unit) -> Head:
    """The output that `unit` (`est` itself, or one of its K class members) fits."""
    bagged = getattr(unit, "estimators_", None) is not None
    members = unit.estimators_ if bagged else [unit]
    modules = [m.module_ for m in members]
    offsets = [getattr(m, "contribution_offset_", None) for m in members]
    return Head(
        modules,
        bag_forward(modules) if bagged else None,
        est.y_offset_,
        est.y_scale_,
        intercept=float(unit.intercept_),
        member_scales=[float(m.y_scale_) for m in members],
        offsets=None if any(o is None for o in offsets) else offsets,
    )


def first_module(est):
    """A T=1 module of `est`: its own, its first bag member's or first class member's."""
    unit = est.class_estimators_[0] if getattr(est, "class_estimators_", None) else est
    if getattr(unit, "estimators_", None) is not None:
        unit = unit.estimators_[0]
    return unit.module_


def describe(est, engine: str | None = ENGINE_VERSION) -> FittedEnsemble:
    """The `FittedEnsemble` of fitted `est` (a single model, a bag, K class members), fitted by
    engine version `engine` (None: not known, a model pickled before the description)."""
    units = est.class_estimators_ if getattr(est, "class_estimators_", None) else [est]
    columns = columns_of(est)
    return FittedEnsemble(
        encoding_of(est, first_module(est), columns),
        [_head(est, unit) for unit in units],
        task=est._task,
        classes=getattr(est, "classes_", None) if est._task == "classification" else None,
        columns=columns,
        knots=est.knots_,
        engine=engine,
    )
