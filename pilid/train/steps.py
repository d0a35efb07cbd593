"""The steps of one epoch of `pilid.train.trainer.train_ensemble`, for T trials at once.

Algorithm 1, step 3 of Guo et al., IJCAI 2020 ("standard mini-batch stochastic gradient
optimisation", stopped early on the validation loss) for an ensemble of T trials, each trial
following the schedule (`pilid.train.trainer.Phase`) on its own. Each epoch the trainer calls:
`epoch_settings` (each trial's penalty, learning-rate scale and frozen parameters in its
phase), `train_epoch` (the epoch's mini-batches: `batch_loss`, then `optimizer_step` with its
per-trial corrections), the validation, `until_reached` and `stopping_decision` (early stopping:
best weights kept, trials that leave their phase, best weights restored), `change_phase`
(finished trials keep their final weights, the others enter their next phase) and `sync` (the
epoch's one read back to the host: the history and the progress bar).

What the steps share: `Plan` (the schedule as the device reads it, fixed for a run), `Run` (the
model, its data, settings and optimiser) and `Trials` (each trial's place in the schedule, on the
device, with the host copies of the last sync). Every step works on all trials at once, with
per-trial masks, and reads nothing back to the host but in `sync`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from pilid.train.compaction import all_trials
from pilid.train.ensemble_data import EnsembleData
from pilid.train.losses import l1_penalty, l2_penalty, task_loss

#: A batch whose sample weights are all 0 gets loss 0 (no division by 0).
TINY = 1e-30


def _where_trials(mask: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per trial (leading dim): a where mask else b."""
    return torch.where(mask.view(-1, *([1] * (a.dim() - 1))), a, b)


@dataclass
class Plan:
    """The schedule of a run as the device reads it: per phase (K,) tensors, fixed for a run.

    `early`: per phase, does early stopping end it (the phase asks for it and there are
    validation rows and a patience); `keep_flags`: per phase, does it enter with the phase
    before's best validation loss as the one to beat (``Phase.keep_best``); `caps`: each
    phase's ``max_epochs``.
    """

    phases: list
    has_val: bool
    early: list[bool]
    es_flags: torch.Tensor
    keep_flags: torch.Tensor
    caps: torch.Tensor
    patience: int

    @property
    def K(self) -> int:
        """Number of phases."""
        return len(self.phases)

    @property
    def track_best(self) -> bool:
        """Does some phase stop early (and so keep its trials' best weights)?"""
        return any(self.early)

    @property
    def total_epochs(self) -> int:
        """Most epochs of a run: every phase to its cap."""
        return sum(p.max_epochs for p in self.phases)


def make_plan(phases: list, data: EnsembleData, cfg) -> Plan:
    """The `Plan` of `phases` (non-empty, each with epochs) on `data` under `cfg`: early
    stopping (Algorithm 1, step 3) only where the phase asks for it and `data` has validation
    rows and `cfg` a patience."""
    device = data.x.device
    has_val = data.n_val > 0 and cfg.patience is not None
    early = [p.early_stopping and has_val for p in phases]
    keep = [k > 0 and p.keep_best and early[k] and early[k - 1] for k, p in enumerate(phases)]
    return Plan(
        phases=phases,
        has_val=has_val,
        early=early,
        es_flags=torch.tensor(early, device=device),
        keep_flags=torch.tensor(keep, device=device),
        caps=torch.tensor([p.max_epochs for p in phases], device=device),
        patience=cfg.patience if cfg.patience is not None else 0,
    )


@dataclass
class Flat:
    """The tensors the mini-batches index, and where trial t's rows start in them (`base`,
    (T, 1)): stacked, trial t's row i is row ``t * n + i`` of x, y and phi; shared, it is row
    ``table_rows[t * n + i]`` of the table. Sample weights `w` are per trial either way."""

    x: torch.Tensor
    y: torch.Tensor
    w: torch.Tensor | None
    phi: list[torch.Tensor] | None
    table_rows: torch.Tensor | None
    base: torch.Tensor

    @property
    def T(self) -> int:
        """Number of trials."""
        return int(self.base.shape[0])


