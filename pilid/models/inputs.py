"""What the estimators accept as X and y, and the messages for what they refuse.

- `categorical_mask`: the `categorical_features` parameter (indices, names or a boolean mask)
  as one boolean per column; shared by the neural estimators and the baselines.
- `class_target` / `binary_target`: class labels coded 0..K-1 (K >= 2), or 0/1 for a binary-only
  estimator (`classes_[1]` is the positive class).
- `InputMixin`: the neural estimators' X and y: pandas category / string columns become codes
  (their categories kept in `categories_`; shapes and explanations show the levels themselves),
  dates and duplicate column names are refused with a fix, inf is refused.

Columns at prediction (`InputMixin._validate_X`): a DataFrame given to an estimator fitted on a
DataFrame is read by column name, as pandas users expect: its columns may come in any order
(they are put in the fit's order, ``feature_names_in_``, so the predictions are those of the
columns in that order), but a column of fit that it lacks, or one that fit did not see, is
refused on one line naming them (scikit-learn's own estimators refuse another order too). An
array, or a DataFrame for a model fitted on an array, is read by position (the count checked).
A value that is not a number in a column that was numeric in fit (``'forty'`` in ``age``) is
refused on one line naming the column and the value.

Missing values (beyond the paper, as EBM's ``missing='separate'``): NaN in X (numeric, or a
missing category) is kept as NaN: Phi of Definition 2 has no piece for it, so a feature that had
NaN in fit gets its own learned contribution for NaN (`pilid.nn.additive.AdditiveEnsemble`'s
``nan_value``) and the deep part sees a neutral value and a missing indicator
(`pilid.train.encoding.deep_input`). At prediction, NaN in a feature that had none in fit gets
that feature's average contribution (centred value 0) and one `UnseenMissingWarning`; a category
not seen in fit likewise (coded +inf internally, which `pilid.nn.piecewise.phi_compact` reads as
"unseen") with one `UnseenCategoryWarning` naming it and its column. A numeric column named in
``categorical_features`` keeps Definition 2 for a value between or beyond its training values.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from pilid.errors import PilidError
from pilid.models.params import is_whole


class UnseenMissingWarning(UserWarning):
    """NaN at prediction in a feature that had no missing values in fit: it gets that
    feature's average contribution (centred value 0)."""


class UnseenCategoryWarning(UserWarning):
    """A category not seen in fit: it gets its feature's average contribution (centred 0)."""


class MostlyNumbersWarning(UserWarning):
    """A text column at fit whose values are numbers but for a few (``"n/a"``): it is read as
    a categorical feature with one level per distinct value, which is rarely what was meant."""


#: The share of a text column's present values that parse as numbers above which fit says
#: that the column is probably a numeric one with a few stray strings.
MOSTLY_NUMBERS = 0.9


#: How `InputMixin` codes a category not seen in fit (NaN is a missing value, +inf "unseen").
UNSEEN_CODE = np.inf
#: The level a column's merged levels become (`InputMixin._merge_infrequent`; shapes and
#: explanations show it by this name; ``infrequent_categories_`` lists what it holds).
INFREQUENT_LEVEL = "(infrequent)"


def categorical_mask(categorical_features, n_features: int, feature_names=None) -> np.ndarray:
    """Boolean mask (n_features,) from indices, names or a boolean mask (None: no categoricals).

    Names are looked up in `feature_names` (the fit DataFrame's columns); indices may be
    negative (counted from the end).
    """
    mask = np.zeros(n_features, dtype=bool)
    if categorical_features is None:
        return mask
    spec = categorical_features
    items = [spec] if isinstance(spec, str) else np.ravel(np.asarray(spec, dtype=object)).tolist()
    if not items:
        return mask
    if all(isinstance(v, bool | np.bool_) for v in items):
        if len(items) != n_features:
            raise PilidError(
                f"categorical_features has {len(items)} booleans for {n_features} features; "
                "give one per feature, or indices or names"
            )
        return np.array(items, dtype=bool)
    names = None if feature_names is None else [str(c) for c in feature_names]
    for item in items:
        if isinstance(item, str):
            if names is None or item not in names:
                raise PilidError(
                    f"categorical feature {item!r} is not a column name of X; pass indices "
                    "or a DataFrame with that column"
                )
            mask[names.index(item)] = True
        elif is_whole(item, integral_float=True) and -n_features <= item < n_features:
            mask[int(item)] = True
        else:
            raise PilidError(
                f"categorical feature index {item!r} is out of range for {n_features} features; "
                "pass column indices, column names or a boolean mask"
            )
    return mask


