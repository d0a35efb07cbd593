"""make_split: the paper's 80/20 trial split, one-hot encoding and train-only scaling."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pilid.data import Dataset, Split, make_split
from pilid.errors import PilidError


def _dataset(n=200, task="regression", seed=0, standardize_target=False, **info) -> Dataset:
    rng = np.random.default_rng(seed)
    levels = np.array(["u", "v", "w"])
    colour = levels[rng.integers(0, 3, n)].astype(object)
    colour[0] = "rare"  # a level with one row: absent from the training part in some trials
    X = pd.DataFrame(
        {
            "a": rng.normal(5.0, 2.0, n),
            "colour": pd.Categorical(colour, categories=["rare", "u", "v", "w"]),
            "const": np.full(n, 3.0),
            "b": rng.uniform(-1.0, 4.0, n),
        }
    )
    if task == "classification":
        y = (rng.random(n) < 0.3).astype(np.int64)
        metric = "auc"
    else:
        y = 10.0 + 3.0 * X["a"].to_numpy() + rng.normal(0.0, 1.0, n)
        metric = "mse"
    return Dataset(
        name="toy",
        task=task,
        metric=metric,
        X=X,
        y=y,
        standardize_target=standardize_target,
        info=dict(info),
    )


def test_split_is_a_deterministic_partition_of_the_rows():
    data = _dataset(n=203)
    first, again, other = make_split(data, 7), make_split(data, 7), make_split(data, 8)
    assert isinstance(first, Split) and first.seed == 7
    for name in ("X_train", "X_test", "y_train", "y_test", "train_index", "test_index"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert not np.array_equal(first.test_index, other.test_index)
    both = np.concatenate([first.train_index, first.test_index])
    assert sorted(both.tolist()) == list(range(203))
    assert len(first.test_index) == int(np.ceil(0.2 * 203))
    assert first.X_train.dtype == np.float64 and first.y_train.dtype == np.float64
    assert first.X_train.shape == (len(first.train_index), len(first.feature_names))


def test_classification_split_is_stratified_with_int_labels():
    data = _dataset(n=501, task="classification")
    rate = data.y.mean()
    for seed in range(5):
        split = make_split(data, seed)
        assert split.y_train.dtype == np.int64 and set(np.unique(split.y_test)) <= {0, 1}
        for part in (split.y_train, split.y_test):
            # stratified: each part's positive count is within one of its share of the total
            assert abs(part.sum() - rate * len(part)) <= 1.0
        np.testing.assert_array_equal(split.y_test, data.y[split.test_index])


def test_numeric_scaling_uses_training_statistics_only():
    data = _dataset(n=300)
    split = make_split(data, 3)
    names = split.feature_names
    train_rows = data.X.iloc[split.train_index]
    for column in ("a", "b"):
        j = names.index(column)
        raw = train_rows[column].to_numpy()
        assert split.x_offset[j] == pytest.approx(raw.mean(), rel=1e-12)
        assert split.x_scale[j] == pytest.approx(raw.std(), rel=1e-12)
        assert abs(split.X_train[:, j].mean()) < 1e-12
        assert split.X_train[:, j].std() == pytest.approx(1.0, rel=1e-12)
        # the test part is scaled with the training statistics, so it is not exactly centred
        assert abs(split.X_test[:, j].mean()) > 1e-6
    # original = x * x_scale + x_offset, for both parts
    recon = split.original_X(split.X_test)
    np.testing.assert_allclose(recon[:, names.index("a")], data.X["a"].to_numpy()[split.test_index])
    # a constant column gets scale 1 and no NaN
    k = names.index("const")
    assert split.x_scale[k] == 1.0 and split.x_offset[k] == 3.0
    assert np.all(split.X_train[:, k] == 0.0) and np.isfinite(split.X_test).all()


def test_categorical_columns_are_one_hot_with_stable_columns():
    data = _dataset(n=120)
    expected = ["a", "colour=rare", "colour=u", "colour=v", "colour=w", "const", "b"]
    seen_rare_in_test = False
    for seed in range(20):
        split = make_split(data, seed)
        assert split.feature_names == expected
        np.testing.assert_array_equal(
            split.categorical, [name.startswith("colour=") for name in expected]
        )
        onehot = split.X_test[:, 1:5]
        assert np.all(split.x_offset[1:5] == 0.0) and np.all(split.x_scale[1:5] == 1.0)
        assert set(np.unique(onehot)) <= {0.0, 1.0} and np.all(onehot.sum(axis=1) == 1.0)
        levels = np.array(["rare", "u", "v", "w"])[onehot.argmax(axis=1)]
        np.testing.assert_array_equal(levels, data.X["colour"].to_numpy()[split.test_index])
        seen_rare_in_test |= 0 in split.test_index
    assert seen_rare_in_test  # the rare level's column exists even when training lacks it


def test_regression_target_standardised_only_when_asked():
    raw = make_split(_dataset(), 1)
    assert (raw.y_offset, raw.y_scale) == (0.0, 1.0)
    data = _dataset(standardize_target=True)
    split = make_split(data, 1)
    y_train_raw = data.y[split.train_index]
    assert split.y_offset == pytest.approx(y_train_raw.mean(), rel=1e-12)
    assert split.y_scale == pytest.approx(y_train_raw.std(), rel=1e-12)
    assert abs(split.y_train.mean()) < 1e-12 and split.y_train.std() == pytest.approx(1.0)
    np.testing.assert_allclose(split.original_y(split.y_test), data.y[split.test_index])
    np.testing.assert_array_equal(raw.y_test, data.y[raw.test_index])


def test_scale_features_false_keeps_original_units():
    data = _dataset(scale_features=False)
    split = make_split(data, 2)
    np.testing.assert_array_equal(split.X_train[:, 0], data.X["a"].to_numpy()[split.train_index])
    assert np.all(split.x_offset == 0.0) and np.all(split.x_scale == 1.0)


def test_inf_names_its_columns_and_nan_is_a_missing_value():
    data = _dataset()
    X = data.X.copy()
    X.loc[5, "b"] = np.inf
    X.loc[7, "a"] = np.nan
    bad = Dataset(name="toy", task="regression", metric="mse", X=X, y=data.y)
    with pytest.raises(PilidError, match=r"has inf in column\(s\) b;") as error:
        make_split(bad, 0)
    assert "\n" not in str(error.value)
    X.loc[5, "b"] = 1.0  # NaN alone is kept: a missing value (pilid.data.table, missing="keep")
    split = make_split(Dataset(name="toy", task="regression", metric="mse", X=X, y=data.y), 0)
    rows = np.concatenate([split.train_index, split.test_index])
    encoded = np.concatenate([split.X_train, split.X_test])
    assert np.isnan(encoded[rows == 7, 0]).all() and np.isnan(encoded).sum() == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": 0, "test_size": 0.0}, "test_size"),
        ({"seed": 0, "test_size": 1}, "test_size"),
        ({"seed": 0, "test_size": "0.2"}, "test_size"),
    ],
)
def test_bad_split_arguments(kwargs, message):
    with pytest.raises(PilidError, match=message):
        make_split(_dataset(n=50), **kwargs)


def test_dataset_checks_its_fields():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(PilidError, match="0/1"):
        Dataset(name="t", task="classification", metric="auc", X=X, y=np.array([1, 2, 1]))
    with pytest.raises(PilidError, match="rows"):
        Dataset(name="t", task="regression", metric="mse", X=X, y=np.zeros(2))
    with pytest.raises(PilidError, match="not columns"):
        Dataset(name="t", task="regression", metric="mse", X=X, y=np.zeros(3), categorical=["z"])
    with pytest.raises(PilidError, match="task"):
        Dataset(name="t", task="ranking", metric="mse", X=X, y=np.zeros(3))
    data = Dataset(name="t", task="classification", metric="auc", X=X, y=[0, 1, 1])
    assert data.y.dtype == np.int64 and data.feature_names == ["a"] and data.categorical == []
