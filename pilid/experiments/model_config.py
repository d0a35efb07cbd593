"""A model config -> an unfitted estimator, by Hydra's ``_target_``.

Every model, built-in or the user's, is a YAML file of the ``model`` group that names its
estimator class and lists its hyper-parameters as plain keys::

    # one class for whichever task the data set has
    _target_: sklearn.ensemble.HistGradientBoostingClassifier
    max_iter: 200

    # or one class per task (the built-in models: conf/model/*.yaml)
    regressor: {_target_: sklearn.ensemble.RandomForestRegressor}
    classifier: {_target_: sklearn.ensemble.RandomForestClassifier}
    n_estimators: 100

``build_estimator`` picks the class by the data set's task, hands it the hyper-parameters it
takes and builds it with ``hydra.utils.instantiate``. What the hand-written registry did before
is said in the configs, inside a class's block (keys of the block other than these are fixed
constructor arguments of that class, e.g. ``task: regression`` for a class that serves both):

- ``_rename_: {config_key: constructor_key}``: a config name that would collide with a run-level
  setting (``rbf_gamma`` -> scikit-learn's ``gamma``; ``cores`` -> ``n_jobs``);
- ``_null_is_default_: [key, ...]``: a null value leaves the class's own (task-dependent) default;
- ``_input_: dataframe``: the class takes DataFrames only (IGANN, DNAMite): the runner's arrays
  reach it as DataFrames (``pilid.models.frame_input.FrameInput``).

Besides the model's keys the estimator receives, where its constructor takes them: the run's
``train.*`` settings (epochs, batch_size, lr, ...: they reach the neural models only),
``verbose``, ``random_state`` (the trial's seed), ``device`` and ``categorical_features``.

Bad configs stop before anything trains, each with one line naming the key and the fix
(``check_model``): a ``_target_`` that cannot be imported, a class that is not a scikit-learn
estimator, a classifier on a regression data set, a key no class of the model takes, a value its
own ``_parameter_constraints`` refuse.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pilid.errors import PilidError
from pilid.models.params import ParamError, one_line, validate_params
from pilid.schema import CONF_DIR, ESTIMATOR_TRAIN_KEYS
from pilid.tasks import TASKS

__all__ = [
    "ADAPTER_KEYS",
    "MODEL_CLASS_KEYS",
    "TARGET_KEYS",
    "build_estimator",
    "builtin_estimator",
    "builtin_model",
    "check_model",
    "estimator_class",
    "estimator_path",
    "hyper_params",
    "is_batchable",
    "model_targets",
]

#: The keys of a model config that name its class(es) rather than a hyper-parameter.
TARGET_KEYS = ("_target_", "regressor", "classifier")
#: The block (key) of each task in a two-class model config.
TASK_BLOCK = {"regression": "regressor", "classification": "classifier"}
#: Keys of a class's block that say how config keys reach its constructor, and how the class
#: takes its input (``_input_: dataframe``: ``pilid.models.frame_input.FrameInput``;
#: ``_categories_: <argument>``: the constructor argument that takes the categorical columns'
#: positions, for a class without ``categorical_features``): not constructor arguments.
ADAPTER_KEYS = ("_rename_", "_null_is_default_", "_input_", "_categories_")
#: Every key of a model config that is not a hyper-parameter (not hashed for a built-in model
#: while it equals its YAML's, ``pilid.experiments.setting``; not recorded in ``params``).
MODEL_CLASS_KEYS = (*TARGET_KEYS, *ADAPTER_KEYS)
#: Constructor keys that come from top-level settings rather than from ``model.*``: their
#: command-line names.
_TOP_LEVEL_KEYS = {
    "verbose": "verbose",
    "random_state": "seed",
    "device": "device",
    "categorical_features": "categorical_features",
}
#: Examples where the constructor's default is not the config's (scikit-learn n_jobs=None: 1 core).
_EXAMPLES = {"n_jobs": -1}


@lru_cache(maxsize=64)
def _shipped(path: Path, mtime: float) -> dict[str, Any]:
    """The model YAML at ``path`` with its interpolations of the run's top-level values
    (``gamma: ${gamma}``) resolved at ``conf/config.yaml``'s defaults."""
    from omegaconf import OmegaConf

    loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=False) or {}
    loaded = {k: v for k, v in loaded.items() if k != "defaults"}
    top = OmegaConf.to_container(OmegaConf.load(path.parent.parent / "config.yaml"), resolve=False)
    top = {k: v for k, v in top.items() if not isinstance(v, dict | list)}
    root = OmegaConf.create({**top, "model": loaded})
    try:
        return OmegaConf.to_container(root.model, resolve=True)
    except Exception:  # noqa: BLE001 - an interpolation of something else: keep it unresolved
        return loaded


