"""A bag's one forward (`pilid.nn.bag`): the members' mean output in one call, for every
structure it reduces (additive part with missing and unseen values, pair terms, MLP, either part
alone), the member loop where it does not (PiLiB's gated blocks) or where a pickle predates it."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import torch

from pilid import MLPRegressor, PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.nn.bag import BagForward, bag_forward
from pilid.train.version import ENGINE_VERSION

KW = dict(epochs=4, random_state=0, batch_size=128, patience=None)


def _table(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.uniform(-1, 1, n),
            "c": rng.normal(size=n),
            "kind": rng.choice(["x", "y", "z"], n),
        }
    )
    X.loc[rng.random(n) < 0.1, "a"] = np.nan  # missing values: their own contribution
    y = np.sin(2 * X["b"]) + X["b"] * X["c"] + (X["kind"] == "y") + rng.normal(0, 0.1, n)
    return X, y.to_numpy()


def _members_mean(est, X) -> np.ndarray:
    """The bag's raw output as the mean of its members', each run alone (independent path)."""
    Xv = est._check_fitted_X(X)
    x, phi = est._inputs(Xv)
    with torch.no_grad():
        raws = [m.module_(x[None], phi)[0].double().numpy() for m in est.estimators_]
    return np.mean(raws, axis=0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: PiLiDRegressor(n_bags=3, pairs=3, **KW),  # additive + pairs + MLP
        lambda: PiLiDRegressor(n_bags=3, pairs=0, **KW),  # additive + MLP
        lambda: PiLiDRegressor(n_bags=3, pairs=3, hidden_layers=None, **KW),  # + pairs alone
        lambda: PiLiDRegressor(n_bags=3, pairs=0, hidden_layers=None, **KW),  # additive alone
        lambda: PiLiDRegressor(n_bags=3, monotone_constraints={"b": 1}, **KW),
        lambda: MLPRegressor(n_bags=3, **KW),  # the deep part alone
    ],
)
def test_the_bags_one_forward_is_the_mean_of_its_members(make):
    X, y = _table()
    est = make().fit(X, y)
    assert isinstance(est.fitted_.heads[0].bag, BagForward)
    Xn = X.copy()
    Xn.loc[:5, "kind"] = "new"  # a level fit did not see: the unseen value
    Xn.loc[6:9, "a"] = np.nan
    with pytest.warns(UserWarning, match="not seen in fit"):
        got = est._raw(est._check_fitted_X(Xn))
    with pytest.warns(UserWarning, match="not seen in fit"):
        want = _members_mean(est, Xn)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * max(1.0, np.abs(want).max()))
    assert np.std(want) > 0.1  # the model is not a constant


def test_a_classifier_bag_averages_its_members_logits_in_one_call():
    X, y = _table(seed=1)
    clf = PiLiDClassifier(n_bags=4, **KW).fit(X, y > np.median(y))
    assert isinstance(clf.fitted_.heads[0].bag, BagForward)
    want = _members_mean(clf, X)
    np.testing.assert_allclose(clf.decision_function(X), want, rtol=0, atol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], 1 / (1 + np.exp(-want)), atol=1e-6)


def test_pair_grids_of_members_with_other_pairs_add_up():
    """Members that hold other pairs: each distinct pair once, its grid the members' sum / n."""
    X, y = _table(seed=2)
    est = PiLiDRegressor(n_bags=3, pairs=3, hidden_layers=None, **KW).fit(X, y)
    modules = [m.module_ for m in est.estimators_]
    other = modules[1].deep.pairs
    with torch.no_grad():  # member 1 gets another first pair, with a grid of its own
        taken = {tuple(p) for m in modules for p in m.deep.pairs.pairs[0].tolist()}
        free = [(a, b) for a in range(4) for b in range(a + 1, 4) if (a, b) not in taken]
        other.pairs[0, 0] = torch.tensor(free[0])
        other.V[0, 0] = torch.randn(other.V.shape[2:], generator=torch.Generator().manual_seed(0))
    forward = bag_forward(modules)
    Xv = est._check_fitted_X(X)
    x, phi = est._inputs(Xv)
    with torch.no_grad():
        got = forward(x[None], phi)[0].double().numpy()
        want = np.mean([m(x[None], phi)[0].double().numpy() for m in modules], axis=0)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    distinct = {tuple(p) for m in modules for p in m.deep.pairs.pairs[0].tolist()}
    assert forward.pairs.pairs.shape[1] == len(distinct)


