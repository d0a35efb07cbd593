"""Paired t-test by trial seed (Table 2) against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from pilid.errors import PilidError
from pilid.report.stats import paired_by_seed, paired_ttest, significance_marker


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
