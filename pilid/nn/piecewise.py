"""Characteristic points (Definition 1) and the piecewise-linear feature vector Phi (Definition 2).

Guo et al., IJCAI 2020, Section 3.1. Feature j is cut into pieces at its characteristic points
phi_j^0 < phi_j^1 < ... < phi_j^{gamma_j}; the feature vector of a row has one entry per piece,

    phi_{i,j}^k = 1                                          if x_ij > phi_j^k,
                  (x_ij - phi_j^{k-1}) / (phi_j^k - phi_j^{k-1})  if phi_j^{k-1} <= x_ij <= phi_j^k,
                  0                                          otherwise,

so that a weight per piece gives a continuous piecewise-linear function of x_ij.

* Numeric features, ``method="uniform"`` (the paper): gamma_j equal sub-intervals of the
  training range [min, max].
* Numeric features, ``method="quantile"``: points at the training quantiles k / gamma_j, merged
  where they coincide (heavy-tailed or discrete features then get fewer, well-filled pieces).
* Categorical features: the sorted unique training values (Definition 1 for categorical
  features), i.e. one piece between each pair of consecutive values, so every category gets its
  own marginal value.

Values outside the training range follow Definition 2 literally: below the first point every
entry is 0 and above the last every entry is 1, i.e. they are clipped to the end points and the
shape is constant beyond the training range. A constant feature has a single point; it gets one
piece of zero width whose entry is 0 everywhere, so it contributes a constant (no division by
zero, no NaN). Points closer together than `point_tolerance` (a few float64 ulps of the feature's
magnitude, and at least float32's smallest normal number, 1.2e-38) are merged: Phi is computed in
float32, where such a piece could not be inverted (1 / width overflows, giving NaN). A feature whose
whole training range is that small (e.g. zeros and one 1e-300) is thereby constant as well.

Missing values (beyond the paper): NaN takes no part in the characteristic points
(`Knots.missing` records the features that had it) and has no piece in Phi: `phi_compact` gives
such a cell column start_j and fraction 0 (a piecewise part of 0) and a missing indicator, so
that the additive component can learn a separate contribution for NaN (`pilid.nn.additive`).

Everything is computed with whole-array operations; Phi for a dataset is built once (torch) and
mini-batches take rows of it.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from pilid.errors import PilidError

KNOT_METHODS = ("uniform", "quantile")
#: What a valid gamma is (Definition 1), for every message that rejects one.
GAMMA_RULE = (
    "a whole number >= 1, one per feature, or 'auto' (a rule of the training rows; "
    "gamma=1 is a linear model)"
)
#: ``gamma="auto"``: clip(round(n ** (1/3) / AUTO_GAMMA_DIVISOR), *AUTO_GAMMA_RANGE) pieces.
AUTO_GAMMA_DIVISOR = 3.0
AUTO_GAMMA_RANGE = (2, 5)
#: Characteristic points closer than max(POINT_ATOL, POINT_RTOL * max|x|) are merged (see the
#: module docstring): a few float64 ulps, or a width whose inverse overflows float32.
POINT_RTOL = 4 * float(np.finfo(np.float64).eps)
POINT_ATOL = float(np.finfo(np.float32).tiny)


def point_tolerance(lo, hi):
    """The smallest distance between two characteristic points of a feature in [lo, hi]."""
    return np.maximum(POINT_ATOL, POINT_RTOL * np.maximum(np.abs(lo), np.abs(hi)))


def _merge_close(points: np.ndarray, tol: float) -> np.ndarray:
    """Sorted `points` without those within `tol` of the point before them (the first stays).

    Every kept gap is then wider than `tol`; points that only differ by rounding (or a range too
    small to represent) collapse, down to a single point for a near-constant feature.
    """
    if points.size < 2:
        return points
    keep = np.concatenate([[True], np.diff(points) > tol])
    return points[keep]


@dataclass
class Knots:
    """The characteristic points of every feature (Definition 1) and the layout of Phi.

    `points[j]` holds phi_j^0 < ... < phi_j^{gamma_j} (one value for a constant feature);
    `categorical[j]` says which rule produced them. Phi has `n_pieces.sum()` columns, feature by
    feature, in the order of Definition 2.
    """

    points: list[np.ndarray]
    categorical: np.ndarray
    #: Per feature: did the training data hold NaN (missing values)? Such a feature gets a
    #: separate learned contribution for NaN (`pilid.nn.additive.AdditiveEnsemble.nan_value`);
    #: None (knots of earlier versions): no feature had missing values.
    missing: np.ndarray | None = None

    @property
    def missing_mask(self) -> np.ndarray:
        """`missing` as one bool per feature (all False when None)."""
        if self.missing is None:
            return np.zeros(len(self.points), dtype=bool)
        return np.asarray(self.missing, dtype=bool)

    @property
    def n_features(self) -> int:
        """Number of features."""
        return len(self.points)

    @property
    def n_pieces(self) -> np.ndarray:
        """gamma_j per feature (a constant feature has one zero-width piece)."""
        return np.array([max(len(p) - 1, 1) for p in self.points], dtype=np.int64)

    @property
    def starts(self) -> np.ndarray:
        """The first Phi column of each feature (Phi's columns are grouped by feature)."""
        pieces = self.n_pieces
        return np.concatenate([[0], np.cumsum(pieces)[:-1]]).astype(np.int64)

    @property
    def n_columns(self) -> int:
        """Number of columns of Phi (the pieces of all features)."""
        return int(self.n_pieces.sum())

    def layout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per Phi column: feature index, left point phi^{k-1}, and 1 / width (0 for width 0)."""
        feature, lo, inv = [], [], []
        for j, p in enumerate(self.points):
            if len(p) == 1:
                left, right = p, p
            else:
                left, right = p[:-1], p[1:]
            width = right - left
            feature.append(np.full(len(left), j, dtype=np.int64))
            lo.append(left)
            with np.errstate(divide="ignore"):
                inv.append(np.where(width > 0, 1.0 / np.where(width > 0, width, 1.0), 0.0))
        return np.concatenate(feature), np.concatenate(lo), np.concatenate(inv)

    def torch_layout(self, device=None, dtype=torch.float32):
        """`layout` as tensors on ``device`` (feature index, left point, 1 / width)."""
        feature, lo, inv = self.layout()
        return (
            torch.as_tensor(feature, device=device),
            torch.as_tensor(lo, dtype=dtype, device=device),
            torch.as_tensor(inv, dtype=dtype, device=device),
        )


def is_pieces(value) -> bool:
    """True for a valid gamma_j: a whole number >= 1 (5.0 counts as 5), not a bool."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        return False
    return float(value).is_integer() and value >= 1


def auto_gamma(n_rows: int) -> int:
    """Pieces per feature for ``gamma="auto"``: a rule of the number of training rows `n_rows`,

        gamma = clip(round(n_rows ** (1/3) / 3), 2, 5),

    i.e. 2 pieces up to 421 rows, 3 up to 1,157, 4 up to 2,460 and 5 from 2,461 rows on: fewer
    pieces where few rows cannot pin many down, capped where more pieces stopped helping (chosen
    on data that is none of the paper's UCI sets; the documentation's study pages). Definition 1
    leaves gamma to the user.
    """
    pieces = round(float(n_rows) ** (1.0 / 3.0) / AUTO_GAMMA_DIVISOR)
    return int(min(max(pieces, AUTO_GAMMA_RANGE[0]), AUTO_GAMMA_RANGE[1]))


def resolve_gamma(gamma, n_rows: int):
    """`gamma` with ``"auto"`` replaced by `auto_gamma(n_rows)`; any other value unchanged."""
    return auto_gamma(n_rows) if _is_auto(gamma) else gamma


def _is_auto(gamma) -> bool:
    return isinstance(gamma, str) and gamma == "auto"


def valid_gamma(gamma) -> bool:
    """True for one valid number of pieces, a sequence of them (one per feature), or "auto"."""
    if _is_auto(gamma):
        return True
    if isinstance(gamma, str):
        return False
    try:
        values = [gamma] if np.ndim(gamma) == 0 else list(gamma)
    except (TypeError, ValueError):
        return False
    return all(is_pieces(g) for g in values)


def _check_gamma(gamma, n_features: int, n_rows: int) -> np.ndarray:
    gamma = resolve_gamma(gamma, n_rows)
    if not valid_gamma(gamma):
        raise PilidError(
            f"gamma={gamma!r} is invalid; the number of pieces per feature must be {GAMMA_RULE}"
        )
    gammas = [gamma] * n_features if np.ndim(gamma) == 0 else list(gamma)
    if len(gammas) != n_features:
        raise PilidError(
            f"gamma has {len(gammas)} entries but X has {n_features} features; give one "
            "number of pieces per feature or a single number"
        )
    return np.asarray(gammas, dtype=np.int64)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q) -> np.ndarray:
    """Quantiles `q` of `values` (n,) with frequency `weights` (>= 0, not all 0): NumPy's
    default (linear, Hyndman & Fan's 7th) quantile of the values repeated by their weights,
    generalised to fractional weights, operation for operation as NumPy computes it.

    Sorted values v_i with cumulative weights C_i (W = C_r); position h = (W - 1) q (at most
    W - 1); the value at position k is v_i for C_{i-1} <= k < C_i (a row of weight 0 holds
    none); the quantile interpolates between the values at floor(h) and floor(h) + 1 as
    NumPy's ``_lerp`` does. Whole-number weights give exactly
    ``np.quantile(np.repeat(values, weights), q)``; unit weights ``np.quantile(values, q)``.
    """
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(weights[order])
    last = cum[-1] - 1.0
    h = last * np.asarray(q, dtype=np.float64)
    lower = np.floor(h)
    upper = lower + 1.0
    past = h >= last  # as NumPy: at or past the last position, the largest value
    lower, upper = np.where(past, last, lower), np.where(past, last, upper)
    at = np.minimum(np.searchsorted(cum, np.stack([lower, upper]), side="right"), len(v) - 1)
    a, b = v[at[0]], v[at[1]]
    t = h - lower
    diff = b - a
    return np.where(t >= 0.5, b - diff * (1.0 - t), a + diff * t)


