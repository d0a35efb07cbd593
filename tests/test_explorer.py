"""The explorer (`pilid.inspection.explorer`): one self-contained HTML page per fitted model.

Without a browser: the file needs nothing from the network and names every feature, and the
errors are one line each. In headless Chromium (Debian's ``chromium``, driven by Playwright's
Python package; skipped without them): the page loads without a JavaScript error, every panel
draws, the panels show the model's own numbers (shapes, missing and unseen values, densities),
and picking another row in the row picker shows that row's `explain` as its waterfall.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from pilid import MLPRegressor, PiLiBRegressor, PiLiDClassifier, PiLiDRegressor, PiLiDRegressorCV
from pilid.errors import PilidError
from pilid.inspection.explorer import _pairs, explore
from pilid.models.inputs import UnseenCategoryWarning

SMALL = dict(epochs=3, batch_size=32, random_state=0, device="cpu")
BLOCKS = dict(n_blocks=3, block_layers=(4,), warmup_epochs=1, phase1_epochs=3, mask_patience=1)
CHROMIUM = Path("/usr/bin/chromium")
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FEATURES = ["a", "b", "c"]
#: The rows explored hold a level fit never saw; `explore` says so once (its own test).
pytestmark = pytest.mark.filterwarnings("ignore::pilid.models.inputs.UnseenCategoryWarning")


def _data(n=150):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(size=n)})
    X.loc[rng.choice(n, 15, replace=False), "b"] = np.nan  # missing values, learned in fit
    X["c"] = rng.choice(["lo", "mid", "hi"], size=n)
    signal = X["a"] + np.sin(3 * X["b"].fillna(0)) + (X["c"] == "hi") * X["a"]
    classes = pd.cut(signal, 3, labels=["x", "y", "z"]).astype(str).to_numpy()
    return X, (50 + 20 * signal).to_numpy(), classes


@pytest.fixture(scope="module")
def data():
    X, y, classes = _data()
    shown = X.copy()
    shown.loc[shown.index[2], "c"] = "new"  # a level fit never saw
    return X, y, classes, shown


@pytest.fixture(scope="module")
def models(data):
    X, y, classes, _ = data
    return {
        "pilid_bag_pairs": PiLiDRegressor(
            gamma=2, hidden_layers=(8,), n_bags=2, pairs=1, **SMALL
        ).fit(X, y),
        "pilid_binary": PiLiDClassifier(gamma=2, hidden_layers=(8,), **SMALL).fit(
            X, classes == "z"
        ),
        "pilid_3_classes": PiLiDClassifier(gamma=2, hidden_layers=(8,), **SMALL).fit(X, classes),
        "pilib": PiLiBRegressor(gamma=2, **BLOCKS, **SMALL).fit(X, y),
    }


def _panels(model) -> int:
    """Importance, one shape per feature, the pair terms, the deep part, the row picker."""
    return 1 + len(FEATURES) + len(_pairs(model)) + 2


# ------------------------------------------------------------------------------ no browser
@pytest.mark.parametrize("case", ["pilid_bag_pairs", "pilid_binary", "pilid_3_classes", "pilib"])
def test_file_is_self_contained_and_names_every_feature(models, data, tmp_path, case):
    model, shown = models[case], data[3]
    path = model.explore(shown, tmp_path / "model.html")
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc=", text)  # Plotly inlined, nothing fetched
    assert not re.search(r"<link[^>]*\bhref=[\"']?https?:", text)
    assert 1e6 < path.stat().st_size < 8e6  # Plotly's JavaScript and the numbers, no more
    assert text.count('class="plotly-graph-div"') == _panels(model)
    for name in FEATURES:
        assert re.search(rf"\b{name} \(contribution to the", text)


def test_an_unseen_level_is_warned_of_once(models, data, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        explore(models["pilid_bag_pairs"], data[3], tmp_path / "model.html")
    assert [type(w.message) for w in caught] == [UnseenCategoryWarning]
    assert "'new'" in str(caught[0].message)


def test_pairs_of_each_model_kind(models):
    assert _pairs(models["pilid_bag_pairs"]) == [tuple(p) for p in models["pilid_bag_pairs"].pairs_]
    groups = models["pilib"].interactions_(min_order=2)
    assert {f for pair in _pairs(models["pilib"]) for f in pair} == {f for g in groups for f in g}
    assert _pairs(models["pilid_3_classes"]) == []


def test_missing_plotly_names_the_extra(models, data, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "plotly", None)  # import plotly raises ImportError
    with pytest.raises(PilidError, match=r'pip install "pilid\[explore\]"'):
        explore(models["pilid_binary"], data[0], tmp_path / "model.html")
    assert not (tmp_path / "model.html").exists()


def test_bad_inputs_are_one_line_errors(models, data, tmp_path):
    X = data[0]
    cases = [
        (models["pilid_3_classes"], X, {"class_label": "w"}, "class_label='w'"),
        (models["pilid_binary"], X.drop(columns="b"), {}, "lacks the model's feature 'b'"),
        (models["pilid_binary"], X.head(0), {}, "X has no rows"),
        (models["pilid_binary"], X, {"max_rows": 0}, "max_rows=0"),
        (models["pilid_binary"], X, {"class_label": True}, "class_label=True"),
    ]
    for model, rows, options, message in cases:
        with pytest.raises(PilidError, match=re.escape(message)) as error:
            explore(model, rows, tmp_path / "model.html", **options)
        assert "\n" not in str(error.value)
    with pytest.raises(NotFittedError):
        explore(PiLiDRegressor(), X, tmp_path / "model.html")
    with pytest.raises(PilidError, match="MLPRegressor has no shapes"):
        explore(MLPRegressor(**SMALL).fit(X[["a"]], data[1]), X[["a"]], tmp_path / "model.html")
    assert not (tmp_path / "model.html").exists()


def test_cv_search_explores_its_refit_model(data, tmp_path):
    X, y, _, _ = data
    params = dict(hidden_layers=(8,), n_bags=1, epochs=3, batch_size=32, device="cpu")
    search = PiLiDRegressorCV(
        gammas=(2,), lams=(1e-3,), cv=2, estimator_params=params, random_state=0
    ).fit(X, y)
    text = explore(search, X, tmp_path / "cv.html").read_text(encoding="utf-8")
    assert f"{type(search.best_estimator_).__name__} explorer" in text


# ----------------------------------------------------------------------------- in a browser
@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="no Playwright (pip install playwright)"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        yield chromium
        chromium.close()


def _open(browser, path):
    """The page of `path` from file://, its JavaScript errors collected in a list."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(Path(path).resolve().as_uri(), wait_until="load")
    page.wait_for_function(
        "[...document.querySelectorAll('.js-plotly-plot')].every(d => d._fullLayout)"
    )
    return page, errors


