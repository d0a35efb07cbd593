"""Issue 49, item 1: a report cell holds one setting's trials. Runs of other tasks, sizes or
files (made by the runner in-process into one results directory) get columns of their own,
named after what tells them apart, and "over k trials per cell" holds for every cell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from pilid.experiments import run_setting
from pilid.experiments.config import CONF_DIR
from pilid.report.records import (
    ExperimentGrid,
    Setting,
    grids_for_records,
    load_records,
    normalise_records,
    select_records,
)
from pilid.report.tables import DATA_FIELDS, MODEL_FIELDS, build_tables, real_table

TINY_SYNTHETIC = ["data=synthetic", "data.n_interactions=2"]


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def _run(results, *overrides, trials=2):
    args = ["model=linear", f"trials={trials}", f"results_dir={results}", *overrides]
    return run_setting(_compose(args))


def _adhoc(results):
    """The report's table of the ``adhoc`` runs in ``results`` and its Markdown."""
    frame = load_records(results)
    (table,) = build_tables(frame, grids_for_records(frame), root=None)
    return table, table.to_markdown()


def _cell(table, header: str):
    """The one row's cell under the column whose header is ``header``."""
    names = [h.md for h in table.columns]
    assert header in names, names
    (row,) = table.cells
    return row[names.index(header)]


def _matches(cell, summary) -> None:
    """The cell is exactly the run's trials: their count and mean (the runner's own summary)."""
    values = [r["value"] for r in summary.records]
    assert cell.n == len(values)
    assert cell.mean == pytest.approx(np.mean(values), abs=1e-12)
    assert cell.mean == pytest.approx(summary.mean, abs=1e-12)


# -- the probe's cases, run by the runner ------------------------------------------------------
def test_two_csvs_of_two_tasks_are_two_columns_named_after_their_files(tmp_path):
    rng = np.random.default_rng(0)
    n = 120
    x = rng.normal(size=(n, 2))
    shop = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "price": x[:, 0] + rng.normal(size=n)})
    churn = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "left": (x[:, 1] > 0).astype(int)})
    shop.to_csv(tmp_path / "shop.csv", index=False)
    churn.to_csv(tmp_path / "churn.csv", index=False)
    results = tmp_path / "results"
    regression = _run(
        results,
        "data=table",
        f"data.path={tmp_path / 'shop.csv'}",
        "data.target=price",
        "data.task=regression",
    )
    classification = _run(
        results,
        "data=table",
        f"data.path={tmp_path / 'churn.csv'}",
        "data.target=left",
        "data.task=classification",
    )
    assert {r["dataset"] for r in regression.records} == {"shop"}
    table, markdown = _adhoc(results)
    assert [h.md for h in table.columns] == ["churn (AUC)", "shop (MSE)"]
    _matches(_cell(table, "shop (MSE)"), regression)
    _matches(_cell(table, "churn (AUC)"), classification)
    assert "over 2 trials per cell" in markdown and "†" not in markdown


def test_synthetic_runs_of_two_tasks_two_sizes_and_two_m_never_share_a_cell(tmp_path):
    results = tmp_path / "results"
    runs = {
        "synthetic regression N=500 m=3 (MSE)": _run(
            results, *TINY_SYNTHETIC, "data.N=500", "data.m=3"
        ),
        "synthetic classification N=500 m=3 (AUC)": _run(
            results, *TINY_SYNTHETIC, "data.N=500", "data.m=3", "data.task=classification"
        ),
        "synthetic regression N=800 m=3 (MSE)": _run(
            results, *TINY_SYNTHETIC, "data.N=800", "data.m=3", trials=3
        ),
        "synthetic regression N=500 m=4 (MSE)": _run(
            results, *TINY_SYNTHETIC, "data.N=500", "data.m=4"
        ),
    }
    table, markdown = _adhoc(results)
    assert sorted(h.md for h in table.columns) == sorted(runs)
    for header, summary in runs.items():
        _matches(_cell(table, header), summary)
    # the caption's count is the most trials of a cell; the others say theirs
    assert "Mean ± std over 3 trials per cell." in markdown
    (row,) = table.cells
    assert sorted(c.n for c in row) == [2, 2, 2, 3]
    assert markdown.count("† (2/3)") == 3
    assert "†: fewer trials than the cell with the most" in markdown


