"""scikit-learn estimators over the PiLiD ensemble module: PiLiD and its deep-only MLP baseline.

`PiLiDRegressor` / `PiLiDClassifier` implement the model of Section 3 of Guo et al., IJCAI 2020
(Eq. 9-11, Algorithm 1): a piecewise-linear additive component on Phi (Definitions 1-2) plus an
MLP, trained jointly. `MLPRegressor` / `MLPClassifier` are the same MLP and training without
the additive component (the paper's MLP baseline). All four share `NeuralEstimator`, which
PiLiB and NIT subclass (see its docstring and CONTRIBUTING.md, "Neural estimator protocol").

Training of several estimators at once (one per trial) goes through `fit_batched`; `fit` is
`fit_batched([self], [X], [y])`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from pilid.device import resolve_device
from pilid.errors import PilidError
from pilid.models.additive import AdditiveEnsemble, lstsq_init
from pilid.models.mlp import EnsembleMLP, check_hidden_layers
from pilid.models.params import ParamError, check_bool
from pilid.models.piecewise import (
    KNOT_METHODS,
    Knots,
    compact_layout,
    fit_knots,
    phi_compact,
    phi_dense,
    piece_values,
)
from pilid.models.pilid import PiLiDEnsemble
from pilid.train.trainer import (
    STREAM_ADDITIVE,
    STREAM_SPLIT,
    EnsembleData,
    Phase,
    TrainConfig,
    train_ensemble,
    trial_generator,
)

PAPER_HIDDEN_LAYERS = (100, 200, 400, 400, 200, 100)
INITS = ("lstsq", "gaussian")
REGS = ("l1", "l2")
REG_GROUPS = ("all", "additive", "deep", "w", "b", "omega")
_PREDICT_CHUNK = 8192


@dataclass
class _Prepared:
    """One trial's data, ready to stack: encoded X, target, split, scaling and knots."""

    X: np.ndarray
    target: np.ndarray
    train_idx: np.ndarray
    val_idx: np.ndarray
    seed: int
    x_mean: np.ndarray
    x_scale: np.ndarray
    knots: Knots | None


