"""What is left to run of the paper's tables (`pilid.report.remaining`): trials counted against the
experiment configs, fit time estimated from the records and checked against a computation by
hand, and REPRODUCTION.md saying it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pilid.report import reproduction as rp
from pilid.report.records import Setting, normalise_records, smoothness_key
from pilid.report.remaining import remaining_settings, remaining_work, total_left

# Table 1's PiLiD-5 at m=10 (the demo generator, as conf/experiment/sim_regression.yaml):
# 12 of its 20 trials, with these fit times.
FIT = np.array([30.0, 31.0, 35.0, 40.0, 41.0, 44.0, 45.0, 50.0, 52.0, 60.0, 61.0, 90.0])
PILID5 = Setting(
    "synthetic", "pilid", "regression", 20000, 10, 5, "lstsq", "demo", smoothness=smoothness_key(0)
)


def _records() -> pd.DataFrame:
    rows = []
    for trial, seconds in enumerate(FIT):
        rows.append(
            {
                "experiment": "sim_regression",
                "dataset": "synthetic",
                "model": "pilid",
                "task": "regression",
                "params": {"gamma": 5, "init": "lstsq"},
                "data": {"name": "synthetic", "N": 20000, "m": 10, "generator": "demo"},
                "N": 20000,
                "m": 10,
                "trial": trial,
                "seed": trial,
                "metric": "mse",
                "value": 0.26,
                "setting_id": "pilid5",
                "fit_seconds": seconds,
                "device": "cpu",
            }
        )
    return normalise_records(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def left():
    return remaining_settings(_records())


@pytest.mark.slow
def test_counts_and_estimates_per_paper_table(left):
    per_table = remaining_work(left).set_index("paper_table")
    median = float(np.median(FIT))

    # Table 1: 50 cells of 20 trials, 12 recorded; PiLiD's 25 settings estimated from the 12
    # records (same N; the same m or, at other m, all of them: N equal, so unscaled); the 25
    # settings of the other five methods have no record of their model: no estimate
    table1 = per_table.loc["tab-n20000"]
    assert (table1.settings, table1.trials, table1.unestimated) == (50, 50 * 20 - 12, 25)
    assert table1.seconds == pytest.approx(median * (25 * 20 - 12))

    # Table 2: 200 settings (N x m x gamma x init); the recorded one is shared with Table 1; every
    # estimate is the median scaled to the setting's N (rows N / 20000)
    table2 = per_table.loc["tab-initial"]
    assert (table2.settings, table2.trials, table2.unestimated) == (200, 200 * 20 - 12, 0)
    by_hand = sum(median * N / 20000 * 50 * 20 for N in (5000, 10000, 15000, 20000))
    assert table2.seconds == pytest.approx(by_hand - median * 12)

    # a supplementary table: PiLiD at N=5000 scaled by a quarter; nothing recorded there
    n5000 = per_table.loc["tab-n5000"]
    assert (n5000.settings, n5000.trials, n5000.unestimated) == (50, 1000, 25)
    assert n5000.seconds == pytest.approx(median / 4 * 25 * 20)

    # Table 3: only the paper's seven models x four data sets (not EBM, not the library's PiLiD)
    table3 = per_table.loc["tab-predictive"]
    assert (table3.settings, table3.trials, table3.unestimated) == (28, 560, 28)
    assert set(left.loc[left["paper_table"] == "tab-predictive", "setting"].map(
        lambda s: s.model)) == {"pilid", "pilib", "mlp", "nit", "ga", "gam", "ga2m"}  # fmt: skip


@pytest.mark.slow
def test_shared_setting_counts_once_in_the_total(left):
    shared = left[left["setting"] == PILID5]
    assert sorted(shared["paper_table"]) == ["tab-initial", "tab-n20000"]
    assert set(shared["trials"]) == {8}
    trials, seconds, unestimated = total_left(left)
    per_table = remaining_work(left)
    # Table 2's least-squares half (4 N x 5 m x 5 gamma) is the PiLiD of the four regression
    # tables: those 100 settings (1988 trials left) are counted once
    assert trials == per_table["trials"].sum() - (100 * 20 - 12)
    unique = left.drop_duplicates(subset="setting")
    assert seconds == pytest.approx(unique["seconds"].sum())
    assert unestimated == int(unique["seconds"].isna().sum()) > 0


@pytest.mark.slow
def test_reproduction_says_what_is_left_and_why(left):
    records = _records()
    tables = rp.paper_tables(records, root=None, fidelity=False)
    text = rp.build_reproduction(records, tables, figure_link=None, left=left)
    table1 = remaining_work(left).set_index("paper_table").loc["tab-n20000"]
    assert f"| {int(table1.trials)} trials, ~{rp.duration(table1.seconds)} + 25 without" in text
    section = text.split("## What is left to run")[1].split("\n## ")[0]
    assert "The records name their device: cpu (" in section
    assert f"| Table 1 | 50 | {50 * 20 - 12} | {rp.duration(table1.seconds)} | 25 |" in section
    status = text.split("### Table 2 (MSE)")[1].split("\n### ")[0]
    assert "Left to run for lack of compute so far: 3988 trials of 200 settings" in status
    # without `left` (an older caller) nothing of it is said
    plain = rp.build_reproduction(records, tables, figure_link=None)
    assert "What is left to run" not in plain and "Left to run" not in plain
