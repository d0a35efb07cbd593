"""`pilid.export.to_table` / `score_table`: the additive part of a fitted PiLiD or PiLiB as a
portable table, scored with NumPy alone, equals the estimator's own additive part
(``intercept + contributions.sum(1)`` of `decompose`, the columns of `explain` but ``deep``) on
held-out rows, missing values and unseen levels included; for regression, two and three
classes, bags and single models, PiLiD and PiLiB."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from _export_models import BLOCKS, SMALL  # tests/_export_models.py

from pilid import (
    MLPRegressor,
    NITClassifier,
    PiLiBClassifier,
    PiLiBRegressor,
    PiLiDClassifier,
    PiLiDRegressor,
)
from pilid.baselines.ga2m import GA2MRegressor
from pilid.errors import PilidError
from pilid.export import read_table, score_table, to_table
from pilid.inspection.explanation import DEEP
from studies._levers import with_levers

pytestmark = [
    pytest.mark.filterwarnings("ignore::pilid.models.inputs.UnseenCategoryWarning"),
    pytest.mark.filterwarnings("ignore::pilid.models.inputs.UnseenMissingWarning"),
]


def _data(n=300, seed=0):
    """A frame with a numeric column with NaN, a text column with NaN, a plain numeric one."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "income": rng.lognormal(3, 0.5, n),
            "age": rng.uniform(18, 80, n).round(),
            "home": rng.choice(["own", "rent", "parents", "other"], n, p=[0.4, 0.4, 0.15, 0.05]),
        }
    )
    X.loc[rng.choice(n, 25, replace=False), "income"] = np.nan
    X.loc[rng.choice(n, 8, replace=False), "home"] = None
    signal = np.log(X["income"].fillna(20)) - 0.03 * X["age"] + (X["home"] == "own") * 0.8
    y = 40.0 + 10.0 * (signal + 0.2 * rng.normal(size=n))
    three = np.where(X["age"] > 60, "old", np.where(X["home"] == "own", "own", "other"))
    return X, y.to_numpy(), np.where(signal > np.median(signal), "yes", "no"), three


def _held_out(X):
    """Test rows with what a table must score as the estimator does: a missing value in a
    column that had them in fit and in one that had none, an unseen level, a missing level."""
    X = X.copy().reset_index(drop=True)
    X.loc[0, "home"] = "castle"  # unseen level
    X.loc[1, "age"] = np.nan  # NaN where fit had none: the average
    X.loc[2, "income"] = np.nan  # the learned missing-value contribution
    X.loc[3, "home"] = None  # a missing level
    X.loc[4, "income"] = 1e6  # beyond the last knot: constant
    X.loc[5, "age"] = -5.0  # before the first knot
    return X


