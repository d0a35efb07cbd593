"""The paper's tables from stored trial records, as LaTeX (booktabs) and Markdown.

One table per paper table (Section 4 and the supplementary material):

- ``sim`` experiments (``sim_regression``, ``sim_classification``): one table per N, rows = methods
  (PiLiD-gamma and the baselines), columns = number of features m (Tables 1, 4-9).
- ``init_significance``: rows = N, columns = gamma x initialisation, each cell the metric averaged
  over m; the better initialisation of each pair in bold, with ``*``/``**`` when a paired t-test
  by trial seed is significant at 10%/5% (Table 2). The same layout gives the shape-fidelity table
  (centred R^2 of learned vs true shapes; beyond the paper).
- ``real_data``: rows = models, columns = data sets (Table 3).

Cells show ``mean \\pm std`` over trials (sample std, ddof=1) with 4 decimals; ``--`` when nothing
was run; a dagger and the trial count when fewer trials than configured were found. The best
value per column is bold (lowest MSE, highest AUC/R^2); ties are judged at the displayed
precision: every cell whose mean prints the same 4 decimals as the best is bold.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.report.paper import PAPER_TABLES, paper_results
from pilid.report.records import ExperimentGrid, notice, select_records
from pilid.report.stats import paired_by_seed, seed_means

DECIMALS = 4
METRIC_NAMES = {"mse": "MSE", "auc": "AUC", "r2": "R^2"}
LOWER_IS_BETTER = {"mse": True, "auc": False, "r2": False}
TASK_METRIC = {"regression": "mse", "classification": "auc"}

#: Row order of the paper's tables (Tables 1 and 3 share it): PiLiD, PiLiB, MLP, NIT, SVM, RF,
#: linear, GA, GAM, GA2M; within a model, gamma ascending.
MODEL_ORDER = ("pilid", "pilib", "mlp", "nit", "svm", "rf", "linear", "ga", "gam", "ga2m")
MODEL_LABELS = {
    "pilid": "PiLiD",
    "pilib": "PiLiB",
    "mlp": "MLP",
    "nit": "NIT",
    "svm": "SVM (rbf kernel)",
    "rf": "Random Forest",
    "ga": "GA",
    "gam": "GAM",
    "ga2m": "GA2M",
}
ITALIC_MODELS = ("PiLiD", "PiLiB", "NIT")  # the paper sets these in italics
#: Column order and headers of Table 3.
DATASET_ORDER = ("bike", "bank", "spambase", "skill")
DATASET_LABELS = {
    "bike": "bike sharing",
    "bank": "bank marketing",
    "spambase": "spambase",
    "skill": "skill",
}
INIT_ORDER = ("lstsq", "gaussian")


# -- labels -----------------------------------------------------------------------------------
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def model_label(model: str, gamma=None, task: str | None = None, with_gamma: bool = True) -> str:
    """The paper's row label: ``PiLiD-5``, ``SVM (rbf kernel)``, ``Logistic Regression``..."""
    if model == "linear":
        return "Logistic Regression" if task == "classification" else "Linear Regression"
    label = MODEL_LABELS.get(model, str(model))
    if with_gamma and gamma is not None and not pd.isna(gamma):
        label = f"{label}-{int(gamma)}"
    return label


def latex_label(label: str) -> str:
    """A row label in LaTeX: escaped, PiLiD/PiLiB/NIT in italics, GA2M as GA$^2$M."""
    if label == "GA2M":
        return r"GA$^2$M"
    text = latex_escape(label)
    if label.split("-")[0] in ITALIC_MODELS:
        text = rf"\textit{{{text}}}"
    return text


@dataclass(frozen=True)
class Header:
    """A header or row label in both output formats."""

    latex: str
    md: str

    @classmethod
    def plain(cls, text) -> Header:
        return cls(latex_escape(str(text)), str(text))

    @classmethod
    def model(cls, label: str) -> Header:
        return cls(latex_label(label), label)


