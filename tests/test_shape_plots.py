"""`plot_shapes` over its data (`pilid.inspection.displays`, `pilid.inspection.shapes`): the
strip of the data's distribution under each shape, one y scale on request, panels by
importance, few-valued features as points at their values, levels in a readable order and
whole names. Layouts are read from the drawn artists (Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from pilid import PiLiDRegressor  # noqa: E402
from pilid.errors import PilidError  # noqa: E402
from pilid.inspection.displays import ELLIPSIS, ShapeDisplay  # noqa: E402
from pilid.inspection.joint_grid import HISTOGRAM_BINS  # noqa: E402
from pilid.inspection.shape_panels import DENSITY_HEIGHT  # noqa: E402
from pilid.inspection.shapes import level_order  # noqa: E402

NAMES = ["age", "senior", "children", "tenure", "band", "service"]
SERVICE = ["No internet service", "Fiber optic", "DSL"]


def _frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "age": rng.normal(40, 10, n),
            "senior": rng.integers(0, 2, n),
            "children": rng.integers(0, 4, n),
            "tenure": rng.choice(["9", "10", "11", "12"], n),
            "band": rng.choice(["<5", "5", "10+"], n),
            "service": rng.choice(SERVICE, n, p=[0.2, 0.5, 0.3]),
        }
    )
    X.loc[rng.random(n) < 0.05, "age"] = np.nan
    age = np.nan_to_num(X["age"].to_numpy() - 40.0) / 10.0
    y = 3 * age + 2 * X["senior"] + 0.3 * X["children"] + (X["service"] == "DSL")
    return X, (y + 0.2 * rng.normal(size=n)).to_numpy()


@pytest.fixture(scope="module")
def fitted():
    X, y = _frame()
    model = PiLiDRegressor(gamma=4, hidden_layers=(8,), n_bags=2, pairs=0, epochs=6)
    return model.set_params(random_state=0, device="cpu", batch_size=64).fit(X, y), X


def _axes(n):
    return Figure(figsize=(3 * n, 2.5)).subplots(1, n, squeeze=False)[0]


def _heights(bars) -> np.ndarray:
    return np.array([p.get_height() for p in bars.patches])


def _centres(bars) -> np.ndarray:
    return np.array([p.get_x() + p.get_width() / 2 for p in bars.patches])


def _ticks(ax) -> list[str]:
    ax.figure.draw_without_rendering()
    return [t.get_text() for t in ax.get_xticklabels()]


def test_the_strip_is_the_histogram_of_the_given_rows(fitted):
    model, X = fitted
    display = ShapeDisplay.from_estimator(model, features=["age"], ax=_axes(1), X=X)
    bars = display.density_[0]
    ages = X["age"].dropna().to_numpy()
    counts, edges = np.histogram(ages, bins=HISTOGRAM_BINS)
    counts = np.append(counts, X["age"].isna().sum())  # the missing rows, at the NA tick
    np.testing.assert_allclose(_heights(bars), DENSITY_HEIGHT * counts / counts.max())
    np.testing.assert_allclose([p.get_x() for p in bars.patches][:-1], edges[:-1])
    ax = display.axes_[0]
    na_tick = [t.get_position()[0] for t in ax.get_xticklabels() if t.get_text() == "NA"]
    assert _centres(bars)[-1] == pytest.approx(na_tick[0])
    # heights are a share of the panel: the strip stays at the bottom whatever the y scale
    assert bars.patches[0].get_transform().contains_branch_seperately(ax.transData) == (
        True,
        False,
    )


def test_without_rows_the_strip_is_the_training_distribution_kept_at_fit(fitted):
    model, X = fitted
    display = ShapeDisplay.from_estimator(model, features=["service"], ax=_axes(1))
    bars = display.density_[0]
    # the kept counts are the training rows' (the rows not held out for early stopping)
    assert _heights(bars).max() == pytest.approx(DENSITY_HEIGHT)
    ax = display.axes_[0]
    ax.figure.draw_without_rendering()
    at = {round(t.get_position()[0]): t.get_text() for t in ax.get_xticklabels()}
    share = dict(zip([at[round(c)] for c in _centres(bars)], _heights(bars) / DENSITY_HEIGHT))
    counts = X["service"].value_counts()
    assert share["Fiber optic"] == 1.0  # the most frequent level: the tallest bar
    assert abs(share["DSL"] - counts["DSL"] / counts["Fiber optic"]) < 0.15
    assert ShapeDisplay.from_estimator(model, ax=_axes(6), density=False).density_[0] is None


def test_a_01_and_a_count_feature_are_points_at_their_values(fitted):
    model, X = fitted
    display = ShapeDisplay.from_estimator(model, features=["senior", "children"], ax=_axes(2))
    for i, name in enumerate(["senior", "children"]):
        line = display.lines_[i, 0]
        values = np.sort(X[name].unique()).astype(float)
        assert line.get_linestyle() == "None" and line.get_marker() == "o"
        np.testing.assert_array_equal(line.get_xdata(), values)
        # u_j at each value: the contribution of a row holding it
        rows = pd.concat([X.iloc[[0]]] * len(values), ignore_index=True)
        rows[name] = values.astype(int)
        contrib = model.feature_contributions(rows)[:, NAMES.index(name)]
        np.testing.assert_allclose(line.get_ydata(), contrib, atol=1e-6)
        assert _ticks(display.axes_[i]) == [str(int(v)) for v in values]  # integer ticks
        lo, hi = display.axes_[i].get_xlim()
        assert lo < values[0] and hi > values[-1]  # the end points inside the panel
        counts = X[name].value_counts().sort_index().to_numpy()
        np.testing.assert_allclose(_centres(display.density_[i]), values)
        assert _heights(display.density_[i]) == pytest.approx(
            DENSITY_HEIGHT * counts / counts.max(), rel=0.2
        )


def test_levels_in_numeric_order_or_by_frequency(fitted):
    model, X = fitted
    display = ShapeDisplay.from_estimator(
        model, features=["tenure", "band", "service"], ax=_axes(3), X=X
    )
    assert _ticks(display.axes_[0]) == ["9", "10", "11", "12"]
    assert _ticks(display.axes_[1]) == ["<5", "5", "10+"]
    service = [t.replace("\n", " ") for t in _ticks(display.axes_[2])]
    assert service == list(X["service"].value_counts().index)  # the most frequent first
    table = model.shape_functions().set_index(["feature", "x"])["value"]
    steps = display.lines_[1, 0].get_ydata()
    np.testing.assert_allclose(steps, table.loc["band"].reindex(["<5", "5", "10+"]))


def test_a_categorical_column_keeps_its_order():
    X, y = _frame(n=300, seed=1)
    order = ["No internet service", "DSL", "Fiber optic"]
    X["service"] = pd.Categorical(X["service"], categories=sorted(SERVICE))
    model = PiLiDRegressor(gamma=2, hidden_layers=None, n_bags=1, pairs=0, epochs=2)
    model.set_params(random_state=0, device="cpu").fit(X, y)
    given = ShapeDisplay.from_estimator(model, features=["service"], ax=_axes(1), X=X)
    sorted_levels = [t.replace("\n", " ") for t in _ticks(given.axes_[0])]
    assert sorted_levels == sorted(SERVICE)  # the Categorical's order, not the frequencies
    X["service"] = X["service"].cat.reorder_categories(order)
    model.fit(X, y)  # not in sorted order: kept as given even without X
    kept = ShapeDisplay.from_estimator(model, features=["service"], ax=_axes(1))
    assert [t.replace("\n", " ") for t in _ticks(kept.axes_[0])] == order


def test_long_level_names_are_wrapped_never_cut_in_the_middle(fitted):
    model, X = fitted
    display = ShapeDisplay.from_estimator(model, features=["service"], ax=_axes(1))
    ticks = _ticks(display.axes_[0])
    assert "No internet\nservice" in ticks
    for tick in ticks:
        assert ELLIPSIS not in tick
        assert tick.replace("\n", " ") in SERVICE
    many = pd.DataFrame(
        {
            "feature": "f",
            "x": [f"an unusually long level name {k}" for k in range(6)],
            "value": np.arange(6.0),
        }
    )
    shown = _ticks(ShapeDisplay.from_shapes(many, ax=_axes(1)).axes_[0])
    assert len(set(shown)) == 6
    for tick, level in zip(shown, many["x"]):  # one line each: whole, or its start and "…"
        assert tick == level or (tick.endswith(ELLIPSIS) and level.startswith(tick[:-1]))


def test_sharey_gives_every_panel_one_scale(fitted):
    model, _ = fitted
    shared = ShapeDisplay.from_estimator(model, ax=_axes(6), sharey=True)
    limits = {a.get_ylim() for a in shared.axes_}
    assert len(limits) == 1
    lo, hi = limits.pop()
    values = model.shape_functions()["value"]
    assert lo <= values.min() and hi >= values.max()
    own = ShapeDisplay.from_estimator(model, ax=_axes(6))
    assert len({a.get_ylim() for a in own.axes_}) > 1


def test_panels_by_importance(fitted):
    model, X = fitted
    display = ShapeDisplay.from_estimator(model, ax=_axes(6), X=X, order="importance")
    table = model.term_importances(X)
    expected = list(table.loc[table["kind"] == "main", "term"])
    assert [a.get_title() for a in display.axes_] == expected
    assert expected[0] == "age"  # 3 (age - 40) / 10 dominates the target
    axes = model.plot_shapes(features=["children", "senior"], order="importance", ax=_axes(2))
    assert [a.get_title() for a in axes] == ["senior", "children"]
    with pytest.raises(PilidError, match="order='size'"):
        model.plot_shapes(order="size")


@pytest.mark.parametrize(
    ("levels", "counts", "expected"),
    [
        (["10", "11", "12", "9"], None, ["9", "10", "11", "12"]),
        (["10+", "5", "<5"], None, ["<5", "5", "10+"]),
        (["<=50K", ">50K"], None, ["<=50K", ">50K"]),
        (["a", "b", "c"], {"a": 1, "b": 5, "c": 3}, ["b", "c", "a"]),
        (["a", "b", "c"], None, ["a", "b", "c"]),
        (["low", "high", "mid"], {"mid": 9}, ["low", "high", "mid"]),  # a Categorical's order
        (["b", "a", "(infrequent)"], {"a": 1}, ["b", "a", "(infrequent)"]),
        (["1 year", "10 years", "2 years"], None, ["1 year", "2 years", "10 years"]),
    ],
)
def test_level_order(levels, counts, expected):
    assert level_order(levels, counts) == expected


def test_a_fixed_order_is_kept():
    assert level_order(["a", "b", "c"], {"c": 9}, fixed=True) == ["a", "b", "c"]
