"""Hard-concrete L0 gates (Louizos, Welling & Kingma, ICLR 2018) with a leading trial dimension.

PiLiB (Section 3.3 of Guo et al., IJCAI 2020) and NIT (Tsang et al., NeurIPS 2018) switch the
first-layer inputs of every block with one gate per (block, input feature). A gate is a
hard-concrete random variable with location `log_alpha`, temperature `beta` and stretch limits
`(gamma, zeta)`:

    u ~ U(0, 1),  s = sigmoid((log u - log(1 - u) + log_alpha) / beta),
    z = clamp(s * (zeta - gamma) + gamma, 0, 1).

Its probability of being non-zero has the closed form (Louizos et al., Eq. 12)

    P(z != 0) = sigmoid(log_alpha - beta * log(-gamma / zeta)),

and at evaluation the deterministic gate `clamp(sigmoid(log_alpha) * (zeta - gamma) + gamma, 0, 1)`
is used, so that evaluation draws no random numbers. The expected interaction order of block i
is `k_i = sum_j P(z_ij != 0)` (the paper's hat k_i).

All tensors carry the shape `(T, B, m)`: trials, blocks, input features.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pilid.errors import PilidError
from pilid.streams import STREAM_GATE_INIT, STREAM_GATE_NOISE, trial_generator

BETA = 2.0 / 3.0
GAMMA = -0.1
ZETA = 1.1


def _check_stretch(beta: float, gamma: float, zeta: float) -> None:
    if not beta > 0:
        raise PilidError(f"gate temperature beta={beta!r} must be > 0; the usual value is 2/3")
    if not (gamma < 0 and zeta > 1):
        raise PilidError(
            f"gate stretch limits gamma={gamma!r}, zeta={zeta!r} must satisfy gamma < 0 < 1 < zeta;"
            " the usual values are -0.1 and 1.1"
        )


def prob_nonzero(
    log_alpha: torch.Tensor, beta: float = BETA, gamma: float = GAMMA, zeta: float = ZETA
) -> torch.Tensor:
    """Closed-form P(z != 0) = sigmoid(log_alpha - beta * log(-gamma / zeta)) (Louizos Eq. 12)."""
    return torch.sigmoid(log_alpha - beta * math.log(-gamma / zeta))


def sample_gates(
    log_alpha: torch.Tensor,
    beta: float = BETA,
    gamma: float = GAMMA,
    zeta: float = ZETA,
    *,
    n: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Draw hard-concrete gates (Louizos Eq. 10-11), reparameterised so gradients reach log_alpha.

    Returns the shape of `log_alpha`, or `(n, *log_alpha.shape)` when `n` is given (independent
    draws, used e.g. for Monte-Carlo checks).
    """
    shape = tuple(log_alpha.shape) if n is None else (n, *log_alpha.shape)
    eps = torch.finfo(log_alpha.dtype).tiny
    u = torch.rand(shape, generator=generator, dtype=log_alpha.dtype, device=log_alpha.device)
    u = u.clamp(eps, 1.0 - 1e-7)
    s = torch.sigmoid((torch.log(u) - torch.log1p(-u) + log_alpha) / beta)
    return (s * (zeta - gamma) + gamma).clamp(0.0, 1.0)


def deterministic_gates(
    log_alpha: torch.Tensor, gamma: float = GAMMA, zeta: float = ZETA
) -> torch.Tensor:
    """Evaluation gates clamp(sigmoid(log_alpha) * (zeta - gamma) + gamma, 0, 1) (no sampling)."""
    return (torch.sigmoid(log_alpha) * (zeta - gamma) + gamma).clamp(0.0, 1.0)


def expected_order(
    log_alpha: torch.Tensor, beta: float = BETA, gamma: float = GAMMA, zeta: float = ZETA
) -> torch.Tensor:
    """Expected block order hat k_i = sum_j P(z_ij != 0) (paper, Section 3.3): shape (T, B)."""
    return prob_nonzero(log_alpha, beta, gamma, zeta).sum(-1)


def prob_block_nonempty(
    log_alpha: torch.Tensor, beta: float = BETA, gamma: float = GAMMA, zeta: float = ZETA
) -> torch.Tensor:
    """P(block i has at least one open gate) = 1 - prod_j (1 - P(z_ij != 0)): shape (T, B).

    Gates are independent, so the sum of this over blocks is the expected number of blocks
    with k_i != 0; PiLiB's penalty uses it as the soft count #{i: k_i != 0}.
    """
    p = prob_nonzero(log_alpha, beta, gamma, zeta)
    return 1.0 - torch.exp(torch.log1p(-p.clamp(max=1.0 - 1e-7)).sum(-1))