def _frequency_weights(weights, n: int) -> np.ndarray | None:
    """Knot weights as repeat counts: rows of weight 0 take no part; when the lightest positive
    weight is below 1 all are scaled so that it is 1 (every kept row counts at least once)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise PilidError(f"weights has shape {w.shape}; give one weight per row of X ({n})")
    if not (np.isfinite(w).all() and (w >= 0).all() and (w > 0).any()):
        raise PilidError("weights must be finite, non-negative and not all 0; fix the weights")
    lightest = w[w > 0].min()
    return w / lightest if lightest < 1.0 else w


def fit_knots(
    X: np.ndarray,
    gamma: int | Sequence[int] | str = 5,
    method: str = "uniform",
    categorical: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> Knots:
    """Characteristic points of Definition 1 from training data `X` (n, m).

    `gamma`: pieces per numeric feature, one number, one per feature, or ``"auto"``
    (`auto_gamma` of the n rows of `X`).

    `weights` (n,), non-negative sample weights (None: unweighted): rows of weight 0 are left
    out (as if dropped, also from the range and the categories), and ``quantile`` takes the
    weighted quantiles of `weighted_quantile`, the weights read as repeat counts (scaled up
    so that the lightest positive one is 1 when it is below 1): integer weights give the
    points of the rows repeated by their weights.

    Numeric feature j: ``uniform`` gives phi_j^k = alpha_j + k / gamma_j (beta_j - alpha_j),
    ``quantile`` gives the training quantiles k / gamma_j with coinciding points merged.
    Categorical feature: its sorted unique values. Points within `point_tolerance` of the one
    before them are dropped; a range within it (or zero) leaves the single point alpha_j.

    NaN (a missing value) takes no part in the points: they come from the feature's other rows,
    and `Knots.missing` records the features that had NaN. A feature with no value but NaN is
    refused.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise PilidError(f"X must be a non-empty 2-D array; got shape {X.shape}")
    if method not in KNOT_METHODS:
        raise PilidError(f"knots={method!r} is unknown; use one of {', '.join(KNOT_METHODS)}")
    w = _frequency_weights(weights, X.shape[0])
    if w is not None:  # a zero-weight row places no point
        X, w = X[w > 0], w[w > 0]
    m = X.shape[1]
    gammas = _check_gamma(gamma, m, X.shape[0])
    cat = np.zeros(m, dtype=bool) if categorical is None else np.asarray(categorical, dtype=bool)
    nan = np.isnan(X)
    missing = nan.any(axis=0)
    if missing.any():  # missing values place no point
        if nan.all(axis=0).any():
            j = int(np.flatnonzero(nan.all(axis=0))[0])
            raise PilidError(f"feature {j} holds only NaN (missing values); drop that column")
        lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    else:
        lo, hi = X.min(axis=0), X.max(axis=0)
    tol = point_tolerance(lo, hi)
    points = []
    for j in range(m):  # one small step per feature (not per sample)
        if missing[j]:  # the points of this feature's rows with a value (and their weights)
            keep = ~nan[:, j]
            wj = None if w is None else w[keep]
            one = fit_knots(X[keep][:, [j]], [gammas[j]], method, cat[j : j + 1], weights=wj)
            points.append(one.points[0])
            continue
        if cat[j]:
            p = np.unique(X[:, j])
        elif hi[j] - lo[j] <= tol[j]:
            p = lo[j : j + 1].copy()  # constant, or a range too small to represent
        elif method == "uniform":
            p = lo[j] + (hi[j] - lo[j]) * np.arange(gammas[j] + 1) / gammas[j]
            p[-1] = hi[j]
            p = np.unique(p)
        elif w is not None:
            q = np.linspace(0.0, 1.0, gammas[j] + 1)
            p = np.unique(weighted_quantile(X[:, j], w, q))
        else:
            p = np.unique(np.quantile(X[:, j], np.linspace(0.0, 1.0, gammas[j] + 1)))
        points.append(_merge_close(p, tol[j]))
    return Knots(points=points, categorical=cat, missing=missing if missing.any() else None)


