"""The paper's protocol is pinned in the configs, not inherited from library defaults.

The runner builds our estimators from `conf/model/<name>.yaml` plus `train.*`. A hyper-parameter
that neither sets would silently take the estimator's default, so a later change of a library
default (e.g. a bagging or knot default chosen for the library) would change a paper setting's
numbers without changing its setting id. This test fails when an estimator gains a
hyper-parameter that the configs do not pin. PiLiD's two configs are checked against its one
declaration of each hyper-parameter (`pilid.hyperparameters.PILID`): ``conf/model/pilid.yaml``
holds every ``model`` key at its ``paper`` value, ``pilid_lib.yaml`` at its ``default``.
"""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from pilid.experiments.config import CONF_DIR, TRAIN_PARAM_KEYS, base_defaults
from pilid.experiments.model_config import builtin_estimator
from pilid.hyperparameters import PILID, model_keys

#: Set by the runner for every trial (seed, device, the split's categorical columns, verbosity).
RUNNER_KEYS = {"random_state", "device", "categorical_features", "verbose"}
#: Config keys renamed for the constructor (`_rename_` in conf/model/*.yaml).
RENAMED = {"n_jobs": "cores"}
#: Constructor parameters deliberately left at their default, each with the reason.
#: The runner's data arrive one-hot encoded (`pilid.data.make_split`: a 0/1 column per level,
#: never more than 2 levels), which both values of ``deep_categorical`` feed to the deep part
#: alike (tests/test_deep_categorical.py checks that the predictions are equal).
INERT_IN_THE_RUNNER = {"deep_categorical": "inert on the runner's one-hot matrices"}
#: PiLiD's: those its declaration leaves to no config (``where="none"``, the reason in ``doc``).
PILID_UNSET = {p.name: p.doc for p in PILID if p.where == "none"}
EXEMPT = {
    "ga": {"teacher": "None = the paper's MLP built from the config's own MLP keys"},
    "mlp": INERT_IN_THE_RUNNER,
    **{name: PILID_UNSET for name in ("pilid", "pilid_lib")},
}
CLASS_KEYS = ("name", "defaults", "regressor", "classifier")
OURS = ["pilid", "pilid_lib", "mlp", "pilib", "pilib_lib", "nit", "ga"]


def _yaml(name):
    """The model's keys and values (its defaults list, which names the schema, left out)."""
    config = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "model" / f"{name}.yaml"))
    config.pop("defaults", None)
    return config


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("name", OURS)
def test_every_hyper_parameter_of_our_estimators_is_in_the_configs(name, task):
    config = _yaml(name)
    params = {k: v for k, v in config.items() if k != "name"}
    if params.get("gamma") == "${gamma}":
        params["gamma"] = base_defaults()["gamma"]
    train = base_defaults()["train"]
    params.update({k: train[k] for k in TRAIN_PARAM_KEYS})
    estimator = builtin_estimator(name, task, params, 0, "cpu", [])
    pinned = set(config) | set(TRAIN_PARAM_KEYS) | RUNNER_KEYS
    unpinned = {
        key
        for key in estimator.get_params(deep=False)
        if key not in pinned and RENAMED.get(key) not in pinned and key not in EXEMPT.get(name, {})
    }
    assert not unpinned, (
        f"{type(estimator).__name__} has hyper-parameter(s) {sorted(unpinned)} that "
        f"conf/model/{name}.yaml does not pin: add them there with the paper's value"
    )


def test_train_settings_pin_the_papers_optimiser():
    train = base_defaults()["train"]
    assert train["optimizer"] == "adam" and train["lr"] == 0.005  # Section 4: Adam, lr 0.005
    for name in ("pilid", "mlp"):
        assert _yaml(name)["hidden_layers"] == [100, 200, 400, 400, 200, 100]
    assert _yaml("pilid")["knots"] == "uniform" and _yaml("pilid")["init"] == "lstsq"


