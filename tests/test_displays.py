"""The display objects (`pilid.inspection.displays`): what `ShapeDisplay` and `InteractionDisplay`
draw is the table they are given, point for point (missing-value markers, categorical levels,
one colour per class, a bag's band), and the estimators' plots draw through them."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from pilid import (  # noqa: E402
    MLPRegressor,
    NITRegressor,
    PiLiBRegressor,
    PiLiDClassifier,
    PiLiDRegressor,
)
from pilid.errors import PilidError  # noqa: E402
from pilid.inspection.displays import MISSING_LABEL, ShapeDisplay  # noqa: E402
from pilid.inspection.interaction_display import InteractionDisplay  # noqa: E402

LEVELS = ["not", "fairly", "very"]


def _axes(n: int):
    """n axes of a new `Figure` (no pyplot)."""
    return Figure(figsize=(3 * n, 2)).subplots(1, n, squeeze=False)[0]


def _tick_labels(ax) -> dict[float, str]:
    """The x tick labels as drawn: position -> text."""
    ax.figure.draw_without_rendering()
    return {float(t.get_position()[0]): t.get_text() for t in ax.get_xticklabels()}


def _table() -> pd.DataFrame:
    """Two numeric features (rows shuffled) and one of string levels; `a` and `b` have a
    missing-value row."""
    return pd.DataFrame(
        {
            "feature": ["a", "a", "a", "a", "b", "b", "b", "b", "c", "c", "c"],
            "x": [2.0, 0.0, np.nan, 1.0, "not", "fairly", "very", np.nan, 0.5, 4.0, 1.5],
            "value": [0.5, 0.0, -0.3, 1.0, 1.0, 2.0, 3.0, 0.25, 0.2, 0.1, 0.3],
        }
    )


def test_lines_are_the_tables_points_in_x_order():
    table = _table()
    display = ShapeDisplay.from_shapes(table, features=["a", "c"], ax=_axes(2))
    assert display.lines_.shape == (2, 1) and display.classes_ == [None]
    assert [a.get_title() for a in display.axes_] == ["a", "c"]
    for line, name in zip(display.lines_[:, 0], ["a", "c"]):
        part = table[(table["feature"] == name) & table["x"].notna()]
        part = part.assign(x=part["x"].astype(float)).sort_values("x")
        np.testing.assert_array_equal(line.get_xdata(), part["x"].to_numpy())
        np.testing.assert_array_equal(line.get_ydata(), part["value"].to_numpy())
    assert display.missing_[1, 0] is None  # c has no missing row
    assert (display.bands_ == None).all()  # noqa: E711 (no band columns)
    assert display.legend_ is None
    # integers pick features by position in feature_names, unknown names fail
    picked = ShapeDisplay.from_shapes(table, features=[2], ax=_axes(1))
    assert [a.get_title() for a in picked.axes_] == ["c"]
    with pytest.raises(PilidError, match="unknown feature"):
        ShapeDisplay.from_shapes(table, features=["nope"], ax=_axes(1))
    with pytest.raises(PilidError, match="pass enough axes"):
        ShapeDisplay.from_shapes(table, ax=_axes(2))
    with pytest.raises(PilidError, match="lacks column"):
        ShapeDisplay.from_shapes(table.drop(columns="value"))


def test_a_missing_row_is_a_marker_right_of_the_curve_at_an_na_tick():
    table = _table()
    display = ShapeDisplay.from_shapes(table, features=["a", "b"], ax=_axes(2))
    # numeric: the marker lies right of the curve's last point, at the NA row's value
    line, marker = display.lines_[0, 0], display.missing_[0, 0]
    assert np.isfinite(line.get_xdata()).all() and len(line.get_xdata()) == 3
    (mx,), (my,) = marker.get_xdata(), marker.get_ydata()
    assert mx > line.get_xdata().max() and my == -0.3
    assert marker.get_linestyle() == "None"  # a marker, not joined to the curve
    ticks = _tick_labels(display.axes_[0])
    assert ticks[mx] == MISSING_LABEL
    assert all(x <= 2.0 for x, text in ticks.items() if text != MISSING_LABEL)
    left, right = display.axes_[0].get_xlim()
    assert left < 0.0 and mx < right  # the whole curve and the marker are in view
    # categorical: the marker sits one step after the last level
    (bx,), (by,) = display.missing_[1, 0].get_xdata(), display.missing_[1, 0].get_ydata()
    assert (bx, by) == (3.0, 0.25)
    assert list(_tick_labels(display.axes_[1]).values()) == [*LEVELS, MISSING_LABEL]


def test_categorical_ticks_are_the_levels_flagged_or_given_as_labels():
    table = _table()
    display = ShapeDisplay.from_shapes(table, features=["b"], ax=_axes(1))
    ax, line = display.axes_[0], display.lines_[0, 0]
    assert list(_tick_labels(ax).values())[:3] == LEVELS
    np.testing.assert_array_equal(line.get_xdata(), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(line.get_ydata(), [1.0, 2.0, 3.0])
    assert line.get_drawstyle() == "steps-mid"
    # numeric codes flagged categorical (one flag per feature, as `categorical_`)
    codes = pd.DataFrame({"feature": "k", "x": [0.0, 1.0, 2.0], "value": [0.0, -1.0, 1.0]})
    flagged = ShapeDisplay.from_shapes(codes, categorical=[True], ax=_axes(1))
    assert list(_tick_labels(flagged.axes_[0]).values()) == ["0", "1", "2"]
    assert flagged.lines_[0, 0].get_drawstyle() == "steps-mid"
    plain = ShapeDisplay.from_shapes(codes, categorical=[False], ax=_axes(1))
    assert plain.lines_[0, 0].get_drawstyle() == "default"


def test_one_colour_per_class_the_same_in_every_panel_with_a_legend():
    base = _table()
    classes = ["setosa", "versicolor", "virginica"]
    table = pd.concat(
        [base.assign(value=base["value"] * (k + 1), **{"class": c}) for k, c in enumerate(classes)]
    )
    display = ShapeDisplay.from_shapes(table, ax=_axes(3))
    assert display.classes_ == classes and display.lines_.shape == (3, 3)
    colours = [[to_hex(line.get_color()) for line in row] for row in display.lines_]
    assert len(set(colours[0])) == 3 and colours[0] == colours[1] == colours[2]
    for k, line in enumerate(display.lines_[2]):  # feature c, class k: its own rows
        part = table[(table["feature"] == "c") & (table["class"] == classes[k])]
        part = part.assign(x=part["x"].astype(float)).sort_values("x")
        np.testing.assert_allclose(line.get_ydata(), part["value"].to_numpy())
    for k, marker in enumerate(display.missing_[0]):  # each class's own missing value
        assert marker.get_ydata()[0] == pytest.approx(-0.3 * (k + 1))
        assert to_hex(marker.get_color()) == colours[0][k]
    legend = display.legend_
    assert [t.get_text() for t in legend.get_texts()] == classes
    assert [to_hex(h.get_color()) for h in legend.legend_handles] == colours[0]


def test_a_bags_band_spans_lower_to_upper_or_value_plus_minus_std():
    table = pd.DataFrame({"feature": "a", "x": [0.0, 1.0, 2.0], "value": [0.0, 1.0, 0.5]})
    banded = table.assign(lower=[-0.5, 0.25, 0.0], upper=[0.5, 1.5, 2.0])
    display = ShapeDisplay.from_shapes(banded, ax=_axes(1))
    x = [0.0, 1.0, 2.0]
    assert _corners(display.bands_[0, 0]) == {*zip(x, banded["lower"]), *zip(x, banded["upper"])}
    std = np.array([0.1, 0.2, 1.0])
    with_std = ShapeDisplay.from_shapes(table.assign(std=std), ax=_axes(1))
    value = table["value"].to_numpy()
    expected = {*zip(x, value - std), *zip(x, value + std)}
    assert _corners(with_std.bands_[0, 0]) == {(a, round(b, 12)) for a, b in expected}


def _corners(band) -> set:
    """The distinct (x, y) vertices of a band's polygon (y rounded to 12 places)."""
    xy = np.concatenate([p.vertices for p in band.get_paths()])
    return {(float(a), round(float(b), 12)) for a, b in xy}


