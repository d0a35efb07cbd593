"""benchmarks/profile_fit.py (issue 52's profile by stage): the attribution of a profile's
seconds to the engine's stages, against known sleeps; no fit and no timed assertion on PiLiD."""

from __future__ import annotations

import cProfile
import pstats
import time

import pytest
from _scripts import load_script  # tests/_scripts.py


@pytest.fixture(scope="module")
def profile_fit():
    return load_script("benchmarks/profile_fit.py")


# Functions named as the engine's stages, each sleeping a known time.
def lstsq_init(seconds):
    time.sleep(seconds)


def train_ensemble(seconds):
    time.sleep(seconds)
    lstsq_init(seconds / 2)  # nested: counted in training's cumulative time too


def _prepare_all(seconds):
    time.sleep(seconds)


def test_stage_seconds_are_the_named_functions_cumulative_time(profile_fit):
    profile = cProfile.Profile()
    profile.enable()
    _prepare_all(0.05)
    lstsq_init(0.04)
    lstsq_init(0.04)
    train_ensemble(0.1)
    profile.disable()
    stages = profile_fit.stage_seconds(pstats.Stats(profile))
    assert set(stages) == {name for name, _ in profile_fit.STAGES}
    assert stages["preparation"] == pytest.approx(0.05, abs=0.03)
    assert stages["least-squares start"] == pytest.approx(0.08 + 0.05, abs=0.04)
    assert stages["training"] == pytest.approx(0.15, abs=0.04)
    assert stages["purification"] == 0.0 and stages["choice"] == 0.0


def test_the_report_gives_each_stage_and_the_rest_per_code(profile_fit):
    stages = {name: 1.0 for name, _ in profile_fit.STAGES}
    fits = {
        "then": {"seconds": 10.0, "stages": stages},
        "now": {"seconds": 5.0, "stages": {**stages, "training": 0.5}},
    }
    lines = profile_fit.report(fits).splitlines()
    rest = next(line for line in lines if line.startswith("the rest"))
    # then: 10 - 5 x 1 = 5 s (50%); now: 5 - 4.5 = 0.5 s (10%)
    assert "5.0 s ( 50%)" in rest and "0.5 s ( 10%)" in rest
    assert len(lines) == 1 + len(profile_fit.STAGES) + 2
