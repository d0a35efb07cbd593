"""The gated-block estimators' shared machinery: PiLiB (Section 3.3) and NIT (Tsang et al. 2018).

Both replace PiLiD's MLP by B MLP blocks with hard-concrete input gates
(`pilid.nn.blocks.GatedBlocks`) and train in three phases (Algorithm 2 of the supplement, see
`pilid.estimators.pilib`): a warm-up without the gate penalty, phase 1 with it until the block
orders are <= K and the masks have settled (`_PhaseOneExit`), phase 2 with the masks frozen.
After training, every block is summarised on the training rows (its share of the output and of
its non-additive part), which `interactions_()`, `interaction_grid` and `plot_interaction` read.

Missing values: a feature with NaN in fit adds a missing indicator to the blocks' input
(`pilid.train.encoding.deep_input`), behind the same gate as its feature (`_IndicatorBlocks`), so
gates, orders and ``block_features_`` stay one per feature; the summaries skip NaN.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from pilid.errors import PilidError
from pilid.estimators.neural import BAG_CONSTRAINTS, BLOCK_LAYERS, NeuralEstimator
from pilid.inspection.explanation import ExplainMixin
from pilid.inspection.interaction_display import InteractionPlotMixin
from pilid.inspection.joint_grid import check_pair, grid_axis, keep_grid_rows
from pilid.models import bagging, multiclass
from pilid.models.monotone import CLOSED_LOG_ALPHA
from pilid.models.params import Number, Whole
from pilid.models.sample_weight import weighted_mean_std
from pilid.nn.blocks import GatedBlocks
from pilid.nn.gates import GateOrderWarning, GatePenalty, HardConcreteGates, deterministic_gates
from pilid.nn.piecewise import fit_knots, phi_numpy
from pilid.streams import STREAM_BLOCK_SUMMARY, trial_rng
from pilid.train import Phase
from pilid.train.encoding import deep_input
from pilid.train.losses import Regularized

# Blocks whose output varies less than this share of the model output (std on the training rows)
# count as inactive in `interactions_()`.
MIN_SHARE = 0.02
# A block of order >= 2 reports an interaction when its non-additive part has at least this share.
MIN_INTERACTION = 0.05
# Phase 1 waits until every gate is decided: P(gate != 0) <= 1 - DECIDED or >= DECIDED.
DECIDED = 0.9
# The additive fit that separates a block's interaction from its main effects: rows used, and
# quantile pieces per feature (piecewise-linear, Definitions 1-2).
N_ADDITIVE_FIT = 5000
ADDITIVE_PIECES = 16
# Rows per forward pass when summarising or gridding the blocks.
CHUNK = 8192


def _non_additive_spread(
    X: np.ndarray, g: np.ndarray, features: np.ndarray, categorical: np.ndarray
) -> np.ndarray:
    """Per block, the std of its output left after the best additive fit in its own features.

    Block i's output g_i (rows of X) is regressed by least squares on an intercept and the
    piecewise-linear functions (Phi of Definition 2, `ADDITIVE_PIECES` quantile pieces) of each
    of its features; the residual is the part no sum of one-feature functions explains, i.e. the
    block's interaction (functional-ANOVA sense). 0 for blocks of order <= 1.
    """
    knots = fit_knots(X, ADDITIVE_PIECES, "quantile", categorical)
    nan = np.isnan(X)
    phi = np.nan_to_num(phi_numpy(X, knots), nan=0.0)  # a missing value: no piece ...
    column_feature = knots.layout()[0]
    out = np.zeros(features.shape[0])
    for i in np.flatnonzero(features.sum(1) >= 2):  # one small fit per block (B <= a few dozen)
        cols = np.isin(column_feature, np.flatnonzero(features[i]))
        lacking = features[i] & nan.any(0)  # ... and its own column, the missing indicator
        design = np.column_stack([np.ones(len(X)), phi[:, cols], nan[:, lacking]])
        coef, *_ = np.linalg.lstsq(design, g[:, i], rcond=None)
        out[i] = float(np.std(g[:, i] - design @ coef))
    return out


class _IndicatorBlocks(GatedBlocks):
    """`GatedBlocks` over the m features and one missing indicator per feature with missing
    values (`pilid.train.encoding.deep_input`): an indicator shares its feature's gate, so a
    block sees a feature's value and whether it is missing together, and the gates, orders and
    `block_features` stay one per feature. `gate_of` (m + k,): the feature of every input."""

    def __init__(self, gate_of, seeds: Sequence[int], n_blocks: int = 20, **kwargs) -> None:
        gate_of = np.asarray(gate_of, dtype=np.int64)
        super().__init__(len(gate_of), seeds, n_blocks, **kwargs)
        m = int(gate_of.max()) + 1
        gate_keys = ("init_prob", "beta", "gamma", "zeta")
        self.gates = HardConcreteGates(  # one gate per feature, not per input column
            n_blocks,
            m,
            seeds,
            lr_scale=kwargs.get("gate_lr_scale", 1.0),
            **{k: kwargs[k] for k in gate_keys if k in kwargs},
        )
        self.gate_of = gate_of  # not a buffer: no leading trial dimension (state dicts have)

    def block_outputs(self, x, gates=None, blocks=None):
        """`GatedBlocks.block_outputs` with each indicator behind its feature's gate."""
        z = self.gates() if gates is None else gates
        index = torch.as_tensor(self.gate_of, device=z.device)
        return super().block_outputs(x, z.index_select(-1, index), blocks)