def _frame(n=120):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"u": rng.normal(size=n), "v": rng.uniform(size=n)})
    X["w"] = rng.choice(LEVELS, size=n)
    y = X["u"] + np.sin(3 * X["v"]) + (X["w"] == "very") * X["v"] + 0.1 * rng.normal(size=n)
    return X, y.to_numpy()


def _by_frequency(column: pd.Series) -> list:
    """The levels of `column`, the most frequent first (ties in sorted order)."""
    counts = column.value_counts()
    return sorted(counts.index, key=lambda level: (-counts[level], level))


def test_from_estimator_draws_shape_functions_and_plot_shapes_returns_its_axes():
    X, y = _frame()
    est = PiLiDRegressor(epochs=2, n_bags=2, batch_size=32, random_state=0, device="cpu")
    est.fit(X, y)
    table = est.shape_functions()
    display = ShapeDisplay.from_estimator(est, ax=_axes(3), X=X)
    assert [a.get_title() for a in display.axes_] == ["u", "v", "w"]
    frequent = _by_frequency(X["w"])  # text levels that hold no number: the most frequent first
    for line, name in zip(display.lines_[:, 0], ["u", "v", "w"]):
        part = table[table["feature"] == name].set_index("x")
        expected = part["value"].reindex(frequent) if name == "w" else part["value"]
        np.testing.assert_allclose(line.get_ydata(), expected.to_numpy())
    assert all(band is not None for band in display.bands_[:, 0])  # a bag of 2
    # w is categorical (est.categorical_): a step per level, the levels as tick labels
    assert list(est.categorical_) == [False, False, True]
    w = display.axes_[2]
    assert display.lines_[2, 0].get_drawstyle() == "steps-mid"
    assert list(_tick_labels(w).values()) == frequent
    # the estimator's method draws the same through the display, on the given axes
    axes = _axes(1)
    returned = est.plot_shapes(features=[1], ax=axes)
    assert returned[0] is axes[0] and axes[0].get_title() == "v"
    np.testing.assert_allclose(
        axes[0].lines[0].get_ydata(), display.lines_[1, 0].get_ydata(), rtol=0, atol=0
    )
    with pytest.raises(PilidError, match="no shape functions"):
        ShapeDisplay.from_estimator(object())