def _additive(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unseen levels, NaN where fit had none
        intercept, contrib, _ = model.decompose(X)
        table = model.explain(X)
    return np.asarray(intercept) + contrib.sum(1), table


CASES = {
    "pilid_reg_bag": (lambda: PiLiDRegressor(gamma=4, hidden_layers=(8,), n_bags=2, **SMALL), 1),
    "pilid_reg_one": (lambda: PiLiDRegressor(gamma=4, hidden_layers=(8,), n_bags=1, **SMALL), 1),
    "pilid_clf_bag": (lambda: PiLiDClassifier(gamma=4, hidden_layers=(8,), n_bags=2, **SMALL), 2),
    "pilid_3_bag": (lambda: PiLiDClassifier(gamma=4, hidden_layers=(8,), n_bags=2, **SMALL), 3),
    "pilid_3_one": (lambda: PiLiDClassifier(gamma=4, hidden_layers=(8,), n_bags=1, **SMALL), 3),
    "pilib_reg": (lambda: PiLiBRegressor(gamma=3, **BLOCKS, **SMALL), 1),
    "pilib_clf_bag": (lambda: PiLiBClassifier(gamma=3, n_bags=2, **BLOCKS, **SMALL), 2),
    "pilib_3": (lambda: PiLiBClassifier(gamma=3, **BLOCKS, **SMALL), 3),
}


@pytest.fixture(scope="module")
def fitted():
    X, y, two, three = _data()
    targets = {1: y, 2: two, 3: three}
    models = {}
    for name, (make, k) in CASES.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models[name] = make().fit(X.iloc[:240], targets[k][:240])
    return models, _held_out(X.iloc[240:])


@pytest.mark.parametrize("case", list(CASES))
def test_the_table_scores_the_additive_part(fitted, case):
    models, X = fitted
    model = models[case]
    table = to_table(model)
    additive, explained = _additive(model, X)
    score = score_table(table, X)
    assert score.shape == additive.shape
    scale = max(1.0, float(np.abs(additive).max()))
    np.testing.assert_allclose(score, additive, rtol=0, atol=1e-6 * scale)
    parts = score_table(table, X, terms=True)  # the columns of explain but its deep part
    want = explained.drop(columns=DEEP)
    assert list(parts.columns) == list(want.columns)
    assert parts.index.equals(want.index)
    np.testing.assert_allclose(parts.to_numpy(), want.to_numpy(), rtol=0, atol=1e-6 * scale)


@pytest.mark.parametrize("case", ["pilid_reg_bag", "pilid_3_bag"])
def test_the_json_file_reads_back_and_scores_the_same(fitted, case, tmp_path):
    models, X = fitted
    path = tmp_path / "table.json"
    table = to_table(models[case], path, X=X)
    again = read_table(path)
    assert again == json.loads(json.dumps(table))
    np.testing.assert_array_equal(score_table(again, X), score_table(table, X))
    np.testing.assert_array_equal(score_table(path, X), score_table(table, X))


def test_the_table_holds_what_the_model_knows(fitted):
    models, _ = fitted
    model = models["pilid_reg_bag"]
    table = to_table(model)
    assert table["format"] == "pilid.table" and table["task"] == "regression"
    assert table["classes"] is None and table["outputs"] == ["prediction"]
    assert table["intercept"] == pytest.approx(model.intercept_)
    income, age, home = table["features"]
    assert [f["name"] for f in table["features"]] == ["income", "age", "home"]
    assert income["kind"] == "numeric" and income["missing_learned"]
    assert income["knots"] == pytest.approx(model.knots_.points[0].tolist())
    assert not age["missing_learned"] and abs(age["missing"]) < 1e-6  # the average: 0
    assert home["kind"] == "categorical" and home["levels"] == model.categories_[2]
    assert abs(home["unseen"]) < 1e-6
    shapes = model.shape_functions()  # the same values as the estimator's shape table
    want = shapes.loc[shapes["feature"] == "income", "value"].to_numpy()
    np.testing.assert_allclose([*income["values"], income["missing"]], want, atol=1e-6)
    three = to_table(models["pilid_3_bag"])
    assert three["classes"] == ["old", "other", "own"] and len(three["intercept"]) == 3
    assert np.shape(three["features"][2]["values"]) == (4, 3)  # a value column per class


def test_the_deep_share_is_explains_deep_column(fitted):
    models, X = fitted
    model = models["pilib_clf_bag"]
    share = to_table(model, X=X)["deep_share"]
    _, explained = _additive(model, X)
    raw = explained.sum(axis=1).to_numpy()
    deep = explained[DEEP].to_numpy()
    assert share[0]["rows"] == len(X)
    assert share[0]["variance_share"] == pytest.approx(np.var(deep) / np.var(raw))
    assert share[0]["mean_abs_deep"] == pytest.approx(np.mean(np.abs(deep)))
    assert to_table(model)["deep_share"] is None


def test_a_spreadsheet_per_feature(fitted, tmp_path):
    models, _ = fitted
    table = to_table(models["pilid_3_bag"], csv_dir=tmp_path / "csv")
    files = sorted(p.name for p in (tmp_path / "csv").iterdir())
    assert files == ["00_income.csv", "01_age.csv", "02_home.csv", "intercept.csv"]
    home = pd.read_csv(tmp_path / "csv" / "02_home.csv")
    assert list(home.columns) == [
        "level",
        "value (logit of old)",
        "value (logit of other)",
        "value (logit of own)",
    ]
    assert list(home["level"]) == [*table["features"][2]["levels"], "(missing)", "(unseen)"]
    np.testing.assert_allclose(home.iloc[:4, 1:].to_numpy(), table["features"][2]["values"])


def test_scoring_needs_neither_torch_nor_the_estimator(fitted, tmp_path):
    models, X = fitted
    path = tmp_path / "table.json"
    to_table(models["pilid_clf_bag"], path)
    X.to_csv(tmp_path / "rows.csv", index=False)
    np.save(tmp_path / "want.npy", score_table(path, X))
    code = f"""
import sys
sys.modules["torch"] = None  # importing torch now fails
import numpy as np, pandas as pd
from pilid.export import score_table
X = pd.read_csv({str(tmp_path / "rows.csv")!r})
got = score_table({str(path)!r}, X)
np.testing.assert_array_equal(got, np.load({str(tmp_path / "want.npy")!r}))
assert not any(name.startswith("pilid.estimators") for name in sys.modules)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_pair_terms_grids_are_the_models_values():
    X, y, _, _ = _data()
    model = PiLiDRegressor(gamma=12, hidden_layers=None, pairs=1, n_bags=1, **SMALL)
    model.fit(X[["income", "age"]].fillna(20.0), y)
    (pair,) = to_table(model)["pairs"]
    assert pair["features"] == [model.pairs_[0][0], model.pairs_[0][1]]
    a, b = (model.feature_names_in_.tolist().index(f) for f in pair["features"])
    nodes_a, nodes_b = (np.asarray(n) for n in pair["nodes"])
    assert len(nodes_a) == 9 and len(nodes_b) == 9  # gamma=12 read on 8 coarse pieces
    grid = np.zeros((len(nodes_a) * len(nodes_b), 2))
    rows = np.tile(X[["income", "age"]].fillna(20.0).iloc[:1].to_numpy(), (len(grid), 1))
    rows[:, a] = np.repeat(nodes_a, len(nodes_b))
    rows[:, b] = np.tile(nodes_b, len(nodes_a))
    x, phi = model._inputs(rows)
    values = model.module_.deep.pairs.terms(phi)[0, :, 0].detach().double().numpy()
    want = model.y_scale_ * values.reshape(len(nodes_a), len(nodes_b))
    np.testing.assert_allclose(pair["values"], want, atol=1e-5 * model.y_scale_)


def test_merged_levels_score_as_the_infrequent_level():
    X, y, _, _ = _data()
    model = with_levers(PiLiDRegressor)(
        gamma=3, hidden_layers=(8,), n_bags=1, min_frequency=30, **SMALL
    )
    model.fit(X, y)
    table = to_table(model)
    home = table["features"][2]
    assert home["levels"][-1] == "(infrequent)" and home["infrequent"] == ["other"]
    rows = pd.concat([X.dropna().head(1)] * 4, ignore_index=True)
    rows["home"] = ["other", "(infrequent)", "own", None]
    score = score_table(table, rows)
    np.testing.assert_allclose(score, _additive(model, rows)[0], atol=1e-5)
    assert score[0] == score[1]


def test_shapes_alone_are_their_table():
    """A PiLiD without the MLP and pair terms has no deep part: its table is the model."""
    X, _, two, _ = _data()
    model = PiLiDClassifier(gamma=4, hidden_layers=None, pairs=0, n_bags=2, **SMALL).fit(X, two)
    table = to_table(model, X=X)
    assert table["deep_share"][0]["variance_share"] == 0.0
    np.testing.assert_allclose(score_table(table, X), model.decision_function(X), atol=1e-6)


def test_the_monotone_sign_is_recorded():
    X, y, _, _ = _data()
    model = PiLiDRegressor(
        gamma=3, hidden_layers=(8,), n_bags=1, monotone_constraints={"age": -1}, **SMALL
    ).fit(X, y)
    signs = [f["monotone"] for f in to_table(model)["features"]]
    assert signs == [0, -1, 0]


@pytest.mark.parametrize("kind", ["ga2m", "mlp", "nit"])
def test_a_model_without_the_table_says_so_on_one_line(kind):
    X, y, two, _ = _data(80)
    numeric = X[["age"]]
    model = GA2MRegressor()  # refused for what it is, fitted or not
    if kind == "mlp":
        model = MLPRegressor(hidden_layers=(4,), epochs=1, random_state=0).fit(numeric, y)
    elif kind == "nit":
        nit = NITClassifier(n_blocks=2, block_layers=(2,), epochs=1, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = nit.fit(numeric, two)
    with pytest.raises(PilidError, match="cannot be exported") as error:
        to_table(model)
    assert "\n" not in str(error.value)


def test_text_in_a_numeric_column_is_refused(fitted):
    models, X = fitted
    rows = X.head(3).astype({"age": object})
    rows.loc[rows.index[0], "age"] = "forty"
    with pytest.raises(PilidError, match="'age' holds values that are not numbers"):
        score_table(to_table(models["pilid_reg_one"]), rows)


@pytest.mark.parametrize("n_bags", [1, 3])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_shapes_and_pair_terms_alone_are_their_table(task, n_bags):
    """A PiLiD without the MLP whose deep part is its pair terms alone is glass whole: its
    table scores the pair terms (less the main effects of theirs its shapes hold) and is the
    model, on rows with a learned missing value, NaN where fit had none, an unseen level and
    values beyond the knots; its ``pairs`` column is `explain`'s deep column; nothing is left
    out of it (``deep_share`` 0, the pairs' share stated apart)."""
    X, y, two, _ = _data()
    make = PiLiDRegressor if task == "regression" else PiLiDClassifier
    model = make(gamma=7, hidden_layers=None, pairs=2, n_bags=n_bags, **SMALL)
    model.fit(X.iloc[:240], (y if task == "regression" else two)[:240])
    table = to_table(model, X=X.iloc[:240])
    assert table["pairs_scored"] and len(table["pairs"]) == 2
    rows = _held_out(X.iloc[240:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = model.predict(rows) if task == "regression" else model.decision_function(rows)
        explained = model.explain(rows)
    scale = max(1.0, float(np.abs(whole).max()))
    np.testing.assert_allclose(score_table(table, rows), whole, rtol=0, atol=1e-5 * scale)
    parts = score_table(table, rows, terms=True)
    np.testing.assert_allclose(parts["pairs"], explained[DEEP], rtol=0, atol=1e-5 * scale)
    assert float(parts["pairs"].std()) > 1e-3 * scale  # the pair terms carry something
    (share,) = table["deep_share"]
    assert share["variance_share"] == 0.0 and share["pairs_share"] > 0.0
    hybrid = make(gamma=7, hidden_layers=(8,), pairs=2, n_bags=1, **SMALL)
    hybrid.fit(X.iloc[:240], (y if task == "regression" else two)[:240])
    assert not to_table(hybrid)["pairs_scored"]  # beside an MLP: for reading, not scored


def test_a_table_that_scores_pairs_without_their_main_effects_is_refused(tmp_path):
    X, y, _, _ = _data()
    model = PiLiDRegressor(gamma=4, hidden_layers=None, pairs=1, n_bags=1, **SMALL).fit(X, y)
    table = json.loads(json.dumps(to_table(model)))
    del table["features"][1]["pairs_main"]
    with pytest.raises(PilidError, match="'pairs_main'"):
        score_table(table, X)
    old = {**json.loads(json.dumps(to_table(model))), "version": 1}
    old.pop("pairs_scored")  # a version-1 table: the pair terms are not scored
    np.testing.assert_allclose(score_table(old, X), _additive(model, X)[0], atol=1e-5)


def test_an_unfitted_model_and_a_foreign_file_are_refused(tmp_path):
    with pytest.raises(PilidError, match="not fitted"):
        to_table(PiLiDRegressor())
    (tmp_path / "other.json").write_text('{"format": "something else"}')
    with pytest.raises(PilidError, match="not a pilid table"):
        read_table(tmp_path / "other.json")
