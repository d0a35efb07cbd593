"""A fitted PiLiD's interaction of two features, on a grid (beyond the paper).

PiLiD's shapes are its main effects; what two features do together lives in its deep part: the
MLP of Eq. (9) and, with ``pairs`` (``"auto"`` by default), the explicit pair terms of
``pairs_`` (`pilid.nn.pairs.PairTerms`), trained jointly and sharing the interactions between
them. `interaction_grid` reads the model's interaction of features a and b as a whole, from its
output alone (Friedman and Popescu's decomposition of partial dependence, 2008, behind their
H-statistic):

    I(a, b) = PD_ab(a, b) - PD_a(a) - PD_b(b) - c,

with PD_ab the output averaged over the kept training rows with features a and b set to (a, b),
PD_a and PD_b the same with one feature set, and c the constant that centres I to mean 0 over
those rows' own (a, b). The additive part cancels from I (a shape of a or b is in PD_ab and in
PD_a or PD_b alike), so I is what no shape can draw; a model whose deep part is one pair term
f_ab alone gets f_ab with its main effects removed, and I has the model's double differences
``out(a1, b1) - out(a1, b0) - out(a0, b1) + out(a0, b0)`` wherever the deep part depends on a
and b alone. Output units: the target's (regression) or the logit (classification). A bag: the
mean over its members (the bag's own I, partial dependence being linear in the output) and their
spread (``std``, ``lower``, ``upper``; `pilid.models.bagging.BAND_PERCENTILES`), as its shapes
have. K > 2 classes: one grid per class logit, a first column ``class``.

How it is computed: the additive part and every pair term that does not join a and b are sums
of functions of fewer than both features, so each cancels from I exactly; what is left is the
MLP's I and the pair term f_ab's (if the model has one). f_ab's is read in closed form from its
bilinear grid (``h_a^T V h_b``, `pilid.nn.pairs`: its partial dependence on a is
``h_a^T V m_b``, m_b the background's mean hat), the MLP's by partial dependence: every grid
point, single point and kept row's own (a, b) stacked with the r background rows into one batch
(chunked for memory), its deep input encoded once for all of a bag's members, each member's MLP
run on it. (n^2 + 2 n + 3 r) r rows go through each member's MLP (r <= 200 kept rows), and a
progress bar (tqdm) shows where that is long (over `PROGRESS_ROWS` rows in all). A deep part of
another kind is read from the whole output the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from pilid.inspection.importance import pair_hats
from pilid.inspection.joint_grid import check_pair, grid_axis
from pilid.models import bagging, multiclass
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.pairs import DeepWithPairs
from pilid.train.encoding import deep_input

__all__ = ["interaction_grid"]

#: Rows per forward pass of the partial dependence.
CHUNK_ROWS = 65536
#: Rows (over a bag's members together) from which the partial dependence shows a progress bar.
PROGRESS_ROWS = 2_000_000


def _parts(member):
    """(MLP, pair terms) of one model's deep part, either None where it has none; the MLP
    False where the deep part reads Phi itself (read through the whole output instead)."""
    deep = member.module_.deep
    pairs = None
    if isinstance(deep, DeepWithPairs):
        deep, pairs = deep.deep, deep.pairs
    if deep is not None and getattr(deep, "uses_phi", False):
        return False, pairs
    return deep, pairs


def _one_trial(mlp):
    """The function rows (B, m') -> output (B,) of a fitted one-trial MLP (a member's): Eq. 6-8
    as plain matrix products on its weights (ReLU in place), for a `pilid.nn.mlp.EnsembleMLP`
    of one trial, else its own forward pass."""
    if not isinstance(mlp, EnsembleMLP) or mlp.out_w.shape[0] != 1:
        return lambda x: mlp(x[None])[0]
    layers = [(w[0].detach(), b[0].detach()) for w, b in zip(mlp.weights, mlp.biases)]
    out_w, out_b = mlp.out_w[0].detach(), mlp.out_b[0].detach()

    def forward(x):
        h = x
        for w, b in layers:
            h = torch.addmm(b, h, w).relu_()
        return torch.addmm(out_b, h, out_w)[:, 0]

    return forward


def _points(ga, gb, background: np.ndarray, a: int, b: int):
    """The points of the partial dependence, in order: the grid ``ga`` x ``gb`` (flattened as
    ``np.meshgrid(ga, gb, indexing="ij")``), ``ga`` alone, ``gb`` alone, and each background
    row's own (a, b), a alone, b alone. Returns the values of (a, b) (P, 2) and which of them a
    point sets (P, 2); an unset feature keeps each background row's own value."""
    A, B = np.meshgrid(ga, gb, indexing="ij")
    ra, rb = background[:, a], background[:, b]
    values = [
        np.column_stack([A.ravel(), B.ravel()]),
        np.column_stack([ga, ga]),
        np.column_stack([gb, gb]),
        np.column_stack([ra, rb]),
        np.column_stack([ra, ra]),
        np.column_stack([rb, rb]),
    ]
    both, first, second = [True, True], [True, False], [False, True]
    sets = [both, first, second, both, first, second]
    mask = [np.repeat([kind], len(v), axis=0) for kind, v in zip(sets, values)]
    return np.concatenate(values), np.concatenate(mask)