@pytest.fixture(scope="module")
def pilib():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (300, 3))
    y = 2 * X[:, 0] * X[:, 1] + X[:, 2] + 0.05 * rng.normal(size=300)
    blocks = dict(n_blocks=2, block_layers=(4,), warmup_epochs=1, phase1_epochs=2)
    est = PiLiBRegressor(epochs=4, batch_size=64, random_state=0, device="cpu", **blocks)
    return est.fit(X, y)


def _a_pair(est) -> tuple[int, int]:
    """Two features that one active block of `est` uses."""
    for k in est.active_blocks_(0.0):
        used = np.flatnonzero(est.block_features_[k])
        if len(used) >= 2:
            return int(used[0]), int(used[1])
    pytest.fail("no active block of order >= 2 in the tiny PiLiB")


def test_interaction_display_draws_interaction_grid(pilib):
    a, b = _a_pair(pilib)
    display = InteractionDisplay.from_estimator(pilib, a, b, grid=6, ax=_axes(1)[0])
    grid = pilib.interaction_grid(a, b, n=6)
    pd.testing.assert_frame_equal(display.table, grid)
    # the mesh holds value[b, a]: rows follow x_b, columns x_a
    expected = grid.pivot(index="x_b", columns="x_a", values="value").to_numpy()
    np.testing.assert_allclose(np.asarray(display.mesh_.get_array()).reshape(6, 6), expected)
    assert display.ax_.get_xlabel() == f"x{a}" and display.ax_.get_ylabel() == f"x{b}"
    limit = np.abs(grid["value"]).max()
    assert display.mesh_.norm.vmin == pytest.approx(-limit)
    # the estimator's method goes through the display and returns the axes
    ax = _axes(1)[0]
    assert pilib.plot_interaction(a, b, grid=6, ax=ax) is ax
    np.testing.assert_allclose(np.asarray(ax.collections[0].get_array()).reshape(6, 6), expected)
    # PiLiB's shapes draw too
    shapes = ShapeDisplay.from_estimator(pilib, ax=_axes(3))
    assert shapes.lines_.shape == (3, 1)


