"""Task losses and penalties of Eq. (11), per trial (leading dimension T).

Guo et al., IJCAI 2020, Eq. (11): R = (1/N) sum_i L(h(x_i), y_i) + lam * Omega, with L the mean
squared error for regression and the cross-entropy for classification, and Omega the L1 or L2
norm of the parameters. The L2 term is applied by the optimiser as weight decay 2 * lam (the
gradient of lam * ||p||^2); the L1 term is added to the loss here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from pilid.tasks import TASKS

#: The norms Omega of Eq. (11).
REGS = ("l1", "l2")

#: The parameter groups Omega of Eq. (11) may cover: every parameter, the additive part's or the
#: deep part's, or one of the additive part's tensors (w, b, omega of Eq. 10).
REG_GROUPS = ("all", "additive", "deep", "w", "b", "omega")


@dataclass(frozen=True)
class Regularized:
    """Which parameters ``lam * Omega`` of Eq. (11) covers, by parameter name: those of
    ``groups`` (`REG_GROUPS`), except names starting with one of ``exempt`` (parameters with a
    penalty of their own, e.g. PiLiB's gates). Called as ``regularized(name) -> bool``."""

    groups: tuple[str, ...] = ("all",)
    exempt: tuple[str, ...] = ()

    def __call__(self, name: str) -> bool:
        """Whether Omega covers the parameter called `name`."""
        if any(name.startswith(prefix) for prefix in self.exempt):
            return False
        if "all" in self.groups:
            return True
        if "additive" in self.groups and name.startswith("additive."):
            return True
        if "deep" in self.groups and name.startswith("deep."):
            return True
        return any(name == f"additive.{g}" for g in self.groups if g in ("w", "b", "omega"))


def task_loss(out: torch.Tensor, y: torch.Tensor, task: str, classes: int = 1) -> torch.Tensor:
    """Element-wise loss (T, B): squared error, or binary cross-entropy on logits (y in {0, 1}).

    ``classes`` = K > 1 (classification with K classes, beyond the paper): the T trials come
    in softmax groups of K consecutive trials, trial k of a group holding the logit of class k
    on the same rows, and ``y`` the class index (the same in every trial of a group). Every
    trial of a group gets the group's cross-entropy ``logsumexp_k(out_k) - out_y`` (so it is
    counted K times in a sum over trials; the trainer divides its gradient by K).
    """
    if task == "regression":
        return (out - y).square()
    if task != "classification":
        raise ValueError(f"unknown task {task!r}; use one of {TASKS}")
    if classes <= 1:
        return F.binary_cross_entropy_with_logits(out, y, reduction="none")
    T, B = out.shape
    logits = out.view(T // classes, classes, B)
    true = torch.gather(logits, 1, y.view(T // classes, classes, B)[:, :1].long())
    ce = torch.logsumexp(logits, 1) - true[:, 0]  # (groups, B)
    return ce.repeat_interleave(classes, dim=0)


def l1_penalty(params: Sequence[torch.Tensor]) -> torch.Tensor:
    """Omega_1 per trial: sum of |p| over the parameters' trial slices, shape (T,)."""
    return sum(p.abs().flatten(1).sum(1) for p in params)


def l2_penalty(params: Sequence[torch.Tensor]) -> torch.Tensor:
    """Omega_2 per trial: sum of p^2 over the parameters' trial slices, shape (T,)."""
    return sum(p.square().flatten(1).sum(1) for p in params)
