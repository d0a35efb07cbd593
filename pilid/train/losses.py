"""Task losses and penalties of Eq. (11), per trial (leading dimension T).

Guo et al., IJCAI 2020, Eq. (11): R = (1/N) sum_i L(h(x_i), y_i) + lam * Omega, with L the mean
squared error for regression and the cross-entropy for classification, and Omega the L1 or L2
norm of the parameters. The L2 term is applied by the optimiser as weight decay 2 * lam (the
gradient of lam * ||p||^2); the L1 term is added to the loss here.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from pilid.tasks import TASKS

#: The norms Omega of Eq. (11).
REGS = ("l1", "l2")


def task_loss(out: torch.Tensor, y: torch.Tensor, task: str) -> torch.Tensor:
    """Element-wise loss (T, B): squared error, or binary cross-entropy on logits (y in {0, 1})."""
    if task == "regression":
        return (out - y).square()
    if task == "classification":
        return F.binary_cross_entropy_with_logits(out, y, reduction="none")
    raise ValueError(f"unknown task {task!r}; use one of {TASKS}")


def l1_penalty(params: Sequence[torch.Tensor]) -> torch.Tensor:
    """Omega_1 per trial: sum of |p| over the parameters' trial slices, shape (T,)."""
    return sum(p.abs().flatten(1).sum(1) for p in params)