def pilib_order_penalty(
    log_alpha: torch.Tensor,
    max_order: int,
    lambda0: float,
    beta: float = BETA,
    gamma: float = GAMMA,
    zeta: float = ZETA,
) -> torch.Tensor:
    """PiLiB's L_K' (Section 3.3) per trial, shape (T,).

        L_K' = max(max_i k_i - K, 0) + lambda0 * sum_i (k_i - 2) / n_active,

    with `k_i` the expected order and `n_active = max(1, sum_i P(block i non-empty))` the expected
    number of blocks with k_i != 0 (`prob_block_nonempty`), held constant in the gradient
    (detached). Why this reading of the paper's typesetting:

    - `k_i` is a sum of probabilities and is never exactly 0, so the indicator 1(k_i != 0) needs a
      soft definition; the expected number of non-empty blocks is the one that follows from the
      gate distribution itself and needs no arbitrary threshold.
    - The numerator sums over all B blocks as printed. Its value is mostly negative (empty blocks
      add -2 each), so a differentiable denominator would be rewarded for *opening* gates in empty
      blocks, the opposite of the term's purpose; detaching it makes the term a mean-order
      pressure, lambda0 / n_active on every k_i, that grows as fewer blocks remain in use. This
      keeps shrinking the last blocks to the smallest order the data supports: main effects cost
      nothing in the piecewise-linear component, so blocks settle on the pairs that the additive
      part cannot fit. The constant -2 sets the value (reported in logs) but not the gradient.
    """
    k = expected_order(log_alpha, beta, gamma, zeta)
    excess = (k.max(-1).values - max_order).clamp(min=0.0)
    n_active = prob_block_nonempty(log_alpha, beta, gamma, zeta).sum(-1).clamp(min=1.0)
    return excess + lambda0 * (k - 2.0).sum(-1) / n_active.detach()


def nit_order_penalty(
    log_alpha: torch.Tensor,
    max_order: int,
    lam: float,
    beta: float = BETA,
    gamma: float = GAMMA,
    zeta: float = ZETA,
) -> torch.Tensor:
    """NIT's L_K (Tsang et al. 2018) per trial: max(max_i k_i - K, 0) + lam * mean_i k_i."""
    k = expected_order(log_alpha, beta, gamma, zeta)
    excess = (k.max(-1).values - max_order).clamp(min=0.0)
    return excess + lam * k.mean(-1)