def flatten(data: EnsembleData) -> Flat:
    """The `Flat` tensors of `data` in either layout (`EnsembleData`)."""
    T, n = data.shape
    m = data.x.shape[-1]
    w = None if data.w is None else data.w.reshape(T * n)
    phi, table_rows = None, None
    if data.rows is None:
        x, y = data.x.reshape(T * n, m), data.y.reshape(T * n)
        if data.phi is not None:
            phi = [p.reshape(T * n, *p.shape[2:]) for p in data.phi]
    else:
        x, y = data.x, data.y
        if data.phi is not None:
            phi = list(data.phi)
        table_rows = data.rows.reshape(T * n)
    base = (torch.arange(T, device=data.x.device) * n).unsqueeze(1)
    return Flat(x, y, w, phi, table_rows, base)


@dataclass
class Run:
    """What the steps train: the model, its data and settings (`pilid.train.trainer.TrainConfig`),
    the optimiser and the parameters it steps, and those whose steps are corrected: L1-penalised
    (`l1_params`), scaled by their pieces (`piece_scaled`: (parameter, its step scale)), frozen
    by name in some phase (`frozen_params`). Compaction (`pilid.train.compaction`) narrows it
    to the trials still training; `whole` holds what puts the ensemble back."""

    model: nn.Module
    data: EnsembleData
    cfg: object
    opt: torch.optim.Optimizer
    params: list[nn.Parameter]
    l1_params: list[nn.Parameter]
    smooth: bool
    piece_scaled: list[tuple[nn.Parameter, torch.Tensor]]
    frozen_params: dict[str, nn.Parameter]
    batch_size: int
    per_epoch: int
    compactable: bool
    flat: Flat
    whole: tuple | None = None
    #: Eq. (11)'s lambda per trial (T,) where the trials' weights differ (None: ``cfg.lam``,
    #: L2 as the optimiser's weight decay), and the parameters its L2 term then covers.
    lam_trials: torch.Tensor | None = None
    l2_params: list[nn.Parameter] = field(default_factory=list)

    @property
    def device(self) -> torch.device:
        """The training device."""
        return self.data.x.device


@dataclass
class Trials:
    """Each trial's place in the schedule: (T,) tensors on the device, their host copies of the
    last sync, the weights kept aside (the phase's best, `best_state`; the final weights of
    finished trials, `final_state`, for all the ensemble's trials; the frozen parameters'
    values on entering the phase, `snapshots`), each trial's mini-batch generator and its pass
    (`perm`, `cursor`), and the trials still in the computation (`alive`, None: all) with the
    epoch counts of those that have left."""

    phase: torch.Tensor
    done: torch.Tensor
    ep_in_phase: torch.Tensor
    best: torch.Tensor
    bad: torch.Tensor
    best_epoch: torch.Tensor
    n_epochs: torch.Tensor
    phase_host: np.ndarray
    done_host: np.ndarray
    best_state: list[torch.Tensor]
    final_state: list[torch.Tensor]
    snapshots: dict[str, torch.Tensor]
    gens: list[torch.Generator]
    epochs_all: np.ndarray
    best_epoch_all: np.ndarray
    perm: torch.Tensor | None = None
    cursor: int = 0
    alive: torch.Tensor | None = None

    @property
    def T(self) -> int:
        """Number of trials still in the computation."""
        return int(self.phase.shape[0])

    @property
    def T_all(self) -> int:
        """Number of the ensemble's trials."""
        return len(self.epochs_all)

    def keep(self, keep: torch.Tensor) -> None:
        """Keep trials `keep` (indices, the unfinished ones) alone."""
        for name in ("phase", "done", "ep_in_phase", "best", "bad", "best_epoch", "n_epochs"):
            setattr(self, name, getattr(self, name)[keep])
        going = ~self.done_host
        self.phase_host, self.done_host = self.phase_host[going], self.done_host[going]
        self.best_state = [b[keep] for b in self.best_state]
        self.gens = [self.gens[k] for k in keep.tolist()]
        self.perm = self.perm[keep]


