"""Paired t-test by trial seed (Table 2) against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from pilid.errors import PilidError
from pilid.report.stats import paired_by_seed, paired_ttest, shared_units, significance_marker


def _hand_ttest(a, b):
    d = np.asarray(a, float) - np.asarray(b, float)
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    t = mean / math.sqrt(var / n)
    p = 2 * sps.t.sf(abs(t), df=n - 1)  # two-sided tail of Student's t with n-1 dof
    return mean, math.sqrt(var), t, p


def test_paired_ttest_matches_hand_computation():
    rng = np.random.default_rng(3)
    a = rng.normal(0.30, 0.01, size=12)
    b = a + rng.normal(0.004, 0.006, size=12)
    result = paired_ttest(a, b)
    mean, std, t, p = _hand_ttest(a, b)
    assert result.n == 12
    assert result.mean_diff == pytest.approx(mean, rel=1e-12)
    assert result.std_diff == pytest.approx(std, rel=1e-12)
    assert result.t == pytest.approx(t, rel=1e-10)
    assert result.p == pytest.approx(p, rel=1e-8)
    assert result.mean_a == pytest.approx(a.mean()) and result.mean_b == pytest.approx(b.mean())


@pytest.mark.parametrize(
    "p, marker", [(0.001, "**"), (0.0499, "**"), (0.05, "*"), (0.0999, "*"), (0.1, ""), (0.7, "")]
)
def test_markers_follow_table_2(p, marker):
    assert significance_marker(p) == marker


def test_marker_of_undefined_p_is_empty():
    assert significance_marker(float("nan")) == ""
    single = paired_ttest([0.3], [0.4])
    assert single.n == 1 and math.isnan(single.p) and single.marker == ""


def test_marker_agrees_with_p_of_a_clear_and_an_unclear_difference():
    rng = np.random.default_rng(0)
    a = rng.normal(0.3, 0.01, size=20)
    clear = paired_ttest(a, a + 0.01 + rng.normal(0, 0.002, size=20))
    unclear = paired_ttest(a, a + rng.normal(0, 0.01, size=20))
    assert clear.p < 0.05 and clear.marker == "**"
    assert unclear.marker == significance_marker(unclear.p)


def test_paired_by_seed_averages_over_m_within_seed_then_pairs():
    rng = np.random.default_rng(1)
    seeds, ms = np.arange(6), [10, 20, 30]
    rows_a, rows_b = [], []
    for s in seeds:
        for m in ms:
            base = 0.2 + 0.01 * m / 10 + rng.normal(0, 0.01)
            rows_a.append({"seed": s, "m": m, "value": base})
            rows_b.append({"seed": s, "m": m, "value": base + 0.003 + rng.normal(0, 0.002)})
    a, b = pd.DataFrame(rows_a), pd.DataFrame(rows_b)
    b = b.iloc[::-1]  # order must not matter: pairing is by (seed, m)
    result = paired_by_seed(a, b)
    per_seed_a = [np.mean([r["value"] for r in rows_a if r["seed"] == s]) for s in seeds]
    per_seed_b = [np.mean([r["value"] for r in rows_b if r["seed"] == s]) for s in seeds]
    mean, std, t, p = _hand_ttest(per_seed_a, per_seed_b)
    assert result.n == len(seeds)
    assert result.mean_diff == pytest.approx(mean) and result.std_diff == pytest.approx(std)
    assert result.p == pytest.approx(p)


def test_paired_by_seed_uses_only_units_in_both_arms():
    a = pd.DataFrame({"seed": [0, 0, 1, 1, 2], "m": [10, 20, 10, 20, 10], "value": [1, 3, 2, 4, 5]})
    b = pd.DataFrame({"seed": [0, 1, 1, 3], "m": [10, 10, 20, 10], "value": [0.5, 1.0, 3.0, 9.0]})
    result = paired_by_seed(a, b)
    # common units: (0,10), (1,10), (1,20); seed 0: 1 vs 0.5; seed 1: mean(2,4)=3 vs mean(1,3)=2
    mean, std, t, p = _hand_ttest([1.0, 3.0], [0.5, 2.0])
    assert result.n == 2
    assert result.mean_diff == pytest.approx(mean) and result.p == pytest.approx(p)


def test_bad_inputs_raise_one_line_errors():
    with pytest.raises(PilidError, match="one value per pair") as info:
        paired_ttest([1.0, 2.0], [1.0])
    assert "\n" not in str(info.value)
    with pytest.raises(PilidError, match="NaN"):
        paired_ttest([1.0, float("nan")], [1.0, 2.0])
    dup = pd.DataFrame({"seed": [0, 0], "m": [10, 10], "value": [1.0, 2.0]})
    with pytest.raises(PilidError, match="several records"):
        paired_by_seed(dup, dup.iloc[:1])


def test_shared_units_leave_out_units_missing_or_nan_in_either_arm():
    a = pd.DataFrame(
        {"seed": [0, 0, 1, 1, 2], "m": [10, 20, 10, 20, 10], "value": [1.0, 3.0, 2.0, np.nan, 5.0]}
    )
    b = pd.DataFrame(
        {"seed": [0, 0, 1, 1, 3], "m": [10, 20, 10, 20, 10], "value": [0.5, 2.0, 1.0, 3.0, 9.0]}
    )
    pairs = shared_units(a, b)
    # (1, 20) is NaN in a, (2, 10) and (3, 10) are in one arm only
    assert list(zip(pairs["seed"], pairs["m"])) == [(0, 10), (0, 20), (1, 10)]
    assert pairs["value_a"].tolist() == [1.0, 3.0, 2.0]
    assert pairs["value_b"].tolist() == [0.5, 2.0, 1.0]


def test_paired_by_seed_means_and_counts_are_over_the_shared_units_only():
    # arm a has 20 seeds, arm b the first 5 only, and b lacks m=20 at seed 4
    rows_a = [{"seed": s, "m": m, "value": float(s) + m / 100} for s in range(20) for m in (10, 20)]
    rows_b = [{"seed": s, "m": m, "value": 0.5 * s} for s in range(5) for m in (10, 20)]
    a, b = pd.DataFrame(rows_a), pd.DataFrame(rows_b[:-1])
    result = paired_by_seed(a, b)
    shared = [(s, m) for s in range(5) for m in (10, 20)][:-1]
    per_seed_a = [np.mean([s + m / 100 for t, m in shared if t == s]) for s in range(5)]
    per_seed_b = [0.5 * s for s in range(5)]
    assert result.n == 5 and result.units == 9 and result.blocks == 2
    assert result.mean_a == pytest.approx(np.mean(per_seed_a), rel=1e-12)  # not over 20 seeds
    assert result.mean_b == pytest.approx(np.mean(per_seed_b), rel=1e-12)
    assert result.p == pytest.approx(_hand_ttest(per_seed_a, per_seed_b)[3])
    assert paired_ttest([1.0, 2.0], [0.0, 0.5]).units is None  # only paired_by_seed counts
