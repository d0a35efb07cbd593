"""A bag whose members hold out their own early-stopping rows (the lever ``bag_validation="own"``
of the studies, `studies._levers.bags.member_holdout`; measured and not adopted), against the
library's shared rows: which rows each member trains and stops on, and the out-of-bag loss that
``pairs`` / ``smoothness`` choose by."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax

from pilid import PiLiDRegressor
from pilid.errors import PilidError
from pilid.train.validation import holdout_split
from studies._levers import PiLiDLeverClassifier as LeverClassifier
from studies._levers import PiLiDLeverRegressor as LeverRegressor
from studies.dev_suite import CANDIDATE_BASE

SMALL = dict(hidden_layers=(8,), gamma=4, epochs=5, batch_size=64, random_state=0, pairs=0)
SMALL.update(CANDIDATE_BASE)  # the deep input the levers were measured on ("auto" refuses them)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + X[:, 1] * X[:, 2] + 0.2 * rng.normal(size=n)
    return X, y


@pytest.fixture(scope="module")
def bags():
    X, y = _data()
    own = LeverRegressor(n_bags=16, bag_validation="own", **SMALL).fit(X, y)
    shared = PiLiDRegressor(n_bags=16, **SMALL).fit(X, y)
    return X, y, own, shared


def test_each_member_holds_out_its_own_rows_and_no_row_is_left_untrained(bags):
    X, y, own, shared = bags
    n_val = round(0.1 * len(y))
    assert own.bag_val_rows_.shape == shared.bag_val_rows_.shape == (16, n_val)
    # shared: one set of rows, which no member trains on
    assert (shared.bag_val_rows_ == shared.bag_val_rows_[0]).all()
    assert not np.isin(shared.bag_val_rows_[0], shared.bag_rows_).any()
    # own: member b's rows are holdout_split's from its seed, and it never trains on them
    for member, rows, val in zip(own.estimators_, own.bag_rows_, own.bag_val_rows_):
        _, expected = holdout_split(y, member.seed_, 0.1, stratified=False)
        assert np.array_equal(val, expected) and not np.isin(val, rows).any()
    assert len({tuple(v) for v in own.bag_val_rows_}) == 16
    assert np.isin(np.arange(len(y)), own.bag_rows_).all()  # every row trains some member


def test_a_member_is_the_same_in_a_bag_of_any_size(bags):
    X, y, own, _ = bags
    four = LeverRegressor(n_bags=4, bag_validation="own", **SMALL).fit(X, y)
    for b in range(4):
        assert np.array_equal(four.bag_val_rows_[b], own.bag_val_rows_[b])
        assert np.array_equal(four.bag_rows_[b], own.bag_rows_[b])
        np.testing.assert_allclose(
            four.estimators_[b].predict(X), own.estimators_[b].predict(X), rtol=1e-5, atol=1e-6
        )


def test_each_member_stops_early_on_its_own_rows(bags):
    X, y, own, _ = bags
    standard = (y - own.y_offset_) / own.y_scale_
    for member, val, history in zip(own.estimators_, own.bag_val_rows_, own.history_):
        error = (member.predict(X[val]) - own.y_offset_) / own.y_scale_ - standard[val]
        # the weights kept are the best epoch's on the member's own validation rows
        np.testing.assert_allclose(np.mean(error**2), min(history["val_loss"]), rtol=1e-4)


def test_the_choice_reads_every_fit_row_out_of_some_members_bags():
    X, y = _data(600, seed=1)
    model = LeverRegressor(n_bags=6, bag_validation="own", **{**SMALL, "pairs": [0, 2]})
    model.fit(X, y)
    standard = (y - model.y_offset_) / model.y_scale_
    chosen = model.shape_choice_.loc[model.shape_choice_["chosen"], "val_loss"].item()
    # independently: each row's mean prediction by the members that did not train on it
    errors = []
    for row in range(len(y)):
        missed = [m for m, rows in zip(model.estimators_, model.bag_rows_) if row not in rows]
        if missed:
            pred = np.mean([m.predict(X[row : row + 1])[0] for m in missed])
            errors.append((pred - model.y_offset_) / model.y_scale_ - standard[row])
    assert len(errors) > 0.9 * len(y)
    np.testing.assert_allclose(chosen, np.mean(np.square(errors)), rtol=1e-5)


def test_k_classes_share_each_members_rows_and_choose_out_of_bag():
    X, y = _data(600, seed=2)
    label = np.digitize(y, [0.3, 1.3])  # 3 classes
    model = LeverClassifier(n_bags=4, bag_validation="own", smoothness="auto", **SMALL)
    model.fit(X, label)
    bags = model.class_estimators_
    for bag in bags[1:]:  # bag member b of every class trains and stops on the same rows
        assert np.array_equal(bag.bag_rows_, bags[0].bag_rows_)
        assert np.array_equal(bag.bag_val_rows_, bags[0].bag_val_rows_)
    for member, val in zip(bags[0].estimators_, bags[0].bag_val_rows_):
        _, expected = holdout_split(label, member.seed_, 0.1, stratified=True)
        assert np.array_equal(val, expected)
    # the chosen candidate's loss: each row's softmax of the mean logits of the members that
    # missed it, the log loss of its class
    losses = []
    for row in range(len(label)):
        missed = [b for b, rows in enumerate(bags[0].bag_rows_) if row not in rows]
        if missed:
            logits = [
                np.mean([bag.estimators_[b].decision_function(X[row : row + 1])[0] for b in missed])
                for bag in bags
            ]
            losses.append(-log_softmax(np.asarray(logits))[label[row]])
    chosen = model.shape_choice_.loc[model.shape_choice_["chosen"], "val_loss"].item()
    np.testing.assert_allclose(chosen, np.mean(losses), rtol=1e-5)
    assert model.predict_proba(X).shape == (600, 3)


def test_shared_is_the_default_and_an_unknown_value_is_one_line():
    assert LeverRegressor().bag_validation == "shared"
    assert "bag_validation" not in PiLiDRegressor().get_params()
    with pytest.raises(PilidError, match="bag_validation") as info:
        LeverRegressor(bag_validation="each").fit(*_data(60))
    assert "\n" not in str(info.value) and "own" in str(info.value)


def test_sample_weights_draw_each_members_bootstrap_from_its_own_rows():
    X, y = _data(300, seed=3)
    weight = np.where(np.arange(300) % 5 == 0, 0.0, 1.0)  # every fifth row weighs nothing
    model = LeverRegressor(n_bags=4, bag_validation="own", **SMALL)
    model.fit(X, y, sample_weight=weight)
    assert not np.isin(np.flatnonzero(weight == 0), model.bag_rows_).any()
    for rows, val in zip(model.bag_rows_, model.bag_val_rows_):
        assert not np.isin(val, rows).any()
    assert len({tuple(v) for v in model.bag_val_rows_}) == 4
