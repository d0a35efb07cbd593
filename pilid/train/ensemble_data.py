"""`EnsembleData`: the rows T trials train and validate on, stacked or shared.

The stacked layout holds T copies (trials of different tables); the shared layout holds one table
and each trial's rows as indices (a bag's members, K classes' logits), so memory is that of one
table. Both give the same values to every gathered mini-batch. `EnsembleData.stacked` and
`sample_validation` give the rows a large table's once-per-fit work and early stopping read: a
sample per trial, drawn from `pilid.streams.STREAM_FIT_SAMPLE`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from pilid.streams import STREAM_FIT_SAMPLE, trial_generator


@dataclass
class EnsembleData:
    """Training (and validation) tensors of T trials, on the training device, in one of two
    layouts.

    Stacked (``rows`` is None): x: (T, n, m) deep-component input; y: (T, n); phi: Phi of
    Definition 2 in compact form, a tuple of (T, n, ...) tensors
    (`pilid.nn.piecewise.phi_compact`), or None; x_val / y_val / phi_val likewise for the
    validation rows.

    Shared (``rows`` given): trials that read the same table (a bag's members, K classes'
    logits) hold it once. x: (N, m), y: (N,), phi: tuple of (N, ...) tensors, every row of the
    table; trial t trains on rows ``rows[t]`` ((T, n) row indices) and validates on
    ``val_rows[t]`` ((T, n_val)); x_val / y_val / phi_val are None. Memory is that of one
    table, not of T copies, and every gathered value equals the stacked layout's.

    Mini-batches take the same rows of every tensor. w / w_val: (T, n) / (T, n_val) sample
    weights of the training / validation rows in either layout, or None (unweighted: the plain
    means, computed as without weights).
    """

    x: torch.Tensor
    y: torch.Tensor
    phi: tuple[torch.Tensor, ...] | None = None
    x_val: torch.Tensor | None = None
    y_val: torch.Tensor | None = None
    phi_val: tuple[torch.Tensor, ...] | None = None
    w: torch.Tensor | None = None
    w_val: torch.Tensor | None = None
    rows: torch.Tensor | None = None
    val_rows: torch.Tensor | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(T, n): trials and training rows per trial."""
        return tuple(self.rows.shape) if self.rows is not None else tuple(self.x.shape[:2])

    @property
    def n_val(self) -> int:
        """Validation rows per trial."""
        if self.rows is not None:
            return 0 if self.val_rows is None else int(self.val_rows.shape[1])
        return 0 if self.x_val is None else int(self.x_val.shape[1])

    def validation(self) -> tuple:
        """(x, phi, y, weights, rows) of the validation rows, as `evaluate_loss` takes them."""
        if self.rows is not None:
            return self.x, self.phi, self.y, self.w_val, self.val_rows
        return self.x_val, self.phi_val, self.y_val, self.w_val, None

    def training(self) -> tuple:
        """(x, phi, y, weights, rows) of the training rows, as `evaluate_loss` takes them."""
        return self.x, self.phi, self.y, self.w, self.rows

    def members(self, keep: torch.Tensor) -> EnsembleData:
        """The data of trials `keep` (indices) alone."""

        def sel(v):
            return None if v is None else v[keep]

        if self.rows is not None:
            return replace(
                self,
                rows=self.rows[keep],
                val_rows=sel(self.val_rows),
                w=sel(self.w),
                w_val=sel(self.w_val),
            )
        phi = None if self.phi is None else tuple(p[keep] for p in self.phi)
        phi_val = None if self.phi_val is None else tuple(p[keep] for p in self.phi_val)
        return replace(
            self,
            x=self.x[keep],
            y=self.y[keep],
            phi=phi,
            x_val=sel(self.x_val),
            y_val=sel(self.y_val),
            phi_val=phi_val,
            w=sel(self.w),
            w_val=sel(self.w_val),
        )

    def sample_validation(self, limit: int, seeds: Sequence[int]) -> EnsembleData:
        """The data with at most `limit` validation rows per trial: all when it has no more,
        else `limit` of them drawn without replacement from each trial's seed
        (`pilid.streams.STREAM_FIT_SAMPLE`), in their order: the loss early stopping reads
        each epoch, on a sample of a large table."""
        n_val = self.n_val
        if n_val <= limit:
            return self
        pos = _sample_positions(n_val, limit, seeds, stream=STREAM_FIT_SAMPLE, draw=1)
        pos = pos.to(self.y.device)
        w_val = None if self.w_val is None else self.w_val.gather(1, pos)
        if self.rows is not None:
            return replace(self, val_rows=self.val_rows.gather(1, pos), w_val=w_val)
        phi_val = None if self.phi_val is None else tuple(_take(p, pos) for p in self.phi_val)
        return replace(
            self,
            x_val=_take(self.x_val, pos),
            y_val=_take(self.y_val, pos),
            phi_val=phi_val,
            w_val=w_val,
        )

    def stacked(self, limit: int | None = None, seeds: Sequence[int] = ()) -> EnsembleData:
        """The training rows in the stacked layout, without validation rows: all of them when
        a trial has at most `limit` (None: no limit; the data itself when already stacked),
        else `limit` of each trial's rows drawn without replacement from its seed
        (``seeds[t]``, `pilid.streams.STREAM_FIT_SAMPLE`), in their order. What the work done
        once per fit reads (the least-squares start, purification, the final training loss):
        a sample of a large table gives the same answer at a fraction of the cost."""
        T, n = self.shape
        if (limit is None or n <= limit) and self.rows is None:
            return self
        pos = None
        if limit is not None and n > limit:
            pos = _sample_positions(n, limit, seeds, stream=STREAM_FIT_SAMPLE, draw=0)
            pos = pos.to(self.y.device)
        w = self.w if pos is None or self.w is None else self.w.gather(1, pos)
        if self.rows is not None:
            rows = self.rows if pos is None else self.rows.gather(1, pos)
            x, phi, y = self.x[rows], None, self.y[rows]
            if self.phi is not None:
                phi = tuple(p[rows] for p in self.phi)
            return EnsembleData(x=x, y=y, phi=phi, w=w)
        phi = None if self.phi is None else tuple(_take(p, pos) for p in self.phi)
        return EnsembleData(x=_take(self.x, pos), y=_take(self.y, pos), phi=phi, w=w)


def _sample_positions(n: int, limit: int, seeds: Sequence[int], stream: int, draw: int):
    """(T, limit) sorted positions among n, drawn without replacement per trial seed: draw
    `draw` of stream `stream` (the training sample 0, the validation sample 1)."""
    picks = []
    for s in seeds:
        g = trial_generator(s, stream)
        for _ in range(draw + 1):
            perm = torch.randperm(n, generator=g)
        picks.append(perm[:limit].sort().values)
    return torch.stack(picks)


def _take(v: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Rows `pos` (T, k) of each trial of a stacked (T, n, ...) tensor."""
    index = pos.view(*pos.shape, *([1] * (v.dim() - 2))).expand(-1, -1, *v.shape[2:])
    return v.gather(1, index)
