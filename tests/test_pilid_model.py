"""PiLiD model: least-squares init (Algorithm 1), gamma=1 linearity, components, purification."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LinearRegression

from pilid.estimators.pilid import PAPER_PROTOCOL, PiLiDClassifier, PiLiDRegressor
from pilid.nn.additive import AdditiveEnsemble
from pilid.nn.least_squares import ridge_solve
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact, phi_numpy

#: The paper's knots, penalty, single model and plain least squares (the library defaults differ:
#: LIBRARY_DEFAULTS).
PAPER = {k: PAPER_PROTOCOL[k] for k in ("knots", "lam", "n_bags", "smoothness")}
FAST = dict(hidden_layers=(16, 8), batch_size=64, device="cpu", random_state=0, **PAPER)


def _data(n=400, m=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, m))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.5 * X[:, 0] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def _lstsq_predict(Phi_train, y, Phi_test):
    A = np.column_stack([np.ones(len(Phi_train)), Phi_train])
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    return np.column_stack([np.ones(len(Phi_test)), Phi_test]) @ coef


def test_ridge_solve_is_least_squares_per_trial():
    rng = np.random.default_rng(1)
    phi = rng.uniform(size=(2, 200, 6))
    y = rng.normal(size=(2, 200))
    w, c = ridge_solve(torch.as_tensor(phi), torch.as_tensor(y), ridge=1e-12)
    for t in range(2):
        np.testing.assert_allclose(
            phi[t] @ w[t].numpy() + c[t].item(), _lstsq_predict(phi[t], y[t], phi[t]), atol=1e-8
        )


def test_ridge_solve_survives_collinear_one_hot_columns_in_float32():
    # A one-hot group sums to 1 (collinear with the intercept), as in bank's and bike's inputs:
    # the float32 Gram matrix is indefinite, and the solve must still give least squares.
    rng = np.random.default_rng(2)
    levels = rng.integers(0, 4, size=3000)
    one_hot = np.eye(4)[levels]
    phi = np.concatenate([one_hot, one_hot[:, :2], rng.uniform(size=(3000, 3))], axis=1)
    y = levels * 0.7 + phi[:, -1] + 0.1 * rng.normal(size=3000)
    w, c = ridge_solve(
        torch.as_tensor(phi[None], dtype=torch.float32),
        torch.as_tensor(y[None], dtype=torch.float32),
    )
    pred = phi @ w[0].double().numpy() + c[0].item()
    assert np.isfinite(pred).all()
    np.testing.assert_allclose(pred, _lstsq_predict(phi, y, phi), atol=5e-3)


def test_lstsq_init_gives_least_squares_predictions_before_training():
    X, y = _data()
    X_test, _ = _data(seed=1)
    est = PiLiDRegressor(gamma=4, epochs=0, patience=None, **FAST).fit(X, y)
    knots = fit_knots(X, gamma=4)
    expected = _lstsq_predict(phi_numpy(X, knots), y, phi_numpy(X_test, knots))
    np.testing.assert_allclose(est.predict(X_test), expected, atol=2e-4)
    # the deep part is there but starts at zero output (zero output layer, Algorithm 1 leaves it)
    _, _, deep = est.decompose(X_test)
    assert np.abs(deep).max() == 0.0


def test_lstsq_init_classifier_is_least_squares_on_pm1_labels():
    X, y = _data()
    labels = np.where(y > np.median(y), "yes", "no")
    est = PiLiDClassifier(gamma=3, epochs=0, patience=None, **FAST).fit(X, labels)
    knots = fit_knots(X, gamma=3)
    pm1 = np.where(labels == "yes", 1.0, -1.0)
    expected = _lstsq_predict(phi_numpy(X, knots), pm1, phi_numpy(X, knots))
    assert est.classes_.tolist() == ["no", "yes"]
    np.testing.assert_allclose(est.decision_function(X), expected, atol=2e-4)


def test_gamma_one_is_a_linear_model():
    X, y = _data()
    X_test = np.clip(_data(seed=2)[0], X.min(0), X.max(0))  # Definition 2 is flat outside
    # additive part alone at its least-squares start: ordinary linear regression
    est = PiLiDRegressor(gamma=1, epochs=0, patience=None, **{**FAST, "hidden_layers": None})
    est.fit(X, y)
    lin = LinearRegression().fit(X, y)
    np.testing.assert_allclose(est.predict(X_test), lin.predict(X_test), atol=2e-4)
    # after training it is still exactly linear in x
    est.set_params(epochs=5).fit(X, y)
    pred = est.predict(X_test)
    resid = pred - LinearRegression().fit(X_test, pred).predict(X_test)
    assert np.abs(resid).max() < 1e-4 * np.abs(pred).max()
    # with the deep part, every feature's contribution is linear in its feature
    full = PiLiDRegressor(gamma=1, epochs=5, **FAST).fit(X, y)  # knots from all fit rows
    contrib = full.feature_contributions(X_test)
    for j in range(X.shape[1]):
        fit = np.polyfit(X_test[:, j], contrib[:, j], 1)
        assert np.abs(np.polyval(fit, X_test[:, j]) - contrib[:, j]).max() < 1e-4


def test_additive_terms_sum_to_forward_and_decompose_to_predictions():
    rng = np.random.default_rng(2)
    m, B = 2, 9
    # two trials with different piece counts (5 and 3 columns; the second is padded)
    knots = [fit_knots(rng.normal(size=(50, m)), gamma=g) for g in ([2, 3], [1, 2])]
    P = 5
    feature = torch.zeros(2, P, dtype=torch.long)
    mask = torch.zeros(2, P)
    for t, k in enumerate(knots):
        f = k.layout()[0]
        feature[t, : len(f)] = torch.as_tensor(f)
        mask[t, : len(f)] = 1.0
    add = AdditiveEnsemble(
        feature,
        mask,
        m,
        torch.as_tensor(rng.normal(size=(2, P))),
        torch.as_tensor(rng.normal(size=(2, P))),
        torch.as_tensor(rng.normal(size=(2, m))),
    )
    X = rng.normal(scale=1.5, size=(B, m))  # includes values beyond the knots
    compact = [
        phi_compact(torch.as_tensor(X), compact_layout(k, dtype=torch.float64)) for k in knots
    ]
    phi = (torch.stack([c[0] for c in compact]), torch.stack([c[1] for c in compact]))
    out = add(phi)
    terms = add.terms(phi)
    torch.testing.assert_close(terms.sum(2), out)
    w, b, om = add.w.detach().numpy(), add.b.detach().numpy(), add.omega.detach().numpy()
    for t, k in enumerate(knots):
        dense = phi_numpy(X, k)  # Definition 2, then Eq. (10) written out
        f = k.layout()[0]
        n = len(f)
        expected = [
            om[t, j] * (dense[:, f == j] @ w[t, :n][f == j] + b[t, :n][f == j].sum())
            for j in range(m)
        ]
        np.testing.assert_allclose(terms[t].detach().numpy(), np.column_stack(expected), atol=1e-10)

    X, y = _data()
    est = PiLiDRegressor(gamma=5, epochs=3, **FAST).fit(X, y)
    intercept, contrib, deep = est.decompose(X)
    np.testing.assert_allclose(intercept + contrib.sum(1) + deep, est.predict(X), atol=1e-4)
    np.testing.assert_allclose(contrib.mean(0), 0.0, atol=1e-5)  # centred on training data


def test_mlp_init_is_gaussian_per_trial_and_independent_of_batch():
    mlp = EnsembleMLP(20, (300, 200), sigma=0.05, seeds=[11, 12])
    alone = EnsembleMLP(20, (300, 200), sigma=0.05, seeds=[12])
    for w_many, w_one in zip(mlp.weights, alone.weights):
        torch.testing.assert_close(w_many[1:2], w_one)
    w = mlp.weights[1].detach()
    assert abs(w.std().item() - 0.05) < 0.002 and abs(w.mean().item()) < 0.002
    assert all((b == 0).all() for b in mlp.biases)
    x = torch.randn(2, 4, 20)
    assert mlp(x).shape == (2, 4)


@pytest.mark.parametrize("init", ["lstsq", "gaussian"])
def test_purify_keeps_predictions_and_removes_deep_main_effects(init):
    X, y = _data(n=500)
    kw = dict(gamma=5, epochs=15, init=init, patience=None, **FAST)
    raw = PiLiDRegressor(purify=False, **kw).fit(X, y)
    pur = PiLiDRegressor(purify=True, **kw).fit(X, y)
    np.testing.assert_allclose(pur.predict(X), raw.predict(X), atol=1e-4)
    phi = phi_numpy(X, pur.knots_)
    deep_raw = raw.decompose(X)[2]
    deep_pur = pur.decompose(X)[2]
    explained = np.var(_lstsq_predict(phi, deep_pur, phi)) / np.var(deep_pur)
    assert explained < 1e-3  # no piecewise-linear main effect left in the deep part
    assert np.var(_lstsq_predict(phi, deep_raw, phi)) > 100 * np.var(
        _lstsq_predict(phi, deep_pur, phi)
    )
