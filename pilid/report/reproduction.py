"""REPRODUCTION.md: every table of the paper with ours beside it, a verdict per claim, the compute
used and the commands, all computed from the stored records (nothing here trains).

``python -m pilid.report reproduction --results results/records --out REPRODUCTION.md`` builds the
paper's tables from the records exactly as ``python -m pilid.report tables`` does (the same
functions, so the numbers are the tables' numbers), matches every cell of the paper
(`pilid.report.paper`, the paper's ``paper_results.csv``) with ours, and writes:

- per paper table: ours (mean ± std over trials, trial counts; fewer than ``PAPER_TRIALS`` trials
  marked ``† n/20``, a reduced run), the paper's value and the difference, ``not run yet`` where
  no record fills a cell, and the count of cells run;
- the four claims (a)-(d) with a verdict computed by the rules in ``CLAIM_RULES`` (the same rule is
  applied to the paper's own numbers for comparison);
- our GAM family against the paper's, the linear baselines by synthetic generator, the compute
  per table (from the records' ``fit_seconds``, ``finished_at``, ``device``, ``layout``,
  ``versions``) and the commands that reproduce each table;
- the hand-written notes of ``reproduction_notes.md`` (preprocessing choices and every difference
  from the paper), verbatim.

`paper_cells` is also what ``results/tables/paper_vs_ours_cells.csv`` and the paper-vs-ours figure
are made of.

Why one module of ~1400 lines (over the 500 of CONTRIBUTING.md): it is one document, and its
parts are not independent. The claims' verdicts read the paper cells and the tables, the
sections print the claims, the cells and the compute with shared formatting (``_number``,
``_paper_number``, ``NOT_RUN``/``NOT_ENOUGH``) and the one ``build_reproduction`` puts them in the
committed order; the byte-for-byte rebuild of REPRODUCTION.md is tested against this whole. A
split into cells/claims/sections would move the shared constants and formatters into a fourth
module that all three import, with the tests' ``rp.<name>`` look-ups re-exported from here,
without making any part usable on its own.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from pilid.data import DATASETS
from pilid.report.labels import DATASET_ORDER, LOWER_IS_BETTER, MODEL_LABELS
from pilid.report.paper import PAPER_TABLES, paper_results
from pilid.report.records import ExperimentGrid, Setting, select_records
from pilid.report.remaining import (
    PAPER_EXPERIMENTS,
    left_text,
    remaining_settings,
    remaining_work,
    total_left,
)
from pilid.report.stats import paired_by_seed
from pilid.report.table_model import Table
from pilid.tasks import metric_label

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
NOTES_FILE = Path(__file__).with_name("reproduction_notes.md")
NOT_RUN = "not run yet"
NOT_ENOUGH = "not enough records yet"


# -- which of our tables are the paper's ---------------------------------------------------------
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


# -- every cell of the paper, with ours ------------------------------------------------------------
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
    run_cells(cells).to_csv(path, index=False, lineterminator="\n")
    return path


def draw_paper_vs_ours(cells: pd.DataFrame, out_dir) -> list[Path]:
    """The paper-vs-ours figure of ``cells`` (`paper_cells`) under ``out_dir``."""
    from pilid.report.figures import figure_paper_vs_ours

    return figure_paper_vs_ours(
        run_cells(cells),
        out_dir,
        n_paper_cells=len(cells),
        table_order=PAPER_TABLE_ORDER,
        table_labels=SHORT_LABELS,
        paper_trials=PAPER_TRIALS,
    )


# -- verdicts ------------------------------------------------------------------------------------
#: The verdict scale, from weakest to strongest (used to combine the parts of a claim).
SCALE = ("not supported", "mostly supported", "supported")

CLAIM_RULES = f"""\
Every claim is split into parts; each part compares units (a pair of table cells, or one
setting) and counts the units in which the claim holds on the **means over trials** shown in the
tables. A part's verdict is **supported** when the claim holds in every unit compared, **mostly
supported** when it holds in more than half of them, **not supported** when it holds in half or
fewer, and **{NOT_ENOUGH}** when no unit has the records it needs. A claim's verdict is the
weakest verdict of its parts that have records (the parts still without records are named). When
fewer units than in the paper were compared, or a compared cell has fewer than {PAPER_TRIALS}
trials, the verdict says *reduced run*. Where both cells of a unit were run on the same trial seeds
(the same 80/20 splits), a two-sided paired t-test by seed (`scipy.stats.ttest_rel`) is counted as
significant at 5%, for or against the claim; the verdict itself rests on the means. The same rule
applied to the paper's own numbers is given for comparison."""


@dataclass
class Unit:
    """One comparison: ``a`` is the side the claim says is better (e.g. PiLiD), ``b`` the other."""

    name: str
    a: float
    b: float
    holds: bool
    p: float = math.nan
    reduced: bool = False
    note: str = ""


@dataclass
class Part:
    """One part of a claim: its rule, the units compared, and the paper's count by that rule."""

    title: str
    rule: str
    units: list[Unit]
    n_paper_units: int
    paper_holds: int | None = None
    details: list[str] = field(default_factory=list)

    @property
    def holds(self) -> int:
        return sum(u.holds for u in self.units)

    @property
    def reduced(self) -> bool:
        return len(self.units) < self.n_paper_units or any(u.reduced for u in self.units)

    @property
    def grade(self) -> str | None:
        """``SCALE`` grade of the units, None without units."""
        if not self.units:
            return None
        if self.holds == len(self.units):
            return "supported"
        return "mostly supported" if self.holds > len(self.units) / 2 else "not supported"

    def verdict(self) -> str:
        if self.grade is None:
            return NOT_ENOUGH
        text = f"{self.grade}: holds in {self.holds} of {len(self.units)}"
        significant = [u for u in self.units if math.isfinite(u.p) and u.p < 0.05]
        if any(math.isfinite(u.p) for u in self.units):
            pro = sum(u.holds for u in significant)
            text += f" (significant at 5%: {pro} for, {len(significant) - pro} against)"
        if self.reduced:
            short = sum(u.reduced for u in self.units)
            text += (
                f"; reduced run: {len(self.units)} of {self.n_paper_units} units compared, "
                f"{short} with fewer than {PAPER_TRIALS} trials"
            )
        return text

    def paper_text(self) -> str:
        if self.paper_holds is None:
            return ""
        counts = f"{self.paper_holds} of {self.n_paper_units}"
        return f"The paper's own numbers by this rule: holds in {counts}."


@dataclass
class Claim:
    key: str
    statement: str
    parts: list[Part]
    details: list[str] = field(default_factory=list)

    def verdict(self) -> str:
        graded = [p for p in self.parts if p.grade is not None]
        if not graded:
            return NOT_ENOUGH
        weakest = min(graded, key=lambda p: SCALE.index(p.grade))
        text = weakest.grade
        missing = [p.title for p in self.parts if p.grade is None]
        if missing:
            text += f" so far ({NOT_ENOUGH} for: {'; '.join(missing)})"
        if any(p.reduced for p in graded):
            text += " — reduced run"
        return text


