"""The piecewise-linear encoding of the deep input (`pilid.train.encoding`) and the lever
``deep_bins`` of the studies (`studies._levers`; measured and not adopted): the MLP sees each
numeric feature piecewise-linearly encoded on quantile bins (Gorishniy et al., NeurIPS 2022)
instead of one standardised column; the additive part and the shapes do not change."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pilid import PiLiDClassifier
from pilid.errors import PilidError
from pilid.train.encoding import deep_columns, deep_input, piecewise_encoding, quantile_bins
from studies._levers import PiLiDLeverClassifier as LeverClassifier
from studies._levers import PiLiDLeverRegressor as LeverRegressor

SMALL = dict(epochs=15, batch_size=64, device="cpu", random_state=0, n_bags=1, pairs=0)


def test_piecewise_encoding_is_each_bins_clamped_ramp():
    x = np.array([-3.0, 0.0, 0.5, 1.0, 2.5, 4.0, 9.0, np.nan])
    edges = np.array([0.0, 1.0, 3.0, 4.0])
    z = piecewise_encoding(x, edges)
    finite = np.isfinite(x)
    # np.interp clamps outside its points: 0 below a bin, 1 above it, linear inside
    expected = np.column_stack(
        [np.interp(x[finite], edges[k : k + 2], [0.0, 1.0]) for k in range(3)]
    )
    np.testing.assert_allclose(z[finite], expected)
    assert np.all(z[~finite] == 0)  # a missing value: every column 0
    # the columns add up to the bins below x plus its place in its own: x on the edges' scale
    np.testing.assert_allclose(z[finite].sum(1), np.interp(x[finite], edges, [0, 1, 2, 3]))


def test_quantile_bins_are_numpys_quantiles_without_repeats_and_skip_binary_columns():
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [
            rng.exponential(size=500),
            rng.integers(0, 2, 500).astype(float),  # 0/1: one column holds it
            np.r_[np.zeros(400), rng.normal(size=100)],  # 80% zeros: repeated quantiles
            np.r_[rng.normal(size=499), np.nan],
        ]
    )
    bins = dict(quantile_bins(X, 5, [0, 1, 2, 3]))
    assert set(bins) == {0, 2, 3}
    grid = np.linspace(0, 1, 6)
    np.testing.assert_allclose(bins[0], np.quantile(X[:, 0], grid))
    np.testing.assert_allclose(bins[2], np.unique(np.quantile(X[:, 2], grid)))
    assert len(bins[2]) < 6
    np.testing.assert_allclose(bins[3], np.quantile(X[:499, 3], grid))


def test_deep_input_replaces_an_encoded_feature_by_its_bins_after_the_one_hot_levels():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=9), rng.integers(0, 3, 9), rng.normal(size=9)])
    X[3, 2] = np.nan
    mean, scale = X[:, :].copy().mean(0), np.ones(3)
    mean[2] = 0.0
    edges = np.array([-1.0, 0.0, 1.0])
    levels = np.array([0.0, 1.0, 2.0])
    missing = np.array([False, False, True])
    z = deep_input(X, mean, scale, missing, onehot=((1, levels),), bins=((2, edges),))
    expected = np.column_stack(
        [
            X[:, 0] - mean[0],
            X[:, [1]] == levels[None, :],
            piecewise_encoding(X[:, 2], edges),
            np.isnan(X[:, 2]),
        ]
    )
    np.testing.assert_allclose(z, expected)
    assert z.shape[1] == deep_columns(3, missing, ((1, levels),), ((2, edges),))


def _table(n=600, seed=0):
    """A step ``s`` (the target jumps at 0), a smooth ``h`` with missing values, a nominal
    ``day``, a binary ``yes`` and a monotone ``up``."""
    rng = np.random.default_rng(seed)
    s = rng.normal(size=n)
    h = rng.uniform(-1, 1, n)
    up = rng.uniform(0, 1, n)
    day = rng.choice(list("abcd"), n)
    yes = rng.integers(0, 2, n)
    logit = 2.0 * (s > 0) * (h > 0) + up + 0.5 * yes - 1.0
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    h[rng.uniform(size=n) < 0.05] = np.nan
    X = pd.DataFrame({"s": s, "h": h, "day": pd.Categorical(day), "yes": yes, "up": up})
    return X, y


def test_the_mlp_sees_the_bins_of_the_numeric_features_it_sees_and_shapes_stay_whole():
    X, y = _table()
    model = LeverClassifier(
        gamma=6, hidden_layers=(8,), deep_bins=4, monotone_constraints={"up": 1}, **SMALL
    ).fit(X, y)
    encoded = dict(model.deep_bins_)
    # s and h (numeric, free); not the category, not the 0/1 column, not the monotone feature
    assert set(encoded) == {0, 1}
    np.testing.assert_allclose(encoded[0], np.quantile(X["s"], np.linspace(0, 1, 5)))
    width = deep_columns(5, model.missing_, model.deep_onehot_, model.deep_bins_)
    # s, h: 4 bins each; day: 4 levels; yes, up: a column each; h's missing indicator
    assert width == 4 + 4 + 4 + 2 + 1
    assert model.module_.deep.weights[0].shape[1] == width
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba))
    # the monotone shape holds and every feature still has its shape
    shapes = model.shape_functions()
    assert set(shapes["feature"]) == set(X.columns)
    up = shapes[shapes["feature"] == "up"].sort_values("x")["value"].to_numpy()
    assert np.all(np.diff(up) >= -1e-9)


def test_a_bag_with_bins_predicts_as_the_mean_of_its_members():
    X, y = _table(n=400, seed=1)
    bag = LeverClassifier(gamma=4, hidden_layers=(8,), deep_bins=5, **{**SMALL, "n_bags": 3})
    bag.fit(X, y)
    for member in bag.estimators_:
        assert member.deep_bins_ is bag.deep_bins_ or all(
            a == b and np.array_equal(e, f)
            for (a, e), (b, f) in zip(member.deep_bins_, bag.deep_bins_)
        )
    logits = np.mean([m.decision_function(X) for m in bag.estimators_], axis=0)
    np.testing.assert_allclose(bag.decision_function(X), logits, rtol=1e-5, atol=1e-6)


def test_without_bins_nothing_changes():
    X, y = _table(n=300)
    plain = PiLiDClassifier(gamma=4, hidden_layers=(8,), **SMALL).fit(X, y)
    assert plain.deep_bins_ is None
    again = LeverClassifier(gamma=4, hidden_layers=(8,), deep_bins=None, **SMALL).fit(X, y)
    np.testing.assert_array_equal(plain.predict_proba(X), again.predict_proba(X))


@pytest.mark.parametrize("bad", [1, 0, 2.5, "8"])
def test_deep_bins_below_two_or_not_whole_is_one_line(bad):
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(PilidError, match="deep_bins") as info:
        LeverRegressor(deep_bins=bad, **SMALL).fit(X, X[:, 0])
    assert "\n" not in str(info.value)


def test_rows_of_weight_zero_place_no_edge_and_three_classes_share_the_bins():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    X[:10, 0] = 50.0  # far out, weight 0: no edge there
    y = (X[:, 1] > 0).astype(int) + (X[:, 1] > 1)  # three classes
    weight = np.r_[np.zeros(10), np.ones(290)]
    model = LeverClassifier(gamma=4, hidden_layers=(8,), deep_bins=3, **SMALL)
    model.fit(X, y, sample_weight=weight)
    edges = dict(model.deep_bins_)[0]
    np.testing.assert_allclose(edges, np.quantile(X[10:, 0], np.linspace(0, 1, 4)))
    for member in model.class_estimators_:
        assert all(a == b for (a, _), (b, _) in zip(member.deep_bins_, model.deep_bins_))
    proba = model.predict_proba(X)
    assert proba.shape == (300, 3)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-5)
