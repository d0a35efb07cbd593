"""Missing values (issue 27, item 1; EBM's ``missing='separate'``): NaN in X gets its own learned
contribution per feature, the deep part a neutral value and a missing indicator, the least-squares
start (Algorithm 1) includes the indicator columns; NaN at prediction in a feature without
missing values in fit gets the feature's average contribution and one warning; inf stays an error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from pilid import NITRegressor, PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.estimators.pilid import MLPRegressor
from pilid.models.inputs import UnseenMissingWarning
from pilid.nn.piecewise import compact_layout, fit_knots, phi_compact, phi_numpy

SMALL = dict(epochs=15, batch_size=64, device="cpu", random_state=0, n_bags=1, lr=0.01)
#: PiLiD without the defaults' roughness penalty and pair terms: the plain least squares of the
#: start and of the purification, and the MLP as the deep part.
PLAIN = dict(smoothness=0.0, pairs=0, lam=1e-3)


def _data(n=400, seed=0, offset=2.0, share=0.25):
    """y = sin(2 x0) + 0.5 x1 + 0.3 x2, plus `offset` where x0 is missing (a `share` of rows)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    miss = rng.random(n) < share
    X[miss, 0] = np.nan
    y = np.sin(2 * np.nan_to_num(X[:, 0])) + 0.5 * X[:, 1] + 0.3 * X[:, 2]
    return X, y + offset * miss, miss


def test_knots_skip_nan_and_record_the_features_with_missing_values():
    X, _, miss = _data()
    for method in ("uniform", "quantile"):
        knots = fit_knots(X, 4, method)
        alone = fit_knots(X[~miss][:, :1], 4, method)  # feature 0's rows with a value
        np.testing.assert_array_equal(knots.points[0], alone.points[0])
        np.testing.assert_array_equal(knots.points[1], fit_knots(X[:, 1:2], 4, method).points[0])
        assert knots.missing.tolist() == [True, False, False]
    assert fit_knots(np.nan_to_num(X), 4).missing is None  # no NaN: as before
    assert not fit_knots(np.nan_to_num(X), 4).missing_mask.any()
    with pytest.raises(PilidError, match="only NaN"):
        fit_knots(np.column_stack([X[:, 1], np.full(len(X), np.nan)]), 3)


def test_phi_of_a_missing_value_is_zero_with_an_indicator():
    X, _, miss = _data(50)
    knots = fit_knots(X, 3)
    layout = compact_layout(knots)
    col, frac, ind = phi_compact(torch.as_tensor(X), layout)
    filled = np.where(np.isnan(X), 0.0, X)
    col2, frac2 = phi_compact(torch.as_tensor(filled), layout)
    np.testing.assert_array_equal(ind.numpy(), np.isnan(X).astype(np.float32))
    starts = np.concatenate([[0], np.cumsum(knots.n_pieces)[:-1]])
    assert (col.numpy()[miss, 0] == starts[0]).all() and (frac.numpy()[miss, 0] == 0).all()
    np.testing.assert_array_equal(col.numpy()[~miss], col2.numpy()[~miss])
    np.testing.assert_array_equal(frac.numpy()[~miss], frac2.numpy()[~miss])
    assert len(phi_compact(torch.as_tensor(filled), layout)) == 2  # no NaN: (col, frac)


def _hand_lstsq(X, y, knots):
    """Least squares of y on [1, Phi (NaN rows 0), one indicator per feature with NaN]."""
    phi = np.nan_to_num(phi_numpy(X, knots), nan=0.0)
    nan = np.isnan(X)
    design = np.column_stack([np.ones(len(X)), phi, nan[:, nan.any(0)]])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return design @ coef, coef


def test_least_squares_start_includes_the_missing_columns():
    """epochs=0, no deep part, no held-out rows: the model is Algorithm 1's start, which must
    equal a hand-built NumPy least squares with the missing-indicator columns."""
    X, y, _ = _data(300)
    X[::7, 2] = np.nan  # a second feature with missing values
    est = PiLiDRegressor(
        gamma=3,
        knots="quantile",
        hidden_layers=None,
        epochs=0,
        patience=None,
        smoothness=0.0,  # the plain least squares of Algorithm 1
        **_no(SMALL),
    ).fit(X, y)
    expected, coef = _hand_lstsq(X, y, est.knots_)
    np.testing.assert_allclose(est.predict(X), expected, atol=2e-4)
    assert est.missing_.tolist() == [True, False, True]
    # the start of nan_value is the indicator's coefficient (in standardised target units)
    nan_value = est.module_.additive.nan_value.detach()[0].numpy()
    np.testing.assert_allclose(nan_value[[0, 2]] * est.y_scale_, coef[-2:], atol=2e-4)
    # without the indicator columns the fit is worse (the NaN rows' offset is not captured)
    without = np.column_stack([np.ones(len(X)), np.nan_to_num(phi_numpy(X, est.knots_))])
    resid = y - without @ np.linalg.lstsq(without, y, rcond=None)[0]
    assert np.mean((y - est.predict(X)) ** 2) < 0.5 * np.mean(resid**2)


