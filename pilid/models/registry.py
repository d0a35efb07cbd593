"""The model registry: one `ModelSpec` per Hydra `model=` name, so the runner treats all alike.

The runner builds an unfitted estimator with `MODELS[name].build(task, params, seed, device,
categorical)`, fits it on a trial's training split, turns the test split into scores with
`predict_scores` and reduces them to the paper's metric with `score` (MSE for regression, AUC
for classification, both on the whole test split).

`params` is the model config minus `name`, merged with the run's `train.*` settings. Keys the
chosen estimator does not take are dropped, so `train.epochs` only reaches the neural models.
Two config keys are renamed because their natural names collide with run-level settings:
`rbf_gamma` (svm) becomes scikit-learn's `gamma` (the run's `gamma` is PiLiD's number of pieces
and never reaches the SVM), and `cores` (rf, ga2m, ga) becomes `n_jobs`, the cores one fit uses
(`train.n_jobs` is the number of trials run in parallel).

`check_model_params(name, task, params)` checks every hyper-parameter of a setting without
training (a sweep can check all its settings before the first one trains); `build` runs the same
check, so a bad value stops with one line in the command line's syntax
(``model.n_estimators=0 is invalid for rf: ...``), never with a library traceback at fit time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pilid.errors import PilidError
from pilid.models.params import ParamError, one_line, validate_params
from pilid.schema import ESTIMATOR_TRAIN_KEYS
from pilid.tasks import METRIC_LABELS, TASKS

__all__ = [
    "ModelSpec",
    "MODELS",
    "TASKS",
    "check_estimator_params",
    "check_model_params",
    "get_model",
    "make_estimator",
    "predict_scores",
    "score",
]

#: The metric names `score` takes (those of `pilid.tasks.METRIC_LABELS`, plus an alias).
METRICS = {**{name: name for name in METRIC_LABELS}, "roc_auc": "auc"}


@dataclass(frozen=True)
class ModelSpec:
    """A model the runner can train: `build(task, params, seed, device, categorical)`.

    `batchable`: the estimator can be trained through `pilid.train.fit_batched` (all trials of a
    setting as one ensemble). `label`: the model's row name in the paper's tables
    (`classification_label` where it differs for classification); see `label_for`.
    """

    name: str
    build: Callable[..., Any]
    batchable: bool = False
    label: str = ""
    classification_label: str = ""

    def label_for(self, task: str) -> str:
        """The paper's row name for this model on `task` (the registry name if none is set)."""
        if task == "classification" and self.classification_label:
            return self.classification_label
        return self.label or self.name


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise PilidError(f"task={task!r} is unknown; use 'regression' or 'classification'")


def _plain(value):
    """Config containers (OmegaConf lists/dicts included) as plain lists and dicts."""
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_plain(v) for v in value]
    return value


def make_estimator(
    cls: type,
    params: Mapping[str, Any] | None,
    seed: int | None = None,
    device: str | None = None,
    categorical: Iterable[int] | None = None,
    *,
    rename: Mapping[str, str] | None = None,
    foreign: Iterable[str] = (),
    default_if_none: Iterable[str] = (),
):
    """Instantiate `cls` from config values, keeping only the keys `cls` accepts.

    `foreign` keys are dropped first (they belong to another model), then `rename` maps config
    names to constructor names; keys in `default_if_none` whose value is None are left out so
    that the estimator's own (task-dependent) default applies. `random_state=seed`, `device`
    and `categorical_features` are set when the constructor takes them.
    """
    accepted = set(cls._get_param_names())
    values = {k: v for k, v in dict(params or {}).items() if k not in set(foreign)}
    for source, target in (rename or {}).items():
        if source in values:
            values[target] = values.pop(source)
    skip = set(default_if_none)
    kwargs = {
        k: _plain(v) for k, v in values.items() if k in accepted and not (k in skip and v is None)
    }
    if "random_state" in accepted and seed is not None:
        kwargs["random_state"] = int(seed)
    if "device" in accepted and device is not None:
        kwargs["device"] = str(device)
    if "categorical_features" in accepted:
        kwargs["categorical_features"] = _indices(categorical) or None
    return cls(**kwargs)


