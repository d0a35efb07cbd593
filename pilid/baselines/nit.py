"""NIT, Neural Interaction Transparency (Tsang, Liu, Purushotham, Murali & Liu, NeurIPS 2018).

A baseline of Table 3 in Guo et al., IJCAI 2020: the same B gated MLP blocks as PiLiB
(`pilid.nn.blocks.GatedBlocks`) with no piecewise-linear component, so the blocks must carry
the main effects as well as the interactions:

    U(y) = b + sum_i g_i(x * z_i).

Loss: the task loss plus Tsang et al.'s L_K,

    L_K = max(max_i k_i - K, 0) + lambda0 * (1/B) sum_i k_i,

with k_i the expected order of block i (`pilid.nn.gates.nit_order_penalty`; Tsang's lambda
is called `lambda0` here so that PiLiB and NIT share their hyper-parameter names). Training
follows the same schedule as PiLiB (`pilid.estimators.pilib`): a warm-up without L_K, phase 1 with
L_K until the block orders are <= K and the masks have settled (capped at `phase1_epochs`, with a
warning if the order test still fails), phase 2 with the masks frozen, no L_K and the standard
regularisation. `interactions_()` reports a block of order >= 2 as an interaction only when its
output is not additive in its features (NIT blocks often pair two main effects).
"""

from __future__ import annotations

from pilid.estimators.gated import BLOCK_ATTRIBUTES_DOC, BlockModel
from pilid.estimators.neural import (
    FITTED_ATTRIBUTES_DOC,
    PENALTY_CONSTRAINTS,
)
from pilid.models.outputs import ClassifierOutput, RegressorOutput
from pilid.nn.gates import nit_order_penalty

__all__ = ["NITClassifier", "NITRegressor"]


class NITBase(BlockModel):
    """NIT's hyper-parameters, shared by `NITRegressor` and `NITClassifier`."""

    _has_additive = False
    _parameter_constraints = {**BlockModel._parameter_constraints, **PENALTY_CONSTRAINTS}

    def __init__(
        self,
        n_blocks=20,
        max_order=3,
        block_layers=(16, 8),
        lambda0=0.3,
        gate_lr_scale=10.0,
        warmup_epochs=10,
        phase1_epochs=400,
        mask_patience=10,
        init_prob=0.9,
        init_scale=1.0,
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
    ):
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

    _order_penalty = staticmethod(nit_order_penalty)


_NIT_DOC = (
    """

    The same gated MLP blocks as PiLiB with no piecewise-linear component, so the blocks carry
    the main effects as well as the interactions; Tsang et al.'s L_K penalty, PiLiB's schedule.
    Defaults work out of the box on a few thousand rows. NIT has no piecewise-linear part to
    constrain, so it takes no ``monotone_constraints`` (PiLiD and PiLiB do).

    Parameters
    ----------
    n_blocks, max_order, block_layers, lambda0, gate_lr_scale, warmup_epochs, phase1_epochs, \
mask_patience, init_prob, init_scale
        The blocks and their gates, as in `pilid.estimators.pilib.PiLiBRegressor` (``lambda0`` is
        Tsang's lambda).
    reg, lam
        The penalty lam * Omega on every parameter but the gates (defaults "l2", 1e-5).
    lr, epochs, batch_size, optimizer, patience, val_fraction, random_state, device, \
categorical_features, verbose
        As in `pilid.estimators.pilid.PiLiDRegressor`.
    n_bags : int, default=1
        1: one model; k > 1: a bag of k bootstrap members, as PiLiB's.

    Attributes
    ----------"""
    + BLOCK_ATTRIBUTES_DOC
    + FITTED_ATTRIBUTES_DOC
)


class NITRegressor(RegressorOutput, NITBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = "NIT (Tsang et al., NeurIPS 2018) for regression: gated MLP blocks." + _NIT_DOC


class NITClassifier(ClassifierOutput, NITBase):  # noqa: D101 (its __doc__ is assigned)
    __doc__ = "NIT (Tsang et al., NeurIPS 2018) for binary classification." + _NIT_DOC
