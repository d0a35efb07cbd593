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

Shared weights (beyond the paper; ``share``): the members of a group (a bag) train one MLP as an
efficient ensemble, BatchEnsemble (Wen, Tran & Ba, ICLR 2020) as TabM uses it (Gorishniy et al.,
ICLR 2025): member t's layer l is ``h = relu(((h o r_t) W) o s_t + b_t)``, W shared by the group,
the rank-1 adapters r_t (fan_in) and s_t (fan_out) and the bias and output layer its own; r_t of
the first layer starts at random signs (+-1, from the member's generator) and the others at 1,
as TabM starts them, W from the generator of the group's first member. W is held in every
member's slice (the layout of independent trials, so that early stopping keeps each member's
weights at its own best epoch) and every slice takes the group's mean gradient over the members
still training (the gradient of the mean of their losses, as TabM trains; `_share_gradient`), so
the slices stay equal while the members train. After training, `fold_adapters_` multiplies the
adapters into each member's slice: what is left is the plain MLP of Eq. 6-8 per member, with the
same outputs (up to float rounding).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

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


class EnsembleMLP(nn.Module):
    """The paper's MLP (Eq. 6-8) for T = len(seeds) trials; forward (T, B, m) -> (T, B)."""

    def __init__(
        self,
        n_features: int,
        hidden_layers: Sequence[int],
        sigma: float | None,
        seeds: Sequence[int],
        dtype=torch.float32,
        share: Sequence[int] | None = None,
    ):
        super().__init__()
        sizes = (int(n_features), *check_hidden_layers(hidden_layers))
        T = len(seeds)
        gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        # share: each trial's group (None: every trial its own MLP); a group's W is drawn from
        # the generator of its first trial and held in every trial's slice
        first = None if share is None else _first_of_group(share)
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            std = (2.0 / fan_in) ** 0.5 if sigma is None else float(sigma)
            drawn = [None if first is not None and first[t] != t else g for t, g in enumerate(gens)]
            draws = [
                None if g is None else torch.randn(fan_in, fan_out, generator=g, dtype=dtype) * std
                for g in drawn
            ]
            w = torch.stack(draws if first is None else [draws[first[t]] for t in range(T)])
            self.weights.append(nn.Parameter(w))
            self.biases.append(nn.Parameter(torch.zeros(T, 1, fan_out, dtype=dtype)))
        self.out_w = nn.Parameter(torch.zeros(T, sizes[-1], 1, dtype=dtype))
        self.out_b = nn.Parameter(torch.zeros(T, 1, 1, dtype=dtype))
        self.register_buffer("share_group", None)
        self.adapters_in = self.adapters_out = None
        self.share_training = None  # (T,) bool: the members whose losses teach a shared W
        self._hooks = []
        if share is not None:
            self.share_group = torch.as_tensor(_dense_groups(share), dtype=torch.long)
            signs = torch.stack(  # the first layer's input adapters: random signs, as TabM's
                [torch.randint(0, 2, (1, sizes[0]), generator=g).to(dtype) * 2 - 1 for g in gens]
            )
            self.adapters_in = nn.ParameterList(
                [nn.Parameter(signs)]
                + [nn.Parameter(torch.ones(T, 1, f, dtype=dtype)) for f in sizes[1:-1]]
            )
            self.adapters_out = nn.ParameterList(
                [nn.Parameter(torch.ones(T, 1, f, dtype=dtype)) for f in sizes[1:]]
            )
            self._hooks = [w.register_hook(self._share_gradient) for w in self.weights]

    def _share_gradient(self, grad: torch.Tensor) -> torch.Tensor:
        """Every slice of a shared W takes its group's mean gradient over the members still
        training (`share_training`; all of them unless the trainer says otherwise): the
        gradient of the mean of their losses with respect to the one W they hold, as TabM
        trains on the mean of its members' losses (and so the penalty ``lam`` weighs on a shared
        W as on one member's)."""
        group = self.share_group
        live = self.share_training
        live = torch.ones_like(group, dtype=grad.dtype) if live is None else live.to(grad.dtype)
        G = group.shape[0]  # at most one group per member (no device sync for the count)
        total = torch.zeros(G, *grad.shape[1:], dtype=grad.dtype, device=grad.device)
        total.index_add_(0, group, grad * live.view(-1, *([1] * (grad.dim() - 1))))
        count = torch.zeros(G, dtype=grad.dtype, device=grad.device).index_add_(0, group, live)
        mean = total / count.clamp_min(1.0).view(-1, *([1] * (grad.dim() - 1)))
        return mean[group]

    @torch.no_grad()
    def fold_adapters_(self) -> None:
        """Multiply the adapters into each member's weights and drop them (and the shared
        gradient): the plain MLP of Eq. 6-8 per member, with the same outputs."""
        if self.adapters_in is None:
            return
        for hook in self._hooks:
            hook.remove()
        self._hooks = []
        for w, r, s in zip(self.weights, self.adapters_in, self.adapters_out):
            w.mul_(r.transpose(1, 2)).mul_(s)
        self.adapters_in = self.adapters_out = None
        self.share_group = None
        self.share_training = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The MLP's output (T, B) for inputs ``x`` (T, B, m) (Eq. 6-8)."""
        if self.adapters_in is not None:  # shared weights: ((h o r) W) o s + b per member
            h = x
            for w, b, r, s in zip(self.weights, self.biases, self.adapters_in, self.adapters_out):
                h = torch.relu(torch.bmm(h * r, w) * s + b)
            return torch.baddbmm(self.out_b, h, self.out_w).squeeze(-1)
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


def _dense_groups(share: Sequence[int]) -> list[int]:
    """The group labels `share` as 0, 1, ... in the order they first appear."""
    index: dict = {}
    return [index.setdefault(g, len(index)) for g in share]


def _first_of_group(share: Sequence[int]) -> list[int]:
    """For each trial, the first trial of its group in `share`."""
    first: dict = {}
    return [first.setdefault(g, t) for t, g in enumerate(share)]


def fold_adapters(module: nn.Module) -> None:
    """`EnsembleMLP.fold_adapters_` on every shared MLP inside `module`."""
    for mod in module.modules():
        if isinstance(mod, EnsembleMLP):
            mod.fold_adapters_()


def share_training(module: nn.Module, training: torch.Tensor) -> None:
    """Tell every shared MLP inside `module` which members still train (`training`, (T,)
    bool): only their losses move a shared W (the others have finished, at their own best)."""
    for mod in module.modules():
        if isinstance(mod, EnsembleMLP) and mod.adapters_in is not None:
            mod.share_training = training


def has_shared_weights(module: nn.Module) -> bool:
    """Does `module` hold an MLP whose weights a group of trials shares (before folding)?"""
    return any(
        isinstance(mod, EnsembleMLP) and mod.adapters_in is not None for mod in module.modules()
    )
