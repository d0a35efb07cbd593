"""pilid.train: the training engine, T trials at once as one ensemble (leading trial dimension).

- `trainer`: the mini-batch loop and its schedule (`Phase`, early stopping), Algorithm 1 step 3,
  as a short loop over named steps;
- `steps`: those steps (one epoch, one optimiser step, one validation's stopping decision, one
  phase change, the epoch's host sync) and the trials' state they update.
- `ensemble_data`: the rows the trials train on (`EnsembleData`: stacked, or one shared table).
- `compaction`: trials that have finished leave the ensemble's computation.
- `losses`: the task losses and penalties of Eq. (11).
- `validation`: the rows a trial holds out for early stopping.
- `spec`: `TrainSpec`, what a group of trials trains, and `TrainedTrial`, one trial's result.
- `batched`: `fit_ensemble`, the engine as a function of a `TrainSpec` and the trials' data.
- `protocol`: `Prepared` (a trial's data) and the `Trainable` hooks of an estimator, which
  `pilid.models.fitting.fit_batched` calls (the engine never does).

Random streams of a trial are listed in `pilid.streams` (re-exported here).
"""

from __future__ import annotations

from pilid.streams import trial_generator
from pilid.train.batched import fit_ensemble
from pilid.train.ensemble_data import EnsembleData
from pilid.train.protocol import Prepared, Trainable
from pilid.train.spec import TrainedTrial, TrainSpec
from pilid.train.trainer import (
    Phase,
    TrainConfig,
    TrainResult,
    train_ensemble,
)

__all__ = [
    "EnsembleData",
    "Phase",
    "Prepared",
    "TrainConfig",
    "TrainResult",
    "Trainable",
    "TrainedTrial",
    "TrainSpec",
    "fit_ensemble",
    "train_ensemble",
    "trial_generator",
]
