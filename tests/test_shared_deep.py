"""A bag whose members share one MLP (the lever ``deep_ensemble="shared"`` of the studies,
`studies._levers.shared_mlp`: BatchEnsemble as TabM trains its members; measured on the
development suite and not adopted).

The shared weights are checked against an independent BatchEnsemble written here with one W
tensor (not one slice per member) and trained with the same Adam steps; the folding of the
adapters against the unfolded outputs and the plain MLP's; the groups of a bag's trials; the
estimator for what a user reads of a bag (members that differ, bands, explain's terms adding
up, pickling)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from pilid import PiLiDRegressor
from pilid.errors import PilidError
from pilid.models.fitting import fit_batched
from pilid.nn.mlp import EnsembleMLP
from pilid.streams import STREAM_DEEP, trial_generator
from studies._levers import PiLiDLeverClassifier as LeverClassifier
from studies._levers import PiLiDLeverRegressor as LeverRegressor
from studies._levers.shared_mlp import SHARED_BAG, SharedEnsembleMLP, bag_groups, fold
from studies.dev_suite import CANDIDATE_BASE

SMALL = dict(hidden_layers=(8, 4), gamma=4, epochs=6, batch_size=64, random_state=0, pairs=0)
SMALL.update(CANDIDATE_BASE)  # the deep input the levers were measured on ("auto" refuses them)


def _reference_batch_ensemble(n_features, sizes, seeds):
    """BatchEnsemble of k = len(seeds) members written out: one W per layer (drawn from the
    first member's generator, He-normal), per member adapters r (the first layer's: random signs
    drawn next from the member's generator; the others 1) and s (1), a bias and an output layer
    (0)."""
    dims = (n_features, *sizes)
    g0 = trial_generator(seeds[0], STREAM_DEEP)
    W = [
        torch.nn.Parameter(torch.randn(a, b, generator=g0) * (2.0 / a) ** 0.5)
        for a, b in zip(dims[:-1], dims[1:])
    ]
    gens = [g0] + [trial_generator(s, STREAM_DEEP) for s in seeds[1:]]
    k = len(seeds)
    signs = [torch.randint(0, 2, (1, n_features), generator=g).float() * 2 - 1 for g in gens]
    r = [torch.nn.Parameter(torch.stack(signs))]
    r += [torch.nn.Parameter(torch.ones(k, 1, d)) for d in dims[1:-1]]
    s = [torch.nn.Parameter(torch.ones(k, 1, d)) for d in dims[1:]]
    b = [torch.nn.Parameter(torch.zeros(k, 1, d)) for d in dims[1:]]
    out_w = torch.nn.Parameter(torch.zeros(k, dims[-1], 1))
    out_b = torch.nn.Parameter(torch.zeros(k, 1, 1))

    for w in W:  # the one W learns from the mean of the members' losses (TabM's)
        w.register_hook(lambda g: g / k)

    def forward(x):  # x (k, B, m)
        h = x
        for w, ri, si, bi in zip(W, r, s, b):
            h = torch.relu(torch.matmul(h * ri, w) * si + bi)  # one W for every member
        return (torch.bmm(h, out_w) + out_b).squeeze(-1)

    return forward, [*W, *r, *s, *b, out_w, out_b], W


def test_shared_weights_train_as_one_tensor_would():
    seeds = [11, 12, 13]
    torch.manual_seed(0)
    x = torch.randn(3, 32, 5)
    y = torch.randn(3, 32)
    ours = SharedEnsembleMLP(5, (6, 4), None, seeds, groups=[0, 0, 0])
    forward, params, W = _reference_batch_ensemble(5, (6, 4), seeds)
    with torch.no_grad():  # start the heads away from zero so every weight moves
        for p in (ours.out_w, params[-2]):
            p.copy_(torch.linspace(-1, 1, p.numel()).view_as(p))
    for w_ours, w_ref in zip(ours.weights, W):  # the same start, in every member's slice
        assert all(torch.equal(w_ours[t], w_ref.detach()) for t in range(3))
    opt_ours = torch.optim.Adam(ours.parameters(), lr=1e-2)
    opt_ref = torch.optim.Adam(params, lr=1e-2)
    for _ in range(5):
        for model, opt in ((ours, opt_ours), (forward, opt_ref)):
            opt.zero_grad()
            ((model(x) - y) ** 2).mean(1).sum().backward()
            opt.step()
    for w_ours, w_ref in zip(ours.weights, W):
        for t in range(3):  # every slice is the one W, trained on the members' mean loss
            torch.testing.assert_close(w_ours[t], w_ref.detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours(x), forward(x), rtol=1e-5, atol=1e-6)


def test_groups_share_within_not_across_and_folding_keeps_the_outputs():
    ours = SharedEnsembleMLP(4, (5,), None, [1, 2, 3, 4], groups=["a", "a", "b", "b"])
    x = torch.randn(4, 7, 4)
    with torch.no_grad():
        ours.out_w.normal_()
    opt = torch.optim.Adam(ours.parameters(), lr=1e-2)
    for _ in range(3):
        opt.zero_grad()
        ours(x).pow(2).sum().backward()
        opt.step()
    w = ours.weights[0]
    assert torch.equal(w[0], w[1]) and torch.equal(w[2], w[3])
    assert not torch.allclose(w[1], w[2])  # group b drew its W from member 3's generator
    with torch.no_grad():
        trained = ours(x)  # training mode: through the adapters
        ours.eval()
        folded = ours(x)  # eval mode: through the folded weights
        plain = fold(ours)
        plain.eval()
        assert isinstance(plain, EnsembleMLP)
        assert torch.equal(plain(x), folded)  # the plain MLP's outputs bit for bit
        torch.testing.assert_close(folded, trained, rtol=1e-5, atol=1e-5)
        # the folded weights are (r W) o s per member, computed here from the parameters
        for t in range(4):
            r, s_ = ours.adapters_in[0][t, 0], ours.adapters_out[0][t, 0]
            expected = ours.weights[0][t] * r[:, None] * s_[None, :]
            torch.testing.assert_close(plain.weights[0][t], expected)
    assert set(plain.state_dict()) == set(EnsembleMLP(4, (5,), None, [1, 2, 3, 4]).state_dict())


def test_a_bags_trials_are_its_groups_and_another_bag_is_refused():
    member = LeverRegressor()
    assert bag_groups(member, [7, 8]) is None  # no bag: each trial its own MLP
    setattr(member, SHARED_BAG, (5, 6, 7))
    assert bag_groups(member, [5, 6, 7]) == [0, 0, 0]
    assert bag_groups(member, [6, 7]) == [0, 0]  # part of the bag (a choice's first members)
    assert bag_groups(member, [9]) == [0]  # one trial (a member's own module)
    member._softmax_classes = 3  # K = 3 classes: bag member b is 3 trials, class k's bag k
    assert bag_groups(member, [5, 5, 5, 6, 6, 6]) == [0, 1, 2, 0, 1, 2]
    for other in ([5, 5, 5, 5, 5, 5], [5, 5, 5, 9, 9, 9], [5, 6, 5]):
        with pytest.raises(PilidError, match="fit each estimator on its own"):
            bag_groups(member, other)


def test_two_shared_bags_in_one_ensemble_are_refused_in_one_line():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=120)
    ests = [LeverRegressor(n_bags=2, deep_ensemble="shared", **SMALL) for _ in range(2)]
    with pytest.raises(PilidError, match="fit each estimator on its own") as info:
        fit_batched(ests, [X, X], [y, y])
    assert "\n" not in str(info.value)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(600, 3))
    y = np.sin(1.5 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=600)
    shared = LeverRegressor(n_bags=4, deep_ensemble="shared", **SMALL).fit(X, y)
    return X, y, shared


def test_a_shared_bag_is_a_bag(regression):
    X, y, shared = regression
    assert len(shared.estimators_) == 4
    assert not any(hasattr(m, SHARED_BAG) for m in shared.estimators_)
    assert all(type(m.module_.deep) is EnsembleMLP for m in shared.estimators_)  # folded
    first = [m.module_.deep.weights[0].detach() for m in shared.estimators_]
    assert all(not torch.allclose(first[0], w) for w in first[1:])  # adapters folded in
    # Eq. 9 for the bag: intercept + contributions + deep part is the prediction
    intercept, contributions, deep = shared.decompose(X[:50])
    total = intercept + contributions.sum(1) + deep
    np.testing.assert_allclose(total, shared.predict(X[:50]), rtol=1e-5, atol=1e-5)
    bands = shared.shape_functions()
    assert {"lower", "upper"} <= set(bands.columns)
    assert (bands["upper"] - bands["lower"]).max() > 0  # members with shapes of their own
    again = pickle.loads(pickle.dumps(shared))
    np.testing.assert_array_equal(again.predict(X), shared.predict(X))


def test_the_neutral_lever_fits_what_the_public_estimator_fits(regression):
    X, y, _ = regression
    public = PiLiDRegressor(n_bags=3, **SMALL).fit(X, y)
    hooked = LeverRegressor(n_bags=3, deep_ensemble="independent", **SMALL).fit(X, y)
    np.testing.assert_array_equal(public.predict(X), hooked.predict(X))


def test_a_shared_bag_classifies_two_and_three_classes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3))
    y2 = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
    y3 = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5])
    for y in (y2, y3):
        est = LeverClassifier(n_bags=3, deep_ensemble="shared", **SMALL).fit(X, y)
        proba = est.predict_proba(X)
        assert proba.shape == (500, len(np.unique(y)))
        np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-6)
        assert (est.predict(X) == y).mean() > 0.7


def test_every_member_in_the_computation_teaches_the_shared_weights():
    seeds = [5, 6, 7]
    x = torch.randn(3, 16, 4)
    ours = SharedEnsembleMLP(4, (5,), None, seeds, groups=[0, 0, 0])
    with torch.no_grad():
        ours.out_w.normal_()
    # each member's own gradient of its loss with respect to W, written out for one member
    # (an independent computation: layer ((x o r) W) o s + b, then the output layer)
    own = []
    for t in range(3):
        w = ours.weights[0][t].detach().clone().requires_grad_(True)
        r, s_, b = ours.adapters_in[0][t], ours.adapters_out[0][t], ours.biases[0][t]
        h = torch.relu((x[t] * r) @ w * s_ + b)
        loss = (h @ ours.out_w[t] + ours.out_b[t]).pow(2).sum()
        own.append(torch.autograd.grad(loss, w)[0])
    ours.zero_grad()
    ours(x).pow(2).sum().backward()
    expected = (own[0] + own[1] + own[2]) / 3  # the mean over the members: all three train
    for t in range(3):
        torch.testing.assert_close(ours.weights[0].grad[t], expected, rtol=1e-5, atol=1e-7)
