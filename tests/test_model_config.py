"""The model registry (issue 7): one entry per `model=` name, config keys that reach the estimator,
scores and metrics, and every baseline end to end through the runner of `python -m pilid.run`."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from hydra import compose, initialize_config_dir
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.svm import SVR

from pilid.config import CONF_DIR, group_options
from pilid.data import load_dataset, make_split
from pilid.errors import PilidError
from pilid.models.ga2m import GA2MRegressor
from pilid.models.gam import GAMClassifier
from pilid.models.registry import MODELS, ModelSpec, get_model, predict_scores, score
from pilid.models.svm import SVMClassifier

BASELINES = ("svm", "rf", "linear", "gam", "ga2m", "ga")
TRAIN = {"epochs": 3, "batch_size": 64, "lr": 0.005, "optimizer": "adam", "patience": 10}


def _model_yaml(name: str) -> dict:
    """The model's keys and values (its defaults list, which names the schema, left out)."""
    config = yaml.safe_load((CONF_DIR / "model" / f"{name}.yaml").read_text())
    config.pop("defaults", None)
    return config


def _pairwise_auc(y, s):
    pos, neg = s[y == 1][:, None], s[y == 0][None, :]
    return float(np.mean((pos > neg) + 0.5 * (pos == neg)))


# -- the registry --------------------------------------------------------------------------------
def test_every_model_config_has_a_registry_entry_and_back():
    assert set(MODELS) == set(group_options("model"))
    for name, spec in MODELS.items():
        assert isinstance(spec, ModelSpec) and spec.name == name and get_model(name) is spec
    neural = {"pilid", "pilid_lib", "mlp", "pilib", "nit"}
    assert {n for n, s in MODELS.items() if s.batchable} == neural
    paper_rows = {"SVM (rbf kernel)", "Random Forest", "GAM", "GA2M", "GA", "MLP", "NIT", "PiLiB"}
    assert paper_rows <= {spec.label_for("regression") for spec in MODELS.values()}
    linear = get_model("linear")
    assert linear.label_for("regression") == "Linear Regression"
    assert linear.label_for("classification") == "Logistic Regression"


def test_unknown_model_lists_the_valid_names():
    with pytest.raises(PilidError) as info:
        get_model("xgboost")
    message = str(info.value)
    assert "\n" not in message and all(name in message for name in MODELS)
    with pytest.raises(PilidError, match="task"):
        get_model("rf").build("ranking", {}, 0, "cpu", [])


def test_build_picks_the_class_by_task_and_filters_the_params():
    params = {"C": 3.0, "rbf_gamma": 0.25, "gamma": 5, "epsilon": 0.2, "class_weight": None}
    params.update(TRAIN)  # training settings must not reach the SVM
    svr = get_model("svm").build("regression", params, 4, "cpu", [])
    svc = get_model("svm").build("classification", params, 4, "cpu", [])
    assert type(svr) is SVR and type(svc) is SVMClassifier
    assert (svr.C, svr.gamma, svr.epsilon) == (3.0, 0.25, 0.2)  # rbf_gamma, not PiLiD's gamma
    assert svc.gamma == 0.25 and svc.random_state == 4 and svc.class_weight is None
    linear = get_model("linear").build("regression", {"C": 2.0, "max_iter": 5}, 1, "cpu", [])
    assert type(linear) is LinearRegression
    logistic = get_model("linear").build("classification", {"C": 2.0, "max_iter": 5}, 1, "cpu", [])
    assert type(logistic) is LogisticRegression and (logistic.C, logistic.max_iter) == (2.0, 5)


