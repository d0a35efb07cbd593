"""Wide data (issue 49, item 3): many features times many pieces.

The roughness penalty is kept as the band of its tridiagonal matrix, and a Phi wider than
`DENSE_COLUMNS` is solved from compact Phi (`ridge_solve_compact`: conjugate gradients, or the
n x n dual system where there are fewer rows than columns): both are checked
here against small dense references written in the test (the penalty matrix from its
differences, Phi from `phi_numpy`, the penalised normal equations solved by NumPy), and the wide
path of the start and of the purification against the dense path it replaces. The library
defaults' training scales the additive part's steps by its pieces (`piece_step_scales`): one Adam
step is checked element by element, and the defaults no longer diverge on 50 features at few
epochs. A fit on 150 features runs in an address space far below the dense (T, P, P) penalty's.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression

import pilid.models.fitting as fitting_module
import pilid.nn.ensemble as ensemble_module
import pilid.train.additive_start as start_module
import pilid.train.batched as batched_module
from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import TrainingDivergedWarning
from pilid.nn.additive import AdditiveEnsemble, difference_penalty, penalty_apply, penalty_matrix
from pilid.nn.ensemble import PiLiDEnsemble
from pilid.nn.least_squares import LSTSQ_RIDGE, CompactPhi, ridge_solve, ridge_solve_compact
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact, phi_numpy
from pilid.train.trainer import EnsembleData, Phase, TrainConfig, train_ensemble

PAD = 3  # padding columns after the real pieces, as a narrower trial of a batch has


def _dense_penalty(neighbours: np.ndarray, smoothness: float) -> np.ndarray:
    """smoothness * sum_k nb_k (e_{k+1} - e_k)(e_{k+1} - e_k)^T, written out."""
    P = len(neighbours) + 1
    R = np.zeros((P, P))
    for k, nb in enumerate(neighbours):
        d = np.zeros(P)
        d[k], d[k + 1] = -1.0, 1.0
        R += smoothness * nb * np.outer(d, d)
    return R


def _inputs(seed=0, n=160):
    """Data with a categorical and a partly missing feature, its knots, compact Phi (padded by
    `PAD` zero columns), the dense Phi of `phi_numpy` with the missing indicator appended, the
    neighbours of the numeric pieces and a target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 4, n)
    X[rng.uniform(size=n) < 0.15, 2] = np.nan
    categorical = np.array([False, False, False, True])
    knots = fit_knots(X, 7, "quantile", categorical)
    layout = compact_layout(knots, dtype=torch.float64)
    col, frac, miss = phi_compact(torch.as_tensor(X), layout)[:3]
    f, _, _ = knots.layout()
    P = len(f) + PAD
    feature = torch.zeros(P, dtype=torch.long)
    feature[: len(f)] = torch.as_tensor(f)
    mask = torch.zeros(P)
    mask[: len(f)] = 1.0
    dense = np.nan_to_num(phi_numpy(X, knots), nan=0.0)
    dense = np.column_stack([dense, np.zeros((n, PAD)), np.isnan(X[:, 2])])
    same = (f[1:] == f[:-1]) & ~categorical[f[:-1]]
    neighbours = np.zeros(P - 1)
    neighbours[: len(f) - 1] = same
    y = np.sin(np.nan_to_num(X[:, 0])) + X[:, 1] + X[:, 3] + 0.1 * rng.normal(size=n)
    design = CompactPhi(col[None], frac[None], feature[None], mask[None], miss[None][:, :, [2]])
    return design, dense, neighbours, y


def _penalised_lstsq(A, y, weights, R):
    """Independently: minimise sum_i w_i (y_i - c - A_i w)^2 / sum w + w^T R w + ridge, with
    `ridge_solve`'s ridge (LSTSQ_RIDGE times the mean centred diagonal)."""
    total = weights.sum()
    mean = weights @ A / total
    Ac, yc = A - mean, y - weights @ y / total
    gram = Ac.T @ (weights[:, None] * Ac)
    r = LSTSQ_RIDGE * np.mean(np.diag(gram)) + 1e-12
    Q = len(R)
    lhs = gram + r * np.eye(len(gram))
    lhs[:Q, :Q] += total * R
    w = np.linalg.solve(lhs, Ac.T @ (weights * yc))
    return w, weights @ y / total - mean @ w


