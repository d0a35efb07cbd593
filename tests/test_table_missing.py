"""Issue 49, item 7: ``data=table`` keeps the rows with a missing value. NaN stays NaN in a
numeric column (scaled with the training part's other values), a missing category is a level
of its own; a model that takes NaN (scikit-learn's ``allow_nan`` tag) gets every row, one that
does not the rows without a missing number (logged); ``data.missing=drop`` is the old rule."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from sklearn.linear_model import LinearRegression

from pilid.data import load_dataset, make_split
from pilid.data.split import MISSING_LEVEL
from pilid.data.table import drop_missing, frame_dataset
from pilid.errors import PilidError
from pilid.experiments import run_setting
from pilid.experiments.config import CONF_DIR
from pilid.experiments.setting import setting_id

N_ROWS = 160


def _frame(seed=0) -> pd.DataFrame:
    """160 rows: ``a`` numeric with 20 NaN (rows 0-19), ``colour`` text with 10 missing (rows
    10-19 and 30-34: 5 of them with ``a`` present too), ``y`` with 2 missing (rows 150, 151)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "a": rng.normal(3.0, 2.0, N_ROWS),
            "colour": rng.choice(["red", "blue"], N_ROWS).astype(object),
            "b": rng.normal(size=N_ROWS),
        }
    )
    frame["y"] = frame["a"].fillna(0) + (frame["colour"] == "red") + rng.normal(0, 0.3, N_ROWS)
    frame.loc[0:19, "a"] = np.nan
    frame.loc[list(range(10, 20)) + list(range(30, 35)), "colour"] = None
    frame.loc[[150, 151], "y"] = np.nan
    return frame


def test_keep_drops_only_rows_without_a_target_and_encodes_nan(tmp_path):
    frame = _frame()
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    kept = load_dataset("table", path=str(path), target="y", task="regression", missing="keep")
    assert kept.n_samples == N_ROWS - 2 and kept.info["rows_removed"] == {"missing target": 2}
    assert int(kept.X["a"].isna().sum()) == 20 and int(kept.X["colour"].isna().sum()) == 15
    assert list(kept.X["colour"].cat.categories) == ["blue", "red"]
    split = make_split(kept, 4)
    names = split.feature_names
    assert names == ["a", "colour=blue", "colour=red", f"colour={MISSING_LEVEL}", "b"]
    assert list(split.categorical) == [False, True, True, True, False]
    # the missing level is set exactly on the rows without a colour, the others on theirs
    rows = np.concatenate([split.train_index, split.test_index])
    encoded = np.concatenate([split.X_train, split.X_test])
    colour = kept.X["colour"].to_numpy()[rows]
    np.testing.assert_array_equal(encoded[:, 3], pd.isna(colour).astype(float))
    np.testing.assert_array_equal(encoded[:, 2], (colour == "red").astype(float))
    # NaN stays NaN; the scale is the training part's other values' (ddof 0)
    a = kept.X["a"].to_numpy()
    train = a[split.train_index]
    assert split.x_offset[0] == pytest.approx(np.nanmean(train), rel=1e-12)
    assert split.x_scale[0] == pytest.approx(np.nanstd(train), rel=1e-12)
    np.testing.assert_array_equal(np.isnan(encoded[:, 0]), np.isnan(a[rows]))
    present = ~np.isnan(a[rows])
    expected = (a[rows][present] - np.nanmean(train)) / np.nanstd(train)
    np.testing.assert_allclose(encoded[present, 0], expected, rtol=1e-12)
    # drop (the functions' default, the UCI loaders' rule): every row with a missing value
    dropped = load_dataset("table", path=str(path), target="y", task="regression")
    lost = frame[["a", "colour", "b", "y"]].isna().any(axis=1)
    assert dropped.n_samples == int((~lost).sum()) == N_ROWS - 27
    assert dropped.info["rows_removed"] == {"missing value": 27}


