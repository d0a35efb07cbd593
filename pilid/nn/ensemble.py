"""The PiLiD ensemble module (Eq. 9) and purification of its deep part.

Guo et al., IJCAI 2020, Eq. (9): ``U(y) = w_0 + u^T Phi + u(x_1, ..., x_m)``: the additive
piecewise-linear component (`pilid.nn.additive`) plus a deep component (the MLP of
`pilid.nn.mlp`, or PiLiB's blocks), trained jointly. Every parameter and buffer carries a
leading trial dimension T.

Purification (beyond the paper). The deep component can learn main effects too, and then the
additive shapes are no longer the model's whole main effect. `purify_` moves the deep part's main
effect into the additive part after training, in the generalised functional-ANOVA sense
(Hooker 2007): the deep output on the training rows is projected (least squares, centred) onto
the span of Phi, i.e. onto the additive piecewise-linear functions; the projection is added to
the additive part and subtracted from the deep part. The model's output is unchanged; the
purified deep part has no piecewise-linear main effect left on the training data. With PiLiD's
``smoothness`` the projection carries the same roughness penalty (a penalised least squares), so
the moved main effect is as smooth as the shapes are held, and the deep part keeps only the
remainder that is rougher than the penalty lets a shape be. With monotone
constraints (`pilid.nn.additive.AdditiveEnsemble`'s ``sign``) the projection uses the Phi columns
of the unconstrained features alone: a constrained feature's shape never takes a shift (which
could break its monotonicity); the deep part does not see such a feature anyway (the estimators
give it a constant input).
"""

from __future__ import annotations

import torch
from torch import nn

from pilid.nn.additive import AdditiveEnsemble, piecewise_terms
from pilid.nn.least_squares import DENSE_COLUMNS, CompactPhi, ridge_solve, ridge_solve_compact
from pilid.nn.piecewise import phi_dense


