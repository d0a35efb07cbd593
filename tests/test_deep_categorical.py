"""Categorical features enter PiLiD's deep part one-hot (``deep_categorical="onehot"``, the
default; issue 31): one 0/1 column per level seen in fit, a missing or unseen category all 0;
``"code"`` keeps the level's code as one standardised column."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from pilid import PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.data import Dataset, make_split
from pilid.errors import PilidError
from pilid.estimators.pilid import MLPRegressor
from pilid.models.fitting import fit_batched
from pilid.train.encoding import deep_columns, deep_input

SMALL = dict(epochs=10, batch_size=64, device="cpu", random_state=0, n_bags=1, lr=0.01)


def _table(n=400, seed=0):
    """A nominal ``day`` (7 levels, effects in no order of their codes) times a numeric ``h``,
    a binary ``yes`` and noise ``w``."""
    rng = np.random.default_rng(seed)
    day = rng.choice(list("abcdefg"), n)
    h = rng.uniform(0, 1, n)
    effect = dict(zip("abcdefg", [0.0, 2.0, -1.0, 1.0, -2.0, 0.5, 3.0]))
    yes = rng.choice(["no", "yes"], n)
    y = np.array([effect[d] for d in day]) * h + 0.5 * (yes == "yes") + rng.normal(0, 0.1, n)
    X = pd.DataFrame(
        {"h": h, "day": pd.Categorical(day), "w": rng.normal(size=n), "yes": pd.Categorical(yes)}
    )
    return X, y


def test_deep_input_matches_pandas_dummies_with_missing_and_unseen_all_zero():
    rng = np.random.default_rng(1)
    codes = [0, 2, 1, 2, np.nan, 0, np.inf, 1]
    X = np.column_stack([rng.normal(size=8), codes, rng.normal(size=8)])
    mean, scale = np.array([0.1, 0.0, -0.2]), np.array([2.0, 1.0, 0.5])
    levels = np.array([0.0, 1.0, 2.0])
    z = deep_input(X, mean, scale, missing=np.array([False, True, False]), onehot=((1, levels),))
    dummies = pd.get_dummies(pd.Series(X[:, 1]).where(np.isfinite(X[:, 1]))).to_numpy(float)
    expected = np.column_stack(
        [(X[:, 0] - 0.1) / 2.0, (X[:, 2] + 0.2) / 0.5, dummies, np.isnan(X[:, 1])]
    )
    np.testing.assert_allclose(z, expected)
    assert z.shape[1] == deep_columns(3, np.array([False, True, False]), ((1, levels),))
    assert np.all(z[[4, 6], 2:5] == 0)  # a missing (NaN) and an unseen (+inf) category


def test_the_default_gives_the_mlp_one_column_per_level_and_code_one_column():
    X, y = _table()
    onehot = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=0, **SMALL).fit(X, y)
    # h, w, the binary yes as its code, and 7 days
    assert onehot.module_.deep.weights[0].shape[1] == 3 + 7
    ((j, levels),) = onehot.deep_onehot_
    assert j == 1 and levels.tolist() == list(range(7))
    code = PiLiDRegressor(gamma=3, hidden_layers=(8,), deep_categorical="code", pairs=0, **SMALL)
    code.fit(X, y)
    assert code.module_.deep.weights[0].shape[1] == 4 and code.deep_onehot_ is None
    mlp = MLPRegressor(hidden_layers=(8,), **SMALL).fit(X, y)
    assert mlp.module_.deep.weights[0].shape[1] == 10
    # PiLiB's blocks keep one column per feature (a gate per feature)
    blocks = PiLiBRegressor(
        gamma=3, n_blocks=2, warmup_epochs=1, phase1_epochs=1, epochs=1, device="cpu"
    ).fit(X, y)
    assert blocks.module_.deep.weights[0].shape[2] == 4


@pytest.mark.slow
def test_both_values_are_equal_on_the_runners_one_hot_matrices():
    """The runner hands the estimators `make_split`'s matrix, categories as 0/1 columns named
    categorical: "onehot" and "code" fit the same model there, so the configs need not pin it."""
    X, y = _table()
    split = make_split(Dataset("t", "regression", "mse", X, y), 0)
    assert np.asarray(split.categorical).sum() == 9  # 7 days and 2 for yes/no, each 0/1
    predictions = []
    for how in ("onehot", "code"):
        est = PiLiDRegressor(gamma=3, hidden_layers=(8,), deep_categorical=how, **SMALL)
        est.set_params(categorical_features=np.asarray(split.categorical))
        predictions.append(est.fit(split.X_train, split.y_train).predict(split.X_test))
        assert est.deep_onehot_ is None
    np.testing.assert_array_equal(*predictions)


@pytest.mark.slow
def test_one_hot_follows_a_nominal_interaction_the_code_cannot():
    """Day effects that follow no order of the codes, times h: the MLP with one column per
    day fits it; with the code as one number it must bend a line through 7 unordered points."""
    X, y = _table(n=3000)
    train, test = slice(0, 2400), slice(2400, None)
    mse = {}
    for how in ("onehot", "code"):
        est = PiLiDRegressor(deep_categorical=how, random_state=0, n_bags=2, device="cpu")
        est.fit(X[train], y[train])
        mse[how] = float(np.mean((est.predict(X[test]) - y[test]) ** 2))
    assert mse["onehot"] < 0.9 * mse["code"], mse


def test_a_bag_and_k_classes_predict_unseen_and_missing_categories():
    X, y = _table()
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    for est in (
        PiLiDRegressor(gamma=3, hidden_layers=(8,), **{**SMALL, "n_bags": 2}).fit(X, y),
        PiLiDClassifier(gamma=3, hidden_layers=(8,), **SMALL).fit(X, labels),
    ):
        assert est.deep_onehot_[0][0] == 1
        new = X.head(3).copy()
        new["day"] = pd.Categorical(["zz", None, "a"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = est.predict(new)
        assert np.all(np.isfinite(np.asarray(out, dtype=float)))


def test_a_bad_value_is_refused_in_one_line():
    X, y = _table(100)
    with pytest.raises(PilidError, match="deep_categorical") as info:
        PiLiDRegressor(deep_categorical="dummies", **SMALL).fit(X, y)
    assert "\n" not in str(info.value)


def test_trials_with_different_levels_train_batched_as_they_train_alone():
    """fit_batched stacks trials only when their deep inputs have as many columns: a trial
    whose rows lack a level has one fewer one-hot column and trains in its own group."""
    X, y = _table(n=800)
    has_g = (X["day"] == "g").to_numpy()
    X0, y0 = X[~has_g].head(300), y[~has_g][:300]  # 6 days
    X1, y1 = X.head(300), y[:300]  # 7 days
    template = PiLiDRegressor(gamma=3, hidden_layers=(8,), **SMALL)
    batched = fit_batched([clone(template), clone(template)], [X0, X1], [y0, y1])
    assert [len(e.deep_onehot_[0][1]) for e in batched] == [6, 7]
    for est, Xt, yt in zip(batched, [X0, X1], [y0, y1]):
        alone = clone(template).fit(Xt, yt)
        np.testing.assert_allclose(est.predict(X.tail(50)), alone.predict(X.tail(50)), atol=1e-5)
