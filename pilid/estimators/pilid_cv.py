"""PiLiD with gamma and lambda chosen by inner cross-validation, as `LogisticRegressionCV` does.

`PiLiDRegressorCV` / `PiLiDClassifierCV` pick the number of pieces per feature gamma
(Definition 1 of Guo et al., IJCAI 2020) and the penalty weight lambda of the objective (Eq. 11)
from a grid, by K-fold cross-validation on the rows passed to `fit` alone (scikit-learn's
`GridSearchCV`), then refit `pilid.estimators.pilid.PiLiDRegressor` / `PiLiDClassifier` with
the best pair on all of those rows. Prediction and the interpretation API (`shape_functions`,
`feature_contributions`, `plot_shapes`, `decompose`, `interaction_grid`, `plot_interaction`) are
the refit model's (`best_estimator_`).
"""

from __future__ import annotations

import numbers
import warnings
from copy import deepcopy
from dataclasses import replace

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metadata_routing import get_routing_for_object
from sklearn.utils.validation import check_is_fitted

from pilid.errors import PilidError, TrainingDivergedError, TrainingDivergedWarning
from pilid.estimators.pilid import PiLiDClassifier, PiLiDRegressor
from pilid.models.fitting import fit_batched
from pilid.models.inputs import class_target
from pilid.models.monotone import MONOTONE_CONSTRAINTS
from pilid.models.params import N_JOBS, ParamError, Satisfies, Whole, validate_params
from pilid.models.sample_weight import check_weights
from pilid.nn.piecewise import is_pieces
from pilid.train.divergence import lr_advice

__all__ = ["PiLiDClassifierCV", "PiLiDRegressorCV"]

#: The searched parameters (the grid's keys) and the CV estimator's parameter holding each grid.
_GRID = {"gamma": "gammas", "lam": "lams"}
_FITTED = (
    "best_estimator_",
    "best_index_",
    "best_params_",
    "best_score_",
    "cv_results_",
    "gamma_",
    "lam_",
    "n_splits_",
    "scorer_",
)


def _grid(values, valid) -> bool:
    """A non-empty flat sequence (not a string) whose every entry is `valid`."""
    if isinstance(values, str | bytes | dict) or np.ndim(values) != 1:
        return False
    values = list(values)
    return len(values) > 0 and all(valid(v) for v in values)


def _penalty(value) -> bool:
    return (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool | np.bool_)
        and bool(np.isfinite(value))
        and value >= 0
    )


GAMMAS = Satisfies(
    lambda v: _grid(v, is_pieces),
    "a non-empty list of numbers of pieces per feature, whole numbers >= 1, e.g. [1, 5, 10, 20]",
)
LAMS = Satisfies(
    lambda v: _grid(v, _penalty),
    "a non-empty list of finite penalty weights >= 0, e.g. [1e-05, 0.001, 0.1]",
)


def _network(value) -> bool:
    """None (the additive component alone) or a non-empty sequence of layer sizes >= 1."""
    if value is None:
        return True
    if isinstance(value, str | bytes | dict) or np.ndim(value) != 1 or len(value) == 0:
        return False
    return all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_) and v >= 1
        for v in value
    )


NETWORKS = Satisfies(
    lambda v: (
        not isinstance(v, str | bytes | dict)
        and isinstance(v, list | tuple)
        and len(v) > 0
        and all(_network(n) for n in v)
    ),
    "a non-empty list of hidden_layers values, each None (the additive part alone) or layer "
    "sizes >= 1, e.g. [None, (64, 32)]",
)
SCORER_NAME = Satisfies(
    lambda v: isinstance(v, str) and v in get_scorer_names(),
    "a scorer name of sklearn.metrics.get_scorer_names() such as 'r2' or 'roc_auc'",
)


class _FlagDiverged:
    """A candidate of the search: a fit whose training diverged (`pilid.train.divergence`) is
    flagged in ``diverged_`` instead of raising, so that `_DropDiverged` scores it NaN and the
    search ranks it last (the candidate is dropped, not the whole search)."""

    def fit(self, X, y, sample_weight=None):
        weights = None if sample_weight is None else [sample_weight]
        fit_batched([self], [X], [y], on_divergence="flag", sample_weights=weights)
        return self


class _CandidateRegressor(_FlagDiverged, PiLiDRegressor):
    """`PiLiDRegressor` as the search fits it (see `_FlagDiverged`)."""


