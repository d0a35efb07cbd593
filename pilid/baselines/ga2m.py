"""The GA2M baseline (Lou et al. 2013): y = b + sum_j f_j(x_j) + sum_(j,k) f_jk(x_j, x_k).

`GA2MRegressor` / `GA2MClassifier` fit InterpretML's explainable boosting machine (EBM) with a
fixed number of pairwise interaction terms; `interactions=0` gives the additive model alone (GA's
tree-based student, `pilid.baselines.ga`).
"""

from __future__ import annotations

import logging

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, RealNotInt
from sklearn.utils.validation import check_is_fitted, validate_data

from pilid.models.inputs import binary_target, categorical_mask
from pilid.models.outputs import LogitClassifierMixin
from pilid.models.params import N_JOBS, Number, Satisfies, Whole, is_whole, validate_params
from pilid.models.sample_weight import check_weights

__all__ = ["GA2MClassifier", "GA2MRegressor"]


def _times_features(value) -> bool:
    """True for a string such as '3x' or '0.5x' (that many times the number of features)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return text.lower().endswith("x") and 0 <= float(text[:-1]) < np.inf


TIMES = Satisfies(_times_features, "a str such as '3x' (3 times the number of features)")


def _int_or_none(value):
    return None if value is None else int(value)


class GA2MBase(BaseEstimator):
    """GA2M (Lou et al. 2013) by InterpretML's explainable boosting machine (EBM).

    y (or the logit) = b + sum_j f_j(x_j) + sum over `interactions` pairs f_jk(x_j, x_k): shape
    functions are bagged, cyclically boosted shallow trees; the pairs are ranked by FAST on the
    residuals of the main-effect model. `interactions=0` gives the additive model alone (a GAM).
    The defaults are chosen for speed on 2-16 cores (EBM's own, 14 outer bags and 5x/3x m pairs,
    take minutes to hours on 50 features); `None` for `interactions`, `learning_rate`,
    `smoothing_rounds` and `interaction_smoothing_rounds` keeps EBM's task defaults (for
    `interactions`: 5x the number of features for regression, 3x for classification).

    ``fit(X, y, sample_weight)`` hands the weights to EBM's own ``fit(..., sample_weight)``
    (weighted boosting, weighted bins and validation metric; EBM's bags and validation split
    draw rows, so whole-number weights are not the same as repeated rows). EBM refuses a
    weight of 0: those rows are dropped first, as if absent. A missing value (NaN) goes to EBM
    as it comes (its own bin of each shape function); inf is refused.
    """

    _ebm_class = "ExplainableBoostingRegressor"

    def __sklearn_tags__(self):
        """scikit-learn's tags: NaN in X is a missing value EBM bins on its own."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    _parameter_constraints = {
        "interactions": [
            Whole(0),
            Interval(RealNotInt, 0, 1, closed="left"),
            TIMES,
            list,
            tuple,
            None,
        ],
        "outer_bags": [Whole(1)],
        "inner_bags": [Whole(0, integral_float=True)],
        "learning_rate": [Number(0, None, closed="neither"), None],
        "max_bins": [Whole(3, integral_float=True)],  # bins for missing, unseen and data values
        "max_interaction_bins": [Whole(3, integral_float=True)],
        "max_rounds": [Whole(0, integral_float=True)],
        "early_stopping_rounds": [Whole(0, integral_float=True)],
        "validation_size": [Number(0, 1, closed="left"), Whole(1, integral_float=True)],
        "min_samples_leaf": [Whole(0, integral_float=True)],
        "smoothing_rounds": [Whole(0, integral_float=True), None],
        "interaction_smoothing_rounds": [Whole(0, integral_float=True), None],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
        "categorical_features": ["array-like", str, None],
    }

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
        validate_params(self)

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
            "interactions": inter,
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

    def _fit_ebm(self, X: np.ndarray, y: np.ndarray, sample_weight=None):
        weights = check_weights(self, sample_weight, X)
        if weights is not None:  # EBM refuses a weight of 0; such a row is as good as absent
            keep = weights > 0
            X, y, weights = X[keep], y[keep], weights[keep]
        ebm = self._ebm(X.shape[1])
        logger = logging.getLogger("interpret")
        level = logger.level
        if level == logging.NOTSET:  # not configured by the user: hide EBM's per-fit INFO lines
            logger.setLevel(logging.WARNING)
        try:
            ebm.fit(X, y, sample_weight=weights)
        finally:
            logger.setLevel(level)
        self.ebm_ = ebm
        return self

    def _X(self, X) -> np.ndarray:
        check_is_fitted(self, "ebm_")
        return validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite="allow-nan")

    def term_names(self) -> list[str]:
        """Names of the fitted terms: features, then the chosen pairs as 'a & b'."""
        check_is_fitted(self, "ebm_")
        return list(self.ebm_.term_names_)


