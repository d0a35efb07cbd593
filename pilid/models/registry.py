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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pilid.errors import PilidError

__all__ = ["ModelSpec", "MODELS", "TASKS", "get_model", "make_estimator", "predict_scores", "score"]

TASKS = ("regression", "classification")
METRICS = {"mse": "mse", "auc": "auc", "roc_auc": "auc"}


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


def _builder(load: Callable[[], tuple[type, type]], **options) -> Callable[..., Any]:
    """A `build` function: `load()` returns (regressor class, classifier class), imported late."""

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
        return make_estimator(cls, params, seed, device, categorical, **options)

    return build


def _estimators(regressor: str, classifier: str, module: str = "pilid.models.estimators"):
    def load() -> tuple[type, type]:
        import importlib

        mod = importlib.import_module(module)
        return getattr(mod, regressor), getattr(mod, classifier)

    return load


def _svm():
    from sklearn.svm import SVR

    from pilid.models.baselines import SVMClassifier

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
            _builder(_estimators("PiLiDRegressor", "PiLiDClassifier")),
            batchable=True,
            label="PiLiD",
        ),
        ModelSpec(
            "mlp",
            _builder(_estimators("MLPRegressor", "MLPClassifier")),
            batchable=True,
            label="MLP",
        ),
        ModelSpec(
            "pilib",
            _builder(_estimators("PiLiBRegressor", "PiLiBClassifier", "pilid.models.pilib")),
            batchable=True,
            label="PiLiB",
        ),
        ModelSpec(
            "nit",
            _builder(_estimators("NITRegressor", "NITClassifier", "pilid.models.nit")),
            batchable=True,
            label="NIT",
        ),
        ModelSpec(
            "svm",
            _builder(_svm, rename={"rbf_gamma": "gamma"}, foreign=("gamma",)),
            label="SVM (rbf kernel)",
        ),
        ModelSpec(
            "rf",
            _builder(_rf, rename=_CORES, default_if_none=("max_features", "criterion")),
            label="Random Forest",
        ),
        ModelSpec(
            "linear",
            _builder(_linear),
            label="Linear Regression",
            classification_label="Logistic Regression",
        ),
        ModelSpec(
            "gam",
            _builder(_estimators("GAMRegressor", "GAMClassifier", "pilid.models.baselines")),
            label="GAM",
        ),
        ModelSpec(
            "ga2m",
            _builder(
                _estimators("GA2MRegressor", "GA2MClassifier", "pilid.models.baselines"),
                rename=_CORES,
            ),
            label="GA2M",
        ),
        ModelSpec(
            "ga",
            _builder(
                _estimators("GARegressor", "GAClassifier", "pilid.models.baselines"),
                rename=_CORES,
            ),
            label="GA",
        ),
    )
}


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
