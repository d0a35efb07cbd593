"""A bag's members hold their table once (`EnsembleData`'s shared layout), and the work done once
per fit reads a sample of a large table (`pilid.train.batched.SAMPLE_ROWS`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import pilid.train.batched as batched
from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.train.ensemble_data import EnsembleData
from pilid.train.trainer import evaluate_loss


def _table(n=600, m=4, seed=0, nan=True):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, m))
    if nan:
        X[rng.random((n, m)) < 0.05] = np.nan
    z = np.nan_to_num(X)
    y = np.sin(3 * z[:, 0]) + z[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return X, y


def _shared_and_stacked(T=3, N=50, n=20, m=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N, m, generator=g)
    x[:, 0] = torch.arange(N, dtype=x.dtype)  # each row's index, to read back which it is
    y = torch.randn(N, generator=g)
    phi = (torch.randint(0, 7, (N, m), generator=g), torch.rand(N, m, generator=g))
    rows = torch.randint(0, N, (T, n), generator=g).sort(1).values
    shared = EnsembleData(x=x, y=y, phi=phi, rows=rows)
    stacked = EnsembleData(x=x[rows], y=y[rows], phi=tuple(p[rows] for p in phi))
    return shared, stacked, rows


def test_stacked_view_of_shared_rows_gathers_each_trials_rows():
    shared, stacked, rows = _shared_and_stacked()
    full = shared.stacked()
    assert full.shape == stacked.shape == tuple(rows.shape)
    for a, b in zip((full.x, full.y, *full.phi), (stacked.x, stacked.y, *stacked.phi)):
        assert torch.equal(a, b)
    # a sample: the same positions of each trial's rows in both layouts, in their order
    a, b = shared.stacked(7, seeds=[1, 2, 3]), stacked.stacked(7, seeds=[1, 2, 3])
    assert a.shape == b.shape == (3, 7)
    for u, v in zip((a.x, a.y, *a.phi), (b.x, b.y, *b.phi)):
        assert torch.equal(u, v)
    for t in range(3):  # a sample of the trial's rows (a row drawn twice may come twice)
        picked = a.x[t, :, 0].long()
        assert torch.equal(picked, picked.sort().values)
        counts = torch.bincount(rows[t], minlength=50)
        assert bool((torch.bincount(picked, minlength=50) <= counts).all())


def test_evaluate_loss_reads_shared_rows_as_the_stacked_tensors():
    shared, stacked, rows = _shared_and_stacked(T=2, m=3)

    class Mean(torch.nn.Module):  # a model of T trials: the row's mean plus its Phi fraction
        def forward(self, x, phi):
            return x.mean(2) + phi[1].sum(2)

    model = Mean()
    a = evaluate_loss(model, *shared.training()[:3], "regression", chunk=7, rows=rows)
    b = evaluate_loss(model, stacked.x, stacked.phi, stacked.y, "regression", chunk=7)
    out = stacked.x.mean(2) + stacked.phi[1].sum(2)
    expected = ((out - stacked.y) ** 2).mean(1)
    assert torch.allclose(a, expected) and torch.equal(a, b)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_a_bag_trains_alike_from_shared_and_stacked_rows(monkeypatch, task):
    """The shared layout changes the memory, not one bit of the model."""
    X, y = _table()
    cls = PiLiDRegressor if task == "regression" else PiLiDClassifier
    target = y if task == "regression" else (y > 0.3).astype(int)
    params = dict(random_state=3, epochs=2, n_bags=3, gamma=8)
    shared = cls(**params).fit(X, target)
    monkeypatch.setattr(batched, "_shares_table", lambda preps: False)
    stacked = cls(**params).fit(X, target)
    out = "predict" if task == "regression" else "predict_proba"
    assert np.array_equal(getattr(shared, out)(X), getattr(stacked, out)(X))


def test_fit_sample_bounds_the_start_and_changes_nothing_below_it(monkeypatch):
    X, y = _table(n=800, nan=False)
    params = dict(random_state=0, epochs=0, n_bags=2, gamma=6, hidden_layers=None)
    full = PiLiDRegressor(**params).fit(X, y)  # epochs=0: the least-squares start alone
    monkeypatch.setattr(batched, "SAMPLE_ROWS", 10_000)  # above the rows: no sample
    same = PiLiDRegressor(**params).fit(X, y)
    assert np.array_equal(full.predict(X), same.predict(X))
    monkeypatch.setattr(batched, "SAMPLE_ROWS", 300)  # below: a start from 300 rows
    sampled = PiLiDRegressor(**params).fit(X, y)
    a, b = full.predict(X), sampled.predict(X)
    assert not np.array_equal(a, b)
    # a least-squares start on a third of the rows fits the table nearly as well
    mse = lambda p: float(np.mean((p - y) ** 2))  # noqa: E731
    assert mse(b) < 1.2 * mse(a) + 1e-3


class _Linear(torch.nn.Module):
    """T trials of y = x a + c (the protocol `train_ensemble` needs: additive None)."""

    additive = None

    def __init__(self, T, m):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(T, m))
        self.c = torch.nn.Parameter(torch.zeros(T, 1))

    def forward(self, x, phi=None):
        return (x * self.a[:, None]).sum(2) + self.c


def _seen_rows(data, epoch_rows, epochs):
    """The row indices (x's column 0) each epoch trains on, per trial."""
    from pilid.train.trainer import Phase, TrainConfig, train_ensemble

    seen = []

    def record(model, xb):
        seen.append(xb[:, :, 0].long().clone())
        return None

    T = data.shape[0]
    cfg = TrainConfig(task="regression", batch_size=8, patience=None, epoch_rows=epoch_rows)
    cfg.extra_loss = record
    phases = [Phase("fit", max_epochs=epochs, penalty=True, early_stopping=False)]
    train_ensemble(_Linear(T, data.x.shape[-1]), data, phases, cfg, seeds=[1, 2])
    return seen


def test_an_epoch_of_a_large_table_is_the_next_rows_of_its_pass():
    N = 60
    x = torch.randn(N, 2)
    x[:, 0] = torch.arange(N, dtype=x.dtype)
    rows = torch.stack([torch.randperm(N)[:40], torch.randperm(N)[:40]])  # 2 trials, 40 rows
    data = EnsembleData(x=x, y=torch.randn(N), rows=rows)
    batches = _seen_rows(data, epoch_rows=16, epochs=6)  # 16 + 16 + 8 rows: one pass
    per_epoch = [2, 2, 1, 2, 2, 1]  # batches of 8 rows
    starts = np.cumsum([0, *per_epoch])
    epochs = [torch.cat(batches[a:b], 1) for a, b in zip(starts[:-1], starts[1:])]
    assert [e.shape[1] for e in epochs] == [16, 16, 8, 16, 16, 8]
    for t in range(2):
        for first in (0, 3):  # each pass of three epochs reads every row of the trial once
            one_pass = torch.cat([e[t] for e in epochs[first : first + 3]])
            assert sorted(one_pass.tolist()) == sorted(rows[t].tolist())
    # without a limit (or with one above the rows) an epoch is a whole pass
    whole = _seen_rows(data, epoch_rows=None, epochs=2)
    assert sum(b.shape[1] for b in whole) == 80
    assert [b.shape[1] for b in _seen_rows(data, epoch_rows=40, epochs=2)] == [
        b.shape[1] for b in whole
    ]


def test_validation_sample_keeps_the_layouts_equal():
    shared, stacked, rows = _shared_and_stacked(T=2, n=20)
    shared.val_rows, stacked_val = rows.flip(1), rows.flip(1)
    stacked.x_val, stacked.y_val = shared.x[stacked_val], shared.y[stacked_val]
    stacked.phi_val = tuple(p[stacked_val] for p in shared.phi)
    assert shared.sample_validation(20, [4, 5]) is shared  # no more rows than the limit
    a, b = shared.sample_validation(6, [4, 5]), stacked.sample_validation(6, [4, 5])
    xa, phia, ya, _, ra = a.validation()
    xb, phib, yb, _, rb = b.validation()
    assert rb is None and ra.shape == (2, 6) and xb.shape[:2] == (2, 6)
    assert torch.equal(xa[ra], xb) and torch.equal(ya[ra], yb)
    assert all(torch.equal(p[ra], q) for p, q in zip(phia, phib))


def test_cpu_threads_leave_out_the_cores_other_processes_keep_busy(monkeypatch):
    import os

    import pilid.device as device

    cores = os.cpu_count() or 1
    monkeypatch.setattr(torch, "get_num_threads", lambda: 4)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(device, "busy_cores", lambda: 0.1)  # an idle machine: torch's own
    assert device.cpu_threads() == 4
    monkeypatch.setattr(device, "busy_cores", lambda: 1.2)  # one core busy elsewhere
    assert device.cpu_threads() == 3
    monkeypatch.setattr(device, "busy_cores", lambda: 7.0)  # every core busy: still one
    assert device.cpu_threads() == 1
    monkeypatch.setattr(device, "busy_cores", lambda: None)  # unreadable: torch's own
    assert device.cpu_threads() == 4
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)  # the user's one thread stays
    monkeypatch.setattr(device, "busy_cores", lambda: 0.0)
    assert device.cpu_threads() == 1
    monkeypatch.undo()
    busy = device.busy_cores(0.02)  # read from /proc/stat where there is one
    assert busy is None or 0.0 <= busy <= cores + 1e-9