# -- the penalty without a P x P matrix ------------------------------------------------------
def test_penalty_band_is_the_dense_difference_penalty_its_product_and_its_gradient():
    rng = np.random.default_rng(0)
    neighbours = np.array([1, 1, 0, 1, 1, 1, 0, 0], dtype=np.float64)  # 9 columns
    R = _dense_penalty(neighbours, 0.3)
    band = difference_penalty(torch.as_tensor(neighbours)[None], 0.3)
    assert band.shape == (1, 8) and band.dtype == torch.float64
    np.testing.assert_allclose(penalty_matrix(band)[0].numpy(), R, atol=1e-15)
    v = rng.normal(size=(2, 9))
    out = penalty_apply(band, torch.as_tensor(v))
    np.testing.assert_allclose(out.numpy(), v @ R.T, atol=1e-12)
    # the training loss's term, AdditiveEnsemble.roughness at omega = 1: w^T R w, gradient 2 R w
    feature = torch.as_tensor([0, 0, 0, 1, 1, 1, 1, 2, 3])
    w = torch.as_tensor(v[:1], dtype=torch.float64)
    additive = AdditiveEnsemble(feature[None], torch.ones(1, 9, dtype=torch.float64), 4, w)
    nb = torch.as_tensor(neighbours)[None]
    value = 0.3 * additive.roughness(nb)
    value.sum().backward()
    assert value.item() == pytest.approx(v[0] @ R @ v[0], rel=1e-12)
    np.testing.assert_allclose(additive.w.grad[0].numpy(), 2 * R @ v[0], atol=1e-12)


# -- compact Phi as an operator --------------------------------------------------------------
def test_compact_phi_products_equal_the_dense_phi():
    design, dense, _, _ = _inputs()
    op = design.trial(0)
    rng = np.random.default_rng(1)
    v = rng.normal(size=dense.shape[1])
    u = rng.normal(size=dense.shape[0])
    np.testing.assert_allclose(op.matvec(torch.as_tensor(v)).numpy(), dense @ v, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(torch.as_tensor(u)).numpy(), dense.T @ u, atol=1e-12)
    squared = op.rmatvec(torch.as_tensor(u), square=True).numpy()
    np.testing.assert_allclose(squared, (dense**2).T @ u, atol=1e-12)
    means = design.column_means()[0].numpy()
    np.testing.assert_allclose(means, dense.mean(0), atol=1e-6)


def test_a_bootstrap_samples_repeats_merge_into_their_counts():
    """`unique_rows` on a bootstrap sample (sorted draws, repeats side by side) keeps each
    distinct row once with its count, the rows in one order whether the repeats were merged
    first or not: its products with any vector are the repeated rows' (weighted by count)."""
    design, dense, _, y = _inputs()
    rng = np.random.default_rng(3)
    picks = np.sort(rng.integers(0, len(y), len(y)))  # a bootstrap sample, as `bag_rows` draws
    col, frac, feature, mask, extra = (
        design.col[:, picks],
        design.frac[:, picks],
        design.feature,
        design.mask,
        design.extra[:, picks],
    )
    op = CompactPhi(col, frac, feature, mask, extra).trial(0)
    target = torch.as_tensor(y[picks])
    merged, y_merged, counts = op.unique_rows(target, torch.ones(len(picks), dtype=torch.float64))
    assert merged.n == len(np.unique(picks)) < len(picks)
    assert sorted(counts.numpy()) == sorted(np.unique(picks, return_counts=True)[1])
    u = rng.normal(size=dense.shape[1])
    np.testing.assert_allclose(
        (counts * merged.matvec(torch.as_tensor(u))).sum().item(),
        (dense[picks] @ u).sum(),
        rtol=1e-12,
    )
    np.testing.assert_allclose((counts * y_merged).sum().item(), y[picks].sum(), rtol=1e-12)
    shuffled = rng.permutation(len(picks))  # no repeat side by side: the sort alone merges
    op2 = CompactPhi(col[:, shuffled], frac[:, shuffled], feature, mask, extra[:, shuffled])
    again = op2.trial(0).unique_rows(target[shuffled], torch.ones(len(picks), dtype=torch.float64))
    assert torch.equal(again[1], y_merged) and torch.equal(again[2], counts)


