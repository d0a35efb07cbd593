"""pilid.train: training of T trials at once as one ensemble (leading trial dimension)."""

from __future__ import annotations

from pilid.train.trainer import (
    EnsembleData,
    Phase,
    TrainConfig,
    TrainResult,
    train_ensemble,
    trial_generator,
)

__all__ = [
    "EnsembleData",
    "Phase",
    "TrainConfig",
    "TrainResult",
    "fit_batched",
    "train_ensemble",
    "trial_generator",
]


def fit_batched(estimators, Xs, ys, n_jobs: int | None = 1):
    """Fit T unfitted estimators of one class and hyper-parameters (their `random_state` may
    differ), each on its own data, as one ensemble; returns the fitted estimators (in place).

    Each result equals, within float tolerance, `clone(est).fit(X, y)`. With `n_jobs` > 1 the
    trials are split over that many one-thread worker processes, each training its share as an
    ensemble. See `pilid.models.estimators.NeuralEstimator`.
    """
    from pilid.models.estimators import fit_batched as _fit

    return _fit(estimators, Xs, ys, n_jobs=n_jobs)
