"""The GAM baseline (Hastie & Tibshirani 1986): y = b + sum_j f_j(x_j) with penalised B-splines.

`GAMRegressor` / `GAMClassifier` are scikit-learn estimators over pygam's `LinearGAM` /
`LogisticGAM` (pygam 0.12 fails the tag checks of scikit-learn >= 1.7, hence the adapter).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from copy import deepcopy

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from pilid.errors import PilidError
from pilid.models.inputs import binary_target, categorical_mask
from pilid.models.outputs import LogitClassifierMixin
from pilid.models.params import Number, ParamError, Satisfies, Whole, validate_params
from pilid.models.sample_weight import check_weights, weighted_quantiles

__all__ = ["GAMClassifier", "GAMRegressor"]

DEFAULT_LAM_GRID = (1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3)


def _positive_grid(grid) -> bool:
    if isinstance(grid, str):
        return False
    lams = np.asarray(list(grid), dtype=np.float64)
    return lams.ndim == 1 and lams.size > 0 and bool(np.all(np.isfinite(lams) & (lams > 0)))


LAM_GRID = Satisfies(
    _positive_grid, "a list of positive smoothing strengths such as [0.001, 0.1, 10, 1000]"
)


def _n_unique(X: np.ndarray) -> np.ndarray:
    """Number of distinct values in each column of X."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1], dtype=int)
    return 1 + np.count_nonzero(np.diff(np.sort(X, axis=0), axis=0), axis=0)


CLIP_QUANTILE = 0.001  # spline columns are clipped to their training 0.1% and 99.9% quantiles


#: pygam's inflation of the effective degrees of freedom in GCV / UBRE (its default).
_GCV_GAMMA = 1.4


def _objective(gam, X=None, y=None, weights=None) -> float:
    """pygam's smoothing objective of a fitted model: UBRE (known scale: logistic), else GCV.

    Without weights, pygam's own number. With weights, the same formula with the sample size
    n = sum(w) instead of the row count (pygam counts rows): GCV = n D / (n - 1.4 edof)^2,
    UBRE = D / n + 2 scale + 2.8 edof scale / n, D the weighted deviance; so that whole-number
    weights give the objective of the repeated rows, and unit weights pygam's.
    """
    if weights is None:
        return float(gam.statistics_["UBRE" if gam.distribution._known_scale else "GCV"])
    mu = gam.predict_mu(X)
    dev = float(gam.distribution.deviance(mu=mu, y=y, scaled=False, weights=weights).sum())
    n = float(weights.sum())
    edof = float(gam.statistics_["edof"])
    if gam.distribution._known_scale:
        scale = float(gam.distribution.scale)
        return 1.0 / n * dev + 2.0 * scale + 2.0 * _GCV_GAMMA / n * edof * scale
    return (n * dev) / (n - _GCV_GAMMA * edof) ** 2


def search_lam(
    gam,
    X: np.ndarray,
    y: np.ndarray,
    lams: np.ndarray,
    progress: bool = False,
    weights: np.ndarray | None = None,
):
    """Choose one smoothing strength lam (shared by all terms) by GCV / UBRE over `lams`.

    pygam's `gridsearch`, step for step: the lams in the given order, each fit warm-started from
    the coefficients of an earlier fit, the first lowest objective wins. One difference: pygam
    warm-starts from the last fit that raised no error, even one with an infinite or NaN
    objective (a non-converged fit on nearly separable classes, its coefficients so large that
    every fitted probability is 0 or 1); then every later lam diverges at once and no model is
    chosen (spambase, trial 14). Here only a fit with finite
    coefficients and a finite objective is a candidate and a warm start; before the first one,
    each lam starts cold. Where pygam's search met no such fit, the two choose the same model.

    ``weights`` (n,) are pygam's sample weights of every fit, and the objective is the weighted
    one of `_objective` (None: unit weights and pygam's own objective).

    Returns the chosen fitted model and the objective at each lam (NaN: no candidate).
    """
    # As gridsearch: check the parameters and place the knots on X once, then copy per lam.
    gam._validate_params()
    gam._validate_data_dep_params(X)
    given = weights
    weights = np.ones_like(y, dtype=np.float64) if given is None else given
    scores = np.full(lams.size, np.nan)
    chosen, start = None, None  # the lowest objective so far; the last candidate (warm start)
    best = -1  # the index of `chosen` in the grid
    steps = range(lams.size)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc="GAM lam grid", unit="lam")
    for i in steps:  # one fit per smoothing strength, not a loop over samples
        candidate = deepcopy(gam)
        candidate.set_params(lam=float(lams[i]))
        if start is not None:
            candidate.set_params(coef_=start.coef_, force=True, verbose=False)
        try:
            candidate.fit(X, y, weights)
        except ValueError:  # pygam's OptimizationError (diverged) is a ValueError
            continue
        score = _objective(candidate, X, y, given)
        if not (np.isfinite(score) and np.isfinite(candidate.coef_).all()):
            continue
        scores[i], start = score, candidate
        if chosen is None or score < scores[best]:  # ties: the first, as pygam
            chosen, best = candidate, i
    if chosen is None:
        raise PilidError(
            f"the GAM failed to fit for every lam in {lams.tolist()}; try a different "
            "model.lam_grid (e.g. model.lam_grid=[1,10,100,1000]) or fewer model.n_splines"
        )
    return chosen, scores


