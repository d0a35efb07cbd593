"""The lever ``min_frequency`` of the studies (`studies._levers`; scikit-learn's ``OneHotEncoder``
convention; measured and not adopted): the levels of a category / string column with fewer fit
rows than it become one level, ``"(infrequent)"``, which the library's encoding then reads.

The fit is checked against an independent computation: the same estimator without
``min_frequency`` on a frame whose rare levels were replaced by hand with one label, the last
category (the merged level's code), gives the same predictions bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.models.inputs import INFREQUENT_LEVEL, UnseenCategoryWarning
from studies._levers import with_levers

LeverRegressor = with_levers(PiLiDRegressor)
SMALL = dict(hidden_layers=(8,), epochs=15, batch_size=64, device="cpu", random_state=0)
#: level -> (rows, effect): three common levels and three rare ones
LEVELS = {
    "a": (150, -1.0),
    "b": (120, 0.0),
    "c": (100, 1.0),
    "d": (6, 3.0),
    "e": (3, -3.0),
    "f": (1, 5.0),
}


def _frame(seed=0):
    rng = np.random.default_rng(seed)
    level = np.concatenate([[k] * n for k, (n, _) in LEVELS.items()])
    rng.shuffle(level)
    n = level.size
    df = pd.DataFrame(
        {
            "x": rng.uniform(-1, 1, n),
            "town": pd.Categorical(level, categories=list(LEVELS)),
            "kind": pd.Series(rng.choice(["p", "q"], n), dtype="str"),  # no rare level
        }
    )
    effect = df["town"].map({k: e for k, (_, e) in LEVELS.items()}).astype(float)
    y = np.sin(2 * df["x"]) + effect + 0.1 * rng.normal(size=n)
    return df, y.to_numpy()


def _merged_by_hand(df, rare):
    """``df`` with the ``rare`` levels of ``town`` replaced by one label, its last category."""
    kept = [k for k in df["town"].cat.categories if k not in rare]
    town = df["town"].astype(object).where(~df["town"].isin(rare), "merged")
    return df.assign(town=pd.Categorical(town, categories=[*kept, "merged"]))


@pytest.mark.slow
@pytest.mark.parametrize("cls", [PiLiDRegressor, PiLiDClassifier])
def test_the_fit_equals_one_on_levels_merged_by_hand(cls):
    df, y = _frame()
    target = y if cls is PiLiDRegressor else (y > np.median(y)).astype(int)
    est = with_levers(cls)(gamma=4, n_bags=2, min_frequency=10, **SMALL).fit(df, target)
    assert est.infrequent_categories_ == {1: ["d", "e", "f"]}
    assert est.categories_[1] == ["a", "b", "c", INFREQUENT_LEVEL]
    assert est.categories_[2] == ["p", "q"]  # no level under 10 rows: as it was
    by_hand = cls(gamma=4, n_bags=2, **SMALL).fit(_merged_by_hand(df, ["d", "e", "f"]), target)
    out = "predict" if cls is PiLiDRegressor else "predict_proba"
    np.testing.assert_array_equal(
        getattr(est, out)(df), getattr(by_hand, out)(_merged_by_hand(df, ["d", "e", "f"]))
    )
    shapes = est.shape_functions()
    town = shapes[shapes.feature == "town"]
    assert town.x.tolist() == ["a", "b", "c", INFREQUENT_LEVEL]


def test_a_fraction_counts_the_fit_rows():
    df, y = _frame()  # 380 rows: 0.02 of them is 7.6, so d (6 rows) and below merge
    est = LeverRegressor(gamma=4, n_bags=1, min_frequency=0.02, **SMALL).fit(df, y)
    assert est.infrequent_categories_ == {1: ["d", "e", "f"]}
    est = LeverRegressor(gamma=4, n_bags=1, min_frequency=0.01, **SMALL).fit(df, y)  # 3.8
    assert est.infrequent_categories_ == {1: ["e", "f"]}


@pytest.mark.slow
def test_without_it_every_level_keeps_its_own_value():
    df, y = _frame()
    est = PiLiDRegressor(gamma=4, n_bags=1, **SMALL).fit(df, y)
    assert est.infrequent_categories_ == {}
    assert est.categories_[1] == list(LEVELS)
    off = LeverRegressor(gamma=4, n_bags=1, min_frequency=1, **SMALL).fit(df, y)
    np.testing.assert_array_equal(off.predict(df), est.predict(df))  # no level under 1 row
    merged = LeverRegressor(gamma=4, n_bags=1, min_frequency=10, **SMALL).fit(df, y)
    assert merged.infrequent_categories_  # then refit on an array: nothing left of the frame's
    codes = df.assign(town=df["town"].cat.codes, kind=(df["kind"] == "q").astype(float))
    assert merged.fit(codes.to_numpy(float), y).infrequent_categories_ == {}


def test_an_infrequent_level_at_prediction_gets_the_merged_value():
    df, y = _frame()
    est = LeverRegressor(gamma=4, n_bags=1, min_frequency=10, **SMALL).fit(df, y)
    rows = df.head(3).copy()
    rows["town"] = pd.Categorical(["d", "f", "a"], categories=list(LEVELS))
    contrib = est.feature_contributions(rows)[:, 1]
    shapes = est.shape_functions()
    town = shapes[shapes.feature == "town"].set_index("x")["value"]
    np.testing.assert_allclose(contrib, town[[INFREQUENT_LEVEL, INFREQUENT_LEVEL, "a"]], atol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a merged level is no unseen category
        est.predict(rows)
    rows["kind"] = pd.Series(["p", "r", "q"], dtype="str")  # r: not seen in fit
    with pytest.warns(UnseenCategoryWarning, match="'r'"):
        est.predict(rows)


@pytest.mark.parametrize("bad", [0, -3, 1.0, 1.5, "ten"])
def test_a_bad_value_is_refused_in_one_line(bad):
    df, y = _frame()
    with pytest.raises((PilidError, ValueError)) as info:
        LeverRegressor(min_frequency=bad, **SMALL).fit(df, y)
    message = str(info.value)
    assert "min_frequency" in message and "\n" not in message
