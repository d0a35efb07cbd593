"""A PiLiD's interaction of two features (`pilid.inspection.pair_effect`): a planted product is
recovered, the grid equals partial dependence computed from `predict`, and bad requests get one
line."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.inspection.interaction_display import InteractionDisplay

matplotlib.use("Agg")


def _planted(n=1500, seed=1):
    """y = 2 x0 x1 + x2 + noise on [-1, 1]^4: one interaction (x0, x1), none elsewhere."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 4))
    return X, 2 * X[:, 0] * X[:, 1] + X[:, 2] + 0.1 * rng.normal(size=n)


@pytest.fixture(scope="module")
def bag():
    X, y = _planted()
    return PiLiDRegressor(n_bags=4, epochs=40, random_state=0).fit(X, y), X


@pytest.mark.slow
def test_the_planted_product_is_recovered_and_other_pairs_are_flat(bag):
    model, _ = bag
    grid = model.interaction_grid("x0", "x1", n=15)
    truth = 2 * grid["x_a"] * grid["x_b"]  # its own interaction: the product has no main effect
    assert np.corrcoef(grid["value"], truth)[0, 1] > 0.95
    assert grid["value"].abs().max() > 1.0
    flat = model.interaction_grid("x2", "x3", n=15)
    assert flat["value"].abs().max() < 0.15 * grid["value"].abs().max()
    assert {"std", "lower", "upper"} <= set(grid.columns)  # a bag's spread
    assert (grid["lower"] <= grid["upper"]).all()


def _numpy_interaction(predict, background, a, b, ga, gb):
    """Friedman and Popescu's I(a, b) by loops over `predict` (an independent computation)."""

    def pd(values):
        rows = background.copy()
        for j, v in values.items():
            rows[:, j] = v
        return predict(rows).mean()

    own = np.mean(
        [
            pd({a: ra, b: rb}) - pd({a: ra}) - pd({b: rb})
            for ra, rb in zip(background[:, a], background[:, b])
        ]
    )
    return np.array(
        [[pd({a: x, b: z}) - pd({a: x}) - pd({b: z}) - own for z in gb] for x in ga]
    ).ravel()


def test_the_grid_is_partial_dependence_of_the_predictions(bag):
    model, X = bag
    background = X[:25]
    grid = model.interaction_grid(1, 0, n=4, X=background)
    ga, gb = np.unique(grid["x_a"]), np.unique(grid["x_b"])
    expected = _numpy_interaction(model.predict, background, 1, 0, ga, gb)
    np.testing.assert_allclose(grid["value"], expected, atol=1e-4)
    assert np.isclose(ga.min(), X[:, 1].min()) and np.isclose(ga.max(), X[:, 1].max())


def test_a_pair_term_alone_keeps_the_predictions_double_differences():
    X, y = _planted(n=1000, seed=2)
    model = PiLiDRegressor(
        hidden_layers=None, pairs=1, n_bags=1, gamma=8, smoothness=0.0, epochs=60, random_state=0
    ).fit(X, y)
    assert model.pairs_ == [("x0", "x1")]
    grid = model.interaction_grid(0, 1, n=3)
    value = grid["value"].to_numpy().reshape(3, 3)
    ga, gb = np.unique(grid["x_a"]), np.unique(grid["x_b"])
    rows = np.repeat(X[7:8], 9, axis=0)  # any values of the other features
    rows[:, 0], rows[:, 1] = np.repeat(ga, 3), np.tile(gb, 3)
    out = model.predict(rows).reshape(3, 3)
    for i in (1, 2):
        for k in (1, 2):
            double = out[i, k] - out[i, 0] - out[0, k] + out[0, 0]
            assert value[i, k] - value[i, 0] - value[0, k] + value[0, 0] == pytest.approx(
                double, abs=1e-4
            )
    assert abs(double) > 0.5  # the pair term carries the product


def test_k_classes_give_one_grid_per_class_logit():
    X, y = _planted(n=600, seed=3)
    model = PiLiDClassifier(n_bags=1, epochs=5, random_state=0).fit(X, np.digitize(y, [-0.5, 0.5]))
    grid = model.interaction_grid(0, 1, n=3)
    assert list(grid.columns[:1]) == ["class"] and list(grid["class"].unique()) == [0, 1, 2]
    assert len(grid) == 3 * 9 and np.isfinite(grid["value"]).all()


def test_plot_interaction_draws_the_heat_map(bag):
    model, _ = bag
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert model.plot_interaction("x0", "x1", grid=5, ax=ax) is ax
    assert ax.get_title() == "x0 x x1" and ax.get_xlabel() == "x0"
    display = InteractionDisplay.from_estimator(model, 0, 1, grid=5)
    assert display.values.shape == (5, 5)
    plt.close("all")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("x0", "x0"), "two different features"),
        ((0, 1, 1), "n=1 is invalid"),
        (("x9", "x0"), "unknown feature 'x9'"),
    ],
)
def test_bad_requests_get_one_line(bag, args, message):
    model, _ = bag
    with pytest.raises(PilidError, match=message):
        model.interaction_grid(*args)


@pytest.fixture(scope="module")
def paired():
    """A bag whose members have an MLP and two pair terms, (x0, x1) among them."""
    X, y = _planted(n=600, seed=4)
    model = PiLiDRegressor(
        hidden_layers=(8,), pairs=2, n_bags=2, gamma=4, epochs=8, random_state=0
    ).fit(X, y)
    return model, X


@pytest.mark.parametrize("a,b", [(0, 1), (1, 0), (0, 2), (2, 3)])
def test_mlp_and_pair_terms_together_are_partial_dependence_of_the_predictions(paired, a, b):
    model, X = paired
    assert ("x0", "x1") in model.pairs_
    background = X[:20]
    grid = model.interaction_grid(a, b, n=4, X=background)
    ga, gb = np.unique(grid["x_a"]), np.unique(grid["x_b"])
    expected = _numpy_interaction(model.predict, background, a, b, ga, gb)
    np.testing.assert_allclose(grid["value"], expected, atol=1e-5)
    members = [  # each member's own I: the band's spread
        _numpy_interaction(m.predict, background, a, b, ga, gb) for m in model.estimators_
    ]
    np.testing.assert_allclose(grid["std"], np.std(members, axis=0), atol=1e-5)


def test_a_long_grid_shows_a_progress_bar(paired, monkeypatch, capsys):
    from pilid.inspection import pair_effect

    model, X = paired
    monkeypatch.setattr(pair_effect, "PROGRESS_ROWS", 10)
    model.interaction_grid(0, 1, n=3, X=X[:5])
    assert "interaction grid" in capsys.readouterr().err
    monkeypatch.setattr(pair_effect, "PROGRESS_ROWS", 10**9)
    model.interaction_grid(0, 1, n=3, X=X[:5])
    assert capsys.readouterr().err == ""
