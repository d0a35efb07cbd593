"""Bagged neural estimators (beyond the paper): `n_bags` members, one ensemble.

With ``n_bags = k > 1`` a PiLiD (Section 3 of Guo et al., IJCAI 2020) or MLP estimator trains k
members as trials of ONE batched ensemble (`pilid.models.fitting.fit_batched`,
`Trainable._members`):

* Every member shares the estimator's prepared data (`Trainable._prepare`): the encoding, the
  scaling, the characteristic points of Definition 1 (so every member's u_j lives on the same
  points) and the rows held out for early stopping.
* Member b trains on a **bootstrap** sample of the training rows (the rows not held out): as
  many rows as there are, drawn with replacement. Its seed (mini-batches, initial weights) and
  its rows come from the stream `pilid.streams.STREAM_BAG` of the estimator's seed and b alone
  (`member_rng`), so member b is the same in a bag of any size and a bag is reproducible with
  `random_state`. Each member stops early on its own (on the shared validation rows) and, with
  ``purify=True``, is purified on its own training rows (predictions unchanged member by
  member, hence also on average).
* The bag's output is the **mean of the members' raw outputs**: the mean prediction for
  regression, the mean logit for classification (`predict_proba` is the logistic function of the
  mean logit, not the mean of the members' probabilities). Averaging the raw output keeps Eq. 9
  exact for the bag: ``intercept_ + contributions.sum(1) + deep part`` with each term the mean of
  the members' terms, so the bag is again an additive model plus a deep part and its shapes are
  the members' mean shapes.
* Uncertainty bands (`bag_shapes`): at every characteristic point the members' spread, ``std``
  (population standard deviation over the k members, ``np.std``, ddof=0) and ``lower`` /
  ``upper`` (the 2.5th and 97.5th percentiles over the members, ``np.percentile``'s linear
  interpolation). For k <= 40 they always contain the mean.

``n_bags = 1`` is the single model, untouched (no bootstrap, no extra columns).

With sample weights (``fit(X, y, sample_weight=w)``) member b draws its bootstrap rows with
probabilities proportional to the training rows' weights (as many draws as there are training
rows; a row of weight 0 is never drawn) and then trains on them with unit weight: the weights
act through the draw, as repeated rows would. The shared statistics (scaling, knots, the
centring of the contributions) and the validation loss stay weighted. Without weights the draws
are those above, unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from sklearn.base import clone

from pilid.streams import STREAM_BAG, member_rng
from pilid.train import Prepared

__all__ = [
    "BAND_PERCENTILES",
    "bag_members",
    "bag_rows",
    "bag_shapes",
    "collect_bag",
    "gather_members",
    "member_seed",
    "take_inputs",
]

#: The percentiles over members drawn as a shape's band (`lower`, `upper`).
BAND_PERCENTILES = (2.5, 97.5)


def member_seed(seed: int, member: int) -> int:
    """Member `member`'s seed: the first draw of stream `STREAM_BAG` of the estimator's seed."""
    return int(member_rng(seed, STREAM_BAG, member).integers(0, 2**31 - 1))


def bag_rows(
    seed: int, member: int, train_idx: np.ndarray, weights: np.ndarray | None = None
) -> tuple[int, np.ndarray]:
    """Member `member`'s seed (`member_seed`) and bootstrap rows (sorted indices into the fit
    rows), drawn next from the same stream: ``len(train_idx)`` draws with replacement,
    uniform, or with `weights` (one per entry of `train_idx`) proportional to them."""
    rng = member_rng(seed, STREAM_BAG, member)
    member_seed = int(rng.integers(0, 2**31 - 1))
    n = len(train_idx)
    if weights is None:
        picks = np.sort(rng.integers(0, n, size=n))
    else:
        w = np.asarray(weights, dtype=np.float64)
        picks = np.sort(rng.choice(n, size=n, replace=True, p=w / w.sum()))
    return member_seed, np.asarray(train_idx)[picks]


def bag_members(est, prep: Prepared, n_bags: int) -> list[tuple]:
    """The k members of a bag (each an unfitted clone with ``n_bags=1`` carrying the bag's
    prepared attributes) and their data: the bag's, with bootstrap rows and their own seed."""
    params = est.get_params(deep=False)
    shared = {k: v for k, v in vars(est).items() if k not in params}
    units = []
    for b in range(int(n_bags)):
        seed, rows = bag_rows(prep.seed, b, prep.train_idx, prep.train_weight)
        member = clone(est).set_params(n_bags=1, random_state=seed)
        member.__dict__.update(shared)
        member.seed_ = seed
        member.bag_rows_ = rows
        member.bag_val_rows_ = prep.val_idx
        # drawn by weight, the rows train with unit weight (`weight` stays for the statistics)
        data = dataclasses.replace(prep, train_idx=rows, seed=seed, train_weight=None)
        units.append((member, data))
    est._bag = (prep, [m for m, _ in units])
    return units


