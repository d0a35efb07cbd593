"""The paper's four claims (a)-(d) and their verdicts, computed from our tables.

Each `Claim` has `Part`s; a part compares `Unit`s (`pilid.report.reproduction.pairing`) by a
rule (its text: the ``rule-*`` blocks of ``reproduction_text.md``) and grades them on the
``SCALE``; the same rule applied to the paper's own numbers is counted beside. Claim (b)'s shape
part reads the shape-fidelity table (`pilid.report.reproduction.shape_fidelity`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import redirect_stderr
from dataclasses import dataclass, field
from io import StringIO

import numpy as np
import pandas as pd
from scipy import stats

from pilid.report.paper import paper_results
from pilid.report.records import ExperimentGrid, Setting, select_records
from pilid.report.reproduction.cells import (
    GAM_FAMILY,
    GAMMAS,
    M_VALUES,
    MODEL_NAMES,
    NOT_ENOUGH,
    NOT_RUN,
    PAPER_TRIALS,
    REAL_METRIC,
    TABLE2_M_VALUES,
)
from pilid.report.reproduction.pairing import (
    Unit,
    arm,
    better,
    init_units,
    lower_better,
    paired_p,
    shared_unit,
    short_cell,
    table_named,
)
from pilid.report.reproduction.prose import prose
from pilid.report.reproduction.shape_fidelity import FIDELITY_TABLE, fidelity_details
from pilid.report.table_model import Table

#: The verdict scale, from weakest to strongest (used to combine the parts of a claim).
SCALE = ("not supported", "mostly supported", "supported")
#: How the verdicts are reached (the text above the claims).
CLAIM_RULES = prose("claim-rules", not_enough=NOT_ENOUGH, paper_trials=PAPER_TRIALS)


def _shortfall(units: list[Unit]) -> str:
    """How many ``units`` are reduced, and why (fewer trials, seeds, values of m)."""
    short = [u for u in units if u.reduced]
    if not any(u.seeds is not None for u in short):
        return f"{len(short)} with fewer than {PAPER_TRIALS} trials"
    if not any(u.m_values is not None for u in short):
        return f"{len(short)} on fewer than {PAPER_TRIALS} seeds that both arms have"
    few_seeds = sum(1 for u in short if (u.seeds or 0) < PAPER_TRIALS)
    few_m = sum(
        1 for u in short if (u.seeds or 0) >= PAPER_TRIALS and (u.m_values or 0) < TABLE2_M_VALUES
    )
    other = len(short) - few_seeds - few_m
    why = [
        f"{few_m} with {PAPER_TRIALS} seeds over fewer values of m" if few_m else "",
        f"{few_seeds} with fewer than {PAPER_TRIALS} seeds" if few_seeds else "",
        f"{other} with some (seed, m) missing" if other else "",
    ]
    full = PAPER_TRIALS * TABLE2_M_VALUES
    return (
        f"{len(short)} on fewer than the {full} (seed, m) pairs that both arms of a full unit "
        f"have ({', '.join(w for w in why if w)})"
    )


@dataclass
class Part:
    """One part of a claim: its rule, the units compared, and the paper's count by that rule.

    Attributes
    ----------
    title : str
        What the part compares.
    rule : str
        When a unit counts as holding.
    units : list of Unit
        The units compared (those with records).
    n_paper_units : int
        The units of the paper's tables.
    paper_holds : int or None
        In how many of them the paper's own numbers hold by the rule (None: no count).
    details : list of str
        Lines printed below the part.
    """

    title: str
    rule: str
    units: list[Unit]
    n_paper_units: int
    paper_holds: int | None = None
    details: list[str] = field(default_factory=list)

    @property
    def holds(self) -> int:
        """The units in which the claim holds."""
        return sum(u.holds for u in self.units)

    @property
    def reduced(self) -> bool:
        """Fewer units than the paper's, or a unit on fewer trials than the paper's."""
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
        """``supported: holds in 5 of 5 (...)``, or ``NOT_ENOUGH`` without units."""
        if self.grade is None:
            return NOT_ENOUGH
        text = f"{self.grade}: holds in {self.holds} of {len(self.units)}"
        significant = [u for u in self.units if math.isfinite(u.p) and u.p < 0.05]
        if any(math.isfinite(u.p) for u in self.units):
            pro = sum(u.holds for u in significant)
            text += f" (significant at 5%: {pro} for, {len(significant) - pro} against)"
        if self.reduced:
            text += (
                f"; reduced run: {len(self.units)} of {self.n_paper_units} units compared, "
                f"{_shortfall(self.units)}"
            )
        return text

    def paper_text(self) -> str:
        """The paper's own count by the rule ('' without one)."""
        if self.paper_holds is None:
            return ""
        counts = f"{self.paper_holds} of {self.n_paper_units}"
        return f"The paper's own numbers by this rule: holds in {counts}."


