"""A bag's members in one forward: the mean of their Eq. (9) outputs in one batched call.

A bag (`pilid.models.bagging`) predicts the mean of its members' raw outputs. Its members read
the same inputs (the scaling and the characteristic points of Definition 1 are the bag's), so
the parts of Eq. (9) that are linear in their parameters average before they are evaluated:

* the additive part, ``w_0 + u^T Phi`` (Eq. 10), is linear in the per-piece weights
  ``omega_j w_k`` and the constant (`pilid.nn.additive.AdditiveEnsemble.effective`), and in
  each feature's missing and unseen values: the mean of the members' is the additive part
  with their mean weights, one evaluation instead of one per member;
* the pair terms (`pilid.nn.pairs.PairTerms`) are linear in their grid values V: a pair that
  several members hold is one term with the mean of their grids (a member without it adds a
  grid of 0), so the bag evaluates each distinct pair once;
* the MLP (Eq. 6-8) is not linear; its members run as the T trials of one
  `pilid.nn.mlp.EnsembleMLP` call, their output layers scaled by 1 / members and summed.

The result equals the mean of the members' outputs up to float rounding (sums in another
order). `bag_forward` builds it from the members' modules, or returns None for a structure it
does not reduce (gated blocks, a deep part that reads Phi, members that differ in their
characteristic points); the caller then runs the members one by one.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from pilid.nn.additive import AdditiveEnsemble, FrozenAdditive
from pilid.nn.ensemble import PiLiDEnsemble
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.pairs import DeepWithPairs, PairTerms

__all__ = ["BagForward", "bag_forward"]


class BagForward(nn.Module):
    """The mean raw output of a bag's members (module docstring): ``forward(x, phi) -> (1, B)``.

    `x` is the deep input (1, B, m'), `phi` compact Phi (1, B, m) as a member reads them. The
    parts: the additive part at the members' mean weights (`pilid.nn.additive.FrozenAdditive`,
    T=1); the distinct pairs' `PairTerms` (T=1); the members' MLP (T = members, output layer
    divided by the members).
    """

    def __init__(
        self,
        additive: FrozenAdditive | None,
        pairs: PairTerms | None,
        mlp: EnsembleMLP | None,
    ):
        super().__init__()
        self.additive = additive
        self.pairs = pairs
        self.mlp = mlp

    def forward(self, x: torch.Tensor, phi=None) -> torch.Tensor:
        """The mean over the members of Eq. (9)'s raw output, (1, B)."""
        out = None
        if self.additive is not None:
            out = self.additive(phi)
        if self.pairs is not None:
            p = self.pairs(phi)
            out = p if out is None else out + p
        if self.mlp is not None:
            d = self._mlp(x)
            out = d if out is None else out + d
        return out

    def _mlp(self, x: torch.Tensor) -> torch.Tensor:
        """The members' MLPs (Eq. 6-8) on the one input `x` (1, B, m'), their outputs summed
        (each output layer holds 1 / members), (1, B); ReLU in place, as nothing is trained."""
        mlp = self.mlp
        h = x.expand(mlp.out_w.shape[0], *x.shape[1:])
        for w, b in zip(mlp.weights, mlp.biases):
            h = torch.baddbmm(b, h, w).relu_()
        return torch.baddbmm(mlp.out_b, h, mlp.out_w).sum(0).view(1, -1)


def _same(tensors: Sequence[torch.Tensor | None]) -> bool:
    """Are the members' tensors all equal (or all None)?"""
    first = tensors[0]
    if first is None:
        return all(t is None for t in tensors)
    return all(t is not None and torch.equal(t, first) for t in tensors)


def _mean_or_none(tensors: Sequence[torch.Tensor | None]) -> torch.Tensor | None:
    """The mean over members of (1, ...) tensors, keeping the leading axis; None if all are."""
    if all(t is None for t in tensors):
        return None
    if any(t is None for t in tensors):
        raise ValueError("members differ in which parts they hold")
    return torch.cat([t.detach() for t in tensors]).mean(0, keepdim=True)