@dataclass(frozen=True)
class GatedBuilder:
    """The gated blocks of Section 3.3 as `pilid.train.TrainSpec` builds them:
    ``builder(n_features, seeds)`` is `GatedBlocks` of these options or, with ``gate_of`` (the
    feature of every input, a missing indicator behind its feature's gate), `_IndicatorBlocks`;
    the gates of the features in ``closed`` (monotone-constrained ones) start closed."""

    n_blocks: int
    layers: Sequence[int]
    init_scale: float
    init_prob: float
    gate_lr_scale: float
    output_bias: bool
    gate_of: np.ndarray | None = None
    closed: np.ndarray | None = None

    def __call__(self, n_features: int, seeds: Sequence[int]) -> GatedBlocks:
        """The blocks for ``len(seeds)`` trials on `n_features` inputs."""
        options = dict(
            n_blocks=self.n_blocks,
            layers=self.layers,
            init_scale=self.init_scale,
            init_prob=self.init_prob,
            gate_lr_scale=self.gate_lr_scale,
            output_bias=self.output_bias,
        )
        if self.gate_of is not None:
            blocks = _IndicatorBlocks(self.gate_of, seeds, **options)
        else:
            blocks = GatedBlocks(n_features, seeds, **options)
        if self.closed is not None and self.closed.any():
            gates = blocks.gates
            with torch.no_grad():
                gates.loc[:, :, torch.as_tensor(self.closed)] = CLOSED_LOG_ALPHA / gates.lr_scale
        return blocks


class _PhaseOneExit:
    """`until` of phase 1 (Algorithm 2, steps 2-5): which trials leave, freezing their masks.

    Called once per epoch with the ensemble; trial t leaves when max_i k_i <= K, its
    deterministic masks have at most K open gates per block, every gate is decided (P(z != 0)
    <= 1 - DECIDED or >= DECIDED) and the masks have not changed for `patience` epochs, or when
    it has spent `cap` epochs in the phase. Leaving trials get their masks frozen here (phase 2
    must see fixed 0/1 gates, not samples); the trainer has no phase-entry hook.
    """

    def __init__(self, max_order: int, patience: int, cap: int, name: str) -> None:
        self.max_order, self.patience, self.cap, self.name = max_order, patience, cap, name
        self.previous = self.stable = self.epochs = None

    def __call__(self, model) -> torch.Tensor:
        with torch.no_grad():
            return self._check(model)

    def _check(self, model) -> torch.Tensor:
        gates = model.deep.gates
        running = ~gates.frozen
        p = gates.prob_nonzero()
        k_max = p.sum(-1).max(-1).values
        decided = ((p <= 1.0 - DECIDED) | (p >= DECIDED)).flatten(1).all(1)
        open_ = deterministic_gates(gates.log_alpha, gates.gamma, gates.zeta) > 0
        det_max = open_.sum(-1).max(-1).values
        if self.previous is None:
            self.stable = torch.zeros_like(running, dtype=torch.long)
            self.epochs = torch.zeros_like(running, dtype=torch.long)
        else:
            same = (open_ == self.previous).flatten(1).all(1)
            self.stable = torch.where(same, self.stable + 1, torch.zeros_like(self.stable))
        self.previous = open_
        self.epochs += running.long()
        order_ok = (k_max <= self.max_order) & (det_max <= self.max_order)
        settled = order_ok & decided & (self.stable >= self.patience)
        capped = running & ~settled & (self.epochs >= self.cap)
        leave = running & (settled | capped)
        gates.freeze(leave, max_order=self.max_order)
        late = capped & ~order_ok
        if bool(late.any()):
            trials = torch.nonzero(late).flatten().tolist()
            warnings.warn(
                f"{self.name}: phase 1 reached phase1_epochs={self.cap} with a block order above "
                f"max_order={self.max_order} (expected order {float(k_max[late].max()):.2f}, "
                f"{int(det_max[late].max())} open gates; trial index {trials}); each block keeps "
                "its max_order strongest gates. Raise phase1_epochs or lambda0.",
                GateOrderWarning,
                stacklevel=3,
            )
        return leave


