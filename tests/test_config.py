"""The Hydra config: every group option composes, bad values fail with one line, devices resolve."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pilid.device import resolve_device
from pilid.errors import PilidError
from pilid.experiments.config import (
    CONF_DIR,
    check_config,
    check_overrides,
    composition_error,
    group_options,
)


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def test_groups_have_the_paper_options():
    assert {"synthetic", "bike", "bank", "spambase", "skill"} <= set(group_options("data"))
    expected_models = {"pilid", "pilib", "mlp", "nit", "ga", "gam", "ga2m", "svm", "rf", "linear"}
    assert expected_models <= set(group_options("model"))


#: The values data=table leaves for the command line (``???`` in conf/data/table.yaml).
TABLE_VALUES = ["data.path=t.csv", "data.target=y", "data.task=classification"]


@pytest.mark.slow
@pytest.mark.parametrize("group", ["data", "model"])
def test_every_group_option_composes(group):
    for option in group_options(group):
        given = TABLE_VALUES if (group, option) == ("data", "table") else []
        cfg = _compose([f"{group}={option}", *given])
        OmegaConf.resolve(cfg)
        assert cfg[group].name == option
        target = OmegaConf.select(cfg, f"{group}.regressor._target_") or ""
        package = target.split(".")[0]
        if package and importlib.util.find_spec(package) is None:  # an optional peer's extra
            with pytest.raises(PilidError, match=f"needs the package '{package}'.*pip install -e"):
                check_config(cfg)
            continue
        check_config(cfg)


@pytest.mark.slow
def test_every_experiment_composes():
    for option in group_options("experiment"):
        cfg = _compose([f"experiment={option}"])
        check_config(cfg)
        assert cfg.experiment_name != "adhoc", option


def test_default_config_values():
    cfg = _compose([])
    assert cfg.trials == 20
    assert cfg.device == "auto"
    assert cfg.results_dir == "results/runs"
    assert cfg.data.name == "synthetic" and cfg.model.name == "pilid"
    assert set(cfg.train) >= {"epochs", "batch_size", "lr", "optimizer"}


def test_gamma_shortcut_reaches_the_model():
    cfg = _compose(["gamma=15"])
    assert cfg.model.gamma == 15


def test_data_dir_default_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PILID_DATA_DIR", str(tmp_path))
    assert _compose([]).data_dir == str(tmp_path)
    monkeypatch.delenv("PILID_DATA_DIR")
    assert _compose([]).data_dir == "~/.cache/pilid"


@pytest.mark.slow
@pytest.mark.parametrize(
    "overrides, fragment",
    [
        (["gamma=0"], "gamma=0"),
        (["gamma=-3"], "gamma=-3"),
        (["gamma=2.5"], "gamma=2.5"),
        (["model=linear", "gamma=0"], "gamma=0"),
        (["trials=0"], "trials=0"),
        (["train.epochs=-1"], "train.epochs=-1"),  # 0 is valid: the least-squares start
        (["train.lr=-1"], "train.lr=-1"),
    ],
)
def test_bad_values_fail_with_one_line(overrides, fragment):
    """A wrongly typed value (gamma=2.5) is refused by Hydra's typed config when it composes,
    a value out of range (gamma=0) by check_config: either way one line naming the value."""
    try:
        cfg = _compose(overrides)
    except Exception as error:
        message = str(composition_error(error, overrides))
    else:
        with pytest.raises(PilidError) as info:
            check_config(cfg)
        message = str(info.value)
    assert fragment in message and "\n" not in message


@pytest.mark.parametrize(
    "args, bad",
    [
        (["data=nosuch"], "nosuch"),
        (["model=pilid,nosuch"], "nosuch"),
        (["-m", "data=bike,zzz"], "zzz"),
    ],
)
def test_unknown_group_option_lists_the_choices(args, bad):
    with pytest.raises(PilidError) as info:
        check_overrides(args)
    message = str(info.value)
    assert bad in message
    assert "valid choices" in message and ("synthetic" in message or "pilid" in message)
    assert "\n" not in message


def test_known_overrides_pass():
    check_overrides(["data=bike,skill", "model=pilid", "gamma=5", "train.epochs=3", "-m"])


def test_resolve_device():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device(None).type == expected
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(PilidError, match="unknown device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(PilidError, match="no.*CUDA|CUDA.*none"):
            resolve_device("cuda")
