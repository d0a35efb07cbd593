"""PiLiD with the levers measured on the development suite and not adopted, as parameters.

`LEVERS` declares them as `pilid.hyperparameters` declares PiLiD's own (`Hyperparameter`: name,
neutral value, valid values, a line of what it does); they are no parameters of the library's
estimators and no config keys. `PiLiDLeverRegressor` / `PiLiDLeverClassifier` take PiLiD's
parameters and the levers (an explicit ``__init__``, so that scikit-learn's ``get_params``,
``clone`` and the check of `_parameter_constraints` see them), and at every lever's neutral
value compute what `pilid.PiLiDRegressor` / `pilid.PiLiDClassifier` compute: each lever is an
override of one of the hooks the training engine calls (`pilid.train.protocol.Trainable`), which
hands on to PiLiD's own where the lever is neutral.

* ``schedule="additive_first"`` and ``lr_decay``: `_phases` (the trainer's `Phase`).
* ``deep_bins``: `_prepare` sets `Prepared.bins`, the quantile bins of the numeric features the
  MLP sees (`pilid.train.encoding.quantile_bins`, Gorishniy et al., NeurIPS 2022's encoding);
  the fitted ``deep_bins_`` carries them to prediction and export.
* ``min_frequency``: `_merge_infrequent` (scikit-learn's ``OneHotEncoder`` convention).
* ``bag_validation="own"`` and ``choice_members``: `_members`, `_collect`, `_more_members`
  (`studies._levers.bags`).
* ``deep_min_rows``: `_embedding_min_rows`, the rows from which ``deep_input="auto"`` tries
  the embeddings (`pilid.models.shape_choice.embedding_min_rows`).
* ``lam_choice``: `_members` adds the candidates of ``pairs="auto"`` / ``smoothness="auto"`` at
  a second weight of Eq. 11's penalty, and the choice takes the better (`_lam_candidates`).
* ``deep_embedding``, ``deep_dropout`` and ``deep_clip``: `_members` hands each unit its Phi's
  layout and `_deep_builder` gives it TabM's deep part, piecewise-linear embeddings and
  dropout, or RealMLP's smooth clipping of the inputs
  (`studies._levers.deep_embedding`).
* ``deep_heads=k``: `_deep_builder` gives each unit one MLP of k heads beside its additive part,
  `_phases` and `_penalty_term` train it on the mean of the heads' losses, as TabM trains its
  members (`studies._levers.deep_heads`).
* ``keep="glass"``: `_finalize` drops each member's MLP after training, its main effects kept
  in the shapes (`studies._levers.glass_part`).
* ``deep_ensemble="shared"``: `_members` marks a bag's members, `_deep_builder` gives them
  BatchEnsemble's MLP and `_finalize` folds it into each member's plain MLP
  (`studies._levers.shared_mlp`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid import hyperparameters as hp
from pilid.estimators.pilid import PiLiDBase
from pilid.models import multiclass, shape_choice
from pilid.models.inputs import INFREQUENT_LEVEL
from pilid.models.params import is_whole, sklearn_constraints
from pilid.train import Phase
from pilid.train.encoding import quantile_bins
from studies._levers import bags
from studies._levers.deep_embedding import EmbeddedBuilder
from studies._levers.deep_heads import LOGISTIC_SPREAD, HeadsBuilder, HeadSpread
from studies._levers.glass_part import keep_glass_part_
from studies._levers.shared_mlp import SHARED_BAG, SharedBuilder, fold_module

__all__ = ["LEVERS", "PiLiDLeverClassifier", "PiLiDLeverRegressor", "with_levers"]

#: The levers measured on the development suite and not adopted. ``default`` is the neutral
#: value: the computation without the lever, PiLiD's.
LEVERS: tuple[hp.Hyperparameter, ...] = (
    hp.Hyperparameter(
        name="schedule",
        default="joint",
        constraint=(hp.OneOf(("joint", "additive_first")),),
        where="none",
        doc="'joint': Algorithm 1; 'additive_first': the additive part alone, then both",
    ),
    hp.Hyperparameter(
        name="lr_decay",
        default=None,
        constraint=(hp.Reals(0, 1, "neither"), None),
        where="none",
        doc="a refining phase at lr * lr_decay after early stopping (None: none)",
    ),
    hp.Hyperparameter(
        name="bag_validation",
        default="shared",
        constraint=(hp.OneOf(("shared", "own")),),
        where="none",
        doc="a bag's early-stopping rows: shared by its members, or each member's own",
    ),
    hp.Hyperparameter(
        name="deep_bins",
        default=None,
        constraint=(hp.Integers(2), None),
        where="none",
        doc="the MLP's numeric inputs piecewise-linear on b quantile bins (None: standardised)",
    ),
    hp.Hyperparameter(
        name="deep_ensemble",
        default="independent",
        constraint=(hp.OneOf(("independent", "shared")),),
        where="none",
        doc="a bag's MLPs: one per member, or one shared with per-member adapters (TabM's)",
    ),
    hp.Hyperparameter(
        name="min_frequency",
        default=None,
        constraint=(hp.Integers(1), hp.Reals(0, 1, "neither"), None),
        where="none",
        doc="a category's levels with fewer fit rows merged into one (None: none)",
    ),
    hp.Hyperparameter(
        name="choice_members",
        default=None,
        constraint=(hp.Integers(1), None),
        where="none",
        doc="a bag's members each candidate trains before the choice (None: all of them)",
    ),
    hp.Hyperparameter(
        name="deep_min_rows",
        default=None,
        constraint=(hp.Integers(0), None),
        where="none",
        doc="deep_input='auto' tries embeddings from this many fit rows on (None: the library's)",
    ),
    hp.Hyperparameter(
        name="lam_choice",
        default=None,
        constraint=(hp.Reals(0, None, "neither"), None),
        where="none",
        doc="the candidates also at lam_ times this (None: only at lam_), chosen as they are",
    ),
    hp.Hyperparameter(
        name="deep_embedding",
        default=None,
        constraint=(hp.Integers(1), None),
        where="none",
        doc="the MLP reads d-number piecewise-linear embeddings of Phi, TabM's (None: x)",
    ),
    hp.Hyperparameter(
        name="deep_dropout",
        default=None,
        constraint=(hp.Reals(0, 1, "left"), None),
        where="none",
        doc="dropout after each of the MLP's hidden layers in training (None: none)",
    ),
    hp.Hyperparameter(
        name="keep",
        default="hybrid",
        constraint=(hp.OneOf(("hybrid", "glass")),),
        where="none",
        doc="'glass': the MLP trains with the shapes and is dropped, its main effects kept",
    ),
    hp.Hyperparameter(
        name="deep_clip",
        default=None,
        constraint=(hp.Reals(0, None, "neither"), None),
        where="none",
        doc="the MLP's standardised inputs smoothly clipped at c, RealMLP's (None: as they are)",
    ),
    hp.Hyperparameter(
        name="deep_heads",
        default=None,
        constraint=(hp.Integers(1), None),
        where="none",
        doc="k MLP heads beside one additive part, trained on their losses' mean (None: one)",
    ),
)
_LEVER = hp.defaults(LEVERS)
_PILID = hp.defaults(hp.PILID)


class _Levers:
    """The levers (`LEVERS`) as parameters besides PiLiD's, and the hooks they change."""

    _parameter_constraints = {
        **PiLiDBase._parameter_constraints,
        **sklearn_constraints(LEVERS),
    }

    def __init__(  # PiLiD's parameters (`pilid.hyperparameters.PILID`), then the levers
        self,
        gamma=_PILID["gamma"],
        knots=_PILID["knots"],
        init=_PILID["init"],
        hidden_layers=_PILID["hidden_layers"],
        sigma=_PILID["sigma"],
        reg=_PILID["reg"],
        lam=_PILID["lam"],
        reg_groups=_PILID["reg_groups"],
        purify=_PILID["purify"],
        lr=_PILID["lr"],
        epochs=_PILID["epochs"],
        batch_size=_PILID["batch_size"],
        optimizer=_PILID["optimizer"],
        patience=_PILID["patience"],
        val_fraction=_PILID["val_fraction"],
        random_state=_PILID["random_state"],
        device=_PILID["device"],
        categorical_features=_PILID["categorical_features"],
        verbose=_PILID["verbose"],
        n_bags=_PILID["n_bags"],
        monotone_constraints=_PILID["monotone_constraints"],
        deep_categorical=_PILID["deep_categorical"],
        smoothness=_PILID["smoothness"],
        pairs=_PILID["pairs"],
        deep_input=_PILID["deep_input"],
        *,
        schedule=_LEVER["schedule"],
        lr_decay=_LEVER["lr_decay"],
        bag_validation=_LEVER["bag_validation"],
        deep_bins=_LEVER["deep_bins"],
        deep_ensemble=_LEVER["deep_ensemble"],
        min_frequency=_LEVER["min_frequency"],
        choice_members=_LEVER["choice_members"],
        deep_min_rows=_LEVER["deep_min_rows"],
        lam_choice=_LEVER["lam_choice"],
        deep_embedding=_LEVER["deep_embedding"],
        deep_dropout=_LEVER["deep_dropout"],
        keep=_LEVER["keep"],
        deep_clip=_LEVER["deep_clip"],
        deep_heads=_LEVER["deep_heads"],
    ):
        super().__init__(
            gamma=gamma,
            knots=knots,
            init=init,
            hidden_layers=hidden_layers,
            sigma=sigma,
            reg=reg,
            lam=lam,
            reg_groups=reg_groups,
            purify=purify,
            lr=lr,
            epochs=epochs,
            batch_size=batch_size,
            optimizer=optimizer,
            patience=patience,
            val_fraction=val_fraction,
            random_state=random_state,
            device=device,
            categorical_features=categorical_features,
            verbose=verbose,
            n_bags=n_bags,
            monotone_constraints=monotone_constraints,
            deep_categorical=deep_categorical,
            smoothness=smoothness,
            pairs=pairs,
            deep_input=deep_input,
        )
        self.schedule = schedule
        self.lr_decay = lr_decay
        self.bag_validation = bag_validation
        self.deep_bins = deep_bins
        self.deep_ensemble = deep_ensemble
        self.min_frequency = min_frequency
        self.choice_members = choice_members
        self.deep_min_rows = deep_min_rows
        self.lam_choice = lam_choice
        self.deep_embedding = deep_embedding
        self.deep_dropout = deep_dropout
        self.keep = keep
        self.deep_clip = deep_clip
        self.deep_heads = deep_heads

    # -- schedule, lr_decay ----------------------------------------------------------------------
    def _phases(self) -> list[Phase]:
        """Algorithm 1's one phase, or with ``schedule="additive_first"`` the additive part
        alone first (the MLP held at its zero output, ``deep.`` frozen), then both, keeping
        the joint weights only where they beat the additive-only validation loss
        (``keep_best``); with ``lr_decay``, then a refining phase from the best weights at
        ``lr * lr_decay`` that keeps only what beats them."""
        if self.schedule != "additive_first" or self.hidden_layers is None:
            phases = super()._phases()
        else:
            phases = [
                Phase("additive", int(self.epochs), frozen=("deep.",)),
                Phase("joint", int(self.epochs), keep_best=True),
            ]
        if self.lr_decay is not None:
            phases.append(Phase("refine", int(self.epochs), keep_best=True, lr_scale=self.lr_decay))
        if self._heads():
            phases = [dataclasses.replace(p, penalty=True) for p in phases]
        return phases

    # -- deep_heads ------------------------------------------------------------------------------
    def _heads(self) -> bool:
        """Does ``deep_heads`` build the deep part? Refused in one line beside the other levers
        that build it."""
        if self.deep_heads is None or self.hidden_layers is None:
            return False
        if self._embedded() or self.deep_ensemble == "shared":
            raise ValueError(
                "deep_heads builds the deep part of plain MLP heads; set deep_embedding, "
                "deep_dropout and deep_clip to None and deep_ensemble='independent' to use it"
            )
        return True

    def _penalty_term(self):
        """With ``deep_heads``, the heads' spread (`HeadSpread`): the loss becomes the mean of
        the heads' losses; else PiLiD's (none)."""
        if not self._heads():
            return super()._penalty_term()
        return HeadSpread(1.0 if self._task == "regression" else LOGISTIC_SPREAD)

    # -- deep_bins -------------------------------------------------------------------------------
    def _prepare(self, X, y, sample_weight=None):
        """PiLiD's `_prepare`, then with ``deep_bins``: `Prepared.bins`, the `quantile_bins` of
        the numeric features without a monotone constraint (those the deep part sees) on the
        fit rows of weight > 0 (unweighted quantiles)."""
        prep = super()._prepare(X, y, sample_weight)
        if self.deep_bins is None:
            return prep
        rows = prep.X if prep.weight is None else prep.X[prep.weight > 0]
        seen = ~np.asarray(self.categorical_, dtype=bool) & np.isfinite(prep.x_scale)
        found = quantile_bins(rows, self.deep_bins, np.flatnonzero(seen))
        return dataclasses.replace(prep, bins=found) if found else prep

    # -- min_frequency ---------------------------------------------------------------------------
    def _merge_infrequent(self, X) -> None:
        """With ``min_frequency`` (scikit-learn's ``OneHotEncoder`` convention): the levels of
        a category / string column with fewer fit rows than it (a whole number; a fraction in
        (0, 1): of the fit rows) become one level, `INFREQUENT_LEVEL`, the last of
        ``categories_[j]``; ``infrequent_categories_[j]`` lists them (only columns that have
        such levels). A level with no fit row stays as it is (unseen: average contribution)."""
        super()._merge_infrequent(X)
        threshold = self.min_frequency
        if threshold is None:
            return
        if not is_whole(threshold):  # a fraction of the fit rows
            threshold = float(threshold) * X.shape[0]
        for j, cats in self.categories_.items():
            counts = X.iloc[:, j].value_counts(dropna=True)
            seen = np.array([counts.get(c, 0) for c in cats])
            rare = (seen > 0) & (seen < threshold)
            if not rare.any():
                continue
            self.infrequent_categories_[j] = [c for c, r in zip(cats, rare) if r]
            kept = [c for c, r in zip(cats, rare) if not r]
            self.categories_[j] = [*kept, INFREQUENT_LEVEL]

    # -- bag_validation, choice_members, deep_ensemble -------------------------------------------
    def _members(self, prep) -> list:
        """PiLiD's members, with ``bag_validation="own"`` a bag's from `bags.bag_members`;
        with ``choice_members`` each candidate's first members (`bags.split_first_members`);
        with ``deep_ensemble="shared"`` a bag's members carry their bag's seeds
        (`SHARED_BAG`); with `_embedded`, each unit its data's Phi layout (``_deep_knots``)."""
        self._check_deep_input()
        own_bag = (
            bags.owns_validation(self)
            and int(self.n_bags) > 1
            and not shape_choice.chooses(self, prep)
            and not (multiclass.is_multiclass(self) and not hasattr(self, "_class_index"))
        )
        if own_bag:
            units = bags.bag_members(self, prep, int(self.n_bags))
        else:
            units = super()._members(prep)
        if "_candidates" in self.__dict__ and self.lam_choice is not None:
            units = self._lam_candidates(prep, units)
        if "_candidates" in self.__dict__ and self._splits_after_candidates(prep):
            units = bags.split_first_members(self, units)
        if self.deep_ensemble == "shared" and "_bag" in self.__dict__:
            members = self._bag[1]
            seeds = tuple(m.seed_ for m in members)
            for member in members:
                setattr(member, SHARED_BAG, seeds)
        return self._with_knots(units)

    def _first_members(self, prep) -> int | None:
        """With ``deep_input="auto"`` choosing, ``choice_members`` where given (else the
        library's count); without it none here: `_members` cuts the candidates it added itself
        (``lam_choice``) too, after them (`_splits_after_candidates`)."""
        if shape_choice.chooses_deep(self, prep) and self.choice_members is not None:
            return int(self.choice_members)
        return super()._first_members(prep)

    def _splits_after_candidates(self, prep) -> bool:
        """Does ``choice_members`` cut the candidates after the levers added theirs (without
        ``deep_input="auto"`` choosing, whose candidates the library cuts, `_first_members`)?"""
        return self.choice_members is not None and not shape_choice.chooses_deep(self, prep)

    def _embedding_min_rows(self) -> int:
        """``deep_min_rows``, or the library's `shape_choice.EMBEDDING_MIN_ROWS`
        (`shape_choice.embedding_min_rows`)."""
        if self.deep_min_rows is not None:
            return int(self.deep_min_rows)
        return shape_choice.EMBEDDING_MIN_ROWS

    def _check_deep_input(self) -> None:
        """``deep_input="auto"`` (the library's choice of the deep part, on the candidates' first
        members) refuses, in one line, the levers that change that choice or build the deep
        part."""
        if not shape_choice.asks_deep_choice(self):
            return
        levers = {
            "lam_choice": self.lam_choice is not None,
            "bag_validation": bags.owns_validation(self),
            "deep_embedding": self.deep_embedding is not None,
            "deep_dropout": bool(self.deep_dropout),
            "deep_clip": self.deep_clip is not None,
            "deep_heads": self.deep_heads is not None,
            "deep_ensemble": self.deep_ensemble == "shared",
        }
        taken = [name for name, on in levers.items() if on]
        if taken:
            raise ValueError(
                f"deep_input='auto' chooses the deep part on its own; set {', '.join(taken)} "
                "to the neutral value (see LEVERS) or deep_input='columns' to use them"
            )

    # -- deep_embedding, deep_dropout ------------------------------------------------------------
    def _embedded(self) -> bool:
        """Does a lever change the deep part's build (``deep_embedding``,
        ``deep_dropout``, ``deep_clip``)?
        The embeddings read every feature's Phi, so they take no monotone constraint (the
        deep part must not see a constrained feature)."""
        if self.hidden_layers is None:
            return False
        if self.deep_embedding is not None and self.monotone_constraints is not None:
            raise ValueError(
                "deep_embedding reads every feature, and monotone_constraints needs the deep "
                "part blind to the constrained ones; set deep_embedding=None to use them"
            )
        levers = (self.deep_embedding, self.deep_clip)
        return any(v is not None for v in levers) or bool(self.deep_dropout)

    def _with_knots(self, units: list) -> list:
        """`units` ((estimator, Prepared) pairs), each estimator handed its data's Phi layout
        (``_deep_knots``, which `_deep_builder` reads) when a lever builds the deep part."""
        if units and self._embedded():
            for est, data in units:
                est._deep_knots = data.knots
        return units

    # -- lam_choice ------------------------------------------------------------------------------
    def _lam_candidates(self, prep, units: list) -> list:
        """With ``lam_choice = f``, the candidates of `pilid.models.shape_choice` (``pairs``,
        ``smoothness``) twice: at the estimator's ``lam_`` (Eq. 11's weight, its rule of the
        rows) and at ``f * lam_``, chosen among as they are (`shape_choice.validation_loss`);
        ``shape_choice_`` gains their ``lam``."""
        first, members = self.__dict__.pop("_candidates")
        lam = self.lam_
        self.lam_ = lam * float(self.lam_choice)
        try:
            more = shape_choice.candidate_members(self, prep)  # they take the scaled lam_
        finally:
            self.lam_ = lam
        self._candidates = (first, [*members, *self._candidates[1]])
        return [*units, *more]

    def _collect(self) -> None:
        """PiLiD's, with a bag's members' `SHARED_BAG` dropped and, where a lever changes the
        choice among candidates, `bags.collect`; with ``lam_choice``, ``shape_choice_`` lists
        each candidate's ``lam``."""
        if "_bag" in self.__dict__:
            for member in self._bag[1]:
                member.__dict__.pop(SHARED_BAG, None)
        candidates = self.__dict__.get("_candidates")
        lams = None if candidates is None else [m.lam_ for m in candidates[1]]
        choosing = "_candidates" in self.__dict__ or "_chosen" in self.__dict__
        if choosing and (bags.owns_validation(self) or self.choice_members is not None):
            bags.collect(self)
        else:
            super()._collect()
        choice = getattr(self, "shape_choice_", None)
        if lams is not None and self.lam_choice is not None and len(choice) == len(lams):
            self.shape_choice_ = choice.assign(lam=lams)

    def _more_members(self) -> list:
        """Once the candidates' first members chose (``choice_members``), the chosen
        candidate's other members; else PiLiD's."""
        units = self.__dict__.pop("_rest_of_chosen", None) or super()._more_members()
        return self._with_knots(units)

    def _deep_builder(self):
        """With ``deep_embedding`` / ``deep_dropout`` / ``deep_clip``, TabM's or RealMLP's deep
        part (`EmbeddedBuilder`); with ``deep_heads``, k heads (`HeadsBuilder`);
        with ``deep_ensemble="shared"``, the builder of BatchEnsemble's MLP for a bag's
        members (`SharedBuilder`); else PiLiD's."""
        if self._embedded():
            return EmbeddedBuilder(
                self.hidden_layers,
                self.sigma,
                self.__dict__.get("_deep_knots"),
                self.deep_embedding,
                float(self.deep_dropout or 0.0),
                self.deep_clip,
            )
        if self._heads():
            return HeadsBuilder(self.hidden_layers, self.sigma, int(self.deep_heads))
        if self.deep_ensemble != "shared" or self.hidden_layers is None:
            return super()._deep_builder()
        bag = getattr(self, SHARED_BAG, None)
        classes = int(getattr(self, "_softmax_classes", 1))
        return SharedBuilder(self.hidden_layers, self.sigma, bag, classes)

    def _finalize(self, prep) -> None:
        """A shared MLP folded into the member's plain MLP (`fold_module`); with
        ``keep="glass"`` the MLP dropped (`keep_glass_part_`); then PiLiD's."""
        fold_module(self.module_)
        if self.keep == "glass" and self.module_ is not None:
            keep_glass_part_(self.module_, prep)
        super()._finalize(prep)


class PiLiDLeverRegressor(_Levers, PiLiDRegressor):
    """`pilid.PiLiDRegressor` with the levers of `LEVERS` as keyword-only parameters (each at
    its neutral value by default: PiLiD's fit)."""


class PiLiDLeverClassifier(_Levers, PiLiDClassifier):
    """`pilid.PiLiDClassifier` with the levers of `LEVERS` as keyword-only parameters (each at
    its neutral value by default: PiLiD's fit)."""


def with_levers(cls: type) -> type:
    """The class of `pilid.PiLiDRegressor` or `pilid.PiLiDClassifier` (`cls`) that takes the
    levers of `LEVERS` as parameters."""
    return {PiLiDRegressor: PiLiDLeverRegressor, PiLiDClassifier: PiLiDLeverClassifier}[cls]
