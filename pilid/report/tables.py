"""The paper's tables from stored trial records: the builders of each table kind.

The table model and its LaTeX/Markdown writers are ``pilid.report.table_model``, the labels
``pilid.report.labels``.

One table per paper table (Section 4 and the supplementary material):

- ``sim`` experiments (``sim_regression``, ``sim_classification``): one table per N, rows = methods
  (PiLiD-gamma and the baselines), columns = number of features m (Tables 1, 4-9).
- ``init_significance``: rows = N, columns = gamma x initialisation, each cell the metric averaged
  over m; the better initialisation of each pair in bold, with ``*``/``**`` when a paired t-test
  by trial seed is significant at 10%/5% (Table 2). The same layout gives the shape-fidelity table
  (centred R^2 of learned vs true shapes; beyond the paper).
- ``real_data``: rows = models, columns = data sets (Table 3).
"""

from __future__ import annotations

import math
import os

import pandas as pd

from pilid.report.labels import (
    DATASET_LABELS,
    DATASET_ORDER,
    INIT_ORDER,
    LOWER_IS_BETTER,
    METRIC_NAMES,
    MODEL_ORDER,
    TASK_METRIC,
    latex_escape,
    model_label,
)
from pilid.report.paper import paper_results
from pilid.report.records import ExperimentGrid, notice, select_records
from pilid.report.stats import paired_by_seed, seed_means
from pilid.report.table_model import Cell, Header, Table, mark_best


# -- helpers over selected records ------------------------------------------------------------
def _values(selected: pd.DataFrame, cells) -> pd.DataFrame:
    return selected[selected["cell"].isin(list(cells))]


def _metric(selected: pd.DataFrame, task: str | None, default: str = "mse") -> str:
    metrics = selected["metric"].dropna()
    if len(metrics):
        return str(metrics.mode().iloc[0])
    return TASK_METRIC.get(task or "", default)


def _row_sort_key(model: str, gamma) -> tuple:
    order = MODEL_ORDER.index(model) if model in MODEL_ORDER else len(MODEL_ORDER)
    return (order, model, -1 if gamma is None else int(gamma))


def _paper_cell(paper: pd.DataFrame | None, table: str | None, model: str, column: str, N=None):
    if paper is None or table is None:
        return math.nan, math.nan
    rows = paper[(paper["table"] == table) & (paper["model"] == model)]
    rows = rows[rows["column"] == column]
    if N is not None:
        rows = rows[rows["N"] == N]
    if rows.empty:
        return math.nan, math.nan
    return float(rows["mean"].iloc[0]), float(rows["std"].iloc[0])


def _set_paper(cell: Cell, paper, table, model: str, column: str, N=None, key_N=None) -> None:
    """Put the paper's value of (table, model, column[, N]) and its key on ``cell``."""
    cell.paper_mean, cell.paper_std = _paper_cell(paper, table, model, column, N=N)
    if math.isfinite(cell.paper_mean):
        cell.paper_key = (table, model, column, key_N)


def _sim_paper_table(paper: pd.DataFrame | None, task: str | None, N: int | None):
    if paper is None or N is None:
        return None
    special = {"tab-initial", "tab-predictive"}
    rows = paper[(paper["task"] == task) & (paper["N"] == N) & ~paper["table"].isin(special)]
    return str(rows["table"].iloc[0]) if len(rows) else None


def _trials(count: int) -> str:
    return f"{count} trial" + ("" if count == 1 else "s")


# -- the table kinds --------------------------------------------------------------------------
def sim_tables(
    selected: pd.DataFrame, grid: ExperimentGrid, paper: pd.DataFrame | None = None
) -> list[Table]:
    """Tables 1 and 4-9: one table per N; rows = methods, columns = m."""
    settings = grid.settings
    task = settings[0].task if settings else None
    metric = _metric(selected, task)
    lower = LOWER_IS_BETTER.get(metric, True)
    tables = []
    for N in sorted({s.N for s in settings if s.N is not None}):
        members = [(i, s) for i, s in enumerate(settings) if s.N == N]
        row_keys = sorted({(s.model, s.gamma) for _, s in members}, key=lambda k: _row_sort_key(*k))
        column_keys = sorted({s.m for _, s in members})
        paper_table = _sim_paper_table(paper, task, N)
        cells = []
        for model, gamma in row_keys:
            label = model_label(model, gamma, task)
            row = []
            for m in column_keys:
                index = [i for i, s in members if (s.model, s.gamma, s.m) == (model, gamma, m)]
                cell = Cell.of(_values(selected, index)["value"], grid.trials)
                _set_paper(cell, paper, paper_table, label, f"m={m}", key_N=N)
                row.append(cell)
            cells.append(row)
        for column in zip(*cells):
            mark_best(list(column), lower)
        name = METRIC_NAMES.get(metric, metric)
        kind = "classification" if task == "classification" else "regression"
        tables.append(
            Table(
                name=f"{grid.name}_N{N}",
                title_tex=f"Average ${name}$ for synthetic {kind} problems when $N={N}$ "
                f"(experiment \\texttt{{{latex_escape(grid.name)}}}). The number following "
                r"\textit{PiLiD} is the number of intervals $\gamma_j$.",
                title_md=f"Average {name} for synthetic {kind} problems when N={N} "
                f"(experiment `{grid.name}`). The number after PiLiD is gamma.",
                corner=Header(r"\# features", "# features"),
                columns=[Header.plain(m) for m in column_keys],
                rows=[Header.model(model_label(mo, g, task)) for mo, g in row_keys],
                cells=cells,
                trials_note=f"{_trials(grid.trials)} per cell",
                best_rule=f"{'Lowest' if lower else 'Highest'} {name} per column",
                paper_table=paper_table,
                row_keys=row_keys,
                column_keys=column_keys,
                trials=grid.trials,
                records=_values(selected, [i for i, _ in members]),
            )
        )
    return tables


