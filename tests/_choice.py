"""For the tests of the choices among candidates: a regression with a pair to find
(`pair_data`), the loss a choice reads (`pilid.models.shape_choice.validation_loss`),
recomputed independently from a fitted bag (`choice_loss`), and the sizes of the ensembles the
engine trains (`trained_sizes`)."""

from __future__ import annotations

import numpy as np

import pilid.models.fitting as fitting
from pilid.train.validation import holdout_split


def pair_data(n: int, seed: int = 0):
    """n rows of 4 uniform features: a sine, a strong pair x1 * x2, a line and noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 4))
    y = np.sin(X[:, 0]) + 1.5 * X[:, 1] * X[:, 2] + 0.3 * X[:, 3] + rng.normal(0, 0.3, n)
    return X, y


def choice_loss(fit, X, y) -> float:
    """The standardised target's mean squared error on the rows the bag ``fit`` held out for
    early stopping (the whole bag's prediction) and on each training row out of bag (the mean
    of the members whose bootstrap rows missed it)."""
    train, val = holdout_split(y, 0, fit.val_fraction, stratified=False)
    mean, scale = y.mean(), y.std()
    standard = (y - mean) / scale
    errors = [(fit.predict(X[val]) - mean) / scale - standard[val]]
    preds = np.stack([m.predict(X[train]) for m in fit.estimators_])
    missed = np.stack([~np.isin(train, rows) for rows in fit.bag_rows_])
    some = missed.any(0)
    oob = (preds * missed).sum(0)[some] / missed.sum(0)[some]
    errors.append((oob - mean) / scale - standard[train][some])
    return float(np.mean(np.square(np.concatenate(errors))))


def trained_sizes(monkeypatch) -> list[int]:
    """The sizes of the ensembles the engine trains, in order (filled as fits run)."""
    sizes = []
    fit_ensemble = fitting.fit_ensemble

    def counting(spec, preps, device, *args, **kwargs):
        sizes.append(len(preps))
        return fit_ensemble(spec, preps, device, *args, **kwargs)

    monkeypatch.setattr(fitting, "fit_ensemble", counting)
    return sizes