# -- cells ------------------------------------------------------------------------------------
@dataclass
class Cell:
    """One table cell: mean and std over trials, trial counts, and its marks."""

    mean: float = math.nan
    std: float = math.nan
    n: int = 0
    expected: int = 0
    bold: bool = False
    stars: str = ""
    paper_mean: float = math.nan
    paper_std: float = math.nan
    #: (paper table, paper row label, paper column, N or None) of the paper's cell, if any
    paper_key: tuple | None = None

    @classmethod
    def of(cls, values, expected: int, n: int | None = None) -> Cell:
        """Cell of per-trial ``values`` (``n``: the number of records behind them)."""
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        count = len(values) if n is None else int(n)
        if len(values) == 0:
            return cls(n=0, expected=expected)
        std = float(values.std(ddof=1)) if len(values) > 1 else math.nan
        return cls(mean=float(values.mean()), std=std, n=count, expected=expected)

    @property
    def missing(self) -> bool:
        return self.n == 0 or not math.isfinite(self.mean)

    @property
    def short(self) -> bool:
        """Fewer trials than configured."""
        return not self.missing and self.n < self.expected

    @property
    def shown(self) -> float:
        """The mean as displayed (rounded to ``DECIMALS``): ties are judged on this."""
        return float(f"{self.mean:.{DECIMALS}f}")

    def _number(self, pm: str) -> str:
        text = f"{self.mean:.{DECIMALS}f}"
        if math.isfinite(self.std):
            text += f"{pm}{self.std:.{DECIMALS}f}"
        return text

    def latex(self) -> str:
        if self.missing:
            return "--"
        text = self._number(r" $\pm$ ")
        if self.bold:
            text = rf"\textbf{{{text}}}"
        marks = self.stars + (r"\dagger" if self.short else "")
        if marks:
            text += f"$^{{{marks}}}$"
        if self.short:
            text += f" ({self.n}/{self.expected})"
        return text

    def markdown(self) -> str:
        if self.missing:
            return "--"
        text = self._number(" ± ")
        if self.bold:
            text = f"**{text}**"
        text += self.stars.replace("*", r"\*")
        if self.short:
            text += f"† ({self.n}/{self.expected})"
        return text


def mark_best(cells: list[Cell], lower_is_better: bool) -> None:
    """Bold the best cell(s) among ``cells``: every cell whose displayed mean equals the best
    displayed mean (ties at 4 decimals are all bold). Missing cells never compete."""
    present = [c for c in cells if not c.missing]
    if not present:
        return
    shown = [c.shown for c in present]
    best = min(shown) if lower_is_better else max(shown)
    for cell, value in zip(present, shown):
        cell.bold = value == best