class GAMBase(BaseEstimator):
    """Shared fitting code of the GAM adapter (Hastie & Tibshirani 1986; Lou et al. 2012).

    The additive model is b + sum_j f_j(x_j): a penalised cubic B-spline f_j (pygam `s(j)`) for each
    numeric column, a linear term (pygam `l(j)`, exact for a 0/1 column) for each categorical
    (one-hot indicator) column and each column with two distinct values; constant columns get no
    term. One smoothing strength lam, shared by all terms, is chosen from `lam_grid` on the
    training data by `search_lam` (pygam's grid search, GCV for regression and UBRE for
    classification, without its failure mode); a grid of one value fits that lam directly.
    After `fit`: `gam_` (the chosen pygam model), `lam_`, `lam_scores_` (the objective at each lam
    of the grid, NaN where the fit failed or did not give a finite model) and `n_iter_`.

    ``fit(X, y, sample_weight)`` passes the weights to pygam (its ``weights``: the weighted
    penalised likelihood); GCV / UBRE count n = sum(w) (`_objective`), the clipping quantiles
    are those of the rows repeated by their weights (`pilid.models.sample_weight`), and rows of
    weight 0 are dropped first. Whole-number weights thus fit the model of the repeated rows,
    unit weights the unweighted one.
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

    _parameter_constraints = {
        "n_splines": [Whole(1)],  # and > spline_order (`_check_params`)
        "spline_order": [Whole(0)],
        "lam_grid": [LAM_GRID, None],
        "max_iter": [Whole(1, integral_float=True)],
        "tol": [Number(0, None, closed="left")],
        "categorical_features": ["array-like", str, None],
        "verbose": ["verbose"],
    }

    def _check_params(self) -> np.ndarray:
        """Check every hyper-parameter as pygam would at fit; returns the lam grid."""
        validate_params(self)
        order, k = self.spline_order, self.n_splines
        if k <= order:
            raise ParamError(
                "n_splines",
                k,
                f"use a whole number > spline_order={order} (e.g. 20)",
                f"n_splines={k!r} is invalid; use a whole number > spline_order={order} (e.g. 20)",
            )
        grid = DEFAULT_LAM_GRID if self.lam_grid is None else self.lam_grid
        return np.asarray(list(grid), dtype=np.float64)

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

    def _fit_gam(self, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None):
        import pygam

        lams = self._check_params()
        if weights is not None:
            # A row of weight 0 is as good as absent: dropped before the terms, the knots and
            # the clipping quantiles see it (pygam spaces the knots over every row it is given).
            # pygam holds weights as float32: the objective takes them as pygam does.
            keep = weights > 0
            X, y = X[keep], y[keep]
            weights = weights[keep].astype(np.float32).astype(np.float64)
        if X.shape[0] < 2:
            raise PilidError(f"a GAM needs at least 2 rows; got n_samples={X.shape[0]}")
        gam = getattr(pygam, self._pygam_class)(
            self._terms(X), max_iter=int(self.max_iter), tol=float(self.tol), verbose=False
        )
        # pygam spaces the spline knots evenly over each column's range: one extreme value (skill's
        # TotalHours = 1,000,000) leaves almost every row in the first piece and every fit fails.
        # Spline columns are clipped to their training 0.1-99.9% quantiles, here and at predict.
        spline = self.term_kinds_ == "spline"
        if weights is None:
            low = np.quantile(X, CLIP_QUANTILE, axis=0)
            high = np.quantile(X, 1 - CLIP_QUANTILE, axis=0)
        else:  # the quantiles of the rows repeated by their weights
            low = weighted_quantiles(X, CLIP_QUANTILE, weights)
            high = weighted_quantiles(X, 1 - CLIP_QUANTILE, weights)
        self.clip_low_ = np.where(spline, low, -np.inf)
        self.clip_high_ = np.where(spline, high, np.inf)
        X = np.clip(X, self.clip_low_, self.clip_high_)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # Separable classes drive pygam's IRLS weights to 0/inf along the way; the chosen
            # model is still finite. Its warnings say nothing the user can act on.
            warnings.simplefilter("ignore", RuntimeWarning)
            if lams.size == 1:
                gam.lam = float(lams[0])
                gam.fit(X, y, weights)
                self.lam_scores_ = np.array([_objective(gam, X, y, weights)])
            else:
                gam, self.lam_scores_ = search_lam(
                    gam, X, y, lams, progress=bool(self.verbose), weights=weights
                )
        self.gam_ = gam
        self.n_iter_ = len(gam.logs_.get("diffs", ()))
        self.lam_ = float(np.ravel(gam.lam[0])[0])
        return self

    def _linear_predictor(self, X) -> np.ndarray:
        check_is_fitted(self, "gam_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        X = np.clip(X, self.clip_low_, self.clip_high_)
        return np.asarray(self.gam_._linear_predictor(X), dtype=np.float64)


#: The parameters and fitted attributes of both GAMs (numpydoc, appended to their docstrings).
_GAM_DOC = """

    Parameters
    ----------
    n_splines : int, default=20
        B-spline basis size of each numeric term (more than ``spline_order``).
    spline_order : int, default=3
        Degree of the splines.
    lam_grid : sequence of float or None, default=(1e-3, 1e-2, ..., 1e3)
        Smoothing strengths searched by `search_lam`; one value: no search; None: the
        default grid.
    max_iter : int, default=100
        pygam's P-IRLS iterations.
    tol : float, default=1e-4
        Its tolerance.
    categorical_features : sequence of int or str, boolean mask or None, default=None
        Categorical (indicator) columns; they get linear terms.
    verbose : bool, default=False
        A progress bar over the grid of ``lam_grid``.

    Attributes
    ----------
    gam_ : pygam.GAM
        The fitted pygam model with the chosen smoothing.
    lam_ : float
        The chosen smoothing strength.
    lam_scores_ : ndarray
        The objective at each value of ``lam_grid`` (NaN where the fit failed).
    n_iter_ : int
        P-IRLS iterations of the chosen fit.
    term_kinds_ : ndarray of str
        Per column: ``"spline"``, ``"linear"`` or ``"none"`` (a constant column).
    clip_low_, clip_high_ : ndarray
        The training 0.1% and 99.9% quantiles spline columns are clipped to.
    n_features_in_ : int
        Number of input columns.
