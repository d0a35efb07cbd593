"""Classification with K > 2 classes (beyond the paper): a softmax over K class logits.

Guo et al., IJCAI 2020 treat binary classification only (Eq. 9's U(y) is one logit). With K > 2
classes a neural estimator (PiLiD, PiLiB, NIT, MLP) trains K **class members**: copies of itself
whose raw output (Eq. 9: intercept + additive part + deep part) is the logit z_k of class
`classes_[k]`. The model is

    P(y = k | x) = softmax(z_1(x), ..., z_K(x))_k,

trained on the cross-entropy of the softmax (`pilid.train.losses.task_loss` with ``classes=K``).

* The K members train as one softmax group of trials of the batched ensemble
  (`pilid.models.fitting.fit_batched`): the same rows, the same seed (hence the same
  mini-batches), and the group's cross-entropy as every member's validation loss, so they stop
  early together. Each has its own additive part (one shape u_jk per feature and class), its
  own deep part (PiLiB / NIT: its own gated blocks, so the interactions are found per class,
  which EBM does not offer).
* Algorithm 1's least-squares start, per class: the labels coded +1 for class k and -1 for the
  others (one-vs-rest), as the binary start codes them.
* With ``n_bags`` = B > 1 every class member is a bag (`pilid.models.bagging`); bag member b of
  every class trains on the same bootstrap rows with the same seed, and the K members of bag b
  form one softmax group. A class's logit is its bag's mean logit.
* Softmax logits are identified up to a common function of x; every class's contributions are
  centred on the training rows (as in the binary case) and shown as learned.

`class_members` and `collect_classes` are the hooks `NeuralEstimator._members` / `_collect`
use (`pilid.models.inputs.class_target` codes the labels); `softmax` gives the probabilities.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from scipy.special import softmax as _softmax
from sklearn.base import clone

from pilid.models.bagging import gather_members, take_inputs

__all__ = ["class_members", "collect_classes", "is_multiclass", "softmax"]


def is_multiclass(estimator) -> bool:
    """Whether the estimator was fitted (or is being fitted) on K > 2 classes."""
    classes = getattr(estimator, "classes_", None)
    return classes is not None and len(classes) > 2


def softmax(z) -> np.ndarray:
    """Row-wise softmax of logits (n, K): the class probabilities."""
    return _softmax(np.asarray(z, dtype=np.float64), axis=1)


def class_members(est, prep) -> list[tuple]:
    """The units that train for a K-class estimator (`Trainable._members`): per bag member b
    (or the single model) the K class members, in the order (b, k), so that every K consecutive
    units form one softmax group. Each class member is an unfitted clone carrying the
    estimator's prepared attributes, ``_class_index`` k and ``_softmax_classes`` K; its data is
    the estimator's with ``class_index=k``."""
    K = len(est.classes_)
    params = est.get_params(deep=False)
    shared = {k: v for k, v in vars(est).items() if k not in params}
    members, per_class = [], []
    for k in range(K):
        member = clone(est)
        member.__dict__.update(shared)
        member._class_index = k
        member._softmax_classes = K
        members.append(member)
        per_class.append(member._members(dataclasses.replace(prep, class_index=k)))
    est._classes = (prep, members)
    n_units = len(per_class[0])
    return [per_class[k][b] for b in range(n_units) for k in range(K)]


def collect_classes(est) -> None:
    """Fitted attributes of a K-class estimator once its class members are fitted:
    ``class_estimators_`` (member k: the logit of ``classes_[k]``), ``intercept_`` (K,), the
    shared scaling and knots, ``history_`` (one per class), ``n_epochs_`` / ``best_epoch_``
    (the largest). A class member whose training diverged makes the estimator's ``diverged_``
    (no model kept)."""
    prep, members = est.__dict__.pop("_classes")
    for member in members:
        member._collect()  # a class member that is a bag gathers its own members first
    if not gather_members(est, members, lambda k: f"class {est.classes_[k]!r}"):
        return
    est.class_estimators_ = members
    take_inputs(est, prep)
    est.intercept_ = np.array([float(m.intercept_) for m in members])
    est.module_ = None  # each class member has its own


def class_table(est, tables: list[pd.DataFrame]) -> pd.DataFrame:
    """One table from the class members' tables (same columns), a first column ``class``."""
    parts = []
    for label, table in zip(est.classes_, tables):
        part = table.copy()
        part.insert(0, "class", label)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
