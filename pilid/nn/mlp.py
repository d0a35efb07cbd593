"""The deep (nonlinear) component of PiLiD: an MLP for T trials at once (Eq. 6-8).

Guo et al., IJCAI 2020, Section 3.1:

    h^0 = x,   h^l = relu(W^l h^(l-1) + b^l),  l = 1..L,   y = (w^y)^T h^L + b^y.

Every weight carries a leading trial dimension T, ``W^l`` is (T, p_(l-1), p_l), and one
``torch.baddbmm`` evaluates a layer for all trials. Initialisation (Algorithm 1, step 2):
W^l ~ N(0, sigma^2) and b^l = 0 (``sigma=None``: He-normal scale sqrt(2 / fan_in) per layer,
which keeps a deep ReLU net's signal alive at the start). Algorithm 1 leaves the output layer
(w^y, b^y) unspecified; it starts at zero here, so that before the first training step the
model's output is exactly the additive component's (the least-squares fit with
``init="lstsq"``). Trial t's weights are drawn from its own generator, so a trial's start does
not depend on how many trials share the batch.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pilid.errors import PilidError
from pilid.streams import STREAM_DEEP, trial_generator

#: The paper's MLP (Section 4): six hidden layers, used by PiLiD, the MLP baseline and GA's teacher.
PAPER_HIDDEN_LAYERS = (100, 200, 400, 400, 200, 100)


def layer_sizes(layers, allow_empty: bool = True) -> tuple[int, ...] | None:
    """`layers` as a tuple of ints when it is a sequence of whole numbers >= 1, else None.

    Empty is valid only with `allow_empty` (an MLP with no hidden layer is a linear output).
    Sizes may be integral floats (16.0); bools and strings are not sizes.
    """
    if isinstance(layers, str | bytes):
        return None
    try:
        values = list(layers)
    except TypeError:
        return None
    for h in values:
        if isinstance(h, bool) or not isinstance(h, numbers.Real):
            return None
        if not (float(h).is_integer() and h >= 1):
            return None
    if not values and not allow_empty:
        return None
    return tuple(int(h) for h in values)


def check_hidden_layers(hidden_layers) -> tuple[int, ...]:
    """Validate `hidden_layers` (a sequence of whole numbers >= 1; empty = linear output)."""
    sizes = layer_sizes(hidden_layers)
    if sizes is None:
        raise PilidError(
            f"hidden_layers={hidden_layers!r} is invalid; give a list of layer sizes >= 1, e.g. "
            "[100, 200, 400, 400, 200, 100] (the paper's)"
        )
    return sizes


@dataclass(frozen=True)
class MLPBuilder:
    """The deep part of Eq. (9) as `pilid.train.TrainSpec` builds it: ``builder(n_features,
    seeds)`` is `EnsembleMLP` of ``hidden_layers`` (None: no deep part) and ``sigma``."""

    hidden_layers: Sequence[int] | None
    sigma: float | None = None

    def __call__(self, n_features: int, seeds: Sequence[int]) -> EnsembleMLP | None:
        """The MLP for ``len(seeds)`` trials on `n_features` inputs, or None."""
        if self.hidden_layers is None:
            return None
        return EnsembleMLP(n_features, self.hidden_layers, self.sigma, seeds)


def hidden_layers_start(sizes, sigma, gens, dtype) -> tuple[nn.ParameterList, nn.ParameterList]:
    """The hidden layers' start (Algorithm 1, step 2) for layer `sizes` (inputs first), one
    trial per generator of `gens`: W^l ~ N(0, sigma^2) (He-normal with ``sigma=None``), each
    trial's drawn in turn from its own generator, and b^l = 0; (weights, biases), each (T, ...)."""
    T = len(gens)
    weights, biases = nn.ParameterList(), nn.ParameterList()
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        std = (2.0 / fan_in) ** 0.5 if sigma is None else float(sigma)
        w = torch.stack(
            [torch.randn(fan_in, fan_out, generator=g, dtype=dtype) * std for g in gens]
        )
        weights.append(nn.Parameter(w))
        biases.append(nn.Parameter(torch.zeros(T, 1, fan_out, dtype=dtype)))
    return weights, biases


class EnsembleMLP(nn.Module):
    """The paper's MLP (Eq. 6-8) for T = len(seeds) trials; forward (T, B, m) -> (T, B)."""

    def __init__(
        self,
        n_features: int,
        hidden_layers: Sequence[int],
        sigma: float | None,
        seeds: Sequence[int],
        dtype=torch.float32,
    ):
        super().__init__()
        sizes = (int(n_features), *check_hidden_layers(hidden_layers))
        T = len(seeds)
        gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
        self.weights, self.biases = hidden_layers_start(sizes, sigma, gens, dtype)
        self.out_w = nn.Parameter(torch.zeros(T, sizes[-1], 1, dtype=dtype))
        self.out_b = nn.Parameter(torch.zeros(T, 1, 1, dtype=dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The MLP's output (T, B) for inputs ``x`` (T, B, m) (Eq. 6-8)."""
        if x.shape[0] == 1 and torch.is_grad_enabled():
            # training one trial: plain matmuls (addmm) beat a batch of one on CPU by ~25 %;
            # prediction keeps baddbmm, whose rows do not depend on the batch size
            h = x[0]
            for w, b in zip(self.weights, self.biases):
                h = torch.relu(torch.addmm(b[0], h, w[0]))
            return torch.addmm(self.out_b[0], h, self.out_w[0]).view(1, -1)
        h = x
        for w, b in zip(self.weights, self.biases):
            h = torch.relu(torch.baddbmm(b, h, w))
        return torch.baddbmm(self.out_b, h, self.out_w).squeeze(-1)