"""


class GAMRegressor(RegressorMixin, GAMBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "GAM regression y = b + sum_j f_j(x_j) + noise: pygam `LinearGAM` (identity link).\n\n"
        "    Smoothing is chosen by GCV; see `GAMBase` for the terms." + _GAM_DOC
    )

    _pygam_class = "LinearGAM"

    def fit(self, X, y, sample_weight=None):
        """Fit the GAM on (X, y), smoothing chosen by GCV. Returns self.

        ``sample_weight`` (n,): pygam's weights of the penalised least squares, the weighted
        GCV and clipping quantiles (`GAMBase`); None: every row weighs 1.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        weights = check_weights(self, sample_weight, X)
        return self._fit_gam(X, np.asarray(y, dtype=np.float64), weights)

    def predict(self, X) -> np.ndarray:
        """b + sum_j f_j(x_j)."""
        return self._linear_predictor(X)


class GAMClassifier(LogitClassifierMixin, GAMBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "GAM binary classification logit P(y=1|x) = b + sum_j f_j(x_j): pygam `LogisticGAM`.\n\n"
        "    Smoothing is chosen by UBRE (pygam's objective for a known scale). "
        "`decision_function`\n    is the logit; `predict_proba[:, 1]` is P(classes_[1])."
        + _GAM_DOC
        + "    classes_ : ndarray of shape (2,)\n        The two class labels.\n"
    )

    _pygam_class = "LogisticGAM"

    def fit(self, X, y, sample_weight=None):
        """Fit the GAM on (X, y) (binary labels), smoothing chosen by UBRE. Returns self.

        ``sample_weight`` (n,): pygam's weights of the penalised log-likelihood, the weighted
        UBRE and clipping quantiles (`GAMBase`); None: every row weighs 1.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        weights = check_weights(self, sample_weight, X)
        return self._fit_gam(X, binary_target(self, y), weights)

    def decision_function(self, X) -> np.ndarray:
        """The logit b + sum_j f_j(x_j) of `classes_[1]`."""
        return self._linear_predictor(X)
