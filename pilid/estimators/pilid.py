"""PiLiD and its MLP baseline as scikit-learn estimators.

`PiLiDRegressor` / `PiLiDClassifier` implement the model of Section 3 of Guo et al., IJCAI 2020
(Eq. 9-11, Algorithm 1): a piecewise-linear additive component on Phi (Definitions 1-2) plus an
MLP, trained jointly. `MLPRegressor` / `MLPClassifier` are the same MLP and training without
the additive component (the paper's MLP baseline). Both families are `NeuralEstimator`s
(`pilid.estimators.neural`); training goes through `pilid.models.fitting.fit_batched`.
"""

from __future__ import annotations

import dataclasses

from pilid import hyperparameters as hp
from pilid.estimators.neural import (
    ADDITIVE_ATTRIBUTES_DOC,
    BAG_CONSTRAINTS,
    DEEP_CATEGORICAL,
    FITTED_ATTRIBUTES_DOC,
    HIDDEN_LAYERS,
    PENALTY_CONSTRAINTS,
    RULES,
    SIGMA,
    NeuralEstimator,
)
from pilid.inspection import pair_effect
from pilid.inspection.interaction_display import InteractionPlotMixin
from pilid.inspection.joint_grid import keep_grid_rows
from pilid.inspection.shapes import ShapeMixin
from pilid.models import multiclass, shape_choice
from pilid.models.monotone import (
    MONOTONE_ATTRIBUTE_DOC,
    MONOTONE_CONSTRAINTS,
    MONOTONE_DOC,
    MonotoneMixin,
)
from pilid.models.outputs import ClassifierOutput, RegressorOutput
from pilid.models.pair_choice import fast_pairs
from pilid.models.params import Choice, ParamError, Satisfies, is_whole, sklearn_constraints
from pilid.nn.embedding import EmbeddedBuilder
from pilid.nn.mlp import PAPER_HIDDEN_LAYERS
from pilid.streams import STREAM_GRID_ROWS, trial_rng
from pilid.train.batched import SAMPLE_ROWS, sample_rows

__all__ = [
    "LIBRARY_DEFAULTS",
    "PAPER_PROTOCOL",
    "MLPClassifier",
    "MLPRegressor",
    "PiLiDClassifier",
    "PiLiDRegressor",
]


#: PiLiD's library defaults that differ from the paper's protocol (conf/model/pilid.yaml pins the
#: paper's; conf/model/pilid_lib.yaml, Table 3's "PiLiD (library defaults)" row, pins these),
#: read from `pilid.hyperparameters.PILID`.
#: Chosen on the development suite of R's tables (`pilid.data.suite`; never on a UCI set of the
#: paper; see the documentation's study pages): 40 pieces per feature held smooth by a roughness
#: penalty whose weight is a rule of the training rows (``smoothness="rows"``: 500 / n), the
#: MLP's lam a rule of the rows too (``lam="rows_steep"``: 5 / n up to 5,000 rows, falling as
#: 1 / n^2 beyond; `pilid.models.row_rules`), pair
#: terms for FAST's first pairs where inner validation keeps them (``pairs="auto"``), a (64, 32)
#: MLP and a bag of 16 (both beat the paper's six layers and one model on breast cancer,
#: diabetes and synthetic data).
LIBRARY_DEFAULTS = {p.name: p.default for p in hp.model_keys(hp.PILID) if p.default != p.paper}
#: The paper's values of the same hyper-parameters (Section 4; conf/model/pilid.yaml pins them):
#: ``PiLiDRegressor(**PAPER_PROTOCOL)`` is the paper's PiLiD with gamma=5.
PAPER_PROTOCOL = {name: hp.paper_values(hp.PILID)[name] for name in LIBRARY_DEFAULTS}
#: The constructor's defaults (`pilid.hyperparameters.PILID`).
_DEFAULTS = hp.defaults(hp.PILID)

