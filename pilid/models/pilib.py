"""PiLiB (Guo et al., IJCAI 2020, Section 3.3 and supplementary Algorithm 2).

PiLiB keeps PiLiD's piecewise-linear additive component (Definitions 1-2, Eq. 10) and replaces
its MLP by B same-sized blocks whose first-layer inputs are switched by hard-concrete L0 gates
(`pilid.models.blocks.GatedBlocks`, `pilid.models.gates`), so each block models one small group of
interacting features:

    U(y) = w_0 + u^T Phi + sum_i g_i(x * z_i).

Loss (Section 3.3): R_PiLiB = task loss + L_K', with

    L_K' = max(max_i k_i - K, 0) + lambda0 * sum_i (k_i - 2) / #{i: k_i != 0},

k_i the expected order of block i; the exact reading is documented in
`pilid.models.gates.pilib_order_penalty` (soft count of non-empty blocks, held constant in the
gradient).

Training (Algorithm 2), each trial on its own:

* Warm-up ("warmup", `warmup_epochs`, our addition): everything trains without the gate
  penalty. With the penalty from the first step (Algorithm 2 as printed) the gates of blocks that
  have not learned anything yet get little task gradient and may close before the blocks learn,
  losing real effects. Measured on 8 seeds of a 10-feature synthetic problem with two weak pairs:
  at lambda0=0.3, 6 of 8 runs kept exactly the true pairs without warm-up and 8 of 8 with 10
  epochs (at the default lambda0=0.2 both 8 of 8); NIT without warm-up lost a main effect in 2
  of 4 seeds. `warmup_epochs=0` gives the paper's schedule.
* Phase 1 ("gates"): everything trains with the gate penalty (the additive part, like the
  blocks' weights, with `lam * Omega`; the gates never get Omega). The phase ends when the
  maximum expected order max_i k_i <= K (the paper's test), the deterministic masks 1(z_det != 0)
  that phase 2 will use also have at most K features per block, every gate is decided
  (P(z != 0) <= 0.1 or >= 0.9) and the masks have not changed for `mask_patience` epochs (our
  addition: the paper's test alone is often met while the gates are undecided, e.g. every gate
  at P = 0.5; letting the L0 pressure run until the masks settle is what leaves exactly the
  interacting groups). It stops at `phase1_epochs` at the latest; if the order test is still
  failing then, a `GateOrderWarning` says so and each block keeps its K strongest gates. There is
  no early stopping in phase 1 (the target is the masks, not the validation loss). The gates
  learn `gate_lr_scale` times faster than the weights (see `pilid.models.gates`).
* Phase 2 ("retrain"): the masks are frozen as binary 0/1 gates (Algorithm 2, step 6), the penalty
  is dropped, and all other parameters train with the standard regularisation lam * Omega and
  early stopping on the validation loss (best weights restored).

After training, `purify=True` moves the blocks' main effects into the additive shapes (see
`pilid.models.pilid`); `interactions_()` lists the feature groups of the active blocks and
`interaction_grid` / `plot_interaction` show a pair's learned joint effect (the paper's Figure 5).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from pilid.errors import PilidError
from pilid.models.blocks import GatedBlocks, _check_layers
from pilid.models.estimators import (
    NeuralEstimator,
    _Classifier,
    _Regressor,
    _ShapeMixin,
)
from pilid.models.gates import GateOrderWarning, deterministic_gates, pilib_order_penalty
from pilid.models.params import ParamError
from pilid.models.piecewise import fit_knots, phi_numpy
from pilid.train import Phase

# Blocks whose output varies less than this share of the model output (std on the training rows)
# count as inactive in `interactions_()`.
MIN_SHARE = 0.02
# A block of order >= 2 reports an interaction when its non-additive part has at least this share.
MIN_INTERACTION = 0.05
# Phase 1 waits until every gate is decided: P(gate != 0) <= 1 - DECIDED or >= DECIDED.
DECIDED = 0.9
# Rows of the training data kept for partial dependence in `interaction_grid`.
N_BACKGROUND = 200
# A feature with at most this many distinct values is gridded at its values.
MAX_GRID_LEVELS = 64
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
    phi = phi_numpy(X, knots)
    column_feature = knots.layout()[0]
    out = np.zeros(features.shape[0])
    for i in np.flatnonzero(features.sum(1) >= 2):  # one small fit per block (B <= a few dozen)
        cols = np.isin(column_feature, np.flatnonzero(features[i]))
        design = np.column_stack([np.ones(len(X)), phi[:, cols]])
        coef, *_ = np.linalg.lstsq(design, g[:, i], rcond=None)
        out[i] = float(np.std(g[:, i] - design @ coef))
    return out


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


class _BlockModel(NeuralEstimator):
    """Shared machinery of PiLiB and NIT: gated blocks, the two phases, interaction summaries."""

    def _penalty(self, log_alpha: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    # ------------------------------------------------------------ protocol hooks
    def _build_deep(self, n_features: int, seeds: Sequence[int]) -> GatedBlocks:
        return GatedBlocks(
            n_features,
            seeds,
            n_blocks=int(self.n_blocks),
            layers=self.block_layers,
            init_scale=float(self.init_scale),
            init_prob=float(self.init_prob),
            gate_lr_scale=float(self.gate_lr_scale),
            output_bias=not self._has_additive,
        )

    def _extra_loss(self, model, x):
        return self._penalty(model.deep.gates.log_alpha)

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

    def _regularized(self, name: str) -> bool:
        if name.startswith("deep.gates."):
            return False  # the gates have their own (L0) penalty
        return super()._regularized(name)

    def _check_params(self) -> None:
        super()._check_params()

        def whole(name, low):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
                raise ParamError(name, v, f"use a whole number >= {low}")

        whole("n_blocks", 1)
        whole("max_order", 1)
        whole("phase1_epochs", 1)
        whole("mask_patience", 0)
        whole("warmup_epochs", 0)
        _check_layers(self.block_layers)
        for name, strict in (("lambda0", False), ("gate_lr_scale", True), ("init_scale", True)):
            v = getattr(self, name)
            ok = isinstance(v, numbers.Real) and not isinstance(v, bool)
            if not ok or not v < np.inf or v < 0 or (strict and v == 0):
                raise ParamError(name, v, f"use a number {'>' if strict else '>='} 0")
        p = self.init_prob
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 < p < 1:
            raise ParamError("init_prob", p, "use a probability in (0, 1), e.g. 0.9")

    def _finalize(self, prep) -> None:
        """Base fitted attributes, then the block summaries on the trial's training rows."""
        super()._finalize(prep)
        X = prep.X[prep.train_idx]
        x = torch.as_tensor((X - self.x_mean_) / self.x_scale_, dtype=torch.float32)
        deep = self.module_.deep
        with torch.no_grad():  # (n, B), in chunks of rows
            g = np.concatenate(
                [
                    deep.block_outputs(x[None, s : s + CHUNK])[0].double().numpy()
                    for s in range(0, len(x), CHUNK)
                ]
            )
        total = float(np.std(self._raw(X)))
        spread = g.std(axis=0)
        self.block_features_ = deep.block_features()[0].numpy().copy()
        self.block_order_ = self.block_features_.sum(1)
        self.block_importance_ = spread * self.y_scale_
        self.block_share_ = spread / total if total > 0 else np.zeros_like(spread)
        self.block_offset_ = g.mean(axis=0)
        rng = np.random.default_rng([int(self.seed_), 7])
        rows = np.sort(rng.permutation(len(X))[:N_ADDITIVE_FIT])
        residual = _non_additive_spread(X[rows], g[rows], self.block_features_, self.categorical_)
        self.block_interaction_share_ = residual / total if total > 0 else np.zeros_like(spread)
        self._background_X = X[np.sort(rng.permutation(len(X))[:N_BACKGROUND])]
        self.x_min_ = X.min(axis=0)
        self.x_max_ = X.max(axis=0)
        self._grid_values = []
        for j in range(X.shape[1]):
            values = np.unique(X[:, j])
            self._grid_values.append(values if len(values) <= MAX_GRID_LEVELS else None)

    # ------------------------------------------------------------ interpretation
    def _names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(c) for c in names]
        return [f"x{j}" for j in range(self.n_features_in_)]

    def _index(self, feature) -> int:
        names = self._names()
        if isinstance(feature, numbers.Integral) and not isinstance(feature, bool):
            if -len(names) <= feature < len(names):
                return int(feature) % len(names)
        elif isinstance(feature, str) and feature in names:
            return names.index(feature)
        raise PilidError(f"unknown feature {feature!r}; use an index < {len(names)} or a name")

    def active_blocks_(self, min_share: float = MIN_SHARE) -> np.ndarray:
        """Indices of the active blocks: order >= 1 and an output spread (std on the training
        rows) of at least `min_share` of the model output's."""
        check_is_fitted(self, "block_features_")
        return np.flatnonzero((self.block_order_ >= 1) & (self.block_share_ >= min_share))

    def interactions_(
        self,
        min_order: int = 1,
        min_share: float = MIN_SHARE,
        min_interaction: float = MIN_INTERACTION,
    ) -> list[tuple]:
        """Feature groups (tuples of feature names; `x0`, `x1`, ... for NumPy input) used by the
        active blocks (`active_blocks_`), de-duplicated, sorted by size and then by column order.

        A block of order >= 2 counts as an interaction of its features only if the part of its
        output that no sum of one-feature functions explains (`block_interaction_share_`, std
        over the model output's std) is at least `min_interaction`; otherwise it is additive
        and its features are listed as single-feature groups. Groups of size 1 are main effects
        that blocks still carry (PiLiB pushes them to the additive part, NIT keeps them in its
        blocks); `min_order=2` lists the interactions only.
        """
        names = self._names()
        groups = set()
        for i in self.active_blocks_(min_share):
            feats = tuple(np.flatnonzero(self.block_features_[i]).tolist())
            if len(feats) >= 2 and self.block_interaction_share_[i] < min_interaction:
                groups.update((j,) for j in feats)  # additive block: main effects only
            else:
                groups.add(feats)
        groups = sorted((g for g in groups if len(g) >= min_order), key=lambda g: (len(g), g))
        return [tuple(names[j] for j in g) for g in groups]

    def _axis(self, j: int, n: int) -> np.ndarray:
        values = self._grid_values[j]
        if values is not None and len(values) <= n:
            return values.astype(np.float64)
        return np.linspace(self.x_min_[j], self.x_max_[j], n)

    def interaction_grid(self, i, j, n: int = 50, X=None) -> pd.DataFrame:
        """The learned joint effect of features i and j on a grid: DataFrame (x_a, x_b, value).

        Sum of the blocks that use both features (the paper's Figure 5), in output units,
        centred to mean 0 on the training rows; `x_a`, `x_b` in the estimator's input units
        (n evenly spaced points over the training range, or the unique values of a feature with
        at most n of them). The block's other features, if any, are averaged out over the rows
        of `X` (default: up to 200 training rows kept at fit), i.e. partial dependence.
        """
        check_is_fitted(self, "block_features_")
        a, b = self._index(i), self._index(j)
        if a == b:
            raise PilidError(f"interaction_grid needs two different features; got {i!r} twice")
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
            raise PilidError(f"n={n!r} is invalid; use a whole number >= 2 grid points")
        blocks = [k for k in self.active_blocks_(0.0) if self.block_features_[k, [a, b]].all()]
        if not blocks:
            names = self._names()
            raise PilidError(
                f"no block uses both {names[a]!r} and {names[b]!r}; pick a pair from "
                "interactions_()"
            )
        background = self._background_X if X is None else self._validate_X(X, fit=False)
        others = self.block_features_[blocks].any(0)
        others[[a, b]] = False
        if not others.any():
            background = background[:1]  # the blocks see only (a, b)
        ga, gb = self._axis(a, n), self._axis(b, n)
        A, Bv = np.meshgrid(ga, gb, indexing="ij")
        points = np.column_stack([A.ravel(), Bv.ravel()])
        idx = torch.as_tensor(blocks)
        r = len(background)
        step = max(1, CHUNK // r)  # grid points per forward pass
        value = np.empty(len(points))
        for s in range(0, len(points), step):
            part = points[s : s + step]
            rows = np.repeat(background[None], len(part), axis=0)  # (points, r, m)
            rows[:, :, a] = part[:, :1]
            rows[:, :, b] = part[:, 1:]
            x = (rows.reshape(-1, rows.shape[2]) - self.x_mean_) / self.x_scale_
            with torch.no_grad():
                g = self.module_.deep.block_outputs(
                    torch.as_tensor(x, dtype=torch.float32)[None], blocks=idx
                )[0]
            value[s : s + step] = g.double().numpy().sum(1).reshape(len(part), r).mean(1)
        value = self.y_scale_ * (value - self.block_offset_[blocks].sum())
        return pd.DataFrame({"x_a": A.ravel(), "x_b": Bv.ravel(), "value": value})

    def plot_interaction(self, i, j, ax=None, grid: int = 50, X=None, cmap: str = "RdBu_r"):
        """Heat map of `interaction_grid(i, j)` (the paper's Figure 5); returns the axes."""
        import matplotlib.pyplot as plt

        df = self.interaction_grid(i, j, n=grid, X=X)
        names = self._names()
        a, b = self._index(i), self._index(j)
        xa, xb = np.unique(df["x_a"]), np.unique(df["x_b"])
        values = df["value"].to_numpy().reshape(len(xa), len(xb))
        if ax is None:
            _, ax = plt.subplots(figsize=(4.2, 3.4))
        lim = float(np.abs(values).max()) or 1.0
        mesh = ax.pcolormesh(xa, xb, values.T, shading="nearest", cmap=cmap, vmin=-lim, vmax=lim)
        ax.figure.colorbar(mesh, ax=ax, label="joint effect")
        ax.set_xlabel(names[a])
        ax.set_ylabel(names[b])
        ax.set_title(f"{names[a]} x {names[b]}", fontsize=9)
        return ax


class PiLiBBase(_ShapeMixin, _BlockModel):
    def __init__(
        self,
        gamma=5,
        knots="uniform",
        init="lstsq",
        n_blocks=20,
        max_order=3,
        block_layers=(16, 8),
        lambda0=0.2,
        gate_lr_scale=10.0,
        warmup_epochs=10,
        phase1_epochs=400,
        mask_patience=10,
        init_prob=0.9,
        init_scale=1.0,
        sigma=None,
        reg="l2",
        lam=1e-5,
        reg_groups="all",
        purify=True,
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
    ):
        self.gamma = gamma
        self.knots = knots
        self.init = init
        self.n_blocks = n_blocks
        self.max_order = max_order
        self.block_layers = block_layers
        self.lambda0 = lambda0
        self.gate_lr_scale = gate_lr_scale
        self.warmup_epochs = warmup_epochs
        self.phase1_epochs = phase1_epochs
        self.mask_patience = mask_patience
        self.init_prob = init_prob
        self.init_scale = init_scale
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

    def _penalty(self, log_alpha: torch.Tensor) -> torch.Tensor:
        return pilib_order_penalty(log_alpha, int(self.max_order), float(self.lambda0))


_PILIB_DOC = """
    Parameters (defaults work out of the box on a few thousand rows; the paper's in brackets):
    gamma, knots, init: the piecewise-linear component, as in PiLiD (Definitions 1-2,
        Algorithm 1 step 2).
    n_blocks: number of blocks B [20]; max_order: largest interaction order K [3];
        block_layers: hidden sizes of every block (each block is an MLP over its gated inputs).
    lambda0: weight of the second term of L_K' (see `pilid.models.gates.pilib_order_penalty`);
        larger values keep fewer, stronger effects in the blocks. Measured: 1.0 dropped pairs
        explaining ~5% of the variance of a synthetic target; 0.3 left no block on spambase;
        0.1 kept spurious third features next to true pairs in classification.
    gate_lr_scale: the gates' learning rate relative to `lr` (log_alpha = gate_lr_scale * loc).
    warmup_epochs: epochs without the gate penalty before phase 1 (0: Algorithm 2 as printed).
    phase1_epochs: cap on phase 1 (gate search); mask_patience: epochs the masks must stay
        unchanged (with max order <= K) before phase 2 starts; init_prob: initial P(gate != 0).
    init_scale: scale of the blocks' Gaussian weight init relative to He initialisation
        (`pilid.models.blocks.GatedBlocks`); sigma: std of w with init="gaussian" (as PiLiD;
        None: He scale).
    reg, lam, reg_groups: lam * Omega (Eq. 11) on every parameter but the gates.
    purify: after training, move the blocks' main effects into the additive shapes.
    lr, epochs (phase 2 cap), batch_size, optimizer, patience, val_fraction, random_state,
        device, categorical_features, verbose: as in PiLiD.

    Fitted attributes besides PiLiD's: block_features_ (B, m) bool (frozen masks),
    block_order_ (B,), block_importance_ (B,) (std of each block's output on the training rows,
    output units), block_share_ (B,) (that std over the model output's std),
    block_interaction_share_ (B,) (the same for the block's non-additive part).
    """


class PiLiBRegressor(_Regressor, PiLiBBase):
    __doc__ = (
        "PiLiB for regression (Guo et al., IJCAI 2020, Section 3.3, Algorithm 2)." + _PILIB_DOC
    )


class PiLiBClassifier(_Classifier, PiLiBBase):
    __doc__ = (
        "PiLiB for binary classification (Section 3.3, Algorithm 2; cross-entropy)." + _PILIB_DOC
    )


def plot_interaction(estimator, i, j, ax=None, grid: int = 50, X=None):
    """Heat map of a fitted PiLiB/NIT estimator's joint effect of features i and j (Figure 5)."""
    if not isinstance(estimator, _BlockModel):
        raise PilidError(
            "plot_interaction needs a fitted PiLiB or NIT estimator, got "
            f"{type(estimator).__name__}"
        )
    return estimator.plot_interaction(i, j, ax=ax, grid=grid, X=X)
