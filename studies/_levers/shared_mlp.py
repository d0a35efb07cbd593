"""The lever ``deep_ensemble="shared"``: a bag's members train one MLP as an efficient ensemble.

BatchEnsemble (Wen, Tran & Ba, ICLR 2020) as TabM trains its k members (Gorishniy et al., ICLR
2025): member t's layer l of the paper's MLP (Guo et al., IJCAI 2020, Eq. 6-8) is

    h = relu(((h o r_t) W) o s_t + b_t),

W shared by the members of a group (a bag), the rank-1 adapters r_t (fan_in) and s_t (fan_out),
the bias b_t and the output layer the member's own. r_t of the first layer starts at random
signs (+-1, from the member's generator) and the others at 1, as TabM starts them; W comes from
the generator of the group's first member (`pilid.streams.STREAM_DEEP`), the rest of a member's
start as `pilid.nn.mlp.EnsembleMLP` draws it. W is held in every member's slice (the layout of
independent trials, so that the trainer's early stopping keeps each member's weights at its own
best epoch) and every slice takes the mean gradient over its group's members in the ensemble's
computation (the gradient of the mean of their losses, as TabM trains; a member that finished
takes part until the trainer drops finished trials from the computation,
`pilid.train.compaction`), so the slices stay equal while the members train. In eval mode
(validation, purification, prediction) the module computes through the folded weights
``(r_t W) o s_t``, as `fold` leaves them: what a member keeps after training is the plain MLP of
Eq. 6-8 (`pilid.nn.mlp.EnsembleMLP`) with those weights.

`bag_groups` reads each trial's group off the bag its estimator belongs to (`SHARED_BAG`, set by
`studies._levers.estimators`); `SharedBuilder` builds the MLP from that bag, as the spec's
deep-part builder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from pilid.errors import PilidError
from pilid.nn.mlp import EnsembleMLP, check_hidden_layers
from pilid.nn.pairs import DeepWithPairs
from pilid.streams import STREAM_DEEP, trial_generator

__all__ = [
    "SHARED_BAG",
    "SharedBuilder",
    "SharedEnsembleMLP",
    "bag_groups",
    "fold",
    "fold_module",
    "groups_of",
]

#: The attribute of a bag member that holds the seeds of its bag's members, in order (set while
#: the bag trains, dropped when it is collected).
SHARED_BAG = "_shared_bag"


def _dense_groups(groups: Sequence) -> list[int]:
    """The group labels `groups` as 0, 1, ... in the order they first appear."""
    index: dict = {}
    return [index.setdefault(g, len(index)) for g in groups]


def _first_of_group(groups: Sequence) -> list[int]:
    """For each trial, the first trial of its group in `groups`."""
    first: dict = {}
    return [first.setdefault(g, t) for t, g in enumerate(groups)]


class SharedEnsembleMLP(nn.Module):
    """BatchEnsemble's MLP for T = len(seeds) trials (module docstring), trial t in group
    ``groups[t]``; forward (T, B, m) -> (T, B). Its parameters have the names and shapes of
    `pilid.nn.mlp.EnsembleMLP`'s (``weights``, ``biases``, ``out_w``, ``out_b``) plus the
    adapters (``adapters_in``, ``adapters_out``) and the buffer ``share_group``."""

    def __init__(
        self,
        n_features: int,
        hidden_layers: Sequence[int],
        sigma: float | None,
        seeds: Sequence[int],
        groups: Sequence,
        dtype=torch.float32,
    ):
        super().__init__()
        if len(groups) != len(seeds):
            raise PilidError(f"{len(groups)} groups for {len(seeds)} trials; give one per trial")
        sizes = (int(n_features), *check_hidden_layers(hidden_layers))
        self.hidden_layers = sizes[1:]
        self.sigma = sigma
        T = len(seeds)
        gens = [trial_generator(s, STREAM_DEEP) for s in seeds]
        first = _first_of_group(groups)
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            std = (2.0 / fan_in) ** 0.5 if sigma is None else float(sigma)
            draws = [  # a group's W from its first trial's generator, held in every slice
                torch.randn(fan_in, fan_out, generator=g, dtype=dtype) * std
                if first[t] == t
                else None
                for t, g in enumerate(gens)
            ]
            self.weights.append(nn.Parameter(torch.stack([draws[first[t]] for t in range(T)])))
            self.biases.append(nn.Parameter(torch.zeros(T, 1, fan_out, dtype=dtype)))
        self.out_w = nn.Parameter(torch.zeros(T, sizes[-1], 1, dtype=dtype))
        self.out_b = nn.Parameter(torch.zeros(T, 1, 1, dtype=dtype))
        self.register_buffer(
            "share_group", torch.as_tensor(_dense_groups(groups), dtype=torch.long)
        )
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
        for w in self.weights:
            w.register_hook(self._share_gradient)

    def _share_gradient(self, grad: torch.Tensor) -> torch.Tensor:
        """Every slice of a shared W takes its group's mean gradient over the members in the
        computation: the gradient of the mean of their losses with respect to the one W they
        hold (so the penalty ``lam`` weighs on a shared W as on one member's)."""
        group = self.share_group
        G = group.shape[0]  # at most one group per member (no device sync for the count)
        total = torch.zeros(G, *grad.shape[1:], dtype=grad.dtype, device=grad.device)
        total.index_add_(0, group, grad)
        ones = torch.ones(group.shape, dtype=grad.dtype, device=grad.device)
        count = torch.zeros(G, dtype=grad.dtype, device=grad.device).index_add_(0, group, ones)
        mean = total / count.clamp_min(1.0).view(-1, *([1] * (grad.dim() - 1)))
        return mean[group]

    def folded_weights(self) -> list[torch.Tensor]:
        """Each layer's weights with the adapters multiplied in, ``(r_t W) o s_t`` per trial."""
        layers = zip(self.weights, self.adapters_in, self.adapters_out)
        return [w * r.transpose(1, 2) * s for w, r, s in layers]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The output (T, B) for inputs ``x`` (T, B, m): in training mode through the adapters
        (their gradients and W's), in eval mode through the folded weights, as `EnsembleMLP`
        computes with them."""
        if not self.training:
            return _plain_forward(x, self.folded_weights(), self.biases, self.out_w, self.out_b)
        h = x
        for w, b, r, s in zip(self.weights, self.biases, self.adapters_in, self.adapters_out):
            h = torch.relu(torch.bmm(h * r, w) * s + b)
        return torch.baddbmm(self.out_b, h, self.out_w).squeeze(-1)


def _plain_forward(x, weights, biases, out_w, out_b) -> torch.Tensor:
    """`pilid.nn.mlp.EnsembleMLP.forward` with these weights (Eq. 6-8), operation for
    operation, so that the folded module's outputs are the plain MLP's bit for bit."""
    if x.shape[0] == 1 and torch.is_grad_enabled():
        h = x[0]
        for w, b in zip(weights, biases):
            h = torch.relu(torch.addmm(b[0], h, w[0]))
        return torch.addmm(out_b[0], h, out_w[0]).view(1, -1)
    h = x
    for w, b in zip(weights, biases):
        h = torch.relu(torch.baddbmm(b, h, w))
    return torch.baddbmm(out_b, h, out_w).squeeze(-1)


@torch.no_grad()
def fold(mlp: SharedEnsembleMLP) -> EnsembleMLP:
    """The plain `EnsembleMLP` of `mlp`'s trials: the folded weights, the biases and the output
    layer, with the same outputs as `mlp` in eval mode."""
    n_features = mlp.weights[0].shape[1]
    seeds = list(range(mlp.out_w.shape[0]))  # its start is replaced below
    plain = EnsembleMLP(n_features, mlp.hidden_layers, mlp.sigma, seeds)
    for target, value in zip(plain.weights, mlp.folded_weights()):
        target.copy_(value)
    for target, value in zip(plain.biases, mlp.biases):
        target.copy_(value)
    plain.out_w.copy_(mlp.out_w)
    plain.out_b.copy_(mlp.out_b)
    return plain.train(mlp.training)


def fold_module(module) -> None:
    """Replace a `SharedEnsembleMLP` that is the deep part of `module` (a
    `pilid.nn.ensemble.PiLiDEnsemble`, its MLP alone or inside `DeepWithPairs`) by `fold`'s."""
    holder = module
    if isinstance(module.deep, DeepWithPairs):
        holder = module.deep
    if isinstance(holder.deep, SharedEnsembleMLP):
        holder.deep = fold(holder.deep)


@dataclass(frozen=True)
class SharedBuilder:
    """The deep part of a ``deep_ensemble="shared"`` estimator as its spec builds it: for the
    trials of one bag (`groups_of`), BatchEnsemble's `SharedEnsembleMLP`; else PiLiD's MLP."""

    hidden_layers: Sequence[int]
    sigma: float | None
    bag: tuple | None
    classes: int = 1

    def __call__(self, n_features: int, seeds: Sequence[int]) -> nn.Module:
        """The MLP for ``len(seeds)`` trials on `n_features` inputs."""
        groups = groups_of(self.bag, self.classes, seeds)
        if groups is None:
            return EnsembleMLP(n_features, self.hidden_layers, self.sigma, seeds)
        return SharedEnsembleMLP(n_features, self.hidden_layers, self.sigma, seeds, groups)


def bag_groups(est, seeds: Sequence[int]) -> list[int] | None:
    """Each trial's group for the ensemble `est` (a bag member, `SHARED_BAG`) trains first:
    the trials are its bag's members, ``seeds`` theirs in order; with K > 2 classes
    (``_softmax_classes`` K) each bag member b is K trials in a row (class k: the bag of class
    k, group k), as `pilid.models.multiclass` orders them. None for an estimator of no bag (one
    model: its own MLP). An ensemble that holds another bag (several estimators fitted together
    by ``fit_batched``) is refused in one line."""
    return groups_of(
        getattr(est, SHARED_BAG, None), int(getattr(est, "_softmax_classes", 1)), seeds
    )


def groups_of(bag, K: int, seeds: Sequence[int]) -> list[int] | None:
    """`bag_groups` of an estimator of bag ``bag`` (its members' seeds, or None) and K classes."""
    if bag is None:
        return None
    if len(seeds) == 1:  # one trial (a member's own module once trained): its own group
        return [0]
    runs = [seeds[i : i + K] for i in range(0, len(seeds), K)]
    ok = len(seeds) % K == 0 and all(len(set(run)) == 1 for run in runs)
    members = [run[0] for run in runs]
    if not ok or len(set(members)) != len(members) or not set(members) <= set(bag):
        raise PilidError(
            "deep_ensemble='shared' trains one estimator's bag per ensemble and these trials "
            "hold another; fit each estimator on its own"
        )
    return [t % K for t in range(len(seeds))]
