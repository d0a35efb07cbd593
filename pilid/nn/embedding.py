"""The deep part built as TabM builds its own: an MLP on piecewise-linear embeddings of every
feature (beyond the paper).

TabM (Gorishniy et al., ICLR 2025) feeds its MLP with piecewise-linear embeddings of the numeric
features (`rtdl_num_embeddings.PiecewiseLinearEmbeddings`, "version B", without an activation;
Gorishniy, Rubachev & Babenko, NeurIPS 2022). `EmbeddedMLP` is that deep part for PiLiD's T
trials, written here because the packages' layers have no trial dimension: it reads compact
Phi (`pilid.nn.piecewise.phi_compact`), i.e. the piecewise-linear encoding on PiLiD's own
characteristic points (Definition 1), where the packages bin the features anew. Feature j's
embedding (d numbers) is

    e_j(x) = b_j + w_j u_j + sum_k Phi_jk(x) E_jk  (+ M_j where x_j is missing),

with u_j = (piece + fraction) / gamma_j - 1/2 its position on its pieces, (w_j, b_j) TabM's
linear embedding (``LinearEmbeddings``, uniform in +-1/sqrt(d)), E_jk the piecewise-linear
part's d numbers per Phi column (version B: 0 at the start, so the embedding starts linear) and
M_j a missing value's own. Phi_jk is 1 on the pieces before x_j's, its fraction on that piece
and 0 after it (Definition 2), so the sum is a cumulative sum of E read at x_j's piece: a
categorical feature's level gets a vector of its own. The m embeddings, flattened, enter the
MLP of Eq. 6-8 (`pilid.nn.mlp.EnsembleMLP`'s layers and start). The trials of one ensemble
share Phi's layout (`EmbeddedBuilder` holds one `pilid.nn.piecewise.Knots`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pilid.nn.mlp import check_hidden_layers, hidden_layers_start
from pilid.nn.piecewise import Knots
from pilid.streams import STREAM_DEEP, trial_generator

__all__ = ["EMBEDDING_SIZE", "EmbeddedBuilder", "EmbeddedMLP", "embeddings"]

#: d, the numbers of each feature's embedding: TabM's (``d_embedding=16``).
EMBEDDING_SIZE = 16


def embeddings(E, lin_w, lin_b, miss_e, starts, pieces, phi) -> torch.Tensor:
    """The features' embeddings (T, B, m, d) from compact Phi ``(col, frac[, miss, ...])``
    (module docstring): E (T, P, d), lin_w / lin_b / miss_e (T, m, d), starts / pieces (T, m)."""
    col, frac = phi[0], phi[1]
    T, B, m = col.shape
    d = E.shape[2]
    before = torch.cumsum(E, dim=1) - E  # sum of E over the columns before each column
    flat = col.reshape(T, B * m, 1).expand(T, B * m, d)
    at = torch.gather(before, 1, flat).view(T, B, m, d)
    own = torch.gather(E, 1, flat).view(T, B, m, d)
    first = torch.gather(before, 1, starts.unsqueeze(2).expand(T, m, d)).unsqueeze(1)
    ple = at - first + frac.unsqueeze(3) * own
    u = (col - starts.unsqueeze(1)).to(frac.dtype) + frac
    u = u / pieces.unsqueeze(1) - 0.5
    out = ple + u.unsqueeze(3) * lin_w.unsqueeze(1) + lin_b.unsqueeze(1)
    if len(phi) > 2:
        out = out + phi[2].unsqueeze(3) * miss_e.unsqueeze(1)
    return out


class EmbeddedMLP(nn.Module):
    """TabM's deep part for T = len(seeds) trials (module docstring): ``forward(x, phi) ->
    (T, B)``, reading compact Phi (the deep input `x` is not read)."""

    uses_phi = True

    def __init__(
        self,
        hidden_layers: Sequence[int],
        sigma: float | None,
        seeds: Sequence[int],
        knots: Knots,
        d: int = EMBEDDING_SIZE,
        dtype=torch.float32,
    ):
        super().__init__()
        T, m = len(seeds), knots.n_features
        gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
        pieces = torch.as_tensor(knots.n_pieces, dtype=dtype)
        starts = torch.as_tensor(knots.starts, dtype=torch.long)
        self.register_buffer("starts", starts.expand(T, m).clone())
        self.register_buffer("pieces", pieces.expand(T, m).clone())
        bound = float(d) ** -0.5
        self.lin_w = nn.Parameter(uniform_start(gens, (m, d), bound, dtype))
        self.lin_b = nn.Parameter(uniform_start(gens, (m, d), bound, dtype))
        self.E = nn.Parameter(torch.zeros(T, int(knots.n_columns), d, dtype=dtype))
        self.miss_e = nn.Parameter(torch.zeros(T, m, d, dtype=dtype))
        sizes = (m * int(d), *check_hidden_layers(hidden_layers))
        self.weights, self.biases = hidden_layers_start(sizes, sigma, gens, dtype)
        self.out_w = nn.Parameter(torch.zeros(T, sizes[-1], 1, dtype=dtype))
        self.out_b = nn.Parameter(torch.zeros(T, 1, 1, dtype=dtype))

    def embed(self, phi) -> torch.Tensor:
        """The flattened embeddings (T, B, m * d) of compact Phi `phi`: the MLP's input."""
        e = embeddings(self.E, self.lin_w, self.lin_b, self.miss_e, self.starts, self.pieces, phi)
        return e.flatten(2)

    def forward(self, x: torch.Tensor, phi) -> torch.Tensor:
        """The MLP's output (T, B) on the embeddings of `phi` (Eq. 6-8 on e(x))."""
        h = self.embed(phi)
        for w, b in zip(self.weights, self.biases):
            h = torch.relu(torch.baddbmm(b, h, w))
        return torch.baddbmm(self.out_b, h, self.out_w).squeeze(-1)


def uniform_start(gens, shape, bound: float, dtype) -> torch.Tensor:
    """(T, *shape) uniform in +-bound, trial t's drawn from its generator (TabM's start of the
    linear embeddings)."""
    return torch.stack(
        [(torch.rand(shape, generator=g, dtype=dtype) * 2.0 - 1.0) * bound for g in gens]
    )


@dataclass(frozen=True)
class EmbeddedBuilder:
    """The spec's deep-part builder (`pilid.train.TrainSpec.build_deep`) of `EmbeddedMLP` on
    the Phi layout of `knots` (the deep input's width is not read)."""

    hidden_layers: Sequence[int]
    sigma: float | None
    knots: Knots
    d: int = EMBEDDING_SIZE

    def __call__(self, n_inputs: int, seeds: Sequence[int]) -> EmbeddedMLP:
        """The deep part of ``len(seeds)`` trials."""
        return EmbeddedMLP(self.hidden_layers, self.sigma, list(seeds), self.knots, self.d)
