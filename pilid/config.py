"""Checks on the command line and the composed config, each failing with one clear line."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from omegaconf import DictConfig

from pilid.errors import PilidError

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
GROUPS = ("data", "model", "experiment")


def group_options(group: str, conf_dir: Path = CONF_DIR) -> list[str]:
    """The options of a config group: the names of the YAML files in conf/<group>/."""
    return sorted(p.stem for p in (conf_dir / group).glob("*.yaml"))


def check_overrides(args: Iterable[str], conf_dir: Path = CONF_DIR) -> None:
    """Reject `data=nosuch`, `model=a,nosuch`, ... before Hydra prints a long error."""
    for arg in args:
        if arg.startswith("-") or "=" not in arg:
            continue
        key, value = arg.split("=", 1)
        key = key.lstrip("+~")
        if key not in GROUPS or value in ("", "null"):
            continue
        value = value.strip()
        for prefix in ("choice(", "range("):
            if value.startswith(prefix) and value.endswith(")"):
                value = value[len(prefix) : -1]
        choices = group_options(key, conf_dir)
        for option in (v.strip().strip("'\"") for v in value.split(",")):
            if option and option not in choices:
                raise PilidError(f"unknown {key} {option!r}; valid choices: {', '.join(choices)}")


def check_config(cfg: DictConfig) -> None:
    """Validate the composed config: trials, gamma and the training settings."""
    trials = cfg.get("trials")
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
        raise PilidError(f"trials={trials!r} is invalid; use a whole number >= 1 (the paper: 20)")
    for gamma in (cfg.get("gamma"), cfg.model.get("gamma") if "model" in cfg else None):
        if gamma is not None:
            _check_gamma(gamma)
    train = cfg.get("train") or {}
    for key in ("epochs", "batch_size"):
        value = train.get(key)
        if value is not None and (not isinstance(value, int) or value < 1):
            raise PilidError(f"train.{key}={value!r} is invalid; use a whole number >= 1")
    lr = train.get("lr")
    if lr is not None and not (isinstance(lr, int | float) and lr > 0):
        raise PilidError(f"train.lr={lr!r} is invalid; use a positive number such as 0.005")


def _check_gamma(gamma) -> None:
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise PilidError(
            f"gamma={gamma!r} is invalid; the number of pieces per feature must be a whole "
            "number >= 1 (gamma=1 is a linear model; the paper uses 1, 5, 10, 15, 20)"
        )