def start_trials(run: Run, plan: Plan, gens: list[torch.Generator]) -> Trials:
    """Every trial at the start of its first phase, its weights as they are, a new pass of its
    rows due (one generator per trial, `gens`)."""
    T, device = len(gens), run.device

    def zeros():
        return torch.zeros(T, dtype=torch.long, device=device)

    params = run.params
    return Trials(
        phase=zeros(),
        done=torch.zeros(T, dtype=torch.bool, device=device),
        ep_in_phase=zeros(),
        best=torch.full((T,), math.inf, device=device),
        bad=zeros(),
        best_epoch=zeros(),
        n_epochs=zeros(),
        phase_host=np.zeros(T, dtype=np.int64),
        done_host=np.zeros(T, dtype=bool),
        best_state=[p.detach().clone() for p in params] if plan.track_best else [],
        final_state=[p.detach().clone() for p in params],
        snapshots={name: p.detach().clone() for name, p in run.frozen_params.items()},
        gens=gens,
        epochs_all=np.zeros(T, dtype=np.int64),
        best_epoch_all=np.zeros(T, dtype=np.int64),
        cursor=run.data.shape[1],
    )


@dataclass
class EpochSettings:
    """Each trial's settings in this epoch's phase: the extra penalty's (T,) 0/1 weights, the
    learning-rate scales (T,) and, per frozen parameter, the (T,) trials that hold it; None or
    empty where no trial has one."""

    pen_mask: torch.Tensor | None
    lr_mask: torch.Tensor | None
    freeze_masks: dict[str, torch.Tensor]


def epoch_settings(plan: Plan, trials: Trials, run: Run) -> EpochSettings:
    """The `EpochSettings` of the trials' phases (known on the host since the last sync):
    ``Phase.penalty``, ``Phase.lr_scale`` (beyond the paper) and ``Phase.frozen``."""
    phases, device, at = plan.phases, run.device, trials.phase_host
    pen_host = np.array([phases[k].penalty for k in at], dtype=np.float32)
    pen_mask = torch.as_tensor(pen_host, device=device) if pen_host.any() else None
    lr_host = np.array([phases[k].lr_scale for k in at], dtype=np.float32)
    lr_mask = None if np.all(lr_host == 1.0) else torch.as_tensor(lr_host, device=device)
    freeze_masks = {}
    for name in run.frozen_params:
        fm = np.array([any(name.startswith(f) for f in phases[k].frozen) for k in at])
        if fm.any():
            freeze_masks[name] = torch.as_tensor(fm, device=device)
    return EpochSettings(pen_mask, lr_mask, freeze_masks)


def batch_loss(run: Run, settings: EpochSettings, pos: torch.Tensor, idx: torch.Tensor):
    """Each trial's loss on one mini-batch (Eq. 11): its mean task loss (with sample weights
    the weighted mean sum(w l) / sum(w); a softmax group's once), plus the L1 penalty, the
    shapes' roughness (beyond the paper) and the phase's extra penalty where they apply.
    `pos`: the rows' positions among the trials' rows, `idx`: the rows of the tensors
    (flattened (T * b,)). Returns (task loss, loss), both (T,)."""
    cfg, flat, model = run.cfg, run.flat, run.model
    T, b = flat.T, idx.numel() // flat.T
    xb = flat.x.index_select(0, idx).view(T, b, flat.x.shape[-1])
    yb = flat.y.index_select(0, idx).view(T, b)
    phib = None
    if flat.phi is not None:
        phib = tuple(p.index_select(0, idx).view(T, b, *p.shape[1:]) for p in flat.phi)
    out = model(xb, phib)
    if flat.w is None:
        task = task_loss(out, yb, cfg.task, cfg.classes).mean(1)
    else:  # sample weights: the batch's weighted mean sum(w l) / sum(w)
        wb = flat.w.index_select(0, pos).view(T, b)
        lb = task_loss(out, yb, cfg.task, cfg.classes)
        task = (lb * wb).sum(1) / wb.sum(1).clamp_min(TINY)
    loss = task if cfg.classes == 1 else task / cfg.classes  # a group's loss once
    lam = cfg.lam if run.lam_trials is None else run.lam_trials
    if run.l1_params:
        loss = loss + lam * l1_penalty(run.l1_params)
    if run.l2_params:  # a weight per trial: lam_t * sum p^2, the weight decay's gradient
        loss = loss + lam * l2_penalty(run.l2_params)
    if run.smooth:
        loss = loss + cfg.smoothness * model.additive.roughness(cfg.neighbours)
    extra = None
    if settings.pen_mask is not None and cfg.extra_loss is not None:
        extra = cfg.extra_loss(model, xb)  # None: the estimator adds no penalty
    if extra is not None:
        loss = loss + extra * settings.pen_mask
    return task, loss