def class_target(estimator, y) -> np.ndarray:
    """Set `estimator.classes_` (sorted labels) and return y coded 0..K-1 (int64); K >= 2
    (K > 2: `pilid.models.multiclass`)."""
    y = np.asarray(y)
    if y.dtype == object or y.dtype.kind == "f":
        missing = np.flatnonzero(pd.isna(y))
        if missing.size:
            rows = _listed(missing.tolist(), 3)
            raise PilidError(
                f"y has no label (None or NaN) in {missing.size} row(s) ({rows}); drop those "
                "rows, e.g. keep = y.notna(); X, y = X[keep], y[keep]"
            )
    check_classification_targets(y)
    classes, coded = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise PilidError(
            f"{type(estimator).__name__} needs at least two classes in y; got 1 class "
            f"({classes[:5].tolist()}); pass labels of two or more classes"
        )
    estimator.classes_ = classes
    return coded.astype(np.int64)


def binary_target(estimator, y) -> np.ndarray:
    """`class_target` for a binary-only estimator (the baselines): exactly two classes, coded
    0/1 (`classes_[1]` is the positive class)."""
    coded = class_target(estimator, y)
    if estimator.classes_.size != 2:
        classes = estimator.classes_
        raise PilidError(
            f"Only binary classification is supported: {type(estimator).__name__} got "
            f"{classes.size} classes {classes[:5].tolist()}; pass labels with exactly two values"
        )
    return coded


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


def _temporal_kind(X: pd.DataFrame, j: int, dtype) -> str | None:
    """'datetime', 'timedelta' or 'period' when column j (of dtype `dtype`) holds dates or
    durations, else None."""
    if dtype.kind in "biuf":  # numbers (the common case, decided without pandas' checks)
        return None
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "timedelta"
    if isinstance(dtype, pd.PeriodDtype):
        return "period"
    if pd.api.types.is_object_dtype(dtype):  # e.g. datetime.date objects
        return _INFERRED_TEMPORAL.get(pd.api.types.infer_dtype(X.iloc[:, j], skipna=True))
    return None


def _target_name(y) -> str | None:
    """The name of the target `y` (a pandas Series' name, a one-column DataFrame's column),
    which plots and explanations name the output by; None for an unnamed one."""
    name = getattr(y, "name", None)
    if name is None and isinstance(y, pd.DataFrame) and y.shape[1] == 1:
        name = y.columns[0]
    return None if name is None else str(name)


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
    for j, (name, dtype) in enumerate(zip(columns, X.dtypes.tolist())):
        if dtype.kind == "c":
            raise PilidError(_complex_message(repr(name), name))
        kind = _temporal_kind(X, j, dtype)
        if kind is not None:
            fix = _TEMPORAL_FIX[kind].format(col=repr(name))
            raise PilidError(
                f"column {name!r} has {kind} dtype; convert it to numbers (e.g. {fix}) before fit"
            )


def _complex_message(where: str, name) -> str:
    """The one line for a column of complex numbers (`where` names it)."""
    col = f"X[{name!r}]" if not isinstance(name, int) else f"X[:, {name}]"
    return (  # scikit-learn's own words first: its estimator checks look for them
        f"Complex data not supported: column {where} holds complex numbers; pilid takes real "
        "ones: pass the parts as two "
        f"columns (e.g. {col}.real and {col}.imag) or its modulus (abs({col}))"
    )


