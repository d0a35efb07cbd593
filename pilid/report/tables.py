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
- ``real_data``: rows = models, columns = data sets (Table 3); the same layout for an experiment
  without a config of its own (``adhoc`` runs, a user's models and tables).

A cell of a ``sim`` or ``real`` table holds one setting's trials, never two: a row is a model
setting (`MODEL_FIELDS`), a column of Table 3's layout a data setting (`DATA_FIELDS`), and
every field of a setting is in one of the two. Where two rows or columns would read the same
(a data set run as regression and as classification, at two N, two files of one name) their
labels add what tells them apart (``synthetic classification N=500``, ``sha256 1a2b3c4d``).
Table 2's cells pool the values of m by its stated rule (`pair_table`).
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
from pilid.report.records import ExperimentGrid, Setting, notice, select_records
from pilid.report.stats import mean_pm, paired_by_seed, seed_means
from pilid.report.table_model import Cell, Header, Table, mark_best


class SecondsCell(Cell):
    """A cell of fit seconds: mean ± std rounded to what the std supports (`mean_pm`: the std to
    two significant digits, the mean to the same place) instead of the metric's 4 decimals."""

    def _number(self, pm: str) -> str:
        return mean_pm(self.mean, self.std, pm)


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


# -- rows and columns: one setting per cell ---------------------------------------------------
#: The fields of a `Setting` that say which data a column of Table 3's layout holds.
DATA_FIELDS = ("dataset", "task", "N", "m", "generator", "sha256")
#: The fields of a `Setting` that say which model a row stands for.
MODEL_FIELDS = ("model", "gamma", "gamma_rule", "init", "smoothness")


def _key(setting: Setting, names: tuple[str, ...]) -> tuple:
    return tuple(getattr(setting, name) for name in names)


def _sortable(key: tuple) -> tuple:
    """A key of fields that may be None, in an order Python can sort (None first)."""
    return tuple((0, "") if value is None else (1, value) for value in key)


def _part(name: str, value) -> str | None:
    """How a label names one field that tells it from another of the same text."""
    if name == "sha256":
        return f"sha256 {str(value)[:8]}" if value else "sha256 none"
    if name == "generator":
        return f"generator={value or 'legendre'}"
    if value is None:
        return None
    if name in ("dataset", "task"):
        return str(value)
    return f"{'gamma' if name == 'gamma_rule' else name}={value}"


def _told_apart(labels: list[str], keys: list[tuple], names: tuple[str, ...]) -> list[str]:
    """Each label, followed by the fields of its key that differ among the keys of the same
    label (only where two keys share one)."""
    out = []
    for label, key in zip(labels, keys):
        same = [k for text, k in zip(labels, keys) if text == label]
        parts = [
            _part(name, key[i])
            for i, name in enumerate(names)
            if len(same) > 1 and len({k[i] for k in same}) > 1
        ]
        out.append(" ".join([label, *(p for p in parts if p)]))
    return out


def _model_order(key: tuple) -> tuple:
    """The paper's model order, then gamma, its rule, the initialisation (the paper's first),
    the smoothness."""
    model, gamma, rule, init, smoothness = key
    inits = INIT_ORDER.index(init) if init in INIT_ORDER else len(INIT_ORDER)
    return (_row_sort_key(model, gamma), _sortable((rule,)), inits, _sortable((init, smoothness)))


def _model_rows(settings, task: str | None = None, always_gamma: bool = False):
    """The rows of a table: one per model setting (`MODEL_FIELDS`; the paper's model order),
    their ``(model, gamma)`` and labels. A model names its gamma (``PiLiD-5``) where
    ``always_gamma`` or where it has rows of several gammas (PiLiB's library defaults fix gamma=5
    and read "PiLiB (library defaults)"); rows that would still read the same add what tells
    them apart (``init=gaussian``)."""
    keys = sorted({_key(s, MODEL_FIELDS) for s in settings}, key=_model_order)
    gammas: dict = {}
    for key in keys:
        gammas.setdefault(key[0], set()).add(key[1])
    labels = [
        model_label(k[0], k[1], task, with_gamma=always_gamma or len(gammas[k[0]]) > 1)
        for k in keys
    ]
    return keys, [(k[0], k[1]) for k in keys], _told_apart(labels, keys, MODEL_FIELDS)


def _data_columns(settings):
    """The columns of Table 3's layout: one per data setting (`DATA_FIELDS`; the paper's data
    sets first), each column's name (its data set, plus what tells it from the other columns
    of that data set, e.g. ``synthetic classification N=500``) and label (the same with the
    data set's label)."""
    keys = sorted(
        {_key(s, DATA_FIELDS) for s in settings},
        key=lambda k: (
            DATASET_ORDER.index(k[0]) if k[0] in DATASET_ORDER else len(DATASET_ORDER),
            str(k[0]),
            _sortable(k[1:]),
        ),
    )
    names = _told_apart([str(k[0]) for k in keys], keys, DATA_FIELDS)
    labels = _told_apart([DATASET_LABELS.get(k[0], str(k[0])) for k in keys], keys, DATA_FIELDS)
    return keys, names, labels


def _where(settings, *fields: tuple[str, ...]) -> dict[tuple, list[int]]:
    """(key of each group of ``fields``) -> the indices of the settings with those values."""
    cells: dict[tuple, list[int]] = {}
    for index, setting in enumerate(settings):
        cells.setdefault(tuple(_key(setting, f) for f in fields), []).append(index)
    return cells


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
        models, row_keys, labels = _model_rows([s for _, s in members], task, always_gamma=True)
        column_keys = sorted({s.m for _, s in members})
        paper_table = _sim_paper_table(paper, task, N)
        where: dict[tuple, list[int]] = {}
        for i, s in members:
            where.setdefault((_key(s, MODEL_FIELDS), s.m), []).append(i)
        cells = []
        for model, label in zip(models, labels):
            row = []
            for m in column_keys:
                index = where.get((model, m), [])
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
                rows=[Header.model(label) for label in labels],
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


def _short_note(grid: ExperimentGrid) -> str | None:
    """The dagger's meaning for a grid of records (no configured trials): None for the default."""
    if not grid.from_records:
        return None
    return "fewer trials than the cell with the most (its trials/that most in brackets)"


def real_table(
    selected: pd.DataFrame, grid: ExperimentGrid, paper: pd.DataFrame | None = None
) -> Table:
    """Table 3: rows = models, columns = data sets (each with its own metric); a data set with
    settings of two tasks, sizes or files has a column for each (see the module)."""
    settings = grid.settings
    models, row_keys, labels = _model_rows(settings)
    columns, names, column_labels = _data_columns(settings)
    where = _where(settings, MODEL_FIELDS, DATA_FIELDS)
    paper_defaults = (
        {}
        if paper is None
        else dict(
            paper[paper["table"] == "tab-predictive"][["column", "metric"]].drop_duplicates().values
        )
    )
    metrics = []
    for column in columns:
        index = [i for i, s in enumerate(settings) if _key(s, DATA_FIELDS) == column]
        default = paper_defaults.get(column[0]) or TASK_METRIC.get(column[1] or "", "auc")
        metrics.append(_metric(_values(selected, index), None, default))
    cells = []
    for model, label in zip(models, labels):
        row = []
        for column, name in zip(columns, names):
            cell = Cell.of(_values(selected, where.get((model, column), []))["value"], grid.trials)
            if name == column[0]:  # the data set's only column: the paper's value, if any
                _set_paper(cell, paper, "tab-predictive", label, column[0])
            row.append(cell)
        cells.append(row)
    for metric, column in zip(metrics, zip(*cells)):
        mark_best(list(column), LOWER_IS_BETTER.get(metric, True))
    headers = [
        Header.plain(f"{label} ({METRIC_NAMES.get(metric, metric)})")
        for label, metric in zip(column_labels, metrics)
    ]
    paper_table = "tab-predictive" if {c[0] for c in columns} & set(DATASET_ORDER) else None
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
        columns=headers,
        rows=[Header.model(label) for label in labels],
        cells=cells,
        trials_note=f"{_trials(grid.trials)} per cell",
        best_rule="Best per column (lowest MSE, highest AUC)",
        paper_table=paper_table,
        row_keys=row_keys,
        column_keys=names,
        trials=grid.trials,
        records=selected,
        short_note=_short_note(grid),
    )


