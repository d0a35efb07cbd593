"""Checks on the command line and the composed config, each failing with one clear line.

The schema of a setting is the YAML of its groups: the keys of ``conf/config.yaml`` (top level
and ``train``), of ``conf/model/<model.name>.yaml`` and of ``conf/data/<data.name>.yaml`` plus
the options the dataset's loader takes. ``check_config`` rejects any other key (a typo such as
``+train.epoch=3`` would otherwise run with the defaults under a new setting id), and
``normalize_config`` gives each value the type of its default (``data.N=1e3`` is ``1000``).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

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


# -- schema ------------------------------------------------------------------------------------
SECTIONS = ("model", "data", "train")
_REFERENCE = re.compile(r"^\$\{([\w.]+)\}$")


@lru_cache(maxsize=64)
def _yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    return {k: v for k, v in (loaded or {}).items() if k != "defaults"}


def base_defaults(conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """The top-level keys of ``conf/config.yaml`` with their defaults (``train`` a dict)."""
    return _yaml(Path(conf_dir) / "config.yaml")


def section_defaults(config: Mapping[str, Any], section: str, conf_dir: Path = CONF_DIR):
    """The valid keys of ``model``/``data``/``train`` with their defaults, or None if unknown.

    ``model``: the keys of ``conf/model/<model.name>.yaml``; ``data``: those of
    ``conf/data/<data.name>.yaml`` plus the options of the dataset's loader (with its
    defaults); ``train``: the ``train`` keys of ``conf/config.yaml``.
    """
    base = base_defaults(conf_dir)
    if section == "train":
        return dict(base.get("train") or {})
    node = config.get(section)
    name = node.get("name") if isinstance(node, Mapping) else None
    if not isinstance(name, str):
        return None
    path = Path(conf_dir) / section / f"{name}.yaml"
    if not path.is_file():
        return None
    defaults = dict(_yaml(path))
    if section == "data":
        from pilid.data import DATASETS

        spec = DATASETS.get(name)
        if spec is not None:
            for parameter in inspect.signature(spec.loader).parameters.values():
                if parameter.name != "data_dir":
                    defaults.setdefault(parameter.name, parameter.default)
    for key, value in defaults.items():  # model.gamma: ${gamma} takes the type of gamma
        match = _REFERENCE.match(value) if isinstance(value, str) else None
        if match and match[1] in base:
            defaults[key] = base[match[1]]
    return defaults


def _coerce(value: Any, default: Any) -> Any:
    """``value`` in the type of ``default`` when that loses nothing (1e3 -> 1000, 0 -> 0.0)."""
    if isinstance(value, bool) or isinstance(default, bool):
        return value
    if isinstance(default, int) and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(default, float) and isinstance(value, int):
        return float(value)
    if isinstance(default, list) and isinstance(value, list) and default:
        kinds = {type(d) for d in default}
        if len(kinds) == 1:
            return [_coerce(v, default[0]) for v in value]
    return value


def normalize_config(config: dict[str, Any], conf_dir: Path = CONF_DIR) -> dict[str, Any]:
    """A copy of a resolved config whose values have the types of their defaults.

    ``data.N=1e3`` becomes ``1000`` and ``model.lam=0`` becomes ``0.0``, so that equal settings
    hash to one setting id. A value of another kind (a string for a number, ...) is left as it
    is for the checks to reject.
    """
    out = dict(config)
    base = base_defaults(conf_dir)
    for key, value in config.items():
        if key not in SECTIONS and key in base:
            out[key] = _coerce(value, base[key])
    for section in SECTIONS:
        node = config.get(section)
        defaults = section_defaults(config, section, conf_dir)
        if isinstance(node, Mapping) and defaults:
            out[section] = {k: _coerce(v, defaults.get(k)) for k, v in node.items()}
    return out


def check_keys(config: Mapping[str, Any], conf_dir: Path = CONF_DIR) -> None:
    """Reject keys under ``model``, ``data`` and ``train`` (and at the top) that the schema
    does not have, listing the valid ones."""
    base = base_defaults(conf_dir)
    valid = [k for k in base if k not in ("hydra", "train")] + ["train", "model", "data"]
    unknown = sorted(k for k in config if k not in valid and k not in ("hydra", "experiment"))
    if unknown:
        raise PilidError(
            f"unknown key {unknown[0]!r} at the top level; valid keys: {', '.join(valid)}"
        )
    for section in SECTIONS:
        node = config.get(section)
        defaults = section_defaults(config, section, conf_dir)
        if not isinstance(node, Mapping) or defaults is None:
            continue
        bad = sorted(k for k in node if k not in defaults)
        if bad:
            what = f"{section} {node.get('name')!r}" if section != "train" else "train"
            raise PilidError(
                f"unknown key {section}.{bad[0]} for {what}; valid keys: "
                f"{', '.join(k for k in defaults if k != 'name')} (check the spelling: "
                f"{section}.<key>=<value>)"
            )


def check_config(cfg: DictConfig | Mapping[str, Any]) -> None:
    """Validate the composed config: its keys, trials, seed, gamma and the training settings."""
    if isinstance(cfg, DictConfig):
        cfg = OmegaConf.to_container(cfg, resolve=False)
    cfg = dict(cfg)
    check_keys(cfg)
    cfg = normalize_config(_resolved_enough(cfg))
    trials = cfg.get("trials")
    if not isinstance(trials, int) or isinstance(trials, bool) or trials < 1:
        raise PilidError(f"trials={trials!r} is invalid; use a whole number >= 1 (the paper: 20)")
    seed = cfg.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PilidError(f"seed={seed!r} is invalid; use a whole number >= 0")
    if seed + trials - 1 >= 2**32:
        raise PilidError(
            f"seed={seed} with trials={trials} gives trial seeds up to {seed + trials - 1}, "
            f"past 2**32 - 1; use seed <= {2**32 - trials}"
        )
    results_dir = cfg.get("results_dir")
    if results_dir is None or not str(results_dir).strip():
        raise PilidError(
            f"results_dir={results_dir!r} is empty; set results_dir=<directory>, e.g. "
            "results_dir=results/runs"
        )
    model = cfg.get("model") or {}
    for gamma in (cfg.get("gamma"), model.get("gamma")):
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
    per_batch = train.get("trials_per_batch")
    if per_batch not in (None, "auto") and (
        isinstance(per_batch, bool) or not isinstance(per_batch, int) or per_batch < 1
    ):
        raise PilidError(
            f"train.trials_per_batch={per_batch!r} is invalid; use a whole number >= 1 (trials "
            "trained together as one ensemble) or auto"
        )
    n_jobs = train.get("n_jobs")
    if n_jobs not in (None, "auto") and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1
    ):
        raise PilidError(f"train.n_jobs={n_jobs!r} is invalid; use auto or a whole number >= 1")
    _check_model(cfg)


#: Keys of ``train`` handed to the estimators with the model config (minus ``name``).
TRAIN_PARAM_KEYS = ("epochs", "batch_size", "lr", "optimizer", "patience", "val_fraction")


def model_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The estimator parameters of a resolved config, as recorded in each trial's record: the
    model config minus ``name``, plus the ``train`` keys the estimators take."""
    params = {k: v for k, v in (config.get("model") or {}).items() if k != "name"}
    train = config.get("train") or {}
    params.update({k: train[k] for k in TRAIN_PARAM_KEYS if k in train})
    return params


