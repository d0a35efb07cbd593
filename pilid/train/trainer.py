"""Training loop for T trials at once (every parameter has a leading trial dimension).

Algorithm 1, step 3 of Guo et al., IJCAI 2020 ("standard mini-batch stochastic gradient
optimisation") for an ensemble of T independent trials: the loss is the sum of the trials' own
losses (Eq. 11: mean task loss of the mini-batch + lam * Omega; with sample weights the
weighted mean sum(w l) / sum(w) over the batch's rows, and the validation loss likewise
weighted), so every trial's gradient is the one it would get alone, and the optimiser (Adam,
fused where supported) works element by element, so every trial's update is the one it would
make alone (``TrainConfig.piece_steps`` scales the additive part's steps element by element
too, `piece_step_scales`). Each trial draws its own mini-batch
permutation from its own generator, and follows the training schedule (`Phase`s, early stopping
on its own validation loss with best weights restored) on its own; a trial that has finished keeps
its final weights frozen while the others go on. Hence a trial trained in a batch equals (within
float tolerance) the same seed trained alone.

The step loop never reads a value back to the host; the trainer syncs once per epoch (the
per-trial losses and phase bookkeeping, for the schedule and the progress bar). Once a quarter
of the trials still training have finished, they leave the computation
(`pilid.train.compaction`): the others go on as they would have (up to float rounding), at the
cost of fewer trials.

`train_ensemble` reads as its steps: the set-up (`_set_up`), then per epoch the trials'
settings, the epoch's rows (`_epoch_rows`), its mini-batch steps, the validation (`_validate`),
the stopping decision, the phase change and the host sync (`pilid.train.steps`), the
compaction of finished trials (`_compact`), and the finish (`_finish`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch import nn

from pilid.errors import PilidError
from pilid.streams import STREAM_BATCHES, trial_generator
from pilid.train.compaction import keep_members, members_separable
from pilid.train.ensemble_data import EnsembleData
from pilid.train.losses import Regularized, task_loss
from pilid.train.steps import (
    TINY,
    History,
    Plan,
    Run,
    Trials,
    change_phase,
    epoch_settings,
    flatten,
    make_plan,
    start_history,
    start_trials,
    stopping_decision,
    sync,
    train_epoch,
    until_reached,
)

#: Optimisers of the mini-batch training (Algorithm 1, step 3); the paper uses Adam.
OPTIMIZERS = ("adam", "sgd")


@dataclass
class Phase:
    """One stage of the training schedule, followed by each trial independently.

    A trial leaves the phase after `max_epochs` epochs in it, when `until(model)` (a (T,) bool
    tensor, checked after each epoch) is True for it, or when early stopping (validation loss,
    `patience` epochs without improvement) ends it; a phase with early stopping restores the
    trial's best weights of that phase on exit. `penalty` adds the estimator's extra loss term;
    parameters whose names start with a prefix in `frozen` are held at their values on entry.
    `keep_best` (with early stopping in this phase and the one before): the best validation
    loss of the phase before stays the one to beat, so the phase keeps a trial's weights only
    where an epoch beats the weights it started from, and a trial whose every epoch is worse
    leaves the phase with the weights it entered with (beyond the paper: a schedule of several
    phases on one part and then both). `lr_scale` multiplies the learning rate in the phase,
    per trial (beyond the paper: a decaying rate over phases): the optimiser's step is taken as
    usual and its change of each parameter scaled, which is the step at lr * lr_scale exactly
    for Adam and for SGD with momentum, whose state does not depend on the learning rate.
    """

    name: str
    max_epochs: int
    penalty: bool = False
    frozen: tuple[str, ...] = ()
    early_stopping: bool = True
    until: Callable[[nn.Module], torch.Tensor] | None = None
    keep_best: bool = False
    lr_scale: float = 1.0


@dataclass
class TrainConfig:
    """The training settings of one ensemble: task, optimizer, penalty, progress."""

    task: str
    lr: float = 0.005
    optimizer: str = "adam"
    batch_size: int = 256
    patience: int | None = 10
    reg: str = "l2"
    #: Eq. (11)'s lambda: one weight, or one per trial (candidates of a choice trained as one
    #: ensemble, `pilid.models.fitting`): Omega then enters each trial's loss at its weight.
    lam: float | tuple[float, ...] = 0.0
    regularized: Callable[[str], bool] = Regularized()
    extra_loss: Callable | None = None
    verbose: bool = False
    desc: str = "train"
    #: K > 1: the trials form softmax groups of K classes (`pilid.train.losses.task_loss`).
    classes: int = 1
    #: Weight of the shapes' second-difference roughness added to every step's loss (beyond
    #: the paper; `pilid.nn.additive.AdditiveEnsemble.roughness`) and its (T, P - 1) mask of
    #: neighbouring pieces; 0 or None: no such term. One weight per trial (a tuple) is folded
    #: into ``neighbours`` by `pilid.train.batched.fit_ensemble` (the weight then 1).
    smoothness: float | tuple[float, ...] = 0.0
    neighbours: torch.Tensor | None = None
    #: Scale the additive part's steps by its pieces (`piece_step_scales`; beyond the paper):
    #: set for the trials with a roughness penalty whose training with Algorithm 1's steps
    #: diverged (`pilid.train.batched`): there the pieces are a resolution, and one Adam step
    #: on each of many pieces throws the start off. False: Algorithm 1's steps.
    piece_steps: bool = False
    #: Rows of an epoch (beyond the paper): None, or at least the training rows: an epoch is a
    #: pass over them (Algorithm 1); fewer: on a larger table an epoch is the next
    #: `epoch_rows` rows of the current pass (its permutation), so the validation loss that
    #: early stopping reads comes as often in rows, whatever the table's size, and a table
    #: larger than needed stops training before a full pass.
    epoch_rows: int | None = None


@dataclass
class TrainResult:
    """Per-epoch history (epochs, T) and per-trial summaries (T,)."""

    train_loss: np.ndarray
    val_loss: np.ndarray
    phase: np.ndarray
    epoch_seconds: np.ndarray
    best_epoch: np.ndarray
    n_epochs: np.ndarray
    phase_names: list[str] = field(default_factory=list)


def _make_optimizer(params_reg, params_free, cfg: TrainConfig, device: torch.device):
    # grad of lam * p^2 is 2 lam p; a weight per trial enters the loss instead (`Run.lam_trials`)
    wd = 2.0 * cfg.lam if cfg.reg == "l2" and not isinstance(cfg.lam, tuple) else 0.0
    groups = [
        g
        for g in (
            {"params": params_reg, "weight_decay": wd},
            {"params": params_free, "weight_decay": 0.0},
        )
        if g["params"]
    ]
    fused = device.type in ("cpu", "cuda")
    if cfg.optimizer == "adam":
        try:
            return torch.optim.Adam(groups, lr=cfg.lr, fused=fused)
        except (RuntimeError, TypeError):
            return torch.optim.Adam(groups, lr=cfg.lr, foreach=True)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=0.9)
    raise PilidError(f"optimizer={cfg.optimizer!r} is unknown; use adam (the paper's) or sgd")


def piece_step_scales(additive) -> dict[str, torch.Tensor]:
    """Per-element step scales of the additive part (Eq. 10) under ``TrainConfig.piece_steps``.

    Adam moves every parameter by about ``lr`` per step whatever its gradient's size (its first
    steps are the gradient's signs), and Phi's columns are cumulative (Definition 2): a row on
    piece g of feature j has phi_k = 1 for every piece k < g, so moving each w_k by ``lr``
    moves u_j there by up to ``lr`` times the feature's pieces, and the per-piece biases b_k,
    whose gradients are all alike, move the output by ``lr`` times the trial's pieces. From
    the least-squares start (Algorithm 1) a model of many features with many pieces each takes
    steps of several standard deviations of the target and ends an epoch far worse than it
    started (`pilid.train.divergence`). Scaling w_k's step by 1 / (pieces of its feature) and
    b_k's by 1 / (pieces of the trial) moves each shape per step as far as one linear piece
    would and the constant by about ``lr``, whatever the number of pieces. Returns
    {"w": (T, P), "b": (T, 1)}.
    """
    mask = additive.mask
    counts = torch.zeros(additive.omega.shape, dtype=mask.dtype, device=mask.device)
    counts = counts.scatter_add(1, additive.feature, mask)  # pieces per feature (T, m)
    per_feature = torch.gather(counts, 1, additive.feature).clamp_min(1.0)
    return {"w": 1.0 / per_feature, "b": 1.0 / mask.sum(1, keepdim=True).clamp_min(1.0)}


@torch.no_grad()
def evaluate_loss(
    model, x, phi, y, task: str, chunk: int = 4096, classes: int = 1, weights=None, rows=None
) -> torch.Tensor:
    """Mean task loss per trial (T,) over rows (T, n, ...), in eval mode, chunked; with
    `weights` (T, n) the weighted mean sum(w l) / sum(w). With `rows` (T, n) the tensors hold
    every row once (`EnsembleData`'s shared layout) and trial t reads rows ``rows[t]``."""
    was = model.training
    model.eval()
    T, n = (x.shape[0], x.shape[1]) if rows is None else tuple(rows.shape)
    total = torch.zeros(T, device=x.device, dtype=torch.float64)
    for s in range(0, n, chunk):
        if rows is None:
            xs, ys = x[:, s : s + chunk], y[:, s : s + chunk]
            part = None if phi is None else tuple(p[:, s : s + chunk] for p in phi)
        else:
            r = rows[:, s : s + chunk]
            xs, ys = x[r], y[r]
            part = None if phi is None else tuple(p[r] for p in phi)
        out = model(xs, part)
        loss = task_loss(out, ys, task, classes)
        if weights is not None:
            loss = loss * weights[:, s : s + chunk]
        total += loss.sum(1).double()
    model.train(was)
    if weights is not None:
        return (total / weights.double().sum(1).clamp_min(TINY)).to(torch.float32)
    return (total / max(n, 1)).to(torch.float32)


def _set_up(model: nn.Module, data: EnsembleData, phases: list[Phase], cfg: TrainConfig) -> Run:
    """The `Run` of Algorithm 1, step 3: the optimiser over every parameter (L2 as weight decay
    on the regularised ones, `_make_optimizer`), the L1-penalised parameters, the additive
    part's piece step scales (``TrainConfig.piece_steps``), the parameters some phase freezes,
    the batch and epoch sizes, and whether finished trials can leave the computation."""
    T, n = data.shape
    named = list(model.named_parameters())
    params = [p for _, p in named]
    per_trial = isinstance(cfg.lam, tuple)  # one weight per trial: in the loss (`batch_loss`)
    lam_any = max(cfg.lam) > 0 if per_trial else cfg.lam > 0
    reg = [p for name, p in named if lam_any and cfg.regularized(name)]
    reg_ids = {id(p) for p in reg}
    free = [p for p in params if id(p) not in reg_ids]
    piece_scaled = []  # (parameter, its step scale): `piece_step_scales`
    if cfg.piece_steps and getattr(model, "additive", None) is not None:
        scales = piece_step_scales(model.additive)
        piece_scaled = [(getattr(model.additive, k), v.detach()) for k, v in scales.items()]
    frozen = sorted({f for p in phases for f in p.frozen})
    return Run(
        model=model,
        data=data,
        cfg=cfg,
        opt=_make_optimizer(reg, free, cfg, data.x.device),
        params=params,
        l1_params=reg if (cfg.reg == "l1" and lam_any) else [],
        l2_params=reg if (cfg.reg == "l2" and per_trial and lam_any) else [],
        lam_trials=torch.tensor(cfg.lam, device=data.x.device) if per_trial else None,
        smooth=cfg.smoothness > 0 and cfg.neighbours is not None and model.additive is not None,
        piece_scaled=piece_scaled,
        frozen_params={name: p for name, p in named if any(name.startswith(f) for f in frozen)},
        batch_size=max(1, min(int(cfg.batch_size), n)),
        per_epoch=n if cfg.epoch_rows is None else max(1, min(n, int(cfg.epoch_rows))),
        compactable=T > 1 and members_separable(model, phases, cfg, T),
        flat=flatten(data),
    )


def _epoch_rows(run: Run, trials: Trials) -> tuple[torch.Tensor, torch.Tensor]:
    """This epoch's rows of each trial (Algorithm 1: a pass over the rows in a random order;
    ``TrainConfig.epoch_rows``: the next rows of the pass): a new pass drawn from each trial's
    generator (`pilid.streams.STREAM_BATCHES`) once the last is used up. Returns the rows'
    positions among the trials' rows and the rows of the tensors they read, both (T, r)."""
    n = run.data.shape[1]
    if trials.cursor >= n:  # a new pass: each trial's permutation of its rows
        perms = [torch.randperm(n, generator=g) for g in trials.gens]
        trials.perm = torch.stack(perms).to(run.device)
        trials.cursor = 0
    part = trials.perm[:, trials.cursor : trials.cursor + run.per_epoch]
    trials.cursor += run.per_epoch
    flat = (part + run.flat.base).reshape(trials.T, -1)  # positions in the (T * n) trials' rows
    rows = flat if run.data.rows is None else run.flat.table_rows[flat]  # rows of x, y and phi
    return flat, rows


def _validate(run: Run, plan: Plan, train_loss: torch.Tensor) -> torch.Tensor:
    """Each trial's loss on its validation rows (`evaluate_loss`; sample-weighted where the
    rows have weights), which early stopping reads (Algorithm 1, step 3); without validation
    rows, the epoch's training loss."""
    if not plan.has_val:
        return train_loss.clone()
    x_val, phi_val, y_val, w_val, val_rows = run.data.validation()
    cfg = run.cfg
    return evaluate_loss(
        run.model,
        x_val,
        phi_val,
        y_val,
        cfg.task,
        classes=cfg.classes,
        weights=w_val,
        rows=val_rows,
    )


def _compact(run: Run, trials: Trials) -> None:
    """The finished trials leave the computation (`keep_members`; `pilid.train.compaction`):
    their epoch counts are kept aside (their weights are in ``trials.final_state``), and the
    model, the optimiser, the data, the trials' state and the per-trial settings keep the
    trials still training alone."""
    done_host, T = trials.done_host, trials.T
    keep = torch.as_tensor(np.flatnonzero(~done_host), device=run.device)
    index = np.arange(trials.T_all) if trials.alive is None else trials.alive.cpu().numpy()
    gone = index[done_host]
    trials.epochs_all[gone] = trials.n_epochs.cpu().numpy()[done_host]
    trials.best_epoch_all[gone] = trials.best_epoch.cpu().numpy()[done_host]
    if run.whole is None:
        run.whole = keep_members(run.model, run.opt, None, T)  # the full buffers, to restore
    keep_members(run.model, run.opt, keep, T)
    trials.alive = torch.as_tensor(index[~done_host], device=run.device)
    trials.keep(keep)
    run.data = run.data.members(keep)
    run.flat = flatten(run.data)
    if run.smooth:
        run.cfg = replace(run.cfg, neighbours=run.cfg.neighbours[keep])
    if run.lam_trials is not None:
        run.lam_trials = run.lam_trials[keep]
    run.piece_scaled = [(p, scale[keep]) for p, scale in run.piece_scaled]


def _finish(run: Run, trials: Trials, history: History, plan: Plan) -> TrainResult:
    """Every trial back in the ensemble at its final weights (the trials that left the
    computation too), the model in eval mode, and the `TrainResult`."""
    history.close()
    n_epochs, best_epoch = trials.n_epochs, trials.best_epoch
    with torch.no_grad():
        if trials.alive is not None:  # every trial back in the ensemble, at its final weights
            alive = trials.alive.cpu().numpy()
            trials.epochs_all[alive] = n_epochs.cpu().numpy()
            trials.best_epoch_all[alive] = best_epoch.cpu().numpy()
            n_epochs = torch.as_tensor(trials.epochs_all)
            best_epoch = torch.as_tensor(trials.best_epoch_all)
            keep_members(run.model, run.opt, None, trials.T, restore=run.whole)
            for i, p in enumerate(run.params):
                p.data = trials.final_state[i]
        for i, p in enumerate(run.params):
            p.copy_(trials.final_state[i])
    run.model.eval()
    return TrainResult(
        train_loss=np.array(history.train),
        val_loss=np.array(history.val),
        phase=np.array(history.phase),
        epoch_seconds=np.array(history.seconds),
        best_epoch=best_epoch.cpu().numpy(),
        n_epochs=n_epochs.cpu().numpy(),
        phase_names=[p.name for p in plan.phases],
    )


def train_ensemble(
    model: nn.Module,
    data: EnsembleData,
    phases: Sequence[Phase],
    cfg: TrainConfig,
    seeds: Sequence[int],
) -> TrainResult:
    """Train all T trials of `model` on `data` following `phases` (see module docstring)."""
    T, n = data.shape
    phases = [p for p in phases if p.max_epochs > 0]
    if not phases or n == 0:
        z = np.zeros((0, T))
        return TrainResult(z, z, z.astype(int), np.zeros(0), np.zeros(T, int), np.zeros(T, int))
    plan = make_plan(phases, data, cfg)
    run = _set_up(model, data, phases, cfg)
    trials = start_trials(run, plan, [trial_generator(s, STREAM_BATCHES) for s in seeds])
    history = start_history(cfg, plan.total_epochs)
    model.train()
    history.tick = time.perf_counter()
    for epoch in range(plan.total_epochs):
        settings = epoch_settings(plan, trials, run)
        train_loss = train_epoch(run, settings, trials, *_epoch_rows(run, trials))
        with torch.no_grad():
            val = _validate(run, plan, train_loss)
            cond = until_reached(plan, trials, model)
            leave = stopping_decision(plan, trials, run.params, val, cond, epoch)
            change_phase(plan, trials, run, leave, epoch)
        sync(plan, trials, history, train_loss, val)
        if trials.done_host.all():
            break
        if run.compactable and 4 * int(trials.done_host.sum()) >= trials.T:
            _compact(run, trials)  # a quarter of those still training finished: they leave
    return _finish(run, trials, history, plan)