# -- tables -----------------------------------------------------------------------------------
@dataclass
class Table:
    """A rendered-ready table: headers, cells and the caption's parts."""

    name: str
    title_tex: str
    title_md: str
    corner: Header
    columns: list[Header]
    rows: list[Header]
    cells: list[list[Cell]]
    trials_note: str
    best_rule: str
    groups: list[tuple[Header, int]] = field(default_factory=list)
    paper_table: str | None = None
    stars: bool = False
    row_keys: list = field(default_factory=list)
    column_keys: list = field(default_factory=list)
    #: trials configured per setting (the experiment's ``trials``)
    trials: int = 0
    #: the records behind the cells (one row per trial; ``value`` is the cell's metric)
    records: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        has_paper = any(math.isfinite(c.paper_mean) for row in self.cells for c in row)
        if not has_paper:  # e.g. a smoke run: no cell of the paper's table matches
            self.paper_table = None

    @property
    def n_columns(self) -> int:
        return 1 + len(self.columns)

    def _any(self, predicate) -> bool:
        return any(predicate(c) for row in self.cells for c in row)

    def _notes(self, tex: bool) -> list[str]:
        pm = r"$\pm$" if tex else "±"
        notes = [f"Mean {pm} std over {self.trials_note}."]
        rule = self.best_rule.replace("R^2", "$R^2$" if tex else "R²")
        notes.append(f"{rule} in bold (ties at the {DECIMALS} decimals shown all bold).")
        if self.stars:
            star = r"$^{*}$, $^{**}$" if tex else r"\*, \*\*"
            percent = r"\%" if tex else "%"
            notes.append(
                f"{star}: paired t-test by trial seed significant at 10{percent}, 5{percent}."
            )
        if self._any(lambda c: c.short):
            dagger = r"$^\dagger$" if tex else "†"
            notes.append(
                f"{dagger}: reduced run, fewer trials than configured (run/configured in brackets)."
            )
        if self._any(lambda c: c.missing):
            notes.append("--: not run yet.")
        if self.paper_table:
            notes.append(f"Paper: {PAPER_TABLES.get(self.paper_table, self.paper_table)}.")
        return notes

    def caption(self, tex: bool = True) -> str:
        title = self.title_tex if tex else self.title_md
        return " ".join([title, *self._notes(tex)])

    def to_latex(self) -> str:
        """The table as a LaTeX ``table`` environment (needs ``\\usepackage{booktabs}``)."""
        spec = "l" + "r" * len(self.columns)
        lines = [
            "% Generated by `python -m pilid.report tables`; edits are overwritten.",
            r"\begin{table}[htbp]",
            r"  \centering",
            rf"  \caption{{{self.caption(tex=True)}}}",
            rf"  \label{{tab:{self.name}}}",
            rf"  \begin{{tabular}}{{{spec}}}",
            r"    \toprule",
        ]
        if self.groups:
            heads = [rf"\multicolumn{{{span}}}{{c}}{{{h.latex}}}" for h, span in self.groups]
            lines.append("    " + " & ".join(["", *heads]) + r" \\")
            rules, start = [], 2
            for _, span in self.groups:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
                start += span
            lines.append("    " + " ".join(rules))
        header = [self.corner.latex, *(h.latex for h in self.columns)]
        lines.append("    " + " & ".join(header) + r" \\")
        lines.append(r"    \midrule")
        for label, row in zip(self.rows, self.cells):
            lines.append("    " + " & ".join([label.latex, *(c.latex() for c in row)]) + r" \\")
        lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}", ""]
        return "\n".join(lines)

    def _md_columns(self) -> list[str]:
        if not self.groups:
            return [h.md for h in self.columns]
        names, position = [], 0
        for group, span in self.groups:
            for h in self.columns[position : position + span]:
                names.append(f"{group.md} {h.md}")
            position += span
        return names

    def to_markdown(self) -> str:
        """The table as GitHub Markdown, caption first."""
        lines = [f"**{self.caption(tex=False)}**", ""]
        lines.append("| " + " | ".join([self.corner.md, *self._md_columns()]) + " |")
        lines.append("|" + "|".join([":---", *["---:"] * len(self.columns)]) + "|")
        for label, row in zip(self.rows, self.cells):
            lines.append("| " + " | ".join([label.md, *(c.markdown() for c in row)]) + " |")
        return "\n".join(lines) + "\n"

    def comparison(self) -> pd.DataFrame:
        """Ours beside the paper, one row per cell with a paper value."""
        rows = []
        for r, row in enumerate(self.cells):
            for c, cell in enumerate(row):
                if not math.isfinite(cell.paper_mean):
                    continue
                rows.append(
                    {
                        "table": self.name,
                        "paper_table": self.paper_table,
                        "row": self.rows[r].md,
                        "column": self._md_columns()[c],
                        "ours_mean": cell.mean,
                        "ours_std": cell.std,
                        "trials": cell.n,
                        "expected": cell.expected,
                        "reduced": cell.short,
                        "paper_mean": cell.paper_mean,
                        "paper_std": cell.paper_std,
                        "difference": cell.mean - cell.paper_mean,
                    }
                )
        return pd.DataFrame(rows)

    def comparison_markdown(self) -> str:
        """Markdown view with every cell as ``ours (paper)`` (means only)."""
        reduced = self._any(lambda c: c.short and math.isfinite(c.paper_mean))
        note = " †: reduced run, fewer trials than configured." if reduced else ""
        lines = [f"**{self.title_md} Ours (paper), means.{note}**", ""]
        lines.append("| " + " | ".join([self.corner.md, *self._md_columns()]) + " |")
        lines.append("|" + "|".join([":---", *["---:"] * len(self.columns)]) + "|")
        for label, row in zip(self.rows, self.cells):
            texts = []
            for cell in row:
                ours = "--" if cell.missing else f"{cell.mean:.{DECIMALS}f}"
                if cell.short:
                    ours += f"† ({cell.n}/{cell.expected})"
                known = math.isfinite(cell.paper_mean)
                paper = f"{cell.paper_mean:.{DECIMALS}f}" if known else "--"
                texts.append(f"{ours} ({paper})")
            lines.append("| " + " | ".join([label.md, *texts]) + " |")
        return "\n".join(lines) + "\n"


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
        trials_note=f"{_trials(grid.trials)} per cell, each averaged over the {n_m} values of m",
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
        r"functions (both centred; mean over features) of \textit{PiLiD} by initialisation "
        f"(experiment \\texttt{{{latex_escape(grid.name)}}}).",
        title_md="Shape fidelity: R² of the learned against the true marginal value functions "
        f"(both centred; mean over features) of PiLiD by initialisation (experiment "
        f"`{grid.name}`).",
        metric="r2",
    )