def test_drop_missing_leaves_the_rows_without_a_missing_number(caplog):
    dataset = frame_dataset(_frame(), "y", "regression", name="t", missing="keep")
    with caplog.at_level(logging.INFO, logger="pilid.data"):
        fewer = drop_missing(dataset, "model=linear takes no NaN")
    assert "t: rule 'missing value' removed 20 of 158 rows (model=linear takes no NaN)" in (
        caplog.text
    )
    assert fewer.n_samples == 138 and not fewer.X["a"].isna().any()
    assert int(fewer.X["colour"].isna().sum()) == 5  # a missing category: a level, kept
    assert fewer.info["rows_removed"] == {"missing target": 2, "missing value": 20}
    np.testing.assert_array_equal(fewer.y, dataset.y[dataset.X["a"].notna().to_numpy()])
    assert drop_missing(fewer, "again") is fewer


def test_bad_missing_options_fail_in_one_line():
    frame = _frame()
    with pytest.raises(PilidError, match="data.missing='maybe' is invalid") as info:
        frame_dataset(frame, "y", "regression", missing="maybe")
    assert "data.missing=keep" in str(info.value) and "\n" not in str(info.value)
    frame["empty"] = np.nan
    with pytest.raises(PilidError, match=r"column 'empty' .* holds no value") as info:
        frame_dataset(frame, "y", "regression", missing="keep")
    assert "data.drop=[empty]" in str(info.value)


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def _table_run(path, results, *extra):
    args = ["data=table", f"data.path={path}", "data.target=y", "data.task=regression"]
    return _compose([*args, "trials=2", f"results_dir={results}", *extra])


@pytest.mark.slow
def test_the_runner_gives_nan_to_the_models_that_take_it(tmp_path, caplog):
    path, results = tmp_path / "t.csv", tmp_path / "results"
    _frame().to_csv(path, index=False)
    tiny_pilid = ["model=pilid", "gamma=3", "model.hidden_layers=[8]", "train.epochs=3"]
    pilid = run_setting(_table_run(path, results, *tiny_pilid))
    assert {r["N"] for r in pilid.records} == {N_ROWS - 2}  # every row with a target
    assert all(np.isfinite(r["value"]) for r in pilid.records)
    tiny_ebm = ["model=ebm", "model.outer_bags=1", "model.max_rounds=50", "model.cores=1"]
    ebm = run_setting(_table_run(path, results, *tiny_ebm))  # EBM bins NaN on its own
    assert {r["N"] for r in ebm.records} == {N_ROWS - 2}
    assert all(np.isfinite(r["value"]) for r in ebm.records)
    with caplog.at_level(logging.INFO, logger="pilid.data"):
        linear = run_setting(_table_run(path, results, "model=linear"))
    assert "rule 'missing value' removed 20 of 158 rows (model=linear takes no NaN)" in caplog.text
    assert {r["N"] for r in linear.records} == {N_ROWS - 22}
    kept = load_dataset("table", path=str(path), target="y", task="regression", missing="keep")
    fewer = drop_missing(kept, "check")
    for record in linear.records:
        split = make_split(fewer, record["seed"])
        fitted = LinearRegression().fit(split.X_train, split.y_train)
        expected = np.mean((split.y_test - fitted.predict(split.X_test)) ** 2)
        assert record["value"] == pytest.approx(expected, rel=1e-10)
    # data.missing=drop: every row with a missing value gone, for every model
    dropped = run_setting(_table_run(path, results, "model=linear", "data.missing=drop"))
    assert {r["N"] for r in dropped.records} == {N_ROWS - 27}


def test_missing_drop_keeps_the_setting_id_a_config_without_the_key_had(tmp_path):
    path = tmp_path / "t.csv"
    _frame().to_csv(path, index=False)
    config = _table_run(path, tmp_path / "results", "model=linear", "data.missing=drop")
    plain = {**config, "data": {k: v for k, v in config.data.items() if k != "missing"}}
    keep = _table_run(path, tmp_path / "results", "model=linear")
    assert setting_id(config) == setting_id(plain) != setting_id(keep)