def pair_table(
    values: pd.DataFrame,
    grid: ExperimentGrid,
    name: str,
    title_tex: str,
    title_md: str,
    metric: str,
    paper: pd.DataFrame | None = None,
    paper_table: str | None = None,
) -> Table:
    """Table 2's layout: rows = N, columns = gamma x init; each cell the per-seed mean over m,
    then mean and std over seeds; in each (N, gamma) pair the better init is bold and carries
    ``*``/``**`` when the paired t-test by seed (``paired_by_seed``) is significant."""
    settings = grid.settings
    Ns = sorted({s.N for s in settings if s.N is not None})
    gammas = sorted({s.gamma for s in settings if s.gamma is not None})
    present = {s.init for s in settings}
    inits = [i for i in INIT_ORDER if i in present] + sorted(present - set(INIT_ORDER) - {None})
    n_m = max(1, len({s.m for s in settings}))
    expected = grid.trials * n_m
    lower = LOWER_IS_BETTER.get(metric, True)
    cells = []
    for N in Ns:
        row = []
        for gamma in gammas:
            arms = []
            for init in inits:
                arm = values[(values["N"] == N) & (values["gamma"] == gamma)]
                arm = arm[arm["init"] == init]
                arms.append(arm)
                cell = Cell.of(seed_means(arm).to_numpy(), expected, n=len(arm))
                column = f"gamma={gamma}"
                _set_paper(cell, paper, paper_table, f"pilid-{init}", column, N=N, key_N=N)
                row.append(cell)
            pair = row[-len(inits) :]
            mark_best(pair, lower)
            if len(arms) == 2 and all(len(a) for a in arms):
                test = paired_by_seed(arms[0], arms[1])
                best = [c for c in pair if c.bold]
                if test.marker and len(best) == 1:
                    best[0].stars = test.marker
        cells.append(row)
    init_names = {"lstsq": "lstsq", "gaussian": "Gaussian"}
    return Table(
        name=name,
        title_tex=title_tex,
        title_md=title_md,
        corner=Header(r"\# objects", "# objects"),
        columns=[Header.plain(init_names.get(i, i)) for _ in gammas for i in inits],
        rows=[Header.plain(N) for N in Ns],
        cells=cells,
        trials_note=f"{_trials(grid.trials)} per cell, each trial averaged over the values of m it "
        f"has ({n_m} in a full cell; a reduced cell has fewer trials or fewer values of m); the "
        "paired test uses the (seed, m) both initialisations have",
        best_rule=f"The better initialisation of each pair ({'lower' if lower else 'higher'} "
        f"{METRIC_NAMES.get(metric, metric)})",
        groups=[(Header(rf"$\gamma_j={g}$", f"γ={g}"), len(inits)) for g in gammas],
        paper_table=paper_table,
        stars=True,
        row_keys=Ns,
        column_keys=[(g, i) for g in gammas for i in inits],
        trials=grid.trials,
        records=values,
    )


def init_table(
    selected: pd.DataFrame, grid: ExperimentGrid, paper: pd.DataFrame | None = None
) -> Table:
    """Table 2: least-squares vs Gaussian initialisation of PiLiD, averaged over m."""
    task = grid.settings[0].task if grid.settings else None
    metric = _metric(selected, task)
    name = METRIC_NAMES.get(metric, metric)
    paper_table = "tab-initial" if task in (None, "regression") and metric == "mse" else None
    return pair_table(
        selected,
        grid,
        name=grid.name,
        title_tex=f"Average ${name}$ of \\textit{{PiLiD}} given the proposed (least-squares) "
        f"and a Gaussian initialisation (experiment \\texttt{{{latex_escape(grid.name)}}}).",
        title_md=f"Average {name} of PiLiD given the proposed (least-squares) and a Gaussian "
        f"initialisation (experiment `{grid.name}`).",
        metric=metric,
        paper=paper,
        paper_table=paper_table,
    )


