"""The levers ``deep_embedding=d``, ``deep_dropout=p`` and ``deep_clip=c``: the deep part built as
TabM and RealMLP build theirs.

``deep_embedding=d`` gives every unit the library's embedded deep part
(`pilid.nn.embedding.EmbeddedMLP`: TabM's piecewise-linear embeddings of compact Phi, d numbers
per feature) in place of PiLiD's MLP, with its penalty as the estimator's ``reg_groups`` says
(the library's ``deep_input="auto"`` trains it free of Eq. 11's penalty beside PiLiD's own);
``deep_dropout=p`` follows each hidden layer with dropout of rate p in training, as TabM
trains its MLP; ``deep_embedding=None`` keeps the standardised columns as its input
(``deep_dropout`` alone adds dropout to PiLiD's MLP). ``deep_clip=c`` reads them through
RealMLP's smooth clipping (Holzmüller et al., NeurIPS 2024), x / sqrt(1 + (x / c)^2): about x
near 0, never beyond c.

Dropout's masks come from a generator of the module's own, seeded from its first trial's seed,
so a fit is reproduced. The trials of one ensemble share Phi's layout (`EmbeddedBuilder` holds
one `pilid.nn.piecewise.Knots`: a bag's members and a choice's candidates read the bag's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pilid.nn import embedding
from pilid.nn.mlp import check_hidden_layers, hidden_layers_start
from pilid.nn.piecewise import Knots
from pilid.streams import STREAM_DEEP, trial_generator

__all__ = ["EmbeddedBuilder", "EmbeddedMLP"]


class EmbeddedMLP(embedding.EmbeddedMLP):
    """The library's embedded deep part with dropout (rate ``dropout``) after each hidden layer
    in training; with ``d=None`` the MLP reads the deep input `x` (T, B, m') as PiLiD's does,
    through smooth clipping at ``clip`` when given (module docstring): ``forward(x, phi) ->
    (T, B)``."""

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
        if d is not None:
            super().__init__(hidden_layers, sigma, seeds, knots, d, dtype)
        else:  # PiLiD's MLP on the deep input, its layers started as `EnsembleMLP` starts them
            nn.Module.__init__(self)
            T = len(seeds)
            gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
            sizes = (int(n_inputs), *check_hidden_layers(hidden_layers))
            self.weights, self.biases = hidden_layers_start(sizes, sigma, gens, dtype)
            self.out_w = nn.Parameter(torch.zeros(T, sizes[-1], 1, dtype=dtype))
            self.out_b = nn.Parameter(torch.zeros(T, 1, 1, dtype=dtype))
        self.uses_phi = d is not None
        self.dropout = float(dropout)
        self.clip = None if clip is None else float(clip)
        # dropout's masks: a generator apart from the trials' own (their seed offset by a prime)
        self._mask_gen = torch.Generator().manual_seed(int(seeds[0]) + 7919)

    def forward(self, x: torch.Tensor, phi=None) -> torch.Tensor:
        """The MLP's output (T, B) on the embeddings of `phi` (or on `x` without them)."""
        if self.uses_phi:
            h = self.embed(phi)
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
