"""PiLiD's hyper-parameters, each declared once (Guo et al., IJCAI 2020, Section 3; Algorithm 1).

One `Hyperparameter` per constructor parameter of `PiLiDRegressor` / `PiLiDClassifier`, in the
constructor's order (`PILID`): its name, the library's default, its valid values (`constraint`,
in the plain words below), where the harness sets it (`where`), the value the paper's runs take
(`paper`), the Hydra schema's type of a ``model.*`` key (`type`, `library_type`) and the value at
which a key added after records existed is left out of the setting id (`identity`). Everything
else is read off this table:

* the constructors' defaults (explicit keyword arguments, as scikit-learn requires, whose
  defaults are `defaults`), and `LIBRARY_DEFAULTS` / `PAPER_PROTOCOL` of `pilid.estimators.pilid`;
* the estimators' `_parameter_constraints` (`pilid.models.params.sklearn_constraints` turns a
  constraint into scikit-learn's objects; a `Rule` names a check whose code lives in a lower
  layer);
* the Hydra schemas of ``conf/model/pilid.yaml`` and ``pilid_lib.yaml`` (`pilid.schema`);
* the ``model`` entries of `pilid.experiments.setting.KEYS_ADDED_AT_IDENTITY` (`identities`);
* the pinned-protocol check: ``conf/model/pilid.yaml`` holds every ``model`` key at its `paper`
  value, ``pilid_lib.yaml`` at its `default` (``tests/test_pinned_protocol.py``).

A new hyper-parameter of PiLiD is one entry here (plus its docstring entry, its code and, for a
``model`` key, its line in both YAML files); a key added to the config group after records
existed gets the `identity` that computes what was computed before, so no setting id moves.

This module is plain data (layer 0): it imports nothing of pilid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "HASHED",
    "PILID",
    "TRAINING",
    "UNPINNED",
    "WHERE",
    "Hyperparameter",
    "Integers",
    "OneOf",
    "Reals",
    "Rule",
    "by_name",
    "defaults",
    "identities",
    "model_keys",
    "options",
    "paper_values",
]


class _Marker:
    """A named marker value (`HASHED`, `UNPINNED`), shown by its name."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        """The marker's name."""
        return self.name


#: `Hyperparameter.identity` of a key that is hashed at every value (no key added later).
HASHED = _Marker("HASHED")
#: `Hyperparameter.paper` of a parameter that no config of the paper's runs sets.
UNPINNED = _Marker("UNPINNED")


# -- constraints, in words every layer can read --------------------------------------------------
@dataclass(frozen=True)
class Integers:
    """A whole number (not a bool) in [low, high] (``closed`` as scikit-learn's `Interval`:
    "left", "right", "both" or "neither"; None: no bound)."""

    low: int | None
    high: int | None = None
    closed: str = "left"


@dataclass(frozen=True)
class Reals:
    """A real number (not a bool) in the interval from ``low`` to ``high`` (``closed`` as for
    `Integers`; an interval open at infinity refuses inf)."""

    low: float | None
    high: float | None = None
    closed: str = "left"


@dataclass(frozen=True)
class OneOf:
    """One of these strings (the error message lists them in this order)."""

    options: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    """A check whose code lives in a lower layer (e.g. ``"gamma"``: one number of pieces or one
    per feature, `pilid.nn.piecewise.valid_gamma`), named here and resolved by the estimators
    (its ``rules`` of `pilid.models.params.sklearn_constraints`); ``words`` says it."""

    name: str
    words: str


#: Where the harness sets a parameter: ``model`` (a key of ``conf/model/pilid*.yaml`` and of
#: the schema), ``train`` (``conf/config.yaml``'s ``train`` block), ``run`` (the runner, per
#: trial: seed, device, the split's categorical columns, verbosity), ``none`` (left at its
#: default by the harness, the reason in `Hyperparameter.doc`).
WHERE = ("model", "train", "run", "none")


