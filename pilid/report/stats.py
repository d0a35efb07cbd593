"""Significance of a difference between two arms run on the same trial seeds (Table 2), and
``mean ± spread`` rounded to what the spread supports (`mean_pm`, the tables' fit seconds).

Table 2 of the paper compares PiLiD's least-squares initialisation (Algorithm 1, step 2) with a
Gaussian one and marks differences significant at 10% (``*``) and 5% (``**``). Both arms are run
with the same trial seeds (the same splits), so the test is a two-sided paired t-test on the
per-seed differences: ``t = mean(d) / (std(d, ddof=1) / sqrt(n))`` with ``n - 1`` degrees of
freedom (``scipy.stats.ttest_rel``).

Only the units both arms have are compared (`shared_units`): an arm run on more seeds, or on more
values of m, than the other is cut to the other's units first, so that the two means set side by
side are means over the same (seed, m).

`mean_pm` writes a mean and its spread to the precision the spread supports: the spread to two
significant digits (``SPREAD_DIGITS``) and the mean to the same decimal place, so
``12.3456 ± 2.3456`` reads ``12.3 ± 2.3``; a mean without a spread (one trial, or a table of
means) to two significant digits, whole units kept whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from pilid.errors import PilidError

#: (level, marker) from the strictest level: p < 0.05 -> "**", p < 0.10 -> "*" (Table 2).
LEVELS = ((0.05, "**"), (0.10, "*"))
#: Significant digits of a spread as `mean_pm` shows it.
SPREAD_DIGITS = 2


def rounding_place(value: float, digits: int = SPREAD_DIGITS) -> int:
    """The decimal place that shows ``value`` to ``digits`` significant digits: the number of
    decimals, negative for tens, hundreds, ... (``10.94`` -> 0, ``0.00056`` -> 5, ``223.0``
    -> -1); the place after rounding (``9.96`` -> 0: it rounds to ``10``). 0 for zero or a value
    that is not finite."""
    if digits < 1:
        raise PilidError(f"digits={digits!r} is invalid; use a whole number >= 1")
    if not math.isfinite(value) or value == 0:
        return 0
    exponent = int(f"{abs(value):.{digits - 1}e}".split("e")[1])
    return digits - 1 - exponent


def _at_place(value: float, place: int) -> str:
    text = f"{value:.{place}f}" if place >= 0 else f"{round(value, place):.0f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def mean_pm(
    mean: float, spread: float = math.nan, pm: str = " ± ", digits: int = SPREAD_DIGITS
) -> str:
    """``mean`` and ``spread`` as ``"<mean><pm><spread>"``, rounded to what the spread supports:
    the spread to ``digits`` significant digits, the mean to the same decimal place
    (``12.3456, 2.3456`` -> ``"12.3 ± 2.3"``, ``123.4, 567.8`` -> ``"120 ± 570"``). Without a
    spread (NaN: one trial) the mean alone, to ``digits`` significant digits but never coarser
    than whole units (``12.34`` -> ``"12"``, ``123.4`` -> ``"123"``, ``0.01234`` ->
    ``"0.012"``); a spread of zero is shown at the mean's place."""
    if math.isfinite(spread) and spread > 0:
        place = rounding_place(spread, digits)
    else:
        place = max(rounding_place(mean, digits), 0)
    text = _at_place(mean, place)
    if math.isfinite(spread):
        text += pm + _at_place(spread, place)
    return text


def significance_marker(p: float, levels: Sequence[tuple[float, str]] = LEVELS) -> str:
    """``"**"`` when ``p < 0.05``, ``"*"`` when ``p < 0.10``, else ``""`` (also for NaN)."""
    if p is None or not math.isfinite(p):
        return ""
    for level, marker in sorted(levels):
        if p < level:
            return marker
    return ""