@pytest.mark.parametrize("rows", [20, 160])  # fewer rows than columns: the dual system
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothness", [0.0, 0.3])
def test_matrix_free_least_squares_is_the_dense_penalised_least_squares(rows, weighted, smoothness):
    design, dense, neighbours, y = _inputs(seed=2, n=rows)
    n, P = dense.shape[0], len(neighbours) + 1
    rng = np.random.default_rng(3)
    weights = rng.integers(0, 4, n).astype(np.float64) if weighted else np.ones(n)
    band = difference_penalty(torch.as_tensor(neighbours)[None], smoothness)
    expected, c_expected = _penalised_lstsq(
        dense, y, weights, _dense_penalty(neighbours, smoothness)
    )
    target = torch.as_tensor(y, dtype=torch.float32)[None]
    kw = dict(
        weights=torch.as_tensor(weights, dtype=torch.float32)[None] if weighted else None,
        roughness=band if smoothness > 0 else None,
    )
    w, c = ridge_solve_compact(design, target, **kw)
    assert w.shape == (1, P + 1) and w.dtype == design.dtype  # Phi's precision
    scale = np.abs(expected).max()
    np.testing.assert_allclose(w[0].numpy(), expected, atol=1e-6 * scale)
    assert c.item() == pytest.approx(c_expected, abs=1e-5)
    w_same, c_same = ridge_solve(design, target, **kw)  # ridge_solve hands a CompactPhi on
    assert torch.equal(w_same, w) and torch.equal(c_same, c)
    if rows > P:  # well posed: the dense path (a float32 Gram matrix) predicts the same
        dense32 = torch.as_tensor(dense[None], dtype=torch.float32)
        w_dense, c_dense = ridge_solve(dense32, target, **kw)
        pred_dense = dense @ w_dense[0].double().numpy() + c_dense.item()
        pred = dense @ w[0].double().numpy() + c.item()
        np.testing.assert_allclose(pred, pred_dense, atol=1e-4)


@pytest.mark.parametrize("rows", [20, 160])
def test_held_columns_stay_at_zero_and_the_rest_is_their_own_least_squares(rows):
    design, dense, neighbours, y = _inputs(seed=4, n=rows)
    P = len(neighbours) + 1
    feature = design.feature[0]
    free = torch.ones(P + 1, dtype=torch.bool)
    free[:P][(feature == 1) & (design.mask[0] > 0)] = False  # feature 1 monotone: no shift
    band = difference_penalty(torch.as_tensor(neighbours)[None], 0.3)
    w, c = ridge_solve_compact(design, torch.as_tensor(y)[None], roughness=band, free=free[None])
    keep = free.numpy()
    R = _dense_penalty(neighbours, 0.3)
    R_free = R[np.ix_(keep[:P], keep[:P])]
    expected, c_expected = _penalised_lstsq(dense[:, keep], y, np.ones(len(y)), R_free)
    assert np.all(w[0].numpy()[~keep] == 0.0)
    np.testing.assert_allclose(w[0].numpy()[keep], expected, atol=1e-6 * np.abs(expected).max())
    assert c.item() == pytest.approx(c_expected, abs=1e-5)


# -- the estimators' wide path ---------------------------------------------------------------
def _monotone_missing_data(n=300, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] + X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=n)
    X[rng.uniform(size=n) < 0.1, 3] = np.nan
    return X, y


def test_the_wide_start_equals_the_dense_start(monkeypatch):
    X, y = _monotone_missing_data()
    kw = dict(gamma=8, smoothness=0.5, pairs=0, n_bags=2, hidden_layers=(8,), epochs=0)
    kw.update(monotone_constraints=[0, 1, 0, 0], random_state=0, device="cpu")
    dense = PiLiDRegressor(**kw).fit(X, y)
    monkeypatch.setattr(start_module, "DENSE_COLUMNS", 0)  # every Phi is "wide"
    monkeypatch.setattr(ensemble_module, "DENSE_COLUMNS", 0)
    wide = PiLiDRegressor(**kw).fit(X, y)
    np.testing.assert_allclose(wide.predict(X), dense.predict(X), atol=1e-5)
    for a, b in zip(wide.estimators_, dense.estimators_):
        np.testing.assert_allclose(
            a.module_.additive.w.detach(), b.module_.additive.w.detach(), atol=1e-5
        )