def real_table(
    selected: pd.DataFrame, grid: ExperimentGrid, paper: pd.DataFrame | None = None
) -> Table:
    """Table 3: rows = models, columns = data sets (each with its own metric)."""
    settings = grid.settings
    datasets = sorted(
        {s.dataset for s in settings},
        key=lambda d: (DATASET_ORDER.index(d) if d in DATASET_ORDER else len(DATASET_ORDER), d),
    )
    row_keys = sorted({(s.model, s.gamma) for s in settings}, key=lambda k: _row_sort_key(*k))
    repeated = {m for m, _ in row_keys if sum(1 for mo, _ in row_keys if mo == m) > 1}
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
    return Table(
        name=grid.name,
        title_tex=r"Predictive performance of \textit{PiLiD} and \textit{PiLiB} on real data "
        f"(experiment \\texttt{{{latex_escape(grid.name)}}}).",
        title_md=f"Predictive performance of PiLiD and PiLiB on real data (experiment "
        f"`{grid.name}`).",
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


# -- all tables -------------------------------------------------------------------------------
def build_tables(
    records: pd.DataFrame,
    grids: list[ExperimentGrid],
    root: str | os.PathLike | None = None,
    fidelity: bool = True,
    evaluator=None,
) -> list[Table]:
    """Every table the records and experiment grids allow.

    ``records``: normalised records (``pilid.report.records.load_records``); ``root``: the results
    directory whose ``artifacts/`` feed the shape-fidelity table (skipped when None or when no
    shapes are stored); ``evaluator``: ``data dict -> (feature, grid) -> true values`` for it
    (default: regenerate the synthetic data set).
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


def write_tables(tables: list[Table], out_dir: str | os.PathLike) -> list[Path]:
    """Write ``<name>.tex`` and ``<name>.md`` per table, ``tables.md`` (all Markdown),
    ``tables.tex`` (a standalone document inputting every table) and, where the paper has the
    table, ``paper_vs_ours.csv`` / ``paper_vs_ours.md``. Returns the written paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:
        for suffix, text in ((".tex", table.to_latex()), (".md", table.to_markdown())):
            path = out / f"{table.name}{suffix}"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    index = out / "tables.md"
    index.write_text("\n".join(t.to_markdown() for t in tables), encoding="utf-8")
    document = out / "tables.tex"
    body = "\n".join(rf"\input{{{t.name}.tex}}" for t in tables)
    document.write_text(
        "% Standalone preview of every table: pdflatex tables.tex\n"
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape]"
        "{geometry}\n\\begin{document}\n" + body + "\n\\end{document}\n",
        encoding="utf-8",
    )
    written += [index, document]
    compared = [t for t in tables if t.paper_table]
    if compared:
        frames = [t.comparison() for t in compared]
        frames = [f for f in frames if not f.empty]
        csv = out / "paper_vs_ours.csv"
        (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()).to_csv(
            csv, index=False
        )
        md = out / "paper_vs_ours.md"
        md.write_text("\n".join(t.comparison_markdown() for t in compared), encoding="utf-8")
        written += [csv, md]
    return written