@dataclass(frozen=True)
class GatePenalty:
    """The gates' order penalty as an extra term of the training loss (phases with
    ``penalty=True``): ``penalty(model, x) -> (T,)`` is ``order(log_alpha, max_order, lam)`` of
    the model's deep part's gates, ``order`` `pilib_order_penalty` (L_K') or
    `nit_order_penalty` (L_K)."""

    order: Callable[..., torch.Tensor]
    max_order: int
    lam: float

    def __call__(self, model: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """The penalty per trial, (T,), of `model`'s gates (`x` unused)."""
        return self.order(model.deep.gates.log_alpha, self.max_order, self.lam)


class GateOrderWarning(UserWarning):
    """Phase 1 of Algorithm 2 ended at its epoch cap with a block order still above K."""


class HardConcreteGates(nn.Module):
    """One hard-concrete L0 gate per (trial, block, input feature), for T = len(seeds) trials.

    `log_alpha` (T, B, m) is stored as `lr_scale * loc`, with `loc` the trained parameter: under
    Adam every parameter moves about `lr` per step whatever its gradient's scale, so `lr_scale`
    lets the gates move `lr_scale` times faster than the weights (a per-parameter learning rate
    through the shared optimiser); the gates must open and close within a few hundred steps.

    `forward()` returns sampled gates in training mode and deterministic gates in evaluation mode
    (no random numbers). A trial whose gates were frozen (`freeze`, Algorithm 2 step 6) returns its
    fixed binary mask `1(z_det != 0)` in both modes and its `log_alpha` gets no gradient; trials
    freeze one by one because each leaves phase 1 at its own epoch.

    Trial t's initial jitter (`init_std`) and its training noise come from generators seeded by
    `seeds[t]` alone (`pilid.streams`), so a trial does not depend on how many
    trials share the batch. `init_prob` is the initial P(z != 0) of every gate.
    """

    def __init__(
        self,
        n_blocks: int,
        n_features: int,
        seeds: Sequence[int],
        *,
        init_prob: float = 0.9,
        init_std: float = 0.01,
        lr_scale: float = 1.0,
        beta: float = BETA,
        gamma: float = GAMMA,
        zeta: float = ZETA,
    ) -> None:
        super().__init__()
        _check_stretch(beta, gamma, zeta)
        if not 0.0 < init_prob < 1.0:
            raise PilidError(f"init_prob={init_prob!r} must lie in (0, 1); e.g. 0.9")
        if not lr_scale > 0:
            raise PilidError(f"gate_lr_scale={lr_scale!r} must be > 0; e.g. 10")
        seeds = [int(s) for s in seeds]
        sizes = {"n_trials": len(seeds), "n_blocks": n_blocks, "n_features": n_features}
        for name, value in sizes.items():
            if int(value) != value or value < 1:
                raise PilidError(f"{name}={value!r} must be a whole number >= 1")
        self.seeds = seeds
        self.beta, self.gamma, self.zeta = float(beta), float(gamma), float(zeta)
        self.lr_scale = float(lr_scale)
        center = math.log(init_prob) - math.log1p(-init_prob) + beta * math.log(-gamma / zeta)
        gens = [trial_generator(s, STREAM_GATE_INIT) for s in seeds]
        jitter = torch.stack([torch.randn(n_blocks, n_features, generator=g) for g in gens])
        self.loc = nn.Parameter((center + init_std * jitter) / self.lr_scale)
        self.register_buffer("mask", torch.ones(len(seeds), n_blocks, n_features))
        self.register_buffer("frozen", torch.zeros(len(seeds), dtype=torch.bool))
        self._generators: dict[str, list[torch.Generator]] = {}

    def __getstate__(self):
        """Pickle without the per-device random generators (made again on use)."""
        state = self.__dict__.copy()
        state["_generators"] = {}
        return state

    @property
    def log_alpha(self) -> torch.Tensor:
        """The gates' location log_alpha = lr_scale * loc, (T, B, m)."""
        return self.loc * self.lr_scale

    def _with_mask(self, z: torch.Tensor) -> torch.Tensor:
        # No host sync (bool(frozen.any())) here: this runs in every training step.
        return torch.where(self.frozen.view(-1, 1, 1), self.mask.to(z.dtype), z)

    def prob_nonzero(self) -> torch.Tensor:
        """P(z != 0) per gate, (T, B, m); the binary mask for frozen trials."""
        p = prob_nonzero(self.log_alpha, self.beta, self.gamma, self.zeta)
        return self._with_mask(p)

    def expected_order(self) -> torch.Tensor:
        """hat k_i per trial and block, (T, B)."""
        return self.prob_nonzero().sum(-1)

    def deterministic(self) -> torch.Tensor:
        """Evaluation gates (T, B, m): Louizos' test-time gate, or the mask of frozen trials."""
        return self._with_mask(deterministic_gates(self.log_alpha, self.gamma, self.zeta))

    def active(self) -> torch.Tensor:
        """Boolean (T, B, m): features that pass their block's deterministic gate."""
        return self.deterministic() > 0

    def _uniform(self) -> torch.Tensor:
        la = self.loc
        key = str(la.device)
        gens = self._generators.get(key)
        if gens is None:
            gens = [trial_generator(s, STREAM_GATE_NOISE, la.device) for s in self.seeds]
            self._generators[key] = gens
        shape = la.shape[1:]
        return torch.stack(
            [torch.rand(shape, generator=g, device=la.device, dtype=la.dtype) for g in gens]
        )

    def sample(self) -> torch.Tensor:
        """One draw of training gates (T, B, m) (Louizos Eq. 10-11); frozen trials: their mask."""
        u = self._uniform()
        u = u.clamp(torch.finfo(u.dtype).tiny, 1.0 - 1e-7)
        s = torch.sigmoid((torch.log(u) - torch.log1p(-u) + self.log_alpha) / self.beta)
        z = (s * (self.zeta - self.gamma) + self.gamma).clamp(0.0, 1.0)
        return self._with_mask(z)

    def forward(self) -> torch.Tensor:
        """Training: sampled gates; evaluation: the deterministic ones. (T, B, m)."""
        return self.sample() if self.training else self.deterministic()

    @torch.no_grad()
    def freeze(self, trials: torch.Tensor | None = None, max_order: int | None = None) -> None:
        """Fix the binary masks `1(z_det != 0)` of some trials (Algorithm 2, step 6).

        `trials` is a bool tensor (T,) (None: all trials); trials already frozen keep their mask.
        With `max_order`, a block whose mask has more than K open gates keeps the K with the
        largest log_alpha, so the order bound holds even when phase 1 stopped at its epoch cap.
        """
        la = self.log_alpha
        mask = (deterministic_gates(la, self.gamma, self.zeta) > 0).to(self.mask.dtype)
        if max_order is not None and max_order < mask.shape[-1]:
            score = la.masked_fill(mask == 0, -torch.inf)
            order = torch.argsort(score, dim=-1, descending=True, stable=True)
            rank = torch.empty_like(order)
            positions = torch.arange(mask.shape[-1], device=la.device).expand_as(order)
            rank.scatter_(-1, order, positions.contiguous())
            mask = mask * (rank < max_order).to(mask.dtype)
        if trials is None:
            new = torch.ones_like(self.frozen)
        else:
            new = trials.to(device=self.frozen.device, dtype=torch.bool).clone()
        new &= ~self.frozen
        self.mask.copy_(torch.where(new.view(-1, 1, 1), mask, self.mask))
        self.frozen |= new
