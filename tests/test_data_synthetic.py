"""The Section 4.1 generator: determinism, exact truth, scaling, labels, Dataset wrapper."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit

from pilid.data import load_dataset, make_split
from pilid.data.synthetic import generate, make_true_shapes
from pilid.errors import PilidError

CONF = Path(__file__).resolve().parents[1] / "conf"


def _quadrature(shapes, n_nodes=12):
    """Gauss-Legendre nodes/weights on [0, 1] (exact for degree < 24) and u_j at the nodes."""
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    x, w = (nodes + 1.0) / 2.0, weights / 2.0
    return x, w, shapes.functions(np.repeat(x[:, None], shapes.m, axis=1))


def test_same_seed_same_data_other_seed_other_data():
    a = generate(300, 6, n_interactions=3, noise=0.3, seed=11)
    b = generate(300, 6, n_interactions=3, noise=0.3, seed=11)
    c = generate(300, 6, n_interactions=3, noise=0.3, seed=12)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2].coef, b[2].coef)
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[2].coef, c[2].coef)


def test_truth_depends_on_seed_and_m_not_on_N_and_rows_are_nested():
    X1, y1, s1 = generate(50, 8, n_interactions=4, seed=5)
    X2, y2, s2 = generate(400, 8, n_interactions=4, seed=5, task="regression")
    np.testing.assert_array_equal(s1.coef, s2.coef)
    np.testing.assert_array_equal(s1.interaction_features, s2.interaction_features)
    np.testing.assert_array_equal(s1.interaction_coef, s2.interaction_coef)
    np.testing.assert_array_equal(X1, X2[:50])
    np.testing.assert_array_equal(y1, y2[:50])
    assert X2.min() >= 0.0 and X2.max() < 1.0 and X2.shape == (400, 8)


def test_noiseless_regression_target_is_exactly_the_true_functions():
    X, y, shapes = generate(1000, 7, n_interactions=6, noise=0.0, seed=3)
    assert np.array_equal(y, shapes.functions(X).sum(axis=1) + shapes.interactions(X))
    # the callables agree with functions(): numpy's own Legendre series on [0, 1]
    for j, poly in enumerate(shapes.polynomials()):
        np.testing.assert_allclose(poly(X[:, j]), shapes.functions(X)[:, j], atol=1e-12)


def test_noise_is_gaussian_with_the_requested_std():
    X, y, shapes = generate(20000, 5, noise=0.4, seed=1)
    residual = y - shapes.score(X)
    assert abs(residual.mean()) < 0.02 and residual.std() == pytest.approx(0.4, abs=0.01)


def test_shapes_are_centred_degree_10_and_no_feature_dominates():
    shapes = make_true_shapes(12, seed=4, n_interactions=5)
    x, w, values = _quadrature(shapes)
    np.testing.assert_allclose(w @ values, 0.0, atol=1e-13)  # mean 0 on U[0, 1]
    variance = w @ values**2
    np.testing.assert_allclose(variance, shapes.variances(), rtol=1e-10)
    assert variance.max() / variance.min() <= 3.0  # shares drawn from U(0.5, 1.5)
    grid = np.linspace(0.0, 1.0, 60)
    curves = shapes.functions(np.repeat(grid[:, None], 12, axis=1))
    for j in range(12):
        fit10 = np.polynomial.Polynomial.fit(grid, curves[:, j], 10)
        fit9 = np.polynomial.Polynomial.fit(grid, curves[:, j], 9)
        assert np.abs(fit10(grid) - curves[:, j]).max() < 1e-9
        assert np.abs(fit9(grid) - curves[:, j]).max() > 1e-7  # genuinely degree 10


def test_score_has_unit_variance_with_the_interaction_share():
    shapes = make_true_shapes(8, seed=2, n_interactions=6, interaction_share=0.3)
    total = shapes.variances().sum() + shapes.interaction_variances().sum()
    assert total == pytest.approx(1.0, abs=1e-12)
    X = np.random.default_rng(99).random((200_000, 8))  # independent draws
    assert shapes.score(X).var() == pytest.approx(1.0, abs=0.02)
    assert shapes.interactions(X).var() == pytest.approx(0.3, abs=0.01)
    assert abs(np.corrcoef(shapes.interactions(X), shapes.functions(X).sum(axis=1))[0, 1]) < 0.01


@pytest.mark.parametrize("order", [2, 3])
def test_interaction_terms_use_only_their_feature_sets(order):
    shapes = make_true_shapes(7, seed=8, n_interactions=4, interaction_order=order)
    sets = shapes.interaction_features
    assert sets.shape == (4, order) and len({tuple(s) for s in sets}) == 4
    assert np.all(np.diff(sets, axis=1) > 0) and sets.max() < 7
    rng = np.random.default_rng(0)
    X = rng.random((50, 7))
    terms = shapes.interaction_terms(X)
    for k, members in enumerate(sets):
        for j in range(7):
            moved = X.copy()
            moved[:, j] = rng.random(50)
            changed = not np.allclose(shapes.interaction_terms(moved)[:, k], terms[:, k])
            assert changed == (j in members)
        # a genuine interaction: the mixed difference in its first two features is not zero
        a, b = members[:2]
        x00, x01, x10, x11 = (X.copy() for _ in range(4))
        x01[:, b] = x11[:, b] = 0.9
        x00[:, b] = x10[:, b] = 0.1
        x10[:, a] = x11[:, a] = 0.9
        x00[:, a] = x01[:, a] = 0.1
        g = [shapes.interaction_terms(z)[:, k] for z in (x00, x01, x10, x11)]
        assert np.abs(g[3] - g[2] - g[1] + g[0]).max() > 1e-6


def test_no_interactions_means_purely_additive():
    X, y, shapes = generate(200, 4, n_interactions=0, noise=0.0, seed=0)
    assert shapes.interaction_terms(X).shape == (200, 0)
    np.testing.assert_array_equal(y, shapes.functions(X).sum(axis=1))
    assert shapes.variances().sum() == pytest.approx(1.0)


def test_threshold_and_bernoulli_labels():
    X, y, shapes = generate(3000, 5, task="classification", noise=0.0, label="threshold", seed=6)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, (shapes.score(X) > 0).astype(int))
    X, y, shapes = generate(40000, 5, task="classification", noise=0.0, seed=6)
    assert set(np.unique(y)) == {0, 1}
    p = expit(shapes.score(X))
    bins = np.digitize(p, np.quantile(p, np.linspace(0, 1, 11)[1:-1]))
    for b in range(10):  # calibrated: P(y = 1 | x) = sigmoid(score), decile by decile
        assert y[bins == b].mean() == pytest.approx(p[bins == b].mean(), abs=0.03)


def test_grid_matches_the_functions():
    shapes = make_true_shapes(3, seed=1, n_interactions=2)
    grid = shapes.grid(11)
    assert list(grid.columns) == ["feature", "x", "value"] and len(grid) == 33
    assert grid["feature"].unique().tolist() == ["x0", "x1", "x2"]
    x = np.linspace(0.0, 1.0, 11)
    expected = shapes.functions(np.repeat(x[:, None], 3, axis=1))
    for j in range(3):
        part = grid[grid["feature"] == f"x{j}"]
        np.testing.assert_allclose(part["x"], x)
        np.testing.assert_allclose(part["value"], expected[:, j])


def test_load_dataset_synthetic_is_unscaled_and_carries_the_truth():
    data = load_dataset("synthetic", N=500, m=4, task="regression", n_interactions=2, noise=0.0,
                        data_seed=9)  # fmt: skip
    assert data.task == "regression" and data.metric == "mse" and not data.standardize_target
    assert data.feature_names == ["x0", "x1", "x2", "x3"] and data.categorical == []
    np.testing.assert_array_equal(data.y, data.true_shapes.score(data.X.to_numpy()))
    split = make_split(data, 0)
    np.testing.assert_array_equal(split.X_train, data.X.to_numpy()[split.train_index])
    np.testing.assert_array_equal(split.y_test, data.y[split.test_index])
    clf = load_dataset("synthetic", N=300, m=3, n_interactions=3, task="classification")
    assert clf.metric == "auc" and clf.y.dtype == np.int64


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"N": 0}, "N="),
        ({"N": True}, "N="),
        ({"m": 0}, "m="),
        ({"noise": -0.1}, "noise="),
        ({"task": "ranking"}, "task="),
        ({"label": "coin"}, "label="),
        ({"m": 3, "n_interactions": 4}, "n_interactions=4 exceeds the 3"),
        ({"m": 2, "interaction_order": 3}, "interaction_order=3 exceeds m=2"),
        ({"data_seed": -1}, "data_seed="),
        ({"gamma": 5}, "unknown option"),
    ],
)
def test_bad_generator_options(options, message):
    base = {"N": 20, "m": 3, "n_interactions": 1}
    with pytest.raises(PilidError, match=message) as error:
        load_dataset("synthetic", **{**base, **options})
    assert "\n" not in str(error.value)


def test_hydra_synthetic_config_composes_and_loads():
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(
            config_name="config",
            overrides=["data=synthetic", "data.N=80", "data.m=4", "data.task=classification"],
        )
    options = {k: v for k, v in cfg.data.items() if k != "name"}
    assert {"N", "m", "task", "n_interactions", "noise", "data_seed"} <= set(options)
    data = load_dataset(cfg.data.name, data_dir=cfg.data_dir, **options)
    assert data.X.shape == (80, 4) and data.task == "classification"
