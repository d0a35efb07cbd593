"""Trials trained as one ensemble equal the same seeds trained alone (batched trials)."""

import numpy as np
import pytest
import torch
from sklearn.base import clone

from pilid.errors import PilidError
from pilid.estimators.pilid import MLPRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.models.fitting import fit_batched
from pilid.train import Phase

FAST = dict(hidden_layers=(16, 8), batch_size=32, device="cpu")
#: One model per trial with the paper's penalty (the library defaults are a bag of 16, lam=1e-3).
SINGLE = {**FAST, "n_bags": 1, "lam": 1e-5}


def _problem(seed, n=240, classify=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    X[:, 2] = np.round(X[:, 2] * 2)  # a discrete feature: quantile knots differ across trials
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    if classify:
        y = (y > 0).astype(int)
    return X, y


def _assert_same_as_alone(template, problems, atol):
    ests = [clone(template).set_params(random_state=10 + t) for t in range(len(problems))]
    Xs = [p[0] for p in problems]
    ys = [p[1] for p in problems]
    batched = fit_batched(ests, Xs, ys)
    assert batched[0] is ests[0]  # fitted in place
    for t, est in enumerate(batched):
        X_eval = Xs[t] + 0.05
        alone = clone(template).set_params(random_state=10 + t).fit(Xs[t], ys[t])
        assert est.n_epochs_ == alone.n_epochs_ and est.best_epoch_ == alone.best_epoch_
        np.testing.assert_allclose(est.history_["val_loss"], alone.history_["val_loss"], atol=atol)
        out = "decision_function" if hasattr(est, "decision_function") else "predict"
        np.testing.assert_allclose(
            getattr(est, out)(X_eval), getattr(alone, out)(X_eval), atol=atol
        )
    return batched


def test_batched_regression_equals_alone_with_early_stopping():
    template = PiLiDRegressor(gamma=4, knots="quantile", epochs=25, patience=2, **SINGLE)
    fitted = _assert_same_as_alone(template, [_problem(s) for s in range(3)], atol=1e-4)
    stops = [f.n_epochs_ for f in fitted]
    assert min(stops) < 25  # early stopping ended at least one trial before the cap
    assert len({f.knots_.n_columns for f in fitted}) >= 1


def test_batched_classification_equals_alone_with_early_stopping():
    template = PiLiDClassifier(gamma=3, epochs=25, patience=2, **SINGLE)
    problems = [_problem(s, classify=True) for s in range(3)]
    fitted = _assert_same_as_alone(template, problems, atol=1e-4)
    assert min(f.n_epochs_ for f in fitted) < 25


def test_batched_mlp_baseline_and_unequal_sizes():
    # the second problem has another row count: it trains in its own group, still equal
    template = MLPRegressor(epochs=6, patience=3, **FAST)
    _assert_same_as_alone(template, [_problem(0), _problem(1, n=200), _problem(2)], atol=1e-4)


def test_quantile_trials_have_different_piece_counts_and_stay_equal():
    rng = np.random.default_rng(0)
    problems = []
    for levels in (3, 6):  # discrete feature with 3 vs 6 levels: different Phi widths
        X = rng.uniform(size=(200, 2))
        X[:, 1] = rng.integers(0, levels, size=200)
        problems.append((X, X[:, 0] + 0.2 * X[:, 1] + 0.1 * rng.normal(size=200)))
    template = PiLiDRegressor(gamma=8, knots="quantile", epochs=5, patience=None, **SINGLE)
    fitted = _assert_same_as_alone(template, problems, atol=1e-4)
    assert fitted[0].knots_.n_columns != fitted[1].knots_.n_columns


def _bias_penalty(model, x):
    return 5.0 * model.deep.out_b.reshape(-1).square()


class _Scheduled(PiLiDRegressor):
    """A toy two-phase schedule: phase 1 penalises the MLP output bias until it is small or
    3 epochs pass; phase 2 freezes omega and trains without the penalty (the PiLiB pattern).
    Phase 2's `until` only records omega after every epoch (it never ends the phase)."""

    def _penalty_term(self):
        return _bias_penalty

    def _phases(self):
        self.omega_trace = []

        def small_bias(model):
            return model.deep.out_b.reshape(-1).abs() < 1e-3

        def record(model):
            self.omega_trace.append(model.additive.omega.detach().clone())
            return torch.zeros(model.n_trials, dtype=torch.bool)

        return [
            Phase("penalised", 3, penalty=True, early_stopping=False, until=small_bias),
            Phase("frozen", self.epochs, frozen=("additive.omega",), until=record),
        ]


def test_phases_penalty_and_frozen_parameters_batched_equals_alone():
    template = _Scheduled(gamma=3, epochs=6, patience=2, pairs=0, smoothness=0.0, **SINGLE)
    fitted = _assert_same_as_alone(template, [_problem(s) for s in range(3)], atol=1e-4)
    # trace[i]: omega (T, m) after epoch e0 + 1 + i, the epochs in which any trial was in phase 2
    trace = torch.stack(fitted[0].omega_trace)
    e0 = min(est.history_["phase"].count("penalised") for est in fitted)
    for t, est in enumerate(fitted):
        phases = est.history_["phase"]
        assert phases[0] == "penalised" and phases[-1] == "frozen"
        n1 = phases.count("penalised")
        # omega moved away from 1 in phase 1, then stayed fixed through phase 2
        seen = trace[n1 - e0 :, t]
        assert len(seen) >= 1
        assert not torch.allclose(seen[0], torch.ones_like(seen[0]))
        torch.testing.assert_close(seen, seen[:1].expand_as(seen), rtol=0, atol=0)
        torch.testing.assert_close(est.module_.additive.omega[0], seen[0], rtol=0, atol=1e-7)


@pytest.mark.slow
def test_worker_processes_give_the_same_trials():
    template = PiLiDRegressor(gamma=3, epochs=4, patience=None, **SINGLE)
    problems = [_problem(s, n=160) for s in range(2)]
    ests = [clone(template).set_params(random_state=t) for t in range(2)]
    fit_batched(ests, [p[0] for p in problems], [p[1] for p in problems], n_jobs=2)
    for t, est in enumerate(ests):
        alone = clone(template).set_params(random_state=t).fit(*problems[t])
        np.testing.assert_allclose(
            est.predict(problems[t][0]), alone.predict(problems[t][0]), atol=1e-4
        )


def test_hyper_parameters_are_compared_by_content_not_spelling():
    X, y = _problem(0, n=120)
    kwargs = dict(gamma=2, epochs=2, patience=None, random_state=0)
    a = PiLiDRegressor(hidden_layers=(8, 4), **kwargs)
    b = PiLiDRegressor(hidden_layers=[8, 4], **kwargs).set_params(random_state=1)
    fitted = fit_batched([a, b], [X, X], [y, y])  # one setting: trained as one ensemble
    alone = PiLiDRegressor(hidden_layers=(8, 4), **{**kwargs, "random_state": 1}).fit(X, y)
    np.testing.assert_allclose(fitted[1].predict(X), alone.predict(X), atol=1e-4)


def test_fit_batched_rejects_mixed_settings():
    X, y = _problem(0)
    with pytest.raises(PilidError, match="same hyper-parameters"):
        fit_batched([PiLiDRegressor(gamma=2), PiLiDRegressor(gamma=3)], [X, X], [y, y])
    with pytest.raises(PilidError, match="one X and one y"):
        fit_batched([PiLiDRegressor()], [X, X], [y])


def test_same_seed_is_bit_for_bit_repeatable():
    X, y = _problem(5)
    a = PiLiDRegressor(gamma=3, epochs=4, random_state=7, **SINGLE).fit(X, y).predict(X)
    b = PiLiDRegressor(gamma=3, epochs=4, random_state=7, **SINGLE).fit(X, y).predict(X)
    assert np.array_equal(a, b)
