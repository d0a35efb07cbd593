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
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch import nn

from pilid.errors import PilidError
from pilid.nn.mlp import has_shared_weights, share_training
from pilid.streams import STREAM_BATCHES, trial_generator
from pilid.train.compaction import all_trials, keep_members, members_separable
from pilid.train.ensemble_data import EnsembleData
from pilid.train.losses import l1_penalty, task_loss

#: A batch whose sample weights are all 0 gets loss 0 (no division by 0).
_TINY = 1e-30
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
    leaves the phase with the weights it entered with (beyond the paper: PiLiD's
    ``schedule="additive_first"``). `lr_scale` multiplies the learning rate in the phase, per
    trial (beyond the paper: PiLiD's ``lr_decay``): the optimiser's step is taken as usual and
    its change of each parameter scaled, which is the step at lr * lr_scale exactly for Adam
    and for SGD with momentum, whose state does not depend on the learning rate.
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
    lam: float = 0.0
    regularized: Callable[[str], bool] = lambda name: True
    extra_loss: Callable | None = None
    verbose: bool = False
    desc: str = "train"
    #: K > 1: the trials form softmax groups of K classes (`pilid.train.losses.task_loss`).
    classes: int = 1
    #: Weight of the shapes' second-difference roughness added to every step's loss (beyond
    #: the paper; `pilid.nn.additive.AdditiveEnsemble.roughness`) and its (T, P - 1) mask of
    #: neighbouring pieces; 0 or None: no such term.
    smoothness: float = 0.0
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
    wd = 2.0 * cfg.lam if cfg.reg == "l2" else 0.0  # grad of lam * p^2 is 2 lam p
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


def _where_trials(mask: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per trial (leading dim): a where mask else b."""
    return torch.where(mask.view(-1, *([1] * (a.dim() - 1))), a, b)


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
        return (total / weights.double().sum(1).clamp_min(_TINY)).to(torch.float32)
    return (total / max(n, 1)).to(torch.float32)


def train_ensemble(
    model: nn.Module,
    data: EnsembleData,
    phases: Sequence[Phase],
    cfg: TrainConfig,
    seeds: Sequence[int],
) -> TrainResult:
    """Train all T trials of `model` on `data` following `phases` (see module docstring)."""
    T, n = data.shape
    m = data.x.shape[-1]
    device = data.x.device
    phases = [p for p in phases if p.max_epochs > 0]
    K = len(phases)
    if K == 0 or n == 0:
        z = np.zeros((0, T))
        return TrainResult(z, z, z.astype(int), np.zeros(0), np.zeros(T, int), np.zeros(T, int))
    has_val = data.n_val > 0 and cfg.patience is not None
    es_host = [p.early_stopping and has_val for p in phases]
    es_flags = torch.tensor(es_host, device=device)
    # per phase: does it enter with the phase before's best validation loss as the bar to beat?
    keep_flags = torch.tensor(
        [k > 0 and p.keep_best and es_host[k] and es_host[k - 1] for k, p in enumerate(phases)],
        device=device,
    )
    caps = torch.tensor([p.max_epochs for p in phases], device=device)
    patience = cfg.patience if cfg.patience is not None else 0
    bs = max(1, min(int(cfg.batch_size), n))

    named = list(model.named_parameters())
    params = [p for _, p in named]
    reg = [p for name, p in named if cfg.lam > 0 and cfg.regularized(name)]
    reg_ids = {id(p) for p in reg}
    free = [p for p in params if id(p) not in reg_ids]
    opt = _make_optimizer(reg, free, cfg, device)
    l1_params = reg if (cfg.reg == "l1" and cfg.lam > 0) else []
    smooth = cfg.smoothness > 0 and cfg.neighbours is not None and model.additive is not None
    piece_scaled = []  # (parameter, its step scale): `piece_step_scales`
    if cfg.piece_steps and getattr(model, "additive", None) is not None:
        scales = piece_step_scales(model.additive)
        piece_scaled = [(getattr(model.additive, k), v.detach()) for k, v in scales.items()]

    frozen_prefixes = sorted({f for p in phases for f in p.frozen})
    frozen_params = {
        name: p for name, p in named if any(name.startswith(f) for f in frozen_prefixes)
    }
    snapshots = {name: p.detach().clone() for name, p in frozen_params.items()}
    track_best = any(es_host)
    best_state = [p.detach().clone() for p in params] if track_best else []
    final_state = [p.detach().clone() for p in params]

    phase = torch.zeros(T, dtype=torch.long, device=device)
    done = torch.zeros(T, dtype=torch.bool, device=device)
    ep_in_phase = torch.zeros(T, dtype=torch.long, device=device)
    best = torch.full((T,), math.inf, device=device)
    bad = torch.zeros(T, dtype=torch.long, device=device)
    best_epoch = torch.zeros(T, dtype=torch.long, device=device)
    n_epochs = torch.zeros(T, dtype=torch.long, device=device)
    phase_host = np.zeros(T, dtype=np.int64)
    done_host = np.zeros(T, dtype=bool)

    gens = [trial_generator(s, STREAM_BATCHES) for s in seeds]
    shared = has_shared_weights(model)  # a bag's members share the MLP (`EnsembleMLP`)

    def flatten(data: EnsembleData, T: int):
        """The tensors the mini-batches index, and where trial t's rows start in them."""
        w_flat = None if data.w is None else data.w.reshape(T * n)
        phi_flat, table_rows = None, None
        if data.rows is None:  # stacked: trial t's row i is row t * n + i of the flat tensors
            x_flat = data.x.reshape(T * n, m)
            y_flat = data.y.reshape(T * n)
            if data.phi is not None:
                phi_flat = [p.reshape(T * n, *p.shape[2:]) for p in data.phi]
        else:  # shared: trial t's row i is row rows[t, i] of the table
            x_flat, y_flat = data.x, data.y
            if data.phi is not None:
                phi_flat = list(data.phi)
            table_rows = data.rows.reshape(T * n)
        base = (torch.arange(T, device=device) * n).unsqueeze(1)
        return x_flat, y_flat, w_flat, phi_flat, table_rows, base

    x_flat, y_flat, w_flat, phi_flat, table_rows, base = flatten(data, T)
    # Trials that have finished leave the computation (`keep_members`) once a quarter of
    # those still in it have: their weights are kept in `final_state`, the others train on
    # alike. `alive` maps the trials still in it to the ensemble's (None: all are).
    compactable = T > 1 and members_separable(model, phases, cfg, T)
    T_all, alive, whole = T, None, None
    epochs_all = np.zeros(T, dtype=np.int64)
    best_epoch_all = np.zeros(T, dtype=np.int64)

    hist_train, hist_val, hist_phase, hist_sec = [], [], [], []
    total_epochs = sum(p.max_epochs for p in phases)
    bar = None
    if cfg.verbose:
        from tqdm.auto import tqdm

        bar = tqdm(total=total_epochs, desc=cfg.desc, leave=False)

    per_epoch = n if cfg.epoch_rows is None else max(1, min(n, int(cfg.epoch_rows)))
    cursor = n  # where this pass has got to (n: draw a new pass)
    model.train()
    tick = time.perf_counter()
    for epoch in range(total_epochs):
        # Per-epoch settings, known on the host after last epoch's single sync.
        pen_host = np.array([phases[k].penalty for k in phase_host], dtype=np.float32)
        pen_mask = torch.as_tensor(pen_host, device=device) if pen_host.any() else None
        lr_host = np.array([phases[k].lr_scale for k in phase_host], dtype=np.float32)
        lr_mask = None if np.all(lr_host == 1.0) else torch.as_tensor(lr_host, device=device)
        freeze_masks = {}
        for name in frozen_params:
            fm = np.array([any(name.startswith(f) for f in phases[k].frozen) for k in phase_host])
            if fm.any():
                freeze_masks[name] = torch.as_tensor(fm, device=device)

        if shared:  # a shared MLP learns from the members still training alone (this epoch's)
            share_training(model, ~done)
        if cursor >= n:  # a new pass: each trial's permutation of its rows
            perm = torch.stack([torch.randperm(n, generator=g) for g in gens]).to(device)
            cursor = 0
        part = perm[:, cursor : cursor + per_epoch]  # this epoch's rows of the pass
        cursor += per_epoch
        flat = (part + base).reshape(T, -1)  # positions in the (T * n) per-trial rows
        rows = flat if data.rows is None else table_rows[flat]  # rows of x, y and phi
        acc = torch.zeros(T, device=device)
        steps = 0
        for s in range(0, flat.shape[1], bs):
            pos = flat[:, s : s + bs].reshape(-1)
            idx = rows[:, s : s + bs].reshape(-1)
            b = idx.numel() // T
            xb = x_flat.index_select(0, idx).view(T, b, m)
            yb = y_flat.index_select(0, idx).view(T, b)
            phib = None
            if phi_flat is not None:
                phib = tuple(p.index_select(0, idx).view(T, b, *p.shape[1:]) for p in phi_flat)
            out = model(xb, phib)
            if w_flat is None:
                task = task_loss(out, yb, cfg.task, cfg.classes).mean(1)
            else:  # sample weights: the batch's weighted mean sum(w l) / sum(w)
                wb = w_flat.index_select(0, pos).view(T, b)
                lb = task_loss(out, yb, cfg.task, cfg.classes)
                task = (lb * wb).sum(1) / wb.sum(1).clamp_min(_TINY)
            loss = task if cfg.classes == 1 else task / cfg.classes  # a group's loss once
            if l1_params:
                loss = loss + cfg.lam * l1_penalty(l1_params)
            if smooth:
                loss = loss + cfg.smoothness * model.additive.roughness(cfg.neighbours)
            extra = None
            if pen_mask is not None and cfg.extra_loss is not None:
                extra = cfg.extra_loss(model, xb)  # None: the estimator adds no penalty
            if extra is not None:
                loss = loss + extra * pen_mask
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            if lr_mask is not None:
                before = [p.detach().clone() for p in params]
            if piece_scaled:
                piece_before = [p.detach().clone() for p, _ in piece_scaled]
            opt.step()
            if lr_mask is not None:  # the step at lr * lr_scale, per trial
                with torch.no_grad():
                    for p, old in zip(params, before):
                        p.sub_(old).mul_(lr_mask.view(-1, *([1] * (p.dim() - 1)))).add_(old)
            if piece_scaled:  # the step at lr / pieces, element by element
                with torch.no_grad():
                    for (p, scale), old in zip(piece_scaled, piece_before):
                        p.sub_(old).mul_(scale).add_(old)
            if freeze_masks:
                with torch.no_grad():
                    for name, fm in freeze_masks.items():
                        p = frozen_params[name]
                        p.copy_(_where_trials(fm, snapshots[name], p))
            acc += task.detach()
            steps += 1
        train_loss = acc / steps

        epoch_phase = np.minimum(phase_host, K - 1)  # each trial's phase in this epoch
        # ---- end of epoch: validation and per-trial schedule, all on the device ----
        with torch.no_grad():
            if has_val:
                x_val, phi_val, y_val, w_val, val_rows = data.validation()
                val = evaluate_loss(
                    model,
                    x_val,
                    phi_val,
                    y_val,
                    cfg.task,
                    classes=cfg.classes,
                    weights=w_val,
                    rows=val_rows,
                )
            else:
                val = train_loss.clone()
            active = ~done
            es_t = es_flags[phase]
            cond = torch.zeros(T, dtype=torch.bool, device=device)
            for k, ph in enumerate(phases):
                if ph.until is not None and np.any((phase_host == k) & ~done_host):
                    cond |= (phase == k) & ph.until(model).to(device=device, dtype=torch.bool)
            val_ok = torch.nan_to_num(val, nan=math.inf)
            improved = active & es_t & (val_ok < best)
            if track_best:
                for i, p in enumerate(params):
                    best_state[i].copy_(_where_trials(improved, p, best_state[i]))
            best = torch.where(improved, val_ok, best)
            best_epoch = torch.where(improved, epoch, best_epoch)
            bad = torch.where(improved, 0, bad + 1)
            ep_in_phase = ep_in_phase + active.long()
            leave = active & (
                (ep_in_phase >= caps[phase]) | cond | (es_t & (bad >= max(patience, 1)))
            )
            if track_best:
                restore = leave & es_t & torch.isfinite(best)
                for i, p in enumerate(params):
                    p.copy_(_where_trials(restore, best_state[i], p))
            last = phase == K - 1
            finishing = leave & last
            for i, p in enumerate(params):
                if alive is None:
                    final_state[i].copy_(_where_trials(finishing, p, final_state[i]))
                else:
                    kept = final_state[i][alive]
                    final_state[i][alive] = _where_trials(finishing, p, kept)
            n_epochs = torch.where(finishing, epoch + 1, n_epochs)
            done = done | finishing
            advancing = leave & ~last
            phase = phase + advancing.long()
            ep_in_phase = torch.where(leave, 0, ep_in_phase)
            best = torch.where(advancing & ~keep_flags[phase], math.inf, best)
            bad = torch.where(advancing, 0, bad)
            for name, p in frozen_params.items():
                snapshots[name].copy_(_where_trials(advancing, p, snapshots[name]))

            packed = torch.cat(
                [phase.float(), done.float(), train_loss.float(), val.float()]
            ).cpu()  # the one host sync of the epoch
        packed = packed.numpy()
        now = time.perf_counter()
        hist_sec.append(now - tick)
        tick = now
        phase_host = packed[:T].astype(np.int64)
        done_host = packed[T : 2 * T] > 0.5
        hist_train.append(all_trials(packed[2 * T : 3 * T], alive, T_all, np.nan))
        hist_val.append(all_trials(packed[3 * T :], alive, T_all, np.nan))
        hist_phase.append(all_trials(epoch_phase, alive, T_all, K - 1))
        if bar is not None:
            bar.update(1)
            bar.set_postfix(
                train=f"{np.nanmean(hist_train[-1]):.4f}",
                val=f"{np.nanmean(hist_val[-1]):.4f}",
                active=int((~done_host).sum()),
            )
        if done_host.all():
            break
        if compactable and 4 * int(done_host.sum()) >= T:  # a quarter finished: they leave
            # the last step's graph goes first: autograd keeps each parameter's gradient
            # accumulator (and its shape) while a graph that reaches it is alive
            out = task = loss = lb = extra = None  # noqa: F841
            keep = torch.as_tensor(np.flatnonzero(~done_host), device=device)
            index = np.arange(T_all) if alive is None else alive.cpu().numpy()
            gone = index[done_host]
            epochs_all[gone] = n_epochs.cpu().numpy()[done_host]
            best_epoch_all[gone] = best_epoch.cpu().numpy()[done_host]
            if whole is None:
                whole = keep_members(model, opt, None, T)  # the full buffers, to restore
            keep_members(model, opt, keep, T)
            alive = torch.as_tensor(index[~done_host], device=device)
            T = int(len(keep))
            phase, done, ep_in_phase = phase[keep], done[keep], ep_in_phase[keep]
            best, bad, best_epoch, n_epochs = (
                best[keep],
                bad[keep],
                best_epoch[keep],
                n_epochs[keep],
            )
            phase_host, done_host = phase_host[~done_host], done_host[~done_host]
            best_state = [b[keep] for b in best_state]
            gens = [gens[k] for k in keep.tolist()]
            perm = perm[keep]
            data = data.members(keep)
            x_flat, y_flat, w_flat, phi_flat, table_rows, base = flatten(data, T)
            if smooth:
                cfg = replace(cfg, neighbours=cfg.neighbours[keep])
            piece_scaled = [(p, scale[keep]) for p, scale in piece_scaled]
    if bar is not None:
        bar.close()

    with torch.no_grad():
        if alive is not None:  # every trial back in the ensemble, at its final weights
            epochs_all[alive.cpu().numpy()] = n_epochs.cpu().numpy()
            best_epoch_all[alive.cpu().numpy()] = best_epoch.cpu().numpy()
            n_epochs = torch.as_tensor(epochs_all)
            best_epoch = torch.as_tensor(best_epoch_all)
            keep_members(model, opt, None, T, restore=whole)
            for i, p in enumerate(params):
                p.data = final_state[i]
        for i, p in enumerate(params):
            p.copy_(final_state[i])
    model.eval()
    return TrainResult(
        train_loss=np.array(hist_train),
        val_loss=np.array(hist_val),
        phase=np.array(hist_phase),
        epoch_seconds=np.array(hist_sec),
        best_epoch=best_epoch.cpu().numpy(),
        n_epochs=n_epochs.cpu().numpy(),
        phase_names=[p.name for p in phases],
    )