def fidelity_table(fidelity: pd.DataFrame, grid: ExperimentGrid) -> Table:
    """Beyond the paper: centred R^2 of learned vs true marginal value functions, Table 2's
    layout (by N, gamma and initialisation)."""
    return pair_table(
        fidelity,
        grid,
        name=f"{grid.name}_shape_fidelity",
        title_tex=r"Shape fidelity: $R^2$ of the learned against the true marginal value "
        r"functions (both centred; plain mean over features, which near-flat true shapes "
        r"dominate: REPRODUCTION.md gives the variance-weighted $R^2$) of \textit{PiLiD} by "
        r"initialisation "
        f"(experiment \\texttt{{{latex_escape(grid.name)}}}).",
        title_md="Shape fidelity: R² of the learned against the true marginal value functions "
        "(both centred; plain mean over features, which near-flat true shapes dominate: "
        "REPRODUCTION.md gives the variance-weighted R²) of PiLiD by initialisation (experiment "
        f"`{grid.name}`).",
        metric="r2",
    )


def _model_rows(settings) -> tuple[list, list, set]:
    """The layout of Table 3 and Table 3+: the data sets (paper order first), the (model, gamma)
    rows, and the models with several rows (only those name their gamma, e.g. "PiLiD-5"; PiLiB's
    library defaults fix gamma=5 and read "PiLiB (library defaults)")."""
    datasets = sorted(
        {s.dataset for s in settings},
        key=lambda d: (DATASET_ORDER.index(d) if d in DATASET_ORDER else len(DATASET_ORDER), d),
    )
    row_keys = sorted({(s.model, s.gamma) for s in settings}, key=lambda k: _row_sort_key(*k))
    repeated = {m for m, _ in row_keys if sum(1 for mo, _ in row_keys if mo == m) > 1}
    return datasets, row_keys, repeated


def real_table(
    selected: pd.DataFrame, grid: ExperimentGrid, paper: pd.DataFrame | None = None
) -> Table:
    """Table 3: rows = models, columns = data sets (each with its own metric)."""
    settings = grid.settings
    datasets, row_keys, repeated = _model_rows(settings)
    paper_defaults = (
        {}
        if paper is None
        else dict(
            paper[paper["table"] == "tab-predictive"][["column", "metric"]].drop_duplicates().values
        )
    )
    metrics = {}
    for dataset in datasets:
        index = [i for i, s in enumerate(settings) if s.dataset == dataset]
        default = paper_defaults.get(dataset, "auc")
        metrics[dataset] = _metric(_values(selected, index), None, default)
    cells = []
    for model, gamma in row_keys:
        label = model_label(model, gamma, with_gamma=model in repeated)
        row = []
        for dataset in datasets:
            index = [
                i
                for i, s in enumerate(settings)
                if (s.model, s.gamma, s.dataset) == (model, gamma, dataset)
            ]
            cell = Cell.of(_values(selected, index)["value"], grid.trials)
            _set_paper(cell, paper, "tab-predictive", label, dataset)
            row.append(cell)
        cells.append(row)
    for dataset, column in zip(datasets, zip(*cells)):
        mark_best(list(column), LOWER_IS_BETTER.get(metrics[dataset], True))
    columns = [
        Header.plain(f"{DATASET_LABELS.get(d, d)} ({METRIC_NAMES.get(metrics[d], metrics[d])})")
        for d in datasets
    ]
    paper_table = "tab-predictive" if set(datasets) & set(DATASET_ORDER) else None
    if grid.from_records:  # not a paper table: the models and data sets the records hold
        title_tex = f"Predictive performance (experiment \\texttt{{{latex_escape(grid.name)}}})."
        title_md = f"Predictive performance (experiment `{grid.name}`)."
    else:
        title_tex = (
            r"Predictive performance of \textit{PiLiD} and \textit{PiLiB} on real data "
            f"(experiment \\texttt{{{latex_escape(grid.name)}}})."
        )
        title_md = (
            f"Predictive performance of PiLiD and PiLiB on real data (experiment `{grid.name}`)."
        )
    return Table(
        name=grid.name,
        title_tex=title_tex,
        title_md=title_md,
        corner=Header("", ""),
        columns=columns,
        rows=[Header.model(model_label(m, g, with_gamma=m in repeated)) for m, g in row_keys],
        cells=cells,
        trials_note=f"{_trials(grid.trials)} per cell",
        best_rule="Best per column (lowest MSE, highest AUC)",
        paper_table=paper_table,
        row_keys=row_keys,
        column_keys=datasets,
        trials=grid.trials,
        records=selected,
    )