@dataclass(frozen=True)
class PairedTTest:
    """Result of a paired t-test of arm A against arm B (differences ``d = a - b``).

    ``n``: the pairs (seeds); ``mean_a``/``mean_b``: the arms' means over them. From
    `paired_by_seed` also ``units``, the (seed, block) units both arms have, and ``blocks``, the
    distinct block values among them (e.g. how many values of m); None from `paired_ttest`.
    """

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    std_diff: float
    t: float
    p: float
    units: int | None = None
    blocks: int | None = None

    @property
    def marker(self) -> str:
        """The Table 2 marker for this p-value."""
        return significance_marker(self.p)


def paired_ttest(a, b) -> PairedTTest:
    """Two-sided paired t-test of ``a`` against ``b`` (equal-length arrays, one pair per seed).

    With fewer than two pairs the test is undefined: ``t`` and ``p`` are NaN. When all
    differences are equal the outcome is scipy's (NaN for zero differences).
    """
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise PilidError(
            f"paired t-test needs one value per pair in each arm; got {a.size} and {b.size} values"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise PilidError("paired t-test got NaN or infinite values; drop the unfinished trials")
    n = int(a.size)
    diff = a - b
    mean_a = float(a.mean()) if n else math.nan
    mean_b = float(b.mean()) if n else math.nan
    mean_diff = float(diff.mean()) if n else math.nan
    std_diff = float(diff.std(ddof=1)) if n > 1 else math.nan
    if n < 2:
        return PairedTTest(n, mean_a, mean_b, mean_diff, std_diff, math.nan, math.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        result = stats.ttest_rel(a, b)
    return PairedTTest(
        n, mean_a, mean_b, mean_diff, std_diff, float(result.statistic), float(result.pvalue)
    )


def seed_means(records: pd.DataFrame, block: Sequence[str] = ("m",), value: str = "value"):
    """Per-seed value of one arm: the mean over the ``block`` columns (e.g. over m) per seed."""
    return records.groupby("seed", sort=True)[value].mean()


def _unit_keys(a: pd.DataFrame, b: pd.DataFrame, block: Sequence[str]) -> list[str]:
    return ["seed", *[k for k in block if k in a.columns and k in b.columns]]


def shared_units(
    a: pd.DataFrame,
    b: pd.DataFrame,
    block: Sequence[str] = ("m",),
    value: str = "value",
) -> pd.DataFrame:
    """The (seed, block...) units both arms have, one row each: the unit's keys with
    ``<value>_a`` and ``<value>_b``. A unit whose value is NaN in either arm is left out (e.g. a
    measure not recoverable for that trial). Raises ``PilidError`` when an arm has several
    records of one unit."""
    keys = _unit_keys(a, b, block)
    for name, arm in (("a", a), ("b", b)):
        if arm.duplicated(subset=keys).any():
            raise PilidError(
                f"arm {name} has several records for one ({', '.join(keys)}); "
                "keep one record per trial (load_results keeps the newest)"
            )
    pairs = a[[*keys, value]].merge(b[[*keys, value]], on=keys, suffixes=("_a", "_b"))
    finite = pairs[[f"{value}_a", f"{value}_b"]].notna().all(axis=1)
    return pairs[finite.to_numpy(dtype=bool)].reset_index(drop=True)


def paired_by_seed(
    a: pd.DataFrame,
    b: pd.DataFrame,
    block: Sequence[str] = ("m",),
    value: str = "value",
) -> PairedTTest:
    """Paired t-test of two arms' records, paired by trial ``seed``.

    ``a`` and ``b`` hold one row per (seed, block...) with a ``value``. Only (seed, block) units
    present in both arms (`shared_units`) are used; within a seed the units are averaged over
    ``block`` (Table 2 averages over m), so each seed is one pair, and ``mean_a``/``mean_b`` are
    the two arms' means over the same units.
    """
    keys = _unit_keys(a, b, block)
    pairs = shared_units(a, b, block, value)
    per_seed = pairs.groupby("seed", sort=True)[[f"{value}_a", f"{value}_b"]].mean()
    test = paired_ttest(per_seed[f"{value}_a"].to_numpy(), per_seed[f"{value}_b"].to_numpy())
    blocks = len(pairs[keys[1:]].drop_duplicates()) if len(keys) > 1 else int(len(pairs) > 0)
    return replace(test, units=len(pairs), blocks=blocks)
