"""The base of the neural estimators (PiLiD, MLP, PiLiB, NIT): hyper-parameters, data and output.

`NeuralEstimator` is a scikit-learn estimator that `pilid.models.fitting.fit_batched` can train
(it implements `pilid.train.Trainable`); ``fit(X, y, sample_weight=None)`` is
``fit_batched([self], [X], [y], sample_weights=[sample_weight])`` (sample weights:
`pilid.models.sample_weight`). The
families add their constructor and hooks: `pilid.estimators.pilid` (PiLiD, Section 3, and the MLP
baseline), `pilid.estimators.pilib` (PiLiB, Section 3.3) and `pilid.baselines.nit` (NIT).
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_random_state

from pilid import hyperparameters as hp
from pilid.device import resolve_device
from pilid.models import bagging, multiclass, shape_choice
from pilid.models.description import describe, encoding_of
from pilid.models.fitting import fit_batched
from pilid.models.inputs import InputMixin
from pilid.models.params import Number, Satisfies, sklearn_constraints, validate_params
from pilid.models.row_rules import resolve_lam, resolve_smoothness
from pilid.models.sample_weight import check_sample_weight, check_weighted_rows, weighted_mean_std
from pilid.nn.fitted import CHUNK, FittedEnsemble, rows_tensor
from pilid.nn.mlp import PAPER_HIDDEN_LAYERS, MLPBuilder, layer_sizes
from pilid.nn.piecewise import (
    GAMMA_RULE,
    fit_knots,
    resolve_gamma,
    valid_gamma,
)
from pilid.train import Phase, Prepared, Trainable, TrainConfig
from pilid.train.batched import SAMPLE_ROWS, sample_rows
from pilid.train.losses import REG_GROUPS, Regularized
from pilid.train.spec import TrainSpec
from pilid.train.validation import holdout_split

#: Algorithm 1's starts of the additive part (step 2: least squares; or Gaussian).
INITS = hp.options(hp.PILID, "init")
#: Fewer fit rows than this per piece of a numeric feature (Definition 1) draws a
#: `FewRowsPerPieceWarning`: the pieces' slopes then rest on a row or two each. The paper's
#: settings have at least 130 (skill, gamma=20: 2,642 training rows).
MIN_ROWS_PER_PIECE = 5


#: The fitted attributes every neural estimator sets (numpydoc, appended to their docstrings).
FITTED_ATTRIBUTES_DOC = """
    n_features_in_ : int
        Number of input columns seen in `fit`.
    feature_names_in_ : ndarray of str
        The column names, when `fit` got a DataFrame (a DataFrame at prediction is then read
        by these names, in any column order).
    target_name_ : str or None
        The name of the target in `fit` (a pandas Series' name), which `plot_shapes` and
        `plot_explanation` name a regression's output by; None for an unnamed one.
    categorical_ : ndarray of bool, shape (`n_features_in_`,)
        The columns treated as categorical (one piece per category).
    intercept_ : float
        The constant of the raw output (Eq. 9), with the contributions centred.
    module_ : pilid.nn.ensemble.PiLiDEnsemble or None
        The trained network of this trial (T=1, on the CPU); None for a bag, whose members
        (`estimators_`) hold theirs.
    fitted_ : pilid.nn.fitted.FittedEnsemble
        The fitted model's one description (its columns, input encoding and one head per
        output, a bag's members in it): what `predict`, `decompose`, the shapes, `to_onnx` and
        `to_table` read.
    history_ : dict, or list of dict for a bag
        Per-epoch lists ``train_loss``, ``val_loss``, ``phase`` and ``epoch_seconds``.
    n_epochs_ : int
        Epochs trained (the longest member's for a bag).
    best_epoch_ : int
        The epoch whose weights were kept (early stopping).
    seed_ : int
        The trial seed used (from `random_state`).
    device_ : str
        The device the model was trained on.
    diverged_ : str or None
        Why training diverged (`pilid.train.divergence`); only
        ``fit_batched(..., on_divergence="flag")`` leaves a diverged model, `fit` raises.
    y_offset_, y_scale_ : float
        The standardisation of a regression target (predictions are in original units;
        weighted by ``sample_weight``); 0 and 1 for a classifier.
    x_mean_, x_scale_ : ndarray of shape (`n_features_in_`,)
        The standardisation of the deep part's input (NaN skipped; weighted by
        ``sample_weight``); ``x_scale_`` is inf for a
        feature with a monotone constraint (`pilid.models.monotone`: its deep input is 0).
    missing_ : ndarray of bool, shape (`n_features_in_`,)
        The features with missing values (NaN) in the fit rows: each has a learned
        contribution for NaN (`shape_functions` shows it as a row with `x` NaN) and a missing
        indicator among the deep part's inputs, which see NaN as 0 (the training mean).
    deep_bins_ : tuple of (int, ndarray) or None
        None: the deep part sees each numeric feature standardised. Pairs (feature j, its bin
        edges), which only a subclass's ``_prepare`` sets (`pilid.train.protocol.Prepared.bins`):
        those features enter it piecewise-linearly encoded (`pilid.train.encoding.deep_input`).
    categories_ : dict of int to list
        The levels of each string / pandas category column (by position), as given; a column
        in ``infrequent_categories_`` has one level for the merged ones, ``"(infrequent)"``,
        the last of its list.
    infrequent_categories_ : dict of int to list
        {}: no level merged (the estimators merge none; a subclass's ``_merge_infrequent`` may:
        per column, by position, the levels merged into ``"(infrequent)"``).
    estimators_ : list of estimators
        A bag's members (``n_bags`` > 1 only), each fitted on its bootstrap rows.
    bag_rows_ : ndarray of shape (n_bags, n_train)
        The training rows each bag member was fitted on (``n_bags`` > 1 only).
    bag_val_rows_ : ndarray of shape (n_bags, n_val)
        The rows each bag member stopped early on (``n_bags`` > 1 only): the same for every
        member.
    classes_ : ndarray of shape (2,)
        The two class labels, `classes_[1]` the positive one (classifiers only).
"""
#: The fitted attributes of estimators with the additive component (Definitions 1-3).
ADDITIVE_ATTRIBUTES_DOC = """
    gamma_ : int or ndarray of int
        The pieces per numeric feature used (``gamma="auto"`` resolved on the training rows).
    knots_ : pilid.nn.piecewise.Knots
        The characteristic points of every feature (Definition 1).
    contribution_offset_ : ndarray of shape (`n_features_in_`,)
        The training-row mean of each u_j (weighted by ``sample_weight``), removed from
        `feature_contributions`.
"""


def _nan_mean_std(X: np.ndarray, nan: np.ndarray, weight: np.ndarray | None):
    """Per column mean and standard deviation (ddof=0) of `X` over its rows without NaN
    (`nan`), weighted by `weight` (n,; None: unweighted): the deep input's standardisation
    when some feature has missing values."""
    w = np.ones(len(X)) if weight is None else np.asarray(weight, dtype=np.float64)
    W = np.where(nan, 0.0, w[:, None])
    total = np.maximum(W.sum(axis=0), np.finfo(np.float64).tiny)
    values = np.where(nan, 0.0, X)
    mean = (values * W).sum(axis=0) / total
    var = (np.square(values - mean) * W).sum(axis=0) / total
    return mean, np.sqrt(var)


def resolved_smoothness(est) -> float:
    """The roughness weight a unit trains with: its ``smoothness_`` (PiLiD's ``smoothness``, or
    the one ``smoothness="auto"`` gave the candidate, `pilid.models.shape_choice`); 0 for the
    families without it."""
    return float(getattr(est, "smoothness_", 0.0))


def resolved_lam(est) -> float:
    """The penalty weight lambda (Eq. 11) a unit trains with: its ``lam_`` (``lam``, or the value
    of a rule of the rows such as ``lam="rows_steep"`` at the fit rows, `pilid.models.row_rules`);
    before a fit, ``lam``."""
    lam = getattr(est, "lam_", getattr(est, "lam", 0.0))
    return float(lam)


class FewRowsPerPieceWarning(UserWarning):
    """gamma cuts a numeric feature into more pieces than the rows can support."""


def _groups(reg_groups) -> tuple:
    return (reg_groups,) if isinstance(reg_groups, str) else tuple(reg_groups)


#: Constraints shared by the families (`_parameter_constraints`, see `pilid.models.params`).
HIDDEN_LAYERS = Satisfies(
    lambda v: layer_sizes(v) is not None,
    "a list of layer sizes >= 1, e.g. [100, 200, 400, 400, 200, 100] (the paper's)",
)
BLOCK_LAYERS = Satisfies(
    lambda v: layer_sizes(v, allow_empty=False) is not None,
    "a non-empty list of whole numbers >= 1, e.g. [16, 8]",
)
GAMMA = Satisfies(valid_gamma, GAMMA_RULE)  # pieces per feature (Definition 1)
REG_GROUP_LIST = Satisfies(
    lambda v: all(g in REG_GROUPS for g in _groups(v)),
    f"any of {', '.join(REG_GROUPS)} (one, or a list of them)",
)
#: The checks that `pilid.hyperparameters` names (its `Rule`s) and whose code lives here.
RULES = {"gamma": [GAMMA], "hidden_layers": [HIDDEN_LAYERS], "reg_groups": [REG_GROUP_LIST]}


def _declared(*names: str) -> dict:
    """The constraints of PiLiD's declared hyper-parameters `names` (`pilid.hyperparameters`),
    which the other families share."""
    return sklearn_constraints(hp.by_name(hp.PILID, *names), RULES)


SIGMA = _declared("sigma")["sigma"]
PENALTY_CONSTRAINTS = {  # lam * Omega of Eq. 11 (PiLiD's lam also takes the rule "rows")
    **_declared("reg"),
    "lam": [Number(0, None, closed="left")],
}
BAG_CONSTRAINTS = _declared("n_bags")  # bagging (`pilid.models.bagging`)
#: The piecewise-linear component (Definitions 1-2, Algorithm 1).
ADDITIVE_CONSTRAINTS = _declared("gamma", "knots", "init", "reg_groups", "purify")


#: How a categorical feature enters the deep part (`pilid.train.encoding.deep_input`).
DEEP_CATEGORICAL = hp.options(hp.PILID, "deep_categorical")


class NeuralEstimator(InputMixin, Trainable, BaseEstimator):
    """Base of the neural estimators (PiLiD, MLP, PiLiB, NIT): data handling and training.

    Hooks for subclasses (T = number of trials trained together), besides `Trainable`'s; all
    but the last two make its `TrainSpec` (`_train_spec`), all the engine reads:

    * ``_task``: "regression" or "classification" (class attribute).
    * ``_has_additive``: False drops the piecewise-linear component (MLP, NIT).
    * ``_deep_builder() -> builder``: ``builder(n_features, seeds)`` builds the deep part;
      default the paper's MLP (`pilid.nn.mlp.MLPBuilder` of `hidden_layers`, `sigma`).
    * ``_penalty_term() -> term | None``: ``term(model, x) -> (T,)``, a per-trial penalty
      added in phases with ``penalty=True`` (None, the default: no penalty). ``model`` is the
      `PiLiDEnsemble`.
    * ``_phases() -> list[Phase]``: the training schedule (default: one phase of ``epochs``
      epochs with early stopping).
    * ``_regularized() -> Regularized``: the parameters that get ``lam * Omega`` (Eq. 11;
      `pilid.train.losses.Regularized`).

    What these hooks return is plain: values and callables that hold no estimator, so the
    engine never calls back into one.
    * ``_after_fit()``: runs on every fitted estimator (T=1 module on CPU in ``module_``).
    * ``_parameter_constraints``: extend the parent's dict with the family's keys.

    Internals that hold for every subclass: numeric X is standardised (training mean and
    standard deviation) for the deep input; Phi comes from the unscaled X; a regression target
    is standardised and predictions are mapped back to the original units; classification uses
    labels 0/1 and logits. With ``patience`` set, a fraction ``val_fraction`` of the rows
    (stratified for classification) is held out for early stopping. Statistics (knots, scaling,
    the centring of the contributions) use every row passed to `fit`; the least-squares init,
    the gradient steps and the purification use the rows not held out. With ``sample_weight``
    every one of these is weighted (`pilid.models.sample_weight`).

    Training that diverges (`pilid.train.divergence`: the training loss became NaN/inf, or the
    trained model's training loss is over 10 times a constant prediction's) raises
    `pilid.errors.TrainingDivergedError` on one line naming the ``lr`` to try; ``diverged_``
    (None after a good fit) and ``history_`` are kept. More pieces per numeric feature than the
    fit rows support (fewer than `MIN_ROWS_PER_PIECE` rows per piece) draw one
    `FewRowsPerPieceWarning` naming the largest gamma that does not.
    """

    #: the training settings every family shares (`pilid.hyperparameters.TRAINING`)
    _parameter_constraints: dict = sklearn_constraints(hp.TRAINING)
    _task = "regression"  # the output mixins set it (`RegressorOutput`, `ClassifierOutput`)
    _has_additive = True  # False: no piecewise-linear part (MLP, NIT)

    # ------------------------------------------------------------------ hooks
    def _deep_builder(self) -> Callable[[int, Sequence[int]], torch.nn.Module | None]:
        """The deep part's builder for the spec (`pilid.train.TrainSpec.build_deep`): a plain
        callable of the hyper-parameters, never a method of the estimator."""
        layers = getattr(self, "hidden_layers", PAPER_HIDDEN_LAYERS)
        return MLPBuilder(layers, self.sigma)

    def _phases(self) -> list[Phase]:
        return [Phase("train", int(self.epochs), early_stopping=True)]

    def _penalty_term(self) -> Callable | None:
        """The extra term of the loss in phases with ``penalty=True`` (``term(model, x) ->
        (T,)``), or None: none (PiLiB's and NIT's gates add theirs)."""
        return None

    def _regularized(self) -> Regularized:
        """The parameters ``lam * Omega`` covers (Eq. 11): those of ``reg_groups``."""
        return Regularized(_groups(getattr(self, "reg_groups", "all")))

    def _train_config(self, n_trials: int) -> TrainConfig:
        return TrainConfig(
            task=self._task,
            lr=float(self.lr),
            optimizer=self.optimizer,
            batch_size=int(self.batch_size),
            patience=self.patience,
            reg=getattr(self, "reg", "l2"),
            lam=resolved_lam(self),  # a rule of the rows: its value at the fit rows
            regularized=self._regularized(),
            extra_loss=self._penalty_term(),
            verbose=bool(self.verbose),
            desc=f"{type(self).__name__} x{n_trials}",
            classes=int(getattr(self, "_softmax_classes", 1)),  # K > 2 classes: softmax groups
            smoothness=resolved_smoothness(self),  # PiLiD's shape roughness
        )

    def _train_spec(self) -> TrainSpec:
        """`Trainable._train_spec`: what this estimator's trials train, from its hooks
        (`_train_config`, `_phases`, `_deep_builder`) and its prepared attributes (the monotone
        constraints, the column names); plain values and callables that hold no estimator."""
        monotone = getattr(self, "monotone_constraints_", None)
        names = getattr(self, "feature_names_in_", None)
        return TrainSpec(
            name=type(self).__name__,
            task=self._task,
            config=self._train_config(1),
            phases=tuple(self._phases()),
            build_deep=self._deep_builder(),
            has_additive=self._has_additive,
            init=getattr(self, "init", "lstsq"),
            sigma=getattr(self, "sigma", None),
            purify=bool(getattr(self, "purify", False)),
            monotone=None if monotone is None else tuple(int(v) for v in monotone),
            columns=None if names is None else tuple(str(c) for c in names),
        )

    def _check_params(self) -> None:
        """Check every hyper-parameter; a bad one raises `ParamError` (a one-line PilidError)."""
        validate_params(self)
        resolve_device(self.device)

    # ------------------------------------------------------------- preparing
    def _trial_seed(self) -> int:
        rs = self.random_state
        if isinstance(rs, numbers.Integral) and not isinstance(rs, bool):
            return int(rs)
        return int(check_random_state(rs).randint(0, 2**31 - 1))

    def _prepare(self, X, y, sample_weight=None) -> Prepared:
        self._check_params()
        for attr in (
            "module_",
            "knots_",
            "classes_",
            "estimators_",
            "bag_rows_",
            "bag_val_rows_",
            "diverged_",
            "class_estimators_",
            "shape_choice_",
        ):
            if hasattr(self, attr):
                delattr(self, attr)
        X = self._validate_X(X, fit=True)
        n, m = X.shape
        target = self._validate_y(y, n)
        weight = check_sample_weight(sample_weight, X)  # None: unweighted (or all equal)
        self.categorical_ = self._categorical_mask(self._auto_categorical, m)
        seed = self._trial_seed()
        fraction = self.val_fraction if self.patience is not None else 0.0
        train_idx, val_idx = holdout_split(
            target, seed, fraction, stratified=self._task == "classification"
        )
        check_weighted_rows(self, weight, target, train_idx, val_idx)
        if self._task == "regression":
            mean, sd = weighted_mean_std(target, weight)
            self.y_offset_, sd = float(mean), float(sd)
            self.y_scale_ = sd if sd > 0 else 1.0
            target = (target - self.y_offset_) / self.y_scale_
        else:
            self.y_offset_, self.y_scale_ = 0.0, 1.0
        nan = np.isnan(X)
        self.missing_ = nan.any(axis=0)  # features with missing values in the fit rows
        if self.missing_.any():  # the deep input's standardisation skips NaN
            x_mean, x_sd = _nan_mean_std(X, nan, weight)
        else:
            x_mean, x_sd = weighted_mean_std(X, weight)
        x_scale = np.where(x_sd > 0, x_sd, 1.0)
        knots = None
        n_fit = n if weight is None else int((weight > 0).sum())  # rows of weight > 0
        self.lam_ = resolve_lam(getattr(self, "lam", 0.0), n_fit)  # "rows": a rule of the rows
        if self._has_additive:
            self.gamma_ = resolve_gamma(self.gamma, n_fit)  # "auto": a rule of the fit rows
            auto = shape_choice.smoothness_is_auto(self)  # "auto": chosen in `_members`
            smoothness = getattr(self, "smoothness", 0.0)
            self.smoothness_ = 0.0 if auto else resolve_smoothness(smoothness, n_fit)
            knots = fit_knots(X, self.gamma_, self.knots, self.categorical_, weights=weight)
            self._warn_few_rows_per_piece(knots, n_fit)
        self.seed_ = seed
        prep = Prepared(X, target, train_idx, val_idx, seed, x_mean, x_scale, knots)
        onehot = self._deep_onehot(X)
        if onehot:  # categorical features enter the deep part one-hot
            prep = dataclasses.replace(prep, onehot=onehot)
        if self.missing_.any():  # missing values: NaN contributions, deep indicators
            prep = dataclasses.replace(prep, missing=self.missing_.copy())
        if weight is not None:  # sample weights: all rows (statistics), the training rows
            prep = dataclasses.replace(prep, weight=weight, train_weight=weight[train_idx])
        return prep

    def _deep_onehot(self, X: np.ndarray) -> tuple[tuple[int, np.ndarray], ...] | None:
        """`Prepared.onehot`: with ``deep_categorical="onehot"`` each categorical feature with
        more than 2 levels and its levels (the sorted codes of the fit rows; NaN is a missing
        value, not a level); None when there is none, or for ``"code"`` and the families without
        the parameter. A feature with 1 or 2 levels keeps its code: one standardised column
        holds what its indicators would (so 0/1 columns, e.g. the runner's one-hot matrices,
        enter the deep part the same either way)."""
        if getattr(self, "deep_categorical", "code") != "onehot" or not self.categorical_.any():
            return None
        pairs = []
        for j in np.flatnonzero(self.categorical_):
            column = X[:, j]
            levels = np.unique(column[np.isfinite(column)])
            if len(levels) > 2:
                pairs.append((int(j), levels))
        return tuple(pairs) or None

    def _warn_few_rows_per_piece(self, knots, n_rows: int) -> None:
        """One line when a numeric feature has fewer than `MIN_ROWS_PER_PIECE` fit rows per
        piece (categorical features get a piece per category whatever gamma is); none with
        PiLiD's ``smoothness`` > 0, whose penalty ties neighbouring slopes together."""
        pieces = knots.n_pieces[~np.asarray(knots.categorical, dtype=bool)]
        if pieces.size == 0 or resolved_smoothness(self) > 0:
            return
        most = int(pieces.max())
        if n_rows >= MIN_ROWS_PER_PIECE * most:
            return
        largest = max(1, n_rows // MIN_ROWS_PER_PIECE)
        warnings.warn(
            f"{type(self).__name__}: gamma={self.gamma!r} cuts a feature into {most} pieces for "
            f"{n_rows} rows ({n_rows / most:.2g} rows per piece, fewer than {MIN_ROWS_PER_PIECE}),"
            f" too few to fit each piece's slope; use gamma <= {largest} or more rows",
            FewRowsPerPieceWarning,
            stacklevel=2,
        )

    # --------------------------------------------------------------- bagging
    def _members(self, prep: Prepared) -> list:
        """`Trainable._members`: itself, or with ``n_bags`` > 1 the bag's bootstrap members
        (`pilid.models.bagging`), trained as trials of one ensemble; with
        ``smoothness="auto"`` or ``pairs="auto"`` every candidate's
        (`pilid.models.shape_choice.chooses`)."""
        if shape_choice.chooses(self, prep):
            units = shape_choice.candidate_members(self, prep)
            return shape_choice.split_first_members(self, units, self._first_members(prep))
        if multiclass.is_multiclass(self) and not hasattr(self, "_class_index"):
            return multiclass.class_members(self, prep)  # K > 2 classes: a softmax group
        n_bags = int(getattr(self, "n_bags", 1))
        if n_bags == 1:
            return [(self, prep)]
        return bagging.bag_members(self, prep, n_bags)

    def _collect(self) -> None:
        if "_candidates" in self.__dict__ or "_chosen" in self.__dict__:  # a choice's steps
            shape_choice.collect(self)
            return
        if "_bag" in self.__dict__:
            bagging.collect_bag(self)
        if "_classes" in self.__dict__:
            multiclass.collect_classes(self)

    def _first_members(self, prep: Prepared) -> int | None:
        """How many of each candidate's bag members train before a choice among candidates:
        `pilid.models.shape_choice.CHOICE_MEMBERS` where the deep part is chosen
        (``deep_input="auto"`` on enough rows, `pilid.models.shape_choice.chooses_deep`), else
        None (all of them)."""
        return shape_choice.CHOICE_MEMBERS if shape_choice.chooses_deep(self, prep) else None

    def _more_members(self) -> list:
        """`Trainable._more_members`: after a choice on the candidates' first members, the
        chosen candidate's other members (`pilid.models.shape_choice.more_members`)."""
        return shape_choice.more_members(self)

    def _multiclass(self) -> bool:
        """Fitted on K > 2 classes: the class members (`pilid.models.multiclass`) hold it."""
        return getattr(self, "class_estimators_", None) is not None

    def _bagged(self) -> bool:
        return getattr(self, "estimators_", None) is not None

    # ---------------------------------------------------------------- output
    def _description(self) -> FittedEnsemble:
        """The fitted model's one description, ``fitted_`` (`pilid.models.description`); during
        fit, before it is kept, one built from what fit has set so far."""
        fitted = self.__dict__.get("fitted_")
        return fitted if fitted is not None else describe(self)

    def __setstate__(self, state):
        """A pickle of a release before ``fitted_`` existed gets its description built (its
        engine version not known: ``fitted_.engine`` None)."""
        super().__setstate__(state)
        fitted = "module_" in state and not state.get("diverged_")
        if fitted and "fitted_" not in state and "_candidates" not in state:
            self.fitted_ = describe(self, engine=None)

    def _inputs(self, X: np.ndarray):
        """The deep input (B, m') and compact Phi ``(col, frac, miss, unseen)`` (each (1, B, m),
        or None) of validated X, as the description encodes them (`InputEncoding`)."""
        encoding = self._description().encoding
        chunk = rows_tensor(X)
        return encoding.deep_input(chunk)[0], encoding.phi(chunk)

    @torch.no_grad()
    def _raw(self, X: np.ndarray) -> np.ndarray:
        """The model's raw output (standardised target / logit) for validated X, (n,); a bag's
        is the mean of its members' (`pilid.models.bagging`); K > 2 classes: the K class logits,
        (n, K) (`pilid.models.multiclass`). The description's (`FittedEnsemble.raw`)."""
        return self._description().raw(X)

    @torch.no_grad()
    def _terms(self, X: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """This single model's module's ``decompose`` on validated X, uncentred and in the
        standardised units: (terms (n, m) or None, deep (n,) or None) (fit's centring)."""
        encoding = encoding_of(self)
        terms, deep = [], []
        for s in range(0, X.shape[0], CHUNK):
            chunk = rows_tensor(X[s : s + CHUNK])
            t, d = self.module_.decompose(encoding.deep_input(chunk), encoding.phi(chunk))
            terms += [] if t is None else [t[0].double().numpy()]
            deep += [] if d is None else [d[0].double().numpy()]
        return (np.concatenate(terms) if terms else None, np.concatenate(deep) if deep else None)

    def decompose(self, X) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """Eq. (9) term by term, in output units (target units / logits).

        Returns ``(intercept_, contributions (n, m) or None, deep part (n,) or None)`` with
        ``intercept_ + contributions.sum(1) + deep`` equal to the raw output
        (`predict` for regression, `decision_function` for classification). With K > 2 classes
        every term has a last axis of K (intercept (K,), contributions (n, m, K), deep (n, K)),
        class k's terms summing to ``decision_function(X)[:, k]``.
        """
        return self._decompose(self._check_fitted_X(X))

    def _decompose(self, X: np.ndarray) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """`decompose` of validated X: the description's (`FittedEnsemble.decompose`; a bag's
        terms the means of its members', so Eq. 9 stays exact)."""
        return self._description().decompose(X)

    def _finalize(self, prep: Prepared) -> None:
        """Fitted attributes that need the T=1 module: centring of the contributions."""
        bagging.take_inputs(self, prep)
        offset = 0.0
        if self.knots_ is not None:  # centred on the fit rows, a sample of a large table's
            X, weight = prep.X, prep.weight
            if len(X) > SAMPLE_ROWS:
                rows = sample_rows(len(X), prep.seed)
                X, weight = X[rows], None if weight is None else weight[rows]
            terms, _ = self._terms(X)
            self.contribution_offset_ = weighted_mean_std(terms, weight)[0]
            offset = float(self.contribution_offset_.sum())
            self._set_unseen_value()
        self.intercept_ = self.y_offset_ + self.y_scale_ * offset

    def _set_unseen_value(self) -> None:
        """The contribution of a value not seen in fit (NaN in a feature without missing
        values, a new category): each u_j's training mean, `contribution_offset_` (centred: 0),
        stored in the additive part's ``unseen_value`` (`pilid.nn.additive.AdditiveEnsemble`)."""
        a = self.module_.additive
        a.unseen_value = torch.zeros_like(a.omega.detach())
        probe = np.full((1, self.n_features_in_), np.inf)  # every feature unseen
        terms, _ = self._terms(probe)
        value = self.contribution_offset_ - terms[0]
        a.unseen_value = torch.as_tensor(value[None], dtype=a.omega.dtype)

    # ------------------------------------------------------------------- fit
    def fit(self, X, y, sample_weight=None):
        """Fit on (X, y): ``fit_batched([self], [X], [y], sample_weights=[sample_weight])``
        (Algorithm 1). Returns self.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The training rows.
        y : array-like of shape (n_samples,)
            The target (regression) or the class labels (classification).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Non-negative weights, one per row, not all zero (`pilid.models.sample_weight`): the
            training and validation losses are weighted means, the least-squares start and
            the purification weighted least squares, the quantile knots weighted quantiles
            (weights as repeat counts), the scaling and the centring weighted; a bag draws its
            bootstrap rows with probability proportional to the weight (they then train with
            unit weight). The holdout split is drawn over rows as without weights. None, or
            weights that are all equal: the unweighted fit, exactly. With one full batch
            (``batch_size`` >= rows), ``patience=None`` and ``n_bags=1``, integer weights give
            the model fitted on the rows repeated that many times (within float rounding).

        Returns
        -------
        self
            The fitted estimator.
        """
        fit_batched([self], [X], [y], sample_weights=[sample_weight])
        return self

    def __sklearn_tags__(self):
        """scikit-learn's tags: no NaN input; non-deterministic without ``random_state``."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN: a missing value (its own contribution)
        tags.non_deterministic = self.random_state is None
        return tags
