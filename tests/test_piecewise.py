"""Definition 1 (characteristic points) and Definition 2 (Phi) against direct transcriptions."""

import numpy as np
import pytest
import torch

from pilid.errors import PilidError
from pilid.nn.piecewise import fit_knots, phi_numpy, phi_torch, piece_values


def phi_definition2(X, points):
    """Definition 2 written out entry by entry (loops on purpose: an independent reference)."""
    rows = []
    for x in X:
        row = []
        for j, p in enumerate(points):
            if len(p) == 1:  # constant feature: one zero-width piece, contributes a constant
                row.append(0.0)
                continue
            for k in range(1, len(p)):
                lo, hi = p[k - 1], p[k]
                if x[j] > hi:
                    row.append(1.0)
                elif lo <= x[j] <= hi:
                    row.append((x[j] - lo) / (hi - lo))
                else:
                    row.append(0.0)
        rows.append(row)
    return np.array(rows)


@pytest.fixture
def mixed():
    rng = np.random.default_rng(3)
    n = 60
    X = np.column_stack(
        [
            rng.normal(size=n),  # numeric
            rng.integers(0, 4, size=n).astype(float),  # categorical codes 0..3
            np.full(n, 2.5),  # constant
            rng.exponential(size=n),  # heavy tail
        ]
    )
    return X, np.array([False, True, False, False])


def test_uniform_points_follow_definition1(mixed):
    X, cat = mixed
    knots = fit_knots(X, gamma=4, method="uniform", categorical=cat)
    a, b = X[:, 0].min(), X[:, 0].max()
    np.testing.assert_allclose(knots.points[0], a + np.arange(5) / 4 * (b - a))
    np.testing.assert_array_equal(knots.points[1], np.unique(X[:, 1]))  # categorical: uniques
    assert knots.points[2].tolist() == [2.5]  # constant: one point
    assert knots.n_pieces.tolist() == [4, 3, 1, 4]


def test_phi_matches_definition2_with_categorical_and_constant(mixed):
    X, cat = mixed
    knots = fit_knots(X, gamma=5, categorical=cat)
    rng = np.random.default_rng(4)
    # test rows include values outside the training range and a changed "constant" feature
    X_test = np.vstack([X, X[:5] + rng.normal(scale=3.0, size=(5, 4))])
    expected = phi_definition2(np.clip(X_test, X.min(0), X.max(0)), knots.points)
    np.testing.assert_allclose(phi_numpy(X_test, knots), expected, atol=1e-12)
    got = phi_torch(torch.as_tensor(X_test), knots.torch_layout(dtype=torch.float64)).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.isfinite(got).all()
    # out-of-range rows clip: below the range all zeros, above all ones for that feature
    low = X[:1].copy()
    low[0, 0] = X[:, 0].min() - 10
    assert phi_numpy(low, knots)[0, :5].tolist() == [0.0] * 5
    low[0, 0] = X[:, 0].max() + 10
    assert phi_numpy(low, knots)[0, :5].tolist() == [1.0] * 5


def test_quantile_points_merge_ties():
    rng = np.random.default_rng(0)
    x = np.concatenate([np.zeros(80), rng.exponential(size=20)])  # 80 % ties at 0
    knots = fit_knots(x[:, None], gamma=10, method="quantile")
    expected = np.unique(np.quantile(x, np.linspace(0, 1, 11)))
    np.testing.assert_array_equal(knots.points[0], expected)
    assert len(knots.points[0]) < 11  # coinciding quantiles merged
    phi = phi_numpy(x[:, None], knots)
    np.testing.assert_allclose(phi, phi_definition2(x[:, None], knots.points), atol=1e-12)
    # uniform puts ~all rows into the first piece, quantile spreads them
    uni = phi_numpy(x[:, None], fit_knots(x[:, None], gamma=10))
    assert (uni[:, 1:] > 0).any(1).mean() < (phi[:, 1:] > 0).any(1).mean()


def test_per_feature_gamma_and_bad_gamma():
    X = np.random.default_rng(1).normal(size=(20, 2))
    assert fit_knots(X, gamma=[2, 7]).n_pieces.tolist() == [2, 7]
    for bad in (0, -1, 1.5, [3]):
        with pytest.raises(PilidError, match="gamma"):
            fit_knots(X, gamma=bad)
    with pytest.raises(PilidError, match="knots"):
        fit_knots(X, gamma=2, method="nope")


def test_piece_values_are_the_function_at_the_points(mixed):
    X, cat = mixed
    knots = fit_knots(X, gamma=3, categorical=cat)
    rng = np.random.default_rng(5)
    w = rng.normal(size=knots.n_columns)
    const = rng.normal(size=4)
    feature, _, _ = knots.layout()
    values = piece_values(knots, w, const)
    for j, pts in enumerate(knots.points):
        grid = np.tile(X[0], (len(pts), 1))
        grid[:, j] = pts
        phi = phi_numpy(grid, knots)[:, feature == j]
        np.testing.assert_allclose(values[j], phi @ w[feature == j] + const[j], atol=1e-12)


@pytest.mark.parametrize(
    ("n_rows", "pieces"),
    # the rule's thresholds, computed by hand: n ** (1/3) / 3 crosses 2.5, 3.5, 4.5 at
    # n = 7.5 ** 3 = 421.875, 10.5 ** 3 = 1157.6 and 13.5 ** 3 = 2460.4
    [(5, 2), (421, 2), (422, 3), (1157, 3), (1158, 4), (2460, 4), (2461, 5), (10**6, 5)],
)
def test_auto_gamma_is_a_rule_of_the_training_rows(n_rows, pieces):
    from pilid.nn.piecewise import auto_gamma

    assert auto_gamma(n_rows) == pieces
    X = np.random.default_rng(0).uniform(size=(n_rows, 2))
    knots = fit_knots(X, "auto", "uniform")
    assert [len(p) - 1 for p in knots.points] == [pieces, pieces]


def test_estimator_resolves_auto_gamma_from_the_rows_it_is_fitted_on():
    from pilid import PiLiDRegressor

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 2))
    y = X[:, 0] + rng.normal(scale=0.1, size=300)
    kw = dict(hidden_layers=None, n_bags=1, epochs=2, random_state=0, device="cpu")
    model = PiLiDRegressor(gamma="auto", **kw).fit(X, y)
    assert model.gamma_ == 2
    assert [len(p) - 1 for p in model.knots_.points] == [2, 2]
    for bad in ("Auto", "five", ""):
        with pytest.raises(PilidError, match="'auto'"):
            PiLiDRegressor(gamma=bad, **kw).fit(X, y)
