"""Two arms of a claim compared: the records of a table cell (an *arm*), paired with another
arm's on the trial seeds (and values of m) both have, as one `Unit` of a claim's part.

A claim compares means over trials; where two cells were run on different seeds (a reduced
cell beside a full one), both are cut to the seeds they share before their means are compared
(`shared_unit`), and the paired t-test by seed (`pilid.report.stats.paired_by_seed`) runs on
the same pairs.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pilid.report.labels import LOWER_IS_BETTER
from pilid.report.reproduction.cells import PAPER_TRIALS, TABLE2_M_VALUES
from pilid.report.stats import paired_by_seed
from pilid.report.table_model import Table


@dataclass
class Unit:
    """One comparison: ``a`` is the side the claim says is better (e.g. PiLiD), ``b`` the other.

    For two arms compared on the units they share (`shared_unit`): ``seeds``, the trial seeds
    both have; ``m_values``, the values of m among them (Table 2's layout; None elsewhere);
    ``pairs``, the (seed[, m]) units compared. None: a comparison of cells as they are.

    Attributes
    ----------
    name : str
        What is compared (``bike``, ``regression N=10000 m=20 gamma=5``).
    a, b : float
        The two sides' means (claim (d): the Spearman correlation and 0).
    holds : bool
        Whether the claim holds in this unit.
    p : float
        The two-sided paired t-test's p by seed (NaN: not paired).
    reduced : bool
        Fewer trials (seeds, values of m) than a full unit of the paper.
    note : str
        Appended to the unit's line (e.g. cells not run).
    seeds, m_values, pairs : int or None
        See above.
    """

    name: str
    a: float
    b: float
    holds: bool
    p: float = math.nan
    reduced: bool = False
    note: str = ""
    seeds: int | None = None
    m_values: int | None = None
    pairs: int | None = None


def lower_better(metric: str) -> bool:
    """Whether a lower value of ``metric`` is better (MSE; unknown metrics too)."""
    return LOWER_IS_BETTER.get(str(metric), True)


def better(a: float, b: float, metric: str) -> bool:
    """Whether ``a`` is better than ``b`` by ``metric``."""
    return a < b if lower_better(metric) else a > b


def table_named(tables: list[Table], name: str) -> Table | None:
    """The table called ``name`` among ``tables`` (None: not built)."""
    return next((t for t in tables if t.name == name), None)


def arm(table: Table, **fields) -> pd.DataFrame:
    """The records of ``table`` whose columns equal ``fields`` (None: the column is missing)."""
    frame = table.records if table.records is not None else pd.DataFrame()
    if frame.empty:
        return frame
    mask = np.ones(len(frame), dtype=bool)
    for name, value in fields.items():
        column = frame[name]
        hit = column.isna() if value is None else (column == value).fillna(False)
        mask &= hit.to_numpy(dtype=bool)
    return frame[mask]


def paired(a: pd.DataFrame, b: pd.DataFrame, block=(), value: str = "value"):
    """`paired_by_seed` of two arms (their means over the (seed, block) units both have, the
    two-sided p, the counts), or None where they cannot be paired (no seeds, or an arm without
    records or without the ``value`` column)."""
    if a.empty or b.empty or "seed" not in a or a["seed"].isna().any() or b["seed"].isna().any():
        return None
    if value not in a or value not in b:
        return None
    a = a.drop_duplicates(subset=["seed", *block], keep="last")
    b = b.drop_duplicates(subset=["seed", *block], keep="last")
    with warnings.catch_warnings():  # e.g. scipy's precision warning for near-equal arms
        warnings.simplefilter("ignore", RuntimeWarning)
        return paired_by_seed(a, b, block=block, value=value)


def paired_p(a: pd.DataFrame, b: pd.DataFrame, block=()) -> float:
    """Two-sided paired t-test p of two arms by trial seed (NaN with fewer than 2 pairs)."""
    test = paired(a, b, block)
    return math.nan if test is None else float(test.p)


def shared_unit(
    name: str,
    a: pd.DataFrame,
    b: pd.DataFrame,
    metric: str,
    block=(),
    value: str = "value",
    cells=None,
) -> Unit | None:
    """A unit of two arms compared on the (seed, block) units both have (`paired`): their means
    over those units, whether ``a`` is better by ``metric``, the paired p; reduced when fewer
    than ``PAPER_TRIALS`` seeds (times ``TABLE2_M_VALUES`` values of m when ``block`` is m) are
    shared. Records that cannot be paired (no seeds) fall back to the two table ``cells`` as
    they are, when given; otherwise, and when no unit is shared, None."""
    test = paired(a, b, block, value)
    if test is None and cells is not None:
        ca, cb = cells
        return Unit(
            name,
            ca.mean,
            cb.mean,
            better(ca.mean, cb.mean, metric),
            math.nan,
            short_cell(ca) or short_cell(cb),
        )
    if test is None or test.n == 0:
        return None
    by_m = "m" in block
    expected = PAPER_TRIALS * (TABLE2_M_VALUES if by_m else 1)
    return Unit(
        name,
        test.mean_a,
        test.mean_b,
        better(test.mean_a, test.mean_b, metric),
        test.p,
        reduced=test.units < expected,
        seeds=test.n,
        m_values=test.blocks if by_m else None,
        pairs=test.units,
    )


def short_cell(cell) -> bool:
    """Whether a table cell has fewer trials than the paper's."""
    return cell.n < PAPER_TRIALS


def init_units(table: Table, metric: str, value: str = "value") -> list[Unit]:
    """Table 2 layout units: per (N, gamma), the lstsq arm against the Gaussian one over the
    (seed, m) both have (`shared_unit`); ``value``: the records' column compared (the shape
    fidelity has ``value``, ``r2_median`` and ``r2_weighted``)."""
    units = []
    for i, N in enumerate(table.row_keys):
        for j, (gamma, init) in enumerate(table.column_keys):
            if init != "lstsq":
                continue
            k = next(
                (c for c, key in enumerate(table.column_keys) if key == (gamma, "gaussian")), None
            )
            if k is None:
                continue
            a, b = table.cells[i][j], table.cells[i][k]
            if a.missing or b.missing:
                continue
            unit = shared_unit(
                f"N={N} gamma={gamma}",
                arm(table, N=N, gamma=gamma, init="lstsq"),
                arm(table, N=N, gamma=gamma, init="gaussian"),
                metric,
                block=("m",),
                value=value,
                cells=(a, b) if value == "value" else None,
            )
            if unit is not None:
                units.append(unit)
    return units