def _partial_dependence(run, n_members: int, background, a: int, b: int, points) -> np.ndarray:
    """Each member's output `run` averaged over the `background` rows with (a, b) set as each
    point of `points` (`_points`) says: (n_members, P). All points x background rows go through
    `run` stacked, `CHUNK_ROWS` rows at a time; `run(rows)` gives (n_members, len(rows))."""
    values, mask = points
    r, m = background.shape
    step = max(1, CHUNK_ROWS // r)
    out = np.empty((n_members, len(values)))
    from tqdm.auto import tqdm

    quiet = len(values) * r * n_members < PROGRESS_ROWS
    with tqdm(total=len(values), desc="interaction grid", unit="point", disable=quiet) as bar:
        for s in range(0, len(values), step):
            v, k = values[s : s + step, None], mask[s : s + step, None]
            rows = np.repeat(background[None], len(v), axis=0)  # (p, r, m)
            rows[:, :, a] = np.where(k[..., 0], v[..., 0], rows[:, :, a])
            rows[:, :, b] = np.where(k[..., 1], v[..., 1], rows[:, :, b])
            out[:, s : s + len(v)] = run(rows.reshape(-1, m)).reshape(n_members, len(v), r).mean(2)
            bar.update(len(v))
    return out


def _from_partial_dependence(pd_: np.ndarray, na: int, nb: int) -> np.ndarray:
    """I(a, b) on the grid (n_members, na * nb) from the partial dependence of every point of
    `_points` (n_members, P): the joint less each single one less the centring."""
    g = na * nb
    joint, only_a, only_b = pd_[:, :g], pd_[:, g : g + na], pd_[:, g + na : g + na + nb]
    own_ab, own_a, own_b = np.split(pd_[:, g + na + nb :], 3, axis=1)
    centre = (own_ab - own_a - own_b).mean(1, keepdims=True)
    return joint - np.repeat(only_a, nb, axis=1) - np.tile(only_b, (1, na)) - centre


def _pair_interaction(est, pairs, a: int, b: int, ga, gb, background) -> np.ndarray | float:
    """I(a, b) of the pair term of a and b among `pairs` (`pilid.nn.pairs.PairTerms`), raw
    units, (na * nb,), in closed form (module docstring); 0 when it has no such pair (a pair
    term of other features cancels from I)."""
    found = [k for k, pair in enumerate(pairs.pairs[0].tolist()) if sorted(pair) == sorted([a, b])]
    if not found:
        return 0.0
    k = found[0]
    first, second = (2 * k, 2 * k + 1) if pairs.pairs[0, k, 0] == a else (2 * k + 1, 2 * k)
    V = pairs.V[0, k].detach().double()
    if first > second:  # the pair term is f(x_b, x_a): its matrix transposed
        V = V.T

    def hats(rows, slot):
        return pair_hats(pairs, est._inputs(rows)[1])[:, slot]

    probe_a = np.repeat(background[:1], len(ga), axis=0)
    probe_a[:, a] = ga
    probe_b = np.repeat(background[:1], len(gb), axis=0)
    probe_b[:, b] = gb
    ha, hb = hats(probe_a, first), hats(probe_b, second)  # (na, G), (nb, G)
    ra, rb = hats(background, first), hats(background, second)  # (r, G)
    ma, mb = ra.mean(0), rb.mean(0)
    joint = ha @ V @ hb.T
    only_a, only_b = ha @ V @ mb, ma @ V @ hb.T
    own = ((ra @ V) * rb).sum(1) - ra @ V @ mb - rb @ (ma @ V)
    value = joint - only_a[:, None] - only_b[None, :] - own.mean()
    return value.numpy().ravel()


@torch.no_grad()
def _interactions(est, a: int, b: int, ga, gb, background: np.ndarray) -> np.ndarray:
    """I(a, b) of the module docstring for each model of `est` (itself, or a bag's members) on
    the grid ``ga`` x ``gb``, in output units: (n_members, na * nb), flattened in the order of
    ``np.meshgrid(ga, gb, indexing="ij")``."""
    members = est.estimators_ if est._bagged() else [est]
    parts = [_parts(m) for m in members]
    scale = np.array([m.y_scale_ for m in members])[:, None]
    points = _points(ga, gb, background, a, b)
    na, nb = len(ga), len(gb)
    if any(mlp is False for mlp, _ in parts):  # a deep part that reads Phi: the whole output

        def run(rows):
            return np.stack([m._raw(rows) for m in members])

        pd_ = _partial_dependence(run, len(members), background, a, b, points)
        return scale * _from_partial_dependence(pd_, na, nb)
    value = np.zeros((len(members), na * nb))
    mlps = [None if mlp is None else _one_trial(mlp) for mlp, _ in parts]
    if any(mlp is not None for mlp in mlps):
        missing = getattr(est, "missing_", None)
        onehot, bins = getattr(est, "deep_onehot_", None), getattr(est, "deep_bins_", None)

        def run(rows):  # the deep input encoded once for every member (they share it)
            x = deep_input(rows, est.x_mean_, est.x_scale_, missing, onehot, bins)
            x = torch.from_numpy(x.astype(np.float32))
            out = torch.zeros(len(mlps), len(rows))
            for c, f in enumerate(mlps):
                if f is not None:
                    out[c] = f(x)
            return out.numpy()

        pd_ = _partial_dependence(run, len(members), background, a, b, points)
        value += _from_partial_dependence(pd_, na, nb)
    for c, (_, pairs) in enumerate(parts):
        if pairs is not None:
            value[c] += _pair_interaction(est, pairs, a, b, ga, gb, background)
    return scale * value


def _grid(est, a: int, b: int, ga, gb, background: np.ndarray) -> pd.DataFrame:
    """The tidy grid of one model or bag (`est`'s members, a bag's spread)."""
    A, B = np.meshgrid(ga, gb, indexing="ij")
    grid = pd.DataFrame({"x_a": A.ravel(), "x_b": B.ravel()})
    values = _interactions(est, a, b, ga, gb, background)
    if not est._bagged():
        return grid.assign(value=values[0])
    lower, upper = np.percentile(values, bagging.BAND_PERCENTILES, axis=0)
    return grid.assign(value=values.mean(0), std=values.std(0), lower=lower, upper=upper)


def interaction_grid(est, i, j, n: int = 50, X=None) -> pd.DataFrame:
    """A fitted PiLiD's interaction of features `i` and `j` on a grid (module docstring).

    Parameters
    ----------
    est : fitted PiLiDRegressor or PiLiDClassifier
    i, j : int or str
        The two features (column positions or names); ``x_a`` is `i`, ``x_b`` is `j`.
    n : int, default=50
        Grid points per feature: n evenly spaced over the training range, or the feature's
        values where it has at most n of them (`pilid.inspection.joint_grid.grid_axis`).
    X : array-like or None, default=None
        The rows the partial dependence averages over; None: up to 200 training rows kept at
        fit.

    Returns
    -------
    pandas.DataFrame
        ``x_a``, ``x_b`` and ``value`` (I, in output units); a bag adds ``std``, ``lower`` and
        ``upper`` over its members; K > 2 classes a first column ``class``.
    """
    check_is_fitted(est, "x_min_")
    a, b = check_pair(est, i, j, n)
    background = est._background_X if X is None else est._validate_X(X, fit=False)
    ga, gb = grid_axis(est, a, n), grid_axis(est, b, n)
    if est._multiclass():
        tables = [_grid(m, a, b, ga, gb, background) for m in est.class_estimators_]
        return multiclass.class_table(est, tables)
    return _grid(est, a, b, ga, gb, background)