@dataclass
class Claim:
    """One claim of the paper and its parts.

    Attributes
    ----------
    key : str
        ``a`` to ``d``.
    statement : str
        The claim in one sentence.
    parts : list of Part
        Its parts, each with a verdict.
    details : list of str
        Lines printed below the claim.
    """

    key: str
    statement: str
    parts: list[Part]
    details: list[str] = field(default_factory=list)

    def verdict(self) -> str:
        """The weakest verdict of the parts that have records, with what is missing."""
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


def _row_index(table: Table, model: str, gamma=None) -> int | None:
    """The row of ``model`` (at ``gamma`` when given) in ``table`` (None: no such row)."""
    for index, (row_model, row_gamma) in enumerate(table.row_keys):
        if row_model == model and (gamma is None or row_gamma == gamma):
            return index
    return None


def _paper_value(paper, table, model, column, N=None) -> float:
    """The paper's mean of one cell (NaN: not in the paper)."""
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
    """Our simulation table of ``task`` at ``N`` (``sim_regression_N5000``)."""
    experiment = "sim_regression" if task == "regression" else "sim_classification"
    return f"{experiment}_N{N}"


def claim_a(tables: list[Table], paper: pd.DataFrame) -> Claim:
    """(a) PiLiD beats the MLP on real data (Table 3) and on most simulation settings with
    N >= 10,000 (Table 1 and the supplementary tables)."""
    real = Part(
        "real data (Table 3): PiLiD (gamma=5) against the MLP",
        prose("rule-a-real"),
        [],
        n_paper_units=len(REAL_METRIC),
    )
    real.paper_holds = sum(
        better(
            _paper_value(paper, "tab-predictive", "PiLiD", d),
            _paper_value(paper, "tab-predictive", "MLP", d),
            metric,
        )
        for d, metric in REAL_METRIC.items()
    )
    table = table_named(tables, "real_data")
    if table is not None:
        ia, ib = _row_index(table, "pilid", 5), _row_index(table, "mlp")
        for j, dataset in enumerate(table.column_keys):
            if ia is None or ib is None:
                break
            a, b = table.cells[ia][j], table.cells[ib][j]
            if a.missing or b.missing:
                continue
            unit = shared_unit(
                dataset,
                arm(table, model="pilid", gamma=5, dataset=dataset),
                arm(table, model="mlp", dataset=dataset),
                REAL_METRIC.get(dataset, "auc"),
                cells=(a, b),
            )
            if unit is not None:
                real.units.append(unit)
        real.details = [
            f"{u.name}: PiLiD {u.a:.4f} vs MLP {u.b:.4f} ({'PiLiD' if u.holds else 'MLP'} "
            f"better{_p_text(u.p)})"
            for u in real.units
        ]
    sim = Part(
        "simulation, N >= 10,000 (Table 1, supplementary tables): each PiLiD-gamma against the MLP",
        prose("rule-a-sim"),
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
                paper_holds += better(pilid, mlp, metric)
        table = table_named(tables, _sim_table_name(task, N))
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
                unit = shared_unit(
                    f"{task} N={N} m={m} gamma={gamma}",
                    arm(table, model="pilid", gamma=gamma, m=m),
                    arm(table, model="mlp", m=m),
                    metric,
                    cells=(a, b),
                )
                if unit is not None:
                    sim.units.append(unit)
    sim.paper_holds = paper_holds
    sim.details = _group_counts(sim.units, lambda u: " ".join(u.name.split()[:2]))
    return Claim(
        "a",
        "PiLiD beats the MLP on real data and on most simulation settings with N >= 10,000.",
        [real, sim],
    )


def _p_text(p: float) -> str:
    """``, paired p = 0.012`` ('' without a test)."""
    return f", paired p = {p:.3g}" if math.isfinite(p) else ""


def _group_counts(units: list[Unit], key: Callable[[Unit], str]) -> list[str]:
    """``<group>: holds in k of n`` per group of ``units`` (by ``key``), in first-seen order."""
    groups: dict[str, list[Unit]] = {}
    for unit in units:
        groups.setdefault(key(unit), []).append(unit)
    return [
        f"{name}: holds in {sum(u.holds for u in us)} of {len(us)}" for name, us in groups.items()
    ]


def claim_b(tables: list[Table], paper: pd.DataFrame) -> Claim:
    """(b) The least-squares initialisation beats a Gaussian one (Table 2) and gives more
    faithful shapes (Figure 3; the variance-weighted shape-fidelity R^2 per initialisation)."""
    accuracy = Part(
        "accuracy (Table 2): least-squares against Gaussian initialisation",
        prose("rule-b-accuracy"),
        [],
        n_paper_units=0,
    )
    initial = paper[paper["table"] == "tab-initial"]
    for _, rows in initial.groupby(["N", "column"], sort=False):
        values = dict(zip(rows["model"], rows["mean"]))
        accuracy.n_paper_units += 1
        accuracy.paper_holds = (accuracy.paper_holds or 0) + better(
            values["pilid-lstsq"], values["pilid-gaussian"], "mse"
        )
    table = table_named(tables, "init_significance")
    if table is not None:
        accuracy.units = init_units(table, "mse")
        accuracy.details = _group_counts(accuracy.units, lambda u: u.name.split()[0])
    shapes = Part(
        "shapes (Figure 3): variance-weighted shape-fidelity R^2 of least-squares against "
        "Gaussian initialisation",
        prose("rule-b-shapes"),
        [],
        n_paper_units=accuracy.n_paper_units,
    )
    fidelity = table_named(tables, FIDELITY_TABLE)
    if fidelity is not None:
        shapes.units = init_units(fidelity, "r2", value="r2_weighted")
        shapes.details = fidelity_details(fidelity, shapes.units)
    return Claim(
        "b",
        "Least-squares initialisation beats Gaussian initialisation (Table 2) and gives more "
        "faithful shapes (Figure 3).",
        [accuracy, shapes],
    )


def claim_c(tables: list[Table], paper: pd.DataFrame) -> Claim:
    """(c) PiLiD and PiLiB beat the GAM family (GA, GAM, GA2M) on real data (Table 3)."""
    part = Part(
        "real data (Table 3): PiLiD and PiLiB against the best of GA, GAM and GA2M",
        prose("rule-c"),
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
            best = min(family) if lower_better(metric) else max(family)
            part.paper_holds += better(value, best, metric)
    table = table_named(tables, "real_data")
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
                pick = min if lower_better(metric) else max
                best_name, best = pick(family, key=lambda f: f[1].mean)
                gamma = table.row_keys[i][1]
                p = paired_p(
                    arm(table, model=model, gamma=gamma, dataset=dataset),
                    arm(table, model=best_name, dataset=dataset),
                )
                absent = [MODEL_NAMES[f] for f in GAM_FAMILY if f not in {n for n, _ in family}]
                note = f"; {', '.join(absent)} {NOT_RUN}" if absent else ""
                unit = Unit(
                    f"{MODEL_NAMES[model]} on {dataset}",
                    cell.mean,
                    best.mean,
                    better(cell.mean, best.mean, metric),
                    p,
                    short_cell(cell) or any(short_cell(c) for _, c in family),
                    note,
                )
                part.units.append(unit)
                part.details.append(
                    f"{unit.name}: {cell.mean:.4f} vs {MODEL_NAMES[best_name]} {best.mean:.4f} "
                    f"({'holds' if unit.holds else 'does not hold'}{_p_text(p)}{note})"
                )
    return Claim("c", "PiLiD and PiLiB beat the GAM family (GA, GAM, GA2M) on real data.", [part])


def _spearman(gammas, accuracy) -> float:
    """Spearman's rank correlation (NaN: fewer than 3 points, or a constant accuracy)."""
    if len(gammas) < 3 or np.ptp(accuracy) == 0:
        return math.nan
    return float(stats.spearmanr(gammas, accuracy).statistic)


def claim_d(tables: list[Table], paper: pd.DataFrame, records: pd.DataFrame | None = None) -> Claim:
    """(d) A larger gamma (more pieces per feature) improves accuracy (the simulation tables)."""
    part = Part(
        "simulation tables: PiLiD's accuracy against gamma = 1, 5, 10, 15, 20",
        prose("rule-d"),
        [],
        n_paper_units=0,
        paper_holds=0,
    )
    last_vs_first = []
    for paper_table, task, N, metric in _sim_paper_tables(paper):
        sign = -1.0 if lower_better(metric) else 1.0
        for m in M_VALUES:
            values = [_paper_value(paper, paper_table, f"PiLiD-{g}", f"m={m}") for g in GAMMAS]
            part.n_paper_units += 1
            part.paper_holds += _spearman(GAMMAS, sign * np.array(values)) > 0
        table = table_named(tables, _sim_table_name(task, N))
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
                reduced=any(short_cell(c) for _, c in run) or len(run) < len(GAMMAS),
            )
            part.units.append(unit)
            (g0, c0), (g1, c1) = run[0], run[-1]
            p = paired_p(
                arm(table, model="pilid", gamma=g1, m=m), arm(table, model="pilid", gamma=g0, m=m)
            )
            last_vs_first.append((better(c1.mean, c0.mean, metric), p))
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