def collect_bag(est) -> None:
    """Fitted attributes of a bag once its members are fitted (`Trainable._collect`):
    ``estimators_`` (the members), ``bag_rows_`` (k, n_train), ``bag_val_rows_`` (k, n_val: each
    member's early-stopping rows), ``intercept_`` (the mean), the shared scaling and knots, and
    the members' epochs (``n_epochs_`` / ``best_epoch_``: the largest over members;
    ``history_``: one history per member). A member whose training diverged (its
    ``diverged_``) makes the bag's: it keeps no model, ``diverged_`` names the member."""
    prep, members = est.__dict__.pop("_bag")
    if not gather_members(est, members, lambda b: f"bag member {b} of {len(members)}"):
        return
    est.estimators_ = members
    est.bag_rows_ = np.stack([m.bag_rows_ for m in members])
    est.bag_val_rows_ = np.stack([m.bag_val_rows_ for m in members])
    take_inputs(est, prep)
    est.intercept_ = float(np.mean([m.intercept_ for m in members]))
    est.module_ = None  # the bag has no single module; its members have theirs


def take_inputs(est, prep: Prepared) -> None:
    """The fitted attributes that say how `prep`'s inputs are read (shared by a single model,
    a bag and K class members): ``x_mean_``/``x_scale_``, ``deep_onehot_`` and ``deep_bins_``
    (the deep input, `pilid.train.encoding.deep_input`), ``knots_`` (Phi) and
    ``n_features_in_``."""
    est.x_mean_ = prep.x_mean
    est.x_scale_ = prep.x_scale
    est.deep_onehot_ = prep.onehot
    est.deep_bins_ = prep.bins
    est.knots_ = prep.knots
    est.n_features_in_ = prep.X.shape[1]


def gather_members(est, members: list, name) -> bool:
    """What an estimator made of members (a bag's, or K classes', `pilid.models.multiclass`)
    takes from them once they are fitted: ``history_`` (one per member), ``n_epochs_`` /
    ``best_epoch_`` (the largest), ``device_`` and ``diverged_``: the first diverged member's
    reason, prefixed by ``name(index)`` (then it keeps no model: returns False), else None."""
    est.history_ = [m.history_ for m in members]
    est.n_epochs_ = max(m.n_epochs_ for m in members)
    est.best_epoch_ = max(m.best_epoch_ for m in members)
    est.device_ = members[0].device_
    bad = [i for i, m in enumerate(members) if getattr(m, "diverged_", None)]
    est.diverged_ = f"{name(bad[0])}: {members[bad[0]].diverged_}" if bad else None
    return not bad


def bag_shapes(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """The bag's shape table from its members' (`feature`, `x`, `value`) tables (same points):
    ``value`` the mean over members, ``std`` their standard deviation (ddof=0), ``lower`` /
    ``upper`` their `BAND_PERCENTILES`. Rows are matched by position, so a feature's row with
    `x` NaN (its missing values) and category labels as `x` pair up like the other rows."""
    values = np.stack([t["value"].to_numpy(dtype=np.float64) for t in tables])
    out = tables[0][["feature", "x"]].copy()
    out["value"] = values.mean(axis=0)
    out["std"] = values.std(axis=0)
    lo, hi = np.percentile(values, BAND_PERCENTILES, axis=0)
    out["lower"] = lo
    out["upper"] = hi
    return out
