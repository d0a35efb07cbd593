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


# -- mean ± spread to the precision the spread supports (the tables' fit seconds) ---------------
def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _magnitudes(seed: int, size: int = 400) -> np.ndarray:
    """Positive values over nine orders of magnitude, some next to a power of ten (9.96...)."""
    rng = np.random.default_rng(seed)
    values = 10.0 ** rng.uniform(-5, 4, size)
    near = 10.0 ** rng.integers(-5, 4, size // 4) * rng.uniform(0.994, 0.99999, size // 4)
    return np.concatenate([values, near])


def test_the_spread_has_two_significant_digits_and_the_mean_its_place():
    from pilid.report.stats import mean_pm

    spreads = _magnitudes(0)
    means = spreads * np.random.default_rng(1).uniform(-20, 20, spreads.size)
    for mean, spread in zip(means, spreads):
        text = mean_pm(float(mean), float(spread))
        shown_mean, shown_spread = text.split(" ± ")
        m, s = float(shown_mean), float(shown_spread)
        exponent = math.floor(math.log10(s) + 1e-9)
        unit = 10.0 ** (exponent - 1)  # the place of the spread's second significant digit
        assert 10 <= round(s / unit) <= 99 and s / unit == pytest.approx(round(s / unit))
        assert _decimals(shown_mean) == _decimals(shown_spread) == max(0, 1 - exponent), text
        assert abs(s - spread) <= unit / 2 * (1 + 1e-9), text
        assert abs(m - mean) <= unit / 2 * (1 + 1e-9), text
        assert not shown_mean.startswith("-") or m != 0, text


def test_a_mean_alone_has_two_significant_digits_or_its_whole_units():
    from pilid.report.stats import mean_pm

    for mean in _magnitudes(2):
        text = mean_pm(float(mean))
        shown = float(text)
        if shown >= 10:  # two significant digits reach the units: whole units
            assert "." not in text and abs(shown - mean) <= 0.5, text
        else:
            unit = 10.0 ** (math.floor(math.log10(shown) + 1e-9) - 1)
            assert 10 <= round(shown / unit) <= 99, text
            assert abs(shown - mean) <= unit / 2 * (1 + 1e-9), text


def test_mean_pm_by_hand_and_its_separator():
    from pilid.report.stats import mean_pm

    assert mean_pm(79.6892, 10.9399) == "80 ± 11"
    assert mean_pm(9.96, 0.996) == "10.0 ± 1.0"  # the spread rounds up to the next power of ten
    assert mean_pm(0.01234, 0.00056, pm=r" $\pm$ ") == r"0.01234 $\pm$ 0.00056"
    assert mean_pm(-0.001, 0.2) == "0.00 ± 0.20"  # no "-0.00"
    assert mean_pm(3.25, 0.0) == "3.2 ± 0.0"  # no spread to go by: the mean's own place
    with pytest.raises(PilidError, match=r"digits=0 is invalid"):
        mean_pm(1.0, 0.1, digits=0)


def test_table_3_plus_seconds_cells_round_to_their_std_and_metric_cells_keep_4_decimals():
    from pilid.report.stats import mean_pm
    from pilid.report.table_model import Cell
    from pilid.report.tables import SecondsCell

    seconds = [70.1, 95.3, 74.0, 80.2]
    cell = SecondsCell.of(seconds, expected=4)
    expected = mean_pm(float(np.mean(seconds)), float(np.std(seconds, ddof=1)))
    assert cell.markdown() == expected
    assert cell.latex() == expected.replace(" ± ", r" $\pm$ ")
    assert SecondsCell.of([12.5], expected=2).markdown() == f"{mean_pm(12.5)}† (1/2)"
    metric = Cell.of(seconds, expected=4).markdown()
    assert metric == f"{np.mean(seconds):.4f} ± {np.std(seconds, ddof=1):.4f}"