_PILID_DOC = (
    """

    A piecewise-linear additive component u_j on Phi (Definitions 1-3, Eq. 10) plus an MLP
    (Eq. 6-8), trained jointly (Eq. 9, 11; Algorithm 1). The defaults are the library's
    (`LIBRARY_DEFAULTS`, chosen on the development suite of R's tables, none of the paper's UCI
    sets; see the documentation's study pages); the paper's values are given in brackets and
    pinned by ``conf/model/pilid.yaml`` (`PAPER_PROTOCOL`).

    Parameters
    ----------
    gamma : int, sequence of int or "auto", default=40
        Pieces per numeric feature (one value, or one per feature; Definition 1) [1-20]; the
        ``smoothness`` penalty keeps the 40 of the default straight where the data show no bend.
        ``"auto"``: a rule of the training rows (`pilid.nn.piecewise.auto_gamma`: 2 pieces up
        to 421 rows, 5 from 2,461).
    knots : {"quantile", "uniform"}, default="quantile"
        Characteristic points at the training quantiles, or equal sub-intervals of the
        training range [the paper's].
    init : {"lstsq", "gaussian"}, default="lstsq"
        Start of the additive part: least squares of y on Phi (Algorithm 1, step 2; Cholesky of
        the ridge normal equations; classification: the labels coded -1/+1), or Gaussian.
    hidden_layers : tuple of int or None, default=(64, 32)
        The MLP's layer sizes [(100, 200, 400, 400, 200, 100)]; None: no MLP (the additive part
        alone, with the pair terms of ``pairs`` if any).
    sigma : float or None, default=None
        Std of the MLP's Gaussian weight init (and of w with ``init="gaussian"``); None:
        He-normal sqrt(2 / fan_in) per layer, which trains far better than a small fixed std
        [0.05].
    reg : {"l2", "l1"}, default="l2"
        The penalty Omega of Eq. 11.
    lam : float, "rows" or "rows_steep", default="rows_steep"
        Its weight lambda [1e-5]. ``"rows"``: a rule of the n training rows, 5 / n clipped to
        [1e-6, 1e-2] (`pilid.models.row_rules`; 1e-3 at 5,000 rows); ``"rows_steep"``: the same
        up to 5,000 rows and 5 / n * 5,000 / n beyond (1e-5 at 50,000 rows), so that on many
        rows the MLP is held back less. The value is in ``lam_``.
    reg_groups : str or sequence of str, default="all"
        What Omega covers: ``"all"`` (Eq. 11), ``"additive"``, ``"deep"``, or any of ``"w"``,
        ``"b"``, ``"omega"``.
    purify : bool, default=True
        After training, move the MLP's main effects into the additive shapes (predictions
        unchanged; `pilid.nn.ensemble`).
    lr : float, default=0.005
        Learning rate [0.005]. A fit whose training diverges raises
        `pilid.errors.TrainingDivergedError` (lower ``lr``).
    epochs : int, default=100
        Upper bound on the epochs (0: Algorithm 1's start alone, no gradient step); the paper
        gives no epoch count.
    batch_size : int, default=256
        Mini-batch size (not given by the paper).
    optimizer : {"adam", "sgd"}, default="adam"
        ``"adam"`` is the paper's.
    patience : int or None, default=10
        Early stopping: epochs without a better validation loss before training stops (best
        weights restored); None: no early stopping, every training row trains.
    val_fraction : float, default=0.1
        The fraction of the training rows held out for early stopping.
    random_state : int, RandomState or None, default=None
        Seeds the split, the mini-batches and the initialisation.
    device : str, default="auto"
        ``"cpu"``, ``"cuda"``, ...; ``"auto"``: CUDA when present.
    categorical_features : sequence of int or str, boolean mask or None, default=None
        Categorical columns (indices, names or a mask); pandas category, object and string
        columns are categorical anyway. Shapes and explanations show a category by its level
        as given (a numeric column named here by its values); a category not seen in fit gets
        its feature's average contribution (0) and a `UnseenCategoryWarning`. X may hold NaN
        (a missing value, in any column; inf is refused): a feature with NaN in fit gets its
        own learned contribution for NaN (EBM's ``missing='separate'``; `shape_functions`
        shows it as a row with ``x`` NaN) and the deep part a neutral value and a missing
        indicator; NaN at prediction in a feature without NaN in fit gets that feature's
        average contribution (0) and a `UnseenMissingWarning` (`pilid.models.inputs`).
    deep_categorical : {"onehot", "code"}, default="onehot"
        How a categorical feature with more than 2 levels enters the deep part (beyond the
        paper, whose UCI sets come one-hot encoded): ``"onehot"``, one 0/1 column per level
        seen in fit (a missing or unseen category: all 0); ``"code"``, its level's code as one
        standardised number (which imposes an order the levels may not have). A feature with
        1 or 2 levels is one standardised column either way, and the additive part is the same
        either way (a piece per category, Definition 1).
    smoothness : float, "rows" or "auto", default="rows"
        Weight of a roughness penalty on the shapes, added to the loss of Eq. 11 (beyond the
        paper; P-splines' difference penalty; it also enters the least-squares start):
        ``smoothness * sum_j sum_k (v_{j,k+1} - v_{j,k})^2``, v_{j,k} = omega_j w_k the rise of
        u_j over its piece k, over the neighbouring pieces of each numeric feature
        (`pilid.nn.additive.AdditiveEnsemble.roughness`). It lets many pieces (a large
        ``gamma``) follow a sharp bend or a step where the data show one and stay straight
        elsewhere. 0: no such term [the paper's]. ``"rows"``: a rule of the n training rows,
        500 / n clipped to [1e-3, 10] (`pilid.models.row_rules`; 0.1 at 5,000 rows), a prior
        on the roughness that counts for less as the rows grow (``smoothness_``). ``"auto"``:
        chosen by inner validation
        (`pilid.models.shape_choice`): the estimator's own ``gamma`` without the term and 40
        pieces (or the given ``gamma``) with ``smoothness=0.1`` are both trained, and the one
        with the lower loss on rows it did not train on (those held out for early stopping and,
        in a bag, the out-of-bag rows) is kept (``gamma_``, ``smoothness_``; ``shape_choice_``
        lists both); needs ``patience`` (held-out rows) or ``n_bags`` > 1.
    pairs : int, "auto" or list of int, default="auto"
        Explicit pairwise piecewise-linear terms (beyond the paper; GA2M's pair terms) for the
        ``pairs`` pairs of features that FAST ranks first on the training rows
        (`pilid.models.pair_choice`): each pair gets a bilinear function on the grid of the two
        features' characteristic points, at most `pilid.nn.pairs.PAIR_PIECES` pieces a side
        (`pilid.nn.pairs.PairTerms`), trained with the MLP as part of the deep component (so the
        purification moves its main effects into the shapes; ``pairs_`` names the pairs).
        Features with a monotone constraint take part in no pair. 0: none [the paper's].
        ``"auto"``: chosen by inner validation as for ``smoothness``, between none and
        `pilid.models.pair_choice.AUTO_PAIRS` (``shape_choice_``); with no rows to choose on
        (``patience=None`` and ``n_bags=1``) none. A list of numbers, e.g. ``[0, 10, 30]``:
        chosen among those the same way (FAST's first k pairs for each k; with no rows to
        choose on, the fewest). Regression or two classes (with K > 2 classes ``"auto"`` or
        a list has no candidate with pairs).
    deep_input : {"columns", "auto"}, default="auto"
        What the MLP reads (beyond the paper). ``"columns"``: the standardised columns of Eq. 6 [the
        paper's]. ``"auto"``: from `pilid.models.shape_choice.EMBEDDING_MIN_ROWS` fit rows on,
        chosen by inner validation (`pilid.models.shape_choice`), and on fewer the columns (the same
        fit as ``"columns"``): every ``pairs`` / ``smoothness`` candidate is trained twice, with
        that MLP and with TabM's (Gorishniy et al., ICLR 2025), an MLP of the same layers on
        piecewise-linear embeddings of Phi, 16 numbers per feature (`pilid.nn.embedding`), which
        Eq. 11's penalty leaves free (``reg_groups="additive"``); each candidate trains the first 4
        members of its bag, the one of lower validation loss is kept and trains its other members
        (``shape_choice_`` lists each candidate's ``deep_input``). The additive part and its
        purified shapes are read as with the columns. With ``hidden_layers=None``, monotone
        constraints (the embeddings read every feature) or no rows to choose on: the columns.
    verbose : bool, default=False
        A progress bar with the epoch losses.
    n_bags : int, default=16
        1: one model [the paper's]. k > 1: bagging (beyond the paper, `pilid.models.bagging`):
        k members, each on a bootstrap sample of the training rows with its own seed and early
        stopping, trained as one batched ensemble; predictions, contributions and shapes are the
        members' means (classification: the mean logit), `shape_functions` adds the members'
        spread (``std``, ``lower``/``upper`` = 2.5/97.5 percentiles)."""
    + MONOTONE_DOC
    + """

    Attributes
    ----------"""
    + MONOTONE_ATTRIBUTE_DOC
    + ADDITIVE_ATTRIBUTES_DOC
    + """    pairs_ : list of (str, str)
        The pairs of features with a pair term (``pairs``), by their names; [] for none.
        `interaction_grid` / `plot_interaction` draw the model's interaction of any two
        features (`pilid.inspection.pair_effect`).
    x_min_, x_max_ : ndarray of shape (n_features,)
        Each feature's training range (the axes of `interaction_grid`).
    lam_, smoothness_ : float
        The penalty weights the fit trained with: ``lam`` and ``smoothness`` as numbers
        (``"rows"``: their value at the fit's rows; ``smoothness="auto"``: the chosen
        candidate's).
"""
    + FITTED_ATTRIBUTES_DOC
)