def _is_categorical_dtype(dtype) -> bool:
    return isinstance(dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(dtype)


_TEMPORAL_FIX = {
    "datetime": "days since a date, or year/month/day columns",
    "timedelta": "X[{col}].dt.total_seconds()",
    "period": "X[{col}].dt.year, or days since a date",
}
_INFERRED_TEMPORAL = {
    "datetime64": "datetime",
    "datetime": "datetime",
    "date": "datetime",
    "timedelta64": "timedelta",
    "timedelta": "timedelta",
    "period": "period",
}


def _temporal_kind(X: pd.DataFrame, j: int) -> str | None:
    """'datetime', 'timedelta' or 'period' when column j holds dates or durations, else None."""
    dtype = X.dtypes.iloc[j]
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "timedelta"
    if isinstance(dtype, pd.PeriodDtype):
        return "period"
    if pd.api.types.is_object_dtype(dtype):  # e.g. datetime.date objects
        return _INFERRED_TEMPORAL.get(pd.api.types.infer_dtype(X.iloc[:, j], skipna=True))
    return None


def _check_frame(X: pd.DataFrame) -> None:
    """Reject what a DataFrame may hold but the estimators cannot use: duplicate column names
    (which column would a shape belong to?) and dates or durations (one category per date)."""
    columns = pd.Index(X.columns)
    if columns.has_duplicates:
        dup = columns[columns.duplicated()].unique()
        counts = ", ".join(f"{c!r} ({int((columns == c).sum())} times)" for c in dup)
        raise PilidError(
            f"X has duplicate column names: {counts}; give every column a unique name (or drop "
            "the copies) before calling the estimator"
        )
    for j, name in enumerate(columns):
        kind = _temporal_kind(X, j)
        if kind is not None:
            fix = _TEMPORAL_FIX[kind].format(col=repr(name))
            raise PilidError(
                f"column {name!r} has {kind} dtype; convert it to numbers (e.g. {fix}) before fit"
            )


class NeuralEstimator(BaseEstimator):
    """Base of the neural estimators (PiLiD, MLP, PiLiB, NIT): data handling and training.

    Protocol for subclasses (the hooks, with shapes; T = number of trials trained together):

    * ``_task``: "regression" or "classification" (class attribute).
    * ``_has_additive``: False drops the piecewise-linear component (MLP, NIT).
    * ``_build_deep(n_features, seeds) -> nn.Module | None``: the deep component for
      T = len(seeds) trials, built on CPU, every parameter/buffer with leading dim T, trial t's
      slice initialised from ``seeds[t]`` alone; ``forward(x (T, B, m)) -> (T, B)`` (called as
      ``forward(x, phi)`` when the module has ``uses_phi = True``). Default: the paper's MLP.
    * ``_extra_loss(model, x) -> (T,)``: a per-trial penalty added in phases with
      ``penalty=True`` (None: no penalty). ``model`` is the `PiLiDEnsemble`.
    * ``_phases() -> list[Phase]``: the training schedule (default: one phase of ``epochs``
      epochs with early stopping).
    * ``_regularized(name) -> bool``: parameters that get ``lam * Omega`` (Eq. 11).
    * ``_after_fit()``: runs on every fitted estimator (T=1 module on CPU in ``module_``).

    Internals that hold for every subclass: numeric X is standardised (training mean and
    standard deviation) for the deep input; Phi comes from the unscaled X; a regression target
    is standardised and predictions are mapped back to the original units; classification uses
    labels 0/1 and logits. With ``patience`` set, a fraction ``val_fraction`` of the rows
    (stratified for classification) is held out for early stopping. Statistics (knots, scaling,
    the centring of the contributions) use every row passed to `fit`; the least-squares init,
    the gradient steps and the purification use the rows not held out.
    """

    _task = "regression"
    _has_additive = True

    # ------------------------------------------------------------------ hooks
    def _build_deep(self, n_features: int, seeds: Sequence[int]):
        layers = getattr(self, "hidden_layers", PAPER_HIDDEN_LAYERS)
        if layers is None:
            return None
        return EnsembleMLP(n_features, layers, self.sigma, seeds)

    def _extra_loss(self, model, x):
        return None

    def _phases(self) -> list[Phase]:
        return [Phase("train", int(self.epochs), early_stopping=True)]

    def _regularized(self, name: str) -> bool:
        groups = getattr(self, "reg_groups", "all")
        groups = (groups,) if isinstance(groups, str) else tuple(groups)
        if "all" in groups:
            return True
        if "additive" in groups and name.startswith("additive."):
            return True
        if "deep" in groups and name.startswith("deep."):
            return True
        return any(name == f"additive.{g}" for g in groups if g in ("w", "b", "omega"))

    def _after_fit(self) -> None:
        return None

    # ------------------------------------------------------------ parameters
    def _check_params(self) -> None:
        """Check every hyper-parameter; a bad one raises `ParamError` (a one-line PilidError)."""

        def whole(name, low, allow_none=False):
            v = getattr(self, name)
            if v is None and allow_none:
                return
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
                raise ParamError(name, v, f"use a whole number >= {low}")

        whole("epochs", 0)
        whole("batch_size", 1)
        whole("patience", 1, allow_none=True)
        if not (isinstance(self.lr, numbers.Real) and 0 < self.lr < np.inf):
            raise ParamError("lr", self.lr, "use a positive number such as 0.005")
        vf = self.val_fraction
        if not (isinstance(vf, numbers.Real) and 0 <= vf < 1):
            raise ParamError("val_fraction", vf, "use a number in [0, 1), e.g. 0.1")
        if self.optimizer not in ("adam", "sgd"):
            raise ParamError(
                "optimizer",
                self.optimizer,
                "use adam (the paper's) or sgd",
                f"optimizer={self.optimizer!r} is unknown; use adam (the paper's) or sgd",
            )
        if getattr(self, "reg", "l2") not in REGS:
            raise ParamError(
                "reg",
                self.reg,
                "use l1 or l2 (Eq. 11)",
                f"reg={self.reg!r} is unknown; use l1 or l2 (Eq. 11)",
            )
        lam = getattr(self, "lam", 0.0)
        if not (isinstance(lam, numbers.Real) and 0 <= lam < np.inf):
            raise ParamError("lam", lam, "use a number >= 0 such as 1e-5")
        groups = getattr(self, "reg_groups", "all")
        for g in (groups,) if isinstance(groups, str) else tuple(groups):
            if g not in REG_GROUPS:
                raise ParamError(
                    "reg_groups",
                    groups,
                    f"use any of {', '.join(REG_GROUPS)}",
                    f"reg_groups has {g!r}; use any of {', '.join(REG_GROUPS)}",
                )
        sigma = getattr(self, "sigma", None)
        if sigma is not None and not (isinstance(sigma, numbers.Real) and 0 < sigma < np.inf):
            raise ParamError(
                "sigma",
                sigma,
                "use a positive std such as 0.05 (the paper's configs) or None (He init)",
            )
        if getattr(self, "hidden_layers", None) is not None:
            check_hidden_layers(self.hidden_layers)
        if hasattr(self, "purify"):
            check_bool("purify", self.purify)
        if self._has_additive:
            if getattr(self, "knots", "uniform") not in KNOT_METHODS:
                raise ParamError(
                    "knots",
                    self.knots,
                    f"use one of {', '.join(KNOT_METHODS)}",
                    f"knots={self.knots!r} is unknown; use one of {', '.join(KNOT_METHODS)}",
                )
            if getattr(self, "init", "lstsq") not in INITS:
                raise ParamError(
                    "init",
                    self.init,
                    "use lstsq or gaussian",
                    f"init={self.init!r} is unknown; use lstsq or gaussian",
                )
            g = self.gamma
            gs = [g] if np.ndim(g) == 0 else list(g)
            for v in gs:
                if (
                    isinstance(v, bool)
                    or not isinstance(v, numbers.Real)
                    or not float(v).is_integer()
                    or v < 1
                ):
                    raise ParamError(
                        "gamma",
                        g,
                        "the number of pieces per feature must be a whole number >= 1 (gamma=1 "
                        "is a linear model)",
                    )
        resolve_device(self.device)

    # ------------------------------------------------------------------ input
    def _encode_frame(self, X, fit: bool):
        """Turn non-numeric / category columns of a DataFrame into codes (Definition 1)."""
        if not hasattr(X, "dtypes") or not hasattr(X, "columns"):
            if fit:
                self.categories_ = {}
            if getattr(getattr(X, "dtype", None), "kind", "") in ("M", "m"):
                raise PilidError(
                    "X holds dates or durations (numpy datetime64/timedelta64); convert them to "
                    "numbers (e.g. days since a date) before calling the estimator"
                )
            return X, np.zeros(0, dtype=bool)
        if isinstance(X, pd.DataFrame):
            _check_frame(X)
        auto = np.array([_is_categorical_dtype(t) for t in X.dtypes], dtype=bool)
        if fit:
            self.categories_ = {}
            for j in np.flatnonzero(auto):
                col = X.iloc[:, j]
                cats = (
                    col.cat.categories
                    if isinstance(col.dtype, pd.CategoricalDtype)
                    else pd.Categorical(col.dropna()).categories
                )
                self.categories_[int(j)] = list(cats)
        if not self.categories_ and not auto.any():
            return X, auto
        X = X.copy()
        for j, cats in self.categories_.items():
            if j >= X.shape[1]:
                continue
            col = X.iloc[:, j]
            codes = pd.Index(cats).get_indexer(col).astype(np.float64)  # -1: unseen or NaN
            bad = codes < 0
            if bad.any():
                if col.isna().to_numpy()[bad].any():
                    raise PilidError(
                        f"column {X.columns[j]!r} contains NaN; impute or drop missing values"
                    )
                unknown = col[bad].iloc[0]
                raise PilidError(
                    f"column {X.columns[j]!r} has the category {unknown!r} not seen in fit; "
                    "map it to a known category or refit with it"
                )
            X[X.columns[j]] = codes
        return X, auto

    def _categorical_mask(self, auto: np.ndarray, n_features: int) -> np.ndarray:
        mask = np.zeros(n_features, dtype=bool)
        if auto.size == n_features:
            mask |= auto
        spec = getattr(self, "categorical_features", None)
        if spec is None:
            return mask
        spec = np.asarray(spec)
        if spec.dtype == bool:
            if spec.shape != (n_features,):
                raise PilidError(
                    f"categorical_features has {spec.size} booleans for {n_features} features; "
                    "give one per feature, or indices or names"
                )
            return mask | spec
        names = getattr(self, "feature_names_in_", None)
        for item in spec.ravel().tolist():
            if isinstance(item, str):
                if names is None or item not in list(names):
                    raise PilidError(
                        f"categorical feature {item!r} is not a column name of X; pass indices "
                        "or a DataFrame with that column"
                    )
                mask[list(names).index(item)] = True
            elif isinstance(item, numbers.Integral) and -n_features <= item < n_features:
                mask[item] = True
            else:
                raise PilidError(
                    f"categorical feature index {item!r} is out of range for {n_features} features"
                )
        return mask

    def _validate_X(self, X, fit: bool) -> np.ndarray:
        X, auto = self._encode_frame(X, fit)
        try:
            X = validate_data(
                self, X, reset=fit, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=1
            )
        except ValueError as e:
            if "features" in str(e) and "expecting" in str(e):
                raise PilidError(
                    " ".join(str(e).split()) + " Pass the columns used in fit."
                ) from None
            raise
        if not np.isfinite(X).all():
            bad = int((~np.isfinite(X)).sum())
            raise PilidError(
                f"X contains NaN or inf in {bad} entries; impute or drop them before calling "
                "the estimator"
            )
        if fit:
            self._auto_categorical = auto
        return X

    def _validate_y(self, y, n: int) -> np.ndarray:
        if y is None:
            raise PilidError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            import warnings

            from sklearn.exceptions import DataConversionWarning

            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it is raveled.",
                DataConversionWarning,
                stacklevel=3,
            )
            y = y.ravel()
        if y.ndim != 1:
            raise PilidError(f"y must be one-dimensional; got shape {y.shape}")
        if y.shape[0] != n:
            raise PilidError(f"X has {n} rows but y has {y.shape[0]}; pass one target per row")
        if self._task == "classification":
            check_classification_targets(y)
            if pd.isna(y).any() if y.dtype == object else False:
                raise PilidError("y contains NaN; drop the rows without a label")
            classes, enc = np.unique(y, return_inverse=True)
            if len(classes) != 2:
                raise PilidError(
                    f"Only binary classification is supported; y has {len(classes)} class(es) "
                    f"{list(classes)[:5]}, the classifier needs exactly 2"
                )
            self.classes_ = classes
            return enc.astype(np.float64)
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise PilidError("y must be numeric for regression") from None
        if not np.isfinite(y).all():
            raise PilidError("y contains NaN or inf; drop or impute those targets before fit")
        return y

    # ------------------------------------------------------------- preparing
    def _trial_seed(self) -> int:
        rs = self.random_state
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            return int(rs)
        return int(check_random_state(rs).randint(0, 2**31 - 1))

    def _split(self, target: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
        """Training / validation rows from the trial seed (stratified for classification)."""
        n = len(target)
        n_val = int(round(self.val_fraction * n)) if self.patience is not None else 0
        if n_val < 1 or n - n_val < 1:
            return np.arange(n), np.arange(0)
        rng = np.random.default_rng([seed, STREAM_SPLIT])
        if self._task != "classification":
            perm = rng.permutation(n)
            return np.sort(perm[n_val:]), np.sort(perm[:n_val])
        # Stratified: class c gives its share of n_val (largest remainders), n_val stays fixed.
        counts = np.bincount(target.astype(np.int64), minlength=2)
        quota = n_val * counts / n
        take = np.floor(quota).astype(np.int64)
        rest = n_val - take.sum()
        take[np.argsort(-(quota - take), kind="stable")[:rest]] += 1
        val = []
        for c in range(2):
            idx = np.flatnonzero(target == c)
            val.append(idx[rng.permutation(len(idx))[: take[c]]])
        val = np.sort(np.concatenate(val))
        keep = np.ones(n, dtype=bool)
        keep[val] = False
        return np.flatnonzero(keep), val

    def _prepare(self, X, y) -> _Prepared:
        self._check_params()
        for attr in ("module_", "knots_", "classes_"):
            if hasattr(self, attr):
                delattr(self, attr)
        X = self._validate_X(X, fit=True)
        n, m = X.shape
        target = self._validate_y(y, n)
        self.categorical_ = self._categorical_mask(self._auto_categorical, m)
        seed = self._trial_seed()
        train_idx, val_idx = self._split(target, seed)
        if self._task == "regression":
            tr = target
            self.y_offset_ = float(tr.mean())
            sd = float(tr.std())
            self.y_scale_ = sd if sd > 0 else 1.0
            target = (target - self.y_offset_) / self.y_scale_
        else:
            self.y_offset_, self.y_scale_ = 0.0, 1.0
        x_mean = X.mean(axis=0)
        x_sd = X.std(axis=0)
        x_scale = np.where(x_sd > 0, x_sd, 1.0)
        knots = None
        if self._has_additive:
            knots = fit_knots(X, self.gamma, self.knots, self.categorical_)
        self.seed_ = seed
        return _Prepared(X, target, train_idx, val_idx, seed, x_mean, x_scale, knots)

    # ---------------------------------------------------------------- output
    def _inputs(self, X: np.ndarray, device="cpu"):
        x = torch.from_numpy(((X - self.x_mean_) / self.x_scale_).astype(np.float32)).to(device)
        phi = None
        if self.knots_ is not None:
            layout = compact_layout(self.knots_, device=device)
            col, frac = phi_compact(
                torch.from_numpy(np.array(X, dtype=np.float64)).to(device), layout
            )
            phi = (col[None], frac[None])
        return x, phi

    @torch.no_grad()
    def _raw(self, X: np.ndarray) -> np.ndarray:
        """The model's raw output (standardised target / logit) for validated X, (n,)."""
        out = []
        for s in range(0, X.shape[0], _PREDICT_CHUNK):
            x, phi = self._inputs(X[s : s + _PREDICT_CHUNK])
            out.append(self.module_(x[None], phi)[0])
        return torch.cat(out).double().numpy() if out else np.zeros(0)

    @torch.no_grad()
    def _terms(self, X: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        terms, deep = [], []
        for s in range(0, X.shape[0], _PREDICT_CHUNK):
            x, phi = self._inputs(X[s : s + _PREDICT_CHUNK])
            t, d = self.module_.decompose(x[None], phi)
            if t is not None:
                terms.append(t[0].double().numpy())
            if d is not None:
                deep.append(d[0].double().numpy())
        return (np.concatenate(terms) if terms else None, np.concatenate(deep) if deep else None)

    def _check_fitted_X(self, X) -> np.ndarray:
        check_is_fitted(self, "module_")
        return self._validate_X(X, fit=False)

    def decompose(self, X) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """Eq. (9) term by term, in output units (target units / logits).

        Returns ``(intercept_, contributions (n, m) or None, deep part (n,) or None)`` with
        ``intercept_ + contributions.sum(1) + deep`` equal to the raw output
        (`predict` for regression, `decision_function` for classification).
        """
        X = self._check_fitted_X(X)
        terms, deep = self._terms(X)
        contrib = None
        if terms is not None:
            contrib = self.y_scale_ * (terms - self.contribution_offset_)
        if deep is not None:
            deep = self.y_scale_ * deep
        return self.intercept_, contrib, deep

    def _finalize(self, prep: _Prepared) -> None:
        """Fitted attributes that need the T=1 module: centring of the contributions."""
        self.x_mean_ = prep.x_mean
        self.x_scale_ = prep.x_scale
        self.knots_ = prep.knots
        self.n_features_in_ = prep.X.shape[1]
        offset = 0.0
        if self.knots_ is not None:
            terms, _ = self._terms(prep.X)
            self.contribution_offset_ = terms.mean(axis=0)
            offset = float(self.contribution_offset_.sum())
        self.intercept_ = self.y_offset_ + self.y_scale_ * offset

    # ------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit on (X, y): `fit_batched([self], [X], [y])` (Algorithm 1). Returns self."""
        fit_batched([self], [X], [y])
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = self.random_state is None
        return tags


# =================================================================== batched fit
def _ensemble_data(preps: list[_Prepared], device) -> EnsembleData:
    def stack(rows_of, with_phi):
        xs, ys = [], []
        for p in preps:
            idx = rows_of(p)
            xs.append(torch.as_tensor((p.X[idx] - p.x_mean) / p.x_scale, dtype=torch.float32))
            ys.append(torch.as_tensor(p.target[idx], dtype=torch.float32))
        x = torch.stack(xs).to(device)
        y = torch.stack(ys).to(device)
        phi = None
        if with_phi:  # Phi in compact form (Definition 2): piece column and fraction, (T, n, m)
            cols, fracs = [], []
            for p in preps:
                raw = torch.as_tensor(p.X[rows_of(p)], dtype=torch.float64, device=device)
                col, frac = phi_compact(raw, compact_layout(p.knots, device=device))
                cols.append(col)
                fracs.append(frac)
            phi = (torch.stack(cols), torch.stack(fracs))
        return x, y, phi

    with_phi = preps[0].knots is not None
    x, y, phi = stack(lambda p: p.train_idx, with_phi)
    data = EnsembleData(x=x, y=y, phi=phi)
    if len(preps[0].val_idx):
        data.x_val, data.y_val, data.phi_val = stack(lambda p: p.val_idx, with_phi)
    return data


def _column_names(est: NeuralEstimator, m: int) -> list[str]:
    """The fit data's column names (x0, x1, ... for arrays without names)."""
    names = getattr(est, "feature_names_in_", None)
    if names is not None and len(names) == m:
        return [str(c) for c in names]
    return [f"x{j}" for j in range(m)]


def _check_phi_finite(data: EnsembleData, names: list[str]) -> None:
    """Phi (Definition 2) is evaluated in float32: values beyond its range (|x| > 3.4e38) give
    NaN. Name the columns instead of letting the least squares or the training fail."""
    bad = torch.zeros(len(names), dtype=torch.bool, device=data.phi[1].device)
    for phi in (data.phi, data.phi_val):
        if phi is not None:
            bad |= (~torch.isfinite(phi[1])).flatten(0, 1).any(0)
    if bool(bad.any()):
        columns = ", ".join(repr(names[j]) for j in torch.nonzero(bad).flatten().tolist())
        raise PilidError(
            f"column(s) {columns} cannot be cut into pieces: their values are beyond float32's "
            "range (|x| > 3.4e38); rescale them (e.g. standardise them) before fit"
        )


def _build_additive(est: NeuralEstimator, preps: list[_Prepared], data: EnsembleData, device):
    T = len(preps)
    m = preps[0].X.shape[1]
    P = max(p.knots.n_columns for p in preps)
    feature = torch.zeros(T, P, dtype=torch.long)
    mask = torch.zeros(T, P)
    for t, p in enumerate(preps):
        f, _, _ = p.knots.layout()
        feature[t, : len(f)] = torch.as_tensor(f)
        mask[t, : len(f)] = 1.0
    feature, mask = feature.to(device), mask.to(device)
    names = _column_names(est, m)
    _check_phi_finite(data, names)
    if est.init == "lstsq":
        target = data.y if est._task == "regression" else 2.0 * data.y - 1.0
        col, frac = data.phi
        ws, bs = [], []
        for t in range(T):  # one dense Phi (n x P) at a time
            dense = phi_dense(col[t], frac[t], feature[t])
            w_t, b_t = lstsq_init(
                dense[None],
                target[t : t + 1],
                mask[t : t + 1],
                names=[names[j] for j in feature[t].tolist()],
            )
            ws.append(w_t)
            bs.append(b_t)
        w, b = torch.cat(ws), torch.cat(bs)
    else:  # init="gaussian": the paper's comparison, w ~ N(0, sigma^2), b = 0
        w = torch.zeros(T, P)
        for t, p in enumerate(preps):
            g = trial_generator(p.seed, STREAM_ADDITIVE)
            Pt = p.knots.n_columns
            std = (2.0 / Pt) ** 0.5 if est.sigma is None else float(est.sigma)  # He: fan-in P
            w[t, :Pt] = torch.randn(Pt, generator=g) * std
        w, b = w.to(device), torch.zeros(T, P, device=device)
    return AdditiveEnsemble(feature, mask, m, w, b)


def _unstack(est: NeuralEstimator, model: PiLiDEnsemble, t: int, prep: _Prepared):
    m = prep.X.shape[1]
    add = None
    if model.additive is not None:
        a, Pt = model.additive, prep.knots.n_columns

        def sl(v):
            return v[t : t + 1, :Pt].detach().cpu().clone()

        add = AdditiveEnsemble(
            sl(a.feature), sl(a.mask), m, sl(a.w), sl(a.b), a.omega[t : t + 1].detach().cpu()
        )
        with torch.no_grad():  # exact copies (the constructor multiplies by the mask)
            add.w.copy_(sl(a.w))
            add.b.copy_(sl(a.b))
    deep = None
    if model.deep is not None:
        deep = est._build_deep(m, [prep.seed])
        state = {k: v[t : t + 1].detach().cpu().clone() for k, v in model.deep.state_dict().items()}
        deep.load_state_dict(state)
    out = PiLiDEnsemble(add, deep, 1)
    if add is not None:
        out.shift_w.copy_(model.shift_w[t : t + 1, : prep.knots.n_columns].cpu())
        out.shift_c.copy_(model.shift_c[t : t + 1].cpu())
    return out.eval()


def _fit_group(ests: list[NeuralEstimator], preps: list[_Prepared], device) -> None:
    est0 = ests[0]
    data = _ensemble_data(preps, device)
    T = len(ests)
    seeds = [p.seed for p in preps]
    additive = _build_additive(est0, preps, data, device) if est0._has_additive else None
    deep = est0._build_deep(preps[0].X.shape[1], seeds)
    model = PiLiDEnsemble(additive, deep, T).to(device)
    extra = None
    if type(est0)._extra_loss is not NeuralEstimator._extra_loss:
        extra = est0._extra_loss
    cfg = TrainConfig(
        task=est0._task,
        lr=float(est0.lr),
        optimizer=est0.optimizer,
        batch_size=int(est0.batch_size),
        patience=est0.patience,
        reg=getattr(est0, "reg", "l2"),
        lam=float(getattr(est0, "lam", 0.0)),
        regularized=est0._regularized,
        extra_loss=extra,
        verbose=bool(est0.verbose),
        desc=f"{type(est0).__name__} x{T}",
    )
    result = train_ensemble(model, data, est0._phases(), cfg, seeds)
    if getattr(est0, "purify", False) and additive is not None and deep is not None:
        model.purify_(data.x, data.phi)
    for t, (est, prep) in enumerate(zip(ests, preps)):
        est.module_ = _unstack(est, model, t, prep)
        ne = int(result.n_epochs[t])  # the ensemble may run on after this trial finished
        est.history_ = {
            "train_loss": result.train_loss[:ne, t].tolist(),
            "val_loss": result.val_loss[:ne, t].tolist(),
            "phase": [result.phase_names[k] for k in result.phase[:ne, t]],
            "epoch_seconds": result.epoch_seconds[:ne].tolist(),  # of the whole ensemble
        }
        est.n_epochs_ = int(result.n_epochs[t])
        est.best_epoch_ = int(result.best_epoch[t])
        est.device_ = str(device)
        est._finalize(prep)
        est._after_fit()


def _fit_local(ests, Xs, ys) -> list:
    device = resolve_device(ests[0].device)
    preps = [est._prepare(X, y) for est, X, y in zip(ests, Xs, ys)]
    m = {p.X.shape[1] for p in preps}
    if len(m) > 1:
        raise PilidError(
            f"fit_batched got data with different numbers of features {sorted(m)}; trials of "
            "one batch must share the columns"
        )
    # Trials stack when their training/validation row counts agree; others form own groups.
    groups: dict[tuple[int, int], list[int]] = {}
    for i, p in enumerate(preps):
        groups.setdefault((len(p.train_idx), len(p.val_idx)), []).append(i)
    for idx in groups.values():
        _fit_group([ests[i] for i in idx], [preps[i] for i in idx], device)
    return ests


def _worker(ests, Xs, ys):
    torch.set_num_threads(1)
    return _fit_local(ests, Xs, ys)


def fit_batched(estimators, Xs, ys, n_jobs: int | None = 1) -> list:
    """Fit T estimators of one class and hyper-parameters (`random_state` may differ), each on
    its own (X, y), as one ensemble with a leading trial dimension; returns them, fitted in place.

    Trial t equals, within float tolerance, ``clone(estimators[t]).fit(Xs[t], ys[t])``.
    ``n_jobs`` > 1 splits the trials over that many one-thread worker processes (CPU).
    """
    estimators = list(estimators)
    Xs, ys = list(Xs), list(ys)
    if not estimators:
        return []
    if not (len(estimators) == len(Xs) == len(ys)):
        raise PilidError(
            f"fit_batched got {len(estimators)} estimators, {len(Xs)} X and {len(ys)} y; pass "
            "one X and one y per estimator"
        )
    cls = type(estimators[0])
    if not isinstance(estimators[0], NeuralEstimator):
        raise PilidError(f"{cls.__name__} cannot be trained by fit_batched; use its fit method")
    ref = {k: v for k, v in estimators[0].get_params(deep=False).items() if k != "random_state"}
    for est in estimators[1:]:
        params = {k: v for k, v in est.get_params(deep=False).items() if k != "random_state"}
        if type(est) is not cls or repr(params) != repr(ref):
            raise PilidError(
                "fit_batched needs estimators of one class with the same hyper-parameters "
                "(only random_state may differ); fit the others separately"
            )
    n_jobs = 1 if n_jobs is None else int(n_jobs)
    if n_jobs <= 1 or len(estimators) == 1:
        return _fit_local(estimators, Xs, ys)
    from joblib import Parallel, delayed

    chunks = [c for c in np.array_split(np.arange(len(estimators)), n_jobs) if len(c)]
    results = Parallel(n_jobs=len(chunks), backend="loky")(
        delayed(_worker)([estimators[i] for i in c], [Xs[i] for i in c], [ys[i] for i in c])
        for c in chunks
    )
    for c, fitted in zip(chunks, results):
        for i, f in zip(c, fitted):
            estimators[i].__dict__.update(f.__dict__)
    return estimators


# =============================================================== interpretation
class _ShapeMixin:
    """Interpretation API of the additive component (Definition 3: u_j per feature)."""

    def feature_contributions(self, X) -> np.ndarray:
        """u_j(x_ij) (n, m) in output units, each column centred to mean 0 on the training
        rows; ``intercept_ + contributions.sum(1) + deep part`` is the raw output (Eq. 9)."""
        return self.decompose(X)[1]

    def _feature_names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(c) for c in names]
        return [f"x{j}" for j in range(self.n_features_in_)]

    def shape_functions(self) -> pd.DataFrame:
        """Tidy DataFrame (`feature`, `x`, `value`): u_j at its characteristic points.

        Values are centred like `feature_contributions`; between points u_j is linear
        (Definition 2). String categories appear as their codes (positions in `categories_`).
        """
        check_is_fitted(self, "module_")
        a = self.module_.additive
        with torch.no_grad():
            v, _ = a.effective()
            v = (v + self.module_.shift_w)[0].double().numpy()
            const = a.constants()[0].double() + float(self.module_.shift_c[0]) / a.n_features
            const = const.numpy()
        values = piece_values(self.knots_, v, const)
        rows = []
        for j, (name, pts, val) in enumerate(
            zip(self._feature_names(), self.knots_.points, values)
        ):
            centred = self.y_scale_ * (val - self.contribution_offset_[j])
            rows.append(pd.DataFrame({"feature": name, "x": pts, "value": centred}))
        return pd.concat(rows, ignore_index=True)

    def plot_shapes(self, features=None, ax=None, ncols: int = 4):
        """One small panel per feature with its piecewise-linear shape u_j; returns the axes."""
        import matplotlib.pyplot as plt

        df = self.shape_functions()
        names = self._feature_names()
        if features is None:
            chosen = names
        else:
            chosen = [names[f] if isinstance(f, numbers.Integral) else str(f) for f in features]
            missing = [f for f in chosen if f not in names]
            if missing:
                raise PilidError(f"unknown feature(s) {missing}; choose from {names}")
        if ax is None:
            ncols = min(ncols, len(chosen))
            nrows = -(-len(chosen) // ncols)
            _, axes = plt.subplots(nrows, ncols, figsize=(2.6 * ncols, 2.1 * nrows), squeeze=False)
            axes = axes.ravel()
            for extra in axes[len(chosen) :]:
                extra.set_visible(False)
        else:
            axes = np.atleast_1d(ax).ravel()
            if len(axes) < len(chosen):
                raise PilidError(
                    f"ax has {len(axes)} panels for {len(chosen)} features; pass enough axes"
                )
        for a, name in zip(axes, chosen):
            part = df[df["feature"] == name]
            j = names.index(name)
            if self.knots_.categorical[j]:
                a.step(part["x"], part["value"], where="mid", marker="o", ms=3)
            else:
                a.plot(part["x"], part["value"], marker="o", ms=2, lw=1.2)
            a.axhline(0.0, color="0.7", lw=0.6)
            a.set_title(name, fontsize=9)
            a.tick_params(labelsize=7)
        return axes[: len(chosen)]


# ===================================================================== classes
class _Regressor(RegressorMixin):
    _task = "regression"

    def predict(self, X) -> np.ndarray:
        """Predicted targets in the original units."""
        X = self._check_fitted_X(X)
        return self.y_offset_ + self.y_scale_ * self._raw(X)


class _Classifier(ClassifierMixin):
    _task = "classification"

    def decision_function(self, X) -> np.ndarray:
        """Logit of the positive class `classes_[1]`."""
        X = self._check_fitted_X(X)
        return self._raw(X)

    def predict_proba(self, X) -> np.ndarray:
        """[P(classes_[0]), P(classes_[1])]: the logistic function of the logit (overflow-free)."""
        z = self.decision_function(X)
        p = expit(np.asarray(z, dtype=np.float64))
        return np.column_stack([1.0 - p, p])

    def predict(self, X) -> np.ndarray:
        z = self.decision_function(X)
        return self.classes_[(z > 0).astype(np.int64)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


_PILID_DOC = """
    Parameters (defaults give a good model out of the box; the paper's settings in brackets):
    gamma: pieces per numeric feature, int or one per feature (Definition 1) [1-20].
    knots: "uniform" (the paper: equal sub-intervals of the training range) or "quantile".
    init: "lstsq" (Algorithm 1: least squares of y on Phi, Cholesky of the ridge normal
        equations; classification: least squares on the labels coded -1/+1) or "gaussian".
    hidden_layers: MLP layer sizes [(100, 200, 400, 400, 200, 100)]; sigma: std of the MLP's
        Gaussian weight init (and of w with init="gaussian"); None (default): He-normal
        sqrt(2 / fan_in) per layer, which trains far better than a small fixed std [0.05].
    reg, lam: L1/L2 penalty lam * Omega of Eq. 11; reg_groups: "all" (Eq. 11), "additive",
        "deep", or any of "w", "b", "omega".
    purify: after training, move the MLP's main effect into the additive shapes (predictions
        unchanged; see `pilid.models.pilid`).
    lr [0.005], epochs (upper bound), batch_size, optimizer ("adam" [paper] or "sgd"): the
        paper gives no epoch count or batch size; 100 / 256 with early stopping here.
    patience, val_fraction: early stopping on a held-out fraction of the training rows, best
        weights restored (patience=None: no early stopping, all rows train).
    random_state, device ("auto": CUDA when present), categorical_features (indices, names or
        a boolean mask; pandas category/object/string columns are categorical anyway),
        verbose (progress bar with the epoch losses).
    """


class PiLiDBase(_ShapeMixin, NeuralEstimator):
    def __init__(
        self,
        gamma=5,
        knots="uniform",
        init="lstsq",
        hidden_layers=PAPER_HIDDEN_LAYERS,
        sigma=None,
        reg="l2",
        lam=1e-5,
        reg_groups="all",
        purify=True,
        lr=0.005,
        epochs=100,
        batch_size=256,
        optimizer="adam",
        patience=10,
        val_fraction=0.1,
        random_state=None,
        device="auto",
        categorical_features=None,
        verbose=False,
    ):
        self.gamma = gamma
        self.knots = knots
        self.init = init
        self.hidden_layers = hidden_layers
        self.sigma = sigma
        self.reg = reg
        self.lam = lam
        self.reg_groups = reg_groups
        self.purify = purify
        self.lr = lr
        self.epochs = epochs
        self.batch_size = batch_size
        self.optimizer = optimizer
        self.patience = patience
        self.val_fraction = val_fraction
        self.random_state = random_state
        self.device = device
        self.categorical_features = categorical_features
        self.verbose = verbose


class PiLiDRegressor(_Regressor, PiLiDBase):
    __doc__ = "PiLiD for regression (Guo et al., IJCAI 2020, Section 3; MSE loss)." + _PILID_DOC


class PiLiDClassifier(_Classifier, PiLiDBase):
    __doc__ = (
        "PiLiD for binary classification (Section 3; cross-entropy on the logit)." + _PILID_DOC
    )


class MLPBase(NeuralEstimator):
    _has_additive = False

    def __init__(
        self,
        hidden_layers=PAPER_HIDDEN_LAYERS,
        sigma=None,
        reg="l2",
        lam=1e-5,
        lr=0.005,
        epochs=100,
        batch_size=256,
        optimizer="adam",
        patience=10,
        val_fraction=0.1,
        random_state=None,
        device="auto",
        categorical_features=None,
        verbose=False,
    ):
        self.hidden_layers = hidden_layers
        self.sigma = sigma
        self.reg = reg
        self.lam = lam
        self.lr = lr
        self.epochs = epochs
        self.batch_size = batch_size
        self.optimizer = optimizer
        self.patience = patience
        self.val_fraction = val_fraction
        self.random_state = random_state
        self.device = device
        self.categorical_features = categorical_features
        self.verbose = verbose


class MLPRegressor(_Regressor, MLPBase):
    """The paper's MLP baseline (PiLiD's deep component alone, same training), regression."""


class MLPClassifier(_Classifier, MLPBase):
    """The paper's MLP baseline (PiLiD's deep component alone, same training), binary."""