@pytest.mark.parametrize("monotone", [False, True])
def test_the_wide_purification_equals_the_dense_one(monkeypatch, monotone):
    X, y = _monotone_missing_data(n=200, seed=6)
    knots = fit_knots(X, 6, "quantile")
    parts = phi_compact(torch.as_tensor(X), compact_layout(knots))
    phi = tuple(torch.stack([p, p]) for p in parts)  # two trials on the same rows
    f, _, _ = knots.layout()
    feature = torch.as_tensor(f)[None].repeat(2, 1)
    mask = torch.ones(2, len(f))
    sign = None
    if monotone:
        sign = torch.as_tensor(np.where(f == 1, 1.0, 0.0), dtype=torch.float32)[None].repeat(2, 1)
    w = torch.as_tensor(np.random.default_rng(7).normal(size=(2, len(f))), dtype=torch.float32)
    additive = AdditiveEnsemble(feature, mask, 4, w, sign=sign, nan_value=torch.zeros(2, 4))
    deep = EnsembleMLP(4, (8,), sigma=0.5, seeds=[1, 2])
    with torch.no_grad():  # its output layer starts at zero: give it a main effect to move
        deep.out_w.copy_(torch.linspace(-1.0, 1.0, 16).reshape(deep.out_w.shape))
    model = PiLiDEnsemble(additive, deep, 2)
    x = torch.as_tensor(np.nan_to_num(X), dtype=torch.float32)[None].repeat(2, 1, 1)
    nb = start_module.neighbour_pieces(
        [start_module.Prepared(X, y, np.arange(200), np.arange(0), 0, 0, 1, knots)] * 2,
        feature,
        mask,
    )
    band = difference_penalty(nb, 0.5)
    weights = torch.as_tensor(
        np.random.default_rng(8).integers(1, 3, (2, 200)), dtype=torch.float32
    )
    wide = copy.deepcopy(model)
    model.purify_(x, phi, weights=weights, roughness=band)
    monkeypatch.setattr(ensemble_module, "DENSE_COLUMNS", 0)
    wide.purify_(x, phi, weights=weights, roughness=band)
    assert float(model.shift_w.abs().max()) > 1e-2  # there was a main effect to move
    torch.testing.assert_close(wide.shift_w, model.shift_w, atol=2e-5, rtol=0)
    torch.testing.assert_close(wide.shift_c, model.shift_c, atol=2e-5, rtol=0)
    torch.testing.assert_close(wide.shift_nan, model.shift_nan, atol=2e-5, rtol=0)
    if monotone:
        assert float(wide.shift_w[sign != 0].abs().max()) == 0.0


# -- the steps of many pieces ----------------------------------------------------------------
@pytest.mark.parametrize("piece_steps", [False, True])
def test_one_adam_step_moves_each_piece_by_lr_over_its_pieces(piece_steps):
    """Adam's first step is lr * g / (|g| + eps): each element moves by lr (its gradient's sign)
    unless `piece_steps` scales w_k by 1 / (pieces of its feature) and b_k by 1 / (pieces)."""
    rng = np.random.default_rng(9)
    n, pieces = 64, [3, 5]
    X = rng.uniform(size=(n, 2))
    knots = fit_knots(X, pieces, "uniform")
    parts = phi_compact(torch.as_tensor(X), compact_layout(knots))
    f, _, _ = knots.layout()
    feature, mask = torch.as_tensor(f)[None], torch.ones(1, len(f))
    w = torch.as_tensor(rng.normal(size=(1, len(f))), dtype=torch.float32)  # omega's gradient
    additive = AdditiveEnsemble(feature, mask, 2, w)
    model = PiLiDEnsemble(additive, None, 1)
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    data = EnsembleData(
        x=torch.zeros(1, n, 2),
        y=torch.as_tensor(rng.normal(3.0, 1.0, size=(1, n)), dtype=torch.float32),
        phi=tuple(p[None] for p in parts),
    )
    lr = 0.01
    cfg = TrainConfig("regression", lr=lr, batch_size=n, patience=None, piece_steps=piece_steps)
    train_ensemble(model, data, [Phase("train", 1, early_stopping=False)], cfg, [0])
    moved = {k: (v.detach() - before[k]).abs()[0] for k, v in model.named_parameters()}
    per_piece = np.array([pieces[j] for j in f], dtype=np.float64)
    expected_w = lr / per_piece if piece_steps else np.full(len(f), lr)
    expected_b = lr / len(f) if piece_steps else lr
    np.testing.assert_allclose(moved["additive.w"].numpy(), expected_w, rtol=1e-3)
    np.testing.assert_allclose(moved["additive.b"].numpy(), expected_b, rtol=1e-3)
    np.testing.assert_allclose(moved["additive.omega"].numpy(), lr, rtol=1e-3)  # never scaled