def _lower(metric: str) -> bool:
    return LOWER_IS_BETTER.get(str(metric), True)


def _better(a: float, b: float, metric: str) -> bool:
    return a < b if _lower(metric) else a > b


def _table(tables: list[Table], name: str) -> Table | None:
    return next((t for t in tables if t.name == name), None)


def _arm(table: Table, **fields) -> pd.DataFrame:
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


def _paired_p(a: pd.DataFrame, b: pd.DataFrame, block=()) -> float:
    """Two-sided paired t-test p of two arms by trial seed (NaN with fewer than 2 pairs)."""
    if a.empty or b.empty or "seed" not in a or a["seed"].isna().any() or b["seed"].isna().any():
        return math.nan
    a = a.drop_duplicates(subset=["seed", *block], keep="last")
    b = b.drop_duplicates(subset=["seed", *block], keep="last")
    with warnings.catch_warnings():  # e.g. scipy's precision warning for near-equal arms
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(paired_by_seed(a, b, block=block).p)


def _row_index(table: Table, model: str, gamma=None) -> int | None:
    for index, (row_model, row_gamma) in enumerate(table.row_keys):
        if row_model == model and (gamma is None or row_gamma == gamma):
            return index
    return None


def _short(cell) -> bool:
    return cell.n < PAPER_TRIALS


def _paper_value(paper, table, model, column, N=None) -> float:
    rows = paper[
        (paper["table"] == table) & (paper["model"] == model) & (paper["column"] == column)
    ]
    if N is not None:
        rows = rows[rows["N"] == N]
    return float(rows["mean"].iloc[0]) if len(rows) else math.nan


def _sim_paper_tables(paper: pd.DataFrame, min_N: int = 0) -> list[tuple[str, str, int, str]]:
    """(paper table, task, N, metric) of the simulation tables with N >= ``min_N``."""
    sim = paper[~paper["table"].isin(["tab-initial", "tab-predictive"])]
    keys = sim[["table", "task", "N", "metric"]].drop_duplicates()
    return [
        (t, task, int(N), metric)
        for t, task, N, metric in keys.itertuples(index=False)
        if int(N) >= min_N
    ]


def _sim_table_name(task: str, N: int) -> str:
    experiment = "sim_regression" if task == "regression" else "sim_classification"
    return f"{experiment}_N{N}"


GAMMAS = (1, 5, 10, 15, 20)
M_VALUES = (10, 20, 30, 40, 50)


def claim_a(tables: list[Table], paper: pd.DataFrame) -> Claim:
    """(a) PiLiD beats the MLP on real data (Table 3) and on most simulation settings with
    N >= 10,000 (Table 1 and the supplementary tables)."""
    real = Part(
        "real data (Table 3): PiLiD (gamma=5) against the MLP",
        "a unit is a data set with both cells run; the claim holds where PiLiD's mean is better "
        "(lower MSE on bike, higher AUC elsewhere).",
        [],
        n_paper_units=len(REAL_METRIC),
    )
    real.paper_holds = sum(
        _better(
            _paper_value(paper, "tab-predictive", "PiLiD", d),
            _paper_value(paper, "tab-predictive", "MLP", d),
            metric,
        )
        for d, metric in REAL_METRIC.items()
    )
    table = _table(tables, "real_data")
    if table is not None:
        ia, ib = _row_index(table, "pilid", 5), _row_index(table, "mlp")
        for j, dataset in enumerate(table.column_keys):
            if ia is None or ib is None:
                break
            a, b = table.cells[ia][j], table.cells[ib][j]
            if a.missing or b.missing:
                continue
            metric = REAL_METRIC.get(dataset, "auc")
            p = _paired_p(
                _arm(table, model="pilid", gamma=5, dataset=dataset),
                _arm(table, model="mlp", dataset=dataset),
            )
            real.units.append(
                Unit(
                    dataset,
                    a.mean,
                    b.mean,
                    _better(a.mean, b.mean, metric),
                    p,
                    _short(a) or _short(b),
                )
            )
        real.details = [
            f"{u.name}: PiLiD {u.a:.4f} vs MLP {u.b:.4f} ({'PiLiD' if u.holds else 'MLP'} "
            f"better{_p_text(u.p)})"
            for u in real.units
        ]
    sim = Part(
        "simulation, N >= 10,000 (Table 1, supplementary tables): each PiLiD-gamma against the MLP",
        "a unit is one PiLiD-gamma row and one m column of a simulation table of the paper with "
        "N >= 10,000 (regression N = 10,000, 15,000, 20,000; classification N = 10,000, 15,000), "
        "with both cells run; the claim holds where PiLiD-gamma's mean is better than the MLP's "
        "in the same column.",
        [],
        n_paper_units=0,
    )
    paper_holds = 0
    for paper_table, task, N, metric in _sim_paper_tables(paper, 10000):
        for m in M_VALUES:
            mlp = _paper_value(paper, paper_table, "MLP", f"m={m}")
            for gamma in GAMMAS:
                sim.n_paper_units += 1
                pilid = _paper_value(paper, paper_table, f"PiLiD-{gamma}", f"m={m}")
                paper_holds += _better(pilid, mlp, metric)
        table = _table(tables, _sim_table_name(task, N))
        if table is None:
            continue
        ib = _row_index(table, "mlp")
        for gamma in GAMMAS:
            ia = _row_index(table, "pilid", gamma)
            if ia is None or ib is None:
                continue
            for j, m in enumerate(table.column_keys):
                a, b = table.cells[ia][j], table.cells[ib][j]
                if a.missing or b.missing:
                    continue
                p = _paired_p(
                    _arm(table, model="pilid", gamma=gamma, m=m), _arm(table, model="mlp", m=m)
                )
                sim.units.append(
                    Unit(
                        f"{task} N={N} m={m} gamma={gamma}",
                        a.mean,
                        b.mean,
                        _better(a.mean, b.mean, metric),
                        p,
                        _short(a) or _short(b),
                    )
                )
    sim.paper_holds = paper_holds
    sim.details = _group_counts(sim.units, lambda u: " ".join(u.name.split()[:2]))
    return Claim(
        "a",
        "PiLiD beats the MLP on real data and on most simulation settings with N >= 10,000.",
        [real, sim],
    )


def _p_text(p: float) -> str:
    return f", paired p = {p:.3g}" if math.isfinite(p) else ""


def _group_counts(units: list[Unit], key: Callable[[Unit], str]) -> list[str]:
    groups: dict[str, list[Unit]] = {}
    for unit in units:
        groups.setdefault(key(unit), []).append(unit)
    return [
        f"{name}: holds in {sum(u.holds for u in us)} of {len(us)}" for name, us in groups.items()
    ]


def _init_units(table: Table, metric: str) -> list[Unit]:
    """Table 2 layout units: per (N, gamma), the lstsq cell against the Gaussian one."""
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
            p = _paired_p(
                _arm(table, N=N, gamma=gamma, init="lstsq"),
                _arm(table, N=N, gamma=gamma, init="gaussian"),
                block=("m",),
            )
            expected = PAPER_TRIALS * TABLE2_M_VALUES
            units.append(
                Unit(
                    f"N={N} gamma={gamma}",
                    a.mean,
                    b.mean,
                    _better(a.mean, b.mean, metric),
                    p,
                    a.n < expected or b.n < expected,
                )
            )
    return units