def _plain(values: dict) -> dict:
    """Values as a YAML file holds them (a tuple as a list)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def test_the_paper_config_holds_every_declared_model_key_at_its_paper_value():
    """conf/model/pilid.yaml is the paper's protocol: its keys are the ``model`` keys of
    `pilid.hyperparameters.PILID`, each at its ``paper`` value (``${gamma}``: the run's gamma, 5
    in Section 4), and conf/config.yaml's ``train`` block holds the ``train`` keys' values."""
    config = {k: v for k, v in _yaml("pilid").items() if k not in CLASS_KEYS}
    config["gamma"] = base_defaults()["gamma"]
    assert config == _plain({p.name: p.paper for p in model_keys(PILID)})
    train = base_defaults()["train"]
    assert {p.name: p.paper for p in PILID if p.where == "train"} == {
        k: train[k] for k in TRAIN_PARAM_KEYS
    }


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_the_library_defaults_row_pins_the_estimators_current_defaults(task):
    """conf/model/pilid_lib.yaml (Table 3's "PiLiD (library defaults)") holds every ``model`` key
    of `pilid.hyperparameters.PILID` at its ``default``, the constructor's: change a library
    default and this fails until the config (and with it the row's setting id) follows, so the
    row never mixes records of two different defaults."""
    from pilid.estimators.pilid import LIBRARY_DEFAULTS, PiLiDClassifier, PiLiDRegressor

    config = {k: v for k, v in _yaml("pilid_lib").items() if k not in CLASS_KEYS}
    assert config == _plain({p.name: p.default for p in model_keys(PILID)})
    cls = PiLiDRegressor if task == "regression" else PiLiDClassifier
    plain = _plain(cls().get_params(deep=False))
    assert {k: plain[k] for k in config} == config
    train = base_defaults()["train"]
    assert {k: plain[k] for k in TRAIN_PARAM_KEYS} == {k: train[k] for k in TRAIN_PARAM_KEYS}
    assert set(LIBRARY_DEFAULTS) <= set(config)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_the_pilib_library_defaults_row_pins_the_constructors_defaults(task):
    """conf/model/pilib_lib.yaml (Table 3+'s "PiLiB (library defaults)") holds every default of
    PiLiB's constructor, train.* included: a changed default fails here until the config (and
    with it the row's setting id) follows."""
    from pilid.estimators.pilib import PiLiBClassifier, PiLiBRegressor

    cls = PiLiBRegressor if task == "regression" else PiLiBClassifier
    defaults = cls().get_params(deep=False)
    skip = ("name", "defaults", "regressor", "classifier")
    config = {k: v for k, v in _yaml("pilib_lib").items() if k not in skip}
    plain = {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()}
    assert {k: plain[k] for k in config} == config
    train = base_defaults()["train"]
    assert {k: plain[k] for k in TRAIN_PARAM_KEYS} == {k: train[k] for k in TRAIN_PARAM_KEYS}
    assert set(plain) - set(config) - set(TRAIN_PARAM_KEYS) == RUNNER_KEYS


def test_paper_protocol_constant_equals_the_paper_config():
    """`PAPER_PROTOCOL` and `LIBRARY_DEFAULTS` are the declared values of the ``model`` keys where
    the library's default is not the paper's, and pilid.yaml / pilid_lib.yaml hold them."""
    from pilid.estimators.pilid import LIBRARY_DEFAULTS, PAPER_PROTOCOL

    differ = [p for p in model_keys(PILID) if _plain({0: p.default}) != _plain({0: p.paper})]
    assert list(PAPER_PROTOCOL) == list(LIBRARY_DEFAULTS) == [p.name for p in differ]
    assert PAPER_PROTOCOL == {p.name: p.paper for p in differ}
    assert LIBRARY_DEFAULTS == {p.name: p.default for p in differ}
    config = _yaml("pilid")
    config["gamma"] = base_defaults()["gamma"]  # ${gamma}: the run's gamma, 5 in Section 4
    assert {k: config[k] for k in PAPER_PROTOCOL} == _plain(PAPER_PROTOCOL)
    assert {k: _yaml("pilid_lib")[k] for k in LIBRARY_DEFAULTS} == _plain(LIBRARY_DEFAULTS)
