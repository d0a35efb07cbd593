"""``smoothness="auto"``, ``pairs="auto"`` and ``deep_input="auto"``: chosen by inner validation
(beyond the paper).

PiLiD (Guo et al., IJCAI 2020) cuts each feature into gamma pieces (Definition 1). Few pieces
cannot follow a step or a sharp bend; many pieces follow the noise unless a roughness penalty
(`pilid.nn.additive.difference_penalty`, P-splines' second difference) ties neighbouring pieces
together, and on few rows even then they lose to few pieces. Explicit pair terms
(`pilid.nn.pairs`) help where a few pairs interact strongly and cost accuracy elsewhere.
``smoothness="auto"`` and ``pairs="auto"`` let the data decide, on the training part alone:

* `candidates`: for ``smoothness="auto"`` the estimator's own pieces without the penalty (with
  ``gamma="auto"`` the rule of the training rows, `pilid.nn.piecewise.auto_gamma`) and
  `SMOOTH_PIECES` pieces (or the given gamma) with ``smoothness=SMOOTH_WEIGHT``; for
  ``pairs="auto"`` no pair terms and `pilid.models.pair_choice.AUTO_PAIRS` of them; with both,
  the four combinations;
* all are trained, as trials of the batched trainer (`pilid.models.fitting.fit_batched`, each
  with its bag or its K class members, `Trainable._members`), on the same training rows with
  the same seeds, and stop early on the same held-out rows;
* the estimator keeps the candidate whose fitted model has the lower loss on rows it did not
  train on (`validation_loss`: the mean squared error of the standardised target, or the log
  loss; weighted by the sample weights): the rows ``val_fraction`` sets aside for early
  stopping and, for a bag, every training row through the members that missed it (out of bag,
  `out_of_bag`, as random forests estimate their error): never a test row. `shape_choice_`
  lists them all;
* with no such rows (``patience=None`` and one model) ``smoothness="auto"`` refuses in one line
  and ``pairs="auto"``, a default, takes no pair terms (`chooses`).

``deep_input="auto"`` chooses the deep part the same way (`chooses_deep`) where the fit has at
least `EMBEDDING_MIN_ROWS` rows (on fewer, the columns alone, as ``deep_input="columns"``):
every candidate above is trained twice, with PiLiD's MLP on the standardised columns (Eq. 6)
and with TabM's MLP on piecewise-linear embeddings of Phi (`pilid.nn.embedding`) free of Eq.
11's penalty (``reg_groups="additive"``). Each candidate's bag then trains its first
`CHOICE_MEMBERS` members only; they choose (``shape_choice_`` lists their losses and each
candidate's ``deep_input``), and the chosen candidate trains its other members (`collect`
twice, the estimator's ``_more_members`` between): the bag of the chosen candidate whose
members are a full bag's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import log_expit, log_softmax
from sklearn.base import clone

from pilid.errors import PilidError
from pilid.models.pair_choice import AUTO_PAIRS
from pilid.nn.embedding import EMBEDDING_SIZE
from pilid.nn.piecewise import fit_knots
from pilid.train.batched import sample_rows

__all__ = [
    "CANDIDATES",
    "CHOICE_MEMBERS",
    "EMBEDDED",
    "SMOOTH_PIECES",
    "SMOOTH_WEIGHT",
    "candidate_members",
    "choose",
    "chooses",
    "chooses_deep",
    "asks_deep_choice",
    "collect",
    "first_members",
    "has_rows_to_choose_on",
    "more_members",
    "out_of_bag_mean",
    "pair_counts",
    "split_first_members",
]

#: The pieces per feature of the smooth candidate when ``gamma="auto"``.
SMOOTH_PIECES = 40
#: The smooth candidate's roughness weight (chosen on the development suite among 20 and 40
#: pieces at several weights; the documentation's study pages).
SMOOTH_WEIGHT = 0.1
#: The bag members of each candidate that train before a choice of the deep part
#: (``deep_input="auto"``; chosen on the development suite with the choice itself).
CHOICE_MEMBERS = 4
#: The fewest rows a fit needs for ``deep_input="auto"`` to try the embeddings (chosen on the
#: development suite): on fewer rows the two deep parts' validation losses differ by less than
#: their noise, and the columns alone train, bit for bit as with ``deep_input="columns"``.
EMBEDDING_MIN_ROWS = 5000
#: A candidate's ``deep_input`` when its MLP reads the embeddings (`pilid.nn.embedding`).
EMBEDDED = "embeddings"


def pair_counts(pairs) -> tuple[int, ...] | None:
    """The numbers of pair terms an estimator's ``pairs`` chooses among, ascending: ``"auto"``,
    0 and `AUTO_PAIRS`; a list of whole numbers, those; a number (no choice), None."""
    if isinstance(pairs, str):
        return (0, AUTO_PAIRS) if pairs == "auto" else None
    if isinstance(pairs, Sequence):
        return tuple(sorted({int(k) for k in pairs}))
    return None


def candidates(gamma, smoothness="auto", pairs=0, deep=False) -> list[dict]:
    """The candidates' parameters for an estimator's ``gamma``, ``smoothness`` and ``pairs``
    (only those set to ``"auto"``, or ``pairs`` to a list, vary): ``smoothness="auto"``, its own
    pieces unpenalised and `SMOOTH_PIECES` (``gamma="auto"``) or its gamma with
    ``smoothness=SMOOTH_WEIGHT``; ``pairs``, each number of `pair_counts` (``"auto"``: 0 and
    `AUTO_PAIRS`); both: every combination, pieces first. With `deep` (`chooses_deep`) each
    again with ``deep_input`` `EMBEDDED`, after them all."""
    shapes = [{}]
    if smoothness == "auto":
        smooth_gamma = SMOOTH_PIECES if isinstance(gamma, str) else gamma
        shapes = [
            {"gamma": gamma, "smoothness": 0.0},
            {"gamma": smooth_gamma, "smoothness": SMOOTH_WEIGHT},
        ]
    counts = pair_counts(pairs)
    terms = [{}] if counts is None else [{"pairs": k} for k in counts]
    found = [{**shape, **term} for shape in shapes for term in terms]
    return [*found, *({**c, "deep_input": EMBEDDED} for c in found)] if deep else found


CANDIDATES = candidates("auto")


def smoothness_is_auto(est) -> bool:
    """Whether `est` chooses its smoothness (a candidate has a number)."""
    return getattr(est, "smoothness", 0.0) == "auto"


def asks_deep_choice(est) -> bool:
    """Whether `est`'s parameters ask it to choose its deep part (``deep_input="auto"``): beside
    an MLP and without monotone constraints (the embeddings read every feature, and a
    constrained one must stay out of the deep part)."""
    return (
        getattr(est, "deep_input", "columns") == "auto"
        and getattr(est, "hidden_layers", None) is not None
        and getattr(est, "monotone_constraints", None) is None
    )


def embedding_min_rows(est) -> int:
    """The fewest rows with which `est` tries the embeddings: its ``_embedding_min_rows()``
    where it has one (a study's), else `EMBEDDING_MIN_ROWS`."""
    rule = getattr(est, "_embedding_min_rows", None)
    return int(rule()) if rule is not None else EMBEDDING_MIN_ROWS


def chooses_deep(est, prep) -> bool:
    """Whether `est` chooses its deep part on the prepared data `prep`: `asks_deep_choice` and
    at least `embedding_min_rows` rows in the fit (``prep.X``, before any holdout)."""
    return asks_deep_choice(est) and len(prep.X) >= embedding_min_rows(est)


def is_auto(est, prep) -> bool:
    """Whether `est` chooses among candidates on `prep` (``smoothness`` is ``"auto"``,
    ``pairs`` ``"auto"`` or a list of numbers, or `chooses_deep`)."""
    pairs_auto = pair_counts(getattr(est, "pairs", 0)) is not None
    return smoothness_is_auto(est) or pairs_auto or chooses_deep(est, prep)


def has_rows_to_choose_on(est, prep) -> bool:
    """Whether `est` has rows it does not train on to choose with: rows held out for early
    stopping, or a bag's out-of-bag rows (a bag of two classes or a regression)."""
    out_of_bag_rows = int(getattr(est, "n_bags", 1)) > 1 and not est._multiclass()
    return len(prep.val_idx) > 0 or out_of_bag_rows


def chooses(est, prep) -> bool:
    """Whether `est` trains candidates (`candidate_members`): ``smoothness="auto"`` always (it
    refuses data without rows to choose on), ``pairs="auto"`` where there are rows to choose on
    (without them it takes no pair terms, `pilid.estimators.pilid.PiLiDBase._prepare`)."""
    if smoothness_is_auto(est):
        return True
    return is_auto(est, prep) and has_rows_to_choose_on(est, prep)


def candidate_members(est, prep) -> list[tuple]:
    """`Trainable._members` of an estimator with ``smoothness="auto"`` or ``pairs="auto"``: the
    units of each candidate (`candidates`), each candidate an unfitted clone with its
    parameters, the estimator's prepared attributes and its own characteristic points
    (Definition 1: fitted as `Trainable._prepare` fits them, on the same rows and weights) and
    pairs (the estimator's, `Prepared.pairs`, or none); its units are its own ``_members`` (its
    bag, its K class members)."""
    if not has_rows_to_choose_on(est, prep):
        raise PilidError(
            f"{type(est).__name__}: smoothness='auto' chooses on the rows held out for early "
            "stopping (or a bag's out-of-bag rows) and there are none; set patience (e.g. "
            "patience=10) and val_fraction > 0, or n_bags > 1, or a number for smoothness"
        )
    params = est.get_params(deep=False)
    shared = {k: v for k, v in vars(est).items() if k not in params}
    smooth_knots = None
    members, bags = [], []
    pairs = getattr(est, "pairs", 0)
    smoothness = getattr(est, "smoothness", 0.0)
    found = 0 if prep.pairs is None else len(prep.pairs)  # none found (or K > 2 classes): 0
    deep = chooses_deep(est, prep)
    choices = []
    for choice in candidates(est.gamma, smoothness, pairs, deep):
        if "pairs" in choice:  # as many pairs as were found at most; each count once
            choice = {**choice, "pairs": min(int(choice["pairs"]), found)}
        if choice not in choices:
            choices.append(choice)
    for choice in choices:
        embedded = choice.pop("deep_input", None) == EMBEDDED
        if deep:  # a candidate chooses no further; an embedded one's MLP is free of lam
            choice = {**choice, "deep_input": "columns"}
        if embedded:
            choice = {**choice, "reg_groups": "additive"}
        member = clone(est).set_params(**choice)
        member.__dict__.update(shared)
        if embedded:  # its `_deep_builder` reads it: TabM's MLP on d-number embeddings
            member._deep_embedding = EMBEDDING_SIZE
        data = prep  # the estimator's own pieces (its `gamma_`) and pairs
        if "smoothness" in choice:
            member.smoothness_ = float(choice["smoothness"])
            if choice["smoothness"] > 0 and isinstance(est.gamma, str):  # many pieces
                member.gamma_ = choice["gamma"]
                if smooth_knots is None:
                    smooth_knots = fit_knots(
                        prep.X, member.gamma_, est.knots, est.categorical_, prep.weight
                    )
                data = dataclasses.replace(data, knots=smooth_knots)
        if choice.get("pairs") == 0:
            member.pairs_ = []
            data = dataclasses.replace(data, pairs=None)
        elif "pairs" in choice:  # FAST's first pairs (`pilid.models.pair_choice.fast_pairs`)
            member.pairs_ = list(est.pairs_[: choice["pairs"]])
            data = dataclasses.replace(data, pairs=prep.pairs[: choice["pairs"]])
        members.append(member)
        units = member._members(data)
        if embedded:  # each unit's MLP embeds its data's Phi
            for unit, unit_data in units:
                unit._deep_knots = unit_data.knots
        bags.append(units)
    est._candidates = (prep, members)
    return [unit for bag in bags for unit in bag]


def first_members(members: list, first: int | None) -> int | None:
    """How many of each candidate's bag members train before the choice: `first` (None: all
    of them), where every candidate is a bag with more members than that (a regression or two
    classes: K > 2 classes' candidates hold class members, which train whole)."""
    bags = [getattr(m, "_bag", (None, []))[1] for m in members]
    if first is None or any(len(bag) <= first for bag in bags):
        return None
    return int(first)


def split_first_members(est, units: list, first: int | None) -> list:
    """The units of `candidate_members` (`units`, each candidate's in turn) cut to each
    candidate's first `first` members (`first_members`); the rest is kept in
    ``est._candidates`` for the chosen candidate (`collect`). Unchanged where every member
    trains before the choice."""
    prep, members = est._candidates[:2]
    first = first_members(members, first)
    if first is None:
        return units
    bags, start = [], 0
    for member in members:
        size = len(member._bag[1])
        bags.append(units[start : start + size])
        start += size
    rest = [(member._bag[0], bag[first:]) for member, bag in zip(members, bags)]
    for member in members:
        member._bag = (member._bag[0], member._bag[1][:first])
    est._candidates = (prep, members, rest)
    return [unit for bag in bags for unit in bag[:first]]


def _row_loss(est, raw: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row: the squared error of the standardised target, or the log loss of the class."""
    if est._task == "regression":
        return (raw - target) ** 2
    labels = target.astype(np.int64)
    if raw.ndim == 2:  # K classes: the softmax of the K logits
        return -log_softmax(raw, axis=1)[np.arange(len(labels)), labels]
    return -log_expit(np.where(labels == 1, raw, -raw))


def _bag_outputs(est):
    """The members of `est`'s bag: (their training rows, b -> member b's raw output of rows X),
    or None for a single model and for K > 2 classes (the shared early-stopping rows judge the
    K-class candidates, as they did before out-of-bag rows were read)."""
    if est._multiclass():
        return None
    members = getattr(est, "estimators_", None)
    if not members:
        return None
    return est.bag_rows_, lambda b, X: members[b]._raw(X)


def out_of_bag(est, prep) -> tuple[np.ndarray, np.ndarray]:
    """A bag's out-of-bag predictions of its rows (`pilid.models.bagging`): for each training
    row the mean raw output of the members whose bootstrap sample missed it, as random forests
    estimate their error. Returns (rows, raw) for the rows some member missed; none for a
    single model or K > 2 classes."""
    bag = _bag_outputs(est)
    if bag is None:
        return np.arange(0), np.zeros(0)
    train = sample_rows(np.asarray(prep.train_idx), prep.seed)
    return out_of_bag_mean(*bag, prep.X, train, len(train))


def out_of_bag_mean(member_rows, raw_of, X, train, width) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``train`` (indices into X), the mean of ``raw_of(b, rows of X)`` over
    the members b whose rows (``member_rows[b]``) missed it, in an array of shape `width`
    (rows, or rows x K); returns (the rows some member missed, their means)."""
    total, count = np.zeros(width), np.zeros(len(train))
    for b, rows in enumerate(member_rows):
        missed = ~np.isin(train, rows)
        if missed.any():
            total[missed] += raw_of(b, X[train[missed]])
            count[missed] += 1
    seen = count > 0
    share = count[seen] if total.ndim == 1 else count[seen, None]
    return train[seen], total[seen] / share


def validation_loss(est, prep) -> float:
    """The fitted `est`'s loss on rows it did not train on: the rows held out for early stopping
    (the whole model's prediction) and, for a bag, every training row out of bag
    (`out_of_bag`); the (weighted) mean squared error of the standardised target (regression)
    or the log loss of the classes; inf if it diverged."""
    if getattr(est, "diverged_", None):
        return float("inf")
    oob_rows, oob_raw = out_of_bag(est, prep)
    held = sample_rows(prep.val_idx, prep.seed)  # rows no member trained on (a large table's:
    # a sample, as the training rows out of bag)
    rows = np.concatenate([held, oob_rows]).astype(np.int64)
    raw = est._raw(prep.X[held]) if len(held) else np.zeros((0, *np.shape(oob_raw)[1:]))
    if len(oob_rows):
        raw = np.concatenate([raw, oob_raw])
    loss = _row_loss(est, raw, prep.target[rows])
    weight = None if prep.weight is None else prep.weight[rows]
    return float(np.average(loss, weights=weight))


def choose(members: list, prep, loss=None) -> tuple[int, pd.DataFrame]:
    """Each candidate gathers its members (`Trainable._collect`); the index of the one of lower
    ``loss(member, prep)`` (default `validation_loss`; the first on a tie), and the table
    ``shape_choice_``: per candidate ``gamma``, ``smoothness``, ``pairs`` (how many pair
    terms), ``val_loss``, ``chosen``."""
    loss = validation_loss if loss is None else loss
    losses = []
    for member in members:
        member._collect()
        losses.append(loss(member, prep))
    best = int(np.argmin(losses))
    columns = {
        "gamma": [m.gamma_ for m in members],
        "smoothness": [m.smoothness_ for m in members],
        "pairs": [len(getattr(m, "pairs_", [])) for m in members],
    }
    if any("_deep_embedding" in m.__dict__ for m in members):
        columns["deep_input"] = [_deep_input(m) for m in members]
    columns |= {"val_loss": losses, "chosen": [i == best for i in range(len(members))]}
    return best, pd.DataFrame(columns)


def _deep_input(member) -> str:
    """A candidate's deep input: the columns (Eq. 6) or the embeddings (`EMBEDDED`)."""
    return EMBEDDED if "_deep_embedding" in member.__dict__ else "columns"


def collect(est, loss=None) -> None:
    """`Trainable._collect` of an estimator with ``smoothness="auto"``, ``pairs="auto"`` or
    ``deep_input="auto"``: each candidate gathers its members, and the estimator takes the
    fitted attributes of the one with the lower validation loss (``loss``, default
    `validation_loss`; the first on a tie; one that diverged only if all did), plus
    ``shape_choice_``: per candidate ``gamma``, ``smoothness``, ``pairs`` (how many pair
    terms), ``deep_input`` (when chosen), ``val_loss``, ``chosen``. Where the candidates
    trained their first members (`split_first_members`) it runs twice: after those (the
    choice; the chosen candidate's other members train next, ``_more_members``), then after
    those (the chosen candidate's whole bag)."""
    chosen = est.__dict__.pop("_chosen", None)
    if chosen is not None:  # the chosen candidate's other members have trained: its whole bag
        chosen._collect()
        _take_fitted(est, chosen)
        return
    prep, members, *rest = est.__dict__.pop("_candidates")
    best, choice = choose(members, prep, loss)
    chosen = members[best]
    if rest and not getattr(chosen, "diverged_", None):  # its other members train next
        bag_prep, others = rest[0][best]
        chosen._bag = (bag_prep, [*chosen.estimators_, *(m for m, _ in others)])
        est._chosen, est._rest_of_chosen = chosen, others
    else:
        _take_fitted(est, chosen)
    est.shape_choice_ = choice


def more_members(est) -> list:
    """`Trainable._more_members` after a choice on the candidates' first members (`collect`):
    the chosen candidate's other members; else none."""
    return est.__dict__.pop("_rest_of_chosen", None) or []


def _take_fitted(est, chosen) -> None:
    """`est` takes the fitted attributes of its chosen candidate."""
    params = est.get_params(deep=False)
    est.__dict__.update({k: v for k, v in vars(chosen).items() if k not in params})