def peers_table(selected: pd.DataFrame, grid: ExperimentGrid) -> Table:
    """Table 3+ (today's peers, beyond the paper): rows = models, and per data set two columns: the
    metric (mean ± std over trials, best bold) and the fit seconds per trial (mean ± std)."""
    settings = grid.settings
    datasets, row_keys, repeated = _model_rows(settings)
    metrics = {}
    for dataset in datasets:
        index = [i for i, s in enumerate(settings) if s.dataset == dataset]
        metrics[dataset] = _metric(_values(selected, index), None, "auc")
    cells = []
    for model, gamma in row_keys:
        row = []
        for dataset in datasets:
            index = [
                i
                for i, s in enumerate(settings)
                if (s.model, s.gamma, s.dataset) == (model, gamma, dataset)
            ]
            values = _values(selected, index)
            row.append(Cell.of(values["value"], grid.trials))
            seconds = values["fit_seconds"] if "fit_seconds" in values else []
            row.append(Cell.of(seconds, grid.trials, n=len(values)))
        cells.append(row)
    columns = list(zip(*cells))
    for position, dataset in enumerate(datasets):
        mark_best(list(columns[2 * position]), LOWER_IS_BETTER.get(metrics[dataset], True))
    headers = []
    for dataset in datasets:
        label = DATASET_LABELS.get(dataset, dataset)
        headers.append(Header.plain(f"{label} ({METRIC_NAMES.get(metrics[dataset])})"))
        headers.append(Header.plain(f"{label} fit s"))
    return Table(
        name=grid.name,
        title_tex=r"Table 3+: \textit{PiLiD} beside today's interpretable models and LightGBM on "
        f"Table 3's data and splits (experiment \\texttt{{{latex_escape(grid.name)}}}; beyond "
        "the paper). Fit seconds per trial on the machine of the records.",
        title_md="Table 3+: PiLiD beside today's interpretable models and LightGBM on Table 3's "
        f"data and splits (experiment `{grid.name}`; beyond the paper). Fit seconds per trial on "
        "the machine of the records.",
        corner=Header("", ""),
        columns=headers,
        rows=[Header.model(model_label(m, g, with_gamma=m in repeated)) for m, g in row_keys],
        cells=cells,
        trials_note=f"{_trials(grid.trials)} per cell",
        best_rule="Best accuracy per data set (lowest MSE, highest AUC)",
        row_keys=row_keys,
        column_keys=[(d, part) for d in datasets for part in ("metric", "fit_seconds")],
        trials=grid.trials,
        records=selected,
    )


# -- all tables -------------------------------------------------------------------------------
def build_tables(
    records: pd.DataFrame,
    grids: list[ExperimentGrid],
    root: str | os.PathLike | None = None,
    fidelity: bool = True,
    evaluator=None,
) -> list[Table]:
    """Every table the records and experiment grids allow.

    Parameters
    ----------
    records : pandas.DataFrame
        Normalised records (`pilid.report.records.load_records`).
    grids : list of ExperimentGrid
        The settings of each experiment (`pilid.report.records.grids_for_records`).
    root : path or None, default=None
        The results directory whose ``artifacts/`` feed the shape-fidelity table (skipped when
        None or when no shapes are stored).
    fidelity : bool, default=True
        Build the shape-fidelity table.
    evaluator : callable or None, default=None
        ``data dict -> (feature, grid) -> true values`` for it (default: regenerate the
        synthetic data set).

    Returns
    -------
    list of Table
        One per experiment with a table layout (a simulation experiment: one per N; an
        initialisation experiment: its shape-fidelity table after it).
    """
    paper = paper_results()
    tables: list[Table] = []
    for grid in grids:
        kind = grid.kind
        if kind is None:
            if grid.name not in ("skill_shapes", "smoke_skill_shapes"):
                notice(f"no table layout for experiment {grid.name!r}; skipped")
            continue
        selected = select_records(records, grid)
        if kind == "sim":
            tables += sim_tables(selected, grid, paper)
        elif kind == "real":
            tables.append(real_table(selected, grid, paper))
        elif kind == "peers":
            tables.append(peers_table(selected, grid))
        elif kind == "init":
            tables.append(init_table(selected, grid, paper))
            if fidelity and root is not None:
                from pilid.report import shapes

                scores = shapes.fidelity_frame(selected, root, evaluator or shapes.evaluator_for)
                if scores.empty:
                    notice(f"{grid.name}: no stored shapes; shape-fidelity table skipped")
                else:
                    tables.append(fidelity_table(scores, grid))
    return tables
