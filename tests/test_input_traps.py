"""Data as it comes, where it used to fail deep inside or pass silently: labels with None or NaN,
complex columns, a numeric column with a stray string, an array at prediction after a frame
with text columns, a read-only array."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from pilid import PiLiDClassifier, PiLiDRegressor
from pilid.errors import PilidError
from pilid.models.inputs import MostlyNumbersWarning

FAST = {"epochs": 2, "n_bags": 1, "random_state": 0, "device": "cpu"}


@pytest.fixture(scope="module")
def frame():
    r = np.random.default_rng(0)
    n = 120
    return pd.DataFrame(
        {"a": r.normal(size=n), "b": r.normal(size=n), "home": r.choice(["own", "rent"], n)}
    )


@pytest.mark.parametrize("hole", [None, np.nan])
@pytest.mark.parametrize("as_series", [False, True])
def test_labels_with_a_hole_are_one_line_naming_the_rows(frame, hole, as_series):
    y = np.where(frame.b > 0, "yes", "no").astype(object)
    y[[3, 7]] = hole
    y = pd.Series(y) if as_series else y
    with pytest.raises(PilidError, match=r"no label \(None or NaN\) in 2 row\(s\) \(3, 7\)"):
        PiLiDClassifier(**FAST).fit(frame, y)


def test_a_complex_column_is_one_line_without_the_data(frame):
    X = frame.assign(z=frame.a + 1j * frame.b)
    with pytest.raises(PilidError) as info:
        PiLiDRegressor(**FAST).fit(X, frame.b)
    message = str(info.value)
    assert "column 'z' holds complex numbers" in message and "\n" not in message
    assert len(message) < 300
    arr = np.column_stack([frame.a, frame.a + 1j * frame.b])
    with pytest.raises(PilidError, match="column 1 of X holds complex numbers"):
        PiLiDRegressor(**FAST).fit(arr, frame.b)


def test_a_numeric_column_with_a_stray_string_is_said_at_fit(frame):
    X = frame.astype({"a": object})
    X.loc[5, "a"] = "n/a"
    with pytest.warns(MostlyNumbersWarning, match=r"column 'a' holds numbers but for 1 value"):
        model = PiLiDRegressor(**FAST).fit(X, frame.b)
    assert model.categorical_[0]  # read as text, as said
    # the fix it names makes it numeric, and a real text column says nothing
    X["a"] = pd.to_numeric(X["a"], errors="coerce")
    with warnings.catch_warnings():
        warnings.simplefilter("error", MostlyNumbersWarning)
        model = PiLiDRegressor(**FAST).fit(X, frame.b)
    assert not model.categorical_[0] and model.categorical_[2]


def test_an_all_number_text_column_is_taken_as_text_without_a_word(frame):
    X = frame.assign(code=np.where(frame.b > 0, "01", "02"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MostlyNumbersWarning)
        model = PiLiDRegressor(**FAST).fit(X, frame.b)
    assert model.categorical_[3]


def test_an_array_at_prediction_is_read_as_the_fit_frame_by_position(frame):
    model = PiLiDRegressor(**FAST).fit(frame, frame.a + (frame.home == "rent"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scikit-learn: X has no feature names
        by_position = model.predict(frame.to_numpy())
    np.testing.assert_array_equal(by_position, model.predict(frame))


#: torch says "not writable" once per process: a fresh one sees the first time.
READ_ONLY_FIT = """
import warnings, numpy as np
from pilid import PiLiDRegressor
r = np.random.default_rng(0)
X = r.normal(size=(120, 2)); X.flags.writeable = False
warnings.filterwarnings("error", message=".*not writable.*")
model = PiLiDRegressor(epochs=2, n_bags=1, random_state=0, device="cpu").fit(X, X[:, 0])
model.predict(X)
"""


@pytest.mark.slow
def test_a_read_only_array_fits_without_torch_warning():
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", READ_ONLY_FIT],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "not writable" not in result.stderr