def test_interaction_display_from_a_shuffled_grid_and_per_class_grids():
    xa, xb = np.array([0.0, 1.0, 2.0]), np.array([10.0, 20.0])
    A, B = np.meshgrid(xa, xb, indexing="ij")
    grid = pd.DataFrame({"x_a": A.ravel(), "x_b": B.ravel()})
    grid["value"] = grid["x_a"] - grid["x_b"] / 10  # an effect whose place is checkable
    shuffled = grid.sample(frac=1.0, random_state=0)
    display = InteractionDisplay.from_grid(shuffled, "p $", "q", ax=_axes(1)[0])
    np.testing.assert_array_equal(display.values, xa[None, :] - xb[:, None] / 10)
    assert display.ax_.get_xlabel() == r"p \$"
    two = pd.concat([grid.assign(**{"class": "no"}), grid.assign(value=0.0, **{"class": "yes"})])
    with pytest.raises(PilidError, match="target="):
        InteractionDisplay.from_grid(two, "p", "q", ax=_axes(1)[0])
    picked = InteractionDisplay.from_grid(two, "p", "q", ax=_axes(1)[0], target="yes")
    assert (picked.values == 0).all()
    with pytest.raises(PilidError, match="no interaction blocks or pair terms"):
        InteractionDisplay.from_estimator(MLPRegressor(), 0, 1)
    with pytest.raises(NotFittedError):  # a PiLiD draws its interactions once fitted
        InteractionDisplay.from_estimator(PiLiDRegressor(), 0, 1)


def test_without_ax_the_displays_make_a_pyplot_figure():
    import matplotlib.pyplot as plt

    display = ShapeDisplay.from_shapes(_table(), ncols=2)
    assert len(display.axes_) == 3 and display.figure_ is plt.gcf()
    assert sum(a.get_visible() for a in display.figure_.axes) == 3  # the 4th panel hidden
    plt.close("all")


def test_nit_has_no_shapes_to_draw():
    with pytest.raises(PilidError, match="no shape functions"):
        ShapeDisplay.from_estimator(NITRegressor())


def test_a_multiclass_model_with_missing_values_and_string_levels_draws_them_all():
    """The estimator's own table (issue 27: `class` column, NaN rows, levels as `x`) drawn."""
    X, _ = _frame(150)
    X.loc[np.random.default_rng(2).random(150) < 0.1, "u"] = np.nan
    y = np.where(X["v"] > 0.6, "hi", np.where(X["v"] < 0.3, "lo", "mid"))
    est = PiLiDClassifier(epochs=2, n_bags=1, batch_size=32, random_state=0, device="cpu")
    table = est.fit(X, y).shape_functions()
    display = ShapeDisplay.from_estimator(est, ax=_axes(3), X=X)
    assert display.classes_ == list(est.classes_)
    assert [t.get_text() for t in display.legend_.get_texts()] == list(est.classes_)
    for k, label in enumerate(est.classes_):
        rows = table[(table["class"] == label) & (table["feature"] == "u")]
        (na_value,) = rows.loc[rows["x"].isna(), "value"]
        assert display.missing_[0, k].get_ydata()[0] == na_value
        np.testing.assert_array_equal(
            display.lines_[0, k].get_ydata(), rows.loc[rows["x"].notna(), "value"]
        )
    assert display.missing_[1, 0] is None  # v had no missing value
    levels = list(dict.fromkeys(table.loc[table["feature"] == "w", "x"]))
    assert sorted(levels) == sorted(LEVELS)
    assert list(_tick_labels(display.axes_[2]).values()) == _by_frequency(X["w"])
