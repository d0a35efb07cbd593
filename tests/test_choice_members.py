"""The lever ``choice_members = k`` of the studies (`studies._levers`; not adopted): each
``pairs="auto"`` candidate trains the first k members of its bag, they choose, and only the
chosen candidate trains its other members.

Checked against independent computations: the losses listed are those of each candidate's first
k members, recomputed here from fits with the candidate's parameters fixed and ``n_bags=k``
(the held-out rows by the whole bag, each training row by the members that missed it); the
final bag holds all n members with the rows and seeds of a full bag of the chosen candidate,
and predicts as that bag does; and the members trained are 2k + (n - k), not 2n.
"""

from __future__ import annotations

import numpy as np
import pytest
from _choice import choice_loss, pair_data, trained_sizes  # tests/_choice.py

from pilid import PiLiDClassifier, PiLiDRegressor
from studies._levers import with_levers

SMALL = dict(hidden_layers=(8,), n_bags=5, random_state=0, device="cpu", epochs=12, pairs="auto")


def _first_members_loss(pairs, X, y, first):
    """A bag of the candidate's first members, fitted alone, scored as the choice scores."""
    fit = PiLiDRegressor(**{**SMALL, "pairs": pairs, "n_bags": first}).fit(X, y)
    return choice_loss(fit, X, y), fit


def test_the_candidates_choose_on_their_first_members_and_the_chosen_one_trains_the_rest(
    monkeypatch,
):
    X, y = pair_data(1200)
    sizes = trained_sizes(monkeypatch)
    model = with_levers(PiLiDRegressor)(**SMALL, choice_members=2).fit(X, y)
    table = model.shape_choice_
    assert table["pairs"].tolist()[0] == 0 and table["pairs"].tolist()[1] > 0
    assert sizes == [2, 2, 3]  # each candidate's first 2 members, then the chosen one's other 3

    first = [_first_members_loss(k, X, y, 2) for k in table["pairs"]]
    np.testing.assert_allclose(table["val_loss"], [loss for loss, _ in first], rtol=1e-5)
    best = int(np.argmin([loss for loss, _ in first]))
    assert table["chosen"].tolist() == [best == 0, best == 1]

    # the whole bag: the chosen candidate's 5 members, each as in a full bag of it
    chosen = int(table["pairs"][best])
    full = PiLiDRegressor(**{**SMALL, "pairs": chosen}).fit(X, y)
    assert len(model.estimators_) == 5 and len(model.pairs_) == chosen
    np.testing.assert_array_equal(model.bag_rows_, full.bag_rows_)
    assert [m.seed_ for m in model.estimators_] == [m.seed_ for m in full.estimators_]
    _, alone = first[best]  # its first members are those trained before the choice
    for ours, theirs in zip(model.estimators_[:2], alone.estimators_):
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X), full.predict(X), rtol=1e-3, atol=1e-3)
    assert model.n_features_in_ == 4 and np.isfinite(model.intercept_)


def test_without_the_lever_or_with_as_many_members_the_fit_is_the_defaults(monkeypatch):
    X, y = pair_data(600, seed=1)
    sizes = trained_sizes(monkeypatch)
    plain = PiLiDRegressor(**SMALL).fit(X, y)
    assert sizes == [5, 5]  # both candidates' whole bags
    same = with_levers(PiLiDRegressor)(**SMALL, choice_members=5).fit(X, y)
    np.testing.assert_array_equal(same.predict(X), plain.predict(X))
    # K > 2 classes: the candidates hold class members, which train whole
    label = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    three = with_levers(PiLiDClassifier)(**SMALL, choice_members=2).fit(X, label)
    np.testing.assert_array_equal(
        three.predict_proba(X), PiLiDClassifier(**SMALL).fit(X, label).predict_proba(X)
    )


@pytest.mark.parametrize("bad", [0, -1, 2.5, "4"])
def test_a_bad_number_of_first_members_gets_one_line(bad):
    X, y = pair_data(200, seed=2)
    with pytest.raises(ValueError, match="choice_members"):
        with_levers(PiLiDRegressor)(**SMALL, choice_members=bad).fit(X, y)
