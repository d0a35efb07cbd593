"""The one description of a fitted PiLiD or PiLiB: `FittedEnsemble`, what every read-out reads.

A fitted model is its input encoding and, per output, its members' networks:

* `InputEncoding`: coded rows X (N, m) (numbers, category codes, NaN for a missing value, +inf
  for a level not seen in fit) to the deep part's input (Eq. 6-8's x: standardised, one-hot or
  binned columns, missing indicators; `pilid.train.encoding.deep_input`) and compact Phi
  (Definition 2, `pilid.nn.piecewise.phi_compact`), in torch ops that trace to ONNX;
* `Head`: one output (the target, a binary logit, or class k's logit of K): its members'
  T=1 modules (`pilid.nn.ensemble.PiLiDEnsemble`, or PiLiB's), the bag's one forward where
  fit built one (`pilid.nn.bag.BagForward`), the target's scale and each member's centring
  of the contributions (Definition 3's u_j centred on the training rows);
* what the columns are: names, categorical levels, the levels merged as infrequent, missing
  values learned, monotone signs; the task and the classes.

`FittedEnsemble.forward` is Eq. (9) in output units from coded rows: `predict` (chunked,
`FittedEnsemble.raw`) and the ONNX graph (`pilid.export.onnx`, which traces it) run this one
forward. `decompose` gives Eq. (9) term by term, `pair_grids` the pair terms' grids: the
explanations, shapes, bands and the table (`pilid.export.table`) read those.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from pilid.nn.pairs import DeepWithPairs

__all__ = ["Columns", "FittedEnsemble", "Head", "InputEncoding"]

#: Rows per chunk of `FittedEnsemble.raw` and `decompose`: memory follows a chunk.
CHUNK = 8192


@dataclass(frozen=True)
class Columns:
    """What the fit's columns are: ``names``; ``levels`` {j: the levels of categorical column j,
    code c is ``levels[j][c]``}; ``infrequent`` {j: the levels merged into the last one};
    ``missing`` (m,) bool, a column with missing values in fit (NaN has its own contribution;
    elsewhere NaN reads as unseen); ``monotone`` (m,) the signs (+1, -1, 0: none)."""

    names: tuple[str, ...]
    levels: dict = field(default_factory=dict)
    infrequent: dict = field(default_factory=dict)
    missing: np.ndarray | None = None
    monotone: np.ndarray | None = None

    @property
    def m(self) -> int:
        """The number of columns."""
        return len(self.names)

    def missing_mask(self) -> np.ndarray:
        """``missing`` as a bool array (all False when fit saw no missing value)."""
        if self.missing is None:
            return np.zeros(self.m, dtype=bool)
        return np.asarray(self.missing, dtype=bool)


class InputEncoding(nn.Module):
    """Coded rows (N, m) float64 to (deep input (1, N, m') in the networks' dtype, compact Phi
    ``(col, frac, miss, unseen)`` each (1, N, m), or None without an additive part).

    The deep input: `pilid.train.encoding.deep_input` (X standardised, NaN and +inf at 0;
    one-hot and binned columns in place of theirs; one missing indicator per column with
    missing values). Phi: `pilid.nn.piecewise.phi_compact` with NaN in a column without missing
    values in fit read as unseen (+inf); the piece of x is the count of points <= x less one
    (``searchsorted(right) - 1``; with `traced` set, as the ONNX export sets it, the same count
    as a comparison, which traces).
    """

    #: Count the points below x by a comparison (N x m x points) that an exporter traces, not by
    #: ``torch.searchsorted`` (the same counts).
    traced = False

    def __init__(self, x_mean, x_scale, columns: Columns, knots, onehot=(), bins=(), dtype=None):
        super().__init__()
        m = columns.m
        missing = columns.missing_mask()
        self.dtype = dtype or torch.float32
        self.register_buffer("x_mean", torch.as_tensor(np.asarray(x_mean, np.float64)))
        self.register_buffer("x_scale", torch.as_tensor(np.asarray(x_scale, np.float64)))
        self.register_buffer("missing", torch.as_tensor(missing))
        self.missing_columns = [int(j) for j in np.flatnonzero(missing)]
        self.onehot = [(int(j), np.asarray(levels, np.float64)) for j, levels in onehot or ()]
        self.bins = [(int(j), np.asarray(edges, np.float64)) for j, edges in bins or ()]
        replaced = {j for j, _ in self.onehot} | {j for j, _ in self.bins}
        self.keep = [j for j in range(m) if j not in replaced]
        self.has_phi = knots is not None
        if knots is None:
            return
        width = max(len(p) for p in knots.points)
        points = np.full((m, width), np.inf)  # +inf padding, as `compact_layout`
        for j, p in enumerate(knots.points):
            points[j, : len(p)] = p
        _, lo, inv = knots.layout()
        self.register_buffer("points", torch.as_tensor(points))
        self.register_buffer("starts", torch.as_tensor(knots.starts))
        self.register_buffer("last", torch.as_tensor(knots.n_pieces - 1))
        self.register_buffer("lo", torch.as_tensor(lo, dtype=torch.float32))
        self.register_buffer("inv", torch.as_tensor(inv, dtype=torch.float32))

    def deep_input(self, X: torch.Tensor) -> torch.Tensor:
        """`pilid.train.encoding.deep_input` of `X` (N, m), (1, N, m') in the networks' dtype."""
        finite = torch.isfinite(X)
        z = torch.where(finite, (X - self.x_mean) / self.x_scale, torch.zeros_like(X))
        parts = [z[:, self.keep]] if len(self.keep) < X.shape[1] else [z]
        for j, levels in self.onehot:
            parts.append((X[:, j : j + 1] == torch.as_tensor(levels)[None]).to(X.dtype))
        for j, edges in self.bins:
            lo, hi = torch.as_tensor(edges[:-1])[None], torch.as_tensor(edges[1:])[None]
            code = ((X[:, j : j + 1] - lo) / (hi - lo)).clamp(0.0, 1.0)
            parts.append(torch.where(torch.isnan(code), torch.zeros_like(code), code))
        if self.missing_columns:
            parts.append(torch.isnan(X[:, self.missing_columns]).to(X.dtype))
        x = torch.cat(parts, 1) if len(parts) > 1 else parts[0]
        return x.to(self.dtype)[None]

    def phi(self, X: torch.Tensor) -> tuple[torch.Tensor, ...] | None:
        """Compact Phi ``(col, frac, miss, unseen)`` of `X` (N, m), each (1, N, m)."""
        if not self.has_phi:
            return None
        inf = torch.full_like(X, float("inf"))
        X = torch.where(torch.isnan(X) & ~self.missing, inf, X)
        miss, unseen = torch.isnan(X), X == inf
        if self.traced:
            k = (self.points.unsqueeze(0) <= X.unsqueeze(2)).sum(2) - 1
        else:  # the same count, without the (N, m, points) comparison
            at = X.T.to(self.points.dtype).contiguous()
            k = torch.searchsorted(self.points, at, right=True).T - 1
        k = torch.minimum(k.clamp_min(0), self.last.unsqueeze(0))
        col = k + self.starts.unsqueeze(0)
        frac = ((X.to(self.lo.dtype) - self.lo[col]) * self.inv[col]).clamp(0.0, 1.0)
        none = miss | unseen
        col = torch.where(none, self.starts.unsqueeze(0).expand_as(col), col)
        frac = torch.where(none, torch.zeros_like(frac), frac)
        return col[None], frac[None], miss.to(frac.dtype)[None], unseen.to(frac.dtype)[None]


class Head(nn.Module):
    """One output of a fitted model: ``forward(x, phi) -> (1, N)``, the mean raw output of its
    members (the bag's one forward where there is one, else the members one by one), and what
    `decompose` needs: ``y_offset`` / ``y_scale`` (the target's scaling: raw to output units),
    ``intercept`` (output units), per member its ``y_scale`` and contribution offset (m,)."""

    def __init__(
        self,
        members: Sequence[nn.Module],
        forward: nn.Module | None,
        y_offset: float,
        y_scale: float,
        intercept: float,
        member_scales: Sequence[float],
        offsets: Sequence[np.ndarray] | None,
    ):
        super().__init__()
        self.members = nn.ModuleList(members)
        self.bag = forward
        self.y_offset, self.y_scale = float(y_offset), float(y_scale)
        self.intercept = float(intercept)
        self.member_scales = [float(s) for s in member_scales]
        self.offsets = None if offsets is None else [np.asarray(o) for o in offsets]

    def forward(self, x: torch.Tensor, phi) -> torch.Tensor:
        """The members' mean raw output (standardised target / logit), (1, N), float64 (a
        member loop sums in float64)."""
        if self.bag is not None:
            return self.bag(x, phi).to(torch.float64)
        total = None
        for module in self.members:
            raw = module(x, phi).to(torch.float64)
            total = raw if total is None else total + raw
        return total if len(self.members) == 1 else total / len(self.members)

    def member_terms(self, x: torch.Tensor, phi) -> list[tuple]:
        """Each member's ``(contributions (N, m) or None, deep (N,) or None)`` in output units,
        the contributions centred (Definition 3; Eq. 9 term by term)."""
        out = []
        for b, module in enumerate(self.members):
            terms, deep = module.decompose(x, phi)
            scale = self.member_scales[b]
            contrib = None
            if terms is not None:
                contrib = scale * (terms[0].double().numpy() - self.offsets[b])
            out.append((contrib, None if deep is None else scale * deep[0].double().numpy()))
        return out


class FittedEnsemble(nn.Module):
    """A fitted PiLiD / PiLiB (module docstring): ``forward(X (N, m) float64) -> (N, H)``, the
    outputs in output units (``y_offset + y_scale * raw``: `predict` of a regressor,
    `decision_function` of a classifier; H = 1, or K for K > 2 classes).

    ``task`` ("regression" / "classification"), ``classes`` (None for regression),
    ``columns`` (`Columns`), ``knots`` (`pilid.nn.piecewise.Knots` or None), ``engine``
    (`pilid.train.version.ENGINE_VERSION` of the fit; None for a model pickled before the
    description existed, whose engine is not known), ``encoding`` (`InputEncoding`),
    ``heads`` (`Head`, one per output).
    """

    def __init__(
        self,
        encoding: InputEncoding,
        heads: Sequence[Head],
        *,
        task: str,
        classes,
        columns: Columns,
        knots,
        engine: str | None,
    ):
        super().__init__()
        self.encoding = encoding
        self.heads = nn.ModuleList(heads)
        self.task, self.classes, self.columns = task, classes, columns
        self.knots, self.engine = knots, engine

    @property
    def multiclass(self) -> bool:
        """K > 2 classes: one head per class."""
        return len(self.heads) > 1

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Eq. (9) in output units, (N, H), float64 (what the ONNX graph traces)."""
        x, phi = self.encoding.deep_input(X), self.encoding.phi(X)
        outputs = [h.y_offset + h.y_scale * h(x, phi)[0] for h in self.heads]
        return torch.stack(outputs, 1)

    @torch.no_grad()
    def raw(self, X: np.ndarray) -> np.ndarray:
        """The raw output (standardised target / logit) of coded rows X: (N,), or (N, K)."""
        out = []
        for s in range(0, X.shape[0], CHUNK):
            chunk = rows_tensor(X[s : s + CHUNK])
            x, phi = self.encoding.deep_input(chunk), self.encoding.phi(chunk)
            out.append(torch.stack([h(x, phi)[0] for h in self.heads], 1).numpy())
        raw = np.concatenate(out) if out else np.zeros((0, len(self.heads)))
        return raw if self.multiclass else raw[:, 0]

    def output(self, X: np.ndarray) -> np.ndarray:
        """`forward` of coded rows X as NumPy, chunked: (N,), or (N, K)."""
        raw = self.raw(X)
        if not self.multiclass:
            head = self.heads[0]
            return head.y_offset + head.y_scale * raw
        offsets = np.array([h.y_offset for h in self.heads])
        return offsets + np.array([h.y_scale for h in self.heads]) * raw

    @torch.no_grad()
    def member_terms(self, X: np.ndarray) -> list[list[tuple]]:
        """Per head, per member: ``(contributions (N, m) or None, deep (N,) or None)`` of coded
        rows X in output units (`Head.member_terms`; the bands read the members' spread)."""
        per_chunk = []
        for s in range(0, X.shape[0], CHUNK):
            chunk = rows_tensor(X[s : s + CHUNK])
            x, phi = self.encoding.deep_input(chunk), self.encoding.phi(chunk)
            per_chunk.append([h.member_terms(x, phi) for h in self.heads])
        if not per_chunk:
            per_chunk = [[h.member_terms(*self._empty()) for h in self.heads]]
        joined = []
        for k, head in enumerate(self.heads):
            members = []
            for b in range(len(head.members)):
                parts = [c[k][b] for c in per_chunk]
                members.append(tuple(_joined([p[i] for p in parts]) for i in (0, 1)))
            joined.append(members)
        return joined

    def _empty(self):
        X = torch.zeros((0, self.columns.m), dtype=torch.float64)
        return self.encoding.deep_input(X), self.encoding.phi(X)

    def decompose(self, X: np.ndarray) -> tuple:
        """Eq. (9) term by term for coded rows X, in output units: ``(intercept, contributions
        (N, m) or None, deep (N,) or None)``, each the mean over a bag's members; with K > 2
        classes each with a last axis of K (intercept (K,))."""
        parts = []
        for head, members in zip(self.heads, self.member_terms(X)):
            contrib = None if members[0][0] is None else np.mean([c for c, _ in members], 0)
            deep = None if members[0][1] is None else np.mean([d for _, d in members], 0)
            parts.append((head.intercept, contrib, deep))
        if not self.multiclass:
            return parts[0]
        intercept = np.array([p[0] for p in parts])
        contrib = None if parts[0][1] is None else np.stack([p[1] for p in parts], axis=-1)
        deep = None if parts[0][2] is None else np.stack([p[2] for p in parts], axis=-1)
        return intercept, contrib, deep

    @property
    def pairs_alone(self) -> bool:
        """Whether the deep part of every member of every output is pair terms alone (PiLiD
        with ``pairs`` and ``hidden_layers=None``): the model is then its shapes and its pair
        terms, all of it glass (`pilid.export.table` scores the pairs too)."""
        deeps = [getattr(module, "deep", None) for h in self.heads for module in h.members]
        return all(isinstance(d, DeepWithPairs) and d.deep is None for d in deeps)

    def pair_main_effects(self, X: np.ndarray, head: int = 0) -> np.ndarray:
        """The main effects purification moved from the deep part into the shapes, per row and
        feature of coded rows X (N, m), the members' mean in output units
        (`pilid.nn.ensemble.PiLiDEnsemble.shift_terms`): for a model whose deep part is pair
        terms alone (`pairs_alone`), the pair terms' main effects, so that the pair terms less
        their sum are `decompose`'s deep part."""
        h = self.heads[head]
        chunks = []
        for s in range(0, X.shape[0], CHUNK):
            phi = self.encoding.phi(rows_tensor(X[s : s + CHUNK]))
            with torch.no_grad():
                shifts = [
                    h.member_scales[b] * module.shift_terms(phi)[0].double().numpy()
                    for b, module in enumerate(h.members)
                ]
            chunks.append(np.mean(shifts, axis=0))
        return np.concatenate(chunks) if chunks else np.zeros((0, self.columns.m))

    def pair_grids(self, head: int = 0) -> list[tuple]:
        """The pair terms of output `head` (PiLiD's ``pairs``): per pair ``(a, b, V, coarse,
        ratio)``: the features, the grid values (the members' mean, output units), each
        feature's coarse pieces and piece ratio (`pilid.nn.pairs.PairTerms`); [] without."""
        h = self.heads[head]
        deeps = [getattr(module, "deep", None) for module in h.members]
        if not isinstance(deeps[0], DeepWithPairs):
            return []
        terms = deeps[0].pairs
        V = h.y_scale * np.mean([d.pairs.V[0].detach().double().numpy() for d in deeps], 0)
        coarse, ratio = terms.coarse[0].numpy(), terms.ratio[0].double().numpy()
        return [
            (int(a), int(b), V[k], coarse, ratio) for k, (a, b) in enumerate(terms.pairs[0].numpy())
        ]


def rows_tensor(X) -> torch.Tensor:
    """Coded rows as a float64 tensor (a contiguous, writable copy where numpy's array is not:
    torch takes no read-only array)."""
    return torch.from_numpy(np.require(X, dtype=np.float64, requirements=["C", "W"]))


def _joined(parts: list) -> np.ndarray | None:
    """Chunks of one array joined along the rows, or None when the part is absent."""
    present = [p for p in parts if p is not None]
    return np.concatenate(present) if present else None
