"""Models by config: every `model=` YAML names its class per task with `_target_`,
its keys reach the estimator, a model of the user's own directory runs like a built-in one, bad
model configs fail in one line; scores and metrics; every baseline end to end through the runner
of `python -m pilid.run`."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hydra import compose, initialize_config_dir
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.svm import SVR

from pilid.baselines.ga2m import GA2MRegressor
from pilid.baselines.gam import GAMClassifier
from pilid.baselines.svm import SVMClassifier
from pilid.data import load_dataset, make_split
from pilid.errors import PilidError
from pilid.experiments.config import CONF_DIR, group_options
from pilid.experiments.model_config import (
    build_estimator,
    builtin_estimator,
    estimator_class,
    is_batchable,
)
from pilid.models.metrics import predict_scores, score
from pilid.report.labels import model_label
from pilid.schema import SCHEMAS

BASELINES = ("svm", "rf", "linear", "gam", "ga2m", "ga")
TRAIN = {"epochs": 3, "batch_size": 64, "lr": 0.005, "optimizer": "adam", "patience": 10}


def _model_yaml(name: str) -> dict:
    """The model's keys and values (its defaults list, which names the schema, left out; the
    run's gamma shortcut at its default 5)."""
    config = yaml.safe_load((CONF_DIR / "model" / f"{name}.yaml").read_text())
    config.pop("defaults", None)
    return {k: 5 if v == "${gamma}" else v for k, v in config.items()}


def _build(name, task, params=None, seed=0, device="cpu", categorical=()):
    """What the runner builds for model=<name> with `params` (model keys and train.* keys)."""
    return builtin_estimator(name, task, params, seed, device, categorical)


def _pairwise_auc(y, s):
    pos, neg = s[y == 1][:, None], s[y == 0][None, :]
    return float(np.mean((pos > neg) + 0.5 * (pos == neg)))


# -- the built-in models as configs ---------------------------------------------------------------
NEURAL = {"pilid", "pilid_lib", "mlp", "pilib", "pilib_lib", "nit"}
#: Today's peers (Table 3+): tested by `test_todays_peers_run_through_the_runner` (RealMLP and
#: TabM by tests/test_neural_peers.py).
PEERS = {"lightgbm", "aplr", "realmlp", "tabm"}


def test_every_built_in_model_names_a_class_per_task():
    for name in set(SCHEMAS["model"]) - PEERS:
        model = _model_yaml(name)
        for task in ("regression", "classification"):
            cls = estimator_class(model, task)
            assert is_batchable(cls) == (name in NEURAL), (name, task)
            kind = "Regressor" if task == "regression" else "Classifier"
            assert kind in cls.__name__ or cls.__name__ in (
                "SVR",
                "LinearRegression",
                "LogisticRegression",
            )
    paper_rows = {"SVM (rbf kernel)", "Random Forest", "GAM", "GA2M", "GA", "MLP", "NIT", "PiLiB"}
    assert paper_rows <= {model_label(name) for name in group_options("model")}
    assert model_label("linear", task="regression") == "Linear Regression"
    assert model_label("linear", task="classification") == "Logistic Regression"
    assert model_label("my_own_model") == "my_own_model"  # a user's model: its config name


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lightgbm", "aplr"])
def test_todays_peers_run_through_the_runner(tmp_path, name):
    """Today's peers: their YAMLs build their library's own class and run like a built-in."""
    pytest.importorskip(name, reason=f'pip install -e ".[peers]" for model={name}')
    summary, records = _run(
        tmp_path,
        [f"model={name}", "data=synthetic", "data.N=300", "data.m=3", "data.n_interactions=1"]
        + (["model.n_estimators=20"] if name == "lightgbm" else ["model.m=200"])
        + ["trials=2"],
    )
    assert summary.n == 2 and set(records["model"]) == {name}
    dataset = load_dataset("synthetic", N=300, m=3, n_interactions=1)
    splits = [make_split(dataset, seed) for seed in (0, 1)]
    baseline = [np.mean((s.y_test - s.y_train.mean()) ** 2) for s in splits]
    assert np.all(records.sort_values("trial")["value"].to_numpy(dtype=float) < baseline)


class _FramesOnly(RegressorMixin, BaseEstimator):
    """A regressor that refuses arrays, as IGANN and DNAMite do: the mean of ``y``."""

    def __init__(self, shift=0.0):
        self.shift = shift

    def fit(self, X, y):
        assert isinstance(X, pd.DataFrame) and list(X.columns)[:2] == ["x0", "x1"]
        self.mean_ = float(np.mean(y)) + self.shift
        return self

    def predict(self, X):
        assert isinstance(X, pd.DataFrame)
        return np.full(len(X), self.mean_)


def test_a_class_that_takes_dataframes_only_gets_them():
    model = {
        "name": "frames",
        "_target_": f"{__name__}._FramesOnly",
        "_input_": "dataframe",
        "shift": 1.0,
    }
    estimator = build_estimator(model, "regression", {}, 0, "cpu", [])
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.arange(20.0)
    fitted = estimator.fit(X, y)
    np.testing.assert_allclose(fitted.predict(X), np.full(20, y.mean() + 1.0))


def test_unknown_task_is_one_line():
    with pytest.raises(PilidError, match="task"):
        _build("rf", "ranking", {}, 0, "cpu", [])


