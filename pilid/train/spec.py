"""What the engine is told and what it gives back: `TrainSpec`, one plain, frozen description of
what a group of trials trains, and `TrainedTrial`, one trial's result.

The engine (`pilid.train.batched.fit_ensemble`) reads a `TrainSpec` and the trials' encoded data
(`pilid.train.protocol.Prepared`) and nothing else: it calls no estimator and sets no
estimator's attribute. An estimator says what it trains in one `TrainSpec`
(``Trainable._train_spec``) and takes each `TrainedTrial` into its fitted attributes itself
(`pilid.models.fitting`).

Guo et al., IJCAI 2020, Algorithm 1: step 2 (the additive part's start) reads ``init`` and
``sigma``; step 3 (mini-batch training with early stopping) reads ``phases`` and ``config``;
Eq. (9)'s deep part is built by ``build_deep``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from torch import nn

from pilid.train.trainer import Phase, TrainConfig

__all__ = ["TrainSpec", "TrainedTrial"]


@dataclass(frozen=True)
class TrainSpec:
    """What a group of trials trains (one hyper-parameter set; the trials differ in their data
    and seeds, `Prepared`).

    * ``name``: the model's name in messages and the progress bar (e.g. "PiLiDRegressor").
    * ``task``: "regression" or "classification".
    * ``config``: the optimiser, penalties and loss (`TrainConfig`; its ``desc`` is set by the
      engine to name the trials).
    * ``phases``: the training schedule (`Phase`, Algorithm 1 step 3).
    * ``build_deep``: ``build_deep(n_features, seeds) -> nn.Module | None``, the deep part of
      Eq. (9) for ``len(seeds)`` trials, trial t's slice drawn from ``seeds[t]`` alone (every
      parameter and buffer with the trials first; ``forward(x (T, B, m)) -> (T, B)``, or
      ``forward(x, phi)`` when the module has ``uses_phi = True``).
    * ``has_additive``: False drops the piecewise-linear part (Eq. 10).
    * ``init``: "lstsq" or "gaussian", Algorithm 1 step 2's start; ``sigma``: the Gaussian's
      standard deviation (None: He's, sqrt(2 / fan-in)).
    * ``purify``: move the deep part's main effect into the additive part after training.
    * ``monotone``: each feature's monotone constraint (+1, -1, 0: none), or None.
    * ``columns``: the features' names, for messages.
    """

    name: str
    task: str
    config: TrainConfig
    phases: tuple[Phase, ...]
    build_deep: Callable[[int, Sequence[int]], nn.Module | None]
    has_additive: bool = True
    init: str = "lstsq"
    sigma: float | None = None
    purify: bool = False
    monotone: tuple[int, ...] | None = None
    columns: tuple[str, ...] | None = None

    def column_names(self, m: int) -> list[str]:
        """The features' names (x0, x1, ... when there are none, or not m of them)."""
        if self.columns is not None and len(self.columns) == m:
            return list(self.columns)
        return [f"x{j}" for j in range(m)]

    def monotone_signs(self) -> np.ndarray | None:
        """``monotone`` as an array, or None when no feature is constrained."""
        if self.monotone is None or not np.any(self.monotone):
            return None
        return np.asarray(self.monotone)


@dataclass
class TrainedTrial:
    """One trained trial: its T=1 module on the CPU (`pilid.nn.ensemble.PiLiDEnsemble`; None when
    its training diverged), its loss history (``train_loss``, ``val_loss``, ``phase``,
    ``epoch_seconds``: per epoch), its epochs and best epoch, the device it trained on and,
    when its training diverged (`pilid.train.divergence`), why (None otherwise)."""

    module: nn.Module | None
    history: dict
    n_epochs: int
    best_epoch: int
    device: str
    diverged: str | None = None