class _CandidateClassifier(_FlagDiverged, PiLiDClassifier):
    """`PiLiDClassifier` as the search fits it (see `_FlagDiverged`)."""


# Messages (``type(est).__name__``) name the wrapped class; pickling goes by ``__qualname__``.
_CandidateRegressor.__name__ = PiLiDRegressor.__name__
_CandidateClassifier.__name__ = PiLiDClassifier.__name__


class _DropDiverged:
    """The search's scorer: NaN for a candidate whose training diverged, else ``scorer``'s."""

    def __init__(self, scorer) -> None:
        self.scorer = scorer

    def __call__(self, estimator, X, y, **kwargs):
        if getattr(estimator, "diverged_", None):
            return np.nan
        return self.scorer(estimator, X, y, **kwargs)

    def get_metadata_routing(self):
        """The wrapped scorer's requests (``sample_weight`` when weighted, see `fit`)."""
        return get_routing_for_object(self.scorer)


class PiLiDCVBase(BaseEstimator):
    """Shared by `PiLiDRegressorCV` and `PiLiDClassifierCV`; see their docstrings."""

    _estimator_class: type = PiLiDRegressor
    _candidate_class: type = _CandidateRegressor
    _default_scoring = "neg_mean_squared_error"
    _splitter_class: type = KFold

    _parameter_constraints: dict = {
        "gammas": [GAMMAS],
        "lams": [LAMS],
        "networks": [NETWORKS, None],
        "cv": [Whole(2), HasMethods(["split", "get_n_splits"])],
        "scoring": [SCORER_NAME, callable, None],
        "n_jobs": [*N_JOBS, None],
        "random_state": ["random_state"],
        "estimator_params": [dict, None],
        "monotone_constraints": MONOTONE_CONSTRAINTS,
    }

    def __init__(
        self,
        gammas=(1, 5, 10, 20),
        lams=(1e-5, 1e-3, 1e-1),
        networks=None,
        cv=3,
        scoring=None,
        n_jobs=None,
        random_state=None,
        estimator_params=None,
        monotone_constraints=None,
    ):
        self.gammas = gammas
        self.lams = lams
        self.networks = networks
        self.cv = cv
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.estimator_params = estimator_params
        self.monotone_constraints = monotone_constraints

    # ------------------------------------------------------------ the search
    def _estimator(self):
        """The wrapped PiLiD with `estimator_params` and `random_state` (gamma, lam: defaults)."""
        return self._estimator_class(
            **(self.estimator_params or {}),
            random_state=self.random_state,
            monotone_constraints=self.monotone_constraints,
        )

    def _candidate(self):
        """The wrapped PiLiD as the search fits it: a diverged fit is dropped, not raised."""
        return self._candidate_class(
            **(self.estimator_params or {}),
            random_state=self.random_state,
            monotone_constraints=self.monotone_constraints,
        )

    def _lr_advice(self) -> str:
        """What to change after a diverged fit, in this estimator's terms."""
        lr = (self.estimator_params or {}).get("lr", self._estimator().lr)
        return lr_advice(lr, "estimator_params['lr']")

    def _dropped(self, results: dict, n_splits: int) -> np.ndarray:
        """Candidates whose training diverged in some fold (NaN fold scores, `_DropDiverged`):
        one `TrainingDivergedWarning` naming them, or `TrainingDivergedError` if that is all."""
        scores = np.column_stack([results[f"split{k}_test_score"] for k in range(n_splits)])
        folds = np.isnan(scores).sum(axis=1)
        dropped = np.flatnonzero(folds)
        name = type(self).__name__
        if dropped.size == len(folds):
            raise TrainingDivergedError(
                f"{name}: training diverged for every candidate of the grid ({len(folds)}); "
                f"{self._lr_advice()}"
            )
        if dropped.size:
            listed = "; ".join(
                f"{_params_text(results['params'][i])} in {folds[i]} of {n_splits} folds"
                for i in dropped[:3]
            )
            more = f"; and {dropped.size - 3} more" if dropped.size > 3 else ""
            warnings.warn(
                f"{name}: training diverged for {dropped.size} of {len(folds)} candidates "
                f"({listed}{more}), which were dropped from the search; {self._lr_advice()}",
                TrainingDivergedWarning,
                stacklevel=3,
            )
        return dropped

    def _grid_keys(self) -> dict[str, str]:
        """The searched PiLiD parameters and the parameter holding each one's values."""
        return {**_GRID, **({"hidden_layers": "networks"} if self.networks is not None else {})}

    def _check_params(self) -> None:
        """Check every parameter, and those of `estimator_params` for the wrapped PiLiD, before
        anything trains; a bad one raises `ParamError` (one line: the key and the fix)."""
        validate_params(self)
        params = dict(self.estimator_params or {})
        name = self._estimator_class.__name__
        grid_keys = self._grid_keys()
        searched = sorted(set(params) & {*grid_keys, "random_state", "monotone_constraints"})
        if searched:
            key = searched[0]
            where = grid_keys.get(key, key)
            raise ParamError(
                "estimator_params",
                params,
                f"{key!r} is set by {type(self).__name__}; pass it as {where}= instead",
                f"estimator_params may not hold {key!r}: {type(self).__name__} sets it; pass "
                f"{where}=... instead",
            )
        unknown = sorted(set(params) - set(self._estimator_class._get_param_names()))
        if unknown:
            raise ParamError(
                "estimator_params",
                params,
                f"its keys must be parameters of {name}",
                f"estimator_params has {unknown[0]!r}, which is no parameter of {name}; use "
                f"keys of {name}().get_params(), e.g. hidden_layers, epochs, knots",
            )
        try:
            self._estimator()._check_params()
        except ParamError as error:
            raise error.renamed(f"estimator_params[{error.key!r}]") from None

    def _splitter(self):
        if isinstance(self.cv, numbers.Integral):
            return self._splitter_class(
                n_splits=int(self.cv), shuffle=True, random_state=self.random_state
            )
        return self.cv

    def _check_target(self, y) -> None:
        """Refuse a target the wrapped PiLiD refuses before the folds are drawn (classification:
        the labels' one-line errors, not the splitter's)."""

    def fit(self, X, y, sample_weight=None):
        """Choose (gamma, lam) by `cv`-fold cross-validation on (X, y), then refit the wrapped
        PiLiD with them on all of (X, y). Returns self.

        ``sample_weight`` (n,): each candidate is fitted with the weights of its training
        folds, each fold is scored with those of its held-out rows (a scorer name; a callable
        scorer gets them if it asks, ``set_score_request(sample_weight=True)``), and the refit
        takes all of them (scikit-learn's metadata routing, on for this search alone).
        """
        self._check_params()
        if y is None:
            raise PilidError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        self._check_target(y)
        weights = check_weights(self, sample_weight, X)
        for attr in _FITTED:
            self.__dict__.pop(attr, None)
        grid_keys = self._grid_keys()
        grid = {key: list(getattr(self, attr)) for key, attr in grid_keys.items()}
        scoring = self._default_scoring if self.scoring is None else self.scoring
        if self.scoring is None and len(np.unique(np.asarray(y))) > 2 and is_classifier(self):
            scoring = "roc_auc_ovr"  # K > 2 classes: macro one-vs-rest AUC
        scorer = check_scoring(self._estimator(), scoring=scoring)
        fit_params = {} if weights is None else {"sample_weight": weights}
        # With weights, scikit-learn's metadata routing takes them to every candidate's fit
        # (its training folds) and to the scorer (its held-out rows), for this search alone.
        with (
            sklearn.config_context(enable_metadata_routing=weights is not None),
            warnings.catch_warnings(),  # dropped candidates get one warning of ours
        ):
            warnings.filterwarnings("ignore", "One or more of the test scores are non-finite")
            candidate, fold_scorer = self._candidate(), scorer
            if weights is not None:
                candidate.set_fit_request(sample_weight=True)
                if hasattr(scorer, "set_score_request"):
                    fold_scorer = deepcopy(scorer).set_score_request(sample_weight=True)
            search = GridSearchCV(
                candidate,
                grid,
                scoring=_DropDiverged(fold_scorer),  # a diverged candidate scores NaN: last
                n_jobs=self.n_jobs,
                refit=False,  # refit below with the wrapped class itself
                cv=self._splitter(),
                error_score="raise",  # a bad X or y: the wrapped PiLiD's one-line error
            )
            search.fit(X, y, **fit_params)
        self._dropped(search.cv_results_, int(search.n_splits_))
        best = self._estimator().set_params(**search.best_params_)
        try:
            best.fit(X, y, **fit_params)
        except TrainingDivergedError:
            text = _params_text(search.best_params_)
            raise TrainingDivergedError(
                f"{type(self).__name__}: training diverged when refitting the best candidate "
                f"({text}) on all rows ({best.diverged_}); {self._lr_advice()}"
            ) from None
        self.cv_results_ = search.cv_results_
        self.best_index_ = int(search.best_index_)
        self.best_params_ = {key: search.best_params_[key] for key in grid_keys}
        self.best_score_ = float(search.best_score_)
        self.best_estimator_ = best
        self.n_splits_ = int(search.n_splits_)
        self.scorer_ = scorer
        self.gamma_ = self.best_params_["gamma"]
        self.lam_ = self.best_params_["lam"]
        return self

    # ------------------------------------------------ the refit model's API
    def __sklearn_is_fitted__(self) -> bool:
        return "best_estimator_" in self.__dict__

    def _fitted(self):
        check_is_fitted(self)
        return self.best_estimator_

    @property
    def n_features_in_(self) -> int:
        """The refit model's number of input columns."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError(f"{type(self).__name__} has no n_features_in_ before fit")
        return self.best_estimator_.n_features_in_

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The refit model's column names (DataFrame input only)."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError(f"{type(self).__name__} has no feature_names_in_ before fit")
        return self.best_estimator_.feature_names_in_  # AttributeError: X had no column names

    def predict(self, X) -> np.ndarray:
        """`best_estimator_.predict`."""
        return self._fitted().predict(X)

    def score(self, X, y, sample_weight=None) -> float:
        """`best_estimator_.score`: R^2 (regression) or accuracy (classification)."""
        return self._fitted().score(X, y, sample_weight=sample_weight)

    def decompose(self, X):
        """`best_estimator_.decompose`: Eq. (9) term by term (intercept, contributions, deep)."""
        return self._fitted().decompose(X)

    def feature_contributions(self, X) -> np.ndarray:
        """`best_estimator_.feature_contributions`: u_j(x_ij), (n, m)."""
        return self._fitted().feature_contributions(X)

    def shape_functions(self):
        """`best_estimator_.shape_functions`: tidy DataFrame (`feature`, `x`, `value`)."""
        return self._fitted().shape_functions()

    def explain(self, X):
        """`best_estimator_.explain`: per row, the feature contributions, the deep part and the
        intercept, summing to the prediction (regression) or the logit (classification)."""
        return self._fitted().explain(X)

    def plot_explanation(self, X, row: int = 0, ax=None, max_features: int = 10):
        """`best_estimator_.plot_explanation`: the waterfall of one row's explanation."""
        return self._fitted().plot_explanation(X, row=row, ax=ax, max_features=max_features)

    def plot_shapes(self, features=None, ax=None, ncols: int = 4):
        """`best_estimator_.plot_shapes`: one panel per feature's u_j; returns the axes."""
        return self._fitted().plot_shapes(features=features, ax=ax, ncols=ncols)

    def interaction_grid(self, i, j, n: int = 50, X=None):
        """`best_estimator_.interaction_grid`: the model's interaction of features `i` and `j`
        on a grid (`pilid.inspection.pair_effect`)."""
        return self._fitted().interaction_grid(i, j, n=n, X=X)

    def plot_interaction(self, i, j, ax=None, grid: int = 50, X=None, cmap: str = "RdBu_r"):
        """`best_estimator_.plot_interaction`: the heat map of `interaction_grid`; returns the
        axes."""
        return self._fitted().plot_interaction(i, j, ax=ax, grid=grid, X=X, cmap=cmap)