def test_build_picks_the_class_by_task_and_filters_the_params():
    params = {"C": 3.0, "rbf_gamma": 0.25, "epsilon": 0.2, "class_weight": None}
    params.update(TRAIN)  # training settings must not reach the SVM
    svr = _build("svm", "regression", params, 4, "cpu", [])
    svc = _build("svm", "classification", params, 4, "cpu", [])
    assert type(svr) is SVR and type(svc) is SVMClassifier
    assert (svr.C, svr.gamma, svr.epsilon) == (3.0, 0.25, 0.2)  # rbf_gamma, not PiLiD's gamma
    assert svc.gamma == 0.25 and svc.random_state == 4 and svc.class_weight is None
    linear = _build("linear", "regression", {"C": 2.0, "max_iter": 5}, 1, "cpu", [])
    assert type(linear) is LinearRegression
    logistic = _build("linear", "classification", {"C": 2.0, "max_iter": 5}, 1, "cpu", [])
    assert type(logistic) is LogisticRegression and (logistic.C, logistic.max_iter) == (2.0, 5)


def test_build_sets_seed_cores_task_defaults_and_categorical_columns():
    params = {"n_estimators": 7, "cores": 1, "max_features": None, "criterion": None}
    rf_reg = _build("rf", "regression", params, 11, "cpu", [])
    rf_clf = _build("rf", "classification", params, 12, "cpu", [])
    assert type(rf_reg) is RandomForestRegressor and type(rf_clf) is RandomForestClassifier
    assert (rf_reg.n_estimators, rf_reg.n_jobs, rf_reg.random_state) == (7, 1, 11)
    defaults = RandomForestClassifier().get_params()
    assert (rf_clf.max_features, rf_clf.criterion) == (defaults["max_features"], "gini")
    assert rf_reg.max_features == RandomForestRegressor().max_features
    mask = np.array([False, True, False, True])
    gam = _build("gam", "classification", {"lam_grid": [1, 10]}, 0, "cpu", mask)
    assert type(gam) is GAMClassifier and gam.categorical_features == [1, 3]
    assert gam.lam_grid == [1, 10]
    ebm = _build("ga2m", "regression", {"cores": 2, "interactions": 0}, 3, "cpu", [])
    assert type(ebm) is GA2MRegressor and (ebm.n_jobs, ebm.random_state) == (2, 3)
    assert ebm.categorical_features is None


def test_training_settings_reach_the_neural_models_only():
    params = {**_model_yaml("mlp"), **TRAIN}
    for key in ("name", "regressor", "classifier"):
        params.pop(key)
    mlp = _build("mlp", "regression", params, 5, "cpu", [2])
    assert type(mlp).__name__ == "MLPRegressor"
    assert (mlp.epochs, mlp.batch_size, mlp.random_state, mlp.device) == (3, 64, 5, "cpu")
    assert mlp.categorical_features == [2]
    params.pop("n_bags")  # the GA's teacher is one MLP
    ga = _build("ga", "classification", {**params, "cores": 1}, 6, "cpu", [])
    assert type(ga).__name__ == "GAClassifier"
    assert (ga.epochs, ga.n_jobs, ga.random_state, ga.device) == (3, 1, 6, "cpu")
    pilid = _build("pilid", "regression", {"gamma": 4, **TRAIN}, 0, "cpu", [])
    assert type(pilid).__name__ == "PiLiDRegressor" and pilid.gamma == 4


@pytest.mark.parametrize("name", BASELINES + ("mlp",))
def test_every_config_key_reaches_the_estimator(name):
    """Every key of the YAML is taken by the class of one task at least (a key that no class
    takes is refused in one line, so a typo in a YAML cannot be dropped silently)."""
    config = _model_yaml(name)
    renamed = {"rbf_gamma": "gamma", "cores": "n_jobs"}
    accepted = set()
    for task in ("regression", "classification"):
        estimator = _build(name, task, {}, 0, "cpu", [])
        accepted |= set(estimator.get_params(deep=False))
    skip = {"name", "regressor", "classifier"}
    assert {renamed.get(k, k) for k in config if k not in skip} <= accepted
    with pytest.raises(PilidError, match=r"^model\.n_estimatorz is not a parameter of .*drop it"):
        _build(name, "regression", {"n_estimatorz": 3})


@pytest.mark.parametrize("name", ["pilib", "nit"])
def test_block_models_build_from_their_configs(name):
    params = {k: v for k, v in _model_yaml(name).items() if k != "name"}
    params = {**params, **TRAIN}
    if "gamma" in params:
        params["gamma"] = 3  # the run's gamma interpolates into model.gamma
    for task, suffix in (("regression", "Regressor"), ("classification", "Classifier")):
        estimator = _build(name, task, params, 8, "cpu", [0])
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.uci
@pytest.mark.parametrize("name", sorted(CHEAP_OVERRIDES))
def test_every_baseline_runs_through_the_runner_on_spambase(tmp_path, name):
    cheaper = ["model.n_splines=5", "model.lam_grid=[10.0]"] if name == "gam" else []
    overrides = [f"model={name}", *CHEAP_OVERRIDES[name], *cheaper, "data=spambase", "trials=1"]
    summary, records = _run(tmp_path, [*overrides, f"data_dir={_spambase_dir()}", *FAST_TRAIN])
    assert records["metric"].tolist() == ["auc"] and records["N"].tolist() == [4601]
    assert summary.mean > (0.85 if name in ("mlp", "ga") else 0.93)  # published: 0.92-0.99
