"""The least-squares start solved once per fit (`pilid.train.additive_start._build_additive`'s
`starts`): ``pairs="auto"`` trains a bag per candidate, whose members read the same rows, target
and pieces (their pair terms start at 0), so each member's start is solved once; the fit is the
one that solves it in every candidate."""

import numpy as np
import pytest

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.train import additive_start

BAG = dict(hidden_layers=(8,), n_bags=4, random_state=0, device="cpu", epochs=6, pairs="auto")


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 4))
    y = np.sin(X[:, 0]) + 1.5 * X[:, 1] * X[:, 2] + 0.3 * X[:, 3] + rng.normal(0, 0.3, n)
    return X, y


def _counted(monkeypatch, cached: bool) -> list:
    """The targets `lstsq_init` solves for, in order; without `cached` no start is kept."""
    solved = []
    solve = additive_start.lstsq_init

    def counting(design, target, *args, **kwargs):
        solved.append(target.detach().clone())
        return solve(design, target, *args, **kwargs)

    monkeypatch.setattr(additive_start, "lstsq_init", counting)
    if not cached:
        monkeypatch.setattr(additive_start, "_start_key", lambda wide, inputs: None)
    return solved


@pytest.mark.parametrize("cls", [PiLiDRegressor, PiLiDClassifier])
def test_each_members_start_is_solved_once_and_the_fit_is_unchanged(monkeypatch, cls):
    X, y = _data()
    if cls is PiLiDClassifier:
        y = (y > np.median(y)).astype(int)
    with monkeypatch.context() as patch:
        solved_every_time = _counted(patch, cached=False)
        every_time = cls(**BAG).fit(X, y)
    solved_once = _counted(monkeypatch, cached=True)
    once = cls(**BAG).fit(X, y)
    # two candidates (no pairs, FAST's pairs) of a bag of 4: 8 solves, of which 4 distinct
    assert len(every_time.shape_choice_) == 2
    assert len(solved_every_time) == 2 * BAG["n_bags"]
    assert len(solved_once) == BAG["n_bags"]
    for a, b in zip(solved_once, solved_every_time[: BAG["n_bags"]]):
        assert np.array_equal(a.numpy(), b.numpy())
    assert every_time.shape_choice_.equals(once.shape_choice_)
    raw = getattr(once, "predict_proba", once.predict)
    raw_every_time = getattr(every_time, "predict_proba", every_time.predict)
    assert np.array_equal(raw(X), raw_every_time(X))


def test_a_start_is_kept_by_what_it_reads():
    """Equal inputs give equal keys; any change of rows, target, weights or penalty another."""
    import torch

    g = torch.Generator().manual_seed(0)
    col = torch.randint(0, 5, (50, 3), generator=g)
    frac = torch.rand(50, 3, generator=g)
    base = [col, frac, torch.arange(6), torch.ones(6), None, torch.rand(50, generator=g)]
    key = additive_start._start_key(False, [*base, None, None])
    assert key == additive_start._start_key(
        False, [t if t is None else t.clone() for t in base] + [None, None]
    )
    assert key != additive_start._start_key(True, [*base, None, None])
    changed = frac.clone()
    changed[7, 1] += 1e-6
    assert key != additive_start._start_key(False, [col, changed, *base[2:], None, None])
    assert key != additive_start._start_key(False, [*base, torch.ones(1, 50), None])
    assert key != additive_start._start_key(False, [*base, None, torch.zeros(1, 5)])
