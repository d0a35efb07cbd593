"""B same-sized MLP blocks over gated inputs (PiLiB, Section 3.3; NIT, Tsang et al. 2018).

Block i sees the inputs through its own first-layer gates, `x * z_i` (one hard-concrete gate per
input feature, `pilid.nn.gates`), so its output can only depend on the features whose gate is
open: the block models the interaction of that group of features. The deep component of PiLiB
(and the whole of NIT) is the sum of the B block outputs (paper: "the whole neural network in the
nonlinear component of PiLiD is replaced with B same-sized smaller neural networks"):

    h_i^0 = x * z_i,  h_i^l = relu(W_i^l h_i^(l-1) + b_i^l),  g_i(x) = w_i^T h_i^L,
    u(x) = b + sum_i g_i(x).

Every weight carries leading (trial, block) dimensions (T, B, ...) and all blocks of all trials are
evaluated together with batched matrix products (einsum), never a Python loop over blocks.
Gating the input is the same as gating the rows of the first-layer weight matrix (the paper's
tilde W^1 * T(G)), which is how it is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from pilid.errors import PilidError
from pilid.nn.gates import BETA, GAMMA, ZETA, HardConcreteGates
from pilid.nn.mlp import layer_sizes
from pilid.streams import STREAM_DEEP, trial_generator


def _check_layers(layers: Sequence[int]) -> tuple[int, ...]:
    sizes = layer_sizes(layers, allow_empty=False)
    if sizes is None:
        raise PilidError(
            f"block_layers={layers!r} must be a non-empty list of whole numbers >= 1, e.g. [16, 8]"
        )
    return sizes


class GatedBlocks(nn.Module):
    """B MLP blocks with hard-concrete input gates, for T = len(seeds) trials at once.

    Input `x` has shape (T, n, m); `forward` returns (T, n), `block_outputs` (T, n, B).
    Weights are Gaussian (Algorithm 1, step 2) with fan-in scaled standard deviations: hidden
    layers `init_scale * sqrt(2 / fan_in)` (He), the output layer `init_scale / sqrt(fan_in * B)`,
    so that the sum of the B blocks starts with an output of about unit scale whatever m and B.
    A near-silent start gives the gates no task gradient (with zero output weights the L0 penalty
    closed a true pair's gates in 7 of 8 seeds of the test problem); a large fixed std (0.5 with
    m = 50 gives an initial output std near 10) swamps the least-squares start of the additive
    part. Biases start at zero. Trial t's weights come from its own generator
    (`pilid.streams.trial_generator(seeds[t], STREAM_DEEP)`), so a trial's start does not depend on
    how many trials share the batch. `gate_lr_scale`, `init_prob`, `beta`,
    `gamma`, `zeta` go to the gates (`pilid.nn.gates.HardConcreteGates`).
    """

    def __init__(
        self,
        n_features: int,
        seeds: Sequence[int],
        n_blocks: int = 20,
        layers: Sequence[int] = (16, 8),
        *,
        init_scale: float = 1.0,
        init_prob: float = 0.9,
        gate_lr_scale: float = 1.0,
        beta: float = BETA,
        gamma: float = GAMMA,
        zeta: float = ZETA,
        output_bias: bool = True,
    ) -> None:
        super().__init__()
        sizes = (int(n_features), *_check_layers(layers))
        if not init_scale > 0:
            raise PilidError(f"init_scale={init_scale!r} must be > 0; e.g. 1.0 (He initialisation)")
        if int(n_blocks) != n_blocks or n_blocks < 1:
            raise PilidError(f"n_blocks={n_blocks!r} must be a whole number >= 1 (the paper: 20)")
        seeds = [int(s) for s in seeds]
        self.n_trials, self.n_blocks = len(seeds), int(n_blocks)
        self.n_features = int(n_features)
        self.layers = sizes[1:]
        self.gates = HardConcreteGates(
            n_blocks,
            n_features,
            seeds,
            init_prob=init_prob,
            lr_scale=gate_lr_scale,
            beta=beta,
            gamma=gamma,
            zeta=zeta,
        )
        gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
        B = self.n_blocks

        def normal(*shape: int, std: float) -> nn.Parameter:
            return nn.Parameter(std * torch.stack([torch.randn(*shape, generator=g) for g in gens]))

        scale = float(init_scale)
        self.weights = nn.ParameterList(
            [normal(B, a, b, std=scale * math.sqrt(2.0 / a)) for a, b in zip(sizes[:-1], sizes[1:])]
        )
        self.biases = nn.ParameterList(
            [nn.Parameter(torch.zeros(self.n_trials, B, b)) for b in sizes[1:]]
        )
        self.out_weight = normal(B, sizes[-1], std=scale / math.sqrt(sizes[-1] * B))
        self.out_bias = nn.Parameter(torch.zeros(self.n_trials)) if output_bias else None

    def _check_input(self, x: torch.Tensor) -> None:
        if x.dim() != 3 or x.shape[0] != self.n_trials or x.shape[2] != self.n_features:
            raise PilidError(
                f"GatedBlocks expects input of shape (T={self.n_trials}, n, m={self.n_features}),"
                f" got {tuple(x.shape)}; stack the trials' batches along the first dimension"
            )

    def block_outputs(
        self,
        x: torch.Tensor,
        gates: torch.Tensor | None = None,
        blocks: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Per-block outputs g_i(x), shape (T, n, B) (without the output bias).

        `gates` (T, B, m) overrides the module's gates (default: `self.gates()`, i.e. sampled in
        training mode, deterministic in evaluation mode). `blocks` (indices) evaluates only those
        blocks, giving (T, n, len(blocks)).
        """
        self._check_input(x)
        z = self.gates() if gates is None else gates
        weights, biases, out_w = list(self.weights), list(self.biases), self.out_weight
        if blocks is not None:
            idx = torch.as_tensor(blocks, dtype=torch.long, device=z.device)
            z = z.index_select(1, idx)
            weights = [w.index_select(1, idx) for w in weights]
            biases = [b.index_select(1, idx) for b in biases]
            out_w = out_w.index_select(1, idx)
        # Gating the inputs of block i == scaling the rows of its first-layer weights.
        w1 = weights[0] * z.unsqueeze(-1).to(weights[0].dtype)
        h = torch.relu(torch.einsum("tnm,tbmh->tnbh", x, w1) + biases[0].unsqueeze(1))
        for w, b in zip(weights[1:], biases[1:]):
            h = torch.relu(torch.einsum("tnbh,tbhk->tnbk", h, w) + b.unsqueeze(1))
        return torch.einsum("tnbh,tbh->tnb", h, out_w)

    def forward(self, x: torch.Tensor, gates: torch.Tensor | None = None) -> torch.Tensor:
        """u(x) = b + sum_i g_i(x), shape (T, n)."""
        out = self.block_outputs(x, gates).sum(-1)
        if self.out_bias is not None:
            out = out + self.out_bias.unsqueeze(1)
        return out

    def expected_order(self) -> torch.Tensor:
        """hat k_i, (T, B)."""
        return self.gates.expected_order()

    def block_features(self) -> torch.Tensor:
        """Boolean (T, B, m): which features each block uses under its deterministic gates."""
        return self.gates.active()
