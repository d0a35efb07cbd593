"""The estimators, inspection and baselines moved out of `pilid.models` into subpackages (issue
50, item 4) without moving a setting id: a class key that is hashed (a model outside
`MODELS_BEFORE_CLASS_KEYS`, such as ``pilib_lib``, or a user's) is hashed at the class's
recorded path."""

from __future__ import annotations

import importlib

import pytest
from hydra import compose, initialize_config_dir

from pilid.experiments.config import CONF_DIR
from pilid.experiments.setting import MOVED_MODULES, setting_id

#: The setting ids of ``experiment=peers model=pilib_lib``'s records (results/records): PiLiB with
#: the library's defaults was recorded with its class keys hashed, when they read
#: ``pilid.models.pilib.PiLiBRegressor`` / ``PiLiBClassifier``.
PILIB_LIB_IDS = {
    "bank": "e821f93bb5770900",
    "bike": "3f9b822908b89b60",
    "skill": "6a040c74f3512b6b",
    "spambase": "721aa02a6af79d5f",
}


def _compose(*overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


@pytest.mark.parametrize(("data", "recorded"), PILIB_LIB_IDS.items())
def test_pilib_lib_keeps_the_ids_of_its_records(data, recorded):
    config = _compose("experiment=peers", f"data={data}", "model=pilib_lib")
    assert config.model.regressor._target_ == "pilid.estimators.pilib.PiLiBRegressor"
    assert setting_id(config) == recorded


@pytest.mark.parametrize(
    ("new", "old"),
    [
        ("pilid.estimators.pilid.PiLiDRegressor", "pilid.models.pilid.PiLiDRegressor"),
        ("pilid.baselines.gam.GAMRegressor", "pilid.models.gam.GAMRegressor"),
        ("pilid.estimators.MLPRegressor", "pilid.models.estimators.MLPRegressor"),
    ],
)
def test_a_users_model_naming_a_moved_class_keeps_its_id(new, old):
    """A user's model (hashed with its classes) names a class by its new path or its old one:
    one setting. Another class is still another setting."""
    base = ["model=linear", "model.name=mine"]
    by_new = setting_id(_compose(*base, f"model.regressor._target_={new}"))
    by_old = setting_id(_compose(*base, f"model.regressor._target_={old}"))
    other = setting_id(_compose(*base, "model.regressor._target_=pilid.baselines.ga.GARegressor"))
    assert by_new == by_old != other


def test_the_moved_modules_are_the_new_ones_and_the_old_are_gone():
    for new, old in MOVED_MODULES.items():
        importlib.import_module(new)
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