@pytest.mark.slow
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_the_defaults_do_not_diverge_on_50_features_at_few_epochs(task):
    """Before: Adam's first steps on 50 x 40 pieces wrecked the least-squares start (600 rows:
    a regression's training MSE 65 times the target's variance after one epoch, a
    TrainingDivergedError at 1 and 2 epochs; the classifier's training accuracy 0.82)."""
    if task == "regression":
        X, y = make_regression(n_samples=600, n_features=50, noise=1.0, random_state=0)
        make = PiLiDRegressor
    else:
        X, y = make_classification(n_samples=600, n_features=50, random_state=0)
        make = PiLiDClassifier
    for epochs in (1, 2, 3, 5):
        est = make(epochs=epochs, random_state=0).fit(X, y)  # raises if a member diverged
        assert est.diverged_ is None
        raw = est.predict(X) if task == "regression" else est.predict_proba(X)[:, 1]
        assert np.all(np.isfinite(raw))
        assert est.score(X, y) > (0.5 if task == "regression" else 0.75)  # far from a constant


def test_only_the_diverged_trials_train_again_with_steps_scaled_by_their_pieces(monkeypatch):
    """With a roughness penalty, a trial whose training diverged trains again with
    ``piece_steps`` (and a warning); the other trials keep the ensemble's first run, bit for bit.
    The first run's verdict is planted: trial 1 of 3 "diverged"."""
    X, y = make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)
    params = dict(epochs=3, n_bags=1, hidden_layers=(8,), gamma=6, smoothness=0.1, pairs=0)

    real, real_train = batched_module.divergence_reasons, batched_module.train_ensemble

    def fit(plant):
        ests = [PiLiDRegressor(random_state=s, **params) for s in range(3)]
        calls = []

        def planted(*args, **kwargs):
            reasons = list(real(*args, **kwargs))
            calls.append(len(reasons))
            if plant and len(calls) == 1:
                reasons[1] = "planted"
            return reasons

        monkeypatch.setattr(batched_module, "divergence_reasons", planted)
        steps = []

        def train(model, data, phases, cfg, seeds):
            steps.append((cfg.piece_steps, len(seeds)))
            return real_train(model, data, phases, cfg, seeds)

        monkeypatch.setattr(batched_module, "train_ensemble", train)
        fitting_module.fit_batched(ests, [X] * 3, [y] * 3)
        return ests, steps

    plain, plain_steps = fit(plant=False)
    with pytest.warns(TrainingDivergedWarning, match="1 of 3 trials"):
        again, steps = fit(plant=True)
    assert plain_steps == [(False, 3)] and steps == [(False, 3), (True, 1)]
    for t in (0, 2):
        np.testing.assert_array_equal(again[t].predict(X), plain[t].predict(X))
    assert again[1].diverged_ is None
    assert not np.array_equal(again[1].predict(X), plain[1].predict(X))


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="an address-space limit (RLIMIT_AS)")
def test_a_150_feature_fit_with_the_defaults_runs_in_3_gib_of_address_space():
    """150 features x 40 pieces = 6,000 columns: the dense (T, P, P) penalty alone asked for
    4.6 GB (16 bag members x 6,000^2 float64) and the P x P normal equations as much again."""
    code = textwrap.dedent(
        """
        import resource
        limit = 3 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        import numpy as np
        from pilid import PiLiDRegressor
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 150))
        y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=300)
        est = PiLiDRegressor(epochs=1, random_state=0).fit(X, y)
        print(est.score(X, y))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) > 0.5