def claim_b(tables: list[Table], paper: pd.DataFrame) -> Claim:
    """(b) The least-squares initialisation beats a Gaussian one (Table 2) and gives more
    faithful shapes (Figure 3; the shape-fidelity R^2 per initialisation)."""
    accuracy = Part(
        "accuracy (Table 2): least-squares against Gaussian initialisation",
        "a unit is one (N, gamma) pair of Table 2 with both initialisations run; the claim holds "
        "where the least-squares cell (each trial's MSE averaged over m) has the lower mean MSE. "
        "The t-test pairs the trials by seed after averaging over m, as Table 2's stars do.",
        [],
        n_paper_units=0,
    )
    initial = paper[paper["table"] == "tab-initial"]
    for _, rows in initial.groupby(["N", "column"], sort=False):
        values = dict(zip(rows["model"], rows["mean"]))
        accuracy.n_paper_units += 1
        accuracy.paper_holds = (accuracy.paper_holds or 0) + _better(
            values["pilid-lstsq"], values["pilid-gaussian"], "mse"
        )
    table = _table(tables, "init_significance")
    if table is not None:
        accuracy.units = _init_units(table, "mse")
        accuracy.details = _group_counts(accuracy.units, lambda u: u.name.split()[0])
    shapes = Part(
        "shapes (Figure 3): shape-fidelity R^2 of least-squares against Gaussian initialisation",
        "a unit is one (N, gamma) pair of the shape-fidelity table (R^2 of the learned against "
        "the true marginal value functions, both centred, mean over features; each trial "
        "averaged over m) with both initialisations scored; the claim holds where the "
        "least-squares R^2 is higher. The paper shows Figure 3 only, so it has no count.",
        [],
        n_paper_units=accuracy.n_paper_units,
    )
    fidelity = _table(tables, "init_significance_shape_fidelity")
    if fidelity is not None:
        shapes.units = _init_units(fidelity, "r2")
        if shapes.units:
            lstsq = np.mean([u.a for u in shapes.units])
            gauss = np.mean([u.b for u in shapes.units])
            shapes.details.append(
                f"R^2 per initialisation, mean over the {len(shapes.units)} (N, gamma) cells "
                f"compared: least squares {lstsq:.4f}, Gaussian {gauss:.4f}"
            )
        shapes.details.append(_fig3_fidelity(fidelity))
    return Claim(
        "b",
        "Least-squares initialisation beats Gaussian initialisation (Table 2) and gives more "
        "faithful shapes (Figure 3).",
        [accuracy, shapes],
    )


def _fig3_fidelity(fidelity: Table) -> str:
    """Shape-fidelity R^2 per initialisation at Figure 3's setting (N=15000, m=20, gamma=5)."""
    parts = []
    for init, name in (("lstsq", "least squares"), ("gaussian", "Gaussian")):
        arm = _arm(fidelity, N=FIG3["N"], m=FIG3["m"], gamma=FIG3["gamma"], init=init)
        values = arm["value"].to_numpy(dtype=float) if len(arm) else np.array([])
        if len(values) == 0:
            parts.append(f"{name} {NOT_RUN}")
            continue
        std = f" ± {values.std(ddof=1):.4f}" if len(values) > 1 else ""
        short = f", † {len(values)}/{PAPER_TRIALS}" if len(values) < PAPER_TRIALS else ""
        parts.append(f"{name} {values.mean():.4f}{std} ({len(values)} trials{short})")
    setting = f"N={FIG3['N']}, m={FIG3['m']}, gamma={FIG3['gamma']}"
    return f"R^2 at Figure 3's setting ({setting}): " + "; ".join(parts)


def claim_c(tables: list[Table], paper: pd.DataFrame) -> Claim:
    """(c) PiLiD and PiLiB beat the GAM family (GA, GAM, GA2M) on real data (Table 3)."""
    part = Part(
        "real data (Table 3): PiLiD and PiLiB against the best of GA, GAM and GA2M",
        "a unit is PiLiD or PiLiB on one data set, with its cell and at least one GAM-family cell "
        "run; the claim holds where its mean is better than every GAM-family mean run on that "
        "data set. The t-test pairs it with the best GAM-family model there.",
        [],
        n_paper_units=2 * len(REAL_METRIC),
        paper_holds=0,
    )
    for model in ("PiLiD", "PiLiB"):
        for dataset, metric in REAL_METRIC.items():
            value = _paper_value(paper, "tab-predictive", model, dataset)
            family = [
                _paper_value(paper, "tab-predictive", f, dataset) for f in ("GA", "GAM", "GA2M")
            ]
            best = min(family) if _lower(metric) else max(family)
            part.paper_holds += _better(value, best, metric)
    table = _table(tables, "real_data")
    if table is not None:
        for model in ("pilid", "pilib"):
            i = _row_index(table, model)
            if i is None:
                continue
            for j, dataset in enumerate(table.column_keys):
                cell = table.cells[i][j]
                metric = REAL_METRIC.get(dataset, "auc")
                family = []
                for name in GAM_FAMILY:
                    k = _row_index(table, name)
                    if k is not None and not table.cells[k][j].missing:
                        family.append((name, table.cells[k][j]))
                if cell.missing or not family:
                    continue
                pick = min if _lower(metric) else max
                best_name, best = pick(family, key=lambda f: f[1].mean)
                gamma = table.row_keys[i][1]
                p = _paired_p(
                    _arm(table, model=model, gamma=gamma, dataset=dataset),
                    _arm(table, model=best_name, dataset=dataset),
                )
                absent = [MODEL_NAMES[f] for f in GAM_FAMILY if f not in {n for n, _ in family}]
                note = f"; {', '.join(absent)} {NOT_RUN}" if absent else ""
                unit = Unit(
                    f"{MODEL_NAMES[model]} on {dataset}",
                    cell.mean,
                    best.mean,
                    _better(cell.mean, best.mean, metric),
                    p,
                    _short(cell) or any(_short(c) for _, c in family),
                    note,
                )
                part.units.append(unit)
                part.details.append(
                    f"{unit.name}: {cell.mean:.4f} vs {MODEL_NAMES[best_name]} {best.mean:.4f} "
                    f"({'holds' if unit.holds else 'does not hold'}{_p_text(p)}{note})"
                )
    return Claim("c", "PiLiD and PiLiB beat the GAM family (GA, GAM, GA2M) on real data.", [part])


def _spearman(gammas, accuracy) -> float:
    if len(gammas) < 3 or np.ptp(accuracy) == 0:
        return math.nan
    return float(stats.spearmanr(gammas, accuracy).statistic)