def test_gated_blocks_and_older_pickles_predict_member_by_member():
    X, y = _table(seed=3)
    pilib = PiLiBRegressor(n_bags=2, warmup_epochs=1, phase1_epochs=1, n_blocks=3, **KW)
    with pytest.warns(UserWarning):  # one epoch of phase 1 leaves blocks above max_order
        pilib.fit(X, y)
    assert pilib.fitted_.heads[0].bag is None  # gated blocks: not reduced
    members = np.mean([m.predict(X) for m in pilib.estimators_], axis=0)
    np.testing.assert_allclose(pilib.predict(X), members, rtol=0, atol=1e-12)
    est = PiLiDRegressor(n_bags=3, **KW).fit(X, y)
    now = est.predict(X)
    est.fitted_.heads[0].bag = None  # as a structure the bag's one forward does not reduce
    np.testing.assert_allclose(est.predict(X), now, rtol=0, atol=1e-5)


@pytest.mark.parametrize("n_bags", [1, 3])
def test_a_pickle_from_before_the_description_builds_it_and_predicts_the_same(n_bags):
    """A previous release's pickle holds the fitted attributes but no ``fitted_``: loading it
    builds the description from them, and it predicts what the fitted model predicted."""
    X, y = _table(seed=4)
    clf = PiLiDClassifier(n_bags=n_bags, pairs=2, **KW).fit(X, y > np.median(y))
    want = clf.predict_proba(X)
    old = pickle.loads(pickle.dumps(clf))
    del old.fitted_  # the state of a release before the description
    loaded = pickle.loads(pickle.dumps(old))
    assert loaded.fitted_ is not None and loaded.fitted_ is not clf.fitted_
    assert clf.fitted_.engine == ENGINE_VERSION and loaded.fitted_.engine is None  # not known
    np.testing.assert_array_equal(loaded.predict_proba(X), want)
    assert len(loaded.fitted_.heads) == 1


def test_the_pieces_counted_by_search_equal_the_traced_comparison():
    """`InputEncoding.phi` finds each value's piece with ``torch.searchsorted``, and with
    ``traced`` (the ONNX export) by a comparison: the same Phi for values between, on and beyond
    the characteristic points, missing (a column with missing values in fit) and NaN elsewhere
    (unseen), and the same prediction as the member-by-member path."""
    X, y = _table()
    est = PiLiDRegressor(n_bags=1, pairs=0, **KW).fit(X, y)
    encoding = est.fitted_.encoding
    Xv = est._check_fitted_X(X)
    points = np.concatenate([p for p in est.knots_.points])
    rng = np.random.default_rng(1)
    probe = Xv[rng.integers(0, len(Xv), 300)].copy()
    probe[:50, :2] = rng.choice(points, (50, 2))  # exactly on characteristic points
    probe[50:60, 1] = 1e6  # beyond the last point
    probe[60:70, 1] = -1e6  # before the first
    probe[70:80, 1] = np.nan  # no missing values in fit: unseen
    rows = torch.as_tensor(probe)
    searched = encoding.phi(rows)
    encoding.traced = True
    try:
        compared = encoding.phi(rows)
    finally:
        encoding.traced = False
    for a, b in zip(searched, compared):
        assert torch.equal(a, b)
    assert bool((searched[3][0, 70:80, 1] == 1).all())  # NaN in column b: unseen
    last = int(est.knots_.starts[1] + est.knots_.n_pieces[1] - 1)
    assert int(searched[0][0, 50:60, 1].max()) == last  # beyond: the last piece
