"""The Markdown sections of REPRODUCTION.md: the overview, the claims, each paper table with
ours beside it, the GAM family, the synthetic generator, the compute, what is left to run and
the commands. Each ``*_section`` returns the section's lines; the prose comes from
``reproduction_text.md`` (`pilid.report.reproduction.prose`), the numbers from the paper cells
(`pilid.report.reproduction.cells.paper_cells`), the claims and the records.
"""

from __future__ import annotations

import math
import os
from contextlib import redirect_stderr
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.report.paper import PAPER_TABLES
from pilid.report.records import ExperimentGrid, Setting, select_records
from pilid.report.remaining import left_text, remaining_work, total_left
from pilid.report.reproduction.cells import (
    NOT_RUN,
    PAPER_TABLE_EXPERIMENT,
    PAPER_TABLE_ORDER,
    PAPER_TRIALS,
    TABLE2_M_VALUES,
    experiment_of,
    trials_text,
)
from pilid.report.reproduction.claims import CLAIM_RULES, Claim
from pilid.report.reproduction.compute import (
    BRIDGE_SECONDS,
    compute_summary,
    duration,
    time_text,
)
from pilid.report.reproduction.pairing import lower_better
from pilid.report.reproduction.prose import paragraphs, prose
from pilid.report.table_model import Table
from pilid.tasks import metric_label

#: The paper's linear baselines: the same model on both sides, so their gap is the data's.
LINEAR_ROWS = ("Linear Regression", "Logistic Regression")
#: Written by the demo-generator script beside the tables (not by ``make tables``).
GENERATORS_CSV = "generators_linear.csv"
#: The synthetic generators: records without ``data.generator`` used the default (legendre).
GENERATOR_NAMES = {None: "legendre", "demo": "demo"}
#: What each command of the commands section reproduces, and its experiment.
COMMANDS = (
    ("Table 1 and the supplementary MSE tables", "sim_regression"),
    ("the supplementary AUC tables (and N=20000)", "sim_classification"),
    ("Table 2, Figure 3 and the shape-fidelity table", "init_significance"),
    ("Table 3 (the UCI files via PILID_DATA_DIR; downloaded on first use)", "real_data"),
    ("Figure 4", "skill_shapes"),
    ("Figure 5", "spambase_interactions"),
)


def _number(value: float, std: float = math.nan) -> str:
    """Ours: ``0.1234 ± 0.0056`` (4 decimals; no std when NaN)."""
    text = f"{value:.4f}"
    return text + (f" ± {std:.4f}" if math.isfinite(std) else "")


def _paper_number(value: float, std: float) -> str:
    """The paper's value as printed: ``0.978 ± 0.0021``."""
    text = f"{value:g}"
    return text + (f" ± {std:g}" if math.isfinite(std) else "")


def _cell_labels(row) -> tuple[str, str]:
    """The row and column labels of a paper cell (Table 2: ``N=5000, least squares``, ``γ=5``)."""
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
        f" Left to run for lack of compute so far: {left_text(row, duration)} (see *What is "
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
        records = PAPER_TRIALS * TABLE2_M_VALUES
        note = prose(
            "table2-note", paper_trials=PAPER_TRIALS, m_values=TABLE2_M_VALUES, records=records
        )
        lines += [note, ""]
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
            f"{trials_text(row.trials, row.expected)} | {paper}{mark} | {row.difference:+.4f} |"
        )
    lines.append("")
    return lines


def _metrics_text(part: pd.DataFrame) -> str:
    """``MSE``, ``AUC`` or ``MSE, AUC`` (Table 3) for the cells of one paper table."""
    return ", ".join(metric_label(m) for m in dict.fromkeys(part["metric"]))


def _linear_gaps(cells: pd.DataFrame, paper_table: str | None = None) -> pd.DataFrame:
    """The run linear-baseline cells (of one paper table, or all) with ``gap`` = abs(ours -
    paper)."""
    mask = cells["row"].isin(LINEAR_ROWS) & (cells["trials"] > 0)
    if paper_table is not None:
        mask &= cells["paper_table"] == paper_table
    run = cells[mask.to_numpy(dtype=bool)]
    return run.assign(gap=run["difference"].abs())