def _indices(categorical: Iterable[int] | Iterable[bool] | None) -> list[int]:
    """Column indices from a list of indices or a boolean mask (as `Split.categorical`)."""
    if categorical is None:
        return []
    values = np.ravel(np.asarray(list(categorical)))
    if values.dtype == bool:
        return np.flatnonzero(values).tolist()
    return [int(j) for j in values]


def _builder(
    name: str,
    load: Callable[[], tuple[type, type]],
    examples: Callable[[], Mapping[str, Any]] | None = None,
    **options,
) -> Callable[..., Any]:
    """A `build` function: `load()` returns (regressor class, classifier class), imported late.

    With the model's registry `name`, the built estimator's hyper-parameters are checked
    (`check_estimator_params`), so a bad value stops at build time with one line in the
    command line's syntax instead of a traceback at fit time. `examples()` gives the values
    the message suggests where this model's config departs from the constructor's defaults
    (model=pilid: the paper's protocol, not the library's defaults).
    """

    def build(
        task: str,
        params: Mapping[str, Any] | None = None,
        seed: int | None = None,
        device: str | None = "auto",
        categorical: Iterable[int] | None = None,
    ):
        _check_task(task)
        regressor, classifier = load()
        cls = regressor if task == "regression" else classifier
        estimator = make_estimator(cls, params, seed, device, categorical, **options)
        if name:
            suggested = examples() if examples is not None else None
            check_estimator_params(name, estimator, options.get("rename"), suggested)
        return estimator

    build.checks_params = bool(name)
    return build


def _pilid():
    from pilid.models.pilid import PiLiDClassifier, PiLiDRegressor

    return PiLiDRegressor, PiLiDClassifier


def _paper_protocol() -> Mapping[str, Any]:
    from pilid.models.pilid import PAPER_PROTOCOL

    return PAPER_PROTOCOL


def _mlp():
    from pilid.models.pilid import MLPClassifier, MLPRegressor

    return MLPRegressor, MLPClassifier


def _pilib():
    from pilid.models.pilib import PiLiBClassifier, PiLiBRegressor

    return PiLiBRegressor, PiLiBClassifier


def _nit():
    from pilid.models.nit import NITClassifier, NITRegressor

    return NITRegressor, NITClassifier


def _gam():
    from pilid.models.gam import GAMClassifier, GAMRegressor

    return GAMRegressor, GAMClassifier


def _ga2m():
    from pilid.models.ga2m import GA2MClassifier, GA2MRegressor

    return GA2MRegressor, GA2MClassifier


def _ga():
    from pilid.models.ga import GAClassifier, GARegressor

    return GARegressor, GAClassifier


def _svm():
    from sklearn.svm import SVR

    from pilid.models.svm import SVMClassifier

    return SVR, SVMClassifier


def _rf():
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    return RandomForestRegressor, RandomForestClassifier


def _linear():
    from sklearn.linear_model import LinearRegression, LogisticRegression

    return LinearRegression, LogisticRegression


_CORES = {"cores": "n_jobs"}

MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            "pilid",
            _builder("pilid", _pilid, examples=_paper_protocol),
            batchable=True,
            label="PiLiD",
        ),
        ModelSpec(
            "pilid_lib",
            _builder("pilid_lib", _pilid),
            batchable=True,
            label="PiLiD (library defaults)",  # not in the paper: issue 14's row
        ),
        ModelSpec(
            "mlp",
            _builder("mlp", _mlp),
            batchable=True,
            label="MLP",
        ),
        ModelSpec(
            "pilib",
            _builder("pilib", _pilib),
            batchable=True,
            label="PiLiB",
        ),
        ModelSpec(
            "nit",
            _builder("nit", _nit),
            batchable=True,
            label="NIT",
        ),
        ModelSpec(
            "svm",
            _builder("svm", _svm, rename={"rbf_gamma": "gamma"}, foreign=("gamma",)),
            label="SVM (rbf kernel)",
        ),
        ModelSpec(
            "rf",
            _builder("rf", _rf, rename=_CORES, default_if_none=("max_features", "criterion")),
            label="Random Forest",
        ),
        ModelSpec(
            "linear",
            _builder("linear", _linear),
            label="Linear Regression",
            classification_label="Logistic Regression",
        ),
        ModelSpec(
            "gam",
            _builder("gam", _gam),
            label="GAM",
        ),
        ModelSpec(
            "ga2m",
            _builder("ga2m", _ga2m, rename=_CORES),
            label="GA2M",
        ),
        ModelSpec(
            "ebm",
            _builder("ebm", _ga2m, rename=_CORES),
            label="EBM (InterpretML defaults)",  # not in the paper: the stronger EBM of issue 14
        ),
        ModelSpec(
            "ga",
            _builder("ga", _ga, rename=_CORES),
            label="GA",
        ),
    )
}


#: `train.*` keys the runner merges into `params` (the neural estimators' training parameters).
TRAIN_KEYS = ESTIMATOR_TRAIN_KEYS
#: Constructor keys that come from top-level settings rather than from `model.*`.
_TOP_LEVEL_KEYS = {
    "verbose": "verbose",
    "random_state": "seed",
    "device": "device",
    "categorical_features": "categorical_features",
}
#: Examples where the constructor's default is not the config's (scikit-learn n_jobs=None: 1 core).
_EXAMPLES = {"n_jobs": -1}


def check_model_params(name: str, task: str, params: Mapping[str, Any]) -> None:
    """Check every hyper-parameter of model `name` for `task` without training anything.

    `params` is what the runner hands to `ModelSpec.build`: the model config minus `name`,
    merged with the `train.*` settings (epochs, batch_size, lr, optimizer, patience,
    val_fraction) and `verbose`. The estimator is built as the runner builds it and its values
    are checked against its `_parameter_constraints` by scikit-learn's `_validate_params()`
    (`pilid.models.params.validate_params`), plus the checks between parameters: ours in each
    estimator's `_check_params` (e.g. GAM's n_splines > spline_order, the device), those
    scikit-learn's own estimators (svm, rf, linear) make in `fit` here. A bad value raises
    `PilidError` with one line in the command line's syntax, e.g. ``model.n_estimators=0 is
    invalid for rf: must be an int in the range [1, inf); fix it, e.g. model.n_estimators=100``
    (renamed keys by their config names, `model.rbf_gamma`, `model.cores`; training keys as
    `train.<key>`). Unknown `name` or `task` raise `PilidError` too. Takes well under a
    millisecond once the estimator's module is imported.
    """
    spec = get_model(name)
    _check_task(task)
    estimator = spec.build(task, dict(params or {}), 0, "cpu", [])
    if not getattr(spec.build, "checks_params", False):  # a spec registered from outside
        check_estimator_params(name, estimator)


def check_estimator_params(
    name: str,
    estimator,
    rename: Mapping[str, str] | None = None,
    examples: Mapping[str, Any] | None = None,
) -> None:
    """Check the hyper-parameters of a built, unfitted `estimator` of registry model `name`.

    `rename` maps config keys to constructor keys (as in `make_estimator`); the error message
    names the config key and suggests a valid value: `examples[key]`, else the constructor's
    default. See `check_model_params`.
    """
    try:
        _validate_estimator(estimator)
    except ParamError as error:
        back = {target: source for source, target in (rename or {}).items()}
        key = _cli_key(error.key, back)
        line = f"{key}={_cli_value(error.value)} is invalid for {name}: {one_line(error.hint)}"
        example = _example(estimator, error.key, examples or {})
        if example is not None:
            line += f"; fix it, e.g. {key}={_cli_value(example[0])}"
        raise PilidError(line) from None
    except PilidError as error:
        raise PilidError(one_line(str(error))) from None
    except (TypeError, ValueError, OverflowError) as error:  # a value no check foresaw
        raise PilidError(
            f"invalid hyper-parameters for {name}: {one_line(str(error))}; check conf/model/"
            f"{name}.yaml and your model.* overrides"
        ) from None