def claim_d(tables: list[Table], paper: pd.DataFrame, records: pd.DataFrame | None = None) -> Claim:
    """(d) A larger gamma (more pieces per feature) improves accuracy (the simulation tables)."""
    part = Part(
        "simulation tables: PiLiD's accuracy against gamma = 1, 5, 10, 15, 20",
        "a unit is one m column of a simulation table of the paper (all N) with at least three "
        "PiLiD-gamma cells run; the claim holds where the Spearman rank correlation between gamma "
        "and accuracy (AUC, or minus the MSE) over those cells is positive.",
        [],
        n_paper_units=0,
        paper_holds=0,
    )
    last_vs_first = []
    for paper_table, task, N, metric in _sim_paper_tables(paper):
        sign = -1.0 if _lower(metric) else 1.0
        for m in M_VALUES:
            values = [_paper_value(paper, paper_table, f"PiLiD-{g}", f"m={m}") for g in GAMMAS]
            part.n_paper_units += 1
            part.paper_holds += _spearman(GAMMAS, sign * np.array(values)) > 0
        table = _table(tables, _sim_table_name(task, N))
        if table is None:
            continue
        for j, m in enumerate(table.column_keys):
            run = []
            for gamma in GAMMAS:
                i = _row_index(table, "pilid", gamma)
                if i is not None and not table.cells[i][j].missing:
                    run.append((gamma, table.cells[i][j]))
            if len(run) < 3:
                continue
            rho = _spearman([g for g, _ in run], sign * np.array([c.mean for _, c in run]))
            unit = Unit(
                f"{task} N={N} m={m}",
                rho,
                0.0,
                bool(rho > 0),
                reduced=any(_short(c) for _, c in run) or len(run) < len(GAMMAS),
            )
            part.units.append(unit)
            (g0, c0), (g1, c1) = run[0], run[-1]
            p = _paired_p(
                _arm(table, model="pilid", gamma=g1, m=m), _arm(table, model="pilid", gamma=g0, m=m)
            )
            last_vs_first.append((_better(c1.mean, c0.mean, metric), p))
    if part.units:
        rhos = [u.a for u in part.units if math.isfinite(u.a)]
        mean_rho = f"{np.mean(rhos):.2f}" if rhos else "undefined"
        part.details.append(f"mean Spearman correlation over the units: {mean_rho}")
        wins = sum(w for w, _ in last_vs_first)
        sig = [(w, p) for w, p in last_vs_first if math.isfinite(p) and p < 0.05]
        part.details.append(
            f"largest gamma run better than the smallest in {wins} of {len(last_vs_first)} units "
            f"(paired t-test by seed significant at 5%: {sum(w for w, _ in sig)} for, "
            f"{sum(not w for w, _ in sig)} against)"
        )
        part.details += _group_counts(part.units, lambda u: " ".join(u.name.split()[:2]))
    if records is not None:
        line = _skill_gamma_line(records)
        if line:
            part.details.append(line)
    return Claim("d", "A larger gamma improves accuracy.", [part])


def _skill_gamma_line(records: pd.DataFrame) -> str | None:
    """Beyond the rule: PiLiD's AUC on skill by gamma (Figure 4's runs), where recorded."""
    grid = ExperimentGrid(
        "skill_shapes", PAPER_TRIALS, [Setting("skill", "pilid", gamma=g) for g in GAMMAS]
    )
    from contextlib import redirect_stderr
    from io import StringIO

    with redirect_stderr(StringIO()):  # the choice between runs is the tables' business
        selected = select_records(records, grid)
    if selected.empty:
        return None
    parts = []
    for index, gamma in enumerate(GAMMAS):
        values = selected.loc[selected["cell"] == index, "value"].to_numpy(dtype=float)
        if len(values):
            short = f" † {len(values)}/{PAPER_TRIALS}" if len(values) < PAPER_TRIALS else ""
            parts.append(f"gamma={gamma} {values.mean():.4f}{short}")
    return "not part of the rule: PiLiD's AUC on skill (Figure 4's runs): " + ", ".join(parts)


def claims(tables: list[Table], records: pd.DataFrame | None = None, paper=None) -> list[Claim]:
    """The four claims (a)-(d) with their parts, computed from our tables."""
    paper = paper_results() if paper is None else paper
    return [
        claim_a(tables, paper),
        claim_b(tables, paper),
        claim_c(tables, paper),
        claim_d(tables, paper, records),
    ]


# -- compute ---------------------------------------------------------------------------------------
def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _layout_text(layout) -> str:
    if not isinstance(layout, dict):
        return "?"
    processes = layout.get("processes") or 1
    threads = layout.get("threads")
    threads = f"{threads} thread{'s' if threads != 1 else ''}" if threads else "default threads"
    if layout.get("mode") == "block":
        return f"blocks of {layout.get('block_size')} trials, {processes} process(es) x {threads}"
    return f"one trial at a time, {processes} process(es)"


#: Gaps between a table's fit intervals shorter than this count as work (data generation,
#: process start-up between blocks); longer ones as a pause between runs.
BRIDGE_SECONDS = 120.0


def _trials_in_block(layout) -> int:
    """How many trials shared a record's block (its ``fit_seconds`` is the block's wall time
    divided among them); 1 for a trial fitted alone."""
    if not isinstance(layout, dict) or layout.get("mode") != "block":
        return 1
    block = layout.get("block")
    if isinstance(block, list | tuple) and len(block) == 2:
        return max(int(block[1]) - int(block[0]), 1)
    return int(layout.get("block_size") or 1)