# -- the same rule on records written by hand (fast) -------------------------------------------
def _record(setting: Setting, trial: int, value: float, sid: str, sha256=None) -> dict:
    metric = "auc" if setting.task == "classification" else "mse"
    data = {"name": setting.dataset, "N": setting.N, "m": setting.m}
    if sha256:
        data["sha256"] = sha256
    return {
        "experiment": "adhoc",
        "dataset": setting.dataset,
        "model": setting.model,
        "params": {} if setting.init is None else {"init": setting.init},
        "N": setting.N,
        "m": setting.m,
        "task": setting.task,
        "trial": trial,
        "seed": trial,
        "metric": metric,
        "value": value,
        "setting_id": sid,
        "data": data,
    }


def test_every_setting_field_is_a_row_or_a_column_field():
    fields = set(Setting.__dataclass_fields__)
    assert set(DATA_FIELDS) | set(MODEL_FIELDS) == fields
    assert not set(DATA_FIELDS) & set(MODEL_FIELDS)


def test_one_table_name_of_two_files_and_two_inits_give_four_cells_of_one_run_each():
    """Two files named ``x`` (checksums ab.., cd..) and two initialisations of one model: four
    settings, four cells, each the mean of its own records; the labels say what differs."""
    records, expected = [], {}
    for sha, n_rows in (("ab" * 32, 300), ("cd" * 32, 300)):
        for init, shift in (("lstsq", 0.0), ("gaussian", 0.5)):
            setting = Setting("x", "pilid", task="regression", N=n_rows, m=3, gamma=5, init=init)
            values = [0.1 + shift + 0.01 * t + (0.2 if sha.startswith("cd") else 0) for t in (0, 1)]
            sid = f"{sha[:2]}-{init}"
            records += [_record(setting, t, v, sid, sha) for t, v in enumerate(values)]
            expected[(sha[:8], init)] = np.mean(values)
    frame = normalise_records(pd.DataFrame.from_records(records))
    (grid,) = grids_for_records(frame)
    table = real_table(select_records(frame, grid), grid)
    headers = [h.md for h in table.columns]
    rows = [h.md for h in table.rows]
    assert headers == [f"x sha256 {'ab' * 4} (MSE)", f"x sha256 {'cd' * 4} (MSE)"]
    assert rows == ["PiLiD init=lstsq", "PiLiD init=gaussian"]
    for i, init in enumerate(("lstsq", "gaussian")):
        for j, sha in enumerate(("ab" * 4, "cd" * 4)):
            cell = table.cells[i][j]
            assert cell.n == 2 and cell.mean == pytest.approx(expected[(sha, init)], abs=1e-12)
    assert table.column_keys == [f"x sha256 {'ab' * 4}", f"x sha256 {'cd' * 4}"]


def test_a_configured_grid_keeps_its_labels_when_nothing_needs_telling_apart():
    settings = [Setting(d, "mlp", task=t) for d, t in (("bike", "regression"), ("skill", None))]
    grid = ExperimentGrid("real_data", 1, settings)
    records = [_record(Setting("bike", "mlp", task="regression"), 0, 0.2, "a")]
    records.append(_record(Setting("skill", "mlp", task="classification"), 0, 0.8, "b"))
    frame = normalise_records(pd.DataFrame.from_records(records))
    table = real_table(select_records(frame, grid), grid)
    assert [h.md for h in table.columns] == ["bike sharing (MSE)", "skill (AUC)"]
    assert table.column_keys == ["bike", "skill"] and table.row_keys == [("mlp", None)]
