"""``data=table`` gives each model the categorical columns as that model takes them: one column
of level codes for a model that takes categories itself (PiLiD, EBM, LightGBM), one-hot for the
others, each record saying which; ``data.encoding=onehot`` gives every model one-hot, as
before (the same setting id as a config without the key)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from sklearn.linear_model import LinearRegression

from pilid.data import frame_dataset, load_dataset, make_split
from pilid.errors import PilidError
from pilid.experiments import run_setting
from pilid.experiments.config import CONF_DIR, check_config
from pilid.experiments.setting import setting_id


def _frame(n=150, seed=0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    colour = r.choice(["red", "green", "blue"], n).astype(object)
    colour[r.choice(n, 6, replace=False)] = None
    a = r.normal(size=n)
    return pd.DataFrame(
        {"a": a, "colour": colour, "y": a + (colour == "red") + 0.1 * r.normal(size=n)}
    )


def test_codes_are_each_rows_level_position_and_never_scaled():
    dataset = frame_dataset(_frame(), "y", "regression", name="t", missing="keep")
    split = make_split(dataset, 3, encoding="codes")
    assert split.feature_names == ["a", "colour"]
    np.testing.assert_array_equal(split.categorical, [False, True])
    assert split.x_offset[1] == 0.0 and split.x_scale[1] == 1.0
    colour = dataset.X["colour"]
    levels = list(colour.cat.categories)  # the whole data set's, then the missing level
    expected = colour.cat.codes.to_numpy().astype(float)
    expected[expected < 0] = len(levels)
    np.testing.assert_array_equal(split.X_train[:, 1], expected[split.train_index])
    np.testing.assert_array_equal(split.X_test[:, 1], expected[split.test_index])
    # the numeric column as the one-hot split has it: the same rows, the same scaling
    onehot = make_split(dataset, 3)
    np.testing.assert_array_equal(split.X_train[:, 0], onehot.X_train[:, 0])
    assert onehot.X_train.shape[1] == 1 + len(levels) + 1
    with pytest.raises(PilidError, match="encoding='dummy' is invalid"):
        make_split(dataset, 3, encoding="dummy")


def _compose(*overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def _table(path, results, *extra):
    args = ["data=table", f"data.path={path}", "data.target=y", "data.task=regression"]
    return _compose(*args, "trials=2", f"results_dir={results}", *extra)


def test_onehot_keeps_the_setting_id_of_a_config_without_the_key(tmp_path):
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    onehot = _table(path, tmp_path / "r", "model=linear", "data.encoding=onehot")
    auto = _table(path, tmp_path / "r", "model=linear")
    from omegaconf import OmegaConf, open_dict

    without = OmegaConf.create(OmegaConf.to_container(onehot))
    with open_dict(without):
        del without.data["encoding"]
    assert setting_id(onehot) == setting_id(without) != setting_id(auto)
    bad = OmegaConf.to_container(auto)
    bad["data"]["encoding"] = "native"
    with pytest.raises(PilidError, match="data.encoding='native' is invalid"):
        check_config(bad)


@pytest.mark.slow
def test_the_runner_gives_each_model_its_encoding_and_records_it(tmp_path):
    path, results = tmp_path / "t.csv", tmp_path / "results"
    _frame().to_csv(path, index=False)
    tiny_pilid = ["model=pilid", "gamma=3", "model.hidden_layers=[8]", "train.epochs=3"]
    pilid = run_setting(_table(path, results, *tiny_pilid))
    assert {r["encoding"] for r in pilid.records} == {"codes"}
    assert {r["m"] for r in pilid.records} == {2}
    lightgbm = run_setting(_table(path, results, "model=lightgbm"))
    assert {r["encoding"] for r in lightgbm.records} == {"codes"}
    linear = run_setting(_table(path, results, "model=linear"))
    assert {r["encoding"] for r in linear.records} == {"onehot"}
    kept = load_dataset("table", path=str(path), target="y", task="regression", missing="keep")
    for record in linear.records:  # one-hot, as a linear model takes it
        split = make_split(kept, record["seed"])
        fitted = LinearRegression().fit(split.X_train, split.y_train)
        expected = np.mean((split.y_test - fitted.predict(split.X_test)) ** 2)
        assert record["value"] == pytest.approx(expected, rel=1e-10)
    onehot = run_setting(_table(path, results, *tiny_pilid, "data.encoding=onehot"))
    assert {r["encoding"] for r in onehot.records} == {"onehot"}
    assert onehot.records[0]["setting_id"] != pilid.records[0]["setting_id"]
