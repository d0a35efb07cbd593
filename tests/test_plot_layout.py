"""Plots a newcomer can read (issue 49, item 4): `plot_shapes` on several rows of panels keeps
each title clear of the tick labels above, names the output in the first column's y labels and
keeps long level names inside the figure (or shortens them with an ellipsis);
`plot_explanation` draws on the pyplot figure ``plt.gcf()`` returns, names the class (or the
target) in its title and explains its colours in a legend. Layout is read from the artists'
drawn extents (Agg backend)."""

from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from pilid import PiLiDClassifier, PiLiDRegressor  # noqa: E402
from pilid.inspection.displays import ELLIPSIS  # noqa: E402
from pilid.inspection.explanation import COLOUR_MEANING  # noqa: E402

SMALL = dict(gamma=3, hidden_layers=(8,), epochs=2, n_bags=1, pairs=0, batch_size=32, device="cpu")
#: Level names far longer than a panel is wide.
LONG = [
    "an unusually long level name, the first",
    "an unusually long level name, the second",
    "short",
]
NUMERIC = ["age", "income", "hours", "distance"]


def _frame(n: int = 240) -> tuple[pd.DataFrame, np.ndarray]:
    """Four numeric features, a short-level and a long-level categorical one (6 panels)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({name: rng.uniform(0, 1, n) for name in NUMERIC})
    X["colour"] = rng.choice(["red", "green", "blue"], n)
    X["kind"] = rng.choice(LONG, n)
    z = 2 * X["age"].to_numpy() - X["hours"].to_numpy() + (X["kind"] == "short").to_numpy()
    return X, z


@pytest.fixture(scope="module")
def classifier():
    X, z = _frame()
    y = np.where(z > np.median(z), "yes", "no")
    return PiLiDClassifier(random_state=0, **SMALL).fit(X, y), X


@pytest.fixture(scope="module")
def regressor():
    X, z = _frame()
    return PiLiDRegressor(random_state=0, **SMALL).fit(X, pd.Series(z, name="price")), X


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _drawn(fig):
    """Draw `fig` (its layout engine runs) and return the renderer."""
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _visible_labels(ax) -> list:
    """The x tick labels drawn: with text, at a tick inside the axis' view limits."""
    lo, hi = sorted(ax.get_xlim())
    return [
        t
        for t in ax.get_xticklabels()
        if t.get_visible() and t.get_text() and lo <= t.get_position()[0] <= hi
    ]


def _inside(box, outer, tol: float = 0.5) -> bool:
    return (
        box.x0 >= outer.x0 - tol
        and box.y0 >= outer.y0 - tol
        and box.x1 <= outer.x1 + tol
        and box.y1 <= outer.y1 + tol
    )


def test_titles_of_the_second_row_clear_the_panels_above(classifier):
    est, _ = classifier
    axes = np.ravel(est.plot_shapes(ncols=3))
    assert len(axes) == 6
    fig = axes[0].figure
    renderer = _drawn(fig)
    for below, above in zip(axes[3:], axes[:3]):
        title = below.title.get_window_extent(renderer)
        assert below.get_title()  # a title is drawn
        assert title.y1 <= above.get_window_extent(renderer).y0  # under the axes above
        for label in _visible_labels(above):
            assert not title.overlaps(label.get_window_extent(renderer)), label.get_text()


def test_the_first_column_says_which_output_the_shapes_add_to(classifier, regressor):
    est, _ = classifier
    axes = np.ravel(est.plot_shapes(ncols=3))
    assert list(est.classes_) == ["no", "yes"]
    for ax in axes[::3]:  # the first column of each row
        assert ax.get_ylabel() == "contribution to\nlogit of class 'yes'"
    assert all(ax.get_ylabel() == "" for ax in np.delete(axes, [0, 3]))
    fig = axes[0].figure
    renderer = _drawn(fig)
    for ax in axes[::3]:  # the label is drawn inside the figure
        assert _inside(ax.yaxis.label.get_window_extent(renderer), fig.bbox)
    reg, _ = regressor
    assert reg.target_name_ == "price"
    axes = np.ravel(reg.plot_shapes(ncols=3))
    assert axes[0].get_ylabel() == "contribution to\npredicted price"