@dataclass(frozen=True)
class Hyperparameter:
    """One hyper-parameter of PiLiD, declared once.

    Parameters
    ----------
    name : str
        The constructor's keyword (and the config key, for ``where="model"``).
    default : object
        The library's default: the constructor's.
    constraint : tuple
        The valid values, any of: `Integers`, `Reals`, `OneOf`, `Rule`, None (the value None),
        and scikit-learn's own words (``"boolean"``, ``"random_state"``, ``"verbose"``,
        ``"array-like"``, a type such as ``str``; ``"no_validation"`` alone: not checked).
    doc : str
        What it is, in a line (the paper's definition or equation where it has one).
    where : str
        Where the harness sets it (`WHERE`).
    paper : object, default=UNPINNED
        The value the paper's runs take (``conf/model/pilid.yaml`` or ``conf/config.yaml``'s
        ``train``): the paper's value, the harness's where the paper gives none, and for a
        parameter beyond the paper the value that leaves the paper's model unchanged;
        `UNPINNED` where no config sets it.
    type : object, default=None
        A ``model`` key's type in the Hydra schema of ``conf/model/pilid.yaml`` (a field is
        ``float`` only where its YAML value is a float: the type decides the setting id).
    library_type : object, default=None
        Its type in ``pilid_lib.yaml``'s schema, where the library's value is of another kind
        (a rule of the rows such as ``"rows"``); None: `type`.
    identity : object, default=HASHED
        For a ``model`` key added after records existed: the value that computes what was
        computed before it existed, at which it is left out of the setting id; `HASHED`: always
        in the setting id.
    """

    name: str
    default: Any
    constraint: tuple
    doc: str
    where: str
    paper: Any = UNPINNED
    type: Any = None
    library_type: Any = None
    identity: Any = HASHED

    def __post_init__(self):
        """Refuse an unknown `where` and a ``model`` key without its schema type."""
        if self.where not in WHERE:
            raise ValueError(f"{self.name}: where={self.where!r} is none of {WHERE}")
        if self.where == "model" and self.type is None:
            raise ValueError(f"{self.name}: a model key needs its schema type")

    @property
    def schema_type(self) -> Any:
        """The type of the key in ``pilid_lib.yaml``'s schema (`library_type`, else `type`)."""
        return self.type if self.library_type is None else self.library_type


# -- the training settings every neural estimator takes (train.* and the runner's) -----------------
TRAINING: tuple[Hyperparameter, ...] = (
    Hyperparameter(
        name="lr",
        default=0.005,
        constraint=(Reals(0, None, "neither"),),
        where="train",
        paper=0.005,
        doc="the optimiser's learning rate (Section 4: 0.005)",
    ),
    Hyperparameter(
        name="epochs",
        default=100,
        constraint=(Integers(0),),
        where="train",
        paper=100,
        doc="upper bound on the epochs of Algorithm 1, step 3 (the paper gives none; an epoch is "
        "a pass over the training rows, or the next 65,536 rows of one on a larger table)",
    ),
    Hyperparameter(
        name="batch_size",
        default=256,
        constraint=(Integers(1),),
        where="train",
        paper=256,
        doc="mini-batch size (the paper gives none)",
    ),
    Hyperparameter(
        name="optimizer",
        default="adam",
        constraint=(OneOf(("adam", "sgd")),),
        where="train",
        paper="adam",
        doc="the optimiser (Section 4: Adam)",
    ),
    Hyperparameter(
        name="patience",
        default=10,
        constraint=(Integers(1), None),
        where="train",
        paper=10,
        doc="early stopping: epochs without a better validation loss (None: no early stopping)",
    ),
    Hyperparameter(
        name="val_fraction",
        default=0.1,
        constraint=(Reals(0, 1, "left"),),
        where="train",
        paper=0.1,
        doc="the fraction of the training rows held out for early stopping",
    ),
    Hyperparameter(
        name="random_state",
        default=None,
        constraint=("random_state",),
        where="run",
        doc="seeds the split, the mini-batches and the initialisation",
    ),
    Hyperparameter(
        name="device",
        default="auto",
        constraint=("no_validation",),
        where="run",
        doc="where it trains (checked where it is resolved: only then is CUDA's presence known)",
    ),
    Hyperparameter(
        name="categorical_features",
        default=None,
        constraint=("array-like", str, None),
        where="run",
        doc="categorical columns (indices, names or a mask)",
    ),
    Hyperparameter(
        name="verbose",
        default=False,
        constraint=("verbose",),
        where="run",
        doc="a progress bar with the epoch losses",
    ),
)