#: Per panel: its traces and its drawn marks (bars, lines, areas, heat-map images) of size > 0.
DRAWN = """[...document.querySelectorAll('.js-plotly-plot')].map(d => [
    d.querySelectorAll('.plot-container').length,
    d.data.length,
    [...d.querySelectorAll('.trace path, .hm image')].filter(e => {
        const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0;
    }).length,
])"""
WATERFALL = "[...document.querySelectorAll('.js-plotly-plot')].find(d => d.data[0].type == "
WATERFALL += "'waterfall').data[0]"


def _traces(page, panel: int) -> dict:
    """The traces of a feature's panel (`panel` 1, 2, ...) by subplot: shape, missing / unseen
    values, density, missing / unseen counts."""
    data = page.evaluate(  # as drawn: Plotly's own full data (numbers decoded)
        f"document.getElementById('panel-{panel}')._fullData"
        ".map(t => ({xaxis: t.xaxis, y: Array.from(t.y)}))"
    )
    where = {"x": "shape", "x2": "special", "x3": "density", "x4": "counts"}
    out = {}
    for trace in data:
        out.setdefault(where[trace["xaxis"]], []).append(trace)
    return out


def _check_row(page, model, X, row: int, explained: pd.DataFrame, raw: np.ndarray):
    """The waterfall shown is row `row`'s `explain`, its total the raw output."""
    shown = page.evaluate(WATERFALL)
    parts = dict(zip(shown["customdata"], shown["x"]))
    expected = explained.iloc[row]
    scale = float(np.abs(raw).max())
    for term, value in parts.items():
        if term == "total":
            assert value == pytest.approx(raw[row], abs=1e-6 * scale)
        elif term == "rest":
            drawn = [t for t in parts if t in FEATURES]
            rest = expected[[f for f in FEATURES if f not in drawn]].sum()
            assert value == pytest.approx(rest, abs=1e-9 * scale)
        else:
            assert value == pytest.approx(expected[term], abs=1e-9 * scale)
    assert {"intercept", "deep", "total"} <= set(parts)
    return shown["x"]


