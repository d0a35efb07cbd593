"""Diverged training: which trials of an ensemble must not be used, and what to change.

A trial's training diverged when

* its training loss (the epoch's mean mini-batch loss of Eq. 11's task term, `history_`)
  became NaN or inf in some epoch, or
* the trained model (after early stopping's restore) fits the rows it trained on far worse than
  a constant prediction: its task loss there is more than `DIVERGENCE_FACTOR` times that of the
  best constant, ``max(constant_loss, reference)``. For regression the constant is the mean of
  the (standardised) target, its loss the target's variance, and the reference 1 (a standardised
  target's variance); for classification the constant is the class prior, its loss the prior's
  log-loss (entropy), and the reference log 2 (a coin flip). The reference keeps a (nearly)
  constant target from making every small error a divergence.

Training from Algorithm 1's least-squares start (whose training loss is at most the
constant's) lowers the loss, so a trained model above the limit has blown up: too large a
learning rate (Adam at ``lr=1000`` reaches 1e13 times the variance; Adam's first step moves
every weight by about ``lr``, which a model with many pieces per feature cannot take when few
epochs follow). The paper's settings stay far below: the smoke grids' trained models (N=400
and 800, m=8, gamma 1-20, both inits, 2-3 epochs) at most 1.11 times the constant's loss, and the
recorded regression trials of ``results/records`` (5,280) a test MSE of at most 0.58 times
that of predicting the training mean.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from pilid.tasks import TASKS

#: A trained model whose training loss exceeds this many times a constant prediction's diverged.
DIVERGENCE_FACTOR = 10.0
#: The learning rate suggested when a larger one diverged (the paper's Adam learning rate).
SAFE_LR = 0.005


def reference_loss(task: str, classes: int = 1) -> float:
    """The smallest loss a constant prediction is credited with: 1 (the variance of a
    standardised target) for regression, log 2 (a coin flip's log-loss) for classification,
    log K for K > 2 classes (``classes``)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; use one of {TASKS}")
    return 1.0 if task == "regression" else math.log(max(2, classes))


def constant_loss(y: torch.Tensor, task: str, classes: int = 1, weights=None) -> torch.Tensor:
    """Per trial (T,), the task loss of the best constant prediction on the rows ``y`` (T, n):
    the variance (regression: predicting the mean) or the entropy of the class share
    (classification, labels 0/1: predicting the prior; ``classes`` = K > 1: y the class index,
    the entropy of the K shares). ``weights`` (T, n): sample weights, every mean weighted."""
    y = y.double()
    if weights is None:

        def mean(v):
            return v.mean(1)
    else:
        w = weights.double()

        def mean(v):
            return (v * w).sum(1) / w.sum(1).clamp_min(1e-300)

    if task == "regression":
        return mean((y - mean(y).unsqueeze(1)).square())
    if classes > 1:
        shares = torch.stack([mean((y == k).double()) for k in range(classes)])
        return -torch.special.xlogy(shares, shares).sum(0)
    p = mean(y)
    return -(torch.special.xlogy(p, p) + torch.special.xlogy(1.0 - p, 1.0 - p))


def divergence_reasons(
    final_loss: torch.Tensor,
    y: torch.Tensor,
    train_loss: np.ndarray,
    n_epochs,
    task: str,
    classes: int = 1,
    weights=None,
) -> list[str | None]:
    """Per trial, why its training diverged (a clause for a one-line message), or None.

    ``final_loss`` (T,): the trained model's mean task loss on its training rows ``y`` (T, n);
    ``train_loss`` (epochs, T): the per-epoch training loss; ``n_epochs`` (T,): the epochs trial
    t trained (its rows of ``train_loss``); ``weights`` (T, n): the rows' sample weights
    (``final_loss`` then their weighted mean, and the constant's loss weighted alike).
    """
    final = final_loss.detach().double().cpu().numpy()
    scale = np.maximum(
        constant_loss(y, task, classes, weights).cpu().numpy(), reference_loss(task, classes)
    )
    name = "MSE" if task == "regression" else "log-loss"
    versus = "the target's variance" if task == "regression" else "predicting the class prior"
    reasons: list[str | None] = []
    for t in range(len(final)):
        history = np.asarray(train_loss[: int(n_epochs[t]), t], dtype=np.float64)
        bad = ~np.isfinite(history)
        if bad.any():
            k = int(np.argmax(bad))
            reasons.append(f"the training loss became {history[k]} at epoch {k + 1}")
        elif not np.isfinite(final[t]):
            reasons.append(f"its training {name} is {final[t]}")
        elif final[t] > DIVERGENCE_FACTOR * scale[t]:
            reasons.append(
                f"its training {name} is {final[t] / scale[t]:.3g} times that of {versus} "
                f"(limit {DIVERGENCE_FACTOR:g})"
            )
        else:
            reasons.append(None)
    return reasons


def lower_lr(lr: float) -> float:
    """The learning rate to suggest after ``lr`` diverged: the paper's 0.005, or a tenth of
    ``lr`` when it is not above that already."""
    return SAFE_LR if lr > SAFE_LR else float(f"{lr / 10:.3g}")


def lr_advice(lr, key: str = "lr") -> str:
    """``lower lr (now 1000), e.g. lr=0.005`` with the key as the caller spells it
    (``train.lr`` on the command line)."""
    try:
        value = float(lr)
    except (TypeError, ValueError):
        return f"lower {key}"
    return f"lower {key} (now {value:g}), e.g. {key}={lower_lr(value):g}"
