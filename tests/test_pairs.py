"""Explicit pair terms (PiLiD's ``pairs``; `pilid.nn.pairs`, `pilid.models.pair_choice`).

A pair term equals the bilinear interpolation of its grid (scipy's `RegularGridInterpolator`),
also on a coarse grid; FAST ranks a true interaction first beside a stronger main effect, and the
pairs are its two rankings (on the main effects' residuals, on the target) in turn; a pair
term recovers an interaction the additive part cannot; trials of one batch keep their own pairs
and points; constrained features, K > 2 classes and bad values behave as documented.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.interpolate import RegularGridInterpolator
from sklearn.base import clone

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.models.fitting import fit_batched
from pilid.models.pair_choice import AUTO_PAIRS, fast_pairs, main_effect_scores
from pilid.nn.pairs import PAIR_PIECES, PairTerms, coarse_pieces
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact

SMALL = dict(n_bags=1, random_state=0, device="cpu", epochs=60, lam=1e-5)


def _interaction(n, seed=0, main=1.0):
    """y = 2 x0 x1 + main * x2 + noise: one pair interacts, x2 is a (strong) main effect."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    return X, 2 * X[:, 0] * X[:, 1] + main * X[:, 2] + 0.1 * rng.normal(size=n)


def _terms(knots, pairs, V, X):
    """PairTerms for one trial with values V (K, G, G), evaluated at the rows X."""
    pieces = knots.n_pieces
    starts = np.concatenate([[0], np.cumsum(pieces)[:-1]])
    coarse = coarse_pieces(pieces, knots.categorical)
    module = PairTerms(np.asarray(pairs)[None], starts[None], pieces[None], coarse[None])
    with torch.no_grad():
        module.V.zero_()
        g = V.shape[-1]
        module.V[0, :, :g, :g] = torch.as_tensor(V, dtype=torch.float32)
    phi = tuple(p[None] for p in phi_compact(torch.as_tensor(X), compact_layout(knots)))
    return module.terms(phi)[0].detach().numpy()


@pytest.mark.parametrize("gamma", [4, 2 * PAIR_PIECES])
def test_a_pair_term_is_the_bilinear_interpolation_of_its_grid(gamma):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(500, 3))
    knots = fit_knots(X, gamma, "uniform", np.zeros(3, dtype=bool))
    step = gamma // min(gamma, PAIR_PIECES)  # a coarse node every `step` characteristic points
    pairs = [[0, 1], [1, 2]]
    V = rng.normal(size=(2, gamma // step + 1, gamma // step + 1))
    got = _terms(knots, pairs, V, X)
    for k, (a, b) in enumerate(pairs):
        grid = (knots.points[a][::step], knots.points[b][::step])
        expected = RegularGridInterpolator(grid, V[k], method="linear")(X[:, [a, b]])
        np.testing.assert_allclose(got[:, k], expected, atol=1e-5)


def test_a_categorical_feature_keeps_a_node_per_level_and_values_outside_clip():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 12, 400).astype(float), rng.uniform(0, 1, 400)])
    categorical = np.array([True, False])
    knots = fit_knots(X, 3, "uniform", categorical)
    assert coarse_pieces(knots.n_pieces, categorical).tolist() == [11, 3]  # 12 levels: 12 nodes
    V = rng.normal(size=(1, 12, 12))
    rows = np.array([[5.0, 0.0], [5.0, knots.points[1][1]], [11.0, 7.0]])  # 7.0: beyond the end
    got = _terms(knots, [[0, 1]], V, rows)[:, 0]
    np.testing.assert_allclose(got, [V[0, 5, 0], V[0, 5, 1], V[0, 11, 3]], atol=1e-6)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_fast_ranks_the_interacting_pair_first_beside_a_stronger_main_effect(task):
    X, y = _interaction(3000, main=3.0)
    target = (y - y.mean()) / y.std() if task == "regression" else (y > 0).astype(int)
    knots = fit_knots(X, 5, "quantile", np.zeros(4, dtype=bool))
    found = fast_pairs(X, target, 2, knots, task, np.zeros(4, dtype=bool))
    assert found[0].tolist() == [0, 1]
    excluded = fast_pairs(X, target, 10, knots, task, np.zeros(4, dtype=bool), exclude=[1, 0, 0, 0])
    assert len(excluded) == 3 and 0 not in excluded  # the pairs of x1, x2, x3 alone


