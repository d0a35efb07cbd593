"""What is left to run of the paper's tables, and the fit time it will take at the records' pace.

Per paper table: the settings of its experiment config (``conf/experiment/<name>.yaml``) that
fill one of the paper's cells and have fewer trials recorded than the config asks, the trials
they miss, and their fit time estimated by the dry run's rule (`trial_seconds`: the median
``fit_seconds`` of the records of the same model on the same data set, scaled to the setting's
N) from the records themselves, so that REPRODUCTION.md says why a cell is empty and what
filling it costs, reproducibly from the committed records.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.experiments.planning import trial_seconds
from pilid.report.labels import model_label
from pilid.report.paper import paper_results
from pilid.report.records import Setting, experiment_grid, select_records

#: The experiments whose settings fill the paper's tables (`pilid.report.reproduction`).
PAPER_EXPERIMENTS = ("sim_regression", "sim_classification", "init_significance", "real_data")
#: The columns of `remaining_work`'s frame, one row per paper table with something left.
REMAINING_COLUMNS = ["paper_table", "settings", "trials", "seconds", "unestimated"]


def paper_table_of(experiment: str, setting: Setting, paper: pd.DataFrame) -> str | None:
    """The paper table whose cell ``setting`` of ``experiment`` fills; None when it fills none
    (a model or an N the paper does not have, e.g. EBM or PiLiD with the library's defaults)."""
    if experiment == "init_significance":
        return "tab-initial"
    if experiment == "real_data":
        table = paper[paper["table"] == "tab-predictive"]
        label = model_label(setting.model, with_gamma=False)
        return "tab-predictive" if label in set(table["model"]) else None
    table = paper[
        (paper["task"] == setting.task)
        & (paper["N"] == setting.N)
        & (paper["table"] != "tab-initial")
    ]
    label = model_label(setting.model, setting.gamma, setting.task)
    hits = table.loc[table["model"] == label, "table"].unique()
    return str(hits[0]) if len(hits) else None


def remaining_settings(
    records: pd.DataFrame, conf_dir: str | os.PathLike | None = None
) -> pd.DataFrame:
    """One row per (paper table, setting) with trials left: ``paper_table``, ``setting`` (a
    `Setting`), ``trials`` left, ``seconds`` (their estimated fit time, NaN without an estimate:
    no record of that model on that data set). A setting that fills two tables (Table 2's
    least-squares half is the simulation tables' PiLiD) has a row for each."""
    paper = paper_results()
    fit = pd.to_numeric(
        records["fit_seconds"] if "fit_seconds" in records else pd.Series(np.nan, records.index),
        errors="coerce",
    )
    rows = []
    for name in PAPER_EXPERIMENTS:
        try:
            grid = experiment_grid(name, conf_dir)
        except PilidError:  # no such experiment config
            continue
        counts = select_records(records, grid).groupby("cell")["trial"].nunique()
        for index, setting in enumerate(grid.settings):
            left = grid.trials - int(counts.get(index, 0))
            table = paper_table_of(name, setting, paper) if left > 0 else None
            if table is None:
                continue
            seconds = math.nan
            same = (records["model"] == setting.model) & (records["dataset"] == setting.dataset)
            if same.any():
                per_trial, _ = trial_seconds(
                    fit[same].to_numpy(dtype=float),
                    _floats(records.loc[same, "N"]),
                    _floats(records.loc[same, "m"]),
                    setting.N,
                    setting.m,
                )
                seconds = per_trial * left
            rows.append(
                {"paper_table": table, "setting": setting, "trials": left, "seconds": seconds}
            )
    return pd.DataFrame(rows, columns=["paper_table", "setting", "trials", "seconds"])


def _floats(values: pd.Series) -> np.ndarray:
    return pd.to_numeric(values.astype(object), errors="coerce").to_numpy(dtype=float)


def remaining_work(settings: pd.DataFrame) -> pd.DataFrame:
    """Per paper table (``REMAINING_COLUMNS``) from `remaining_settings`: the settings with
    trials left, the trials left, their estimated fit time in seconds (summed over trials, as
    ``fit_seconds``: parallel workers share it) and the settings without an estimate. Tables
    with nothing left have no row."""
    if settings.empty:
        return pd.DataFrame(columns=REMAINING_COLUMNS).astype({"seconds": float})
    grouped = settings.groupby("paper_table", sort=False)
    return pd.DataFrame(
        {
            "settings": grouped.size(),
            "trials": grouped["trials"].sum(),
            "seconds": grouped["seconds"].sum(min_count=0).astype(float),
            "unestimated": grouped["seconds"].apply(lambda s: int(s.isna().sum())),
        }
    ).reset_index()[REMAINING_COLUMNS]


def total_left(settings: pd.DataFrame) -> tuple[int, float, int]:
    """Trials left, their estimated fit time and the settings without an estimate, each
    setting counted once however many tables it fills."""
    if settings.empty:
        return 0, 0.0, 0
    unique = settings.drop_duplicates(subset="setting")
    return (
        int(unique["trials"].sum()),
        float(unique["seconds"].sum()),
        int(unique["seconds"].isna().sum()),
    )


def left_text(row, duration) -> str:
    """``37 trials of 3 settings, about 2.6 h of fit time at the records' pace`` (+ the
    settings with no estimate), from a row of `remaining_work`."""
    text = f"{int(row.trials)} trials of {int(row.settings)} settings"
    if row.settings > row.unestimated:
        text += f", about {duration(row.seconds)} of fit time at the records' pace"
        if row.unestimated:
            text += f", plus {int(row.unestimated)} setting(s) without an estimate"
    else:
        text += ", no estimate (no records of their models on their data)"
    return text
