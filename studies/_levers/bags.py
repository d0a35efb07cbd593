"""The levers of a bag (`pilid.models.bagging`) and of the choice among candidates
(`pilid.models.shape_choice`): ``bag_validation="own"`` and ``choice_members``.

* ``bag_validation="own"``: member b first holds out its own rows for early stopping
  (`member_holdout`: ``val_fraction`` of all the fit rows, `fit_rows`, drawn from its seed as
  `pilid.train.validation.holdout_split` draws a single model's) and draws its bootstrap sample
  from the rest (`bag_members`), as each of EBM's outer bags holds out its own validation rows:
  no row is left out of every member's training. A choice among candidates (``pairs="auto"``,
  ``smoothness="auto"``) then reads every fit row out of some members' bags (`out_of_bag`,
  `validation_loss`) instead of the shared held-out rows, which no longer exist; with K > 2
  classes too (their candidates' class members are bags).
* ``choice_members = k``: each candidate's bag trains its first k members, they choose, and
  only the chosen candidate trains its other members: the library's choice of
  ``deep_input="auto"`` (`pilid.models.shape_choice.split_first_members`, `collect` twice) at
  k for any choice among candidates.

Each is the library's computation with the lever's change and nothing else.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from sklearn.base import clone

from pilid.models import shape_choice
from pilid.models.bagging import bag_rows, member_seed
from pilid.models.sample_weight import check_weighted_rows
from pilid.train import Prepared
from pilid.train.batched import sample_rows
from pilid.train.validation import holdout_split

__all__ = [
    "bag_members",
    "collect",
    "fit_rows",
    "member_holdout",
    "out_of_bag",
    "owns_validation",
    "split_first_members",
    "validation_loss",
]


def owns_validation(est) -> bool:
    """Does each member of `est`'s bag hold out its own early-stopping rows?"""
    return getattr(est, "bag_validation", "shared") == "own"


def fit_rows(prep: Prepared) -> np.ndarray:
    """Every row that trains or validates (sorted): the rows a bag's members draw from."""
    return np.union1d(prep.train_idx, prep.val_idx).astype(np.int64)


def member_holdout(est, prep: Prepared, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The member of seed `seed`'s own split of the fit rows (`fit_rows`) into rows to draw
    its bootstrap from and rows held out for its early stopping, as `holdout_split` splits for
    a single model (``val_fraction`` of the rows, stratified by class), from the member's seed;
    without early-stopping rows, the bag's own split."""
    if len(prep.val_idx) == 0:
        return prep.train_idx, prep.val_idx
    rows = fit_rows(prep)
    stratified = est._task == "classification"
    train, val = holdout_split(prep.target[rows], seed, est.val_fraction, stratified)
    return rows[train], rows[val]


def bag_members(est, prep: Prepared, n_bags: int) -> list[tuple]:
    """`pilid.models.bagging.bag_members` with each member's own early-stopping rows
    (`member_holdout`): the k members (unfitted clones with ``n_bags=1`` carrying the bag's
    prepared attributes) and their data, the bag's with their bootstrap rows, their
    early-stopping rows and their own seed."""
    params = est.get_params(deep=False)
    shared = {k: v for k, v in vars(est).items() if k not in params}
    units = []
    for b in range(int(n_bags)):
        train, val = member_holdout(est, prep, member_seed(prep.seed, b))
        weights = prep.train_weight
        if train is not prep.train_idx:  # its own rows: their weights, checked as a fit's
            weights = None if prep.weight is None else prep.weight[train]
            check_weighted_rows(est, prep.weight, prep.target, train, val)
        seed, rows = bag_rows(prep.seed, b, train, weights)
        member = clone(est).set_params(n_bags=1, random_state=seed)
        member.__dict__.update(shared)
        member.seed_ = seed
        member.bag_rows_ = rows
        member.bag_val_rows_ = val
        # drawn by weight, the rows train with unit weight (`weight` stays for the statistics)
        data = dataclasses.replace(prep, train_idx=rows, val_idx=val, seed=seed, train_weight=None)
        units.append((member, data))
    est._bag = (prep, [m for m, _ in units])
    return units


# -- the choice among candidates ------------------------------------------------------------------
def _bag_outputs(est):
    """The members of `est`'s bag: (their training rows, b -> member b's raw output of rows X),
    or None for a single model. K > 2 classes: member b's K class logits (n, K)."""
    if est._multiclass():
        bags = est.class_estimators_
        if not bags[0]._bagged():
            return None
        return bags[0].bag_rows_, lambda b, X: np.column_stack(
            [bag.estimators_[b]._raw(X) for bag in bags]
        )
    members = getattr(est, "estimators_", None)
    if not members:
        return None
    return est.bag_rows_, lambda b, X: members[b]._raw(X)


def out_of_bag(est, prep) -> tuple[np.ndarray, np.ndarray]:
    """A bag's out-of-bag predictions of the fit rows (`fit_rows`): for each, the mean raw
    output of the members whose bootstrap sample missed it. Returns (rows, raw) for the rows
    some member missed; none for a single model."""
    bag = _bag_outputs(est)
    if bag is None:
        return np.arange(0), np.zeros(0)
    train = sample_rows(fit_rows(prep), prep.seed)
    width = (len(train), len(est.classes_)) if est._multiclass() else len(train)
    return shape_choice.out_of_bag_mean(*bag, prep.X, train, width)


def validation_loss(est, prep) -> float:
    """The fitted candidate `est`'s loss on rows it did not train on: with
    ``bag_validation="own"`` every fit row out of some members' bags (`out_of_bag`; a single
    model: the rows held out for early stopping), else the library's
    (`pilid.models.shape_choice.validation_loss`)."""
    if not owns_validation(est) or getattr(est, "diverged_", None):
        return shape_choice.validation_loss(est, prep)
    if _bag_outputs(est) is None:  # one model: its rows held out, as the library reads them
        return shape_choice.validation_loss(est, prep)
    rows, raw = out_of_bag(est, prep)
    loss = shape_choice._row_loss(est, raw, prep.target[rows])
    weight = None if prep.weight is None else prep.weight[rows]
    return float(np.average(loss, weights=weight))


def split_first_members(est, units: list) -> list:
    """`pilid.models.shape_choice.split_first_members` at ``choice_members``: each
    candidate's first members train before the choice, the chosen one's others after it."""
    return shape_choice.split_first_members(est, units, getattr(est, "choice_members", None))


def collect(est) -> None:
    """`pilid.models.shape_choice.collect` with the choice's loss of the levers
    (`validation_loss`), in its two steps after a choice on the first members."""
    shape_choice.collect(est, validation_loss)
