"""The engine as a function (`pilid.train.fit_ensemble`): trained from a `TrainSpec` and the
trials' `Prepared` data alone, with no estimator anywhere; what an estimator fits is the engine's
result kept (`pilid.models.fitting.keep_trial`)."""

from __future__ import annotations

import dataclasses
import io
import pickle

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator

from pilid import MLPRegressor, NITRegressor, PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact
from pilid.train import Phase, Prepared, TrainConfig, TrainedTrial, TrainSpec, fit_ensemble
from pilid.train.validation import holdout_split


def _prepared(seed: int, n: int = 400) -> tuple[Prepared, np.ndarray, np.ndarray]:
    """One trial's data of y = |x0| + x1 (piecewise linear: the additive part's own shapes)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = np.abs(X[:, 0]) + X[:, 1]
    train, val = holdout_split(y, seed, 0.2, stratified=False)
    prep = Prepared(
        X=X,
        target=(y - y.mean()) / y.std(),
        train_idx=train,
        val_idx=val,
        seed=seed,
        x_mean=X.mean(0),
        x_scale=X.std(0),
        knots=fit_knots(X[train], 4, "uniform"),
    )
    return prep, X, y


def _spec(**changes) -> TrainSpec:
    spec = TrainSpec(
        name="plain",
        task="regression",
        config=TrainConfig(task="regression", lr=0.01, batch_size=64, patience=5),
        phases=(Phase("train", 30, early_stopping=True),),
        build_deep=lambda n, seeds: EnsembleMLP(n, (8,), None, seeds),
    )
    return dataclasses.replace(spec, **changes)


def test_the_engine_trains_trials_from_a_spec_and_their_data_alone():
    preps = [_prepared(seed)[0] for seed in (0, 1, 2)]
    trials = fit_ensemble(_spec(), preps, torch.device("cpu"))
    assert [type(t) for t in trials] == [TrainedTrial] * 3
    for prep, trial in zip(preps, trials):
        assert trial.diverged is None and trial.device == "cpu"
        assert 0 < trial.n_epochs <= 30 and len(trial.history["val_loss"]) == trial.n_epochs
        assert trial.module.n_trials == 1  # the trial's own T=1 module
        X = torch.as_tensor(prep.X)
        phi = tuple(p[None] for p in phi_compact(X, compact_layout(prep.knots)))
        x = (prep.X - prep.x_mean) / prep.x_scale
        with torch.no_grad():
            out = trial.module(torch.as_tensor(x, dtype=torch.float32)[None], phi)[0].numpy()
        # |x0| + x1 is in the additive part's span (a knot at 0): the least-squares start and
        # the training leave a small error on the standardised target
        assert np.mean((out - prep.target) ** 2) < 0.01


def test_the_spec_is_frozen_and_names_its_columns():
    spec = _spec(columns=("a", "b"), monotone=(1, 0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.init = "gaussian"
    assert spec.column_names(2) == ["a", "b"] and spec.column_names(3) == ["x0", "x1", "x2"]
    assert spec.monotone_signs().tolist() == [1, 0]
    assert _spec(monotone=(0, 0)).monotone_signs() is None


def test_an_estimator_keeps_what_the_engine_gives_its_spec():
    """``PiLiDRegressor.fit`` is the engine on the estimator's own spec and data: the same
    numbers from `fit_ensemble` called by hand with them."""
    _, X, y = _prepared(3)
    est = PiLiDRegressor(n_bags=1, pairs=0, epochs=5, random_state=0)
    fitted = PiLiDRegressor(**est.get_params()).fit(X, y)
    prep = est._prepare(X, y)
    (trial,) = fit_ensemble(est._train_spec(), [prep], torch.device("cpu"))
    state, want = trial.module.state_dict(), fitted.module_.state_dict()
    # the estimator adds the unseen levels' value after training (`_finalize`)
    assert set(want) - set(state) == {"additive.unseen_value"} and set(state) <= set(want)
    assert all(torch.equal(state[k], want[k]) for k in state)
    for key in ("train_loss", "val_loss", "phase"):  # (the epochs' seconds are the clock's)
        assert trial.history[key] == fitted.history_[key]


class _NoEstimators(pickle.Pickler):
    """A pickler that records every estimator it meets (a bound method pickles its object)."""

    def __init__(self, file):
        super().__init__(file)
        self.met = []

    def persistent_id(self, obj):
        if isinstance(obj, BaseEstimator):
            self.met.append(type(obj).__name__)
            return len(self.met)
        return None


@pytest.mark.parametrize(
    "make",
    [
        lambda: PiLiDRegressor(n_bags=1, pairs=2, epochs=2),
        lambda: PiLiDClassifier(n_bags=1, hidden_layers=None, epochs=2),
        lambda: MLPRegressor(n_bags=1, epochs=2),
        lambda: PiLiBRegressor(n_bags=1, epochs=2, monotone_constraints={0: 1}),
        lambda: NITRegressor(n_bags=1, epochs=2),
    ],
)
def test_the_spec_holds_no_estimator_so_the_engine_cannot_call_back(make):
    """What the engine gets of an estimator (its `TrainSpec`) is plain: pickled, it reaches no
    estimator (no bound method, no closure over one), and its builder, penalty and
    regularised set do what the estimator's hooks say."""
    prep, X, y = _prepared(4)
    est = make()
    y = y > np.median(y) if est._task == "classification" else y
    est._prepare(X, y)
    spec = est._train_spec()
    pickler = _NoEstimators(io.BytesIO())
    pickler.dump(spec)
    assert pickler.met == []
    deep = spec.build_deep(2, [0, 1])
    gated = isinstance(est, (PiLiBRegressor, NITRegressor))
    assert (deep is None) == (getattr(est, "hidden_layers", 1) is None)
    assert gated == hasattr(deep, "gates") == (spec.config.extra_loss is not None)
    assert spec.config.regularized("deep.gates.log_alpha") is not gated
    assert spec.config.regularized("additive.w")
    if isinstance(est, PiLiBRegressor):  # the monotone feature's gates start closed
        assert (deep.gates.log_alpha[:, :, 0] < -10).all() and (
            deep.gates.log_alpha[:, :, 1] > -10
        ).all()
