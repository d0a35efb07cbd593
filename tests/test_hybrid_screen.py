"""The screening's variants (`studies.hybrid_screen.make_variant`): the glass mode's choice among
0 pair terms, the default's 10 and EBM's budget asks for those counts (EBM 0.7.8's 3 m or 5 m,
capped at the m (m - 1) / 2 pairs there are), and fitted, keeps the candidate it validated best
with the pair terms that candidate has."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from studies import hybrid_screen


@pytest.mark.parametrize(
    ("task", "m", "counts"),
    [
        ("classification", 19, [0, 10, 57]),  # 3 x 19 = 57 of the 171 pairs there are
        ("regression", 9, [0, 10, 36]),  # 5 x 9 = 45, capped at the 36 there are
        ("regression", 4, [0, 6]),  # 4 columns: 6 pairs, fewer than the default's 10
    ],
)
def test_the_pairs_choice_asks_for_none_the_defaults_and_ebms_budget(task, m, counts):
    estimator, asked = hybrid_screen.make_variant("glass_pairs_choice_smooth_auto", task, 0, m)
    assert estimator.pairs == counts
    assert estimator.hidden_layers is None and estimator.smoothness == "auto"
    assert asked == -1  # a choice, as "auto" is written


def test_the_pairs_choice_finds_a_planted_pair_and_keeps_the_chosen_candidates_terms():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(1200, 4)), columns=list("abcd"))
    y = X.a + X.b**2 + 3 * X.a * X.c + 0.1 * rng.normal(size=len(X))
    estimator, _ = hybrid_screen.make_variant("glass_pairs_choice_smooth_auto", "regression", 0, 4)
    estimator.set_params(n_bags=2, epochs=60).fit(X, y)
    choice = pd.DataFrame(estimator.shape_choice_)
    assert sorted(set(choice["pairs"])) == [0, 6]  # every count, with and without the penalty
    assert len(choice) == 4
    best = choice.loc[choice["val_loss"].idxmin()]
    assert bool(best["chosen"]) and choice["chosen"].sum() == 1
    assert len(estimator.pairs_) == best["pairs"] == 6  # a pair interacts: the terms win
    assert estimator.smoothness_ == best["smoothness"]
    assert ("a", "c") in {tuple(sorted(p)) for p in estimator.pairs_}
