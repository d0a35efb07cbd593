"""The paper's cells, ours beside them: every cell of the paper's nine tables matched with the
cell of our tables (built from the records by `pilid.report.tables`) that computes it.

`paper_cells` is what ``results/tables/paper_vs_ours_cells.csv``, the paper-vs-ours figure, the
overview and the per-table sections of REPRODUCTION.md are made of; the constants here (the
paper's trials, tables and grids) are shared by the claims and the sections.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from pilid.atomic import replacing
from pilid.data import DATASETS
from pilid.report.labels import DATASET_ORDER, MODEL_LABELS
from pilid.report.paper import paper_results
from pilid.report.records import ExperimentGrid
from pilid.report.remaining import PAPER_EXPERIMENTS
from pilid.report.table_model import Table

#: Trials per cell in the paper ("For each problem setting, we run 20 trials").
PAPER_TRIALS = 20
#: Table 2 averages every trial over m = 10, 20, 30, 40, 50: a cell holds 20 x 5 records.
TABLE2_M_VALUES = 5
#: The paper's tables in its order, with the experiment that fills each.
PAPER_TABLE_EXPERIMENT = {
    "tab-n20000": "sim_regression",
    "tab-initial": "init_significance",
    "tab-predictive": "real_data",
    "tab-n5000": "sim_regression",
    "tab-n10000": "sim_regression",
    "tab-15000": "sim_regression",
    "tab-cla5000": "sim_classification",
    "tab-cla10000": "sim_classification",
    "tab-clas15000": "sim_classification",
}
PAPER_TABLE_ORDER = list(PAPER_TABLE_EXPERIMENT)
#: Short names (figure legend, overview).
SHORT_LABELS = {
    "tab-n20000": "Table 1",
    "tab-initial": "Table 2",
    "tab-predictive": "Table 3",
    "tab-n5000": "Suppl. MSE N=5000",
    "tab-n10000": "Suppl. MSE N=10000",
    "tab-15000": "Suppl. MSE N=15000",
    "tab-cla5000": "Suppl. AUC N=5000",
    "tab-cla10000": "Suppl. AUC N=10000",
    "tab-clas15000": "Suppl. AUC N=15000",
}
#: Figure 3's setting in the paper.
FIG3 = {"N": 15000, "m": 20, "gamma": 5}
#: The paper's data sets of Table 3, their metric, and the GAM family.
REAL_METRIC = {name: DATASETS[name].metric for name in DATASET_ORDER}
GAM_FAMILY = ("ga", "gam", "ga2m")
MODEL_NAMES = {name: MODEL_LABELS[name] for name in ("pilid", "pilib", "mlp", *GAM_FAMILY)}
#: The simulation tables' gamma rows and m columns.
GAMMAS = (1, 5, 10, 15, 20)
M_VALUES = (10, 20, 30, 40, 50)
#: The columns of ``paper_vs_ours_cells.csv``.
CELL_COLUMNS = [
    "paper_table",
    "label",
    "table",
    "metric",
    "N",
    "row",
    "column",
    "paper_mean",
    "paper_std",
    "paper_note",
    "ours_mean",
    "ours_std",
    "trials",
    "expected",
    "reduced",
    "difference",
]
NOT_RUN = "not run yet"
NOT_ENOUGH = "not enough records yet"


def experiment_of(table_name: str) -> str | None:
    """The paper experiment a table of ours belongs to (``sim_regression_N5000`` ->
    ``sim_regression``), or None (smoke runs, the shape-fidelity table, other experiments)."""
    for name in PAPER_EXPERIMENTS:
        if table_name == name or table_name.startswith(f"{name}_N"):
            return name
    return None


def paper_grids(records: pd.DataFrame, conf_dir=None) -> list[ExperimentGrid]:
    """The grids of the paper experiments that have records under their own name (the same
    tables ``python -m pilid.report tables`` builds for them)."""
    from pilid.report.records import experiment_grid

    present = set(records["experiment"].dropna().astype(str))
    return [experiment_grid(name, conf_dir) for name in PAPER_EXPERIMENTS if name in present]


def paper_generator(conf_dir=None) -> str | None:
    """The synthetic generator of the paper's simulation experiments, as ``init_significance``
    (Table 2, Figure 3) names it (None: the default generator, or no such config)."""
    from pilid.errors import PilidError
    from pilid.report.records import experiment_grid

    try:
        settings = experiment_grid("init_significance", conf_dir).settings
    except PilidError:
        return None
    return settings[0].generator if settings else None


def paper_tables(records: pd.DataFrame, root=None, conf_dir=None, fidelity: bool = True):
    """Our tables of the paper experiments (see `paper_grids`), with the shape-fidelity table
    when ``fidelity`` and shapes (or their cached fidelity) are stored under ``root``."""
    from pilid.report.tables import build_tables

    return build_tables(records, paper_grids(records, conf_dir), root=root, fidelity=fidelity)


def _key_N(value) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def paper_cells(tables: list[Table], paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per cell of the paper's tables (``CELL_COLUMNS``), in the paper's order, with ours
    where one of our paper-experiment tables has the cell (``trials`` 0 and NaN means where not).

    ``expected``: the records a full cell holds (20 trials; Table 2: 20 trials x 5 values of m);
    ``reduced``: run, with fewer records than that; ``difference``: ours - paper.
    """
    paper = paper_results() if paper is None else paper
    ours: dict[tuple, tuple[Table, object]] = {}
    for table in tables:
        if experiment_of(table.name) is None:
            continue
        for row in table.cells:
            for cell in row:
                if cell.paper_key is not None and cell.paper_key not in ours:
                    ours[cell.paper_key] = (table, cell)
    rows = []
    order = {name: i for i, name in enumerate(PAPER_TABLE_ORDER)}
    paper = paper.assign(_order=paper["table"].map(order).fillna(len(order)))
    paper = paper.sort_values("_order", kind="stable")
    for p in paper.itertuples(index=False):
        N = None if p.table == "tab-predictive" else _key_N(p.N)
        table, cell = ours.get((p.table, p.model, p.column, N), (None, None))
        per_m = TABLE2_M_VALUES if p.table == "tab-initial" else 1
        expected = PAPER_TRIALS * per_m
        run = cell is not None and not cell.missing
        trials = int(cell.n) if run else 0
        ours_mean = float(cell.mean) if run else math.nan
        rows.append(
            {
                "paper_table": p.table,
                "label": SHORT_LABELS.get(p.table, p.table),
                "table": table.name if table is not None else "",
                "metric": p.metric,
                "N": _key_N(p.N),
                "row": p.model,
                "column": p.column,
                "paper_mean": float(p.mean),
                "paper_std": float(p.std) if pd.notna(p.std) else math.nan,
                "paper_note": "" if pd.isna(p.note) else str(p.note),
                "ours_mean": ours_mean,
                "ours_std": float(cell.std) if run else math.nan,
                "trials": trials,
                "expected": expected,
                "reduced": bool(run and trials < expected),
                "difference": ours_mean - float(p.mean) if run else math.nan,
            }
        )
    frame = pd.DataFrame(rows, columns=CELL_COLUMNS)
    frame["N"] = frame["N"].astype("Int64")
    return frame


def run_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper cells we ran (the data of the paper-vs-ours figure and its CSV)."""
    return cells[cells["trials"] > 0].reset_index(drop=True)


def write_cells_csv(cells: pd.DataFrame, path: str | os.PathLike) -> Path:
    """``paper_vs_ours_cells.csv``: the run cells, floats in full (round-trip) precision."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as temporary:
        run_cells(cells).to_csv(temporary, index=False, lineterminator="\n")
    return path


def draw_paper_vs_ours(cells: pd.DataFrame, out_dir) -> list[Path]:
    """The paper-vs-ours figure of ``cells`` (`paper_cells`) under ``out_dir``."""
    from pilid.report.reproduction.figure import figure_paper_vs_ours

    return figure_paper_vs_ours(
        run_cells(cells),
        out_dir,
        n_paper_cells=len(cells),
        table_order=PAPER_TABLE_ORDER,
        table_labels=SHORT_LABELS,
        paper_trials=PAPER_TRIALS,
    )


def trials_text(trials: int, expected: int) -> str:
    """``20/20``, or ``† 5/20`` for a cell with fewer trials than ``expected`` (a reduced run)."""
    return f"† {trials}/{expected}" if trials < expected else f"{trials}/{expected}"