@pytest.mark.parametrize(
    "task, params",
    [
        ("regression", {}),
        ("classification", {}),
        ("regression", {"hidden_layers": None}),
        ("regression", {"pairs": 2, "n_bags": 5, "lr": 0.03}),
    ],
)
def test_finished_members_leave_the_ensemble_and_end_as_they_would(monkeypatch, task, params):
    """Members that stopped early leave the computation; every member ends as it would have (on
    these small tables bit for bit on squared loss; a log-loss's vectorised exp and log may round
    the last bit of an element differently when the ensemble holds fewer members)."""
    import pilid.train.trainer as trainer

    X, y = _table(n=500, m=4, seed=2)
    cls = PiLiDRegressor if task == "regression" else PiLiDClassifier
    target = y if task == "regression" else (y > 0.3).astype(int)
    kwargs = {"random_state": 5, "epochs": 40, "patience": 2, "n_bags": 6, "gamma": 6, **params}
    left = []
    original = trainer.keep_members

    def counted(model, opt, keep, T, restore=None):
        if keep is not None:
            left.append((T, len(keep)))
        return original(model, opt, keep, T, restore=restore)

    monkeypatch.setattr(trainer, "keep_members", counted)
    fast = cls(**kwargs).fit(X, target)
    assert left, "no member left the ensemble: the test trains too alike"
    monkeypatch.setattr(trainer, "members_separable", lambda *a: False)
    full = cls(**kwargs).fit(X, target)
    out = "predict" if task == "regression" else "predict_proba"
    tol = 0.0 if task == "regression" else 1e-6
    np.testing.assert_allclose(getattr(fast, out)(X), getattr(full, out)(X), rtol=0, atol=tol)
    for a, b in zip(fast.estimators_, full.estimators_):
        assert a.n_epochs_ == b.n_epochs_ and a.best_epoch_ == b.best_epoch_
        for curve in ("train_loss", "val_loss"):
            np.testing.assert_allclose(a.history_[curve], b.history_[curve], rtol=tol, atol=0)


