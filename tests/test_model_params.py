"""Hyper-parameter checks before training (`pilid.experiments.model_config.check_model`).

The valid settings are the shipped defaults, read from conf/model/<name>.yaml and the `train`
block of conf/config.yaml, merged as the runner merges them, so these tests follow the configs.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
import yaml

from pilid.baselines.ga import GAClassifier
from pilid.baselines.ga2m import GA2MRegressor
from pilid.baselines.gam import GAMClassifier, GAMRegressor
from pilid.errors import PilidError
from pilid.experiments.model_config import builtin_estimator
from pilid.models.params import ParamError
from pilid.schema import ESTIMATOR_TRAIN_KEYS as TRAIN_KEYS
from pilid.schema import SCHEMAS
from studies._levers import LEVERS

CONF = Path(__file__).resolve().parents[1] / "conf"
#: The built-in models (each with a schema); today's peers have tests of their own.
MODELS = sorted(set(SCHEMAS["model"]) - {"lightgbm", "aplr", "realmlp", "tabm"})


def check_model_params(name: str, task: str, params: dict) -> None:
    """Check model=<name> with `params` (model keys and train.* keys) as a run does."""
    builtin_estimator(name, task, params)


TASKS = ("regression", "classification")


def _top_config() -> dict:
    return yaml.safe_load((CONF / "config.yaml").read_text())


def _params(name: str, **overrides) -> dict:
    """Model config minus name, plus train.* (as a record's `params` holds them)."""
    top = _top_config()
    params = yaml.safe_load((CONF / "model" / f"{name}.yaml").read_text())
    params.pop("name")
    params.pop("defaults", None)  # names the schema (pilid/schema.py), not a parameter
    if params.get("gamma") == "${gamma}":  # the run's gamma shortcut interpolates into model.gamma
        params["gamma"] = top["gamma"]
    params.update({k: top["train"][k] for k in TRAIN_KEYS if k in top["train"]})
    params.update(overrides)
    return params


def test_train_keys_are_the_runners():
    from pilid.experiments.runner import TRAIN_PARAM_KEYS

    assert tuple(TRAIN_KEYS) == tuple(TRAIN_PARAM_KEYS)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_default_config_passes(name, task):
    check_model_params(name, task, _params(name))  # no error
    check_model_params(name, task, _params(name, **_VALID_VARIANTS.get(name, {})))


_VALID_VARIANTS = {  # other valid values of the same keys
    "rf": {"cores": 1, "max_features": 0.5, "max_depth": 5, "criterion": None},
    "svm": {"rbf_gamma": 0.25, "C": 10.0},
    "gam": {"n_splines": 6, "lam_grid": [1.0, 100.0], "max_iter": 100.0},
    "ga2m": {"interactions": "2x", "learning_rate": 0.01, "smoothing_rounds": 0, "cores": 1},
    "ga": {"student": "gam", "hidden_layers": [16], "cores": 1},
    "mlp": {"hidden_layers": [16, 8], "sigma": 0.05},
    "pilid": {"gamma": 1, "knots": "quantile", "init": "gaussian", "reg_groups": ["w", "b"]},
    "pilib": {"gamma": [2, 3], "purify": False},
    "nit": {"max_order": 2, "lambda0": 0.0},
}


BAD = [  # (model, task, override, the key as the command line names it, example in the fix)
    ("rf", "regression", {"n_estimators": 0}, "model.n_estimators", "100"),
    ("rf", "classification", {"n_estimators": 0}, "model.n_estimators", "100"),
    ("svm", "regression", {"C": -1}, "model.C", "1.0"),
    ("svm", "classification", {"C": -1}, "model.C", "1.0"),
    ("linear", "classification", {"C": 0}, "model.C", "1.0"),
    ("gam", "regression", {"n_splines": 0}, "model.n_splines", "20"),
    ("gam", "classification", {"lam_grid": []}, "model.lam_grid", None),
    ("gam", "regression", {"lam_grid": [-1]}, "model.lam_grid", None),
    ("ga2m", "regression", {"outer_bags": 0}, "model.outer_bags", "8"),
    ("ga2m", "classification", {"interactions": -1}, "model.interactions", "10"),
    ("ga", "classification", {"student": "nosuch"}, "model.student", "ebm"),
    ("ga", "regression", {"student": "nosuch"}, "model.student", "ebm"),
    ("mlp", "regression", {"hidden_layers": [0]}, "model.hidden_layers", None),
    ("pilid", "regression", {"lam": -1}, "model.lam", "1e-05"),
    ("pilid", "classification", {"lam": -1}, "model.lam", "1e-05"),
    # renamed keys are named by their config names
    ("svm", "regression", {"rbf_gamma": "nope"}, "model.rbf_gamma", "scale"),
    ("rf", "regression", {"cores": 0}, "model.cores", "-1"),
    ("ga2m", "regression", {"cores": 0}, "model.cores", "-1"),
    ("ga", "classification", {"cores": 0}, "model.cores", "-1"),
    # training settings are train.*
    ("pilid", "regression", {"epochs": -1}, "train.epochs", "100"),
    ("pilib", "classification", {"lr": 0}, "train.lr", "0.005"),
    ("ga", "regression", {"optimizer": "rmsprop"}, "train.optimizer", "adam"),
    ("mlp", "classification", {"val_fraction": 1.5}, "train.val_fraction", "0.1"),
    # the rest of gam.yaml / ga2m.yaml / ga.yaml
    ("gam", "regression", {"spline_order": -1}, "model.spline_order", "3"),
    ("gam", "classification", {"max_iter": 0}, "model.max_iter", "100"),
    ("gam", "regression", {"tol": -1.0}, "model.tol", "0.0001"),
    ("ga2m", "regression", {"inner_bags": -1}, "model.inner_bags", "0"),
    ("ga2m", "regression", {"learning_rate": 0}, "model.learning_rate", "null"),
    ("ga2m", "regression", {"max_bins": 2}, "model.max_bins", "1024"),
    ("ga2m", "regression", {"max_interaction_bins": 1}, "model.max_interaction_bins", "64"),
    ("ga2m", "regression", {"max_rounds": -5}, "model.max_rounds", "50000"),
    ("ga2m", "regression", {"early_stopping_rounds": 1.5}, "model.early_stopping_rounds", "100"),
    ("ga2m", "regression", {"validation_size": 1.5}, "model.validation_size", "0.15"),
    ("ga2m", "regression", {"min_samples_leaf": -1}, "model.min_samples_leaf", "4"),
    ("ga2m", "regression", {"smoothing_rounds": -1}, "model.smoothing_rounds", "null"),
    ("ga2m", "classification", {"interaction_smoothing_rounds": 0.5}, None, None),
    ("ga2m", "regression", {"interactions": 2.0}, "model.interactions", "10"),
    ("ga", "regression", {"student_outer_bags": 0}, "model.student_outer_bags", "8"),
    ("ga", "regression", {"student_n_splines": 3}, "model.student_n_splines", "20"),
    ("ga", "classification", {"lam": -1.0}, "model.lam", "1e-05"),
    ("ga", "classification", {"hidden_layers": [0]}, "model.hidden_layers", None),
    # pilid / pilib / nit keys
    ("pilid", "regression", {"gamma": 0}, "model.gamma", "5"),
    ("pilid", "regression", {"reg": "l3"}, "model.reg", "l2"),
    ("pilid", "regression", {"purify": "yes"}, "model.purify", "true"),
    ("pilib", "regression", {"block_layers": []}, "model.block_layers", "[16,8]"),
    ("nit", "classification", {"init_prob": 1.0}, "model.init_prob", "0.9"),
    ("rf", "regression", {"bootstrap": False, "max_samples": 0.5}, "model.max_samples", "null"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "task", "override", "key", "example"), BAD)
def test_a_bad_value_is_one_line_in_command_line_syntax(name, task, override, key, example):
    with pytest.raises(PilidError) as info:
        check_model_params(name, task, _params(name, **override))
    message = str(info.value)
    assert "\n" not in message
    if key is None:
        key = f"model.{next(iter(override))}"
    value = override[next(k for k in override if key.endswith("." + k) or key == k)]
    assert message.startswith(f"{key}=") and f" is invalid for {name}: " in message, message
    if isinstance(value, int | float) and not isinstance(value, bool):
        assert message.startswith(f"{key}={value}")
    if example is not None:
        assert message.endswith(f"; fix it, e.g. {key}={example}"), message
        fixed = {**override, next(iter(override)): _parse_cli(example)}
        if name == "rf" and "bootstrap" in override:
            fixed = {"bootstrap": False, "max_samples": None}
        check_model_params(name, task, _params(name, **fixed))  # the suggested fix is valid


def _parse_cli(text: str):
    """The value of an override as Hydra reads it from the command line."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    value = OverridesParser.create().parse_override(f"key={text}").value()
    return list(value) if isinstance(value, list | tuple) else value


def test_build_stops_on_the_same_line_so_fit_never_sees_a_bad_value():
    """The runner builds through `build_estimator`: a bad value stops there, not in fit."""
    for name, task, override in (
        ("rf", "regression", {"n_estimators": 0}),
        ("svm", "classification", {"C": -1}),
        ("pilid", "regression", {"lam": -1}),
    ):
        with pytest.raises(PilidError) as checked:
            check_model_params(name, task, _params(name, **override))
        with pytest.raises(PilidError) as built:
            builtin_estimator(name, task, _params(name, **override), 3, "cpu", [])
        assert str(built.value) == str(checked.value)


def test_the_runner_reports_a_bad_baseline_value_in_one_line(tmp_path):
    from hydra import compose, initialize_config_dir

    from pilid.experiments import run_setting

    overrides = [
        "model=rf",
        "model.n_estimators=0",
        "data=synthetic",
        "data.N=100",
        "data.m=3",
        "data.n_interactions=1",
        "trials=1",
        "device=cpu",
        f"results_dir={tmp_path}",
    ]
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    with pytest.raises(PilidError) as info:
        run_setting(cfg)
    assert str(info.value).startswith("model.n_estimators=0 is invalid for rf: must be an int")
    assert "\n" not in str(info.value)


def test_unknown_model_or_task():
    with pytest.raises(PilidError, match="unknown model"):
        check_model_params("xgboost", "regression", {})
    with pytest.raises(PilidError, match="task"):
        check_model_params("rf", "ranking", _params("rf"))


def test_python_api_fit_raises_the_parameter_error_before_any_library_does():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=40)
    cases = [
        (GA2MRegressor(max_bins=2, outer_bags=1, n_jobs=1), y, "max_bins=2 is invalid"),
        (GA2MRegressor(validation_size=-0.1, outer_bags=1, n_jobs=1), y, "validation_size"),
        (GAMRegressor(max_iter=0), y, "max_iter=0 is invalid"),
        (GAMClassifier(tol="x"), y > 0, "tol='x' is invalid"),
        (GAClassifier(student_outer_bags=0, hidden_layers=(4,), epochs=1), y > 0, "student_outer"),
    ]
    for estimator, target, match in cases:
        with pytest.raises(ParamError, match=match) as info:
            estimator.fit(X, target)
        assert "\n" not in str(info.value)


def test_param_error_survives_pickling_across_processes():
    error = ParamError("lam", -1, "use a number >= 0 such as 1e-5")
    again = pickle.loads(pickle.dumps(error))
    assert isinstance(again, PilidError)
    assert (again.key, again.value, again.hint, str(again)) == (
        "lam",
        -1,
        "use a number >= 0 such as 1e-5",
        "lam=-1 is invalid; use a number >= 0 such as 1e-5",
    )


@pytest.mark.parametrize("lever", [lever.name for lever in LEVERS])
def test_a_lever_that_was_not_adopted_is_no_key_of_pilids_configs(lever):
    """The levers measured and not adopted (the studies' `studies._levers.LEVERS`) are no
    parameters of the estimators and no config keys: the command line refuses them as unknown
    keys, a config handed to the runner as a parameter PiLiD does not take, each in one line."""
    from pilid.run import check_composition

    for name in ("pilid", "pilid_lib"):
        with pytest.raises(PilidError) as info:
            check_composition([f"model={name}", f"model.{lever}=null"])
        assert str(info.value).startswith(f"unknown key model.{lever} for model '{name}'")
        with pytest.raises(PilidError) as info:
            check_model_params(name, "regression", _params(name, **{lever: None}))
        message = str(info.value)
        assert message.startswith(f"model.{lever} is not a parameter of ") and "\n" not in message
