"""Explicit pairwise piecewise-linear terms on the grid of Phi (beyond the paper).

Guo et al., IJCAI 2020, model interactions with the MLP of the deep component (Eq. 9) and, in
PiLiB, with gated blocks. GA2M (Lou et al., KDD 2013) instead adds explicit pair terms
f_ab(x_a, x_b) for the few pairs its FAST ranking finds. `PairTerms` is that term in PiLiD's own
basis: the tensor product of Definition 2's piecewise-linear basis of the two features,

    f_ab(x_a, x_b) = sum_{k, l} V_ab[k, l] h_k(x_a) h_l(x_b),

with h_k the hat function of characteristic point k (1 at the point, falling linearly to 0 at
its neighbours): f_ab is bilinear on each cell of the grid of the two features' points, equal
to V_ab at the grid's nodes, and continuous. A feature with more than `PAIR_PIECES` pieces is
read on a coarser grid of `PAIR_PIECES` pieces, each a run of its consecutive pieces (with
quantile knots: equal shares of the rows again), so that a pair has at most
(`PAIR_PIECES` + 1)^2 values whatever gamma is; a categorical feature keeps one node per level.
Every value of a feature lies on one piece g with fraction f (compact Phi,
`pilid.nn.piecewise.phi_compact`), i.e. at position (g + f) / ratio on the coarse grid, where
ratio is the feature's pieces over its coarse pieces. A missing or unseen value (piece 0,
fraction 0) reads the grid's first node, the lowest value's. V starts at 0, so the terms add
nothing at the start of training (Algorithm 1's least-squares start is unchanged).

All parameters and buffers carry the trial dimension T, and trials may differ in their pairs and
their characteristic points (each trial's split has its own); they share the number of pairs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["PAIR_PIECES", "DeepWithPairs", "PairTerms", "coarse_pieces"]

#: The most pieces per feature of a pair term's grid (the coarse grid of a finer feature).
PAIR_PIECES = 8


def coarse_pieces(n_pieces: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    """Pieces of each feature on a pair term's grid: its own, at most `PAIR_PIECES` for a
    numeric feature (a categorical one keeps a node per level)."""
    n_pieces = np.asarray(n_pieces, dtype=np.int64)
    return np.where(
        np.asarray(categorical, dtype=bool), n_pieces, np.minimum(n_pieces, PAIR_PIECES)
    )


class PairTerms(nn.Module):
    """Sum over K pairs of f_ab (module docstring), for T trials: forward(phi) -> (T, B).

    `pairs` (T, K, 2): the two feature indices of each pair; `starts` (T, m): each feature's first
    Phi column; `pieces` (T, m): its pieces (Definition 1); `coarse` (T, m): its pieces on the
    pair grid (`coarse_pieces`). The values V are (T, K, G, G), G the largest coarse grid (+1)
    over the pairs' features and trials; nodes beyond a feature's own grid stay unused.
    """

    def __init__(self, pairs, starts, pieces, coarse, dtype=torch.float32):
        super().__init__()
        pairs = torch.as_tensor(np.asarray(pairs), dtype=torch.long)
        starts = torch.as_tensor(np.asarray(starts), dtype=torch.long)
        pieces = torch.as_tensor(np.asarray(pieces), dtype=torch.float64)
        coarse = torch.as_tensor(np.asarray(coarse), dtype=torch.long)
        T, K, _ = pairs.shape
        self.register_buffer("pairs", pairs)
        self.register_buffer("starts", starts)
        self.register_buffer("coarse", coarse)
        self.register_buffer("ratio", (pieces / coarse.clamp_min(1)).to(dtype))
        grid = int(torch.gather(coarse, 1, pairs.reshape(T, -1)).max()) + 1 if K else 2
        self.grid = grid
        self.V = nn.Parameter(torch.zeros(T, K, grid, grid, dtype=dtype))

    def _position(self, col, frac, feature):
        """Node index (T, B, J) and fraction on the coarse grid of the features `feature` (T, J)."""
        T = col.shape[0]
        idx = feature.unsqueeze(1).expand(T, col.shape[1], feature.shape[1])
        local = torch.gather(col, 2, idx) - torch.gather(self.starts, 1, feature).unsqueeze(1)
        ratio = torch.gather(self.ratio, 1, feature).unsqueeze(1)
        pos = (local.to(frac.dtype) + torch.gather(frac, 2, idx)) / ratio
        last = torch.gather(self.coarse, 1, feature).unsqueeze(1)
        node = torch.minimum(pos.floor().long(), last - 1).clamp_min(0)  # the last piece: f = 1
        return node, (pos - node).clamp(0.0, 1.0)

    def terms(self, phi) -> torch.Tensor:
        """Each pair's value f_ab (T, B, K) from compact Phi ``(col, frac, ...)``, (T, B, m):
        the bilinear interpolation of V between the four nodes of the cell, V[k, l] (1 - f_a)
        (1 - f_b) + V[k, l + 1] (1 - f_a) f_b + V[k + 1, l] f_a (1 - f_b) + V[k + 1, l + 1] f_a
        f_b. A node k is at most a feature's coarse pieces - 1 <= G - 2, so k + 1 stays on the
        grid."""
        col, frac = phi[0], phi[1]
        T, B, _ = col.shape
        K, G = self.V.shape[1], self.grid
        node, f = self._position(col, frac, self.pairs.reshape(T, 2 * K))  # both features at once
        node, f = node.view(T, B, K, 2), f.view(T, B, K, 2)
        fa, fb = f[..., 0], f[..., 1]
        base = (torch.arange(K, device=col.device) * G * G).view(1, 1, K)
        corner = (base + node[..., 0] * G + node[..., 1]).reshape(T, B * K)  # V[k, l]
        flat = self.V.reshape(T, K * G * G)
        ga, gb = 1.0 - fa, 1.0 - fb
        out = None  # one gather per node, summed in this order (their gradients too)
        for step, wa, wb in ((0, ga, gb), (1, ga, fb), (G, fa, gb), (G + 1, fa, fb)):
            term = torch.gather(flat, 1, corner + step).view(T, B, K) * wa * wb
            out = term if out is None else out + term
        return out

    def forward(self, phi) -> torch.Tensor:
        """The sum of the K pair terms, (T, B)."""
        return self.terms(phi).sum(2)


class DeepWithPairs(nn.Module):
    """A deep component plus `PairTerms`: ``forward(x, phi) = deep(x) + pairs(phi)``; `deep`
    may be None (the pair terms alone beside the additive part). Both count as the deep part of
    Eq. 9 (`pilid.nn.ensemble.PiLiDEnsemble`: purification moves the pair terms' main effects
    into the shapes too)."""

    uses_phi = True

    def __init__(self, deep: nn.Module | None, pairs: PairTerms):
        super().__init__()
        self.deep = deep
        self.pairs = pairs

    def forward(self, x: torch.Tensor, phi: Sequence[torch.Tensor]) -> torch.Tensor:
        """``deep(x) + pairs(phi)``, (T, B)."""
        out = self.pairs(phi)
        if self.deep is None:
            return out
        inner = self.deep(x, phi) if getattr(self.deep, "uses_phi", False) else self.deep(x)
        return out + inner