def test_a_large_table_keeps_monotone_shapes_and_missing_values(monkeypatch):
    """Beyond SAMPLE_ROWS the start and purification are solved matrix-free on a sample; the
    constraints and the missing-value contributions hold there as on the dense path."""
    monkeypatch.setattr(batched, "SAMPLE_ROWS", 250)
    X, y = _table(n=700, m=3, seed=4)
    est = PiLiDRegressor(
        random_state=0, epochs=4, n_bags=3, gamma=8, monotone_constraints={0: 1}
    ).fit(X, y)
    grid = np.linspace(-1, 1, 41)
    probe = np.zeros((41, 3))
    probe[:, 0] = grid
    contributions = est.decompose(probe)[1][:, 0]
    assert np.all(np.diff(contributions) >= -1e-9)  # increasing in feature 0
    with_nan = X[:5].copy()
    with_nan[:, 1] = np.nan
    assert np.all(np.isfinite(est.predict(with_nan)))
    assert float(np.mean((est.predict(X) - y) ** 2)) < float(np.var(y))


def test_sample_rows_keeps_a_small_table_and_draws_a_seeded_sample_of_a_large_one(monkeypatch):
    monkeypatch.setattr(batched, "SAMPLE_ROWS", 5)
    rows = np.array([3, 8, 9, 20, 21])
    assert np.array_equal(batched.sample_rows(rows, seed=1), rows)
    many = np.arange(100, 140)
    a, b = batched.sample_rows(many, seed=1), batched.sample_rows(many, seed=1)
    assert np.array_equal(a, b) and len(a) == 5 and np.all(np.diff(a) > 0)
    assert set(a) <= set(many.tolist())
    assert not np.array_equal(a, batched.sample_rows(many, seed=2))
    assert np.array_equal(batched.sample_rows(40, seed=1), a - 100)  # a count: positions
