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
purified deep part has no piecewise-linear main effect left on the training data.
"""

from __future__ import annotations

import torch
from torch import nn

from pilid.nn.additive import AdditiveEnsemble, piecewise_terms, ridge_solve
from pilid.nn.piecewise import phi_dense


class PiLiDEnsemble(nn.Module):
    """Eq. (9) for T trials: ``out = additive(phi) + deep(x)``, each (T, B); either may be None.

    `x` is (T, B, m); `phi` is Phi in compact form ``(col, frac)``, each (T, B, m)
    (`pilid.nn.piecewise.phi_compact`).

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

    def decompose(self, x: torch.Tensor, phi) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(u_j(x) per feature (T, B, m) incl. the purified shift, deep part (T, B))."""
        terms = deep = None
        shift = None
        if self.additive is not None:
            terms = self.additive.terms(phi)
            m = terms.shape[2]
            extra = piecewise_terms(self.shift_w, self.additive.starts, *phi)
            extra = extra + (self.shift_c / m)[:, None, None]
            terms = terms + extra
            shift = extra.sum(2)
        if self.deep is not None:
            deep = self._deep(x, phi)
            if shift is not None:
                deep = deep - shift
        return terms, deep

    @torch.no_grad()
    def purify_(self, x: torch.Tensor, phi, chunk: int = 8192) -> None:
        """Move the deep part's main effect into the additive part (generalised fANOVA).

        Projects the deep output on the rows `x` (T, n, m) (compact Phi `phi`, each (T, n, m))
        onto the span of Phi (with an intercept) by ridge least squares, trial by trial, and
        stores the projection in `shift_w`, `shift_c`. Predictions do not change.
        """
        if self.additive is None or self.deep is None:
            return
        was_training = self.training
        self.eval()
        col, frac = phi
        n = x.shape[1]
        deep = torch.cat(
            [
                self._deep(x[:, s : s + chunk], (col[:, s : s + chunk], frac[:, s : s + chunk]))
                for s in range(0, n, chunk)
            ],
            dim=1,
        )
        # Remove the part already moved (purifying twice is a no-op).
        deep = deep - piecewise_terms(self.shift_w, self.additive.starts, col, frac).sum(2)
        deep = deep - self.shift_c[:, None]
        for t in range(x.shape[0]):  # one dense Phi at a time keeps memory at n x P
            dense = phi_dense(col[t], frac[t], self.additive.feature[t])
            w, c = ridge_solve(dense[None], deep[t : t + 1])
            self.shift_w[t] += w[0] * self.additive.mask[t]
            self.shift_c[t] += c[0]
        self.train(was_training)
