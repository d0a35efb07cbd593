"""The lever ``deep_heads`` of the studies (`studies._levers.deep_heads`; one additive part with k
deep heads, screened): the heads against independent MLPs of Eq. 6-8, the spread term against the
mean of the heads' own losses, the fitted trial's copy against the ensemble's heads, and the
refusal beside the other levers that build the deep part.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.nn.mlp import EnsembleMLP
from studies._levers import with_levers
from studies._levers.deep_heads import LOGISTIC_SPREAD, HeadsMLP, HeadSpread, head_generator
from studies.dev_suite import CANDIDATE_BASE

SMALL = dict(hidden_layers=(8,), n_bags=1, random_state=0, device="cpu", epochs=6, pairs=0)
SMALL.update(CANDIDATE_BASE)  # the deep input the levers were measured on ("auto" refuses them)


def _table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    return X, y


def test_each_head_is_an_mlp_of_its_own_start_and_head_zero_is_pilids():
    seeds, k = [3, 11], 3
    x = torch.randn(2, 40, 4, generator=torch.Generator().manual_seed(0))
    heads = HeadsMLP(4, (16, 8), None, seeds, k)
    with torch.no_grad():  # give the output layers weights: they start at zero
        heads.out_w.normal_(generator=torch.Generator().manual_seed(1))
        heads.out_b.normal_(generator=torch.Generator().manual_seed(2))
    plain = EnsembleMLP(4, (16, 8), None, seeds)
    for w, pw in zip(heads.weights, plain.weights):  # head 0 starts as PiLiD's MLP
        torch.testing.assert_close(w[:, 0], pw, rtol=0, atol=0)
    out = heads.heads(x)
    assert out.shape == (2, k, 40)
    for t, seed in enumerate(seeds):
        for i in range(k):
            g = head_generator(seed, i)
            W1 = torch.randn(4, 16, generator=g) * (2 / 4) ** 0.5
            W2 = torch.randn(16, 8, generator=g) * (2 / 16) ** 0.5
            torch.testing.assert_close(heads.weights[0][t, i], W1, rtol=0, atol=0)
            h = torch.relu(torch.relu(x[t] @ W1) @ W2)
            want = h @ heads.out_w[t, i, :, 0] + heads.out_b[t, i, 0, 0]
            torch.testing.assert_close(out[t, i], want, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(out[:, 0], out[:, 1])  # the heads start apart
    torch.testing.assert_close(heads(x), out.mean(1))


def test_loss_of_the_mean_plus_the_spread_is_the_mean_of_the_heads_losses():
    gen = torch.Generator().manual_seed(0)
    heads = HeadsMLP(3, (6,), None, [5], 4)
    with torch.no_grad():
        heads.out_w.normal_(generator=gen)
    x = torch.randn(1, 30, 3, generator=gen)
    a = torch.randn(1, 30, generator=gen)  # the additive part's output
    y = torch.randn(1, 30, generator=gen)

    class Model:  # what the spread term reads: the deep part
        deep = heads

    heads.train()
    d = heads(x)
    term = HeadSpread(1.0)(Model(), x)
    got = ((a + d - y) ** 2).mean(1) + term
    want = ((a.unsqueeze(1) + heads.heads(x) - y.unsqueeze(1)) ** 2).mean((1, 2))
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    heads.eval()
    heads(x)
    assert HeadSpread(LOGISTIC_SPREAD)(Model(), x) is None  # no term outside training


def test_the_fitted_trials_copy_predicts_the_ensembles_heads_mean():
    X, y = _table()
    est = with_levers(PiLiDRegressor)(deep_heads=3, **SMALL).fit(X, y)
    deep = est.module_.deep
    assert isinstance(deep, HeadsMLP) and deep.k == 3
    assert deep.weights[0].shape == (1, 3, X.shape[1], 8)
    x = torch.randn(1, 25, X.shape[1], generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        heads = deep.heads(x)
        torch.testing.assert_close(deep(x), heads.mean(1))
    assert heads.std(1).mean() > 0  # trained apart from different starts
    refit = with_levers(PiLiDRegressor)(deep_heads=3, **SMALL).fit(X, y)
    np.testing.assert_array_equal(refit.predict(X), est.predict(X))
    plain = with_levers(PiLiDRegressor)(**SMALL).fit(X, y)
    assert not np.allclose(plain.predict(X), est.predict(X))


def test_classification_trains_with_the_heads():
    X, y = _table()
    est = with_levers(PiLiDClassifier)(deep_heads=2, **SMALL).fit(X, (y > 0).astype(int))
    proba = est.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(1), 1.0)


@pytest.mark.parametrize(
    "other", [{"deep_embedding": 4}, {"deep_dropout": 0.1}, {"deep_ensemble": "shared"}]
)
def test_heads_refuse_the_other_deep_levers_with_the_fix(other):
    X, y = _table(120)
    with pytest.raises(ValueError, match="deep_heads builds the deep part") as info:
        with_levers(PiLiDRegressor)(deep_heads=2, **{**SMALL, **other}).fit(X, y)
    assert "\n" not in str(info.value)