#: The fitted attributes of the block models (numpydoc, appended to PiLiB's and NIT's docstrings).
BLOCK_ATTRIBUTES_DOC = """
    block_features_ : ndarray of bool, shape (n_blocks, n_features_in_)
        The frozen gate masks: the features each block sees.
    block_order_ : ndarray of int, shape (n_blocks,)
        The number of features of each block.
    block_importance_ : ndarray of shape (n_blocks,)
        The std of each block's output on the training rows, in output units (weighted by
        ``sample_weight``, as are `block_share_` and `block_offset_`).
    block_share_ : ndarray of shape (n_blocks,)
        That std over the model output's std.
    block_interaction_share_ : ndarray of shape (n_blocks,)
        The same for the part of the block's output that is not additive in its features.
    block_offset_ : ndarray of shape (n_blocks,)
        Each block's mean output on the training rows.
    x_min_, x_max_ : ndarray of shape (`n_features_in_`,)
        The training range of every feature (the grids of `interaction_grid`).
"""


class BlockModel(InteractionPlotMixin, ExplainMixin, NeuralEstimator):
    """Shared machinery of PiLiB and NIT: gated blocks, the two phases, interaction summaries;
    `explain` / `plot_explanation` of single predictions (`pilid.inspection.explanation`)."""

    _parameter_constraints = {
        **NeuralEstimator._parameter_constraints,
        "n_blocks": [Whole(1)],
        "max_order": [Whole(1)],
        "block_layers": [BLOCK_LAYERS],
        "lambda0": [Number(0, None, closed="left")],
        "gate_lr_scale": [Number(0, None, closed="neither")],
        "warmup_epochs": [Whole(0)],
        "phase1_epochs": [Whole(1)],
        "mask_patience": [Whole(0)],
        "init_prob": [Number(0, 1, closed="neither")],
        "init_scale": [Number(0, None, closed="neither")],
        **BAG_CONSTRAINTS,
    }

    #: The gates' order penalty (`pilid.nn.gates`, a ``staticmethod``): PiLiB's L_K' or NIT's L_K.
    _order_penalty = None

    # ------------------------------------------------------------ protocol hooks
    def _deep_builder(self) -> GatedBuilder:
        missing = getattr(self, "missing_", None)
        gate_of = None
        if missing is not None and missing.any():  # + a missing indicator per such feature
            gate_of = np.concatenate([np.arange(len(missing)), np.flatnonzero(missing)])
        return GatedBuilder(
            n_blocks=int(self.n_blocks),
            layers=self.block_layers,
            init_scale=float(self.init_scale),
            init_prob=float(self.init_prob),
            gate_lr_scale=float(self.gate_lr_scale),
            output_bias=not self._has_additive,
            gate_of=gate_of,
        )

    def _penalty_term(self) -> GatePenalty:
        return GatePenalty(self._order_penalty, int(self.max_order), float(self.lambda0))

    def _phases(self) -> list[Phase]:
        until = _PhaseOneExit(
            int(self.max_order),
            int(self.mask_patience),
            int(self.phase1_epochs),
            type(self).__name__,
        )
        return [
            Phase("warmup", int(self.warmup_epochs), early_stopping=False),
            Phase(
                "gates", int(self.phase1_epochs), penalty=True, early_stopping=False, until=until
            ),
            Phase("retrain", int(self.epochs), frozen=("deep.gates.",), early_stopping=True),
        ]

    def _regularized(self) -> Regularized:
        """PiLiD's, less the gates: they have their own (L0) penalty."""
        return dataclasses.replace(super()._regularized(), exempt=("deep.gates.",))

    def _finalize(self, prep) -> None:
        """Base fitted attributes, then the block summaries on the trial's training rows."""
        super()._finalize(prep)
        X = prep.X[prep.train_idx]
        x = deep_input(X, self.x_mean_, self.x_scale_, getattr(self, "missing_", None))
        x = torch.as_tensor(x, dtype=torch.float32)
        deep = self.module_.deep
        with torch.no_grad():  # (n, B), in chunks of rows
            g = np.concatenate(
                [
                    deep.block_outputs(x[None, s : s + CHUNK])[0].double().numpy()
                    for s in range(0, len(x), CHUNK)
                ]
            )
        # sample weights of the training rows (None: unweighted; a bag member's drawn rows)
        total = float(weighted_mean_std(self._raw(X), prep.train_weight)[1])
        offset, spread = weighted_mean_std(g, prep.train_weight)
        self.block_features_ = deep.block_features()[0].numpy().copy()
        self.block_order_ = self.block_features_.sum(1)
        self.block_importance_ = spread * self.y_scale_
        self.block_share_ = spread / total if total > 0 else np.zeros_like(spread)
        self.block_offset_ = offset
        rng = trial_rng(int(self.seed_), STREAM_BLOCK_SUMMARY)
        rows = np.sort(rng.permutation(len(X))[:N_ADDITIVE_FIT])
        residual = _non_additive_spread(X[rows], g[rows], self.block_features_, self.categorical_)
        self.block_interaction_share_ = residual / total if total > 0 else np.zeros_like(spread)
        keep_grid_rows(self, X, rng)  # what interaction_grid needs of the training rows

    def _collect(self) -> None:
        """A bag (``n_bags`` > 1, `pilid.models.bagging`): the members' common attributes, and
        the grid of `interaction_grid` from the bag's training rows (members saw bootstraps)."""
        if "_bag" not in self.__dict__:
            return super()._collect()  # K > 2 classes: the class members (their own bags)
        prep = self._bag[0]
        super()._collect()
        rng = trial_rng(int(prep.seed), STREAM_BLOCK_SUMMARY)
        keep_grid_rows(self, prep.X[prep.train_idx], rng)

    def _no_blocks_of_its_own(self, what: str) -> None:
        if self._multiclass():
            raise PilidError(
                f"a model of {len(self.classes_)} classes has blocks per class, so no {what} of "
                f"its own; each class's are in class_estimators_ (e.g. "
                f"class_estimators_[0].{what}())"
            )
        if self._bagged():
            raise PilidError(
                f"a bag has no blocks of its own, so no {what}; its members' are in "
                f"estimators_ (e.g. estimators_[0].{what}())"
            )

    # ------------------------------------------------------------ interpretation
    def active_blocks_(self, min_share: float = MIN_SHARE) -> np.ndarray:
        """Indices of the active blocks: order >= 1 and an output spread (std on the training
        rows) of at least `min_share` of the model output's. Not for a bag (see `estimators_`)."""
        self._no_blocks_of_its_own("active_blocks_")
        check_is_fitted(self, "x_min_")
        return np.flatnonzero((self.block_order_ >= 1) & (self.block_share_ >= min_share))

    def interactions_(
        self,
        min_order: int = 1,
        min_share: float = MIN_SHARE,
        min_interaction: float = MIN_INTERACTION,
        min_agreement: float = 0.5,
    ) -> list[tuple]:
        """Feature groups (tuples of feature names; `x0`, `x1`, ... for NumPy input) used by the
        active blocks (`active_blocks_`), de-duplicated, sorted by size and then by column order.

        A block of order >= 2 counts as an interaction of its features only if the part of its
        output that no sum of one-feature functions explains (`block_interaction_share_`, std
        over the model output's std) is at least `min_interaction`; otherwise it is additive
        and its features are listed as single-feature groups. Groups of size 1 are main effects
        that blocks still carry (PiLiB pushes them to the additive part, NIT keeps them in its
        blocks); `min_order=2` lists the interactions only. A bag lists the groups that at
        least a share `min_agreement` of its members list. A model of K > 2 classes
        (`pilid.models.multiclass`) finds them per class: a dict {class label: groups}.
        """
        if self._multiclass():
            args = (min_order, min_share, min_interaction, min_agreement)
            members = zip(self.classes_, self.class_estimators_)
            return {c: m.interactions_(*args) for c, m in members}
        names = self._feature_names()
        if self._bagged():
            args = (min_order, min_share, min_interaction)
            members = [set(m.interactions_(*args)) for m in self.estimators_]
            votes = {g: sum(g in found for found in members) for g in set().union(*members)}
            agreed = [g for g, n in votes.items() if n >= min_agreement * len(members)]
            return sorted(agreed, key=lambda g: (len(g), [names.index(f) for f in g]))
        groups = set()
        for i in self.active_blocks_(min_share):
            feats = tuple(np.flatnonzero(self.block_features_[i]).tolist())
            if len(feats) >= 2 and self.block_interaction_share_[i] < min_interaction:
                groups.update((j,) for j in feats)  # additive block: main effects only
            else:
                groups.add(feats)
        groups = sorted((g for g in groups if len(g) >= min_order), key=lambda g: (len(g), g))
        return [tuple(names[j] for j in g) for g in groups]

    def interaction_grid(self, i, j, n: int = 50, X=None) -> pd.DataFrame:
        """The learned joint effect of features i and j on a grid: DataFrame (x_a, x_b, value).

        Sum of the blocks that use both features (the paper's Figure 5), in output units,
        centred to mean 0 on the training rows; `x_a`, `x_b` in the estimator's input units
        (n evenly spaced points over the training range, or the unique values of a feature with
        at most n of them). The block's other features, if any, are averaged out over the rows
        of `X` (default: up to 200 training rows kept at fit), i.e. partial dependence. A model
        of K > 2 classes gives each class's grid, a first column ``class``.
        """
        if self._multiclass():
            check_pair(self, i, j, n)
            grids = []
            for member in self.class_estimators_:
                try:
                    grids.append(member.interaction_grid(i, j, n=n, X=X))
                except PilidError:  # no block of this class uses both: its effect is 0
                    grids.append(None)
            if all(g is None for g in grids):
                names = self._feature_names()
                raise PilidError(
                    f"no block of any class uses both {names[self._index(i)]!r} and "
                    f"{names[self._index(j)]!r}; pick a pair from interactions_()"
                )
            ref = next(g for g in grids if g is not None)
            grids = [ref.assign(value=0.0) if g is None else g for g in grids]
            return multiclass.class_table(self, grids)
        check_is_fitted(self, "x_min_")
        a, b = check_pair(self, i, j, n)
        background = self._background_X if X is None else self._validate_X(X, fit=False)
        ga, gb = grid_axis(self, a, n), grid_axis(self, b, n)
        A, Bv = np.meshgrid(ga, gb, indexing="ij")
        points = np.column_stack([A.ravel(), Bv.ravel()])
        grid = pd.DataFrame({"x_a": A.ravel(), "x_b": Bv.ravel()})
        members = self.estimators_ if self._bagged() else [self]
        effects = [m._pair_effect(a, b, points, background) for m in members]
        if all(e is None for e in effects):
            names = self._feature_names()
            raise PilidError(
                f"no block uses both {names[a]!r} and {names[b]!r}; pick a pair from "
                "interactions_()"
            )
        if not self._bagged():
            return grid.assign(value=effects[0])
        # a bag: the mean over members (a member without such a block adds 0) and the spread
        values = np.stack([np.zeros(len(points)) if e is None else e for e in effects])
        lower, upper = np.percentile(values, bagging.BAND_PERCENTILES, axis=0)
        return grid.assign(value=values.mean(0), std=values.std(0), lower=lower, upper=upper)

    def _pair_effect(self, a: int, b: int, points: np.ndarray, background: np.ndarray):
        """The summed output of this model's active blocks that use features a and b at the
        grid `points` (k, 2), averaged over the `background` rows, centred and in output units;
        None when no block uses both."""
        blocks = [k for k in self.active_blocks_(0.0) if self.block_features_[k, [a, b]].all()]
        if not blocks:
            return None
        others = self.block_features_[blocks].any(0)
        others[[a, b]] = False
        if not others.any():
            background = background[:1]  # the blocks see only (a, b)
        idx = torch.as_tensor(blocks)
        r = len(background)
        step = max(1, CHUNK // r)  # grid points per forward pass
        value = np.empty(len(points))
        for s in range(0, len(points), step):
            part = points[s : s + step]
            rows = np.repeat(background[None], len(part), axis=0)  # (points, r, m)
            rows[:, :, a] = part[:, :1]
            rows[:, :, b] = part[:, 1:]
            x = deep_input(
                rows.reshape(-1, rows.shape[2]),
                self.x_mean_,
                self.x_scale_,
                getattr(self, "missing_", None),
            )
            with torch.no_grad():
                g = self.module_.deep.block_outputs(
                    torch.as_tensor(x, dtype=torch.float32)[None], blocks=idx
                )[0]
            value[s : s + step] = g.double().numpy().sum(1).reshape(len(part), r).mean(1)
        return self.y_scale_ * (value - self.block_offset_[blocks].sum())
