"""The lever ``deep_heads=k``: one additive part with k deep heads, trained as TabM trains its k
members.

PiLiD's bag (`pilid.models.bagging`) gives each of its members an additive part and an MLP of
their own. TabM (Gorishniy et al., ICLR 2025) trains k MLPs as one model, its prediction their
mean, on the mean of the k members' losses (not the loss of their mean), so that each member
fits the target by itself. `HeadsMLP` is that deep part beside one additive part: for each of
PiLiD's T trials, k independent MLPs of Eq. 6-8 (Guo et al., IJCAI 2020; `pilid.nn.mlp`), the
deep output of Eq. 9 their mean

    d(x) = (1/k) sum_i h_i(x).

With the additive part a(x), the mean of the heads' squared errors is the squared error of
their mean plus the heads' spread,

    (1/k) sum_i (a + h_i - y)^2 = (a + d - y)^2 + (1/k) sum_i (h_i - d)^2,

so regression trains on the mean of the heads' losses exactly when `HeadSpread` adds the spread
to the loss. For the logistic loss the spread enters at the loss's second-order term where it is
largest (p = 1/2): (1/8) (1/k) sum_i (h_i - d)^2, the mean of the heads' losses to second order
at most. The spread is taken in the forward pass the loss reads (`HeadsMLP.spread`, training
mode only), as the plain mean over the batch's rows: with sample weights the loss is weighted
and the spread is not.

Head 0 of trial t draws its start from the trial's own stream (`pilid.streams.STREAM_DEEP`), as
`pilid.nn.mlp.EnsembleMLP` does, so ``k=1`` starts at PiLiD's MLP's weights (its products are
taken in another order, so a fit moves in float32's last digits); head i > 0 from the
seed sequence (seed, STREAM_DEEP, i). Every weight has the trials as its first dimension (the
heads second), so the trainer's per-trial early stopping and the T=1 copy of a trial work as for
PiLiD's MLP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pilid.nn.mlp import check_hidden_layers, hidden_layers_start
from pilid.nn.pairs import DeepWithPairs
from pilid.streams import STREAM_DEEP, trial_generator

__all__ = ["HeadSpread", "HeadsBuilder", "HeadsMLP", "head_generator"]

#: The logistic loss's largest second derivative, p (1 - p) at p = 1/2, halved: the factor of
#: the heads' spread in the second-order term of the mean of their losses.
LOGISTIC_SPREAD = 0.125


def head_generator(seed: int, head: int) -> torch.Generator:
    """Head `head`'s generator of the trial with seed `seed`: the trial's own deep stream for
    head 0, else one seeded by (seed, STREAM_DEEP, head) alone."""
    if head == 0:
        return trial_generator(seed, STREAM_DEEP)
    state = np.random.SeedSequence([int(seed) % (2**63), STREAM_DEEP, int(head)]).generate_state(2)
    return torch.Generator().manual_seed((int(state[0]) << 31) | (int(state[1]) >> 1))


class HeadsMLP(nn.Module):
    """k MLPs of Eq. 6-8 for each of T = len(seeds) trials (module docstring): ``forward(x)``
    (T, B, m) -> their mean (T, B); in training mode ``spread`` holds the heads' mean squared
    deviation from it, (T,)."""

    def __init__(
        self,
        n_inputs: int,
        hidden_layers: Sequence[int],
        sigma: float | None,
        seeds: Sequence[int],
        k: int,
        dtype=torch.float32,
    ):
        super().__init__()
        T, self.k = len(seeds), int(k)
        gens = [head_generator(s, i) for s in seeds for i in range(self.k)]
        sizes = (int(n_inputs), *check_hidden_layers(hidden_layers))
        weights, biases = hidden_layers_start(sizes, sigma, gens, dtype)
        self.weights = nn.ParameterList(
            nn.Parameter(w.detach().view(T, self.k, *w.shape[1:])) for w in weights
        )
        self.biases = nn.ParameterList(
            nn.Parameter(b.detach().view(T, self.k, *b.shape[1:])) for b in biases
        )
        self.out_w = nn.Parameter(torch.zeros(T, self.k, sizes[-1], 1, dtype=dtype))
        self.out_b = nn.Parameter(torch.zeros(T, self.k, 1, 1, dtype=dtype))
        self.spread: torch.Tensor | None = None

    def heads(self, x: torch.Tensor) -> torch.Tensor:
        """Every head's output (T, k, B) for inputs `x` (T, B, m)."""
        h = x.unsqueeze(1)
        for w, b in zip(self.weights, self.biases):
            h = torch.relu(torch.matmul(h, w) + b)
        return (torch.matmul(h, self.out_w) + self.out_b).squeeze(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The heads' mean (T, B); in training mode `spread` is set from the same outputs."""
        out = self.heads(x)
        mean = out.mean(1)
        self.spread = (out - mean.unsqueeze(1)).square().mean((1, 2)) if self.training else None
        return mean


@dataclass(frozen=True)
class HeadsBuilder:
    """The spec's deep-part builder (`pilid.train.TrainSpec.build_deep`) of `HeadsMLP`."""

    hidden_layers: Sequence[int]
    sigma: float | None
    k: int

    def __call__(self, n_inputs: int, seeds: Sequence[int]) -> HeadsMLP:
        """The deep part of ``len(seeds)`` trials on `n_inputs` deep inputs."""
        return HeadsMLP(n_inputs, self.hidden_layers, self.sigma, list(seeds), self.k)


@dataclass(frozen=True)
class HeadSpread:
    """The extra loss term (``TrainConfig.extra_loss``, ``term(model, x) -> (T,)``) that makes
    the loss the mean of the heads' losses (module docstring): ``factor`` (1 for the squared
    error, `LOGISTIC_SPREAD` for the logistic loss) times the spread of the forward pass."""

    factor: float

    def __call__(self, model, x) -> torch.Tensor | None:
        """The spread term of `model`'s (a `pilid.nn.ensemble.PiLiDEnsemble`) last forward."""
        deep = model.deep.deep if isinstance(model.deep, DeepWithPairs) else model.deep
        spread = getattr(deep, "spread", None)
        return None if spread is None else self.factor * spread