def test_the_pairs_take_the_residual_and_the_target_ranking_in_turn():
    from interpret.utils import measure_interactions

    X, y = _interaction(2000, main=3.0)
    X[:, 3] = 3 * X[:, 3]  # a fourth feature
    target = (X[:, 2] + X[:, 3] + 0.5 * X[:, 2] * X[:, 3] + 2 * X[:, 0] * X[:, 1] > 0).astype(int)
    categorical = np.zeros(4, dtype=bool)
    knots = fit_knots(X, 5, "quantile", categorical)
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]

    def order(init):  # InterpretML's FAST gains, the largest first
        gains = measure_interactions(X, target, interactions=pairs, init_score=init)
        return [tuple(sorted(p)) for p, _ in sorted(gains, key=lambda pg: -pg[1])]

    residual = order(main_effect_scores(X, target, knots, "classification"))
    raw = order(None)
    expected = []
    for pair in [p for two in zip(residual, raw) for p in two]:
        if pair not in expected:
            expected.append(pair)
    found = fast_pairs(X, target, 4, knots, "classification", categorical)
    assert [tuple(p) for p in found.tolist()] == expected[:4]
    assert found[0].tolist() == [0, 1] and residual[0] == (0, 1)  # the interaction, first
    assert raw[0] == (2, 3) and (2, 3) in expected[:4]  # the strong features' pair, second


@pytest.mark.slow
def test_a_pair_term_recovers_an_interaction_the_additive_part_cannot():
    X, y = _interaction(3000)
    X_test, _ = _interaction(2000, seed=1)
    truth = 2 * X_test[:, 0] * X_test[:, 1] + X_test[:, 2]
    additive = PiLiDRegressor(hidden_layers=None, pairs=0, **SMALL).fit(X, y)
    paired = PiLiDRegressor(hidden_layers=None, pairs=1, **SMALL).fit(X, y)
    assert paired.pairs_ == [("x0", "x1")] and additive.pairs_ == []
    mse_additive = np.mean((additive.predict(X_test) - truth) ** 2)
    mse_paired = np.mean((paired.predict(X_test) - truth) ** 2)
    # 2 x0 x1 has variance 4/9 and no additive part: the additive model keeps all of it
    assert mse_additive > 0.35 and mse_paired < 0.02
    # the purified deep part (the pair term) holds no main effect of x2
    _, contributions, deep = paired.decompose(X_test)
    assert abs(np.corrcoef(deep, X_test[:, 2])[0, 1]) < 0.1
    assert np.corrcoef(contributions[:, 2], X_test[:, 2])[0, 1] > 0.99


@pytest.mark.slow
def test_trials_of_one_batch_keep_their_own_pairs_and_points():
    template = PiLiDRegressor(gamma=4, pairs=2, hidden_layers=(8,), patience=3, **SMALL)
    problems = [_interaction(600, seed=s) for s in range(3)]
    problems[2] = (problems[2][0][:, [2, 3, 0, 1]], problems[2][1])  # its pair is (x2, x3)
    ests = [clone(template).set_params(random_state=10 + t) for t in range(3)]
    fit_batched(ests, [p[0] for p in problems], [p[1] for p in problems])
    assert ests[2].pairs_[0] == ("x2", "x3") and ests[0].pairs_[0] == ("x0", "x1")
    for t, (X, y) in enumerate(problems):
        alone = clone(template).set_params(random_state=10 + t).fit(X, y)
        assert alone.pairs_ == ests[t].pairs_
        np.testing.assert_allclose(ests[t].predict(X + 0.01), alone.predict(X + 0.01), atol=1e-4)


def test_a_monotone_feature_takes_part_in_no_pair():
    X, y = _interaction(1500)
    model = PiLiDRegressor(pairs=3, monotone_constraints={0: 1}, hidden_layers=None, **SMALL)
    model.fit(X, y)
    assert model.pairs_ and all("x0" not in pair for pair in model.pairs_)


def test_pairs_with_more_than_two_classes_is_refused_in_one_line_and_auto_has_none():
    X, y = _interaction(600)
    classes = np.digitize(y, [-0.5, 0.5])
    with pytest.raises(PilidError, match=r"^pairs=2 is invalid; .*use 0$") as caught:
        PiLiDClassifier(pairs=2, **SMALL).fit(X, classes)
    assert "\n" not in str(caught.value)
    model = PiLiDClassifier(pairs="auto", hidden_layers=(8,), **SMALL).fit(X, classes)
    assert model.pairs_ == [] and model.shape_choice_["pairs"].tolist() == [0]


@pytest.mark.parametrize("bad", [-1, 1.5, "many"])
def test_a_bad_pairs_value_is_refused_in_one_line(bad):
    X, y = _interaction(200)
    with pytest.raises(PilidError, match=r"^pairs=") as caught:
        PiLiDRegressor(pairs=bad).fit(X, y)
    assert "\n" not in str(caught.value)


def test_pairs_auto_keeps_the_candidate_of_lower_validation_loss():
    X, y = _interaction(2000)
    model = PiLiDRegressor(pairs="auto", hidden_layers=None, n_bags=2, random_state=0, epochs=40)
    model.fit(X, y)
    table = model.shape_choice_
    assert table["pairs"].tolist() == [0, min(AUTO_PAIRS, 6)]  # 4 features: 6 pairs
    assert table["chosen"].tolist() == [False, True]  # the interaction needs its pair
    assert table["val_loss"][1] < table["val_loss"][0] and len(model.pairs_) == 6
