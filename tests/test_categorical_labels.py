"""Categorical features by label (issue 27, item 2): shapes, bands and explanations of a string
or pandas-category column are indexed by its levels as given, an int-coded column named in
``categorical_features`` keeps its values; a level not seen in fit gets its feature's average
contribution (centred 0) and one warning naming it and its column; NaN in a categorical column
is a missing value with its own contribution."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from pilid import PiLiBRegressor, PiLiDClassifier, PiLiDRegressor
from pilid.inspection.explanation import ExplanationDisplay
from pilid.models.inputs import UnseenCategoryWarning

SMALL = dict(hidden_layers=(8,), epochs=20, batch_size=64, device="cpu", random_state=0)
EFFECT = {"not at all": -1.0, "slightly": 0.0, "fairly": 1.0, "very": 2.5}


def _frame(n=400, seed=0, nan_share=0.0):
    rng = np.random.default_rng(seed)
    level = rng.choice(list(EFFECT), n)
    if nan_share:
        level = np.where(rng.random(n) < nan_share, None, level)
    df = pd.DataFrame(
        {
            "age": rng.uniform(20, 60, n),
            "how": pd.Series(level, dtype="str"),  # a string column
            "kind": pd.Categorical(rng.choice(["b", "a", "c"], n), categories=["c", "b", "a"]),
            "grade": rng.choice([10, 20, 40], n),  # int-coded, named in categorical_features
        }
    )
    how = df["how"].map(EFFECT).fillna(4.0).to_numpy(dtype=float)  # missing: +4
    y = 0.05 * df["age"] + how + 0.02 * df["grade"] + 0.05 * rng.normal(size=n)
    return df, y.to_numpy()


def test_shapes_are_indexed_by_the_levels_as_given():
    df, y = _frame()
    est = PiLiDRegressor(gamma=3, categorical_features=["grade"], n_bags=1, **SMALL).fit(df, y)
    shapes = est.shape_functions()
    how = shapes[shapes.feature == "how"].set_index("x")["value"]
    assert sorted(how.index) == sorted(EFFECT)  # the labels, not codes 0-3
    order = sorted(EFFECT, key=EFFECT.get)
    assert how[order].is_monotonic_increasing  # the learned effect, read by label
    kind = shapes[shapes.feature == "kind"]
    assert kind.x.tolist() == ["c", "b", "a"]  # the category's own order
    grade = shapes[shapes.feature == "grade"]
    assert grade.x.tolist() == [10, 20, 40]  # int codes keep their values
    # the shape at a level is the contribution of a row with that level
    rows = df.head(8)
    contrib = est.feature_contributions(rows)[:, 1]
    np.testing.assert_allclose(contrib, how[rows["how"]].to_numpy(), atol=1e-5)


def test_a_bag_gives_bands_by_label():
    df, y = _frame()
    est = PiLiDRegressor(gamma=3, n_bags=3, **SMALL).fit(df, y)
    shapes = est.shape_functions()
    how = shapes[shapes.feature == "how"]
    assert sorted(how.x) == sorted(EFFECT)
    members = [m.shape_functions().query("feature == 'how'") for m in est.estimators_]
    assert all(m.x.tolist() == how.x.tolist() for m in members)
    np.testing.assert_allclose(how["std"], np.std([m.value for m in members], axis=0))


def test_an_unseen_level_gets_the_average_and_one_warning_naming_it():
    df, y = _frame()
    est = PiLiDClassifier(gamma=3, n_bags=1, **SMALL).fit(df, y > np.median(y))
    rows = df.head(5).copy()
    before = est.feature_contributions(rows)
    rows["how"] = ["fairly", "extremely", "very", "extremely", "slightly"]
    rows["kind"] = pd.Categorical(["a", "a", "zz", "b", "c"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        after = est.feature_contributions(rows)
        proba = est.predict_proba(rows)
    unseen = [w for w in caught if w.category is UnseenCategoryWarning]
    assert len(unseen) == 2  # one per call
    message = str(unseen[0].message)
    assert "'extremely' in column 'how'" in message and "'zz' in column 'kind'" in message
    np.testing.assert_allclose(after[[1, 3], 1], 0.0, atol=1e-6)
    np.testing.assert_allclose(after[2, 2], 0.0, atol=1e-6)
    np.testing.assert_allclose(after[:, 0], before[:, 0], atol=1e-7)
    assert np.isfinite(proba).all()
    with pytest.warns(UnseenCategoryWarning):
        parts = est.explain(rows)
    with pytest.warns(UnseenCategoryWarning):
        raw = est.decision_function(rows)
    np.testing.assert_allclose(parts.sum(axis=1), raw, atol=1e-5)


def test_nan_in_a_categorical_column_is_a_missing_value_with_its_own_contribution():
    df, y = _frame(600, nan_share=0.15)
    est = PiLiDRegressor(gamma=3, n_bags=1, **{**SMALL, "epochs": 60}).fit(df, y)
    assert est.missing_.tolist() == [False, True, False, False]
    how = est.shape_functions().query("feature == 'how'")
    assert how.x.isna().sum() == 1
    by_level = how[how.x.notna()].set_index("x")["value"]
    nan_value = float(how.value[how.x.isna()].iloc[0])
    # truth: missing +4, above "very" (+2.5), 1.5 above it
    assert nan_value > by_level["very"]
    assert abs((nan_value - by_level["very"]) - 1.5) < 0.5
    rows = df[df["how"].isna()].head(3)
    np.testing.assert_allclose(est.feature_contributions(rows)[:, 1], nan_value, atol=1e-5)


@pytest.mark.filterwarnings("ignore::pilid.nn.gates.GateOrderWarning")  # 2 epochs of phase 1
def test_pilib_and_the_explanation_display_use_the_levels():
    df, y = _frame(300)
    est = PiLiBRegressor(
        gamma=3,
        n_blocks=3,
        warmup_epochs=1,
        phase1_epochs=2,
        epochs=3,
        random_state=0,
        device="cpu",
    ).fit(df, y)
    assert sorted(est.shape_functions().query("feature == 'how'").x) == sorted(EFFECT)
    display = ExplanationDisplay.from_estimator(est, df, row=0, max_features=4)
    assert f"how = {df['how'].iloc[0]}" in display.labels_


@pytest.mark.parametrize("value", ["fairly", None])
def test_fit_on_a_single_row_level_or_a_nan_has_finite_outputs(value):
    df, y = _frame(120)
    df.loc[0, "how"] = value
    est = PiLiDRegressor(gamma=2, n_bags=1, **SMALL).fit(df, y)
    assert np.isfinite(est.predict(df)).all()