def _params_text(params: dict) -> str:
    """``gamma=5, lam=0.001`` for a grid point."""
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


class _WrappedTags:
    """The wrapped PiLiD's tags (input, determinism, classes) on top of the task mixin's;
    first in the bases, since `ClassifierMixin` resets `classifier_tags`."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self._estimator_class(random_state=self.random_state))
        tags.input_tags = replace(inner.input_tags)
        tags.non_deterministic = inner.non_deterministic  # random_state None: folds and seeds
        if tags.classifier_tags is not None and inner.classifier_tags is not None:
            tags.classifier_tags = replace(inner.classifier_tags)
        return tags


_CV_DOC = """

    The grid is searched by K-fold cross-validation on the rows given to `fit` alone
    (scikit-learn's `GridSearchCV`), then {name} is refit with the best point on all of them.
    Prediction, `score`, `decompose`, `feature_contributions`, `shape_functions`, `plot_shapes`,
    `interaction_grid`, `plot_interaction`, `n_features_in_` and `feature_names_in_` are the
    refit model's. ``fit(X, y, sample_weight)``
    weights every candidate's fit, each fold's score and the refit.

    Parameters
    ----------
    gammas : sequence, default=(1, 5, 10, 20)
        The numbers of pieces per feature gamma to try (Definition 1) [1-20].
    lams : sequence of float, default=(1e-5, 1e-3, 1e-1)
        The penalty weights lam of lam * Omega (Eq. 11) to try.
    networks : sequence or None, default=None
        The `hidden_layers` values to try (None: not searched), None among them for the
        additive component alone (with gamma=1 a linear/logistic model); e.g.
        ``[None, (64, 32)]`` lets small data choose a model without the MLP.
    cv : int or splitter, default=3
        Number of folds (an int >= 2: ``{splitter}(shuffle=True, random_state=random_state)``)
        or a scikit-learn splitter; the folds come only from the X, y given to `fit`.
    scoring : str, callable or None, default=None
        The score maximised over the grid (a scorer name or callable); None: ``{scoring}``.
    n_jobs : int or None, default=None
        Parallel fits of `GridSearchCV` (None: 1).
    random_state : int, RandomState or None, default=None
        Seeds the folds and every PiLiD fit (the search's and the refit's).
    estimator_params : dict or None, default=None
        Any other parameters of {name} (e.g. ``hidden_layers``, ``epochs``, ``knots``,
        ``device``), passed to every fit; not gamma, lam, random_state or
        monotone_constraints.
    monotone_constraints : dict, list or None, default=None
        Passed to every fit of {name} (`pilid.models.monotone`): +1/-1 per feature makes the
        prediction non-decreasing/non-increasing in it, for every row.

    Attributes
    ----------
    best_estimator_ : {name}
        The model with the best grid point, refit on all rows of (X, y).
    best_params_ : dict
        The best point: ``{{"gamma": ..., "lam": ...}}``, plus ``"hidden_layers"`` when
        ``networks`` is searched.
    gamma_, lam_ : object
        The best gamma and lam.
    best_score_ : float
        The best point's mean score over the folds.
    best_index_ : int
        Its index in `cv_results_`.
    cv_results_ : dict
        `GridSearchCV`'s; ``pandas.DataFrame(cv_results_)`` has one row per grid point.
    n_splits_ : int
        The number of folds.
    scorer_ : callable
        The scorer used.{classes}

    Notes
    -----
    A candidate whose training diverges in some fold (`pilid.train.divergence`) scores NaN and
    is dropped, with one `pilid.errors.TrainingDivergedWarning` naming the candidates and the
    lr to try; if every candidate diverges, or the refit does, `fit` raises
    `pilid.errors.TrainingDivergedError`.
    """

_CLASSES_DOC = """
    classes_ : ndarray of shape (n_classes,)
        The refit model's class labels (its `decision_function` and `predict_proba` too)."""


class PiLiDRegressorCV(_WrappedTags, RegressorMixin, PiLiDCVBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "PiLiD regression with gamma and lam chosen by inner cross-validation."
        + _CV_DOC.format(
            splitter="KFold", scoring="neg_mean_squared_error", name="PiLiDRegressor", classes=""
        )
    )


class PiLiDClassifierCV(_WrappedTags, ClassifierMixin, PiLiDCVBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "PiLiD classification (two or more classes) with gamma and lam chosen by inner "
        "cross-validation."
        + _CV_DOC.format(
            splitter="StratifiedKFold",
            scoring="roc_auc``, or with K > 2 classes ``roc_auc_ovr",
            name="PiLiDClassifier",
            classes=_CLASSES_DOC,
        )
    )

    _estimator_class = PiLiDClassifier
    _candidate_class = _CandidateClassifier
    _default_scoring = "roc_auc"
    _splitter_class = StratifiedKFold

    def _check_target(self, y) -> None:
        class_target(self._estimator(), y)  # "Unknown label type" / one class, one line

    @property
    def classes_(self) -> np.ndarray:
        """The refit model's class labels."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError(f"{type(self).__name__} has no classes_ before fit")
        return self.best_estimator_.classes_

    def decision_function(self, X) -> np.ndarray:
        """`best_estimator_.decision_function`: the logit of `classes_[1]`."""
        return self._fitted().decision_function(X)

    def predict_proba(self, X) -> np.ndarray:
        """`best_estimator_.predict_proba`: [P(classes_[0]), P(classes_[1])]."""
        return self._fitted().predict_proba(X)
