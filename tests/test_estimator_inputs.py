"""Python-API input the neural estimators must reject clearly or handle: dates, duplicate column
names, near-constant columns (Definition 1's knots) and values beyond float32."""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import pytest
import torch

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.nn.least_squares import lstsq_init
from pilid.nn.piecewise import fit_knots, phi_numpy

SMALL = dict(hidden_layers=(8,), epochs=3, batch_size=32, device="cpu", random_state=0)
CLASSES = [PiLiDRegressor, PiLiDClassifier]


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return X, y


def _target(cls, y):
    return (y > np.median(y)).astype(int) if cls is PiLiDClassifier else y


@pytest.mark.parametrize("cls", CLASSES)
def test_datetime_columns_are_rejected_at_fit_with_the_column_and_the_fix(cls):
    X, y = _data()
    n = len(y)
    frame = pd.DataFrame({"a": X[:, 0], "when": pd.date_range("2020-01-01", periods=n)})
    with pytest.raises(PilidError) as info:
        cls(gamma=3, **SMALL).fit(frame, _target(cls, y))
    message = str(info.value)
    assert "'when'" in message and "datetime" in message and "convert it to numbers" in message
    assert "\n" not in message
    others = {
        "tz": pd.date_range("2020-01-01", periods=n, tz="UTC"),
        "dates": [datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(n)],
        "lag": pd.to_timedelta(np.arange(n), unit="D"),
        "month": pd.period_range("2020-01", periods=n, freq="M"),
    }
    for name, column in others.items():
        frame = pd.DataFrame({"a": X[:, 0], name: column})
        with pytest.raises(PilidError, match=f"column '{name}' has"):
            cls(gamma=3, **SMALL).fit(frame, _target(cls, y))
    # what the message advises works
    days = pd.DataFrame({"a": X[:, 0], "when": np.arange(n, dtype=float)})
    est = cls(gamma=3, **SMALL).fit(days, _target(cls, y))
    assert est.categorical_.tolist() == [False, False]


@pytest.mark.parametrize("cls", CLASSES)
def test_duplicate_column_names_are_named(cls):
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "a"])
    with pytest.raises(PilidError) as info:
        cls(gamma=3, **SMALL).fit(frame, _target(cls, y))
    message = str(info.value)
    assert "duplicate column names" in message and "'a' (2 times)" in message
    assert "'b'" not in message and "\n" not in message
    est = cls(gamma=3, **SMALL).fit(pd.DataFrame(X, columns=["a", "b", "c"]), _target(cls, y))
    with pytest.raises(PilidError, match="'a' \\(2 times\\)"):
        est.predict(frame)


def test_knots_treat_a_range_too_small_to_represent_as_constant():
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [
            rng.uniform(0, 1, 50),
            np.zeros(50),
            np.r_[np.zeros(49), 1e-300],  # float32 cannot invert a piece of this width
            np.r_[np.zeros(49), 1e-39],  # below float32's smallest normal number
            np.r_[np.ones(49), 1.0 + 2e-16],  # one float64 ulp
        ]
    )
    for method in ("uniform", "quantile"):
        knots = fit_knots(X, gamma=4, method=method)
        assert [len(p) for p in knots.points[1:]] == [1, 1, 1, 1]
        assert knots.points[2][0] == 0.0 and knots.points[4][0] == 1.0
        assert np.isfinite(phi_numpy(X, knots)).all()
    # an ordinary feature keeps Definition 1's points exactly
    lo, hi = X[:, 0].min(), X[:, 0].max()
    expected = lo + (hi - lo) * np.arange(5) / 4
    expected[-1] = hi
    np.testing.assert_array_equal(fit_knots(X[:, :1], gamma=4).points[0], expected)
    # a tiny but representable range keeps its pieces
    small = np.r_[np.zeros(25), np.full(25, 1e-30)][:, None]
    assert len(fit_knots(small, gamma=4).points[0]) == 5


@pytest.mark.slow
@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("tiny", [1e-300, 1e-200, 1e-39])
def test_a_near_constant_column_fits_as_a_constant(cls, tiny):
    X, y = _data()
    X[:, 1] = 0.0
    X[5, 1] = tiny
    est = cls(gamma=3, **SMALL).fit(X, _target(cls, y))
    assert est.knots_.n_pieces.tolist() == [3, 1, 3]
    contributions = est.feature_contributions(X)
    assert np.isfinite(contributions).all()
    np.testing.assert_array_equal(contributions[:, 1], contributions[0, 1])  # a constant
    assert np.isfinite(
        est.decision_function(X) if hasattr(est, "classes_") else est.predict(X)
    ).all()
    shapes = est.shape_functions()
    assert len(shapes[shapes.feature == "x1"]) == 1


@pytest.mark.parametrize("cls", CLASSES)
def test_values_beyond_float32_name_the_column(cls):
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "huge": np.linspace(1e39, 2e39, len(y))})
    for init in ("lstsq", "gaussian"):
        with pytest.raises(PilidError) as info:
            cls(gamma=3, init=init, **SMALL).fit(frame, _target(cls, y))
        assert "'huge'" in str(info.value) and "'a'" not in str(info.value)
        assert "rescale" in str(info.value) and "\n" not in str(info.value)


def test_a_failed_least_squares_names_the_columns_involved():
    rng = np.random.default_rng(0)
    phi = torch.rand(1, 40, 5)
    phi[0, 3, 2] = float("nan")
    target = torch.as_tensor(rng.normal(size=(1, 40)), dtype=torch.float32)
    names = ["age", "age", "income", "city", "city"]
    with pytest.raises(PilidError) as info:
        lstsq_init(phi, target, torch.ones(1, 5), names=names)
    message = str(info.value)
    assert "'income'" in message and "'age'" not in message and "'city'" not in message
    assert "init='gaussian'" in message and "\n" not in message
    w, b = lstsq_init(torch.nan_to_num(phi), target, torch.ones(1, 5), names=names)
    assert torch.isfinite(w).all() and torch.isfinite(b).all()
