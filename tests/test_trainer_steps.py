"""The steps of the training loop (`pilid.train.steps`, `pilid.train.trainer`), each checked as
behaviour against a reference written here: early stopping on hand-made validation losses
against a plain NumPy patience count, a phase change's counters, the per-trial settings of an
epoch, a pass of the rows, a step at a per-trial learning-rate scale against Adam at the scaled
rate, frozen trials, and compaction against training without it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

import pilid.train.trainer as trainer
from pilid.train.ensemble_data import EnsembleData
from pilid.train.steps import (
    EpochSettings,
    change_phase,
    epoch_settings,
    make_plan,
    optimizer_step,
    start_trials,
    stopping_decision,
)
from pilid.train.trainer import Phase, TrainConfig, train_ensemble


class _Lines(nn.Module):
    """out_t = a_t + x_t . w_t for T trials (the trainer's model protocol)."""

    def __init__(self, T: int, m: int = 2, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.a = nn.Parameter(torch.zeros(T, 1))
        self.w = nn.Parameter(0.1 * torch.randn(T, m, generator=g))
        self.additive = None

    def forward(self, x, phi=None):
        return self.a + (x * self.w.unsqueeze(1)).sum(-1)


def _data(T: int, n: int = 40, m: int = 2, seed: int = 0, noise=None) -> EnsembleData:
    g = torch.Generator().manual_seed(seed)
    coef = torch.tensor([1.0, -2.0, 0.5, 1.5][:m])
    noise = torch.full((T, 1), 0.3) if noise is None else torch.as_tensor(noise).view(T, 1)
    x, x_val = torch.randn(T, n, m, generator=g), torch.randn(T, n // 2, m, generator=g)
    y = (x * coef).sum(-1) + noise * torch.randn(T, n, generator=g)
    y_val = (x_val * coef).sum(-1) + noise * torch.randn(T, n // 2, generator=g)
    return EnsembleData(x=x, y=y, x_val=x_val, y_val=y_val)


def _start(T, phases, patience=2, lr=0.01, epoch_rows=None, n=40):
    model = _Lines(T)
    data = _data(T, n=n)
    cfg = TrainConfig(
        task="regression", lr=lr, batch_size=8, patience=patience, epoch_rows=epoch_rows
    )
    plan = make_plan(phases, data, cfg)
    run = trainer._set_up(model, data, phases, cfg)
    trials = start_trials(run, plan, [torch.Generator().manual_seed(t) for t in range(T)])
    return model, plan, run, trials


def _set_weights(model, value):
    """Every trial's weights to `value` ((T,) or a number): the weights "of this epoch"."""
    with torch.no_grad():
        v = torch.as_tensor(value, dtype=torch.float32).reshape(-1, 1)
        model.w.copy_(v.expand_as(model.w))


def _final(trials, run, param):
    """The final weights the trials keep of `param`."""
    return next(f for p, f in zip(run.params, trials.final_state) if p is param)


def _numpy_patience(val: np.ndarray, patience: int, cap: int):
    """Per trial (columns of `val`, epochs x T): the epoch it stops at, its best epoch and best
    loss, by the rule of early stopping (NaN counts as +inf; stop after `patience` epochs in a
    row without a new best, or at the cap)."""
    stop, best_epoch, best = [], [], []
    for v in np.nan_to_num(val, nan=np.inf).T:
        b, bad, be = np.inf, 0, 0
        for e, x in enumerate(v):
            if x < b:
                b, bad, be = x, 0, e
            else:
                bad += 1
            if bad >= patience or e + 1 >= cap:
                break
        stop.append(e)
        best_epoch.append(be)
        best.append(b)
    return np.array(stop), np.array(best_epoch), np.array(best)


NAN = math.nan
#: Validation losses (epochs x trials): steady gains, a late best, NaN epochs, never finite.
VAL = np.array(
    [
        [1.0, NAN, NAN, 3.0],
        [0.9, 2.0, NAN, 2.9],
        [0.95, 1.5, NAN, 2.8],
        [0.97, 1.6, NAN, 2.7],
        [0.8, 1.55, NAN, 2.75],
        [0.7, 1.7, NAN, 2.6],
        [0.75, 1.4, NAN, 2.65],
        [0.76, 1.3, NAN, 2.7],
        [0.74, 1.2, NAN, 2.8],
        [0.6, 1.1, NAN, 2.9],
    ]
)


@pytest.mark.parametrize("patience", [1, 2, 3])
def test_the_stopping_decision_follows_a_numpy_count_of_patience(patience):
    T, E = VAL.shape[1], VAL.shape[0]
    model, plan, run, trials = _start(T, [Phase("only", E)], patience=patience)
    left_at = np.full(T, -1)
    for e in range(E):
        _set_weights(model, e + 1.0)  # the weights of epoch e are e + 1
        leave = stopping_decision(
            plan,
            trials,
            run.params,
            torch.tensor(VAL[e]).float(),
            torch.zeros(T, dtype=torch.bool),
            e,
        )
        change_phase(plan, trials, run, leave, e)
        left_at[leave.numpy()] = e
    stop, best_epoch, best = _numpy_patience(VAL, patience, cap=E)
    np.testing.assert_array_equal(left_at, stop)
    np.testing.assert_array_equal(trials.n_epochs.numpy(), stop + 1)
    np.testing.assert_array_equal(trials.best_epoch.numpy(), best_epoch)
    np.testing.assert_allclose(trials.best.numpy(), best.astype(np.float32))
    assert bool(trials.done.all())
    # a trial leaves with its best epoch's weights, or its last ones when no loss was finite
    kept = np.where(np.isfinite(best), best_epoch + 1.0, stop + 1.0)
    final_w = _final(trials, run, model.w)
    np.testing.assert_array_equal(final_w[:, 0].numpy(), kept)


def test_a_phase_change_resets_the_counters_and_keep_best_keeps_the_bar():
    phases = [
        Phase("one", 10, frozen=("a",)),
        Phase("two", 10, keep_best=True),
        Phase("three", 10),
    ]
    model, plan, run, trials = _start(2, phases, patience=5)
    no = torch.zeros(2, dtype=torch.bool)
    first = torch.tensor([True, False])
    for e, v in enumerate([[1.0, 1.0], [0.5, 0.9], [0.7, 0.8]]):
        _set_weights(model, e + 1.0)
        with torch.no_grad():
            model.a.fill_(10.0 + e)
        cond = first if e == 2 else no  # trial 0's phase ends by its condition at epoch 2
        leave = stopping_decision(plan, trials, run.params, torch.tensor(v), cond, e)
        change_phase(plan, trials, run, leave, e)
    assert trials.phase.tolist() == [1, 0] and trials.ep_in_phase.tolist() == [0, 3]
    assert trials.bad.tolist() == [0, 0]  # trial 1 improved at epoch 2, trial 0 was reset
    assert float(trials.best[0]) == 0.5  # "two" keeps the best of "one" as the bar to beat
    assert (
        float(model.w.detach()[0, 0]) == 2.0 and float(model.w.detach()[1, 0]) == 3.0
    )  # best weights back
    # the frozen `a` is taken as it is on entering the next phase, for trial 0 alone
    assert trials.snapshots["a"][:, 0].tolist() == [11.0, 0.0]  # at its best weights
    # in "two", trial 0 leaves again at once: "three" starts without a bar; then it finishes
    for e, cond in ((3, first), (4, first)):
        _set_weights(model, e + 1.0)
        leave = stopping_decision(plan, trials, run.params, torch.tensor([0.9, 0.7]), cond, e)
        change_phase(plan, trials, run, leave, e)
        if e == 3:  # no epoch of "two" beat 0.5: it leaves with the weights it entered with
            assert float(model.w.detach()[0, 0]) == 2.0 and trials.phase.tolist() == [2, 0]
            assert math.isinf(float(trials.best[0]))
    assert trials.done.tolist() == [True, False] and trials.n_epochs.tolist() == [5, 0]
    final_w = _final(trials, run, model.w)
    assert final_w[0, 0] == 5.0  # its one epoch in "three" is its best there


def test_the_epoch_settings_follow_each_trials_phase():
    phases = [Phase("one", 5, penalty=True, frozen=("w",)), Phase("two", 5, lr_scale=0.5)]
    _, plan, run, trials = _start(3, phases)
    trials.phase_host = np.array([0, 1, 1])
    s = epoch_settings(plan, trials, run)
    assert s.pen_mask.tolist() == [1.0, 0.0, 0.0] and s.lr_mask.tolist() == [1.0, 0.5, 0.5]
    assert list(s.freeze_masks) == ["w"] and s.freeze_masks["w"].tolist() == [True, False, False]
    trials.phase_host = np.array([0, 0, 0])
    s = epoch_settings(plan, trials, run)
    assert s.lr_mask is None and s.pen_mask.tolist() == [1.0, 1.0, 1.0]
    trials.phase_host = np.array([1, 1, 1])
    s = epoch_settings(plan, trials, run)
    assert s.pen_mask is None and s.freeze_masks == {}


def test_an_epoch_of_epoch_rows_reads_the_next_rows_of_one_pass():
    _, _, run, trials = _start(2, [Phase("only", 5)], epoch_rows=4, n=10)
    epochs = [trainer._epoch_rows(run, trials) for _ in range(4)]
    assert [f.shape[1] for f, _ in epochs] == [4, 4, 2, 4]  # 4 + 4 + 2 rows: a pass of 10
    for t in range(2):  # trial t's rows are t * 10 + i: each row once in the pass
        seen = torch.cat([f[t] for f, _ in epochs[:3]]) - 10 * t
        assert sorted(seen.tolist()) == list(range(10))
    assert not torch.equal(epochs[0][0][0], epochs[0][0][1] - 10)  # each trial its own order


def _adam_alone(w0, target, lr, steps):
    """`steps` steps of plain Adam at `lr` on sum((w - target)^2), one trial alone."""
    w = nn.Parameter(w0.clone())
    opt = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        ((w - target) ** 2).sum().backward()
        opt.step()
    return w.detach()


def test_a_step_at_a_trials_lr_scale_is_adam_at_the_scaled_learning_rate():
    scale = torch.tensor([0.25, 1.0, 3.0])
    model, _, run, trials = _start(3, [Phase("only", 5)], lr=0.01)
    w0, target = model.w.detach().clone(), torch.tensor([[1.0, -1.0], [0.5, 2.0], [-2.0, 0.0]])
    settings = EpochSettings(pen_mask=None, lr_mask=scale, freeze_masks={})
    for _ in range(4):
        loss = ((model.w - target) ** 2).sum(1) + 0.0 * model.a[:, 0]
        optimizer_step(run, settings, trials, loss)
    for t in range(3):
        alone = _adam_alone(w0[t], target[t], 0.01 * float(scale[t]), 4)
        torch.testing.assert_close(model.w.detach()[t], alone, rtol=0, atol=1e-6)
    assert not torch.allclose(model.w[0], model.w[1])


def test_a_frozen_trial_holds_its_parameter_while_the_others_step():
    model, _, run, trials = _start(2, [Phase("only", 5, frozen=("w",))], lr=0.05)
    w0 = model.w.detach().clone()
    settings = EpochSettings(None, None, {"w": torch.tensor([True, False])})
    for _ in range(3):
        loss = ((model.w - 1.0) ** 2).sum(1) + (model.a[:, 0] - 1.0) ** 2
        optimizer_step(run, settings, trials, loss)
    assert torch.equal(model.w[0], w0[0]) and not torch.equal(model.w[1], w0[1])
    assert bool((model.a != 0).all())  # `a` is not frozen: every trial steps it


def test_compaction_leaves_the_survivors_as_they_train_without_it(monkeypatch):
    T, phases = 5, [Phase("only", 80)]
    cfg = TrainConfig(task="regression", lr=0.05, batch_size=16, patience=2)
    data = _data(T, n=120, seed=3, noise=[0.1, 0.5, 1.0, 2.0, 3.0])
    left = []
    original = trainer.keep_members

    def counted(model, opt, keep, n_trials, restore=None):
        if keep is not None:
            left.append(int(len(keep)))
        return original(model, opt, keep, n_trials, restore=restore)

    monkeypatch.setattr(trainer, "keep_members", counted)
    fast_model = _Lines(T, seed=4)
    fast = train_ensemble(fast_model, data, phases, cfg, seeds=list(range(T)))
    assert left, "no trial left the computation"
    monkeypatch.setattr(trainer, "members_separable", lambda *a: False)
    full_model = _Lines(T, seed=4)
    full = train_ensemble(full_model, data, phases, cfg, seeds=list(range(T)))
    assert len(set(fast.n_epochs.tolist())) > 1  # the trials finished at different epochs
    np.testing.assert_array_equal(fast.n_epochs, full.n_epochs)
    np.testing.assert_array_equal(fast.best_epoch, full.best_epoch)
    for a, b in zip(fast_model.parameters(), full_model.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    for t, ne in enumerate(fast.n_epochs):
        for curve in ("train_loss", "val_loss"):
            a, b = getattr(fast, curve)[:ne, t], getattr(full, curve)[:ne, t]
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=0)
        assert np.isnan(fast.val_loss[ne:, t]).all() or ne == len(fast.val_loss)