def active_wall_seconds(records: pd.DataFrame, bridge: float = BRIDGE_SECONDS) -> float:
    """Wall time the records took, pauses left out: the union of their fit intervals
    ``[finished_at - block wall time, finished_at]`` (block wall time = ``fit_seconds`` x the
    trials of the block), with gaps shorter than ``bridge`` seconds counted in."""
    if records is None or records.empty or "finished_at" not in records:
        return math.nan
    end = pd.to_datetime(records["finished_at"], errors="coerce", utc=True)
    fit = (
        pd.to_numeric(records["fit_seconds"], errors="coerce").fillna(0.0)
        if "fit_seconds" in records
        else pd.Series(0.0, index=records.index)
    )
    layouts = records["layout"] if "layout" in records else pd.Series(None, index=records.index)
    wall = fit * layouts.map(_trials_in_block).astype(float)
    keep = end.notna().to_numpy()
    if not keep.any():
        return math.nan
    stop = (end[keep] - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(dtype=float)
    start = stop - wall[keep].to_numpy(dtype=float)
    order = np.argsort(start, kind="stable")
    start, stop = start[order], stop[order]
    reach = np.maximum.accumulate(stop)  # the latest end of any interval started so far
    first = np.flatnonzero(np.concatenate([[True], start[1:] > reach[:-1] + bridge]))
    last = np.append(first[1:] - 1, len(start) - 1)  # each run: sorted by start, so it spans
    return float((reach[last] - start[first]).sum())  # its first start to its latest end


def compute_summary(records: pd.DataFrame) -> dict:
    """Trials, summed fit time, first/last finish time, devices, layouts and torch builds of
    ``records`` (the records behind a table)."""
    if records is None or records.empty:
        return {"trials": 0}
    fit = (
        pd.to_numeric(records.get("fit_seconds"), errors="coerce")
        if "fit_seconds" in records
        else None
    )
    finished = (
        pd.to_datetime(records["finished_at"], errors="coerce", utc=True)
        if "finished_at" in records
        else pd.Series(dtype="datetime64[ns, UTC]")
    )
    finished = finished.dropna()
    versions = records["versions"] if "versions" in records else pd.Series(dtype=object)
    torch = sorted(
        {str(v.get("torch")) for v in versions if isinstance(v, dict) and v.get("torch")}
    )
    devices = sorted({str(d) for d in records.get("device", pd.Series(dtype=object)).dropna()})
    layouts = records["layout"] if "layout" in records else pd.Series(dtype=object)
    return {
        "trials": len(records),
        "fit_seconds": float(fit.sum()) if fit is not None and fit.notna().any() else math.nan,
        "active_seconds": active_wall_seconds(records),
        "first": finished.min() if len(finished) else None,
        "last": finished.max() if len(finished) else None,
        "devices": devices,
        "layouts": sorted({_layout_text(layout) for layout in layouts}),
        "torch": torch,
    }


def _time(stamp) -> str:
    return "--" if stamp is None else stamp.strftime("%Y-%m-%d %H:%M UTC")


# -- Markdown ----------------------------------------------------------------------------------
def _number(value: float, std: float = math.nan) -> str:
    text = f"{value:.4f}"
    return text + (f" ± {std:.4f}" if math.isfinite(std) else "")


def _paper_number(value: float, std: float) -> str:
    text = f"{value:g}"
    return text + (f" ± {std:g}" if math.isfinite(std) else "")


def _trials_text(trials: int, expected: int) -> str:
    return f"† {trials}/{expected}" if trials < expected else f"{trials}/{expected}"


def _cell_labels(row) -> tuple[str, str]:
    if row.paper_table == "tab-initial":
        init = "least squares" if row.row.endswith("lstsq") else "Gaussian"
        return f"N={row.N}, {init}", row.column.replace("gamma", "γ")
    return row.row, row.column


def _left_for(left: pd.DataFrame | None, paper_table: str):
    """The row of `remaining_work` for one paper table (None: nothing left, or not computed)."""
    if left is None or left.empty:
        return None
    hits = left[left["paper_table"] == paper_table]
    return next(hits.itertuples(index=False), None)


def _left_sentence(row) -> str:
    """Why cells are empty: `` Left to run for lack of compute so far: <what>; see ...``."""
    if row is None:
        return ""
    return (
        f" Left to run for lack of compute so far: {left_text(row, _duration)} (see *What is "
        "left to run*)."
    )


def table_section(
    cells: pd.DataFrame, paper_table: str, tables_dir: str, left: pd.DataFrame | None = None
) -> list[str]:
    """One paper table: heading, status line and (when any cell was run) one line per cell;
    ``left`` (`remaining_work`) says what its empty cells would cost."""
    part = cells[cells["paper_table"] == paper_table]
    run = part[part["trials"] > 0]
    name = PAPER_TABLES.get(paper_table, paper_table)
    metric = _metrics_text(part)
    ours = next((t for t in part["table"] if t), "")
    where = f" — ours: `{tables_dir}/{ours}.md`" if ours else ""
    lines = [f"### {name} ({metric}){where}", ""]
    reduced = int(run["reduced"].sum())
    status = f"Cells run: **{len(run)} of {len(part)}**"
    experiment = PAPER_TABLE_EXPERIMENT[paper_table]
    if run.empty:
        lines += [
            f"{status}: {NOT_RUN}.{_left_sentence(_left_for(left, paper_table))} Run "
            f"`python -m pilid.run -m experiment={experiment} results_dir=results/records`.",
            "",
        ]
        return lines
    if len(run) < len(part) or reduced:
        status += f" (reduced run; {reduced} of them with fewer than {PAPER_TRIALS} trials)"
    lines += [status + "." + _left_sentence(_left_for(left, paper_table)), ""]
    if paper_table == "tab-initial":
        lines += [
            "Each trial is averaged over m = 10, ..., 50 first (as in the paper), so a full cell "
            f"holds {PAPER_TRIALS} trials x {TABLE2_M_VALUES} values of m = "
            f"{PAPER_TRIALS * TABLE2_M_VALUES} records; the paper gives means only.",
            "",
        ]
    lines += [
        "| Row | Column | Ours (mean ± std) | Trials | Paper | Ours − paper |",
        "|:---|:---|---:|---:|---:|---:|",
    ]
    for row in part.itertuples(index=False):
        label, column = _cell_labels(row)
        paper = _paper_number(row.paper_mean, row.paper_std)
        mark = {"bold": " (best)", "*": r" \*", "**": r" \*\*"}.get(row.paper_note, "")
        if row.trials == 0:
            lines.append(
                f"| {label} | {column} | {NOT_RUN} | 0/{row.expected} | {paper}{mark} | — |"
            )
            continue
        lines.append(
            f"| {label} | {column} | {_number(row.ours_mean, row.ours_std)} | "
            f"{_trials_text(row.trials, row.expected)} | {paper}{mark} | {row.difference:+.4f} |"
        )
    lines.append("")
    return lines


def _metrics_text(part: pd.DataFrame) -> str:
    """``MSE``, ``AUC`` or ``MSE, AUC`` (Table 3) for the cells of one paper table."""
    return ", ".join(metric_label(m) for m in dict.fromkeys(part["metric"]))


def overview_section(cells: pd.DataFrame, left: pd.DataFrame | None = None) -> list[str]:
    """One line per paper table: cells run, reduced cells, ours against the paper's and, with
    ``left`` (`remaining_work`), the trials left and their estimated fit time."""
    lines = [
        "| Paper table | Metric | Cells run / in the paper | Reduced cells | Ours better / worse "
        "than the paper | Median abs(ours − paper) |"
        + (" Left to run (fit time, est.) |" if left is not None else ""),
        "|:---|:---|---:|---:|---:|---:|" + ("---:|" if left is not None else ""),
    ]
    for paper_table in PAPER_TABLE_ORDER:
        part = cells[cells["paper_table"] == paper_table]
        run = part[part["trials"] > 0]
        if run.empty:
            better = median = "—"
        else:
            lower = run["metric"].map(_lower).to_numpy(dtype=bool)
            diff = run["difference"].to_numpy(dtype=float)
            wins = int(np.sum(np.where(lower, diff < 0, diff > 0)))
            better = f"{wins} / {len(run) - wins}"
            median = f"{run['difference'].abs().median():.4f}"
        line = (
            f"| {PAPER_TABLES[paper_table]} | {_metrics_text(part)} | {len(run)} / {len(part)} | "
            f"{int(run['reduced'].sum())} | {better} | {median} |"
        )
        if left is not None:
            row = _left_for(left, paper_table)
            line += " nothing |" if row is None else f" {_left_cost(row)} |"
        lines.append(line)
    if left is not None:
        lines += [
            "",
            "Left to run: the trials the paper's cells still miss, and their fit time estimated "
            "from the records (see *What is left to run*).",
        ]
    return lines + [""]


def _left_cost(row) -> str:
    """``120 trials, ~1.4 h`` (or ``no estimate`` when no setting has one)."""
    cost = f"~{_duration(row.seconds)}" if row.settings > row.unestimated else "no estimate"
    if 0 < row.unestimated < row.settings:
        cost += f" + {int(row.unestimated)} without an estimate"
    return f"{int(row.trials)} trials, {cost}"


def claims_section(found: list[Claim]) -> list[str]:
    lines = [CLAIM_RULES, ""]
    for claim in found:
        lines += [
            f"### ({claim.key}) {claim.statement}",
            "",
            f"**Verdict: {claim.verdict()}.**",
            "",
        ]
        for part in claim.parts:
            lines.append(f"- *{part.title}* — **{part.verdict()}**. Rule: {part.rule}")
            if part.paper_text():
                lines.append(f"  {part.paper_text()}")
            for detail in part.details:
                lines.append(f"  - {detail}")
        lines.append("")
    return lines


def gam_family_section(cells: pd.DataFrame) -> list[str]:
    """Our GA, GAM and GA2M against the paper's, cell by cell where run."""
    lines = [
        "Our GAM family against the paper's, over the cells run (ours better: lower MSE or "
        "higher AUC than the paper's value for the same cell):",
        "",
        "| Model | Paper tables | Cells run | Ours better than the paper | Mean ours − paper |",
        "|:---|:---|---:|---:|---:|",
    ]
    any_run = False
    for model in ("GA", "GAM", "GA2M"):
        for scope, mask in (
            ("Table 3", cells["paper_table"] == "tab-predictive"),
            ("simulation tables", ~cells["paper_table"].isin(["tab-predictive", "tab-initial"])),
        ):
            part = cells[mask & (cells["row"] == model)]
            if part.empty:
                continue
            run = part[part["trials"] > 0]
            if run.empty:
                lines.append(f"| {model} | {scope} | 0 of {len(part)} | {NOT_RUN} | — |")
                continue
            any_run = True
            lower = run["metric"].map(_lower).to_numpy(dtype=bool)
            diff = run["difference"].to_numpy(dtype=float)
            wins = int(np.sum(np.where(lower, diff < 0, diff > 0)))
            by_metric = ", ".join(
                f"{metric.upper()} {group['difference'].mean():+.4f}"
                for metric, group in run.groupby("metric", sort=True)
            )
            lines.append(
                f"| {model} | {scope} | {len(run)} of {len(part)} | {wins} of {len(run)} | "
                f"{by_metric} |"
            )
    if not any_run:
        lines.append("")
        lines.append(f"No GAM-family cell of the paper's tables has records: {NOT_RUN}.")
        return lines + [""]
    family = cells[cells["row"].isin(["GA", "GAM", "GA2M"]) & (cells["trials"] > 0)]
    lower = family["metric"].map(_lower).to_numpy(dtype=bool)
    diff = family["difference"].to_numpy(dtype=float)
    stronger = family[np.where(lower, diff < 0, diff > 0)]
    lines.append("")
    if stronger.empty:
        lines.append("None of our GAM-family cells is better than the paper's.")
    else:
        listed = "; ".join(
            f"{r.row} on {r.column} {r.ours_mean:.4f} against {r.paper_mean:g} "
            f"({r.difference:+.4f}{', reduced run' if r.reduced else ''})"
            for r in stronger.itertuples(index=False)
            if r.paper_table == "tab-predictive"
        )
        if listed:
            lines.append(
                f"Where our GAM family is stronger than the paper's on real data: {listed}."
            )
        n_sim = int((stronger["paper_table"] != "tab-predictive").sum())
        if n_sim:
            lines.append(f"On the simulation tables, {n_sim} of our GAM-family cells are better.")
        lines.append(
            "Why (our reading; the paper gives no settings for them): see *Why our GAM and GA2M "
            "are stronger than the paper's* at the end. This is why claim (c) is tested against "
            "stronger baselines than the paper's."
        )
    return lines + [""]


#: Written by the demo-generator script beside the tables (not by ``make tables``).
GENERATORS_CSV = "generators_linear.csv"
#: The synthetic generators: records without ``data.generator`` used the default (legendre).
GENERATOR_NAMES = {None: "legendre", "demo": "demo"}


def _generator_name(generator: str | None) -> str:
    return GENERATOR_NAMES.get(generator, str(generator))


def _linear_by_generator(linear: pd.DataFrame, records: pd.DataFrame, generator) -> list[str]:
    """Ours per linear paper cell (``mean ± std (trials)``) with one generator, from records."""
    settings = []
    for row in linear.itertuples(index=False):
        task = "classification" if row.metric == "auc" else "regression"
        m = int(str(row.column).split("=")[1])
        settings.append(
            Setting("synthetic", "linear", task=task, N=int(row.N), m=m, generator=generator)
        )
    grid = ExperimentGrid("generator", PAPER_TRIALS, settings)
    from contextlib import redirect_stderr
    from io import StringIO

    with redirect_stderr(StringIO()):  # the choice between runs is the tables' business
        selected = select_records(records, grid)
    out = []
    for index in range(len(settings)):
        values = selected.loc[selected["cell"] == index, "value"].to_numpy(dtype=float)
        out.append(values)
    return out


def _csv_markdown(frame: pd.DataFrame) -> list[str]:
    """A CSV file as a Markdown table (floats with 4 decimals)."""

    def text(value) -> str:
        if isinstance(value, float | np.floating):
            return "—" if not math.isfinite(value) else f"{value:.4f}"
        return str(value)

    lines = ["| " + " | ".join(str(c) for c in frame.columns) + " |"]
    lines.append(
        "|"
        + "|".join("---:" if frame[c].dtype.kind in "if" else ":---" for c in frame.columns)
        + "|"
    )
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(text(v) for v in row) + " |")
    return lines