def peers_table(selected: pd.DataFrame, grid: ExperimentGrid) -> Table:
    """Table 3+ (today's peers, beyond the paper): rows = models, and per data set two columns: the
    metric (mean ± std over trials, best bold) and the fit seconds per trial (mean ± std, to the
    precision of the std: `SecondsCell`)."""
    settings = grid.settings
    models, row_keys, labels = _model_rows(settings)
    columns, names, column_labels = _data_columns(settings)
    where = _where(settings, MODEL_FIELDS, DATA_FIELDS)
    metrics = []
    for column in columns:
        index = [i for i, s in enumerate(settings) if _key(s, DATA_FIELDS) == column]
        default = TASK_METRIC.get(column[1] or "", "auc")
        metrics.append(_metric(_values(selected, index), None, default))
    cells = []
    for model in models:
        row = []
        for column in columns:
            values = _values(selected, where.get((model, column), []))
            row.append(Cell.of(values["value"], grid.trials))
            seconds = values["fit_seconds"] if "fit_seconds" in values else []
            row.append(SecondsCell.of(seconds, grid.trials, n=len(values)))
        cells.append(row)
    cell_columns = list(zip(*cells))
    for position, metric in enumerate(metrics):
        mark_best(list(cell_columns[2 * position]), LOWER_IS_BETTER.get(metric, True))
    headers = []
    for label, metric in zip(column_labels, metrics):
        headers.append(Header.plain(f"{label} ({METRIC_NAMES.get(metric)})"))
        headers.append(Header.plain(f"{label} fit s"))
    return Table(
        name=grid.name,
        title_tex=r"Table 3+: \textit{PiLiD} beside today's interpretable models and LightGBM on "
        f"Table 3's data and splits (experiment \\texttt{{{latex_escape(grid.name)}}}; beyond "
        "the paper). Fit seconds per trial on the machine of the records, the std to two "
        "significant digits and the mean to the same place.",
        title_md="Table 3+: PiLiD beside today's interpretable models and LightGBM on Table 3's "
        f"data and splits (experiment `{grid.name}`; beyond the paper). Fit seconds per trial on "
        "the machine of the records, the std to two significant digits and the mean to the same "
        "place.",
        corner=Header("", ""),
        columns=headers,
        rows=[Header.model(label) for label in labels],
        cells=cells,
        trials_note=f"{_trials(grid.trials)} per cell",
        best_rule="Best accuracy per data set (lowest MSE, highest AUC)",
        row_keys=row_keys,
        column_keys=[(name, part) for name in names for part in ("metric", "fit_seconds")],
        trials=grid.trials,
        records=selected,
        short_note=_short_note(grid),
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