def compact_layout(knots: Knots, device=None, dtype=torch.float32):
    """Tensors for `phi_compact`: padded points (m, K) (+inf padding), first column of each
    feature (m,), pieces per feature (m,), and the per-column left point and 1 / width (P,)."""
    m = knots.n_features
    K = max(len(p) for p in knots.points)
    pts = np.full((m, K), np.inf)
    for j, p in enumerate(knots.points):
        pts[j, : len(p)] = p
    pieces, starts = knots.n_pieces, knots.starts
    _, lo, inv = knots.layout()
    return (
        torch.as_tensor(pts, dtype=torch.float64, device=device),
        torch.as_tensor(starts, device=device),
        torch.as_tensor(pieces, device=device),
        torch.as_tensor(lo, dtype=dtype, device=device),
        torch.as_tensor(inv, dtype=dtype, device=device),
    )


def phi_compact(X: torch.Tensor, clayout) -> tuple[torch.Tensor, ...]:
    """Phi of Definition 2 in compact form for `X` (n, m): the Phi column of the piece that
    holds x_ij (long, (n, m)) and the fraction of that piece below x_ij ((n, m)).

    A NaN x_ij (a missing value) or +inf (the estimators' code for a category not seen in fit,
    `pilid.models.inputs`) has no piece: its column is the feature's first and its fraction 0,
    so its piecewise part is 0, and the tuple gains ``miss`` (n, m), 1.0 where x_ij is NaN
    (``(col, frac, miss)``), and ``unseen`` (n, m), 1.0 where x_ij is +inf
    (``(col, frac, miss, unseen)``, only when some value is +inf). `AdditiveEnsemble` gives
    those cells their own contribution (`pilid.nn.additive`). Without NaN or inf the result is
    ``(col, frac)``, computed as before.

    Row i of Phi is, for feature j, 1 on the pieces before that column, the fraction on it and
    0 after it, so (column, fraction) holds the same information as Phi in m instead of P
    numbers: mini-batches gather 20x less data, and u_j(x) is read off a cumulative sum of the
    piece weights (`pilid.nn.additive`). Out-of-range values clip as in Definition 2.
    """
    pts, starts, pieces, lo, inv = clayout
    xt = X.to(pts.dtype).T.contiguous()  # (m, n), float64 so ties with the points are exact
    k = torch.searchsorted(pts, xt, right=True) - 1
    k = torch.minimum(k.clamp_min(0), (pieces - 1).unsqueeze(1))
    col = (k + starts.unsqueeze(1)).T.contiguous()
    frac = ((X.to(lo.dtype) - lo[col]) * inv[col]).clamp_(0.0, 1.0)
    miss, unseen = torch.isnan(X), torch.isposinf(X)
    if not (bool(miss.any()) or bool(unseen.any())):
        return col, frac
    none = miss | unseen  # no piece: first column, fraction 0 (piecewise part 0)
    col = torch.where(none, starts.unsqueeze(0).expand_as(col), col)
    frac = frac.masked_fill(none, 0.0)
    if not bool(unseen.any()):
        return col, frac, miss.to(frac.dtype)
    return col, frac, miss.to(frac.dtype), unseen.to(frac.dtype)