def optimizer_step(run: Run, settings: EpochSettings, trials: Trials, loss: torch.Tensor):
    """One step of the optimiser on the sum of the trials' losses (each trial's gradient its
    own), then per trial: its change scaled by the phase's learning-rate scale (the step at
    lr * lr_scale for Adam and SGD with momentum), the additive part's change scaled by its
    pieces (``TrainConfig.piece_steps``; both beyond the paper), and frozen parameters put back
    at their values on entering the phase."""
    params, lr_mask = run.params, settings.lr_mask
    run.opt.zero_grad(set_to_none=True)
    loss.sum().backward()
    if lr_mask is not None:
        before = [p.detach().clone() for p in params]
    if run.piece_scaled:
        piece_before = [p.detach().clone() for p, _ in run.piece_scaled]
    run.opt.step()
    with torch.no_grad():
        if lr_mask is not None:  # the step at lr * lr_scale, per trial
            for p, old in zip(params, before):
                p.sub_(old).mul_(lr_mask.view(-1, *([1] * (p.dim() - 1)))).add_(old)
        if run.piece_scaled:  # the step at lr / pieces, element by element
            for (p, scale), old in zip(run.piece_scaled, piece_before):
                p.sub_(old).mul_(scale).add_(old)
        for name, fm in settings.freeze_masks.items():
            p = run.frozen_params[name]
            p.copy_(_where_trials(fm, trials.snapshots[name], p))


def train_epoch(run: Run, settings: EpochSettings, trials: Trials, flat, rows) -> torch.Tensor:
    """One epoch of mini-batch steps (Algorithm 1, step 3) over the epoch's rows: `flat`, each
    trial's positions (T, r) among the trials' rows, `rows`, the rows of the tensors they read.
    Returns each trial's mean task loss over the epoch's batches (T,)."""
    acc = torch.zeros(flat.shape[0], device=run.device)
    bs, steps = run.batch_size, 0
    for s in range(0, flat.shape[1], bs):
        pos = flat[:, s : s + bs].reshape(-1)
        idx = rows[:, s : s + bs].reshape(-1)
        task, loss = batch_loss(run, settings, pos, idx)
        optimizer_step(run, settings, trials, loss)
        acc += task.detach()
        steps += 1
    return acc / steps


@torch.no_grad()
def until_reached(plan: Plan, trials: Trials, model: nn.Module) -> torch.Tensor:
    """(T,) bool: the trials whose phase's ``Phase.until(model)`` holds after this epoch (each
    phase's condition read only while a trial still trains in it)."""
    cond = torch.zeros(trials.T, dtype=torch.bool, device=trials.phase.device)
    for k, ph in enumerate(plan.phases):
        if ph.until is not None and np.any((trials.phase_host == k) & ~trials.done_host):
            cond |= (trials.phase == k) & ph.until(model).to(device=cond.device, dtype=torch.bool)
    return cond


@torch.no_grad()
def stopping_decision(plan: Plan, trials: Trials, params, val, cond, epoch: int):
    """Early stopping (Algorithm 1, step 3) after epoch `epoch`, per trial still training: an
    epoch whose validation loss `val` (NaN counts as +inf) beats the trial's best keeps its
    weights as the best and resets its patience, any other counts one bad epoch; a trial
    leaves its phase at the phase's cap, when `cond` (`until_reached`) holds, or (early
    stopping in the phase) after ``patience`` bad epochs in a row; leaving a phase with early
    stopping restores its best weights (when it had one). Returns (T,) bool: the leavers."""
    active = ~trials.done
    es_t = plan.es_flags[trials.phase]
    val_ok = torch.nan_to_num(val, nan=math.inf)
    improved = active & es_t & (val_ok < trials.best)
    if plan.track_best:
        for i, p in enumerate(params):
            trials.best_state[i].copy_(_where_trials(improved, p, trials.best_state[i]))
    trials.best = torch.where(improved, val_ok, trials.best)
    trials.best_epoch = torch.where(improved, epoch, trials.best_epoch)
    trials.bad = torch.where(improved, 0, trials.bad + 1)
    trials.ep_in_phase = trials.ep_in_phase + active.long()
    capped = trials.ep_in_phase >= plan.caps[trials.phase]
    leave = active & (capped | cond | (es_t & (trials.bad >= max(plan.patience, 1))))
    if plan.track_best:
        restore = leave & es_t & torch.isfinite(trials.best)
        for i, p in enumerate(params):
            p.copy_(_where_trials(restore, trials.best_state[i], p))
    return leave