def test_build_sets_seed_cores_task_defaults_and_categorical_columns():
    params = {"n_estimators": 7, "cores": 1, "max_features": None, "criterion": None}
    rf_reg = get_model("rf").build("regression", params, 11, "cpu", [])
    rf_clf = get_model("rf").build("classification", params, 12, "cpu", [])
    assert type(rf_reg) is RandomForestRegressor and type(rf_clf) is RandomForestClassifier
    assert (rf_reg.n_estimators, rf_reg.n_jobs, rf_reg.random_state) == (7, 1, 11)
    defaults = RandomForestClassifier().get_params()
    assert (rf_clf.max_features, rf_clf.criterion) == (defaults["max_features"], "gini")
    assert rf_reg.max_features == RandomForestRegressor().max_features
    mask = np.array([False, True, False, True])
    gam = get_model("gam").build("classification", {"lam_grid": [1, 10]}, 0, "cpu", mask)
    assert type(gam) is GAMClassifier and gam.categorical_features == [1, 3]
    assert gam.lam_grid == [1, 10]
    ebm = get_model("ga2m").build("regression", {"cores": 2, "interactions": 0}, 3, "cpu", [])
    assert type(ebm) is GA2MRegressor and (ebm.n_jobs, ebm.random_state) == (2, 3)
    assert ebm.categorical_features is None


def test_training_settings_reach_the_neural_models_only():
    params = {**_model_yaml("mlp"), **TRAIN}
    params.pop("name")
    mlp = get_model("mlp").build("regression", params, 5, "cpu", [2])
    assert type(mlp).__name__ == "MLPRegressor"
    assert (mlp.epochs, mlp.batch_size, mlp.random_state, mlp.device) == (3, 64, 5, "cpu")
    assert mlp.categorical_features == [2]
    ga = get_model("ga").build("classification", {**params, "cores": 1}, 6, "cpu", [])
    assert type(ga).__name__ == "GAClassifier"
    assert (ga.epochs, ga.n_jobs, ga.random_state, ga.device) == (3, 1, 6, "cpu")
    pilid = get_model("pilid").build("regression", {"gamma": 4, **TRAIN}, 0, "cpu", [])
    assert type(pilid).__name__ == "PiLiDRegressor" and pilid.gamma == 4


@pytest.mark.parametrize("name", BASELINES + ("mlp",))
def test_every_config_key_reaches_the_estimator(name):
    """A key that no estimator takes would be dropped silently: catch typos in the YAML."""
    config = _model_yaml(name)
    config.pop("name")
    renamed = {"rbf_gamma": "gamma", "cores": "n_jobs"}
    accepted = set()
    for task in ("regression", "classification"):
        estimator = get_model(name).build(task, {}, 0, "cpu", [])
        accepted |= set(estimator.get_params(deep=False))
    assert {renamed.get(k, k) for k in config} <= accepted


@pytest.mark.parametrize("name", ["pilib", "nit"])
def test_block_models_build_from_their_configs(name):
    pytest.importorskip(f"pilid.models.{name}", reason=f"pilid.models.{name} is not written yet")
    params = {k: v for k, v in _model_yaml(name).items() if k != "name"}
    params = {**params, "gamma": 3, **TRAIN}  # the run's gamma interpolates into model.gamma
    for task, suffix in (("regression", "Regressor"), ("classification", "Classifier")):
        estimator = get_model(name).build(task, params, 8, "cpu", [0])
        assert type(estimator).__name__ == f"{name.upper().replace('PILIB', 'PiLiB')}{suffix}"
        assert (estimator.epochs, estimator.random_state, estimator.device) == (3, 8, "cpu")


def test_mlp_and_ga_teacher_configs_equal_pilid_deep_part():
    pilid, mlp, ga = _model_yaml("pilid"), _model_yaml("mlp"), _model_yaml("ga")
    for key in ("hidden_layers", "sigma", "reg", "lam"):
        assert mlp[key] == pilid[key] == ga[key]


# -- scores and metrics ------------------------------------------------------------------------
def test_predict_scores_uses_margin_else_positive_probability():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=200) > 0).astype(int)
    logistic = LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(
        predict_scores(logistic, X, "classification"), logistic.decision_function(X)
    )
    forest = RandomForestClassifier(10, random_state=0).fit(X, 1 - y)  # classes_ = [0, 1]
    np.testing.assert_array_equal(
        predict_scores(forest, X, "classification"), forest.predict_proba(X)[:, 1]
    )
    linear = LinearRegression().fit(X, X[:, 1])
    np.testing.assert_allclose(predict_scores(linear, X, "regression"), X[:, 1], atol=1e-10)
    with pytest.raises(PilidError, match="decision_function"):
        predict_scores(linear, X, "classification")