def phi_dense(col: torch.Tensor, frac: torch.Tensor, feature: torch.Tensor) -> torch.Tensor:
    """Dense Phi (..., n, P) from the compact form (..., n, m) and each column's feature (P,).

    Entry p is 1 if p lies before the piece holding the row's value of its feature, the
    fraction on that piece, 0 after it (Definition 2). Columns padded beyond a trial's own
    pieces come out 0 when `feature` maps them to a feature whose pieces all come earlier.
    """
    P = feature.shape[-1]
    cols = torch.arange(P, device=col.device)
    g = col[..., feature]
    f = frac[..., feature]
    return (cols < g).to(frac.dtype) + (cols == g).to(frac.dtype) * f


def phi_numpy(X: np.ndarray, knots: Knots) -> np.ndarray:
    """Phi of Definition 2 in NumPy (float64), shape (n, sum_j gamma_j)."""
    feature, lo, inv = knots.layout()
    X = np.asarray(X, dtype=np.float64)
    return np.clip((X[:, feature] - lo) * inv, 0.0, 1.0)


def phi_torch(X: torch.Tensor, layout) -> torch.Tensor:
    """Phi of Definition 2 in torch for `X` (..., n, m) given `Knots.torch_layout()`.

    Returns (..., n, P). A zero-width piece (constant feature) has inverse width 0 and so a
    zero column; values beyond the end points clip to 0 / 1 (Definition 2).
    """
    feature, lo, inv = layout
    return ((X[..., feature] - lo) * inv).clamp_(0.0, 1.0)


def piece_values(knots: Knots, w: np.ndarray, const: np.ndarray) -> list[np.ndarray]:
    """u_j at its characteristic points, from effective per-piece weights `w` (P,).

    At x = phi_j^k the first k pieces of feature j are full (entry 1) and the rest empty, so
    u_j(phi_j^k) = const_j + sum_{l <= k} w_l: a cumulative sum (Definition 3's increments
    Delta_j^k are the weights). A constant feature returns its constant.
    """
    out, start = [], 0
    for j, p in enumerate(knots.points):
        g = max(len(p) - 1, 1)
        wj = w[start : start + g]
        start += g
        if len(p) == 1:
            out.append(np.array([const[j]]))
        else:
            out.append(const[j] + np.concatenate([[0.0], np.cumsum(wj)]))
    return out