def _largest_linear_gaps(cells: pd.DataFrame) -> str:
    """``0.4400 MSE and 0.2900 AUC``: the largest linear-baseline gap per metric ('' if none)."""
    gaps = _linear_gaps(cells)
    metrics = sorted(set(gaps["metric"]), key=lambda metric: (metric != "mse", metric))
    return " and ".join(
        f"{gaps.loc[gaps['metric'] == metric, 'gap'].max():.4f} {metric_label(metric)}"
        for metric in metrics
    )


def data_sentence(cells: pd.DataFrame) -> str:
    """Simulation cells compare data as well as models: the linear baselines' gap says how much."""
    largest = _largest_linear_gaps(cells)
    linear = (
        f": the linear baselines, the same model on both sides, are off from the paper's by up "
        f"to {largest}"
        if largest
        else ""
    )
    return prose("data-sentence", linear=linear)


def overview_section(cells: pd.DataFrame, left: pd.DataFrame | None = None) -> list[str]:
    """One line per paper table: cells run, reduced cells, ours against the paper's, the linear
    baseline's gap beside it (a simulation table's data against the paper's) and, with ``left``
    (`remaining_work`), the trials left and their estimated fit time."""
    lines = [
        "| Paper table | Metric | Cells run / in the paper | Reduced cells | Ours better / worse "
        "than the paper | Median abs(ours − paper) | Linear baseline: median abs(ours − paper) "
        "(max) |" + (" Left to run (fit time, est.) |" if left is not None else ""),
        "|:---|:---|---:|---:|---:|---:|---:|" + ("---:|" if left is not None else ""),
    ]
    for paper_table in PAPER_TABLE_ORDER:
        part = cells[cells["paper_table"] == paper_table]
        run = part[part["trials"] > 0]
        if run.empty:
            better = median = "—"
        else:
            lower = run["metric"].map(lower_better).to_numpy(dtype=bool)
            diff = run["difference"].to_numpy(dtype=float)
            wins = int(np.sum(np.where(lower, diff < 0, diff > 0)))
            better = f"{wins} / {len(run) - wins}"
            median = f"{run['difference'].abs().median():.4f}"
        gaps = _linear_gaps(cells, paper_table)
        linear = f"{gaps['gap'].median():.4f} ({gaps['gap'].max():.4f})" if len(gaps) else "—"
        line = (
            f"| {PAPER_TABLES[paper_table]} | {_metrics_text(part)} | {len(run)} / {len(part)} | "
            f"{int(run['reduced'].sum())} | {better} | {median} | {linear} |"
        )
        if left is not None:
            row = _left_for(left, paper_table)
            line += " nothing |" if row is None else f" {_left_cost(row)} |"
        lines.append(line)
    lines += ["", *paragraphs("overview-linear", data_sentence=data_sentence(cells))]
    if left is not None:
        lines += ["", *paragraphs("overview-left")]
    return lines + [""]


def _left_cost(row) -> str:
    """``120 trials, ~1.4 h`` (or ``no estimate`` when no setting has one)."""
    cost = f"~{duration(row.seconds)}" if row.settings > row.unestimated else "no estimate"
    if 0 < row.unestimated < row.settings:
        cost += f" + {int(row.unestimated)} without an estimate"
    return f"{int(row.trials)} trials, {cost}"


