"""Prediction input that names the column (issue 49, item 6): a DataFrame's columns are read by
name (another order gives the predictions of the fit's order), a column of fit that X lacks or
one fit did not see is refused on one line naming it and the fix, and a value that is not a
number names its column and itself."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError

SMALL = dict(gamma=3, hidden_layers=(8,), epochs=2, n_bags=1, pairs=0, batch_size=32, device="cpu")


def _frame(n: int = 200) -> tuple[pd.DataFrame, np.ndarray]:
    """Numeric columns around two string (categorical) ones, so that a column read by position
    in another order would meet another column's levels."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "age": rng.uniform(20, 60, n),
            "city": rng.choice(["Oslo", "Lima", "Pune"], n),
            "income": rng.uniform(0, 1, n),
            "colour": rng.choice(["red", "blue"], n),
            "hours": rng.uniform(0, 40, n),
        }
    )
    y = 0.05 * X["age"].to_numpy() + (X["city"] == "Oslo").to_numpy() - X["income"].to_numpy()
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _frame()
    return PiLiDRegressor(random_state=0, **SMALL).fit(X, y), X


def _message(excinfo) -> str:
    text = str(excinfo.value)
    assert "\n" not in text  # one line
    return text


def test_reordered_columns_are_read_by_name(fitted):
    est, X = fitted
    shuffled = X[["hours", "colour", "age", "income", "city"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no unseen-category warning: the levels meet their column
        got = est.predict(shuffled)
    np.testing.assert_array_equal(got, est.predict(X))
    pd.testing.assert_frame_equal(est.explain(shuffled), est.explain(X))


def test_reordered_columns_give_a_classifier_the_same_logits():
    X, y = _frame()
    est = PiLiDClassifier(random_state=0, **SMALL).fit(X, y > np.median(y))
    shuffled = X[X.columns[::-1]]
    np.testing.assert_array_equal(est.decision_function(shuffled), est.decision_function(X))
    np.testing.assert_array_equal(est.predict_proba(shuffled), est.predict_proba(X))


def test_a_missing_column_is_named_with_the_fix(fitted):
    est, X = fitted
    with pytest.raises(PilidError) as excinfo:
        est.predict(X.drop(columns=["income"]))
    assert _message(excinfo) == (
        "X lacks column 'income' of fit; add it (PiLiDRegressor was fitted on the 5 columns "
        "of feature_names_in_; a column of NaN gets the feature's average contribution)"
    )
    with pytest.raises(PilidError, match=r"^X lacks columns 'city', 'hours' of fit; add them "):
        est.predict(X[["age", "income", "colour"]])


def test_an_unseen_column_is_named_with_the_fix(fitted):
    est, X = fitted
    with pytest.raises(PilidError) as excinfo:
        est.predict(X.assign(extra=1.0))
    assert _message(excinfo) == (
        "X has column 'extra' that fit did not see; drop it, e.g. X[model.feature_names_in_]"
    )


def test_a_renamed_column_names_both_names(fitted):
    est, X = fitted
    with pytest.raises(PilidError) as excinfo:
        est.predict(X.rename(columns={"age": "Age"}))
    text = _message(excinfo)
    assert text.startswith(
        "X lacks column 'age' of fit and has column 'Age' that fit did not see; "
        "rename or drop them: PiLiDRegressor was fitted on the columns 'age', 'city', "
    )


def test_a_string_in_a_numeric_column_names_the_column_and_the_value(fitted):
    est, X = fitted
    bad = X.astype({"age": object})
    bad.loc[[3, 7], "age"] = "forty"
    bad.loc[9, "age"] = "nan"  # numpy reads it as NaN: a missing value, not refused
    with pytest.raises(PilidError) as excinfo:
        est.predict(bad)
    assert _message(excinfo) == (
        "column 'age' holds 'forty' in 2 rows, not a number; it was numeric in fit: convert "
        "it, e.g. X['age'] = pd.to_numeric(X['age'], errors='coerce') (NaN is a missing value)"
    )


def test_arrays_are_read_by_position_with_the_column_named_by_its_position():
    X, y = _frame()
    numbers = X[["age", "income", "hours"]].to_numpy()
    est = PiLiDRegressor(random_state=0, **SMALL).fit(numbers, y)
    with pytest.raises(PilidError) as excinfo:
        est.predict(numbers[:, :2])
    assert _message(excinfo) == (
        "X has 2 features, but PiLiDRegressor is expecting 3 features as input; pass the 3 "
        "columns used in fit, in their order"
    )
    bad = numbers.astype(object)
    bad[5, 2] = "n/a"
    with pytest.raises(PilidError) as excinfo:
        est.predict(bad)
    assert _message(excinfo) == (
        "column 2 of X holds 'n/a' in 1 row, not a number; pass numbers there, as in fit (NaN "
        "for a missing value)"
    )
    with pytest.raises(PilidError, match=r"^column 2 of X holds 'n/a' in 1 row, not a number; "):
        PiLiDRegressor(random_state=0, **SMALL).fit(bad, y)