def _mostly_numbers(X: pd.DataFrame, j: int) -> str | None:
    """The warning for text column `j` of a fit's `X` whose present values are numbers but
    for a few (`MOSTLY_NUMBERS`), or None."""
    col = X.iloc[:, j]
    if isinstance(col.dtype, pd.CategoricalDtype) or col.dtype.kind == "b":
        return None
    present = col.dropna()
    if present.empty:
        return None
    values = present.astype(object)
    numbers = pd.to_numeric(values.astype(str).str.strip(), errors="coerce")
    if numbers.notna().all() or numbers.notna().mean() < MOSTLY_NUMBERS:
        return None
    stray = pd.unique(values[numbers.isna().to_numpy()])
    name = X.columns[j]
    return (
        f"column {name!r} holds numbers but for {int(numbers.isna().sum())} value(s) "
        f"({_listed(stray, 3)}), so it is read as text: one level per distinct value "
        f"({values.nunique()} levels); if it is numeric, convert it before fit: X[{name!r}] = "
        f"pd.to_numeric(X[{name!r}], errors='coerce') (NaN is a missing value)"
    )


#: How many names or values a one-line message lists before "and N more".
LISTED = 5
#: Strings that numpy reads as NaN (a missing value, not a refused value).
_NAN_TEXT = ("nan", "+nan", "-nan")


