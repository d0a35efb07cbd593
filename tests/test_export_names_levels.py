"""The deployed forms score what ``predict`` scores, or say in one line why they cannot: levels
coded as floats in the ONNX graph, column names the graph uses itself, text in a numeric
column, a feature named ``intercept`` in the table's terms, a hand-edited or non-UTF-8 table,
and a model whose numbers are not finite."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.export import onnx_inputs, read_table, score_table, to_onnx, to_table

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


def _session(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _fit(cls, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(epochs=3, n_bags=1, random_state=0, device="cpu", **kw).fit(X, y)


@pytest.fixture(scope="module")
def coded_levels():
    r = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({"a": r.normal(size=n), "c": pd.Categorical(r.integers(0, 3, n))})
    y = ((X.a + (X.c == 1)) > 0.3).astype(int)
    model = _fit(PiLiDClassifier, X, y)
    return X, model, _session(to_onnx(model, X.head(20)))


def test_float_coded_integer_levels_score_as_their_levels(coded_levels):
    X, model, session = coded_levels
    new = pd.DataFrame({"a": X.a, "c": X.c.astype(float)})
    new.loc[0, "c"] = np.nan
    new.loc[1, "c"] = 7.0  # a level fit never saw
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = model.predict_proba(new)[:, 1]
    got = session.run(None, onnx_inputs(session, new))[1][:, 1]
    np.testing.assert_allclose(got, want, atol=1e-5)
    # the same rows as integers and as the fit's categories score alike
    as_int = pd.DataFrame({"a": X.a, "c": X.c.astype(int)})
    np.testing.assert_allclose(
        session.run(None, onnx_inputs(session, as_int))[1], model.predict_proba(X), atol=1e-5
    )


def test_text_in_a_numeric_column_names_the_column(coded_levels):
    X, _, session = coded_levels
    bad = X.astype({"a": object})
    bad.loc[3, "a"] = "hello"
    with pytest.raises(PilidError, match=r"column 'a' of X holds 'hello' \(row 3\)") as info:
        onnx_inputs(session, bad)
    assert "pd.to_numeric" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["label", "probabilities", "predict", "decision_function", ""])
@pytest.mark.parametrize("cls", [PiLiDRegressor, PiLiDClassifier])
def test_a_column_named_like_the_graph_own_names_is_exported(name, cls):
    r = np.random.default_rng(1)
    n = 120
    X = pd.DataFrame({name: r.normal(size=n), "b": r.normal(size=n), "a/b": r.normal(size=n)})
    y = X["b"] + X[name] if cls is PiLiDRegressor else (X["b"] + X[name] > 0).astype(int)
    model = _fit(cls, X, y)
    session = _session(to_onnx(model, X.head(10)))
    out = dict(
        zip([o.name for o in session.get_outputs()], session.run(None, onnx_inputs(session, X)))
    )
    if cls is PiLiDRegressor:
        np.testing.assert_allclose(out["predict"], model.predict(X), rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_allclose(out["probabilities"], model.predict_proba(X), atol=1e-5)
    assert len(session.get_inputs()) == 3


@pytest.fixture(scope="module")
def intercept_named():
    r = np.random.default_rng(2)
    n = 150
    X = pd.DataFrame({"a": r.normal(size=n), "intercept": r.normal(size=n)})
    model = _fit(PiLiDRegressor, X, X.a + X.intercept, hidden_layers=None, pairs=0)
    return X, model, to_table(model)


def test_a_feature_named_intercept_is_one_line_in_the_terms(intercept_named):
    X, model, table = intercept_named
    with pytest.raises(PilidError, match="'intercept' has the name of score_table's"):
        score_table(table, X, terms=True)
    np.testing.assert_allclose(score_table(table, X), model.predict(X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "edit, says",
    [
        (lambda t: t["features"][0].update(kind="spline"), "has kind 'spline'"),
        (lambda t: t["features"][0].pop("knots"), "has no 'knots'"),
        (lambda t: t["features"][0].pop("values"), "has no 'values'"),
        (lambda t: t.update(version="abc"), "version 'abc', not a whole number"),
        (lambda t: t.pop("intercept"), "has no 'intercept'"),
        (lambda t: t["features"][0]["knots"].pop(), "knots but"),
        (lambda t: t.update(features={"a": 1}), "not a list of feature entries"),
    ],
)
def test_a_hand_edited_table_is_one_line(intercept_named, tmp_path, edit, says):
    X, _, table = intercept_named
    edited = copy.deepcopy(table)
    edit(edited)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(edited))
    with pytest.raises(PilidError, match=says) as info:
        score_table(path, X)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_table_that_is_not_utf8_is_one_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(b'{"format": "\xff\xfe"}')
    with pytest.raises(PilidError, match="is not UTF-8 text"):
        read_table(path)


def test_a_huge_target_is_refused_at_fit():
    r = np.random.default_rng(3)
    X = pd.DataFrame({"a": r.normal(size=80), "b": r.normal(size=80)})
    with pytest.raises(PilidError, match="too large to standardise"):
        PiLiDRegressor(epochs=2, n_bags=1).fit(X, X.b * 1e160)
    _fit(PiLiDRegressor, X, X.b * 1e150)  # large but fine: its squares stay finite


def test_a_model_whose_numbers_are_not_finite_is_refused_by_both_exports(intercept_named):
    X, model, _ = intercept_named
    broken = copy.deepcopy(model)
    broken.fitted_.heads[0].y_scale = float("inf")  # what an overflowing target used to give
    broken.fitted_.heads[0].member_scales[0] = float("inf")
    with pytest.raises(PilidError, match="holds NaN or inf"):
        to_table(broken)
    with pytest.raises(PilidError, match="differ from"):
        to_onnx(broken, X.head(10))
