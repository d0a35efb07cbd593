"""``fit(X, y, sample_weight=...)`` of the neural estimators (`pilid.models.sample_weight`), checked
against independent computations: repeated rows, a NumPy weighted least squares on the dense Phi,
weighted quantiles by hand, and the unweighted fit for unit weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.metrics import r2_score

from pilid.baselines.nit import NITClassifier
from pilid.errors import PilidError
from pilid.estimators.pilib import PiLiBRegressor
from pilid.estimators.pilid import MLPRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.models.bagging import bag_rows
from pilid.models.fitting import fit_batched
from pilid.nn.piecewise import fit_knots, phi_dense, phi_numpy, weighted_quantile
from pilid.train.trainer import evaluate_loss
from pilid.train.validation import holdout_split

SMALL = dict(hidden_layers=(8,), epochs=4, batch_size=32, device="cpu", random_state=0)
#: Deterministic training: one full batch, no holdout, one model. SGD, because Adam's step is
#: about lr * sign(gradient) and turns the rounding of a near-zero gradient into an lr-sized
#: step; SGD's step is proportional to the gradient, so rounding stays rounding.
DETERMINISTIC = dict(
    epochs=4, batch_size=10_000, patience=None, n_bags=1, optimizer="sgd", device="cpu"
)
BLOCKS = dict(n_blocks=3, block_layers=(4,), warmup_epochs=1, phase1_epochs=3, mask_patience=1)
#: PiLiD's penalties as numbers: the defaults' rules of the rows (``lam="rows"``,
#: ``smoothness="rows"``) count the rows of weight > 0 (`test_rules_of_the_rows_count_the_rows
#: _of_positive_weight`), so a weighted fit and its repeated rows would train with other weights.
NUMBERS = dict(lam=1e-3, smoothness=0.0)


def _data(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = 2 * X[:, 0] + np.abs(X[:, 1]) - X[:, 2] ** 2 + 0.1 * rng.normal(size=n)
    w = rng.integers(0, 4, size=n)  # integer weights, zeros included
    return X, y, w


def _raw(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


@pytest.mark.slow
@pytest.mark.parametrize(
    "est",
    [
        PiLiDRegressor(gamma=3, n_bags=2, **SMALL),  # bagged: the bootstrap draws too
        PiLiDClassifier(gamma=3, n_bags=1, **SMALL),
        MLPRegressor(**SMALL),
    ],
    ids=lambda e: type(e).__name__,
)
def test_unit_and_equal_weights_give_exactly_the_unweighted_model(est):
    X, y, _ = _data()
    target = y > 0.3 if isinstance(est, PiLiDClassifier) else y
    plain = clone(est).fit(X, target)
    for w in (np.ones(len(y)), np.full(len(y), 2.5), [3] * len(y)):
        weighted = clone(est).fit(X, target, sample_weight=w)
        assert np.array_equal(_raw(weighted, X), _raw(plain, X))


@pytest.mark.parametrize(
    "est",
    [
        PiLiDRegressor(gamma=3, knots="quantile", hidden_layers=(8,), **NUMBERS, **DETERMINISTIC),
        PiLiDClassifier(gamma=3, knots="quantile", hidden_layers=(8,), **NUMBERS, **DETERMINISTIC),
        MLPRegressor(hidden_layers=(8,), **DETERMINISTIC),
        PiLiBRegressor(gamma=3, knots="quantile", **BLOCKS, **DETERMINISTIC),
        NITClassifier(**BLOCKS, **DETERMINISTIC),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.filterwarnings("ignore::pilid.nn.gates.GateOrderWarning")
def test_integer_weights_equal_repeated_rows(est):
    """Full batch, no holdout, one model: weight k is the row k times (knots, scaling, least
    squares, every gradient step, the purification, the centring)."""
    X, y, w = _data()
    target = (y > 0.3).astype(int) if est._task == "classification" else y
    est.set_params(random_state=5)
    weighted = clone(est).fit(X, target, sample_weight=w)
    repeated = clone(est).fit(np.repeat(X, w, axis=0), np.repeat(target, w))
    np.testing.assert_allclose(_raw(weighted, X), _raw(repeated, X), rtol=0, atol=1e-4)
    np.testing.assert_allclose(weighted.x_mean_, repeated.x_mean_, rtol=1e-12)
    np.testing.assert_allclose(weighted.x_scale_, repeated.x_scale_, rtol=1e-12)
    assert weighted.y_offset_ == pytest.approx(repeated.y_offset_, rel=1e-12)
    assert weighted.y_scale_ == pytest.approx(repeated.y_scale_, rel=1e-12)
    if weighted.knots_ is not None:
        for a, b in zip(weighted.knots_.points, repeated.knots_.points):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        # the contributions are centred on the weighted rows
        contrib = weighted.feature_contributions(X)
        np.testing.assert_allclose(np.average(contrib, axis=0, weights=w), 0.0, atol=1e-6)
    if hasattr(weighted, "block_offset_"):  # PiLiB / NIT: the block summaries are weighted
        np.testing.assert_allclose(weighted.block_offset_, repeated.block_offset_, atol=1e-5)
        np.testing.assert_allclose(
            weighted.block_importance_, repeated.block_importance_, atol=1e-5
        )
    # the weights matter: the unweighted model is far from the repeated one
    plain = clone(est).fit(X, target)
    assert np.abs(_raw(plain, X) - _raw(repeated, X)).max() > 100 * 1e-4


def test_weighted_least_squares_start_equals_numpy_on_dense_phi():
    """epochs=0, additive part alone: the model is Algorithm 1's start, a weighted least
    squares of y on [1, Phi] (ridge 1e-6 relative, negligible here)."""
    X, y, w = _data(n=200, seed=1)
    w = w * 0.7 + 0.1 * (np.arange(len(y)) % 3)  # fractional weights, some zero
    est = PiLiDRegressor(
        gamma=4,
        knots="quantile",
        hidden_layers=None,
        epochs=0,
        patience=None,
        n_bags=1,
        smoothness=0.0,  # the plain (weighted) least squares of Algorithm 1
    ).fit(X, y, sample_weight=w)
    feature, _, _ = est.knots_.layout()
    col, frac = est._inputs(X)[1][:2]
    dense = phi_dense(col[0], frac[0], torch.as_tensor(feature)).double().numpy()
    np.testing.assert_allclose(dense, phi_numpy(X, est.knots_), atol=1e-6)  # Definition 2
    design = np.column_stack([np.ones(len(y)), dense])
    root = np.sqrt(w)[:, None]
    beta, *_ = np.linalg.lstsq(design * root, y * root[:, 0], rcond=None)
    np.testing.assert_allclose(est.predict(X), design @ beta, rtol=0, atol=2e-4)
    unweighted, *_ = np.linalg.lstsq(design, y, rcond=None)
    assert np.abs(design @ unweighted - design @ beta).max() > 1e-2  # the weights mattered


def test_weighted_quantile_knots_by_hand():
    x = np.array([0.0, 1.0, 2.0, 3.0])
    # weights 1, 1, 1, 3: the rows 0, 1, 2, 3, 3, 3; numpy's linear quantile at k/3 sits at
    # position 5k/3: 0, 1 + 2/3, 3 (position 10/3 lies among the 3s), 3
    expected = np.array([0.0, 5.0 / 3.0, 3.0])
    knots = fit_knots(x[:, None], 3, "quantile", weights=np.array([1, 1, 1, 3]))
    np.testing.assert_allclose(knots.points[0], expected, rtol=1e-15)
    # weights below 1 count as repeat counts scaled so that the lightest is 1: 0.5 ~ 1
    half = fit_knots(x[:, None], 3, "quantile", weights=np.array([0.5, 0.5, 0.5, 1.5]))
    np.testing.assert_allclose(half.points[0], expected, rtol=1e-15)
    rng = np.random.default_rng(3)
    v, w = rng.normal(size=40), rng.integers(1, 6, size=40)
    q = np.linspace(0, 1, 9)
    np.testing.assert_allclose(
        weighted_quantile(v, w.astype(float), q), np.quantile(np.repeat(v, w), q), rtol=1e-12
    )


def test_zero_weights_are_dropped_rows_for_the_knots():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=60), rng.integers(0, 4, size=60)])
    X[:5, 0] = 50.0  # far outliers, all of weight 0
    w = rng.integers(1, 4, size=60).astype(float)
    w[:5] = 0.0
    w[X[:, 1] == 3] = 0.0  # a category whose rows all weigh 0
    cat = np.array([False, True])
    for method in ("quantile", "uniform"):
        weighted = fit_knots(X, 4, method, cat, weights=w)
        dropped = fit_knots(X[w > 0], 4, method, cat, weights=w[w > 0])
        for a, b in zip(weighted.points, dropped.points):
            np.testing.assert_array_equal(a, b)
        assert weighted.points[0].max() < 50.0 and 3.0 not in weighted.points[1]


def test_bad_weights_are_refused_on_one_line():
    X, y, _ = _data(n=40)
    n = len(y)
    bad = {
        "negative": np.where(np.arange(n) == 3, -1.0, 1.0),
        "NaN": np.where(np.arange(n) == 3, np.nan, 1.0),
        "inf": np.where(np.arange(n) == 3, np.inf, 1.0),
        "shape": np.ones(n + 1),
        "1D": np.ones((n, 2)),
        "zero": np.zeros(n),
    }
    for word, w in bad.items():
        with pytest.raises(PilidError, match=word) as info:
            PiLiDRegressor(gamma=2, **SMALL).fit(X, y, sample_weight=w)
        assert "\n" not in str(info.value)
    one_class = (y > 0).astype(float)  # class 0 rows all weigh 0
    with pytest.raises(PilidError, match=r"class .*two classes") as info:
        PiLiDClassifier(gamma=2, **SMALL).fit(X, y > 0, sample_weight=one_class)
    assert "\n" not in str(info.value)
    _, val = holdout_split(y, SMALL["random_state"], 0.1, stratified=False)  # fit's holdout
    w = np.ones(n)
    w[val] = 0.0
    with pytest.raises(PilidError, match="validation row") as info:
        PiLiDRegressor(gamma=2, n_bags=1, **SMALL).fit(X, y, sample_weight=w)
    assert "\n" not in str(info.value)


def _train_rows(est, n):
    """The rows a fitted model trained on (its holdout split, recomputed)."""
    return holdout_split(np.zeros(n), est.seed_, est.val_fraction, stratified=False)[0]


def test_weights_are_not_modified_and_score_takes_them():
    X, y, w = _data()
    w = w.astype(float)
    kept = w.copy()
    est = PiLiDRegressor(gamma=3, **SMALL).fit(X, y, sample_weight=w)
    assert np.array_equal(w, kept)
    assert est.score(X, y, sample_weight=w) == pytest.approx(
        r2_score(y, est.predict(X), sample_weight=w)
    )


@pytest.mark.slow
def test_fit_batched_takes_a_weight_list():
    X, y, w = _data()
    est = PiLiDRegressor(gamma=3, n_bags=1, **SMALL)
    a, b = fit_batched([clone(est), clone(est)], [X, X], [y, y], sample_weights=[w, None])
    alone = clone(est).fit(X, y, sample_weight=w)
    plain = clone(est).fit(X, y)
    np.testing.assert_allclose(a.predict(X), alone.predict(X), rtol=0, atol=1e-5)
    np.testing.assert_allclose(b.predict(X), plain.predict(X), rtol=0, atol=1e-5)
    assert np.abs(a.predict(X) - b.predict(X)).max() > 1e-2
    with pytest.raises(PilidError, match="sample_weights"):
        fit_batched([clone(est)], [X], [y], sample_weights=[w, w])


def test_bag_draws_rows_in_proportion_to_weight():
    n = 4000
    idx = np.arange(n) + 10
    w = np.where(np.arange(n) < n // 2, 1.0, 3.0)
    w[:100] = 0.0
    _, rows = bag_rows(7, 0, idx, w)
    assert len(rows) == n and not np.isin(idx[:100], rows).any()
    heavy = np.mean(rows >= idx[n // 2])
    expected = 3.0 * (n // 2) / w.sum()
    assert abs(heavy - expected) < 0.03  # binomial sd ~0.007
    # an estimator's bag: weighted draws, members train with unit weight on them
    X, y, sw = _data()
    bag = PiLiDRegressor(gamma=3, n_bags=3, **SMALL).fit(X, y, sample_weight=sw)
    assert not np.isin(np.flatnonzero(sw == 0), bag.bag_rows_).any()
    assert all(m.bag_rows_.shape == (len(_train_rows(bag, len(y))),) for m in bag.estimators_)


def test_validation_loss_is_the_weighted_mean():
    class Const(torch.nn.Module):
        def forward(self, x, phi=None):
            return x[..., 0]

    x = torch.randn(2, 7, 1)
    y = torch.randn(2, 7)
    w = torch.rand(2, 7)
    got = evaluate_loss(Const(), x, None, y, "regression", chunk=3, weights=w)
    sq = (x[..., 0] - y).double() ** 2
    expected = (sq * w).sum(1) / w.double().sum(1)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def test_weights_with_missing_values_and_three_classes_equal_repeated_rows():
    """The weights reach the other paths of issue 27: NaN rows (their own contribution) and the
    K-class softmax group (every class member weighted alike)."""
    X, y, w = _data(n=200, seed=6)
    X[::7, 1] = np.nan
    classes = np.digitize(X[:, 0], [-0.3, 0.3])
    est = PiLiDClassifier(gamma=3, knots="quantile", hidden_layers=(8,), random_state=1)
    est.set_params(**NUMBERS, **DETERMINISTIC)
    weighted = clone(est).fit(X, classes, sample_weight=w)
    repeated = clone(est).fit(np.repeat(X, w, axis=0), np.repeat(classes, w))
    np.testing.assert_allclose(
        weighted.predict_proba(X), repeated.predict_proba(X), rtol=0, atol=1e-4
    )


def test_rules_of_the_rows_count_the_rows_of_positive_weight():
    """``lam="rows"`` and ``smoothness="rows"`` (the defaults) take n as the rows of weight > 0,
    as ``gamma="auto"`` does: a weight's scale does not change them, a row of weight 0 is no
    row."""
    from pilid.models.row_rules import rows_lam, rows_smoothness

    X, y, _ = _data(n=120)
    w = np.ones(120)
    w[:20] = 0.0
    est = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=0, **DETERMINISTIC)
    fitted = clone(est).fit(X, y, sample_weight=w)
    assert fitted.lam_ == rows_lam(100) == 1e-2  # 5 / 100 = 0.05, clipped to 1e-2
    assert fitted.smoothness_ == rows_smoothness(100) == 5.0  # 500 / 100
    scaled = clone(est).fit(X, y, sample_weight=7.5 * w)
    assert (scaled.lam_, scaled.smoothness_) == (fitted.lam_, fitted.smoothness_)


def test_the_steep_lam_rule_is_the_rows_rule_up_to_the_knee_and_falls_as_the_square_beyond():
    """``lam="rows_steep"`` (the default): 5 / n up to 5,000 rows of weight > 0, as ``"rows"``;
    beyond, 5 / n * 5,000 / n, computed here by hand, and never under the 1e-6 floor."""
    from pilid.models.row_rules import resolve_lam, rows_lam, rows_steep_lam

    for n in (100, 1904, 5000):
        assert rows_steep_lam(n) == rows_lam(n) == resolve_lam("rows_steep", n)
    assert rows_steep_lam(50_000) == pytest.approx(5.0 / 50_000 * 5_000 / 50_000)  # 1e-5
    assert rows_steep_lam(10_000) == pytest.approx(rows_lam(10_000) / 2)
    assert rows_steep_lam(10**6) == 1e-6  # 2.5e-8, floored
    X, y, _ = _data(n=120)
    fitted = PiLiDRegressor(gamma=3, hidden_layers=(8,), pairs=0, **DETERMINISTIC).fit(X, y)
    assert PiLiDRegressor().lam == "rows_steep" and fitted.lam_ == rows_steep_lam(120)
