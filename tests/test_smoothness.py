"""PiLiD's ``smoothness``: a second-difference penalty on the shapes (beyond the paper).

The roughness is checked against a loop over the pieces written here, its mask against the
knots (no pair across features or between categories), and its effect on data with a known
smooth truth: with many pieces the penalised shape is smoother and closer to the truth. The
purification moves the MLP's main effect into the shapes by the same penalised least squares.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.nn.additive import AdditiveEnsemble, difference_penalty
from pilid.nn.least_squares import LSTSQ_RIDGE, ridge_solve
from pilid.nn.piecewise import fit_knots, phi_numpy
from pilid.train.additive_start import neighbour_pieces
from pilid.train.protocol import Prepared

SMALL = dict(hidden_layers=None, n_bags=1, random_state=0, device="cpu")


def _prepared(X, gamma, categorical):
    knots = fit_knots(X, gamma, "quantile", np.asarray(categorical))
    n = len(X)
    return Prepared(X, np.zeros(n), np.arange(n), np.arange(0), 0, 0, 1, knots), knots


def test_roughness_is_the_sum_of_squared_differences_of_neighbouring_rises():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=50), rng.integers(0, 4, 50), rng.normal(size=50)])
    prep, knots = _prepared(X, 3, [False, True, False])
    f, _, _ = knots.layout()
    P = len(f)
    feature = torch.as_tensor(f)[None]
    w = torch.as_tensor(rng.normal(size=(1, P)), dtype=torch.float32)
    omega = torch.as_tensor(rng.normal(size=(1, 3)), dtype=torch.float32)
    additive = AdditiveEnsemble(feature, torch.ones(1, P), 3, w, omega=omega)
    neighbours = neighbour_pieces([prep], additive.feature, additive.mask)

    v = (w * omega[:, feature[0]]).numpy()[0]
    expected, pairs = 0.0, []
    for k in range(P - 1):  # consecutive pieces of one numeric feature (feature 1: categories)
        if f[k] == f[k + 1] and f[k] != 1:
            expected += (v[k + 1] - v[k]) ** 2
            pairs.append(k)
    assert np.flatnonzero(neighbours[0].numpy()).tolist() == pairs
    assert len(pairs) == 2 * (3 - 1)  # two numeric features of 3 pieces: 2 pairs each
    assert additive.roughness(neighbours).item() == pytest.approx(expected, rel=1e-5)


def _truth(x):
    return np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1] ** 2


def test_many_pieces_with_smoothness_follow_a_smooth_truth_better():
    rng = np.random.default_rng(1)
    X = rng.uniform(-2, 2, size=(500, 2))
    y = _truth(X) + rng.normal(0, 0.5, 500)
    grid = rng.uniform(-2, 2, size=(3000, 2))
    fits = {s: PiLiDRegressor(gamma=40, smoothness=s, **SMALL).fit(X, y) for s in (0.0, 0.1)}
    error = {s: np.mean((m.predict(grid) - _truth(grid)) ** 2) for s, m in fits.items()}
    rough = {}
    for s, m in fits.items():
        shape = m.shape_functions()
        rough[s] = sum(
            np.square(np.diff(part["value"].to_numpy(), 2)).sum()
            for _, part in shape.groupby("feature")
        )
    assert error[0.1] < 0.9 * error[0.0], error
    assert rough[0.1] < 0.5 * rough[0.0], rough


def test_smoothness_applies_to_bags_and_classification():
    rng = np.random.default_rng(2)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = (_truth(X) + rng.normal(0, 0.5, 300) > 0.5).astype(int)
    kw = dict(SMALL, n_bags=2, hidden_layers=(8,), gamma=30, epochs=20)
    plain = PiLiDClassifier(**kw).fit(X, y).predict_proba(X)
    smooth = PiLiDClassifier(smoothness=1.0, **kw).fit(X, y).predict_proba(X)
    assert not np.allclose(plain, smooth)  # the term reaches every member's training
    assert np.all(np.isfinite(smooth))


@pytest.mark.parametrize("value", [-0.1, "high", float("inf")])
def test_a_bad_smoothness_is_one_line(value):
    X = np.random.default_rng(3).normal(size=(40, 2))
    with pytest.raises(PilidError, match="smoothness") as info:
        PiLiDRegressor(smoothness=value, **SMALL).fit(X, X[:, 0])
    assert "\n" not in str(info.value)


def test_penalised_start_is_the_penalised_least_squares_and_weights_are_repeats():
    rng = np.random.default_rng(4)
    n, P = 60, 6
    phi = torch.as_tensor(rng.uniform(size=(1, n, P)), dtype=torch.float32)
    y = torch.as_tensor(rng.normal(size=(1, n)), dtype=torch.float32)
    neighbours = torch.tensor([[1.0, 1.0, 0.0, 1.0, 1.0]])  # two features of 3 pieces
    R = difference_penalty(neighbours, 0.3)
    w, _ = ridge_solve(phi, y, ridge=0.0, roughness=R)

    # independently: minimise mean (y - c - phi w)^2 + 0.3 sum_k nb_k (w_{k+1} - w_k)^2
    A, b = phi[0].double().numpy(), y[0].double().numpy()
    Ac, bc = A - A.mean(0), b - b.mean()
    D = np.zeros((P - 1, P))
    for k in range(P - 1):
        D[k, k], D[k, k + 1] = -neighbours[0, k], neighbours[0, k]
    expected = np.linalg.solve(Ac.T @ Ac + n * 0.3 * D.T @ D, Ac.T @ bc)
    np.testing.assert_allclose(w[0].numpy(), expected, rtol=1e-4, atol=1e-5)

    repeat = rng.integers(1, 4, n)
    rows = np.repeat(np.arange(n), repeat)
    w_rep, _ = ridge_solve(phi[:, rows], y[:, rows], ridge=0.0, roughness=R)
    weights = torch.as_tensor(repeat[None], dtype=torch.float32)
    w_wt, _ = ridge_solve(phi, y, ridge=0.0, roughness=R, weights=weights)
    np.testing.assert_allclose(w_wt.numpy(), w_rep.numpy(), rtol=1e-4, atol=1e-5)


def test_purification_moves_the_deep_main_effect_by_the_penalised_least_squares():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=300)
    kw = dict(gamma=12, smoothness=1.0, hidden_layers=(16,), epochs=10, patience=None, lam=1e-5)
    kw.update(n_bags=1, random_state=0, device="cpu")
    raw = PiLiDRegressor(purify=False, **kw).fit(X, y)
    pur = PiLiDRegressor(purify=True, **kw).fit(X, y)
    np.testing.assert_allclose(pur.predict(X), raw.predict(X), atol=1e-4)
    _, shapes_raw, deep_raw = raw.decompose(X)
    _, shapes_pur, _ = pur.decompose(X)
    moved = (shapes_pur - shapes_raw).sum(1)

    # independently: minimise mean (deep - c - phi w)^2 + 1.0 sum_k (w_{k+1} - w_k)^2 over
    # the neighbouring pieces of each feature (and the solver's relative ridge)
    phi = phi_numpy(X, pur.knots_)
    feature = np.repeat(np.arange(2), pur.knots_.n_pieces)
    D = np.zeros((len(feature) - 1, len(feature)))
    for k in np.flatnonzero(feature[1:] == feature[:-1]):
        D[k, k], D[k, k + 1] = -1.0, 1.0
    A, d = phi - phi.mean(0), deep_raw - deep_raw.mean()
    gram = A.T @ A
    ridge = LSTSQ_RIDGE * np.diag(gram).mean() * np.eye(len(feature))
    w = np.linalg.solve(gram + len(X) * 1.0 * D.T @ D + ridge, A.T @ d)
    expected = A @ w
    np.testing.assert_allclose(moved - moved.mean(), expected, atol=2e-3 * np.std(expected))
    unpenalised = A @ np.linalg.lstsq(A, d, rcond=None)[0]
    assert np.abs(unpenalised - expected).max() > 0.05 * np.std(expected)  # the penalty tells


def test_smoothness_with_missing_values_and_sample_weights():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(400, 2))
    y = _truth(X) + rng.normal(0, 0.3, 400)
    X[rng.uniform(size=400) < 0.1, 0] = np.nan
    weight = rng.integers(1, 3, 400).astype(float)
    model = PiLiDRegressor(gamma=30, smoothness=0.1, **SMALL).fit(X, y, sample_weight=weight)
    assert np.isfinite(model.predict(X)).all()
    shape = model.shape_functions()
    assert shape["x"].isna().sum() == 1  # feature 0's own contribution for NaN is kept


def test_many_pieces_on_few_rows_warn_only_without_smoothness():
    from pilid.estimators.neural import FewRowsPerPieceWarning

    rng = np.random.default_rng(6)
    X = rng.uniform(-2, 2, size=(120, 2))
    y = _truth(X)
    with pytest.warns(FewRowsPerPieceWarning, match="gamma=40"):
        PiLiDRegressor(gamma=40, smoothness=0.0, epochs=2, **SMALL).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewRowsPerPieceWarning)
        PiLiDRegressor(gamma=40, smoothness=0.1, epochs=2, **SMALL).fit(X, y)