def builtin_model(name: Any, conf_dir: Path = CONF_DIR) -> dict[str, Any] | None:
    """The keys and values of built-in model ``conf/model/<name>.yaml`` (its defaults list
    left out; ``${gamma}`` at the run's default), or None when ``name`` is not a built-in
    model."""
    if not isinstance(name, str) or not re.fullmatch(r"\w+", name):
        return None
    path = Path(conf_dir) / "model" / f"{name}.yaml"
    return dict(_shipped(path, path.stat().st_mtime)) if path.is_file() else None


# -- reading a model config ------------------------------------------------------------------------
def _plain(value):
    """Config containers (OmegaConf lists/dicts included) as plain lists and dicts."""
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_plain(v) for v in value]
    return value


def _where(model: Mapping[str, Any]) -> str:
    name = model.get("name")
    return f"model={name}" if name else "the model config"


def model_targets(model: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{task: block}``: the ``_target_`` block of each task the model config names.

    A config with a top-level ``_target_`` serves both tasks with one class (its block holds the
    ``_target_`` and the adapter keys given beside it); ``regressor``/``classifier`` serve one
    task each. A config that names no class raises ``PilidError``.
    """
    model = _plain(dict(model))
    if "_target_" in model:
        if "regressor" in model or "classifier" in model:
            raise PilidError(
                f"{_where(model)} gives both _target_ and regressor/classifier; keep one: "
                "_target_ (one class) or regressor: {_target_: ...} and classifier: {_target_: ...}"
            )
        block = {"_target_": model["_target_"]}
        block.update({k: model[k] for k in ADAPTER_KEYS if k in model})
        return {task: dict(block) for task in TASKS}
    blocks = {}
    for task, key in TASK_BLOCK.items():
        block = model.get(key)
        if block is None:
            continue
        if not isinstance(block, Mapping) or not isinstance(block.get("_target_"), str):
            raise PilidError(
                f"model.{key} of {_where(model)} must be a block with a _target_, e.g. "
                f"model.{key}={{_target_:sklearn.ensemble.HistGradientBoosting"
                f"{'Regressor' if task == 'regression' else 'Classifier'}}}"
            )
        blocks[task] = dict(block)
    if not blocks:
        raise PilidError(
            f"{_where(model)} names no estimator class; add _target_: <module.Class> to its YAML "
            "(or regressor: {_target_: ...} and classifier: {_target_: ...})"
        )
    return blocks


def hyper_params(model: Mapping[str, Any]) -> dict[str, Any]:
    """The model config's hyper-parameters: every key but ``name``, the class keys and the
    adapter keys."""
    skip = {"name", *TARGET_KEYS, *ADAPTER_KEYS}
    return {k: _plain(v) for k, v in dict(model).items() if k not in skip}


def _target_key(model: Mapping[str, Any], task: str) -> str:
    """The command-line key of the class of ``task``: ``model._target_`` or
    ``model.regressor._target_``."""
    return "model._target_" if "_target_" in model else f"model.{TASK_BLOCK[task]}._target_"


def estimator_path(model: Mapping[str, Any], task: str) -> str:
    """The dotted path of the class the model config names for ``task``."""
    _check_task(task)
    blocks = model_targets(model)
    if task not in blocks:
        other = next(iter(blocks))
        raise PilidError(
            f"{_where(model)} names a class for {other} only ({blocks[other]['_target_']}), but "
            f"the data set is a {task} task; add {TASK_BLOCK[task]}: {{_target_: ...}} to the "
            "model's YAML or pick a data set of that task"
        )
    return str(blocks[task]["_target_"])


@lru_cache(maxsize=128)
def _import(path: str) -> type:
    """``hydra.utils.get_class(path)``, without the multi-line log Hydra writes on a failure
    (the caller says it in one line)."""
    import logging

    from hydra.utils import get_class

    log = logging.getLogger("hydra.utils")
    disabled, log.disabled = log.disabled, True
    try:
        return get_class(path)
    finally:
        log.disabled = disabled


#: The package extra of pilid that installs a peer's package (by its top-level module).
PEER_EXTRAS = {"pytabkit": "peers", "lightgbm": "peers", "aplr": "peers"}


def takes_categories(model: Mapping[str, Any], task: str) -> bool:
    """Whether the model's class for ``task`` takes categorical columns itself (as one column
    of level codes each, told which by ``categorical_features`` or its block's
    ``_categories_``) rather than one-hot."""
    block = model_targets(model)[task]
    return bool(block.get("_categories_")) or "categorical_features" in _accepted(
        estimator_class(model, task)
    )


def estimator_class(model: Mapping[str, Any], task: str) -> type:
    """The class the model config names for ``task``, imported (one line when it cannot be, or
    when it is not a scikit-learn estimator: no ``fit`` or no ``get_params``)."""
    path = estimator_path(model, task)
    key = _target_key(model, task)
    try:
        cls = _import(path)
    except Exception as error:  # ImportError, or Hydra's wrapper of it
        cause = error.__cause__ or error
        reason = one_line(str(cause)) or type(cause).__name__
        package = getattr(cause, "name", None) or ""
        extra = PEER_EXTRAS.get(package.split(".")[0])
        if isinstance(cause, ModuleNotFoundError) and extra is not None:
            raise PilidError(
                f"{key}={path} needs the package {package!r}, which is not installed; install "
                f'the peers with pip install -e ".[{extra}]"'
            ) from None
        raise PilidError(
            f"{key}={path} cannot be imported ({reason}); write the class's full dotted path "
            "(module.Class) and install its package"
        ) from None
    if not inspect.isclass(cls) or not all(
        callable(getattr(cls, name, None)) for name in ("fit", "get_params")
    ):
        raise PilidError(
            f"{key}={path} is not a scikit-learn estimator (it needs fit and get_params); name "
            "an estimator class, or wrap yours in sklearn.base.BaseEstimator"
        )
    return cls


def is_batchable(cls: type) -> bool:
    """Whether ``cls`` trains through ``pilid.models.fitting.fit_batched`` (pilid's neural
    estimators): all trials of a block as one ensemble."""
    from pilid.train.protocol import Trainable

    return inspect.isclass(cls) and issubclass(cls, Trainable)


def _accepted(cls: type) -> set[str]:
    """The keyword arguments ``cls`` takes."""
    names = getattr(cls, "_get_param_names", None)
    if callable(names):
        try:
            return set(names())
        except Exception:  # noqa: BLE001 - a class with *args in __init__: read the signature
            pass
    parameters = inspect.signature(cls.__init__).parameters.values()
    return {p.name for p in parameters if p.name != "self" and p.kind is not p.VAR_POSITIONAL}


def _renamed(values: dict[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(values)
    for source, target in dict(block.get("_rename_") or {}).items():
        if source in out:
            out[target] = out.pop(source)
    return out


# -- building ------------------------------------------------------------------------------------
def build_estimator(
    model: Mapping[str, Any],
    task: str,
    train: Mapping[str, Any] | None = None,
    seed: int | None = None,
    device: str | None = "auto",
    categorical: Iterable[int] | Iterable[bool] | None = None,
    verbose: bool = False,
    shipped: Mapping[str, Any] | None = None,
):
    """The unfitted estimator of ``model`` (a model config) for ``task``, checked.

    ``train`` holds the run's ``train.*`` settings; the keys of it the class takes reach it
    (the neural models). ``shipped``: the values a fix for a bad value suggests (default: the
    model's own YAML in ``conf/model/``, ``builtin_model``: the paper's protocol for
    model=pilid; else the constructor's defaults). Raises ``PilidError`` with one
    line on a bad config (see the module).
    """
    from hydra.utils import instantiate

    cls = estimator_class(model, task)
    block = model_targets(model)[task]
    accepted = _accepted(cls)
    values = _renamed(hyper_params(model), block)
    _check_unknown_keys(model, task, values, accepted)
    null_default = set(block.get("_null_is_default_") or ())
    kwargs = {k: v for k, v in values.items() if not (k in null_default and v is None)}
    kwargs = {k: v for k, v in kwargs.items() if k in accepted}
    fixed = {k: v for k, v in block.items() if k != "_target_" and k not in ADAPTER_KEYS}
    kwargs.update(fixed)
    extra = {k: v for k, v in dict(train or {}).items() if k in ESTIMATOR_TRAIN_KEYS}
    extra["verbose"] = bool(verbose)
    kwargs.update({k: _plain(v) for k, v in extra.items() if k in accepted and k not in kwargs})
    if "random_state" in accepted and seed is not None and "random_state" not in fixed:
        kwargs["random_state"] = int(seed)
    if "device" in accepted and device is not None and "device" not in fixed:
        kwargs["device"] = str(device)
    if "categorical_features" in accepted and "categorical_features" not in fixed:
        kwargs["categorical_features"] = _indices(categorical) or None
    named = block.get("_categories_")
    if named and named not in fixed and _indices(categorical):
        kwargs[str(named)] = _indices(categorical)
    try:
        estimator = instantiate(
            {"_target_": estimator_path(model, task), **kwargs}, _convert_="all"
        )
    except Exception as error:
        cause = error.__cause__ or error
        raise PilidError(
            f"{estimator_path(model, task)} could not be built from {_where(model)}: "
            f"{one_line(str(cause))}; check its keys in the model's YAML"
        ) from None
    _check_kind(model, task, estimator)
    if shipped is None:
        shipped = builtin_model(model.get("name"))
    _check_values(model, estimator, block, shipped)
    if block.get("_input_") == "dataframe":
        from pilid.models.frame_input import FrameInput

        return FrameInput(estimator)
    return estimator


def check_model(
    model: Mapping[str, Any],
    task: str,
    train: Mapping[str, Any] | None = None,
    shipped: Mapping[str, Any] | None = None,
) -> None:
    """Check a model config for ``task`` without training: every class of the model imports and
    is an estimator of the right kind, every key is taken, every value passes the class's own
    checks. Raises ``PilidError`` with one line (see the module)."""
    build_estimator(model, task, train, 0, "cpu", [], shipped=shipped)


def builtin_estimator(
    name: str,
    task: str,
    params: Mapping[str, Any] | None = None,
    seed: int | None = None,
    device: str | None = "cpu",
    categorical: Iterable[int] | Iterable[bool] | None = None,
):
    """The estimator built-in ``model=<name>`` gives with ``params`` (model keys and ``train.*``
    keys together, as a record's ``params`` holds them: a recorded trial's model can be
    rebuilt), the other keys at their ``conf/model/<name>.yaml`` values."""
    shipped = builtin_model(name)
    if shipped is None:
        shipped_names = sorted(p.stem for p in (CONF_DIR / "model").glob("*.yaml"))
        raise PilidError(f"unknown model {name!r}; the built-in ones: {', '.join(shipped_names)}")
    params = dict(params or {})
    train = {k: params.pop(k) for k in list(params) if k in ESTIMATOR_TRAIN_KEYS}
    values = {k: v for k, v in shipped.items() if not (isinstance(v, str) and "${" in v)}
    return build_estimator({**values, **params}, task, train, seed, device, categorical)


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise PilidError(f"task={task!r} is unknown; use 'regression' or 'classification'")


def _check_unknown_keys(model, task, values: Mapping[str, Any], accepted: set[str]) -> None:
    """A model key that no class of the model takes is a typo: one line listing the valid keys.
    A key only the other task's class takes (``epsilon`` of SVR on a classification set) is
    left out quietly."""
    blocks = model_targets(model)
    taken = set(accepted)
    for other, block in blocks.items():
        if other != task:
            try:
                taken |= set(_renamed(dict.fromkeys(_accepted(_import(block["_target_"]))), {}))
            except Exception:  # noqa: BLE001 - the other class is checked on its own task
                continue
    back = {t: s for s, t in dict(blocks[task].get("_rename_") or {}).items()}
    unknown = sorted(k for k in values if k not in taken)
    if unknown:
        key = unknown[0]
        valid = sorted(back.get(k, k) for k in accepted if k not in _TOP_LEVEL_KEYS)
        path = blocks[task]["_target_"]
        raise PilidError(
            f"model.{back.get(key, key)} is not a parameter of {path}; drop it "
            f"(~model.{back.get(key, key)}) or use one of: {', '.join(valid)}"
        )


def _check_kind(model, task: str, estimator) -> None:
    """A classifier on a regression set (or the reverse) stops here, naming both."""
    from sklearn.base import is_classifier, is_regressor

    try:
        wrong = is_classifier(estimator) if task == "regression" else is_regressor(estimator)
    except Exception:  # noqa: BLE001 - an estimator without scikit-learn's tags: trust the config
        return
    if wrong:
        kind = "classifier" if task == "regression" else "regressor"
        path = estimator_path(model, task)
        raise PilidError(
            f"{_target_key(model, task)}={path} is a {kind}, but the data set is a {task} task; "
            f"name a {'regressor' if kind == 'classifier' else 'classifier'}, or give one class "
            "per task: regressor: {_target_: ...} and classifier: {_target_: ...}"
        )


# -- hyper-parameter values ------------------------------------------------------------------------
def _check_values(model: Mapping[str, Any], estimator, block: Mapping[str, Any], shipped) -> None:
    """The built estimator's values against its own checks (``_check_params`` for pilid's
    estimators, ``_parameter_constraints`` for scikit-learn's), as one line in the command
    line's syntax, e.g. ``model.n_estimators=0 is invalid for rf: must be an int in the range
    [1, inf); fix it, e.g. model.n_estimators=100``."""
    name = str(model.get("name") or type(estimator).__name__)
    rename = dict(block.get("_rename_") or {})
    try:
        _validate_estimator(estimator)
    except ParamError as error:
        back = {target: source for source, target in rename.items()}
        key = _cli_key(error.key, back)
        line = f"{key}={_cli_value(error.value)} is invalid for {name}: {one_line(error.hint)}"
        example = _example(estimator, error.key, _examples(shipped, back))
        if example is not None:
            line += f"; fix it, e.g. {key}={_cli_value(example[0])}"
        raise PilidError(line) from None
    except PilidError as error:
        raise PilidError(one_line(str(error))) from None
    except (TypeError, ValueError, OverflowError) as error:  # a value no check foresaw
        raise PilidError(
            f"invalid hyper-parameters for {name}: {one_line(str(error))}; check the model's YAML "
            "and your model.* overrides"
        ) from None


def _examples(shipped: Mapping[str, Any] | None, back: Mapping[str, str]) -> dict[str, Any]:
    """The values a fix suggests, by constructor key: those of the model's own YAML in
    ``conf/model/`` (interpolations left out)."""
    shipped = shipped or {}
    to_ctor = {source: target for target, source in back.items()}
    return {
        to_ctor.get(k, k): v
        for k, v in hyper_params(shipped).items()
        if not (isinstance(v, str) and "${" in v)
    }


def _validate_estimator(estimator) -> None:
    """Raise ``ParamError`` for the first bad hyper-parameter of ``estimator`` (unfitted)."""
    if callable(getattr(estimator, "_check_params", None)):
        estimator._check_params()  # pilid's: the constraints and the checks between parameters
        return
    if not callable(getattr(estimator, "_validate_params", None)) or not isinstance(
        getattr(estimator, "_parameter_constraints", None), dict
    ):
        return  # not an estimator whose values we know how to check: its fit checks them
    validate_params(estimator)
    params = estimator.get_params(deep=False)
    # Checks scikit-learn makes in fit, outside `_parameter_constraints`:
    if params.get("bootstrap") is False and params.get("max_samples") is not None:
        raise ParamError(
            "max_samples",
            params["max_samples"],
            "must be null when bootstrap=false (or set bootstrap=true)",
        )
    n_jobs = params.get("n_jobs")
    if isinstance(n_jobs, int | np.integer) and not isinstance(n_jobs, bool) and n_jobs == 0:
        raise ParamError("n_jobs", n_jobs, "use -1 (all cores) or a whole number >= 1")  # joblib
    if params.get("kernel") == "precomputed":
        raise ParamError("kernel", "precomputed", "the runner passes features, not a kernel matrix")


def _example(estimator, key: str, examples: Mapping[str, Any]) -> tuple[Any] | None:
    """``(value,)``: ``examples[key]`` or the constructor's default for ``key`` when it passes
    the check, else None."""
    from sklearn.base import clone

    try:
        if key in examples:
            default = examples[key]
        else:
            default = type(estimator)().get_params(deep=False)[key]
        if default is None and key in _EXAMPLES:
            default = _EXAMPLES[key]
        trial = clone(estimator).set_params(**{key: default})
        _validate_estimator(trial)
    except ParamError as error:
        if error.key == key:
            return None
    except Exception:  # noqa: BLE001 - no example is better than a wrong one
        return None
    return (default,)


def _cli_key(key: str, back: Mapping[str, str]) -> str:
    """The command-line name of constructor key ``key``: ``train.lr``, ``model.cores``, ``seed``."""
    if key in ESTIMATOR_TRAIN_KEYS:
        return f"train.{key}"
    if key in _TOP_LEVEL_KEYS:
        return _TOP_LEVEL_KEYS[key]
    return f"model.{back.get(key, key)}"


def _cli_value(value) -> str:
    """``value`` as a Hydra override writes it: null, true, [1,2], 0.001, scale, 'two words'."""
    if value is None:
        return "null"
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if re.fullmatch(r"[\w.+\-/:]+", value) else repr(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{_cli_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple | np.ndarray):
        return "[" + ",".join(_cli_value(v) for v in value) + "]"
    if isinstance(value, np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return str(value)


def _indices(categorical: Iterable[int] | Iterable[bool] | None) -> list[int]:
    """Column indices from a list of indices or a boolean mask (as ``Split.categorical``)."""
    if categorical is None:
        return []
    values = np.ravel(np.asarray(list(categorical)))
    if values.dtype == bool:
        return np.flatnonzero(values).tolist()
    return [int(j) for j in values]
