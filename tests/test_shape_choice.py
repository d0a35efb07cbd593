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
from pilid.models.fitting import fit_batched
from pilid.models.shape_choice import SMOOTH_PIECES, SMOOTH_WEIGHT, candidates
from pilid.nn.piecewise import auto_gamma
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


@pytest.mark.slow
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
            # the candidates train as one ensemble (a roughness weight per trial): the same
            # fit to float32's rounding, not to the bit
            np.testing.assert_allclose(model.predict(X), fit.predict(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(table["val_loss"], losses, rtol=1e-5)
    assert table["chosen"].tolist() == [losses[0] <= losses[1], losses[1] < losses[0]]
    # 5 pieces cannot follow the step; 40 smooth ones can
    assert model.gamma_ == SMOOTH_PIECES and model.smoothness_ == SMOOTH_WEIGHT


@pytest.mark.slow
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


@pytest.mark.slow
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


def _pair_data(n=800, seed=3):
    """Four features, y = x0 x1 + x2 x3 / 2 + x0 + noise: two pairs worth a term."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] / 2 + X[:, 0] + 0.2 * rng.normal(size=n)


@pytest.mark.slow
def test_a_list_of_pair_counts_chooses_among_them_each_its_first_pairs():
    """``pairs=[0, 1, 2]``: three candidates, each FAST's first k pairs, the one of lowest
    validation loss kept; each equals the model fitted with its k pairs fixed."""
    X, y = _pair_data()
    params = {**SMALL, "gamma": 6}
    model = PiLiDRegressor(**{**params, "pairs": [2, 0, 1, 1]}).fit(X, y)
    table = model.shape_choice_
    assert table["pairs"].tolist() == [0, 1, 2]
    best = int(np.argmin(table["val_loss"]))
    assert table["chosen"].tolist() == [i == best for i in range(3)]
    two = PiLiDRegressor(**{**params, "pairs": 2}).fit(X, y)
    assert len(two.pairs_) == 2
    assert model.pairs_ == two.pairs_[:best]  # FAST's first pairs, the ranking of pairs=2
    fixed = PiLiDRegressor(**{**params, "pairs": best}).fit(X, y)
    np.testing.assert_allclose(model.predict(X), fixed.predict(X), rtol=1e-6)
    assert best > 0  # the planted products are worth a term


@pytest.mark.slow
def test_pairs_auto_is_the_list_of_none_and_auto_pairs():
    from pilid.models.pair_choice import AUTO_PAIRS
    from pilid.models.shape_choice import pair_counts

    assert pair_counts("auto") == (0, AUTO_PAIRS) and pair_counts(3) is None
    X, y = _pair_data(n=500, seed=4)
    auto = PiLiDRegressor(**{**SMALL, "pairs": "auto"}).fit(X, y)
    listed = PiLiDRegressor(**{**SMALL, "pairs": [0, AUTO_PAIRS]}).fit(X, y)
    np.testing.assert_array_equal(auto.predict(X), listed.predict(X))
    # four features have six pairs: 10 and 30 both mean all six, one candidate
    many = PiLiDRegressor(**{**SMALL, "pairs": [0, AUTO_PAIRS, 30]}).fit(X, y)
    assert many.shape_choice_["pairs"].tolist() == [0, 6]


@pytest.mark.slow
def test_a_list_without_rows_to_choose_on_takes_the_fewest_and_k_classes_none():
    X, y = _pair_data(n=400, seed=5)
    one = {**SMALL, "n_bags": 1, "patience": None}
    model = PiLiDRegressor(**{**one, "pairs": [2, 3]}).fit(X, y)
    assert len(model.pairs_) == 2 and not hasattr(model, "shape_choice_")
    np.testing.assert_array_equal(
        model.predict(X), PiLiDRegressor(**{**one, "pairs": 2}).fit(X, y).predict(X)
    )
    labels = np.digitize(y, [-0.5, 0.5])  # three classes: no candidate with pairs
    many = PiLiDClassifier(**{**SMALL, "n_bags": 1, "pairs": [0, 2]}).fit(X, labels)
    assert many.pairs_ == []


@pytest.mark.parametrize("pairs", [[], [-1, 2], ["a"], [1.5], "many"])
def test_a_bad_list_of_pair_counts_gets_one_line(pairs):
    X, y = _pair_data(n=100)
    with pytest.raises(PilidError, match="pairs"):
        PiLiDRegressor(**{**SMALL, "pairs": pairs}).fit(X, y)