def _pick(page, row: int) -> None:
    page.click(".updatemenu-header")
    page.locator(".updatemenu-dropdown-button").nth(row).click()
    page.wait_for_function(f"{WATERFALL}.customdata.length > 0")


#: One case runs in the fast lane (make test: the browser test runs there too), the rest in the
#: slow one.
SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "case,class_label",
    [
        pytest.param("pilid_bag_pairs", None, marks=SLOW),
        ("pilid_binary", None),
        pytest.param("pilid_3_classes", "y", marks=SLOW),
        pytest.param("pilib", None, marks=SLOW),
    ],
)
def test_page_draws_every_panel_and_the_picked_row(
    browser, models, data, tmp_path, case, class_label
):
    model, shown = models[case], data[3]
    path = explore(model, shown, tmp_path / "model.html", class_label=class_label, max_rows=20)
    page, errors = _open(browser, path)
    drawn = page.evaluate(DRAWN)
    assert len(drawn) == _panels(model)
    assert all(containers == 1 and traces > 0 and marks > 0 for containers, traces, marks in drawn)

    explained = model.explain(shown)
    classifier = hasattr(model, "decision_function")
    raw = model.decision_function(shown) if classifier else model.predict(shown)
    if class_label is not None:
        explained = explained.loc[class_label]
        raw = raw[:, list(model.classes_).index(class_label)]
    first = _check_row(page, model, shown, 0, explained, raw)
    _pick(page, 3)
    assert _check_row(page, model, shown, 3, explained, raw) != first
    _pick(page, 5)  # a later row: the open list scrolls to the active one, hiding those above
    _check_row(page, model, shown, 5, explained, raw)
    assert errors == []
    page.close()


@pytest.mark.slow
def test_panels_show_the_models_shapes_missing_values_and_densities(
    browser, models, data, tmp_path
):
    model, shown = models["pilid_bag_pairs"], data[3]
    page, errors = _open(browser, explore(model, shown, tmp_path / "model.html"))
    shapes = model.shape_functions()
    explained = model.explain(shown)
    for panel, name in enumerate(FEATURES, start=1):
        traces = _traces(page, panel)
        column = shown[name]
        curve = shapes[(shapes["feature"] == name) & shapes["x"].notna()]
        drawn = traces["shape"][-1]  # over the band's two edges (a bag)
        np.testing.assert_allclose(drawn["y"], curve["value"].to_numpy(dtype=float))
        if name != "c":
            upper, lower = (t["y"] for t in traces["shape"][:2])
            np.testing.assert_allclose(upper, curve["upper"].to_numpy(dtype=float))
            np.testing.assert_allclose(lower, curve["lower"].to_numpy(dtype=float))
        counts = traces["counts"][0]["y"]
        assert counts[0] == column.isna().sum()
        levels = set(model.categories_.get(FEATURES.index(name), []))
        density = traces["density"][0]["y"]
        if name == "c":
            assert counts[1] == (~column.isin(levels)).sum()  # the unseen level "new"
            assert sum(density) == column.isin(levels).sum()
            new = explained.loc[shown.index[2], "c"]
            assert traces["special"][0]["y"][1] == pytest.approx(new, abs=1e-6)
        else:
            assert sum(density) == column.notna().sum()
        if column.isna().any():  # the contribution of a missing value, as explain gives it
            nan_row = column.index[column.isna()][0]
            value = explained.loc[nan_row, name]
            assert traces["special"][0]["y"][0] == pytest.approx(value, abs=1e-6)
    assert errors == []
    page.close()
