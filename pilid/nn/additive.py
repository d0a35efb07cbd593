"""The additive (piecewise-linear) component of PiLiD for T trials at once (Eq. 10, Algorithm 1).

Guo et al., IJCAI 2020, Section 3.2: the first layer of the piecewise-linear component has one
unit per Phi column, ``w_k phi_k + b_k`` with no activation; the next layer sums the units of
each feature, weighted by the group weight omega_j. Feature j's marginal value function is

    u_j(x) = omega_j * sum_{k in pieces(j)} (w_k phi_k(x) + b_k),

and the component's output is sum_j u_j(x). Parameters carry a leading trial dimension T:
``w`` and ``b`` are (T, P), ``omega`` is (T, m). Trials with fewer Phi columns than P are padded
with masked columns (mask 0, weight 0) that never receive a gradient.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

#: A monotone-constrained piece starts at least this far from a zero slope (`monotone_slopes`):
#: |w| has no gradient at exactly 0, so a piece started there would never move.
MONOTONE_START_FLOOR = 1e-3


def piecewise_terms(
    v: torch.Tensor, starts: torch.Tensor, col: torch.Tensor, frac: torch.Tensor, *_missing
) -> torch.Tensor:
    """Per feature sum_k v_k phi_k(x) (T, B, m) from compact Phi (`pilid.nn.piecewise.phi_compact`).

    With cs the cumulative sum of the piece weights v (T, P), feature j's sum for a row whose
    value lies on column g with fraction f is cs[g] - (1 - f) v[g] - cs[start_j - 1]: all pieces
    before g count fully, g by f (Definition 2). A missing (or unseen) cell, column start_j
    and fraction 0, gives 0; the indicators that may follow ``frac`` in compact Phi
    (`pilid.nn.piecewise.phi_compact`) are accepted and ignored here.
    """
    T, B, m = col.shape
    cs = torch.cumsum(v, 1)
    before = torch.gather(F.pad(cs, (1, 0)), 1, starts)  # cs[start_j - 1], 0 for start 0
    g = col.reshape(T, B * m)
    at = torch.gather(cs, 1, g) - torch.gather(v, 1, g) * (1.0 - frac.reshape(T, B * m))
    return at.view(T, B, m) - before.unsqueeze(1)


class AdditiveEnsemble(nn.Module):
    """Eq. (10): u_j(x) = omega_j sum_k (w_k phi_k + b_k), for T trials; forward -> (T, B).

    Inputs are Phi in compact form, ``phi = (col, frac)``, each (T, B, m)
    (`pilid.nn.piecewise.phi_compact`); the result equals ``Phi @ (omega w) + sum omega b``.
    With missing values Phi has a third part ``miss`` (T, B, m) (and at prediction possibly a
    fourth, ``unseen``) and `nan_value` (T, m) adds feature j's learned value where x_j is NaN
    (`missing_terms`); its piecewise part is 0 there.

    Monotone constraints (beyond the paper): `sign` (T, P), one of -1, 0, +1 per piece (its
    feature's constraint, 0: none), makes u_j monotone by construction, not by a penalty. A
    constrained piece's weight enters Eq. 10 as ``sign_k * |w_k|`` and its feature's omega as
    ``|omega_j|`` (`slopes`, `effective`), so every piece's slope omega_j w_k has the sign of the
    constraint whatever the parameters are; each phi_k is non-decreasing in x (Definition 2),
    hence u_j is monotone in that direction. The `w` given for such a piece is its starting
    slope: one of the wrong sign (e.g. from the least squares) starts at
    `MONOTONE_START_FLOOR` in the right direction. Without `sign` (None) nothing changes.
    """

    def __init__(
        self,
        feature: torch.Tensor,
        mask: torch.Tensor,
        n_features: int,
        w: torch.Tensor,
        b: torch.Tensor | None = None,
        omega: torch.Tensor | None = None,
        starts: torch.Tensor | None = None,
        sign: torch.Tensor | None = None,
        nan_value: torch.Tensor | None = None,
    ):
        super().__init__()
        T, P = feature.shape
        self.n_features = int(n_features)
        self.register_buffer("feature", feature.to(torch.long))
        self.register_buffer("mask", mask.to(w.dtype))
        if starts is None:  # first column of every feature (columns are grouped by feature)
            starts = torch.stack(
                [
                    torch.searchsorted(
                        torch.where(self.mask[t] > 0, self.feature[t], self.n_features),
                        torch.arange(self.n_features, device=feature.device),
                    )
                    for t in range(T)
                ]
            )
        self.register_buffer("starts", starts.to(torch.long))
        # Monotone constraints (beyond the paper): see `monotone_slopes`; None (no constraint)
        # leaves every computation as it was.
        self.register_buffer("sign", None if sign is None else sign.to(w.dtype) * self.mask)
        self.register_buffer("omega_abs", None)
        if self.sign is not None:
            signed = torch.zeros(T, self.n_features, dtype=w.dtype, device=w.device)
            signed = signed.scatter_add(1, self.feature, self.sign.abs()) > 0
            self.omega_abs = signed  # features whose omega enters as |omega|
            w = torch.where(self.sign != 0, (self.sign * w).clamp_min(MONOTONE_START_FLOOR), w)
        self.w = nn.Parameter(w * self.mask)
        self.b = nn.Parameter(torch.zeros(T, P, dtype=w.dtype) if b is None else b * self.mask)
        self.omega = nn.Parameter(
            torch.ones(T, self.n_features, dtype=w.dtype) if omega is None else omega
        )
        # Missing values (beyond the paper): u_j(NaN) = constant_j + nan_value_j, learned; None
        # when no feature had missing values (then nothing changes). See `missing_terms`.
        self.register_parameter(
            "nan_value", None if nan_value is None else nn.Parameter(nan_value.to(w.dtype))
        )
        # u_j of a value not seen in fit (NaN in a feature without missing values, a new
        # category): constant_j + unseen_value_j; set by the estimators after training so that
        # it is u_j's training mean (`pilid.estimators.neural`); None: the constant alone.
        self.register_buffer("unseen_value", None)

    def _omega(self) -> torch.Tensor:
        """omega (T, m) as it enters Eq. 10: |omega_j| for a monotone-constrained feature."""
        if self.sign is None:
            return self.omega
        return torch.where(self.omega_abs, self.omega.abs(), self.omega)

    def slopes(self) -> torch.Tensor:
        """The per-piece weights w_k (T, P) as they enter Eq. 10 (`monotone_slopes`)."""
        if self.sign is None:
            return self.w
        return torch.where(self.sign != 0, self.sign * self.w.abs(), self.w)

    def roughness(self, neighbours: torch.Tensor) -> torch.Tensor:
        """The second-difference roughness of the shapes per trial, (T,) (beyond the paper).

        With v_k = omega_j w_k the rise of u_j over piece k (`effective`), u_j's values at the
        characteristic points are the cumulative sums of v, so v_{k+1} - v_k is their second
        difference: ``sum_k neighbours_k (v_{k+1} - v_k)^2``, with ``neighbours`` (T, P - 1)
        1 where columns k and k + 1 are consecutive pieces of one numeric feature (0 between
        features, for categorical features and padding). It is the difference penalty of
        P-splines (Eilers & Marx 1996) on the hat-function coefficients of u_j, in the index
        of the pieces (with quantile knots: equal shares of the training rows).
        """
        v, _ = self.effective()
        return (neighbours * torch.diff(v, dim=1).square()).sum(1)

    def effective(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-piece weight omega_j w_k (T, P) and per-trial constant sum_k omega_j b_k (T,)."""
        if self.sign is None:
            om = torch.gather(self.omega, 1, self.feature)
            return self.w * om, (self.b * self.mask * om).sum(1)
        om = torch.gather(self._omega(), 1, self.feature)
        return self.slopes() * om, (self.b * self.mask * om).sum(1)

    def missing_terms(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor | None:
        """Each feature's contribution of missing / unseen cells (T, B, m), or None for none.

        ``miss * nan_value + unseen * unseen_value`` from the indicators of compact Phi
        (`pilid.nn.piecewise.phi_compact`): such a cell's piecewise part is 0, so u_j(NaN) is
        feature j's constant plus its `nan_value` (missing values: EBM's ``missing='separate'``).
        """
        out = None
        nan_value = getattr(self, "nan_value", None)
        if len(phi) > 2 and nan_value is not None:
            out = phi[2] * nan_value.unsqueeze(1)
        unseen_value = getattr(self, "unseen_value", None)
        if len(phi) > 3 and unseen_value is not None:
            extra = phi[3] * unseen_value.unsqueeze(1)
            out = extra if out is None else out + extra
        return out

    def forward(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The additive output sum_j u_j(x_j) + constant (Eq. 10), (T, B), from Phi's parts."""
        v, c = self.effective()
        out = piecewise_terms(v, self.starts, *phi).sum(2) + c.unsqueeze(1)
        missing = self.missing_terms(phi)
        return out if missing is None else out + missing.sum(2)

    def constants(self) -> torch.Tensor:
        """Each feature's constant omega_j sum_k b_k (T, m)."""
        om = torch.gather(self._omega(), 1, self.feature)
        const = torch.zeros(self.omega.shape, dtype=self.w.dtype, device=self.w.device)
        return const.scatter_add(1, self.feature, self.b * self.mask * om)

    def terms(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """Each feature's marginal value u_j(x) (T, B, m); sums to `forward` over features."""
        v, _ = self.effective()
        out = piecewise_terms(v, self.starts, *phi) + self.constants().unsqueeze(1)
        missing = self.missing_terms(phi)
        return out if missing is None else out + missing


def difference_penalty(neighbours: torch.Tensor, smoothness: float) -> torch.Tensor:
    """The band (T, P - 1), float64, of ``smoothness * D^T D`` for neighbours (T, P - 1).

    The quadratic form of `AdditiveEnsemble.roughness` at omega = 1 (beyond the paper; P-splines'
    difference penalty, Eilers & Marx 1996): ``w^T (D^T D) w = sum_k nb_k (w_{k+1} - w_k)^2``,
    D the first differences of the neighbouring pieces. ``D^T D`` is tridiagonal and
    block-diagonal by feature (``neighbours`` is 0 across features), so it is kept as the
    weights of its differences, ``smoothness * nb_k``, never as a P x P matrix:
    `penalty_apply` multiplies by it, `penalty_matrix` writes it out for a narrow Phi.
    """
    return neighbours.double() * float(smoothness)


def penalty_matrix(band: torch.Tensor) -> torch.Tensor:
    """The dense matrix (T, P, P) of a `difference_penalty` band (T, P - 1): diagonal
    ``band_{k-1} + band_k``, off-diagonals ``-band_k`` (a tridiagonal matrix)."""
    T, P1 = band.shape
    nb = band
    diag = torch.zeros(T, P1 + 1, dtype=nb.dtype, device=nb.device)
    diag[:, :-1] += nb
    diag[:, 1:] += nb
    return torch.diag_embed(diag) - torch.diag_embed(nb, 1) - torch.diag_embed(nb, -1)


def penalty_apply(band: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``R v`` for the penalty R of a `difference_penalty` band (..., Q - 1) and `v` (..., P),
    P >= Q (the columns after the first Q: 0), without forming R: ``D^T (band * D v)``."""
    Q = band.shape[-1] + 1
    d = band * (v[..., 1:Q] - v[..., : Q - 1])
    out = torch.zeros_like(v)
    out[..., : Q - 1] -= d
    out[..., 1:Q] += d
    return out


class FrozenAdditive(nn.Module):
    """A fitted additive part for prediction: Eq. (10) with what depends on the parameters
    alone computed once, forward(phi) -> (T, B).

    Holds the effective per-piece weights ``v`` (T, P) and the constant ``c`` (T,)
    (`AdditiveEnsemble.effective`), their cumulative sum ``cs`` and each feature's offset in
    it ``before`` (T, m), as `piecewise_terms` computes them, and the missing and unseen values
    (T, m) or None: the forward reads them (no cumulative sum), so the same float32
    arithmetic runs wherever it is traced (ONNX's ``CumSum`` adds in another order than
    torch's). `of` builds it from an `AdditiveEnsemble`; ``FrozenAdditive(v, c, starts, ...)``
    from weights (a bag's mean, `pilid.nn.bag`).
    """

    def __init__(self, v, c, starts, nan_value=None, unseen_value=None):
        super().__init__()
        with torch.no_grad():
            v = v.detach().clone()
            cs = torch.cumsum(v, 1)  # as `piecewise_terms` computes it
            before = torch.gather(F.pad(cs, (1, 0)), 1, starts)
        for name, value in (("v", v), ("cs", cs), ("before", before), ("c", c.detach())):
            self.register_buffer(name, value.clone())
        for name, value in (("nan_value", nan_value), ("unseen_value", unseen_value)):
            self.register_buffer(name, None if value is None else value.detach().contiguous())

    @classmethod
    def of(cls, additive: AdditiveEnsemble) -> FrozenAdditive:
        """The fitted `additive` part, frozen."""
        with torch.no_grad():
            v, c = additive.effective()
        return cls(
            v,
            c,
            additive.starts,
            getattr(additive, "nan_value", None),
            getattr(additive, "unseen_value", None),
        )

    def forward(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The additive output (T, B) from compact Phi ``(col, frac[, miss[, unseen]])``."""
        col, frac = phi[0], phi[1]
        T, B, m = col.shape
        g = col.reshape(T, B * m)
        at = torch.gather(self.cs, 1, g) - torch.gather(self.v, 1, g) * (
            1.0 - frac.reshape(T, B * m)
        )
        out = (at.view(T, B, m) - self.before.unsqueeze(1)).sum(2) + self.c.unsqueeze(1)
        missing = None
        if len(phi) > 2 and self.nan_value is not None:
            missing = phi[2] * self.nan_value.unsqueeze(1)
        if len(phi) > 3 and self.unseen_value is not None:
            extra = phi[3] * self.unseen_value.unsqueeze(1)
            missing = extra if missing is None else missing + extra
        return out if missing is None else out + missing.sum(2)