def _check_model(cfg: Mapping[str, Any]) -> None:
    """Every hyper-parameter of the model, checked without training (one line on a bad one)."""
    model, data = cfg.get("model") or {}, cfg.get("data") or {}
    name = model.get("name")
    task = data.get("task")
    if task is None:
        from pilid.data import DATASETS

        spec = DATASETS.get(str(data.get("name")))
        task = getattr(spec, "task", None)
    if not isinstance(name, str) or task not in ("regression", "classification"):
        return  # the runner reports an unknown model or task when it loads them
    from pilid.models.registry import MODELS, check_model_params

    if name in MODELS:
        check_model_params(name, task, {**model_params(cfg), "verbose": False})


def _resolved_enough(cfg: dict[str, Any]) -> dict[str, Any]:
    """The config with its interpolations resolved where they can be (``${gamma}``, env)."""
    cfg = {k: v for k, v in cfg.items() if k != "hydra"}
    try:
        return OmegaConf.to_container(OmegaConf.create(cfg), resolve=True)
    except Exception:  # an unresolvable key is reported by the runner, naming it
        return cfg


def _check_gamma(gamma) -> None:
    if isinstance(gamma, bool) or not isinstance(gamma, int) or gamma < 1:
        raise PilidError(
            f"gamma={gamma!r} is invalid; the number of pieces per feature must be a whole "
            "number >= 1 (gamma=1 is a linear model; the paper uses 1, 5, 10, 15, 20)"
        )