def generator_section(
    cells: pd.DataFrame,
    records: pd.DataFrame,
    sim_generator: str | None = None,
    tables_dir: str | os.PathLike | None = None,
) -> list[str]:
    """The linear baselines (a fingerprint of the synthetic data generator): the paper's value
    beside ours with each generator (``legendre``, the data module's default, and ``demo``, after
    the authors' demo code), from the records; ``sim_generator``: the one the simulation tables
    use (the experiment configs'); then ``<tables_dir>/generators_linear.csv`` where it exists."""
    linear = cells[cells["row"].isin(["Linear Regression", "Logistic Regression"])]
    lines = [
        f"The simulation tables above are filled by the **{_generator_name(sim_generator)}** "
        "generator (`data.generator` of `conf/experiment/sim_*.yaml` and "
        "`init_significance.yaml`); records of the other generator never fill their cells. "
        "The demo generator's one free parameter, the number of interaction products it appends "
        "(`n_interactions`; the paper does not give it), was chosen by matching the paper's "
        "**linear-regression column only** (`scripts/calibrate_demo.py`); no other model's "
        "numbers were looked at.",
        "",
    ]
    by_generator = {g: _linear_by_generator(linear, records, g) for g in GENERATOR_NAMES}
    if any(len(v) for values in by_generator.values() for v in values):
        lines += [
            "Linear and logistic regression fit the same model whatever the seed, so their error "
            "is a fingerprint of the data generator. The paper's value beside ours with each "
            "generator, from the records; a cell of ours with fewer than 20 trials is marked † "
            "(reduced run).",
            "",
            "| Paper table | N | m | Paper | Ours, legendre generator | Ours, demo generator | "
            "Demo − paper |",
            "|:---|---:|---:|---:|---:|---:|---:|",
        ]
        for index, row in enumerate(linear.itertuples(index=False)):
            texts = []
            for generator in GENERATOR_NAMES:
                values = by_generator[generator][index]
                if len(values):
                    std = values.std(ddof=1) if len(values) > 1 else math.nan
                    trials = _trials_text(len(values), PAPER_TRIALS)
                    texts.append(f"{_number(values.mean(), std)} ({trials})")
                else:
                    texts.append(NOT_RUN)
            demo = by_generator["demo"][index]
            diff = f"{demo.mean() - row.paper_mean:+.4f}" if len(demo) else "—"
            lines.append(
                f"| {row.label} | {row.N} | {row.column.split('=')[1]} | {row.paper_mean:g} | "
                f"{texts[0]} | {texts[1]} | {diff} |"
            )
        lines.append("")
    else:
        lines += [
            "Linear/logistic regression on the synthetic tables, by generator: "
            f"{NOT_RUN} (neither the legendre nor the demo generator has records).",
            "",
        ]
    path = Path(tables_dir) / GENERATORS_CSV if tables_dir is not None else None
    if path is not None and path.is_file():
        frame = pd.read_csv(path)
        lines += [
            f"Linear regression by generator beside the paper's, from `{path.as_posix()}` "
            "(written by the demo generator's script, not from the records):",
            "",
            *_csv_markdown(frame),
            "",
        ]
    return lines


