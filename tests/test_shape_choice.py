"""``smoothness="auto"``: the library's pieces or many smooth pieces, chosen by inner validation.

Each candidate's validation loss is recomputed here from a fit with that candidate's parameters
fixed, the held-out rows drawn as the estimator draws them and the out-of-bag rows read off its
members row by row; the chosen model must be that
fit exactly; on data with a known sharp step the many smooth pieces must win.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import log_softmax

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.models.shape_choice import SMOOTH_PIECES, SMOOTH_WEIGHT, candidates
from pilid.nn.piecewise import auto_gamma
from pilid.train import fit_batched
from pilid.train.validation import holdout_split

#: gamma="auto" (the library's pieces before 40 smooth ones became the default) and no pair
#: terms, so that the candidates are the two of ``smoothness="auto"``.
SMALL = dict(
    hidden_layers=(8,), n_bags=2, random_state=0, device="cpu", epochs=15, gamma="auto", pairs=0
)


def _data(n, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    step = np.where(X[:, 0] > 0.3, 2.0, 0.0) + 0.2 * X[:, 1]  # a sharp step in feature 0
    return X, step + rng.normal(0, noise, n)


def _fixed(model, choice):
    return type(model)(**{**model.get_params(), **choice})


def test_candidates_are_the_library_pieces_and_many_smooth_ones():
    assert candidates("auto") == [
        {"gamma": "auto", "smoothness": 0.0},
        {"gamma": SMOOTH_PIECES, "smoothness": SMOOTH_WEIGHT},
    ]
    assert candidates(7)[1] == {"gamma": 7, "smoothness": SMOOTH_WEIGHT}


def test_the_choice_is_the_candidate_of_lower_validation_loss_and_equals_its_own_fit():
    X, y = _data(3000)
    model = PiLiDRegressor(smoothness="auto", **SMALL).fit(X, y)
    table = model.shape_choice_
    assert table["gamma"].tolist() == [auto_gamma(3000), SMOOTH_PIECES]
    assert table["smoothness"].tolist() == [0.0, SMOOTH_WEIGHT]

    # independently: each candidate fitted with its parameters fixed, scored on the rows the
    # estimator holds out (val_fraction of the rows, drawn from its seed) by the whole bag and
    # on each training row by the members whose bootstrap rows miss it; standardised target
    train, val = holdout_split(y, 0, model.val_fraction, stratified=False)
    standard = (y - y.mean()) / y.std()
    losses = []
    for choice in candidates("auto"):
        fit = _fixed(model, choice).fit(X, y)
        errors = list((fit.predict(X[val]) - y.mean()) / y.std() - standard[val])
        for row in train:
            missed = [m for m, rows in zip(fit.estimators_, fit.bag_rows_) if row not in rows]
            if missed:
                pred = np.mean([m.predict(X[row : row + 1])[0] for m in missed])
                errors.append((pred - y.mean()) / y.std() - standard[row])
        losses.append(np.mean(np.square(errors)))
        if choice["smoothness"] == model.smoothness_:
            np.testing.assert_allclose(model.predict(X), fit.predict(X), rtol=1e-6)
    np.testing.assert_allclose(table["val_loss"], losses, rtol=1e-5)
    assert table["chosen"].tolist() == [losses[0] <= losses[1], losses[1] < losses[0]]
    # 5 pieces cannot follow the step; 40 smooth ones can
    assert model.gamma_ == SMOOTH_PIECES and model.smoothness_ == SMOOTH_WEIGHT


def test_classes_weights_and_missing_values_choose_by_the_log_loss():
    X, y = _data(1500, seed=1)
    rng = np.random.default_rng(2)
    label = np.digitize(y, [0.5, 1.5])  # 3 classes
    X[rng.uniform(size=1500) < 0.1, 1] = np.nan
    weight = rng.integers(1, 3, 1500).astype(float)
    model = PiLiDClassifier(smoothness="auto", **SMALL).fit(X, label, sample_weight=weight)
    assert model.predict_proba(X).shape == (1500, 3)

    _, val = holdout_split(label, 0, model.val_fraction, stratified=True)
    losses = []
    for choice in candidates("auto"):
        fit = _fixed(model, choice).fit(X, label, sample_weight=weight)
        logp = log_softmax(fit.decision_function(X[val]), axis=1)
        losses.append(np.average(-logp[np.arange(len(val)), label[val]], weights=weight[val]))
    np.testing.assert_allclose(model.shape_choice_["val_loss"], losses, rtol=1e-5)
    best = int(np.argmin(losses))
    assert model.smoothness_ == candidates("auto")[best]["smoothness"]


def test_batched_trials_choose_each_on_its_own():
    sets = [_data(800, seed=s) for s in (3, 4)]
    ests = [PiLiDRegressor(smoothness="auto", **{**SMALL, "random_state": s}) for s in (3, 4)]
    fit_batched(ests, [X for X, _ in sets], [y for _, y in sets])
    for est, (X, y), seed in zip(ests, sets, (3, 4)):
        alone = PiLiDRegressor(smoothness="auto", **{**SMALL, "random_state": seed}).fit(X, y)
        assert est.smoothness_ == alone.smoothness_
        np.testing.assert_allclose(est.predict(X), alone.predict(X), rtol=1e-5, atol=1e-6)


def test_auto_smoothness_needs_rows_held_out_one_line():
    X, y = _data(200)
    one = {**SMALL, "n_bags": 1}
    with pytest.raises(PilidError, match="smoothness='auto'.*patience") as info:
        PiLiDRegressor(smoothness="auto", patience=None, **one).fit(X, y)
    assert "\n" not in str(info.value)
    # a bag chooses on its out-of-bag rows alone: the chosen candidate is the one whose
    # out-of-bag loss is lower
    model = PiLiDRegressor(smoothness="auto", patience=None, **SMALL).fit(X, y)
    table = model.shape_choice_
    assert table.loc[table["chosen"], "val_loss"].item() == table["val_loss"].min()


def test_auto_pairs_without_rows_to_choose_on_take_none():
    """``pairs="auto"`` (the default) with ``patience=None`` and one model: no rows to choose
    on, so no pair terms and no choice, the same model as ``pairs=0``."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] * X[:, 1] + X[:, 2]
    one = {**SMALL, "n_bags": 1, "patience": None, "pairs": "auto"}
    model = PiLiDRegressor(**one).fit(X, y)
    assert model.pairs_ == [] and not hasattr(model, "shape_choice_")
    plain = PiLiDRegressor(**{**one, "pairs": 0}).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), plain.predict(X))


def test_a_fixed_smoothness_after_auto_drops_the_old_choice():
    X, y = _data(300, seed=5)
    model = PiLiDRegressor(smoothness="auto", **SMALL).fit(X, y)
    model.set_params(smoothness=0.1).fit(X, y)
    assert model.smoothness_ == 0.1
    assert not hasattr(model, "shape_choice_")