def _listed(items, limit: int = LISTED) -> str:
    """``'a', 'b' and 3 more``: the first `limit` of `items` (as Python writes them)."""
    items = [v.item() if isinstance(v, np.generic) else v for v in items]
    shown = ", ".join(repr(v) for v in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _not_numbers(X) -> tuple[int, np.ndarray, int] | None:
    """The first column of `X` (a DataFrame or an array) with values that are not numbers:
    (its position, those values once each, the rows holding them); None when there is none.
    Numeric columns (and the categorical ones, already codes) are skipped; a value of a type
    that cannot be tried (a dict) is left to numpy's own error."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
    for j in range(frame.shape[1]):
        col = frame.iloc[:, j]
        if pd.api.types.is_numeric_dtype(col.dtype) and not isinstance(
            col.dtype, pd.CategoricalDtype
        ):
            continue
        values = col.astype(object)
        try:
            numbers = pd.to_numeric(values, errors="coerce")
        except (TypeError, ValueError):
            continue
        text = values.astype(str).str.strip().str.lower()
        bad = (values.notna() & numbers.isna() & ~text.isin(_NAN_TEXT)).to_numpy()
        if bad.any():
            return j, pd.unique(values[bad]), int(bad.sum())
    return None


def _frame_floats(est, X) -> np.ndarray | None:
    """At prediction, a coded frame whose columns are all numbers as float64 (n, m), its names
    and width checked as scikit-learn's `validate_data` checks them, without its conversion's
    overhead (the same numbers: pandas' missing values as NaN); None for any other input, which
    `validate_data` converts or refuses in its own words."""
    if not isinstance(X, pd.DataFrame) or X.shape[0] == 0:
        return None
    if not all(pd.api.types.is_numeric_dtype(t) for t in X.dtypes.tolist()):
        return None
    validate_data(est, X, reset=False, skip_check_array=True)
    return X.to_numpy(dtype=np.float64, na_value=np.nan)


class InputMixin:
    """X and y of the neural estimators (fit and predict); see the module docstring."""

    def _encode_frame(self, X, fit: bool):
        """Turn non-numeric / category columns of a DataFrame into codes (Definition 1). At
        prediction an array for a model fitted on a frame with text columns is read as that
        frame, by position."""
        if not fit and not hasattr(X, "columns") and getattr(self, "categories_", None):
            arr = np.asarray(X, dtype=object)
            names = self._feature_names()
            if arr.ndim == 2 and arr.shape[1] == len(names):
                X = pd.DataFrame(arr, columns=getattr(self, "feature_names_in_", names))
        if not hasattr(X, "dtypes") or not hasattr(X, "columns"):
            if fit:
                self.categories_, self.infrequent_categories_ = {}, {}
            if getattr(getattr(X, "dtype", None), "kind", "") in ("M", "m"):
                raise PilidError(
                    "X holds dates or durations (numpy datetime64/timedelta64); convert them to "
                    "numbers (e.g. days since a date) before calling the estimator"
                )
            return X, np.zeros(0, dtype=bool)
        if isinstance(X, pd.DataFrame):
            _check_frame(X)
            if not fit:
                X = self._align_columns(X)
        auto = np.array([_is_categorical_dtype(t) for t in X.dtypes], dtype=bool)
        if fit:
            self.categories_ = {}
            for j in np.flatnonzero(auto):
                stray = _mostly_numbers(X, int(j))
                if stray is not None:
                    warnings.warn(stray, MostlyNumbersWarning, stacklevel=4)
                col = X.iloc[:, j]
                cats = (
                    col.cat.categories
                    if isinstance(col.dtype, pd.CategoricalDtype)
                    else pd.Categorical(col.dropna()).categories
                )
                self.categories_[int(j)] = list(cats)
            self._merge_infrequent(X)
        if not self.categories_ and not auto.any():
            return X, auto
        X = X.copy(deep=False)  # the coded columns replace their own (`isetitem`), not X's
        unseen = []
        infrequent = getattr(self, "infrequent_categories_", {})
        for j, cats in self.categories_.items():
            if j >= X.shape[1]:
                continue
            col = X.iloc[:, j]
            codes = pd.Index(cats).get_indexer(col).astype(np.float64)  # -1: unseen or NaN
            if j in infrequent:  # the merged level's code (`_merge_infrequent`)
                codes[col.isin(infrequent[j]).to_numpy()] = len(cats) - 1
            bad = codes < 0
            if bad.any():
                na = col.isna().to_numpy()
                codes[bad & na] = np.nan  # a missing value
                new = bad & ~na
                if new.any():  # a category not seen in fit
                    codes[new] = UNSEEN_CODE
                    levels = pd.unique(col[new].astype(object))
                    shown = ", ".join(repr(v) for v in levels[:5])
                    more = f" and {len(levels) - 5} more" if len(levels) > 5 else ""
                    unseen.append(f"{shown}{more} in column {X.columns[j]!r}")
            X.isetitem(j, codes)
        if unseen:
            warnings.warn(
                f"{type(self).__name__}: categories not seen in fit ({'; '.join(unseen)}) get "
                "their feature's average contribution (0); refit with them to learn their own",
                UnseenCategoryWarning,
                stacklevel=4,
            )
        return X, auto

    def _align_columns(self, X: pd.DataFrame) -> pd.DataFrame:
        """The columns of `X` (at prediction) in the fit's order, by name (see the module).

        `X` as it is when its columns are those of fit in their order, or when there are no
        names to go by (a model fitted on an array, columns that are not all strings: read by
        position); its columns reordered when they are those of fit in another order. A
        column of fit that `X` lacks, or one that fit did not see, raises a one-line
        `PilidError` naming them.
        """
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is None or not all(isinstance(c, str) for c in X.columns):
            return X
        names = [str(c) for c in fitted]
        columns = list(X.columns)
        if columns == names:
            return X
        have, known = set(columns), set(names)
        lacking = [c for c in names if c not in have]
        unseen = [c for c in columns if c not in known]
        if not lacking and not unseen:
            return X[names]  # the fit's columns in another order: by name
        model = type(self).__name__

        def columns(found: list) -> str:
            return f"column{'s' if len(found) > 1 else ''} {_listed(found)}"

        parts = []
        if lacking:
            parts.append(f"lacks {columns(lacking)} of fit")
        if unseen:
            parts.append(f"has {columns(unseen)} that fit did not see")
        if lacking and unseen:
            fix = (
                f"rename or drop them: {model} was fitted on the columns {_listed(names)} "
                "(feature_names_in_)"
            )
        elif lacking:
            fix = (
                f"add {'them' if len(lacking) > 1 else 'it'} ({model} was fitted on the "
                f"{len(names)} columns of feature_names_in_; a column of NaN gets the "
                "feature's average contribution)"
            )
        else:
            fix = f"drop {'them' if len(unseen) > 1 else 'it'}, e.g. X[model.feature_names_in_]"
        raise PilidError(f"X {' and '.join(parts)}; {fix}")

    def _merge_infrequent(self, X: pd.DataFrame) -> None:
        """Merge levels of the category / string columns of the fit frame `X` into one: none
        (``infrequent_categories_`` is {}). A subclass that merges the levels of column j lists
        them in ``infrequent_categories_[j]`` and ends ``categories_[j]`` with
        `INFREQUENT_LEVEL`, whose code they then take at fit and at prediction."""
        self.infrequent_categories_ = {}

    def _categorical_mask(self, auto: np.ndarray, n_features: int) -> np.ndarray:
        """Categorical columns: those of category/string dtype and `categorical_features`."""
        mask = categorical_mask(
            getattr(self, "categorical_features", None),
            n_features,
            getattr(self, "feature_names_in_", None),
        )
        if auto.size == n_features:
            mask |= auto
        return mask

    def _validate_X(self, X, fit: bool) -> np.ndarray:
        """X as float64 (n, m) for fit or prediction: frames encoded (`_encode_frame`; at
        prediction a DataFrame's columns are read by name, `_align_columns`), the column count
        checked, scikit-learn's `validate_data` (feature names, ``n_features_in_``), inf refused
        and NaN kept (a missing value). A value that is not a number raises a one-line
        `PilidError` naming its column and the value."""
        X, auto = self._encode_frame(X, fit)
        expected = getattr(self, "n_features_in_", None)
        shape = getattr(X, "shape", None)  # arrays and frames; sklearn checks other inputs
        if not fit and expected is not None and shape is not None and len(shape) == 2:
            if shape[1] != expected:
                raise PilidError(
                    f"X has {shape[1]} features, but {type(self).__name__} is expecting "
                    f"{expected} features as input; pass the {expected} columns used in fit, "
                    "in their order"
                )
        if shape is not None and not isinstance(X, pd.DataFrame) and np.iscomplexobj(X):
            arr = np.asarray(X)
            j = int(np.flatnonzero(np.any(arr.imag != 0, axis=0))[:1].sum()) if arr.ndim == 2 else 0
            raise PilidError(_complex_message(f"{j} of X", j))
        floats = None if fit else _frame_floats(self, X)  # prediction's quick path
        try:
            if floats is not None:
                X = floats
            else:
                X = validate_data(
                    self,
                    X,
                    reset=fit,
                    dtype=np.float64,
                    ensure_all_finite=False,
                    ensure_min_samples=1,
                )
        except ValueError:
            found = _not_numbers(X) if shape is not None and len(shape) == 2 else None
            if found is None:
                raise
            raise PilidError(self._not_numbers_message(X, *found, fit=fit)) from None
        inf = np.isinf(X)
        for j in getattr(self, "categories_", {}):  # +inf there: a category not seen in fit
            if j < X.shape[1]:
                inf[:, j] &= X[:, j] != UNSEEN_CODE
        if inf.any():
            names = self._column_labels(X.shape[1])
            columns = ", ".join(repr(names[j]) for j in np.flatnonzero(inf.any(0))[:5])
            raise PilidError(
                f"X contains inf in {int(inf.sum())} entries (column(s) {columns}); replace "
                "them (NaN is taken as a missing value) before calling the estimator"
            )
        nan = np.isnan(X)
        if fit:
            self._auto_categorical = auto
            empty = nan.all(axis=0)
            if empty.any():
                names = self._column_labels(X.shape[1])
                raise PilidError(
                    f"column {names[int(np.flatnonzero(empty)[0])]!r} holds only missing values "
                    "(NaN); drop it before fit"
                )
        elif nan.any():
            missing = getattr(self, "missing_", None)
            seen = np.zeros(X.shape[1], dtype=bool) if missing is None else missing
            new = nan.any(axis=0) & ~np.asarray(seen, dtype=bool)
            if new.any():
                names = self._column_labels(X.shape[1])
                listed = ", ".join(repr(names[j]) for j in np.flatnonzero(new))
                warnings.warn(
                    f"{type(self).__name__}: NaN in feature(s) {listed}, which had no missing "
                    "values in fit; they get that feature's average contribution (0). Refit "
                    "with missing values in those features to learn their own contribution",
                    UnseenMissingWarning,
                    stacklevel=3,
                )
        return X

    def _not_numbers_message(self, X, j: int, values, rows: int, fit: bool) -> str:
        """The one line for column `j` of `X` holding `values` (in `rows` rows), not numbers."""
        named = isinstance(X, pd.DataFrame)
        name = X.columns[j] if named else None
        where = f"column {name!r}" if named else f"column {j} of X"
        what = f"{_listed(values, 3)} in {rows} row{'s' if rows > 1 else ''}"
        if named:  # fit reads such a frame column as categorical: this is a prediction
            fix = (
                f"it was numeric in fit: convert it, e.g. X[{name!r}] = "
                f"pd.to_numeric(X[{name!r}], errors='coerce') (NaN is a missing value)"
            )
        elif fit:
            fix = (
                "pass numbers (NaN for a missing value), or a DataFrame, whose string columns "
                "are categorical features"
            )
        else:
            fix = "pass numbers there, as in fit (NaN for a missing value)"
        return f"{where} holds {what}, not a number; {fix}"

    def _column_labels(self, m: int) -> list[str]:
        """Column names for messages: ``feature_names_in_``, or x0, x1, ... for arrays."""
        names = getattr(self, "feature_names_in_", None)
        if names is not None and len(names) == m:
            return [str(c) for c in names]
        return [f"x{j}" for j in range(m)]

    def _validate_y(self, y, n: int) -> np.ndarray:
        """The target as float64: 0/1 for classification (sets `classes_`), else the values."""
        if y is None:
            raise PilidError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        self.target_name_ = _target_name(y)
        y = np.asarray(y)
        if not (y.ndim == 1 or (y.ndim == 2 and y.shape[1] == 1)):
            raise PilidError(f"y must be one-dimensional; got shape {y.shape}")
        y = column_or_1d(y, warn=True)  # a column vector: DataConversionWarning, raveled
        if y.shape[0] != n:
            raise PilidError(f"X has {n} rows but y has {y.shape[0]}; pass one target per row")
        if self._task == "classification":  # K >= 2 classes (`pilid.models.multiclass`)
            return class_target(self, y).astype(np.float64)
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise PilidError("y must be numeric for regression") from None
        if not np.isfinite(y).all():
            raise PilidError("y contains NaN or inf; drop or impute those targets before fit")
        with np.errstate(over="ignore", invalid="ignore"):
            spread = np.square(y - y.mean()).sum()
        if not np.isfinite(spread):
            raise PilidError(
                f"y reaches {np.abs(y).max():.3g}, too large to standardise (its squares "
                "overflow float64); rescale y before fit (e.g. y / 1e100) and scale the "
                "predictions back"
            )
        return y

    def _feature_names(self) -> list[str]:
        """The fit data's column names (`x0`, `x1`, ... for arrays without names)."""
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(c) for c in names]
        return [f"x{j}" for j in range(self.n_features_in_)]

    def _index(self, feature) -> int:
        """The column position of `feature` (a position, negative ones too, or a name)."""
        names = self._feature_names()
        if isinstance(feature, numbers.Integral) and not isinstance(feature, bool):
            if -len(names) <= feature < len(names):
                return int(feature) % len(names)
        elif isinstance(feature, str) and feature in names:
            return names.index(feature)
        raise PilidError(f"unknown feature {feature!r}; use an index < {len(names)} or a name")

    def _check_fitted_X(self, X) -> np.ndarray:
        check_is_fitted(self, "module_")
        return self._validate_X(X, fit=False)