def compute_section(tables: list[Table], records: pd.DataFrame) -> list[str]:
    lines = [
        "From the records behind each table: the trials, their fit time summed over trials "
        "(`fit_seconds`: a block's wall time divided among its trials; parallel processes add "
        "up), the wall time they took with pauses left out (active: the union of the blocks' "
        "fit intervals, each ending at its `finished_at`, gaps under "
        f"{BRIDGE_SECONDS / 60:.0f} min counted in), the first and last finish time (the span "
        "includes any pause between runs), and the device, process layout and torch build the "
        "records name. The "
        "CPU or GPU model is not recorded. Settings shared by two tables (Table 2's "
        "least-squares half is Table 1's PiLiD) count in both, and so does the time of a sweep "
        "that alternated between two tables' settings (the active wall time is then an upper "
        "bound).",
        "",
        "| Table | Trials | Fit time (sum) | Wall time (active) | First → last finish (span) "
        "| Device | Layout | torch |",
        "|:---|---:|---:|---:|:---|:---|:---|:---|",
    ]
    for paper_table in PAPER_TABLE_ORDER:
        experiment = PAPER_TABLE_EXPERIMENT[paper_table]
        ours = [
            t
            for t in tables
            if t.paper_table == paper_table and experiment_of(t.name) == experiment
        ]
        frame = ours[0].records if ours else None
        summary = compute_summary(frame)
        name = PAPER_TABLES[paper_table]
        if not summary["trials"]:
            lines.append(f"| {name} | 0 | — | — | {NOT_RUN} | — | — | — |")
            continue
        span = (
            _duration((summary["last"] - summary["first"]).total_seconds())
            if summary["first"] is not None
            else "--"
        )
        lines.append(
            f"| {name} | {summary['trials']} | {_duration(summary['fit_seconds'])} | "
            f"{_duration(summary['active_seconds'])} | "
            f"{_time(summary['first'])} → {_time(summary['last'])} ({span}) | "
            f"{', '.join(summary['devices']) or '?'} | {'; '.join(summary['layouts'])} | "
            f"{', '.join(summary['torch']) or '?'} |"
        )
    total = compute_summary(records)
    lines += [
        "",
        f"All {total['trials']} records of the results file: fit time "
        f"{_duration(total.get('fit_seconds', math.nan))} summed over trials, "
        f"{_duration(total.get('active_seconds', math.nan))} of active wall time, finished between "
        f"{_time(total.get('first'))} and {_time(total.get('last'))}.",
        "",
    ]
    return lines


COMMANDS = (
    ("Table 1 and the supplementary MSE tables", "sim_regression"),
    ("the supplementary AUC tables (and N=20000)", "sim_classification"),
    ("Table 2, Figure 3 and the shape-fidelity table", "init_significance"),
    ("Table 3 (the UCI files via PILID_DATA_DIR; downloaded on first use)", "real_data"),
    ("Figure 4", "skill_shapes"),
    ("Figure 5", "spambase_interactions"),
)


def left_section(settings: pd.DataFrame, records: pd.DataFrame) -> list[str]:
    """What is left to run (`remaining_settings`), per paper table and in all, and why."""
    left = remaining_work(settings)
    if left.empty:
        return [f"Nothing: every cell of the paper's tables has {PAPER_TRIALS} trials.", ""]
    trials, seconds, unestimated = total_left(settings)
    devices = sorted(set(records["device"].dropna().astype(str))) if "device" in records else []
    lines = [
        "Why the empty and reduced cells are so: compute. The records name their device: "
        f"{', '.join(devices) or 'none'} (the machine: *Hardware* below). "
        "Per paper table: the settings of its experiment config (`conf/experiment/`) that fill "
        f"a paper cell and have fewer than {PAPER_TRIALS} trials recorded, the trials they "
        "miss, and their fit time estimated by the dry run's rule (`dry_run=true`: the median "
        "`fit_seconds` of the records of the same model on the same data set, at the same N "
        "and m, else scaled to the setting's N) from the committed records, so at their "
        "machine's pace. Fit time adds up over parallel workers: two one-thread workers take "
        "about half of it in wall time. A setting that fills two tables counts in both rows.",
        "",
        "| Table | Settings left | Trials left | Fit time left (est.) | Settings without an "
        "estimate |",
        "|:---|---:|---:|---:|---:|",
    ]
    for paper_table in PAPER_TABLE_ORDER:
        row = _left_for(left, paper_table)
        if row is None:
            lines.append(f"| {PAPER_TABLES[paper_table]} | 0 | 0 | — | 0 |")
            continue
        estimate = _duration(row.seconds) if row.settings > row.unestimated else "—"
        lines.append(
            f"| {PAPER_TABLES[paper_table]} | {int(row.settings)} | {int(row.trials)} | "
            f"{estimate} | {int(row.unestimated)} |"
        )
    lines += [
        "",
        f"In all, each setting once: {trials} trials, about {_duration(seconds)} of fit time"
        + (f", plus {unestimated} setting(s) without an estimate" if unestimated else "")
        + ". The runner resumes: the commands below run only the missing trials;"
        " `bash scripts/reproduce_simulation.sh` runs the simulation tables' missing trials in an"
        " order that completes whole cells first: Table 2, then the cells claim (a) compares, then"
        " every other cell at 5 trials (a reduced run, marked †) before topping it up to 20"
        " (`DRY_RUN=1` lists each step's trials left).",
        "",
    ]
    return lines


