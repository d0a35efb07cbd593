"""The lever ``deep_choice`` of the studies (`studies._levers.estimators`; screened): the
candidates with the deep part free of the penalty and embedded train with their own deep part
(the engine stacks only units that build it alike), the choice keeps the better by validation
loss, and its chosen candidate is the fit of those parameters alone."""

from __future__ import annotations

import numpy as np
import pytest

from pilid import PiLiDRegressor
from studies._levers import with_levers
from studies._levers.deep_embedding import EmbeddedMLP

SMALL = dict(hidden_layers=(8,), n_bags=2, random_state=0, device="cpu", epochs=8)


def _table(n=500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.1 * rng.normal(size=n)
    return X, y


def test_the_embedded_candidates_train_their_own_deep_part_and_the_choice_is_theirs_alone():
    X, y = _table()
    Lever = with_levers(PiLiDRegressor)
    both = Lever(deep_choice=4, **SMALL).fit(X, y)
    plain = Lever(**SMALL).fit(X, y)
    free = Lever(reg_groups="additive", deep_embedding=4, **SMALL).fit(X, y)
    choice = both.shape_choice_
    embedded = choice["deep_embedding"].notna().to_numpy()
    assert embedded.sum() == (~embedded).sum() == len(plain.shape_choice_)
    # each half of the candidates is the fit of its own parameters (their validation losses)
    np.testing.assert_allclose(choice.val_loss[~embedded], plain.shape_choice_.val_loss, rtol=1e-5)
    np.testing.assert_allclose(choice.val_loss[embedded], free.shape_choice_.val_loss, rtol=1e-5)
    assert choice.val_loss[embedded].min() != choice.val_loss[~embedded].min()
    best = choice.val_loss.idxmin()
    assert choice.chosen.to_numpy().nonzero()[0].tolist() == [best]
    chosen_embedded = bool(embedded[best])
    deep = both.estimators_[0].module_.deep
    deep = getattr(deep, "deep", deep)  # inside the pair terms' holder when there are pairs
    assert isinstance(deep, EmbeddedMLP) == chosen_embedded
    alone = free if chosen_embedded else plain
    np.testing.assert_allclose(both.predict(X), alone.predict(X), rtol=1e-5, atol=1e-6)


def test_deep_choice_refuses_the_other_deep_levers_with_the_fix():
    X, y = _table(120)
    with pytest.raises(ValueError, match="deep_choice chooses") as info:
        with_levers(PiLiDRegressor)(deep_choice=4, deep_dropout=0.1, **SMALL).fit(X, y)
    assert "\n" not in str(info.value)