_EXAMPLE = """
    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from pilid import {name}
    >>> X, y = make_friedman1(n_samples=300, random_state=0)
    >>> model = {name}({params}random_state=0).fit(X, y{target})
    >>> model.shape_functions().columns.tolist()[:3]
    ['feature', 'x', 'value']
"""


def _pair_counts(value) -> bool:
    """Whether `value` is a non-empty list of whole numbers >= 0 (``pairs`` to choose among)."""
    return (
        isinstance(value, list | tuple)
        and len(value) > 0
        and all(is_whole(k) and k >= 0 for k in value)
    )


#: ``pairs`` as a list: the numbers of pair terms inner validation chooses among.
PAIR_COUNTS = Satisfies(_pair_counts, "a list of whole numbers >= 0 to choose among, e.g. [0, 10]")
#: The checks `pilid.hyperparameters.PILID` names (its `Rule`s), as scikit-learn constraints.
_RULES = {**RULES, "monotone_constraints": MONOTONE_CONSTRAINTS, "pair_counts": [PAIR_COUNTS]}


class PiLiDBase(InteractionPlotMixin, MonotoneMixin, ShapeMixin, NeuralEstimator):
    """PiLiD's hyper-parameters and training (Algorithm 1), shared by `PiLiDRegressor` and
    `PiLiDClassifier`; see their docstrings."""

    #: read from `pilid.hyperparameters.PILID` (`pilid.models.params.sklearn_constraints`)
    _parameter_constraints = sklearn_constraints(hp.PILID, _RULES)

    def __init__(  # the defaults are `pilid.hyperparameters.PILID`'s
        self,
        gamma=_DEFAULTS["gamma"],
        knots=_DEFAULTS["knots"],
        init=_DEFAULTS["init"],
        hidden_layers=_DEFAULTS["hidden_layers"],
        sigma=_DEFAULTS["sigma"],
        reg=_DEFAULTS["reg"],
        lam=_DEFAULTS["lam"],
        reg_groups=_DEFAULTS["reg_groups"],
        purify=_DEFAULTS["purify"],
        lr=_DEFAULTS["lr"],
        epochs=_DEFAULTS["epochs"],
        batch_size=_DEFAULTS["batch_size"],
        optimizer=_DEFAULTS["optimizer"],
        patience=_DEFAULTS["patience"],
        val_fraction=_DEFAULTS["val_fraction"],
        random_state=_DEFAULTS["random_state"],
        device=_DEFAULTS["device"],
        categorical_features=_DEFAULTS["categorical_features"],
        verbose=_DEFAULTS["verbose"],
        n_bags=_DEFAULTS["n_bags"],
        monotone_constraints=_DEFAULTS["monotone_constraints"],
        deep_categorical=_DEFAULTS["deep_categorical"],
        smoothness=_DEFAULTS["smoothness"],
        pairs=_DEFAULTS["pairs"],
        deep_input=_DEFAULTS["deep_input"],
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
        self.n_bags = n_bags
        self.monotone_constraints = monotone_constraints
        self.deep_categorical = deep_categorical
        self.smoothness = smoothness
        self.pairs = pairs
        self.deep_input = deep_input

    def _deep_builder(self):
        """PiLiD's MLP (`pilid.nn.mlp.MLPBuilder`), or for a candidate of ``deep_input="auto"``
        that embeds (`pilid.models.shape_choice`) TabM's MLP on the embeddings of its data's
        Phi (`pilid.nn.embedding.EmbeddedBuilder`)."""
        d = self.__dict__.get("_deep_embedding")
        if d is None or self.hidden_layers is None:
            return super()._deep_builder()
        return EmbeddedBuilder(self.hidden_layers, self.sigma, self._deep_knots, d)

    def _prepare(self, X, y, sample_weight=None):
        """`pilid.train.Trainable._prepare`, then the pairs of the pair terms (``pairs``,
        `pilid.models.pair_choice.fast_pairs` on the training rows; ``"auto"``: `AUTO_PAIRS`
        for the candidate that has them, `pilid.models.shape_choice`): `Prepared.pairs` and
        ``pairs_``."""
        # a chosen candidate's, kept from a last fit, and a choice a stopped fit left halfway
        for attr in ("_deep_embedding", "_deep_knots", "_chosen", "_rest_of_chosen"):
            self.__dict__.pop(attr, None)
        prep = super()._prepare(X, y, sample_weight)
        # what `interaction_grid` needs of the training rows (a background, the ranges)
        keep_grid_rows(self, prep.X[prep.train_idx], trial_rng(prep.seed, STREAM_GRID_ROWS))
        counts = shape_choice.pair_counts(self.pairs)  # None: a number, no choice
        k = int(self.pairs) if counts is None else max(counts)
        self.pairs_ = []
        if counts is not None and not shape_choice.has_rows_to_choose_on(self, prep):
            k = min(counts)  # nothing to choose on (patience=None, one model): the fewest
        if k == 0:
            return prep
        if multiclass.is_multiclass(self):
            if counts is not None:  # K > 2 classes: no candidate with pairs
                return prep
            raise ParamError(
                "pairs", self.pairs, "pair terms take a regression target or two classes; use 0"
            )
        rows, weight = prep.train_idx, prep.train_weight
        if weight is not None:  # FAST takes the rows of weight > 0 (it refuses a weight of 0)
            rows, weight = rows[weight > 0], weight[weight > 0]
        if len(rows) > SAMPLE_ROWS:  # a large table: FAST ranks the pairs on a sample of it
            keep = sample_rows(len(rows), prep.seed)
            rows, weight = rows[keep], None if weight is None else weight[keep]
        found = fast_pairs(
            prep.X[rows],
            prep.target[rows],
            k,
            prep.knots,
            self._task,
            self.categorical_,
            weight=weight,
            exclude=self._constrained(),
        )
        names = self._feature_names()
        self.pairs_ = [(names[a], names[b]) for a, b in found]
        return dataclasses.replace(prep, pairs=found) if len(found) else prep

    def interaction_grid(self, i, j, n: int = 50, X=None):
        """The model's interaction of features `i` and `j` on an n x n grid: DataFrame (x_a,
        x_b, value; a bag adds std, lower, upper), in output units: the partial dependence on
        both less the two single ones (`pilid.inspection.pair_effect`), what the MLP and the pair
        terms do together beyond the shapes; `plot_interaction` draws it. `X`: the rows the
        partial dependence averages over (default: up to 200 training rows kept at fit)."""
        return pair_effect.interaction_grid(self, i, j, n=n, X=X)


class PiLiDRegressor(RegressorOutput, PiLiDBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "PiLiD for regression (Guo et al., IJCAI 2020, Section 3; MSE loss)."
        + _PILID_DOC
        + _EXAMPLE.format(name="PiLiDRegressor", params="n_bags=2, epochs=5, ", target="")
    )


class PiLiDClassifier(ClassifierOutput, PiLiDBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "PiLiD for binary classification (Section 3; cross-entropy on the logit)."
        + _PILID_DOC
        + _EXAMPLE.format(name="PiLiDClassifier", params="n_bags=2, epochs=5, ", target=" > 14")
    )


class MLPBase(NeuralEstimator):
    """The MLP baseline's hyper-parameters, shared by `MLPRegressor` and `MLPClassifier`."""

    _has_additive = False
    _parameter_constraints = {
        **NeuralEstimator._parameter_constraints,
        **PENALTY_CONSTRAINTS,
        **BAG_CONSTRAINTS,
        "hidden_layers": [HIDDEN_LAYERS],
        "sigma": SIGMA,
        "deep_categorical": [Choice(DEEP_CATEGORICAL)],
    }

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
        n_bags=1,
        deep_categorical="onehot",
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
        self.n_bags = n_bags
        self.deep_categorical = deep_categorical


_MLP_DOC = (
    """

    The paper's MLP baseline: PiLiD's deep component alone (Eq. 6-8), trained the same way,
    with the paper's six layers by default. It has no piecewise-linear part to constrain, so it
    takes no ``monotone_constraints`` (PiLiD and PiLiB do).

    Parameters
    ----------
    hidden_layers : tuple of int, default=(100, 200, 400, 400, 200, 100)
        The layer sizes (`pilid.nn.mlp.PAPER_HIDDEN_LAYERS`).
    sigma : float or None, default=None
        Std of the Gaussian weight init; None: He-normal.
    reg : {"l2", "l1"}, default="l2"
        The penalty Omega.
    lam : float, default=1e-5
        Its weight.
    lr, epochs, batch_size, optimizer, patience, val_fraction, random_state, device, \
categorical_features, verbose
        As in `PiLiDRegressor` (defaults 0.005, 100, 256, "adam", 10, 0.1, None, "auto",
        None, False).
    n_bags : int, default=1
        k > 1 averages the raw outputs (predictions or logits) of k bootstrap members trained
        as one batched ensemble (`pilid.models.bagging`).
    deep_categorical : {"onehot", "code"}, default="onehot"
        As in `PiLiDRegressor`: a categorical feature as one 0/1 column per level, or as its
        code.

    Attributes
    ----------"""
    + FITTED_ATTRIBUTES_DOC
)


class MLPRegressor(RegressorOutput, MLPBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "The paper's MLP baseline (PiLiD's deep component alone, same training), regression."
        + _MLP_DOC
    )


class MLPClassifier(ClassifierOutput, MLPBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = (
        "The paper's MLP baseline (PiLiD's deep component alone, same training), binary." + _MLP_DOC
    )