def commands_section() -> list[str]:
    lines = [
        "Each command runs (or resumes) one experiment into `results/records`; then "
        "`make tables figures reproduction` rebuilds every table, figure and this file, reading "
        "only the records (nothing trains). `device=cpu` or `device=cuda` pins the device (the "
        "default `auto` takes CUDA when available); the records say which was used, and values "
        "of a GPU run may differ from a CPU run by float rounding. On a Slurm cluster "
        '(`pip install -e ".[cluster]"`) each setting is one array task; add '
        "`hydra.launcher.gpus_per_node=1 device=cuda` for GPU nodes; `results/records` must be on "
        "a file system all nodes share. `python -m pilid.report artifacts` lists the artefact "
        "files the figures read (to commit with `git add -f`; the others stay git-ignored).",
        "",
        "```bash",
    ]
    for what, experiment in COMMANDS:
        base = f"python -m pilid.run -m experiment={experiment} results_dir=results/records"
        lines += [
            f"# {what}",
            f"{base} device=cpu     # CPU",
            f"{base} device=cuda    # GPU",
            "python -m pilid.run -m hydra/launcher=pilid_slurm hydra.launcher.partition=<p> "
            f"experiment={experiment} results_dir=results/records    # Slurm",
            "",
        ]
    lines += [
        "make tables figures reproduction    # results/tables, results/figures, REPRODUCTION.md",
        "```",
        "",
    ]
    return lines


def read_notes(path: str | os.PathLike | None = None) -> str:
    """The hand-written notes (``reproduction_notes.md``), included verbatim."""
    return Path(path or NOTES_FILE).read_text(encoding="utf-8")


def build_reproduction(
    records: pd.DataFrame,
    tables: list[Table],
    source: str = "results/records/records.jsonl",
    figure_link: str | None = "results/figures/paper_vs_ours.png",
    tables_dir: str = "results/tables",
    notes: str | None = None,
    sim_generator: str | None = None,
    left: pd.DataFrame | None = None,
) -> str:
    """The text of REPRODUCTION.md from the normalised ``records`` and our ``tables`` of them
    (`paper_tables`). ``figure_link``: the paper-vs-ours figure relative to the file (None: not
    drawn); ``sim_generator``: the synthetic generator the simulation experiments use (None:
    the default one); ``tables_dir`` is also where ``generators_linear.csv`` is read from;
    ``left``: `remaining_settings` of the records (None: the text says nothing of it)."""
    cells = paper_cells(tables)
    run = run_cells(cells)
    found = claims(tables, records)
    reduced = int(run["reduced"].sum())
    complete = len(run) == len(cells) and reduced == 0
    status = (
        f"**Complete run**: all {len(cells)} cells of the paper's tables with {PAPER_TRIALS} "
        "trials."
        if complete
        else f"**Reduced run**: {len(run)} of the {len(cells)} cells of the paper's tables have "
        f"records, {reduced} of them with fewer than {PAPER_TRIALS} trials (marked †); the other "
        f"cells say *{NOT_RUN}*. Every verdict below is therefore provisional."
    )
    lines = [
        "# Reproducing Guo et al., IJCAI 2020 (PiLiD and PiLiB)",
        "",
        "<!-- Generated by `python -m pilid.report reproduction` (make reproduction) from the "
        "records; do not edit: edit pilid/report/reproduction_notes.md or rerun. -->",
        "",
        f"Generated from `{source}` ({len(records)} trial records) and the paper's values "
        "(`pilid/report/paper.py`, the same numbers as the paper's `paper_results.csv`) by "
        "`make reproduction`. Every number here is a number of the tables in "
        f"`{tables_dir}/`, built from the same records by `make tables`.",
        "",
        status,
        "",
    ]
    if figure_link and not run.empty:
        lines += [
            f"![The paper's tables against ours]({figure_link})",
            "",
            "Each marker is one cell of the paper's tables that we ran: the paper's value (x) "
            "against our mean over trials (y), coloured by table; hollow markers have fewer than "
            f"{PAPER_TRIALS} trials. On the diagonal we reproduce the paper exactly; below it "
            "(MSE) or above it (AUC) we do better.",
            "",
        ]
    else:
        lines += [
            "The paper-vs-ours figure is not drawn: no cell of the paper's tables has records yet.",
            "",
        ]
    per_table = remaining_work(left) if left is not None else None
    lines += ["## Overview", ""] + overview_section(cells, per_table)
    lines += ["## The paper's claims", ""] + claims_section(found)
    lines += [
        "## Every table of the paper, ours beside it",
        "",
        f"Ours: mean ± std (sample std) over the trials; trials run / {PAPER_TRIALS} (a dagger: "
        "fewer, a reduced run); paper: mean ± std as printed (best = bold in the paper; "
        "\\*/\\*\\* = its paired test at 10%/5%); ours − paper is signed (MSE: negative is "
        "better for us; AUC: positive is better for us).",
        "",
    ]
    for paper_table in PAPER_TABLE_ORDER:
        lines += table_section(cells, paper_table, tables_dir, per_table)
    lines += ["## Our GAM family against the paper's", ""] + gam_family_section(cells)
    lines += ["## The synthetic data generator", ""] + generator_section(
        cells, records, sim_generator, tables_dir
    )
    lines += ["## Compute per table", ""] + compute_section(tables, records)
    if left is not None:
        lines += ["## What is left to run", ""] + left_section(left, records)
    lines += ["## Commands that reproduce each table", ""] + commands_section()
    text = "\n".join(lines).rstrip("\n") + "\n\n"
    return text + (read_notes() if notes is None else notes).rstrip("\n") + "\n"


def make_reproduction(
    results,
    out,
    figures_dir="results/figures",
    conf_dir=None,
    records=None,
    tables_dir: str = "results/tables",
) -> list[Path]:
    """Write REPRODUCTION.md (``out``) and the paper-vs-ours figure (under ``figures_dir``) from
    the records under ``results``. Returns the paths written."""
    from pilid.experiments.store import records_path
    from pilid.report.records import load_records, results_root

    if records is None:
        records = load_records(results)
    tables = paper_tables(records, root=results_root(results), conf_dir=conf_dir)
    out = Path(out)
    written = draw_paper_vs_ours(paper_cells(tables), figures_dir) if figures_dir else []
    png = next((p for p in written if p.suffix == ".png"), None)
    link = Path(os.path.relpath(png, out.resolve().parent)).as_posix() if png else None
    text = build_reproduction(
        records,
        tables,
        source=_display_path(records_path(results)),
        figure_link=link,
        tables_dir=Path(tables_dir).as_posix(),
        sim_generator=paper_generator(conf_dir),
        left=remaining_settings(records, conf_dir),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return [out, *written]


def _display_path(path: Path) -> str:
    """``path`` relative to the working directory when inside it (stable across clones), else
    as given."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()