def _no(params, *keys):
    return {k: v for k, v in params.items() if k not in ("epochs", *keys)}


def test_the_learned_missing_contribution_recovers_a_known_offset():
    """A piecewise-linear truth with gamma=1 per feature (linear) and an exact offset for NaN:
    the shape's NaN row minus the shape's value at x0 = 0 is the offset."""
    rng = np.random.default_rng(3)
    n = 500
    X = rng.uniform(-1, 1, size=(n, 2))
    miss = rng.random(n) < 0.3
    y = 2.0 * np.where(miss, 0.0, X[:, 0]) + X[:, 1] + 3.0 * miss  # u_0(NaN) - u_0(0) = 3
    X[miss, 0] = np.nan
    est = PiLiDRegressor(gamma=1, hidden_layers=None, epochs=0, patience=None, **_no(SMALL))
    shapes = est.fit(X, y).shape_functions()
    x0 = shapes[shapes.feature == "x0"]
    nan_row = x0[x0.x.isna()]
    assert len(nan_row) == 1 and nan_row.index[0] == x0.index[-1]  # after the points
    points = x0[x0.x.notna()]
    at_zero = np.interp(0.0, points.x.astype(float), points.value)
    np.testing.assert_allclose(float(nan_row.value.iloc[0]) - at_zero, 3.0, atol=1e-3)
    # trained jointly with a deep part: close to the truth too
    trained = PiLiDRegressor(gamma=2, hidden_layers=(16,), epochs=80, **_no(SMALL)).fit(X, y)
    x0 = trained.shape_functions().query("feature == 'x0'")
    at_zero = np.interp(0.0, x0.x.dropna().astype(float), x0.value[x0.x.notna()])
    assert abs(float(x0.value[x0.x.isna()].iloc[0]) - at_zero - 3.0) < 0.4


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pilid.nn.gates.GateOrderWarning")  # short phase 1
@pytest.mark.parametrize(
    "make",
    [
        lambda: PiLiDRegressor(gamma=3, hidden_layers=(16,), purify=True, **SMALL),
        lambda: PiLiDRegressor(gamma=3, hidden_layers=(16,), **{**SMALL, "n_bags": 3}),
        lambda: PiLiDClassifier(gamma=3, hidden_layers=(16,), **SMALL),
        lambda: PiLiBRegressor(
            gamma=3,
            n_blocks=4,
            warmup_epochs=2,
            phase1_epochs=3,
            epochs=5,
            random_state=0,
            device="cpu",
            batch_size=64,
        ),
        lambda: NITRegressor(
            n_blocks=4,
            warmup_epochs=2,
            phase1_epochs=3,
            epochs=5,
            random_state=0,
            device="cpu",
            batch_size=64,
        ),
        lambda: MLPRegressor(hidden_layers=(16,), **_no(SMALL, "n_bags"), epochs=5),
    ],
    ids=["pilid", "bag", "classifier", "pilib", "nit", "mlp"],
)
def test_every_estimator_fits_nan_and_its_parts_sum_to_the_output(make):
    X, y, miss = _data(300)
    est = make()
    classifier = isinstance(est, PiLiDClassifier)
    est.fit(X, (y > np.median(y)).astype(int) if classifier else y)
    raw = est.decision_function(X) if classifier else est.predict(X)
    assert np.isfinite(raw).all()
    assert est.missing_.tolist() == [True, False, False]
    if hasattr(est, "explain"):
        parts = est.explain(X)
        np.testing.assert_allclose(parts.sum(axis=1).to_numpy(), raw, atol=1e-4)
    if hasattr(est, "shape_functions"):
        shapes = est.shape_functions()
        nan_rows = shapes[shapes.x.isna()]
        assert nan_rows.feature.tolist() == ["x0"]  # one row, for the feature with NaN
        # the NaN row is the contribution of a missing x0
        contrib = est.feature_contributions(X[miss][:3])[:, 0]
        np.testing.assert_allclose(contrib, float(nan_rows.value.iloc[0]), atol=1e-5)


