"""`explain(X)` and its waterfall (`pilid.inspection.explanation`): the columns of every row sum to
the raw output the estimator computes on its own (`predict` / `decision_function`), the feature
columns are `feature_contributions`, and the plot draws one bar per part."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from pilid import (
    NITClassifier,
    NITRegressor,
    PiLiBClassifier,
    PiLiBRegressor,
    PiLiDClassifier,
    PiLiDRegressor,
)
from pilid.errors import PilidError
from pilid.inspection.explanation import DEEP, INTERCEPT, ExplanationDisplay, explain

SMALL = dict(epochs=3, batch_size=32, random_state=0, device="cpu")
BLOCKS = dict(n_blocks=3, block_layers=(4,), warmup_epochs=1, phase1_epochs=3, mask_patience=1)
NAMES = ["price $ and $ tax", "b", "c"]


def _data(n=120):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({NAMES[0]: rng.normal(size=n), "b": rng.uniform(size=n)})
    X["c"] = rng.choice(["lo", "mid", "hi"], size=n)
    X.index = np.arange(100, 100 + n)  # an index of its own, kept by explain
    signal = X[NAMES[0]] + np.sin(3 * X["b"]) + (X["c"] == "hi") * X["b"]
    y = 50.0 + 20.0 * (signal + 0.1 * rng.normal(size=n))  # far from standardised units
    return X, y.to_numpy(), (signal > signal.median()).to_numpy()


def _raw(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") else model.predict(X)


def _check_sums(model, X):
    with warnings.catch_warnings():  # e.g. no "X does not have valid feature names" from a bag
        warnings.simplefilter("error")
        table = model.explain(X)
    raw = _raw(model, X)
    scale = float(np.abs(raw).max())
    np.testing.assert_allclose(table.sum(axis=1).to_numpy(), raw, rtol=0, atol=1e-6 * scale)
    assert list(table.columns[-2:]) == [DEEP, INTERCEPT]
    return table


CASES = [
    ("pilid_reg", lambda: PiLiDRegressor(gamma=2, hidden_layers=(8,), n_bags=1, **SMALL), "y"),
    ("pilid_clf", lambda: PiLiDClassifier(gamma=2, hidden_layers=(8,), n_bags=1, **SMALL), "c"),
    ("pilid_bag", lambda: PiLiDRegressor(gamma=2, hidden_layers=(8,), n_bags=2, **SMALL), "y"),
    ("pilid_bag_clf", lambda: PiLiDClassifier(gamma=2, hidden_layers=(8,), n_bags=2, **SMALL), "c"),
    ("pilib_reg", lambda: PiLiBRegressor(gamma=2, **BLOCKS, **SMALL), "y"),
    ("pilib_clf", lambda: PiLiBClassifier(gamma=2, **BLOCKS, **SMALL), "c"),
]


@pytest.mark.parametrize("make,target", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_explain_sums_to_raw_output_frame_input(make, target):
    X, y, c = _data()
    model = make().fit(X, y if target == "y" else c)
    table = _check_sums(model, X)
    assert list(table.columns) == [*NAMES, DEEP, INTERCEPT]
    assert table.index.equals(X.index)
    np.testing.assert_array_equal(table[NAMES].to_numpy(), model.feature_contributions(X))
    np.testing.assert_array_equal(table[INTERCEPT].to_numpy(), model.intercept_)
    assert table[DEEP].abs().max() > 0  # the deep part is there, not folded into a feature


def test_explain_array_input_names_columns_x0_x1():
    X, y, _ = _data()
    A = X[NAMES[:2]].to_numpy()
    model = PiLiDRegressor(gamma=2, hidden_layers=(8,), n_bags=2, **SMALL).fit(A, y)
    table = _check_sums(model, A)
    assert list(table.columns) == ["x0", "x1", DEEP, INTERCEPT]
    assert isinstance(table.index, pd.RangeIndex) and len(table) == len(A)
    np.testing.assert_array_equal(table[["x0", "x1"]].to_numpy(), model.feature_contributions(A))


def test_explain_regression_in_target_units_not_standardised():
    """The intercept is the target's scale (about 50), the parts sum to `predict` in y's units."""
    X, y, _ = _data()
    model = PiLiDRegressor(gamma=2, hidden_layers=None, n_bags=1, pairs=0, **SMALL).fit(X, y)
    table = _check_sums(model, X)
    assert 30 < table[INTERCEPT].iloc[0] < 70
    np.testing.assert_array_equal(table[DEEP].to_numpy(), 0.0)  # no deep part: a zero column


@pytest.mark.parametrize("cls,target", [(NITRegressor, "y"), (NITClassifier, "c")])
def test_explain_nit_is_deep_plus_intercept(cls, target):
    X, y, c = _data()
    A = X[NAMES[:2]].to_numpy()
    model = cls(**BLOCKS, **SMALL).fit(A, y if target == "y" else c)
    table = _check_sums(model, A)
    assert list(table.columns) == [DEEP, INTERCEPT]


def test_explain_refuses_a_feature_named_like_its_columns():
    X, y, _ = _data()
    X = X.rename(columns={"b": "deep"})
    model = PiLiDRegressor(gamma=2, hidden_layers=None, n_bags=1, **SMALL).fit(X, y)
    with pytest.raises(PilidError, match="rename"):
        explain(model, X)


def _bar_widths(display):
    return np.array([p.get_width() for p in display.ax_.patches])


def test_waterfall_starts_at_the_intercept_and_ends_at_the_logit():
    X, _, c = _data()
    model = PiLiDClassifier(gamma=2, hidden_layers=(8,), n_bags=1, **SMALL).fit(X, c)
    ax = Figure().add_subplot()
    display = model.plot_explanation(X, row=5, ax=ax, max_features=10)
    assert display.ax_ is ax
    assert len(ax.patches) == len(NAMES) + 1  # every feature and the deep part
    row = model.explain(X.iloc[[5]]).iloc[0]
    logit = model.decision_function(X.iloc[[5]])[0]
    tol = 1e-6 * max(1.0, abs(logit))
    assert display.start_.get_xdata()[0] == pytest.approx(row[INTERCEPT])
    assert ax.patches[0].get_x() == pytest.approx(row[INTERCEPT])  # the first bar starts there
    assert row[INTERCEPT] + _bar_widths(display).sum() == pytest.approx(logit, abs=tol)
    ends = [p.get_x() + p.get_width() for p in ax.patches]
    starts = [p.get_x() for p in ax.patches]
    np.testing.assert_allclose(starts[1:], ends[:-1], atol=1e-9)  # end to end
    assert ends[-1] == pytest.approx(logit, abs=tol)
    assert _bar_widths(display)[-1] == pytest.approx(row[DEEP])
    assert [t.get_text() for t in display.bar_labels_] == [
        f"{w:+.3g}" for w in _bar_widths(display)
    ]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == INTERCEPT and labels[-1] == DEEP
    dollar = [t for t in labels if t.startswith("price")]
    assert dollar == [f"price \\$ and \\$ tax = {X[NAMES[0]].iloc[5]:.4g}"]
    assert f"c = {X['c'].iloc[5]}" in labels  # a categorical feature by its level
    numbers = [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", ax.get_title())]
    probability = model.predict_proba(X.iloc[[5]])[0, 1]
    assert numbers[-2:] == [pytest.approx(logit, rel=1e-3), pytest.approx(probability, rel=1e-2)]


def test_waterfall_axis_spans_the_bars_not_zero():
    X, y, _ = _data()
    y = y + 500.0  # an intercept far from 0 beside contributions of a few units
    model = PiLiDRegressor(gamma=2, hidden_layers=(8,), n_bags=1, **SMALL).fit(X, y)
    ax = Figure().add_subplot()
    display = model.plot_explanation(X, row=3, ax=ax)
    row = model.explain(X.iloc[[3]]).iloc[0]
    order = np.argsort(-np.abs(row[NAMES].to_numpy()), kind="stable")
    parts = [row[INTERCEPT], *row[NAMES].to_numpy()[order], row[DEEP]]
    points = np.cumsum(parts)  # the intercept and every bar's end
    lo, hi = ax.get_xlim()
    assert lo > 0.0  # the axis does not start at 0
    span = points.max() - points.min()
    assert lo == pytest.approx(points.min() - 0.12 * span)
    assert hi == pytest.approx(points.max() + 0.12 * span)
    assert "probability" not in ax.get_title()  # a regressor has none
    assert display.bars_[0].get_x() == pytest.approx(row[INTERCEPT])


def test_waterfall_folds_the_smallest_features_into_one_bar():
    X, y, _ = _data()
    model = PiLiDRegressor(gamma=2, hidden_layers=(8,), n_bags=2, **SMALL).fit(X, y)
    display = ExplanationDisplay.from_estimator(model, X, row=0, max_features=1)
    assert isinstance(display.figure_, Figure)
    assert len(display.ax_.patches) == 1 + 1 + 1  # top feature, the rest, deep
    row = model.explain(X.iloc[[0]]).iloc[0]
    contrib = row[NAMES].to_numpy()
    top = int(np.argmax(np.abs(contrib)))
    widths = _bar_widths(display)
    assert widths[0] == pytest.approx(contrib[top])
    assert widths[1] == pytest.approx(contrib.sum() - contrib[top])
    assert display.labels_[2] == "2 other features"
    total = row[INTERCEPT] + widths.sum()
    assert total == pytest.approx(model.predict(X.iloc[[0]])[0], rel=1e-6)


def test_waterfall_refuses_a_row_out_of_range():
    X, y, _ = _data(n=60)
    model = PiLiDRegressor(gamma=2, hidden_layers=None, n_bags=1, **SMALL).fit(X, y)
    with pytest.raises(PilidError, match="row=60"):
        model.plot_explanation(X, row=60)


def test_the_cv_estimator_explains_with_its_refit_model():
    from pilid.estimators.pilid_cv import PiLiDRegressorCV

    X, y, _ = _data()
    model = PiLiDRegressorCV(
        gammas=(1, 3), lams=(1e-3,), cv=2, random_state=0, estimator_params=SMALL_CV
    ).fit(X, y)
    table = model.explain(X)
    pd.testing.assert_frame_equal(table, model.best_estimator_.explain(X))
    np.testing.assert_allclose(table.sum(axis=1), model.predict(X), rtol=1e-6, atol=1e-5)
    display = model.plot_explanation(X, row=2)
    assert isinstance(display, ExplanationDisplay)


SMALL_CV = dict(epochs=3, batch_size=32, device="cpu", hidden_layers=(8,))


def test_a_k_class_waterfall_gives_its_class_probability():
    X, y, _ = _data()
    labels = np.array(["lo", "mid", "hi"])[np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))]
    model = PiLiDClassifier(gamma=2, hidden_layers=(8,), n_bags=1, **SMALL).fit(X, labels)
    display = ExplanationDisplay.from_estimator(model, X, row=4, class_label="mid")
    title = display.ax_.get_title()
    assert title.startswith("logit of class 'mid' = ")
    numbers = [float(v) for v in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", title)]
    k = list(model.classes_).index("mid")
    logit = model.decision_function(X.iloc[[4]])[0, k]
    probability = model.predict_proba(X.iloc[[4]])[0, k]
    assert numbers[-2:] == [pytest.approx(logit, rel=1e-3), pytest.approx(probability, rel=1e-2)]