#: The parameters and fitted attributes of both GA2Ms (numpydoc, appended to their docstrings).
_GA2M_DOC = """

    Parameters
    ----------
    interactions : int, float, str, list or None, default=10
        Pairs f_jk to add: a number, a fraction of the features (< 1), ``"3x"`` (times the
        number of features), an explicit list of pairs, or None (EBM's task default); 0: the
        additive model alone (a GAM).
    outer_bags : int, default=8
        Bagged models averaged (EBM's own default is 14).
    inner_bags : int, default=0
        Bags inside each outer bag.
    learning_rate : float or None, default=None
        Boosting's learning rate (None: EBM's task default).
    max_bins : int, default=1024
        Bins of a feature for the main effects.
    max_interaction_bins : int, default=64
        Bins of a feature in a pair.
    max_rounds : int, default=50000
        Boosting rounds at most.
    early_stopping_rounds : int, default=100
        Rounds without improvement on the validation rows before boosting stops.
    validation_size : float or int, default=0.15
        The rows held out for early stopping (a fraction, or a count).
    min_samples_leaf : int, default=4
        Rows per leaf at least.
    smoothing_rounds, interaction_smoothing_rounds : int or None, default=None
        EBM's smoothing rounds of the main effects and the pairs (None: its task defaults).
    n_jobs : int, default=-1
        Processes (-1: every core).
    random_state : int or None, default=None
        Seeds the bags and the validation split.
    categorical_features : sequence of int or str, boolean mask or None, default=None
        Categorical columns (passed to EBM as nominal).

    Attributes
    ----------
    ebm_ : interpret.glassbox.ExplainableBoostingRegressor or ExplainableBoostingClassifier
        The fitted EBM; its terms (`term_names`) are the main effects and the pairs.
    n_features_in_ : int
        Number of input columns.
"""


class GA2MRegressor(RegressorMixin, GA2MBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "GA2M regression (Lou et al. 2013) via `ExplainableBoostingRegressor` (RMSE boosting)."
        "\n\n    See `GA2MBase` for the model; the defaults are chosen for speed." + _GA2M_DOC
    )

    _ebm_class = "ExplainableBoostingRegressor"

    def fit(self, X, y, sample_weight=None):
        """Fit the EBM on (X, y), ``sample_weight`` (n,) passed to EBM's fit. Returns self."""
        X, y = validate_data(
            self, X, y, dtype=np.float64, y_numeric=True, ensure_all_finite="allow-nan"
        )
        return self._fit_ebm(X, np.asarray(y, dtype=np.float64), sample_weight)

    def predict(self, X) -> np.ndarray:
        """The EBM's prediction."""
        X = self._X(X)
        return np.asarray(self.ebm_.predict(X), dtype=np.float64)


class GA2MClassifier(LogitClassifierMixin, GA2MBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "GA2M binary classification (Lou et al. 2013) via `ExplainableBoostingClassifier`.\n\n"
        "    `decision_function` is the additive logit; `predict_proba[:, 1]` is P(classes_[1])."
        + _GA2M_DOC
        + "    classes_ : ndarray of shape (2,)\n        The two class labels.\n"
    )

    _ebm_class = "ExplainableBoostingClassifier"

    def fit(self, X, y, sample_weight=None):
        """Fit the EBM on (X, y) (binary labels), ``sample_weight`` (n,) passed to EBM's fit.
        Returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan")
        return self._fit_ebm(X, binary_target(self, y), sample_weight)

    def decision_function(self, X) -> np.ndarray:
        """The EBM's additive logit of `classes_[1]`."""
        X = self._X(X)
        return np.asarray(self.ebm_.decision_function(X), dtype=np.float64)