@pytest.mark.filterwarnings("ignore::pilid.nn.gates.GateOrderWarning")  # short phase 1
def test_the_deep_part_sees_a_neutral_value_and_one_indicator_per_feature_with_nan():
    X, y, miss = _data(300)
    est = PiLiDRegressor(gamma=3, hidden_layers=(8,), **PLAIN, **SMALL).fit(X, y)
    assert est.module_.deep.weights[0].shape[1] == 3 + 1  # m features + x0's indicator
    np.testing.assert_allclose(est.x_mean_[0], np.nanmean(X[:, 0]))
    np.testing.assert_allclose(est.x_scale_[0], np.nanstd(X[:, 0]))
    blocks = PiLiBRegressor(
        gamma=3,
        n_blocks=3,
        warmup_epochs=1,
        phase1_epochs=2,
        epochs=2,
        random_state=0,
        device="cpu",
    ).fit(X, y)
    assert blocks.module_.deep.weights[0].shape[2] == 4  # (T, B, m + 1, h)
    assert blocks.block_features_.shape == (3, 3)  # the indicator shares its feature's gate


def test_purification_with_missing_values_leaves_predictions_unchanged():
    X, y, _ = _data(300)
    params = dict(gamma=3, hidden_layers=(16,), **PLAIN, **SMALL)
    plain = PiLiDRegressor(purify=False, **params).fit(X, y)
    pure = PiLiDRegressor(purify=True, **params).fit(X, y)
    np.testing.assert_allclose(pure.predict(X), plain.predict(X), atol=1e-5)
    assert float(pure.module_.shift_nan.abs().sum()) > 0  # the indicator took a share
    # the purified deep part has no main effect of missingness left on the training rows
    _, _, deep = pure.decompose(X)
    nan = np.isnan(X[:, 0])
    _, _, deep_plain = plain.decompose(X)
    gap = abs(deep[nan].mean() - deep[~nan].mean())
    assert gap < 1e-3 < abs(deep_plain[nan].mean() - deep_plain[~nan].mean())


def test_nan_in_a_feature_without_missing_values_gets_its_average_and_one_warning():
    X, y, _ = _data(300)
    est = PiLiDRegressor(gamma=3, hidden_layers=(8,), **SMALL).fit(X, y)
    rows = X[:6].copy()
    before = est.feature_contributions(rows)
    rows[[1, 4], 1] = np.nan
    rows[2, 2] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        after = est.feature_contributions(rows)
    assert len(caught) == 1 and caught[0].category is UnseenMissingWarning
    assert "'x1', 'x2'" in str(caught[0].message) and "'x0'" not in str(caught[0].message)
    np.testing.assert_allclose(after[[1, 4], 1], 0.0, atol=1e-6)  # centred: the average
    np.testing.assert_allclose(after[2, 2], 0.0, atol=1e-6)
    np.testing.assert_allclose(after[0], before[0], atol=1e-7)  # other cells unchanged
    np.testing.assert_allclose(after[:, 0], before[:, 0], atol=1e-7)
    with warnings.catch_warnings():  # a NaN in x0 (missing values in fit): no warning
        warnings.simplefilter("error")
        est.predict(np.array([[np.nan, 0.1, 0.2]]))


def test_inf_stays_an_error_and_a_column_of_nan_only_is_refused():
    X, y, _ = _data(120)
    est = PiLiDRegressor(gamma=2, hidden_layers=(4,), **SMALL)
    bad = X.copy()
    bad[5, 1] = -np.inf
    with pytest.raises(PilidError, match=r"X contains inf in 1 entries \(column\(s\) 'x1'\)"):
        est.fit(bad, y)
    frame = pd.DataFrame({"a": X[:, 1], "empty": np.nan})
    with pytest.raises(PilidError, match="column 'empty' holds only missing values"):
        est.fit(frame, y)


def test_bag_shapes_give_the_nan_row_its_members_spread():
    X, y, _ = _data(300)
    est = PiLiDRegressor(gamma=3, hidden_layers=(8,), **{**SMALL, "n_bags": 4}).fit(X, y)
    shapes = est.shape_functions()
    nan_row = shapes[shapes.x.isna()]
    members = [m.shape_functions() for m in est.estimators_]
    values = [float(t.value[t.x.isna()].iloc[0]) for t in members]
    np.testing.assert_allclose(nan_row.value, np.mean(values))
    np.testing.assert_allclose(nan_row["std"], np.std(values))
    assert (nan_row.lower <= nan_row.value).all() and (nan_row.value <= nan_row.upper).all()


def test_integer_weights_equal_repeated_rows_with_missing_values():
    """The least-squares start (epochs=0) with NaN: integer sample weights give the model of the
    rows repeated by their weights (knots, scaling, indicator columns alike)."""
    X, y, _ = _data(200)
    w = np.random.default_rng(5).integers(0, 3, len(y)).astype(float)
    params = dict(gamma=3, knots="quantile", hidden_layers=None, epochs=0, patience=None)
    params.update(_no(SMALL), **PLAIN)
    weighted = PiLiDRegressor(**params).fit(X, y, sample_weight=w)
    rep = np.repeat(np.arange(len(y)), w.astype(int))
    repeated = PiLiDRegressor(**params).fit(X[rep], y[rep])
    np.testing.assert_allclose(weighted.predict(X), repeated.predict(X), atol=2e-4)