def claims_section(found: list[Claim], since_reduced: dict[str, str] | None = None) -> list[str]:
    """The rules of the verdicts, then per claim its verdict, what changed since the reduced run
    (``since_reduced``: `pilid.report.reproduction.reduced_run.changes_since_reduced_run`; None:
    nothing said, the records are the reduced run) and each part's verdict, rule, the paper's
    count and details."""
    from pilid.report.reproduction.reduced_run import REDUCED_RUN_TRIALS

    lines = [CLAIM_RULES, ""]
    for claim in found:
        lines += [
            f"### ({claim.key}) {claim.statement}",
            "",
            f"**Verdict: {claim.verdict()}.**",
            "",
        ]
        if since_reduced and claim.key in since_reduced:
            lines += [
                f"Since the reduced run (the simulation cells first run at {REDUCED_RUN_TRIALS} "
                f"trials, read back at their first {REDUCED_RUN_TRIALS}): "
                f"{since_reduced[claim.key]}",
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
        *paragraphs("gam-intro"),
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
            lower = run["metric"].map(lower_better).to_numpy(dtype=bool)
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
    lower = family["metric"].map(lower_better).to_numpy(dtype=bool)
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
        lines += paragraphs("gam-why")
    return lines + [""]


def _generator_name(generator: str | None) -> str:
    """``legendre`` for the default generator (None), else its name."""
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
    lines = [*paragraphs("generator-intro", generator=_generator_name(sim_generator)), ""]
    by_generator = {g: _linear_by_generator(linear, records, g) for g in GENERATOR_NAMES}
    if any(len(v) for values in by_generator.values() for v in values):
        lines += [
            *paragraphs("generator-linear"),
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
                    trials = trials_text(len(values), PAPER_TRIALS)
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
        lines += [*paragraphs("generator-none", not_run=NOT_RUN), ""]
    path = Path(tables_dir) / GENERATORS_CSV if tables_dir is not None else None
    if path is not None and path.is_file():
        frame = pd.read_csv(path)
        lines += [
            *paragraphs("generator-csv", path=path.as_posix()),
            "",
            *_csv_markdown(frame),
            "",
        ]
    return lines


def compute_section(tables: list[Table], records: pd.DataFrame) -> list[str]:
    """Per paper table, the compute its records used (`compute_summary`), then all records'."""
    lines = [
        *paragraphs("compute-intro", bridge_minutes=f"{BRIDGE_SECONDS / 60:.0f}"),
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
            duration((summary["last"] - summary["first"]).total_seconds())
            if summary["first"] is not None
            else "--"
        )
        lines.append(
            f"| {name} | {summary['trials']} | {duration(summary['fit_seconds'])} | "
            f"{duration(summary['active_seconds'])} | "
            f"{time_text(summary['first'])} → {time_text(summary['last'])} ({span}) | "
            f"{', '.join(summary['devices']) or '?'} | {'; '.join(summary['layouts'])} | "
            f"{', '.join(summary['torch']) or '?'} |"
        )
    total = compute_summary(records)
    lines += [
        "",
        *paragraphs(
            "compute-total",
            trials=total["trials"],
            fit=duration(total.get("fit_seconds", math.nan)),
            active=duration(total.get("active_seconds", math.nan)),
            first=time_text(total.get("first")),
            last=time_text(total.get("last")),
        ),
        "",
    ]
    return lines


def left_section(settings: pd.DataFrame, records: pd.DataFrame) -> list[str]:
    """What is left to run (`remaining_settings`), per paper table and in all, and why."""
    left = remaining_work(settings)
    if left.empty:
        return [f"Nothing: every cell of the paper's tables has {PAPER_TRIALS} trials.", ""]
    trials, seconds, unestimated = total_left(settings)
    devices = sorted(set(records["device"].dropna().astype(str))) if "device" in records else []
    lines = [
        *paragraphs("left-intro", devices=", ".join(devices) or "none", paper_trials=PAPER_TRIALS),
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
        estimate = duration(row.seconds) if row.settings > row.unestimated else "—"
        lines.append(
            f"| {PAPER_TABLES[paper_table]} | {int(row.settings)} | {int(row.trials)} | "
            f"{estimate} | {int(row.unestimated)} |"
        )
    without = f", plus {unestimated} setting(s) without an estimate" if unestimated else ""
    lines += [
        "",
        *paragraphs("left-total", trials=trials, seconds=duration(seconds), unestimated=without),
        "",
    ]
    return lines


def commands_section() -> list[str]:
    """The commands that run each experiment (CPU, GPU, Slurm) and rebuild the outputs."""
    lines = [
        *paragraphs("commands-intro"),
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