def test_score_is_mse_or_whole_split_auc():
    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    s = y + rng.normal(size=50)
    assert score("mse", y, s) == pytest.approx(np.sum((y - s) ** 2) / 50)
    labels = (rng.random(300) < 0.3).astype(int)
    scores = np.round(labels + rng.normal(size=300), 1)  # rounded: ties count one half
    expected = _pairwise_auc(labels, scores)
    assert score("auc", labels, scores) == pytest.approx(expected)
    assert score("roc_auc", labels, scores) == pytest.approx(expected)
    bad = [
        ("rmse", labels, scores),
        ("auc", labels, scores[:-1]),
        ("auc", labels, np.where(labels == 1, np.nan, scores)),
        ("auc", np.ones(300), scores),
        ("mse", [], []),
    ]
    for metric, truth, values in bad:
        with pytest.raises(PilidError) as info:
            score(metric, truth, values)
        assert "\n" not in str(info.value)


# -- end to end through the runner (what `python -m pilid.run model=<name>` calls) -------------
CHEAP_OVERRIDES = {
    "svm": [],
    "rf": ["model.n_estimators=30", "model.cores=1"],
    "linear": [],
    "gam": ["model.n_splines=6", "model.lam_grid=[1.0,100.0]"],
    "ga2m": ["model.interactions=2", "model.outer_bags=1", "model.cores=1"],
    "ga": ["model.hidden_layers=[16]", "model.student_outer_bags=1", "model.cores=1"],
    "mlp": ["model.hidden_layers=[16]"],
}
FAST_TRAIN = ["train.epochs=3", "train.batch_size=64", "device=cpu"]


def _run(tmp_path, overrides):
    from pilid.experiments import load_results, run_setting

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[*overrides, f"results_dir={tmp_path}"])
    summary = run_setting(cfg)
    return summary, load_results(tmp_path)


@pytest.mark.parametrize("name", sorted(CHEAP_OVERRIDES))
def test_every_baseline_runs_through_the_runner_on_synthetic_data(tmp_path, name):
    task = "classification" if name in ("svm", "gam", "ga") else "regression"
    data = [
        "data=synthetic",
        f"data.task={task}",
        "data.N=300",
        "data.m=4",
        "data.n_interactions=2",
    ]
    overrides = [f"model={name}", *CHEAP_OVERRIDES[name], *data, *FAST_TRAIN, "trials=2"]
    summary, records = _run(tmp_path, overrides)
    assert summary.n == 2 and len(records) == 2
    assert set(records["model"]) == {name} and set(records["trial"]) == {0, 1}
    metric = "auc" if task == "classification" else "mse"
    assert set(records["metric"]) == {metric}
    values = records.sort_values("trial")["value"].to_numpy(dtype=float)
    if task == "classification":
        assert np.all(values > 0.6)
    else:  # better than predicting the training mean on each trial's test split
        dataset = load_dataset("synthetic", N=300, m=4, n_interactions=2)
        splits = [make_split(dataset, seed) for seed in (0, 1)]
        baseline = [np.mean((s.y_test - s.y_train.mean()) ** 2) for s in splits]
        assert np.all(values < baseline)


def _spambase_dir() -> Path:
    root = os.environ.get("PILID_DATA_DIR")
    if not root or not (Path(root).expanduser() / "spambase" / "spambase.data").is_file():
        pytest.skip(
            "set PILID_DATA_DIR to a folder with spambase/spambase.data (../shared/data/uci)"
        )
    return Path(root).expanduser()


@pytest.mark.uci
@pytest.mark.parametrize("name", sorted(CHEAP_OVERRIDES))
def test_every_baseline_runs_through_the_runner_on_spambase(tmp_path, name):
    cheaper = ["model.n_splines=5", "model.lam_grid=[10.0]"] if name == "gam" else []
    overrides = [f"model={name}", *CHEAP_OVERRIDES[name], *cheaper, "data=spambase", "trials=1"]
    summary, records = _run(tmp_path, [*overrides, f"data_dir={_spambase_dir()}", *FAST_TRAIN])
    assert records["metric"].tolist() == ["auc"] and records["N"].tolist() == [4601]
    assert summary.mean > (0.85 if name in ("mlp", "ga") else 0.93)  # published: 0.92-0.99
