"""The levers ``deep_embedding=d``, ``deep_dropout=p`` and ``deep_clip=c``: the deep part built as
TabM and RealMLP build theirs.

TabM (Gorishniy et al., ICLR 2025) feeds its MLP with piecewise-linear embeddings of the numeric
features (`rtdl_num_embeddings.PiecewiseLinearEmbeddings`, "version B", without an activation;
Gorishniy, Rubachev & Babenko, NeurIPS 2022) and trains it with dropout. `EmbeddedMLP` is that
deep part for PiLiD's T trials, written here because the packages' layers have no trial
dimension: it reads compact Phi (`pilid.nn.piecewise.phi_compact`), i.e. the piecewise-linear
encoding on PiLiD's own characteristic points (Definition 1), where the packages bin the
features anew. Feature j's embedding (d numbers) is

    e_j(x) = b_j + w_j u_j + sum_k Phi_jk(x) E_jk  (+ M_j where x_j is missing),

with u_j = (piece + fraction) / gamma_j - 1/2 its position on its pieces, (w_j, b_j) TabM's
linear embedding (``LinearEmbeddings``, uniform in +-1/sqrt(d)), E_jk the piecewise-linear
part's d numbers per Phi column (version B: 0 at the start, so the embedding starts linear) and
M_j a missing value's own. Phi_jk is 1 on the pieces before x_j's, its fraction on that piece
and 0 after it (Definition 2), so the sum is a cumulative sum of E read at x_j's piece: a
categorical feature's level gets a vector of its own. The m embeddings, flattened, enter the
MLP of Eq. 6-8 (`pilid.nn.mlp.EnsembleMLP`'s layers and start), each hidden layer followed by
dropout with rate p in training; ``deep_embedding=None`` keeps the standardised columns as
its input (``deep_dropout`` alone adds dropout to PiLiD's MLP). ``deep_clip=c`` reads them
through RealMLP's smooth clipping (Holzmüller et al., NeurIPS 2024), x / sqrt(1 + (x / c)^2):
about x near 0, never beyond c.

Dropout's masks come from a generator of the module's own, seeded from its first trial's seed,
so a fit is reproduced. The trials of one ensemble share Phi's layout (`EmbeddedBuilder` holds
one `pilid.nn.piecewise.Knots`: a bag's members and a choice's candidates read the bag's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pilid.nn.mlp import check_hidden_layers, hidden_layers_start
from pilid.nn.piecewise import Knots
from pilid.streams import STREAM_DEEP, trial_generator

__all__ = ["EmbeddedBuilder", "EmbeddedMLP", "embeddings"]


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
    (T, B)``. With ``d=None`` it reads the deep input `x` (T, B, m') as PiLiD's MLP does."""

    def __init__(
        self,
        n_inputs: int,
        hidden_layers: Sequence[int],
        sigma: float | None,
        seeds: Sequence[int],
        knots: Knots | None,
        d: int | None,
        dropout: float,
        clip: float | None = None,
        dtype=torch.float32,
    ):
        super().__init__()
        T = len(seeds)
        gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
        self.uses_phi = d is not None
        self.dropout = float(dropout)
        self.clip = None if clip is None else float(clip)
        # dropout's masks: a generator apart from the trials' own (their seed offset by a prime)
        self._mask_gen = torch.Generator().manual_seed(int(seeds[0]) + 7919)
        if d is not None:
            m = knots.n_features
            pieces = torch.as_tensor(knots.n_pieces, dtype=dtype)
            starts = torch.as_tensor(knots.starts, dtype=torch.long)
            self.register_buffer("starts", starts.expand(T, m).clone())
            self.register_buffer("pieces", pieces.expand(T, m).clone())
            bound = float(d) ** -0.5
            self.lin_w = nn.Parameter(_uniform(gens, (m, d), bound, dtype))
            self.lin_b = nn.Parameter(_uniform(gens, (m, d), bound, dtype))
            self.E = nn.Parameter(torch.zeros(T, int(knots.n_columns), d, dtype=dtype))
            self.miss_e = nn.Parameter(torch.zeros(T, m, d, dtype=dtype))
            n_inputs = m * int(d)
        sizes = (int(n_inputs), *check_hidden_layers(hidden_layers))
        self.weights, self.biases = hidden_layers_start(sizes, sigma, gens, dtype)
        self.out_w = nn.Parameter(torch.zeros(T, sizes[-1], 1, dtype=dtype))
        self.out_b = nn.Parameter(torch.zeros(T, 1, 1, dtype=dtype))

    def forward(self, x: torch.Tensor, phi=None) -> torch.Tensor:
        """The MLP's output (T, B) on the embeddings of `phi` (or on `x` without them)."""
        if self.uses_phi:
            e = embeddings(
                self.E, self.lin_w, self.lin_b, self.miss_e, self.starts, self.pieces, phi
            )
            h = e.flatten(2)
        else:
            h = x if self.clip is None else x / torch.sqrt(1.0 + (x / self.clip).square())
        for w, b in zip(self.weights, self.biases):
            h = torch.relu(torch.baddbmm(b, h, w))
            if self.training and self.dropout > 0:
                keep = torch.empty(h.shape, dtype=h.dtype).bernoulli_(
                    1.0 - self.dropout, generator=self._mask_gen
                )
                h = h * keep.to(h.device) / (1.0 - self.dropout)
        return torch.baddbmm(self.out_b, h, self.out_w).squeeze(-1)


def _uniform(gens, shape, bound: float, dtype) -> torch.Tensor:
    """(T, *shape) uniform in +-bound, trial t's from its generator."""
    return torch.stack(
        [(torch.rand(shape, generator=g, dtype=dtype) * 2.0 - 1.0) * bound for g in gens]
    )


@dataclass(frozen=True)
class EmbeddedBuilder:
    """The spec's deep-part builder (`pilid.train.TrainSpec.build_deep`) of `EmbeddedMLP`."""

    hidden_layers: Sequence[int]
    sigma: float | None
    knots: Knots | None
    d: int | None
    dropout: float
    clip: float | None = None

    def __call__(self, n_inputs: int, seeds: Sequence[int]) -> EmbeddedMLP:
        """The deep part of ``len(seeds)`` trials on `n_inputs` deep inputs."""
        return EmbeddedMLP(
            n_inputs,
            self.hidden_layers,
            self.sigma,
            list(seeds),
            self.knots,
            self.d,
            self.dropout,
            self.clip,
        )
