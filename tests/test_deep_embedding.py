"""The embedded deep part (`pilid.nn.embedding`, TabM's) and the levers ``deep_embedding`` and
``deep_dropout`` of the studies (`studies._levers`; screened): the embeddings against an
independent computation from dense Phi (Definition 2), the MLP without them against PiLiD's,
the neutral values against PiLiD's fit, and dropout's fits reproduced from the seed.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pilid import PiLiDRegressor
from pilid.nn.embedding import embeddings
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact, phi_numpy
from studies._levers import with_levers
from studies._levers.deep_embedding import EmbeddedMLP
from studies.dev_suite import CANDIDATE_BASE

SMALL = dict(hidden_layers=(8,), n_bags=2, random_state=0, device="cpu", epochs=8, pairs=0)
SMALL.update(CANDIDATE_BASE)  # the deep input the levers were measured on ("auto" refuses them)


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 4, n)  # a discrete column
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def test_embeddings_are_phi_times_the_tables_plus_the_linear_embedding():
    X, _ = _table(300)
    X[:7, 1] = np.nan  # missing values read M_j
    knots = fit_knots(X, 6, "quantile", categorical=np.array([False, False, True]))
    T, d, m = 2, 3, X.shape[1]
    gen = torch.Generator().manual_seed(1)
    E = torch.randn(T, knots.n_columns, d, generator=gen, dtype=torch.float64)
    w, b, M = (torch.randn(T, m, d, generator=gen, dtype=torch.float64) for _ in range(3))
    phi = phi_compact(torch.as_tensor(X), compact_layout(knots, dtype=torch.float64))
    phi = tuple(p.unsqueeze(0).expand(T, *p.shape) for p in phi)
    starts = torch.as_tensor(knots.starts).expand(T, m)
    pieces = torch.as_tensor(knots.n_pieces, dtype=torch.float64).expand(T, m)
    got = embeddings(E, w, b, M, starts, pieces, phi).numpy()

    dense = np.nan_to_num(phi_numpy(X, knots))  # a missing value: no piece
    feature = knots.layout()[0]
    miss = np.isnan(X).astype(float)
    for t in range(T):
        for j in range(m):
            cols = feature == j
            u = dense[:, cols].sum(1) / knots.n_pieces[j] - 0.5
            want = dense[:, cols] @ E[t, cols].numpy() + np.outer(u, w[t, j]) + b[t, j].numpy()
            want += np.outer(miss[:, j], M[t, j])
            np.testing.assert_allclose(got[t, :, j], want, rtol=1e-12, atol=1e-12)


def test_without_embeddings_and_dropout_the_mlp_is_pilids():
    seeds = [3, 11]
    x = torch.randn(2, 50, 4, generator=torch.Generator().manual_seed(0))
    ours = EmbeddedMLP(4, (16, 8), None, seeds, None, None, 0.0)
    plain = EnsembleMLP(4, (16, 8), None, seeds)
    for a, c in zip([*ours.weights, *ours.biases], [*plain.weights, *plain.biases]):
        assert torch.equal(a, c)  # the same start from the trials' generators
    with torch.no_grad():
        plain.out_w.normal_()
        ours.out_w.copy_(plain.out_w)
        torch.testing.assert_close(ours(x), plain(x))


def test_the_neutral_values_fit_pilid_bit_for_bit():
    X, y = _table()
    ours = with_levers(PiLiDRegressor)(**SMALL, deep_dropout=0.0).fit(X, y)
    theirs = PiLiDRegressor(**SMALL).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.slow
@pytest.mark.parametrize("levers", [{"deep_dropout": 0.2}, {"deep_embedding": 4}])
def test_the_lever_changes_the_fit_and_a_refit_reproduces_it(levers):
    X, y = _table()
    cls = with_levers(PiLiDRegressor)
    first = cls(**SMALL, **levers).fit(X, y).predict(X)
    again = cls(**SMALL, **levers).fit(X, y).predict(X)
    plain = PiLiDRegressor(**SMALL).fit(X, y).predict(X)
    np.testing.assert_array_equal(first, again)
    assert np.max(np.abs(first - plain)) > 1e-4


def test_embeddings_refuse_monotone_constraints_with_the_fix():
    X, y = _table(100)
    model = with_levers(PiLiDRegressor)(**SMALL, deep_embedding=4, monotone_constraints=[1, 0, 0])
    with pytest.raises(ValueError, match="set deep_embedding=None"):
        model.fit(X, y)


def test_the_clipped_inputs_are_realmlps_smooth_clip_of_x():
    seeds = [5]
    x = 4 * torch.randn(1, 60, 3, generator=torch.Generator().manual_seed(2))
    ours = EmbeddedMLP(3, (8,), None, seeds, None, None, 0.0, clip=3.0)
    plain = EnsembleMLP(3, (8,), None, seeds)
    with torch.no_grad():
        plain.out_w.normal_()
        ours.out_w.copy_(plain.out_w)
        clipped = x / torch.sqrt(1.0 + (x / 3.0) ** 2)
        assert float(clipped.abs().max()) < 3.0
        torch.testing.assert_close(ours(x), plain(clipped))
