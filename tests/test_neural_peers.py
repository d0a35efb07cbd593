"""RealMLP and TabM as peers of Table 3+ (conf/model/realmlp.yaml, tabm.yaml): their YAMLs build
pytabkit's classes with the library's defaults (the run's train.* settings do not reach them),
one thread and the trial's seed; a budget is an override of n_epochs; and they run through the
runner (NaN rows dropped for them, as for every model that refuses NaN). Skipped without
pytabkit (``pip install -e ".[peers]"``; not in ``.[dev]``: CI installs no PyTorch Lightning)."""

from __future__ import annotations

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from pilid.data import load_dataset, make_split
from pilid.experiments.config import CONF_DIR
from pilid.experiments.model_config import build_estimator, builtin_model
from pilid.schema import ESTIMATOR_TRAIN_KEYS

pytabkit = pytest.importorskip("pytabkit", reason='pip install -e ".[peers]" for RealMLP, TabM')

CLASSES = {
    ("realmlp", "regression"): pytabkit.RealMLP_TD_Regressor,
    ("realmlp", "classification"): pytabkit.RealMLP_TD_Classifier,
    ("tabm", "regression"): pytabkit.TabM_D_Regressor,
    ("tabm", "classification"): pytabkit.TabM_D_Classifier,
}
#: A run's train.* settings, none of them pytabkit's defaults.
TRAIN = {"epochs": 7, "batch_size": 64, "lr": 0.005, "optimizer": "adam", "patience": 3}
TRAIN["val_fraction"] = 0.1


@pytest.mark.parametrize(("name", "task"), sorted(CLASSES))
def test_the_yaml_builds_pytabkits_defaults_with_one_thread_and_the_trials_seed(name, task):
    assert set(TRAIN) == set(ESTIMATOR_TRAIN_KEYS)
    estimator = build_estimator(builtin_model(name), task, TRAIN, 7, "cpu", [1])
    cls = CLASSES[(name, task)]
    assert type(estimator) is cls
    params = estimator.get_params()
    defaults = cls().get_params()
    # every key the YAML leaves to the library is the class's own default, whatever train.* says
    for key in ("lr", "batch_size", "n_epochs", "patience", "val_fraction"):
        if key in defaults:
            assert params[key] == defaults[key], key
    assert params["random_state"] == 7 and params["n_threads"] == 1 and params["device"] == "cpu"


def test_a_budget_is_an_override_of_n_epochs_and_another_setting():
    from pilid.experiments.setting import setting_id

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        plain = compose("config", overrides=["model=tabm", "data=bike"])
        budget = compose("config", overrides=["model=tabm", "data=bike", "model.n_epochs=16"])
    estimator = build_estimator(budget.model, "regression", {}, 0, "cpu", [])
    assert estimator.get_params()["n_epochs"] == 16
    assert setting_id(budget) != setting_id(plain)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["realmlp", "tabm"])
def test_the_neural_peers_run_through_the_runner_on_a_budget(tmp_path, name):
    from pilid.experiments import load_results, run_setting

    data = ["data=synthetic", "data.N=300", "data.m=3", "data.n_interactions=1"]
    overrides = [f"model={name}", "model.n_epochs=30", *data, "trials=2"]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[*overrides, f"results_dir={tmp_path}"])
    summary = run_setting(cfg)
    records = load_results(tmp_path)
    assert summary.n == 2 and set(records["model"]) == {name}
    # better than predicting the training mean on each trial's test split
    dataset = load_dataset("synthetic", N=300, m=3, n_interactions=1)
    splits = [make_split(dataset, seed) for seed in (0, 1)]
    baseline = [np.mean((s.y_test - s.y_train.mean()) ** 2) for s in splits]
    assert np.all(records.sort_values("trial")["value"].to_numpy(dtype=float) < baseline)