def _additive_mean(parts: Sequence[AdditiveEnsemble]) -> FrozenAdditive | None:
    """The additive part at the members' mean weights, constant and missing/unseen values."""
    if not _same([a.starts for a in parts]):
        return None
    effective = [a.effective() for a in parts]
    v = torch.cat([e[0].detach() for e in effective]).mean(0, keepdim=True)
    c = torch.cat([e[1].detach() for e in effective]).mean(0, keepdim=True)
    nan_value = _mean_or_none([getattr(a, "nan_value", None) for a in parts])
    unseen_value = _mean_or_none([getattr(a, "unseen_value", None) for a in parts])
    return FrozenAdditive(v, c, parts[0].starts, nan_value, unseen_value)


def _pairs_mean(parts: Sequence[PairTerms]) -> PairTerms | None:
    """One `PairTerms` (T=1) of the members' distinct pairs, each grid their sum / members."""
    if not (_same([p.starts for p in parts]) and _same([p.coarse for p in parts])):
        return None
    if not _same([p.ratio for p in parts]):
        return None
    n = len(parts)
    grids: dict[tuple[int, int], torch.Tensor] = {}
    for p in parts:
        G = p.grid
        for k, (a, b) in enumerate(p.pairs[0].tolist()):
            V = p.V[0, k].detach() / n
            if (a, b) in grids:
                grids[(a, b)] = _padded(grids[(a, b)], V)
            else:
                grids[(a, b)] = V[:G, :G].clone()
    keys = list(grids)
    first = parts[0]
    out = PairTerms(
        torch.tensor([keys], dtype=torch.long).reshape(1, len(keys), 2),
        first.starts,
        (first.ratio * first.coarse.clamp_min(1)).double(),
        first.coarse,
        dtype=first.V.dtype,
    )
    with torch.no_grad():
        G = out.grid
        for k, key in enumerate(keys):
            g = grids[key]
            s = min(G, g.shape[0])
            out.V[0, k, :s, :s] = g[:s, :s]
    out.ratio.copy_(first.ratio)  # the members' own, not recomputed from rounded pieces
    return out


def _padded(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a + b`` of two square grids, the smaller padded with zeros."""
    G = max(a.shape[0], b.shape[0])
    out = torch.zeros(G, G, dtype=a.dtype)
    out[: a.shape[0], : a.shape[1]] += a
    out[: b.shape[0], : b.shape[1]] += b
    return out


def _mlp_stacked(parts: Sequence[EnsembleMLP]) -> EnsembleMLP | None:
    """The members' MLPs as the T trials of one `EnsembleMLP`, output layers / members."""
    shapes = [tuple(tuple(w.shape[1:]) for w in p.weights) for p in parts]
    if len(set(shapes)) != 1:
        return None
    n = len(parts)
    sizes = [shapes[0][0][0]] + [s[1] for s in shapes[0]]
    out = EnsembleMLP(sizes[0], sizes[1:], None, seeds=range(n), dtype=parts[0].out_w.dtype)
    with torch.no_grad():
        for layer in range(len(out.weights)):
            out.weights[layer].copy_(torch.cat([p.weights[layer] for p in parts]))
            out.biases[layer].copy_(torch.cat([p.biases[layer] for p in parts]))
        out.out_w.copy_(torch.cat([p.out_w for p in parts]) / n)
        out.out_b.copy_(torch.cat([p.out_b for p in parts]) / n)
    return out.eval()


def bag_forward(modules: Sequence[nn.Module]) -> BagForward | None:
    """The `BagForward` of a bag's members' T=1 `PiLiDEnsemble` modules, or None where their
    structure is not one it reduces (module docstring)."""
    if len(modules) < 2 or not all(type(m) is PiLiDEnsemble for m in modules):
        return None
    if any(m.n_trials != 1 for m in modules):
        return None
    additive = None
    if modules[0].additive is not None:
        parts = [m.additive for m in modules]
        if any(type(a) is not AdditiveEnsemble for a in parts):
            return None
        additive = _additive_mean(parts)
        if additive is None:
            return None
    deeps = [m.deep for m in modules]
    pairs = mlp = None
    if deeps[0] is not None:
        if not all(type(d) is type(deeps[0]) for d in deeps):
            return None
        inner = deeps
        if type(deeps[0]) is DeepWithPairs:
            pairs = _pairs_mean([d.pairs for d in deeps])
            if pairs is None:
                return None
            inner = [d.deep for d in deeps]
        if inner[0] is not None:
            if not all(type(d) is EnsembleMLP for d in inner):
                return None
            mlp = _mlp_stacked(inner)
            if mlp is None:
                return None
    elif any(d is not None for d in deeps):
        return None
    return BagForward(additive, pairs, mlp).eval()