def _validate_estimator(estimator) -> None:
    """Raise `ParamError` for the first bad hyper-parameter of `estimator` (unfitted)."""
    if callable(getattr(estimator, "_check_params", None)):
        estimator._check_params()  # ours: the constraints and the checks between parameters
        return
    if not callable(getattr(estimator, "_validate_params", None)):
        return  # not an estimator we know how to check
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
    """`(value,)`: `examples[key]` or the constructor's default for `key` when it passes the
    check, else None."""
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
    except Exception:
        return None
    return (default,)


def _cli_key(key: str, back: Mapping[str, str]) -> str:
    """The command-line name of constructor key `key` (`train.lr`, `model.cores`, `seed`)."""
    if key in TRAIN_KEYS:
        return f"train.{key}"
    if key in _TOP_LEVEL_KEYS:
        return _TOP_LEVEL_KEYS[key]
    return f"model.{back.get(key, key)}"


def _cli_value(value) -> str:
    """`value` as a Hydra override writes it: null, true, [1,2], 0.001, scale, 'two words'."""
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


def get_model(name: str) -> ModelSpec:
    """The registry entry for a Hydra `model=` name."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise PilidError(
            f"unknown model {name!r}; valid names: {', '.join(sorted(MODELS))}"
        ) from None


def predict_scores(estimator, X, task: str) -> np.ndarray:
    """Test-split scores, shape (n,): the prediction (regression) or a positive-class score.

    For classification the score is `decision_function` when the estimator has one (a logit or
    margin: no ties from probabilities rounded to 0 or 1), else `predict_proba[:, 1]`, the
    column of `classes_[1]`. AUC depends only on the order of the scores, so both give the AUC
    of the model.
    """
    _check_task(task)
    if task == "regression":
        scores = estimator.predict(X)
    elif hasattr(estimator, "decision_function"):
        scores = estimator.decision_function(X)
    elif hasattr(estimator, "predict_proba"):
        scores = np.asarray(estimator.predict_proba(X))[:, 1]
    else:
        raise PilidError(
            f"{type(estimator).__name__} has neither decision_function nor predict_proba; "
            "a classifier needs one of them to be scored by AUC"
        )
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim != 1:
        raise PilidError(
            f"{type(estimator).__name__} returned scores of shape {scores.shape}; "
            "a binary classifier or regressor must return one score per row"
        )
    return scores


def score(metric: str, y_true, scores) -> float:
    """The paper's metric on a whole test split: `mse` = mean((y - s)^2); `auc`/`roc_auc` = ROC AUC.

    AUC is the probability that a random positive scores above a random negative (ties count
    one half), computed once over all test rows, not averaged over mini-batches.
    """
    name = METRICS.get(str(metric).lower())
    if name is None:
        raise PilidError(f"unknown metric {metric!r}; use 'mse' or 'auc' (alias 'roc_auc')")
    y = np.asarray(y_true).ravel()
    s = np.asarray(scores, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise PilidError(
            f"y_true has {y.size} values but scores has {s.size}; score the same test rows"
        )
    if y.size == 0:
        raise PilidError("the test split is empty; use a larger dataset or test_size")
    if not np.all(np.isfinite(s)):
        raise PilidError(
            f"{np.count_nonzero(~np.isfinite(s))} of {s.size} scores are not finite; the model "
            "diverged: lower train.lr or raise the regularisation"
        )
    if name == "mse":
        return float(np.mean((y.astype(np.float64) - s) ** 2))
    from sklearn.metrics import roc_auc_score

    if np.unique(y).size != 2:
        raise PilidError(
            f"AUC needs both classes in the test split; y_true has {np.unique(y).size} class(es): "
            "use a stratified split or more test rows"
        )
    return float(roc_auc_score(y, s))