#: PiLiD's constructor parameters, in its order.
PILID: tuple[Hyperparameter, ...] = (
    Hyperparameter(
        name="gamma",
        default=40,
        constraint=(Rule("gamma", "a whole number >= 1, one per feature, or 'auto'"),),
        where="model",
        paper=5,
        type=int,
        library_type=Any,  # "auto": a rule of the rows
        doc="pieces per numeric feature (Definition 1)",
    ),
    Hyperparameter(
        name="knots",
        default="quantile",
        constraint=(OneOf(("uniform", "quantile")),),
        where="model",
        paper="uniform",
        type=str,
        doc="characteristic points (Definition 1): equal sub-intervals or training quantiles",
    ),
    Hyperparameter(
        name="init",
        default="lstsq",
        constraint=(OneOf(("lstsq", "gaussian")),),
        where="model",
        paper="lstsq",
        type=str,
        doc="start of the additive part: least squares on Phi (Algorithm 1, step 2) or Gaussian",
    ),
    Hyperparameter(
        name="hidden_layers",
        default=(64, 32),
        constraint=(Rule("hidden_layers", "a list of layer sizes >= 1"), None),
        where="model",
        paper=(100, 200, 400, 400, 200, 100),
        type=list[int] | None,
        doc="the MLP's layer sizes (Eq. 6-8); None: the additive part alone",
    ),
    Hyperparameter(
        name="sigma",
        default=None,
        constraint=(Reals(0, None, "neither"), None),
        where="model",
        paper=None,
        type=float | None,
        doc="std of the MLP's Gaussian init (None: He-normal; the paper leaves it open)",
    ),
    Hyperparameter(
        name="reg",
        default="l2",
        constraint=(OneOf(("l1", "l2")),),
        where="model",
        paper="l2",
        type=str,
        doc="the penalty Omega of Eq. 11",
    ),
    Hyperparameter(
        name="lam",
        default="rows_steep",
        constraint=(Reals(0, None, "left"), OneOf(("rows", "rows_steep"))),
        where="model",
        paper=1e-5,
        type=float,
        library_type=Any,  # "rows", "rows_steep": pilid.models.row_rules
        doc="the weight lambda of Omega (Eq. 11); 'rows', 'rows_steep': rules of the training rows",
    ),
    Hyperparameter(
        name="reg_groups",
        default="all",
        constraint=(Rule("reg_groups", "any of all, additive, deep, w, b, omega"),),
        where="model",
        paper="all",
        type=str,
        doc="what Omega covers (Eq. 11: all)",
    ),
    Hyperparameter(
        name="purify",
        default=True,
        constraint=("boolean",),
        where="model",
        paper=True,
        type=bool,
        doc="move the MLP's main effects into the shapes after training (beyond the paper)",
    ),
    *TRAINING,
    Hyperparameter(
        name="n_bags",
        default=16,
        constraint=(Integers(1),),
        where="model",
        paper=1,
        type=int,
        identity=1,
        doc="bootstrap members trained as one ensemble (beyond the paper; 1: one model)",
    ),
    Hyperparameter(
        name="monotone_constraints",
        default=None,
        constraint=(Rule("monotone_constraints", "None, {column: 1 or -1} or -1, 0, 1 each"),),
        where="model",
        paper=None,
        type=Any,
        identity=None,
        doc="features the prediction is monotone in (beyond the paper)",
    ),
    Hyperparameter(
        name="deep_categorical",
        default="onehot",
        constraint=(OneOf(("onehot", "code")),),
        where="none",
        doc="a categorical feature in the MLP: one-hot or its code (beyond the paper; inert in "
        "the harness, whose data arrive one-hot encoded, which both values feed alike)",
    ),
    Hyperparameter(
        name="smoothness",
        default="rows",
        constraint=(Reals(0, None, "left"), OneOf(("auto", "rows"))),
        where="model",
        paper=0.0,
        type=float,
        library_type=Any,  # "rows": 500 / n, or "auto"
        identity=0.0,
        doc="the shapes' roughness penalty (beyond the paper; 0: none)",
    ),
    Hyperparameter(
        name="pairs",
        default="auto",
        constraint=(
            Integers(0),
            OneOf(("auto",)),
            Rule("pair_counts", "a list of whole numbers >= 0 to choose among, e.g. [0, 10]"),
        ),
        where="model",
        paper=0,
        type=Any,
        identity=0,
        doc="pair terms for FAST's first pairs (beyond the paper; 0: none)",
    ),
    Hyperparameter(
        name="deep_input",
        default="auto",
        constraint=(OneOf(("columns", "auto")),),
        where="model",
        paper="columns",
        type=str,
        identity="columns",
        doc="the MLP's input: Eq. 6's columns, or 'auto': on enough fit rows "
        "(pilid.models.shape_choice.EMBEDDING_MIN_ROWS) also candidates whose MLP reads TabM's "
        "piecewise-linear embeddings free of lam, chosen by inner validation (beyond the paper)",
    ),
)


def by_name(table: tuple[Hyperparameter, ...], *names: str) -> tuple[Hyperparameter, ...]:
    """The entries of `table` called `names`, in that order (a KeyError names a missing one)."""
    entries = {p.name: p for p in table}
    return tuple(entries[name] for name in names)


def defaults(table: tuple[Hyperparameter, ...]) -> dict[str, Any]:
    """``{name: default}`` of `table`, in its order: the constructor's defaults."""
    return {p.name: p.default for p in table}


def options(table: tuple[Hyperparameter, ...], name: str) -> tuple[str, ...]:
    """The strings entry `name` of `table` takes (its `OneOf` constraints), in their order."""
    (entry,) = by_name(table, name)
    return tuple(o for rule in entry.constraint if isinstance(rule, OneOf) for o in rule.options)


def paper_values(table: tuple[Hyperparameter, ...]) -> dict[str, Any]:
    """``{name: paper}`` of the entries a config of the paper's runs sets (not `UNPINNED`)."""
    return {p.name: p.paper for p in table if p.paper is not UNPINNED}


def model_keys(table: tuple[Hyperparameter, ...]) -> tuple[Hyperparameter, ...]:
    """The entries that are keys of the model's config (``where="model"``)."""
    return tuple(p for p in table if p.where == "model")


def identities(table: tuple[Hyperparameter, ...]) -> dict[str, Any]:
    """``{name: identity}`` of the ``model`` keys left out of the setting id at one value."""
    return {p.name: p.identity for p in model_keys(table) if p.identity is not HASHED}