@torch.no_grad()
def change_phase(plan: Plan, trials: Trials, run: Run, leave, epoch: int) -> None:
    """The leavers of epoch `epoch` move on: in the last phase a trial finishes (its weights
    kept as its final ones, its epochs counted, it trains no more); before it, the trial enters
    the next phase with its counters reset, its best validation loss forgotten (unless the
    phase keeps the one before's, ``Phase.keep_best``) and its frozen parameters' values
    taken as they are."""
    last = trials.phase == plan.K - 1
    finishing = leave & last
    for i, p in enumerate(run.params):
        if trials.alive is None:
            trials.final_state[i].copy_(_where_trials(finishing, p, trials.final_state[i]))
        else:
            kept = trials.final_state[i][trials.alive]
            trials.final_state[i][trials.alive] = _where_trials(finishing, p, kept)
    trials.n_epochs = torch.where(finishing, epoch + 1, trials.n_epochs)
    trials.done = trials.done | finishing
    advancing = leave & ~last
    trials.phase = trials.phase + advancing.long()
    trials.ep_in_phase = torch.where(leave, 0, trials.ep_in_phase)
    trials.best = torch.where(advancing & ~plan.keep_flags[trials.phase], math.inf, trials.best)
    trials.bad = torch.where(advancing, 0, trials.bad)
    for name, p in run.frozen_params.items():
        trials.snapshots[name].copy_(_where_trials(advancing, p, trials.snapshots[name]))


@dataclass
class History:
    """Per-epoch history over all the ensemble's trials (lists of (T_all,) arrays; NaN, or the
    last phase, for a trial that has left the computation), the epochs' seconds and the
    progress bar (None: quiet)."""

    train: list = field(default_factory=list)
    val: list = field(default_factory=list)
    phase: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    bar: object = None
    tick: float = 0.0

    def close(self) -> None:
        """Close the progress bar."""
        if self.bar is not None:
            self.bar.close()


def start_history(cfg, total_epochs: int) -> History:
    """An empty `History`, with a progress bar over `total_epochs` when ``cfg.verbose``."""
    bar = None
    if cfg.verbose:
        from tqdm.auto import tqdm

        bar = tqdm(total=total_epochs, desc=cfg.desc, leave=False)
    return History(bar=bar)


def sync(plan: Plan, trials: Trials, history: History, train_loss, val) -> None:
    """The epoch's one read back to the host: the trials' phases and finished flags (the
    settings of the next epoch), the epoch's losses and phases into `history`, its seconds,
    and the progress bar."""
    epoch_phase = np.minimum(trials.phase_host, plan.K - 1)  # each trial's phase in this epoch
    T, alive, T_all = trials.T, trials.alive, trials.T_all
    with torch.no_grad():
        parts = [trials.phase.float(), trials.done.float(), train_loss.float(), val.float()]
        packed = torch.cat(parts).cpu().numpy()
    now = time.perf_counter()
    history.seconds.append(now - history.tick)
    history.tick = now
    trials.phase_host = packed[:T].astype(np.int64)
    trials.done_host = packed[T : 2 * T] > 0.5
    history.train.append(all_trials(packed[2 * T : 3 * T], alive, T_all, np.nan))
    history.val.append(all_trials(packed[3 * T :], alive, T_all, np.nan))
    history.phase.append(all_trials(epoch_phase, alive, T_all, plan.K - 1))
    if history.bar is not None:
        history.bar.update(1)
        history.bar.set_postfix(
            train=f"{np.nanmean(history.train[-1]):.4f}",
            val=f"{np.nanmean(history.val[-1]):.4f}",
            active=int((~trials.done_host).sum()),
        )