def test_long_level_names_stay_inside_the_figure_or_end_in_an_ellipsis(classifier):
    est, _ = classifier
    axes = np.ravel(est.plot_shapes(ncols=3))
    fig = axes[0].figure
    renderer = _drawn(fig)
    kind = axes[list(est.feature_names_in_).index("kind")]
    labels = _visible_labels(kind)
    levels = list(est.categories_[5])
    assert len(labels) == len(levels) == 3
    texts = [t.get_text() for t in labels]
    drawn = {" ".join(text.split()): text for text in texts}  # the lines joined again
    for level in levels:  # each level whole, or its start and an ellipsis: never its middle cut
        whole = [
            t for t in drawn if t == level or (t.endswith(ELLIPSIS) and level.startswith(t[:-1]))
        ]
        assert len(whole) == 1, (level, texts)
    assert "short" in texts  # a short name is drawn whole, on one line
    long = [t for t in texts if t != "short"]
    assert all("\n" in t for t in long)  # the long ones wrapped onto lines
    assert len(set(texts)) == 3  # still told apart
    for ax in axes:
        for label in _visible_labels(ax) + [ax.title]:
            box = label.get_window_extent(renderer)
            assert _inside(box, fig.bbox), (label.get_text(), box, fig.bbox)


def test_plot_explanation_draws_on_the_current_pyplot_figure_and_names_the_class(classifier):
    est, X = classifier
    before = plt.figure()  # a previous plot that plt.savefig must not pick
    display = est.plot_explanation(X, row=3)
    assert display.figure_ is plt.gcf() and display.figure_ is not before
    logit = est.decision_function(X.iloc[[3]])[0]
    title = display.ax_.get_title()
    assert title.startswith("logit of class 'yes' = ")
    logit_text, probability_text = re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", title)[-2:]
    assert float(logit_text) == pytest.approx(logit, rel=1e-3, abs=1e-4)
    probability = est.predict_proba(X.iloc[[3]])[0, list(est.classes_).index("yes")]
    assert float(probability_text) == pytest.approx(probability, rel=1e-2)
    assert display.ax_.get_xlabel() == "logit of class 'yes'"


def test_the_waterfall_has_a_legend_of_its_colours_inside_its_figure(classifier):
    est, X = classifier
    display = est.plot_explanation(X, row=0)
    legend = display.legend_
    assert legend is display.ax_.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["raises the output", "lowers the output", "intercept, deep part"]
    colours = [to_hex(h.get_facecolor()) for h in legend.legend_handles]
    assert colours == [to_hex(c) for c in COLOUR_MEANING]
    widths = np.array([p.get_width() for p in display.bars_])
    drawn = [to_hex(p.get_facecolor()) for p in display.bars_]
    for width, colour in list(zip(widths, drawn))[:-1]:  # the features: red up, blue down
        assert colour == colours[0 if width > 0 else 1]
    assert drawn[-1] == colours[2]  # the deep part
    assert to_hex(display.start_.get_color()) == colours[2]  # the intercept's marker
    fig = display.figure_
    renderer = _drawn(fig)
    assert _inside(legend.get_window_extent(renderer), fig.bbox)
    assert not legend.get_window_extent(renderer).overlaps(display.ax_.get_window_extent(renderer))


def test_a_regressor_waterfall_names_its_target(regressor):
    est, X = regressor
    display = est.plot_explanation(X, row=1)
    title = display.ax_.get_title()
    assert title.startswith("predicted price = ")
    value = est.predict(X.iloc[[1]])[0]
    assert float(title.rsplit("= ", 1)[1]) == pytest.approx(value, rel=1e-3)
    unnamed = PiLiDRegressor(random_state=0, **SMALL).fit(X, np.asarray(est.predict(X)))
    assert unnamed.target_name_ is None
    assert unnamed.plot_explanation(X).ax_.get_title().startswith("prediction = ")
