"""Baselines of the paper's Section 4 that are not neural networks of our own.

- SVM, random forest and linear/logistic regression are scikit-learn's own estimators (the SVM
  classifier gains a `predict_proba`: `SVMClassifier`); the registry (`pilid.models.registry`)
  builds them with the settings of `conf/model/<name>.yaml`.
- `GAMRegressor` / `GAMClassifier`: a GAM (Hastie & Tibshirani 1986), y = b + sum_j f_j(x_j) with
  penalised B-splines, fit by pygam; a scikit-learn-compatible adapter over pygam's
  `LinearGAM` / `LogisticGAM` (pygam 0.12 fails the tag checks of scikit-learn >= 1.7).
- `GA2MRegressor` / `GA2MClassifier`: GA2M (Lou et al. 2013), y = b + sum_j f_j(x_j) +
  sum_{(j,k)} f_jk(x_j, x_k), fit by InterpretML's explainable boosting machine with a fixed
  number of pairwise interaction terms.
- `GARegressor` / `GAClassifier`: global additive explanation by distillation (Tan et al. 2018):
  an MLP teacher is trained on the data, then an additive student sum_j f_j(x_j) is fit to the
  teacher's outputs (logits for classification); the student's prediction is the output.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from pilid.errors import PilidError
from pilid.models.params import ParamError, check_whole, is_real, is_whole

__all__ = [
    "SVMClassifier",
    "GAMRegressor",
    "GAMClassifier",
    "GA2MRegressor",
    "GA2MClassifier",
    "GARegressor",
    "GAClassifier",
    "categorical_mask",
]

DEFAULT_LAM_GRID = (1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3)
MLP_HIDDEN_LAYERS = (100, 200, 400, 400, 200, 100)


def categorical_mask(categorical_features, n_features: int, feature_names=None) -> np.ndarray:
    """Boolean mask (n_features,) from indices, names or a boolean mask (None: no categoricals)."""
    mask = np.zeros(n_features, dtype=bool)
    if categorical_features is None:
        return mask
    values = np.asarray(list(categorical_features), dtype=object)
    if values.size == 0:
        return mask
    if all(isinstance(v, bool | np.bool_) for v in values):
        if values.size != n_features:
            raise PilidError(
                f"categorical_features is a mask of {values.size} entries but X has {n_features} "
                "columns; pass one boolean per column or a list of column indices"
            )
        return values.astype(bool)
    if all(isinstance(v, str) for v in values):
        names = [] if feature_names is None else [str(n) for n in feature_names]
        unknown = [v for v in values if v not in names]
        if unknown:
            raise PilidError(
                f"categorical_features names {unknown} are not columns of X; pass column indices "
                "or fit on a DataFrame with these columns"
            )
        mask[[names.index(v) for v in values]] = True
        return mask
    try:
        index = values.astype(int)
    except (TypeError, ValueError):
        raise PilidError(
            f"categorical_features={list(values)!r} is invalid; pass column indices, column "
            "names or a boolean mask"
        ) from None
    if np.any(index != values.astype(float)) or np.any(
        (index < -n_features) | (index >= n_features)
    ):
        raise PilidError(
            f"categorical_features={list(values)!r} has indices outside 0..{n_features - 1}; "
            "pass valid column indices"
        )
    mask[index] = True
    return mask


def _n_unique(X: np.ndarray) -> np.ndarray:
    """Number of distinct values in each column of X."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1], dtype=int)
    return 1 + np.count_nonzero(np.diff(np.sort(X, axis=0), axis=0), axis=0)


def _binary_target(estimator, y) -> np.ndarray:
    """Store `classes_` and return y coded 0/1 (the second class is the positive one)."""
    check_classification_targets(y)
    classes, coded = np.unique(y, return_inverse=True)
    if classes.size != 2:
        raise PilidError(
            f"Only binary classification is supported: {type(estimator).__name__} got "
            f"{classes.size} class(es) {classes[:5].tolist()}; pass labels with exactly two values"
        )
    estimator.classes_ = classes
    return coded.astype(np.int64)