class PiLiDEnsemble(nn.Module):
    """Eq. (9) for T trials: ``out = additive(phi) + deep(x)``, each (T, B); either may be None.

    `x` is (T, B, m') (m' = m plus one missing indicator per feature with missing values);
    `phi` is Phi in compact form ``(col, frac)``, each (T, B, m), with missing values
    ``(col, frac, miss)`` (and ``unseen`` after it at prediction),
    `pilid.nn.piecewise.phi_compact`.

    `shift_w` (T, P) and `shift_c` (T,) hold the purified main effect: they are added to the
    additive part and subtracted from the deep part, so `forward` does not need them.
    """

    def __init__(self, additive: AdditiveEnsemble | None, deep: nn.Module | None, n_trials: int):
        super().__init__()
        self.additive = additive
        self.deep = deep
        self.n_trials = int(n_trials)
        P = additive.w.shape[1] if additive is not None else 0
        dtype = additive.w.dtype if additive is not None else torch.float32
        self.register_buffer("shift_w", torch.zeros(n_trials, P, dtype=dtype))
        self.register_buffer("shift_c", torch.zeros(n_trials, dtype=dtype))
        # Missing values: the purified main effect of each feature's missing indicator (T, m),
        # only when the additive part has a `nan_value` (features with missing values).
        nan_value = None if additive is None else getattr(additive, "nan_value", None)
        self.register_buffer(
            "shift_nan", None if nan_value is None else torch.zeros_like(nan_value.detach())
        )

    def _deep(self, x, phi):
        if getattr(self.deep, "uses_phi", False):
            return self.deep(x, phi)
        return self.deep(x)

    def forward(self, x: torch.Tensor, phi=None) -> torch.Tensor:
        """``additive(phi) + deep(x)`` (Eq. 9), (T, B): the raw output."""
        out = None
        if self.additive is not None:
            out = self.additive(phi)
        if self.deep is not None:
            d = self._deep(x, phi)
            out = d if out is None else out + d
        if out is None:
            raise RuntimeError("PiLiDEnsemble has neither an additive nor a deep component")
        return out

    def shift_terms(self, phi) -> torch.Tensor:
        """The main effects purification moved out of the deep part (`purify_`), per feature
        (T, B, m): the shift's piecewise-linear term, its constant split evenly over the m
        features and, for a missing value, its shift; they sum to the deep part's main effect."""
        extra = piecewise_terms(self.shift_w, self.additive.starts, *phi)
        extra = extra + (self.shift_c / phi[0].shape[2])[:, None, None]
        shift_nan = getattr(self, "shift_nan", None)
        if len(phi) > 2 and shift_nan is not None:  # missing values' purified shift
            extra = extra + phi[2] * shift_nan.unsqueeze(1)
        return extra

    def decompose(self, x: torch.Tensor, phi) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(u_j(x) per feature (T, B, m) incl. the purified shift, deep part (T, B))."""
        terms = deep = None
        shift = None
        if self.additive is not None:
            terms = self.additive.terms(phi)
            extra = self.shift_terms(phi)
            terms = terms + extra
            shift = extra.sum(2)
        if self.deep is not None:
            deep = self._deep(x, phi)
            if shift is not None:
                deep = deep - shift
        return terms, deep

    @torch.no_grad()
    def purify_(
        self,
        x: torch.Tensor,
        phi,
        chunk: int = 8192,
        weights=None,
        roughness=None,
        matrix_free: bool = False,
    ) -> None:
        """Move the deep part's main effect into the additive part (generalised fANOVA).

        Projects the deep output on the rows `x` (T, n, m) (compact Phi `phi`, each (T, n, m))
        onto the span of Phi (with an intercept) by ridge least squares, trial by trial, and
        stores the projection in `shift_w`, `shift_c`. Predictions do not change. With
        missing values (``phi`` has the indicators ``miss``) the indicator columns of the
        features with missing values join Phi in the projection (their share goes to
        `shift_nan`), so the deep part keeps no main effect of missingness either. `weights`
        (T, n; sample weights, None: unweighted) makes the projection a weighted least squares.
        `roughness` (T, P - 1; `pilid.nn.additive.difference_penalty`'s band, None: none) makes
        it the penalised least squares of PiLiD's ``smoothness`` term, so that the moved main
        effect is as smooth as training holds the shapes: without it, many pieces would pass the
        noise of the MLP's main effect (and of the interactions' sample projection) into the
        shapes. A Phi wider than `pilid.nn.least_squares.DENSE_COLUMNS` columns is projected
        matrix-free (`pilid.nn.least_squares.ridge_solve_compact`; monotone features' columns held
        at 0), in memory linear in P; so is any Phi with `matrix_free` (the rows of a large
        table's sample: work linear in the rows, not in P squared).
        """
        if self.additive is None or self.deep is None:
            return
        was_training = self.training
        self.eval()
        col, frac = phi[0], phi[1]
        miss = phi[2] if len(phi) > 2 else None  # missing-value indicators (T, n, m)
        n = x.shape[1]
        deep = torch.cat(
            [
                self._deep(x[:, s : s + chunk], tuple(p[:, s : s + chunk] for p in phi))
                for s in range(0, n, chunk)
            ],
            dim=1,
        )
        # Remove the part already moved (without a roughness penalty purifying twice is a no-op).
        deep = deep - piecewise_terms(self.shift_w, self.additive.starts, col, frac).sum(2)
        deep = deep - self.shift_c[:, None]
        shift_nan = getattr(self, "shift_nan", None)
        if miss is not None and shift_nan is not None:
            deep = deep - (miss * shift_nan.unsqueeze(1)).sum(2)
        P = self.shift_w.shape[1]
        sign = self.additive.sign
        feature, mask = self.additive.feature, self.additive.mask
        for t in range(x.shape[0]):  # one dense Phi at a time keeps memory at n x P
            lacking = None  # features with missing values: their indicator columns join Phi
            if miss is not None and shift_nan is not None:
                lacking = torch.nonzero(miss[t].any(0)).flatten()
            rows = None if weights is None else weights[t : t + 1]
            if P > DENSE_COLUMNS or matrix_free:  # matrix-free, memory linear in P
                extra = None if lacking is None else miss[t][:, lacking][None]
                one = slice(t, t + 1)
                design = CompactPhi(col[one], frac[one], feature[one], mask[one], extra)
                free = None
                if sign is not None:  # monotone features get no shift: their columns held at 0
                    free = torch.ones(1, design.shape[2], dtype=torch.bool, device=x.device)
                    free[0, :P] = sign[t] == 0
                w, c = ridge_solve_compact(
                    design,
                    deep[t : t + 1],
                    weights=rows,
                    roughness=None if roughness is None else roughness[t : t + 1],
                    free=free,
                )
                self._add_shift(t, w, c, lacking)
                continue
            dense = phi_dense(col[t], frac[t], feature[t])
            if lacking is not None:
                dense = torch.cat([dense, miss[t][:, lacking]], dim=1)
            if sign is not None:  # monotone features get no shift: project on the others
                free = torch.ones(dense.shape[1], dtype=torch.bool, device=dense.device)
                free[:P] = sign[t] == 0
                free = torch.nonzero(free).flatten()
                w = torch.zeros(1, dense.shape[1], dtype=dense.dtype, device=dense.device)
                if len(free):
                    pen = None
                    if roughness is not None:  # the penalty of the free pieces among them
                        pen = _kept_band(roughness[t : t + 1], free[free < P])
                    w_free, c = ridge_solve(
                        dense[None][:, :, free], deep[t : t + 1], weights=rows, roughness=pen
                    )
                    w = w.index_copy(1, free, w_free)
                else:  # every feature constrained: the deep part's (weighted) mean alone
                    r = torch.ones_like(deep[t : t + 1]) if rows is None else rows
                    c = (deep[t : t + 1] * r).sum(1) / r.sum(1)
            else:
                pen = None if roughness is None else roughness[t : t + 1]
                w, c = ridge_solve(dense[None], deep[t : t + 1], weights=rows, roughness=pen)
            self._add_shift(t, w, c, lacking)
        self.train(was_training)

    def _add_shift(self, t, w, c, lacking) -> None:
        """Trial t's projection (w (1, P + k), c (1,)) into `shift_w`, `shift_c`, `shift_nan`."""
        P = self.shift_w.shape[1]
        self.shift_w[t] += w[0, :P] * self.additive.mask[t]
        self.shift_c[t] += c[0]
        if lacking is not None and w.shape[1] > P:
            self.shift_nan[t, lacking] += w[0, P:]


def _kept_band(band: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
    """The `pilid.nn.additive.difference_penalty` band (1, P - 1) of the columns `kept` (sorted)
    alone: a link between two kept columns that were neighbours, 0 elsewhere (the penalty
    matrix's rows and columns `kept`: a monotone feature is left out whole, and no link
    crosses features)."""
    if len(kept) < 2:
        return band[:, :0]
    linked = kept[1:] == kept[:-1] + 1
    inside = kept[:-1].clamp_max(band.shape[1] - 1)
    return torch.where(linked, band[:, inside], torch.zeros_like(band[:, inside]))