def _proba_from_logit(z: np.ndarray) -> np.ndarray:
    """[1 - p, p] with p = sigmoid(z): the class probabilities of a binary logit."""
    p = expit(np.asarray(z, dtype=np.float64))
    return np.column_stack([1.0 - p, p])


# ----------------------------------------------------------------------------------------------
# SVM classifier with predict_proba
# ----------------------------------------------------------------------------------------------


class _LogitClassifierMixin(ClassifierMixin):
    """Binary classifier whose `decision_function` is the logit: probabilities and labels."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def predict_proba(self, X) -> np.ndarray:
        return _proba_from_logit(self.decision_function(X))

    def predict(self, X) -> np.ndarray:
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


class SVMClassifier(SVC):
    """scikit-learn's `SVC` (RBF kernel by default) with `predict_proba` = sigmoid(margin).

    The contract asks every classifier for `predict_proba`; scikit-learn 1.9 deprecates SVC's
    Platt scaling (an internal 5-fold cross-validation: five extra fits). This score is the
    logistic function of `decision_function`, a monotone map of the margin, NOT a calibrated
    probability: it gives the SVM's AUC exactly, nothing more.
    """

    def predict_proba(self, X) -> np.ndarray:
        margin = self.decision_function(X)
        if margin.ndim != 1:
            raise PilidError(
                f"SVMClassifier.predict_proba needs a binary problem; this one has "
                f"{len(self.classes_)} classes: use decision_function"
            )
        return _proba_from_logit(margin)


# ----------------------------------------------------------------------------------------------
# GAM: pygam adapter
# ----------------------------------------------------------------------------------------------


CLIP_QUANTILE = 0.001  # spline columns are clipped to their training 0.1% and 99.9% quantiles


class _GAMBase(BaseEstimator):
    """Shared fitting code of the GAM adapter (Hastie & Tibshirani 1986; Lou et al. 2012).

    The additive model is b + sum_j f_j(x_j): a penalised cubic B-spline f_j (pygam `s(j)`) for each
    numeric column, a linear term (pygam `l(j)`, exact for a 0/1 column) for each categorical
    (one-hot indicator) column and each column with two distinct values; constant columns get no
    term. One smoothing strength lam, shared by all terms, is chosen from `lam_grid` by pygam's
    `gridsearch` on the training data (GCV for regression, UBRE for classification); a grid of
    one value fits that lam directly.
    """

    _pygam_class = "LinearGAM"

    def __init__(
        self,
        n_splines: int = 20,
        spline_order: int = 3,
        lam_grid: Sequence[float] | None = DEFAULT_LAM_GRID,
        max_iter: int = 100,
        tol: float = 1e-4,
        categorical_features=None,
        verbose: bool = False,
    ):
        self.n_splines = n_splines
        self.spline_order = spline_order
        self.lam_grid = lam_grid
        self.max_iter = max_iter
        self.tol = tol
        self.categorical_features = categorical_features
        self.verbose = verbose

    def _check_params(self) -> np.ndarray:
        """Check every hyper-parameter as pygam would at fit; returns the lam grid."""
        order = self.spline_order
        if isinstance(order, bool) or not isinstance(order, int | np.integer) or order < 0:
            raise ParamError(
                "spline_order",
                order,
                "use a whole number >= 0 (3: cubic)",
                f"spline_order={order!r} is invalid; use a whole number >= 0 (3: cubic)",
            )
        k = self.n_splines
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k <= order:
            raise ParamError(
                "n_splines",
                k,
                f"use a whole number > spline_order={order} (e.g. 20)",
                f"n_splines={k!r} is invalid; use a whole number > spline_order={order} (e.g. 20)",
            )
        grid = DEFAULT_LAM_GRID if self.lam_grid is None else self.lam_grid
        try:
            if isinstance(grid, str):
                raise TypeError(grid)
            lams = np.asarray(list(grid), dtype=np.float64)
        except (TypeError, ValueError):
            lams = np.array([np.nan])
        if lams.ndim != 1 or lams.size == 0 or not np.all(np.isfinite(lams) & (lams > 0)):
            raise ParamError(
                "lam_grid",
                grid,
                "pass a list of positive smoothing strengths such as [0.001, 0.1, 10, 1000]",
            )
        check_whole("max_iter", self.max_iter, 1, integral_float=True)  # pygam: an int >= 1
        if not (is_real(self.tol) and 0 <= self.tol < np.inf):
            raise ParamError("tol", self.tol, "use a number >= 0 such as 0.0001")
        return lams

    def _terms(self, X: np.ndarray):
        from pygam import l, s
        from pygam.terms import TermList

        names = getattr(self, "feature_names_in_", None)
        categorical = categorical_mask(self.categorical_features, X.shape[1], names)
        n_unique = _n_unique(X)
        terms = []
        kinds = []
        for j in range(X.shape[1]):  # one term per feature (not a loop over samples)
            if n_unique[j] <= 1:
                kinds.append("none")
            elif categorical[j] or n_unique[j] == 2:
                terms.append(l(j))
                kinds.append("linear")
            else:
                terms.append(
                    s(j, n_splines=int(self.n_splines), spline_order=int(self.spline_order))
                )
                kinds.append("spline")
        if not terms:
            raise PilidError(
                "every column of X is constant; a GAM needs at least one varying feature"
            )
        self.term_kinds_ = np.array(kinds)
        return TermList(*terms)

    def _fit_gam(self, X: np.ndarray, y: np.ndarray):
        import pygam

        lams = self._check_params()
        if X.shape[0] < 2:
            raise PilidError(f"a GAM needs at least 2 rows; got n_samples={X.shape[0]}")
        gam = getattr(pygam, self._pygam_class)(
            self._terms(X), max_iter=int(self.max_iter), tol=float(self.tol), verbose=False
        )
        # pygam spaces the spline knots evenly over each column's range: one extreme value (skill's
        # TotalHours = 1,000,000) leaves almost every row in the first piece and every fit fails.
        # Spline columns are clipped to their training 0.1-99.9% quantiles, here and at predict.
        spline = self.term_kinds_ == "spline"
        self.clip_low_ = np.where(spline, np.quantile(X, CLIP_QUANTILE, axis=0), -np.inf)
        self.clip_high_ = np.where(spline, np.quantile(X, 1 - CLIP_QUANTILE, axis=0), np.inf)
        X = np.clip(X, self.clip_low_, self.clip_high_)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # Separable classes drive pygam's IRLS weights to 0/inf along the way; the chosen
            # model is still finite. Its warnings say nothing the user can act on.
            warnings.simplefilter("ignore", RuntimeWarning)
            if lams.size == 1:
                gam.lam = float(lams[0])
                gam.fit(X, y)
            else:
                try:
                    gam.gridsearch(X, y, lam=lams, progress=bool(self.verbose))
                except AttributeError as error:  # pygam: no lam of the grid gave a model
                    raise PilidError(
                        f"the GAM failed to fit for every lam in {lams.tolist()}; try a "
                        "different lam_grid or fewer n_splines"
                    ) from error
        self.gam_ = gam
        self.n_iter_ = len(gam.logs_.get("diffs", ()))
        self.lam_ = float(np.ravel(gam.lam[0])[0])
        return self

    def _linear_predictor(self, X) -> np.ndarray:
        check_is_fitted(self, "gam_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        X = np.clip(X, self.clip_low_, self.clip_high_)
        return np.asarray(self.gam_._linear_predictor(X), dtype=np.float64)


class GAMRegressor(RegressorMixin, _GAMBase):
    """GAM regression y = b + sum_j f_j(x_j) + noise: pygam `LinearGAM` (identity link).

    Parameters
    ----------
    n_splines, spline_order : B-spline basis size and degree of each numeric term.
    lam_grid : smoothing strengths searched by pygam `gridsearch` (GCV); one value: no search.
    max_iter, tol : pygam's P-IRLS iterations and tolerance.
    categorical_features : indices, names or boolean mask of categorical (indicator) columns;
        they get linear terms.
    """

    _pygam_class = "LinearGAM"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        return self._fit_gam(X, np.asarray(y, dtype=np.float64))

    def predict(self, X) -> np.ndarray:
        return self._linear_predictor(X)


class GAMClassifier(_LogitClassifierMixin, _GAMBase):
    """GAM binary classification logit P(y=1|x) = b + sum_j f_j(x_j): pygam `LogisticGAM`.

    Parameters as `GAMRegressor`; smoothing is chosen by UBRE (pygam's objective for a known
    scale). `decision_function` is the logit; `predict_proba[:, 1]` is P(classes_[1]).
    """

    _pygam_class = "LogisticGAM"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        return self._fit_gam(X, _binary_target(self, y))

    def decision_function(self, X) -> np.ndarray:
        return self._linear_predictor(X)


# ----------------------------------------------------------------------------------------------
# GA2M: explainable boosting machine with pairwise interactions
# ----------------------------------------------------------------------------------------------


def _int_or_none(value):
    return None if value is None else int(value)


class _GA2MBase(BaseEstimator):
    """GA2M (Lou et al. 2013) by InterpretML's explainable boosting machine (EBM).

    y (or the logit) = b + sum_j f_j(x_j) + sum over `interactions` pairs f_jk(x_j, x_k): shape
    functions are bagged, cyclically boosted shallow trees; the pairs are ranked by FAST on the
    residuals of the main-effect model. `interactions=0` gives the additive model alone (a GAM).
    The defaults are chosen for speed on 2-16 cores (EBM's own, 14 outer bags and 5x/3x m pairs,
    take minutes to hours on 50 features); `None` for `learning_rate`, `smoothing_rounds` and
    `interaction_smoothing_rounds` keeps EBM's task defaults.
    """

    _ebm_class = "ExplainableBoostingRegressor"

    def __init__(
        self,
        interactions: int = 10,
        outer_bags: int = 8,
        inner_bags: int = 0,
        learning_rate: float | None = None,
        max_bins: int = 1024,
        max_interaction_bins: int = 64,
        max_rounds: int = 50000,
        early_stopping_rounds: int = 100,
        validation_size: float = 0.15,
        min_samples_leaf: int = 4,
        smoothing_rounds: int | None = None,
        interaction_smoothing_rounds: int | None = None,
        n_jobs: int = -1,
        random_state: int | None = None,
        categorical_features=None,
    ):
        self.interactions = interactions
        self.outer_bags = outer_bags
        self.inner_bags = inner_bags
        self.learning_rate = learning_rate
        self.max_bins = max_bins
        self.max_interaction_bins = max_interaction_bins
        self.max_rounds = max_rounds
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_size = validation_size
        self.min_samples_leaf = min_samples_leaf
        self.smoothing_rounds = smoothing_rounds
        self.interaction_smoothing_rounds = interaction_smoothing_rounds
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.categorical_features = categorical_features

    def _check_params(self) -> None:
        """Check every hyper-parameter as EBM would at fit (interpret-core 0.7.8)."""
        hints = {"outer_bags": "use a whole number >= 1", "n_jobs": "use -1 (all cores) or >= 1"}
        for key in ("outer_bags", "n_jobs"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value == 0:
                raise ParamError(
                    key,
                    value,
                    hints[key],
                    f"{key}={value!r} is invalid; use a whole number (outer_bags >= 1, n_jobs >= 1 "
                    "or -1 for all cores)",
                )
        if self.outer_bags < 1:
            raise ParamError("outer_bags", self.outer_bags, "use a whole number >= 1")
        self._check_interactions()
        for key, low in (
            ("inner_bags", 0),
            ("max_rounds", 0),
            ("early_stopping_rounds", 0),
            ("min_samples_leaf", 0),
            ("max_bins", 3),  # one bin for missing, one for unseen values, one or more for data
            ("max_interaction_bins", 3),
        ):
            check_whole(key, getattr(self, key), low, integral_float=True)
        for key in ("smoothing_rounds", "interaction_smoothing_rounds"):
            value = getattr(self, key)
            if value is not None:
                check_whole(key, value, 0, integral_float=True)
        lr = self.learning_rate
        if lr is not None and not (is_real(lr) and 0 < lr < np.inf):
            raise ParamError(
                "learning_rate", lr, "use a positive number such as 0.01, or None (EBM's default)"
            )
        size = self.validation_size
        if not (is_real(size) and 0 <= size < np.inf and (size < 1 or is_whole(size, True))):
            raise ParamError(
                "validation_size",
                size,
                "use a fraction in [0, 1) of each outer bag, or a whole number of rows",
            )

    def _check_interactions(self) -> None:
        inter = self.interactions
        if inter is None or isinstance(inter, list | tuple):
            return  # None: no pairs; a list of feature pairs is checked by EBM against the data
        if isinstance(inter, str):
            text = inter.strip()
            try:
                times = float(text[:-1]) if text.lower().endswith("x") else np.nan
            except ValueError:
                times = np.nan
            ok = 0 <= times < np.inf
        else:
            ok = (is_whole(inter) and inter >= 0) or (
                is_real(inter) and not is_whole(inter) and 0 <= inter < 1
            )
        if not ok:
            raise ParamError(
                "interactions",
                inter,
                "use a whole number >= 0 of pairs, a fraction in [0, 1) of the features, or a "
                "string such as '3x' (3 times the number of features)",
            )

    def _ebm(self, n_features: int):
        from interpret import glassbox

        self._check_params()
        inter = self.interactions
        if is_whole(inter):
            inter = int(inter)
        names = getattr(self, "feature_names_in_", None)
        categorical = categorical_mask(self.categorical_features, n_features, names)
        feature_types = ["nominal" if c else None for c in categorical]
        optional = {
            "learning_rate": self.learning_rate,
            "smoothing_rounds": _int_or_none(self.smoothing_rounds),
            "interaction_smoothing_rounds": _int_or_none(self.interaction_smoothing_rounds),
        }
        seed = self.random_state
        if isinstance(seed, np.random.RandomState):
            seed = int(seed.randint(np.iinfo(np.int32).max))
        return getattr(glassbox, self._ebm_class)(
            feature_names=None if names is None else [str(n) for n in names],
            feature_types=feature_types,
            interactions=inter,
            outer_bags=int(self.outer_bags),
            inner_bags=int(self.inner_bags),
            max_bins=int(self.max_bins),
            max_interaction_bins=int(self.max_interaction_bins),
            max_rounds=int(self.max_rounds),
            early_stopping_rounds=int(self.early_stopping_rounds),
            validation_size=self.validation_size,
            min_samples_leaf=int(self.min_samples_leaf),
            n_jobs=int(self.n_jobs),
            random_state=seed,
            **{k: v for k, v in optional.items() if v is not None},
        )

    def _fit_ebm(self, X: np.ndarray, y: np.ndarray):
        ebm = self._ebm(X.shape[1])
        logger = logging.getLogger("interpret")
        level = logger.level
        if level == logging.NOTSET:  # not configured by the user: hide EBM's per-fit INFO lines
            logger.setLevel(logging.WARNING)
        try:
            ebm.fit(X, y)
        finally:
            logger.setLevel(level)
        self.ebm_ = ebm
        return self

    def _X(self, X) -> np.ndarray:
        check_is_fitted(self, "ebm_")
        return validate_data(self, X, reset=False, dtype=np.float64)

    def term_names(self) -> list[str]:
        """Names of the fitted terms: features, then the chosen pairs as 'a & b'."""
        check_is_fitted(self, "ebm_")
        return list(self.ebm_.term_names_)


class GA2MRegressor(RegressorMixin, _GA2MBase):
    """GA2M regression (Lou et al. 2013) via `ExplainableBoostingRegressor` (RMSE boosting)."""

    _ebm_class = "ExplainableBoostingRegressor"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        return self._fit_ebm(X, np.asarray(y, dtype=np.float64))

    def predict(self, X) -> np.ndarray:
        X = self._X(X)
        return np.asarray(self.ebm_.predict(X), dtype=np.float64)


class GA2MClassifier(_LogitClassifierMixin, _GA2MBase):
    """GA2M binary classification (Lou et al. 2013) via `ExplainableBoostingClassifier`.

    `decision_function` is the additive logit; `predict_proba[:, 1]` is P(classes_[1]).
    """

    _ebm_class = "ExplainableBoostingClassifier"

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        return self._fit_ebm(X, _binary_target(self, y))

    def decision_function(self, X) -> np.ndarray:
        X = self._X(X)
        return np.asarray(self.ebm_.decision_function(X), dtype=np.float64)


# ----------------------------------------------------------------------------------------------
# GA: global additive explanation by distillation
# ----------------------------------------------------------------------------------------------


class _GABase(BaseEstimator):
    """Global additive explanation by model distillation (Tan et al. 2018).

    1. Teacher: an MLP (`pilid.models.estimators.MLPRegressor` / `MLPClassifier`, the paper's MLP:
       `hidden_layers`, `sigma`, `reg`, `lam` and the training settings below), or a copy of any
       scikit-learn estimator passed as `teacher`, trained on (X, y).
    2. Student: the additive model g(x) = b + sum_j g_j(x_j), fit by least squares to the teacher's
       output on the same training rows: its prediction for regression, its logit for
       classification. `student="ebm"`: bagged boosted trees per feature (EBM with
       `interactions=0`, `student_outer_bags` bags; Tan et al.'s tree-based student);
       `student="gam"`: penalised cubic splines (`GAMRegressor`, `student_n_splines`).
    3. Output: the student's prediction (regression) or sigmoid of the student logit.

    After `fit`: `teacher_`, `student_`, and `fidelity_`, the R^2 of the student against the
    teacher's outputs on the training data.
    """

    def __init__(
        self,
        hidden_layers: Sequence[int] = MLP_HIDDEN_LAYERS,
        sigma: float = 0.05,
        reg: str = "l2",
        lam: float = 1e-5,
        epochs: int = 100,
        batch_size: int = 256,
        lr: float = 0.005,
        optimizer: str = "adam",
        patience: int | None = 10,
        val_fraction: float = 0.1,
        student: str = "ebm",
        student_outer_bags: int = 8,
        student_n_splines: int = 20,
        n_jobs: int = -1,
        random_state: int | None = None,
        device: str = "auto",
        verbose: bool = False,
        categorical_features=None,
        teacher=None,
    ):
        self.hidden_layers = hidden_layers
        self.sigma = sigma
        self.reg = reg
        self.lam = lam
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.optimizer = optimizer
        self.patience = patience
        self.val_fraction = val_fraction
        self.student = student
        self.student_outer_bags = student_outer_bags
        self.student_n_splines = student_n_splines
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.categorical_features = categorical_features
        self.teacher = teacher

    _TEACHER_KEYS = (
        "hidden_layers",
        "sigma",
        "reg",
        "lam",
        "epochs",
        "batch_size",
        "lr",
        "optimizer",
        "patience",
        "val_fraction",
        "random_state",
        "device",
        "verbose",
        "categorical_features",
    )

    def _make_teacher(self, classification: bool):
        if self.teacher is not None:
            return clone(self.teacher)
        from pilid.models import estimators

        cls = estimators.MLPClassifier if classification else estimators.MLPRegressor
        accepted = set(cls._get_param_names())
        kwargs = {k: getattr(self, k) for k in self._TEACHER_KEYS if k in accepted}
        return cls(**kwargs)

    _STUDENTS = ("ebm", "gam")

    def _check_params(self) -> None:
        """Check the teacher's and both students' hyper-parameters before anything trains."""
        if self.student not in self._STUDENTS:
            raise ParamError(
                "student",
                self.student,
                "use ebm or gam",
                f"student={self.student!r} is unknown; use 'ebm' or 'gam'",
            )
        if self.teacher is None:
            self._make_teacher(classification=False)._check_params()
        students = (
            (
                GA2MRegressor(
                    interactions=0, outer_bags=self.student_outer_bags, n_jobs=self.n_jobs
                ),
                {"outer_bags": "student_outer_bags"},
            ),
            (GAMRegressor(n_splines=self.student_n_splines), {"n_splines": "student_n_splines"}),
        )
        for student, keys in students:
            try:
                student._check_params()
            except ParamError as error:
                raise error.renamed(keys.get(error.key, error.key)) from None

    def _make_student(self):
        if self.student == "ebm":
            return GA2MRegressor(
                interactions=0,
                outer_bags=self.student_outer_bags,
                n_jobs=self.n_jobs,
                random_state=self.random_state,
                categorical_features=self.categorical_features,
            )
        if self.student == "gam":
            return GAMRegressor(
                n_splines=self.student_n_splines, categorical_features=self.categorical_features
            )
        raise ParamError(
            "student",
            self.student,
            "use ebm or gam",
            f"student={self.student!r} is unknown; use 'ebm' or 'gam'",
        )

    def _distil(self, X: np.ndarray, y: np.ndarray, classification: bool):
        self._check_params()  # before the teacher trains
        student = self._make_student()
        teacher = self._make_teacher(classification).fit(X, y)
        target = _teacher_logit(teacher, X) if classification else teacher.predict(X)
        target = np.asarray(target, dtype=np.float64).ravel()
        if not np.all(np.isfinite(target)):
            raise PilidError(
                "the GA teacher's outputs on the training data are not finite; the MLP diverged, "
                "lower lr or raise lam"
            )
        student.fit(X, target)
        fitted = student.predict(X)
        spread = np.var(target)
        self.teacher_ = teacher
        self.student_ = student
        self.fidelity_ = (
            float(1.0 - np.mean((fitted - target) ** 2) / spread) if spread > 0 else 1.0
        )
        return self

    def _student_output(self, X) -> np.ndarray:
        check_is_fitted(self, "student_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.asarray(self.student_.predict(X), dtype=np.float64)


def _teacher_logit(teacher, X: np.ndarray) -> np.ndarray:
    """The teacher's logit for the positive class (decision_function, else logit of P(y=1))."""
    if hasattr(teacher, "decision_function"):
        z = np.asarray(teacher.decision_function(X), dtype=np.float64)
        if z.ndim == 1:
            return z
    p = np.asarray(teacher.predict_proba(X), dtype=np.float64)[:, -1]
    p = np.clip(p, 1e-6, 1.0 - 1e-6)
    return np.log(p) - np.log1p(-p)


class GARegressor(RegressorMixin, _GABase):
    """GA by distillation (Tan et al. 2018), regression: the student fits the teacher's output."""

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        return self._distil(X, np.asarray(y, dtype=np.float64), classification=False)

    def predict(self, X) -> np.ndarray:
        return self._student_output(X)


class GAClassifier(_LogitClassifierMixin, _GABase):
    """GA by distillation (Tan et al. 2018), classification: the student fits the teacher's logits.

    `decision_function` is the student's additive logit; `predict_proba[:, 1]` its sigmoid.
    """

    def fit(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64)
        return self._distil(X, _binary_target(self, y), classification=True)

    def decision_function(self, X) -> np.ndarray:
        return self._student_output(X)
