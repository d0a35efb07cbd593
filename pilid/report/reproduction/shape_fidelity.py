"""Shape fidelity (Figure 3, beyond the paper): how close the learned marginal value functions
are to the true ones, per initialisation, from the shape-fidelity table of Table 2's runs.

The section of REPRODUCTION.md (`shape_fidelity_section`) and claim (b)'s shape lines
(`fidelity_details`) read the same table (`pilid.report.tables.fidelity_table`) and compare
least squares with Gaussian by `pilid.report.reproduction.pairing.init_units`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pilid.report.reproduction.cells import (
    FIG3,
    NOT_RUN,
    PAPER_TRIALS,
    TABLE2_M_VALUES,
    trials_text,
)
from pilid.report.reproduction.pairing import Unit, arm, init_units, table_named
from pilid.report.reproduction.prose import paragraphs, prose
from pilid.report.table_model import Table

#: Our shape-fidelity table (Table 2's layout, `pilid.report.tables.fidelity_table`).
FIDELITY_TABLE = "init_significance_shape_fidelity"
#: The shape-fidelity measures (`pilid.report.shapes.FidelityScores`): records column, name.
FIDELITY_MEASURES = {
    "r2_weighted": "variance-weighted R^2",
    "r2_median": "median per-feature R^2",
    "value": "plain mean of per-feature R^2",
}
#: A true shape whose standard deviation over its feature's range is below this is near-flat:
#: it is about the estimation noise of one piece of a learned shape (see the notes), so that
#: feature's R^2_j is mostly that noise over a tiny variance.
FLAT_STD = 0.01


def scored_trials(fidelity: Table, measure: str) -> tuple[int, int]:
    """(trials with ``measure`` known, trials scored) among the shape-fidelity records."""
    frame = fidelity.records if fidelity.records is not None else pd.DataFrame()
    if measure not in frame:
        return 0, len(frame)
    return int(frame[measure].notna().sum()), len(frame)


def fidelity_details(fidelity: Table, weighted: list[Unit]) -> list[str]:
    """Claim (b)'s shape lines: what the variance-weighted R^2 rests on, the plain mean beside
    it (not part of the rule) on the (N, gamma, m, seed) both arms share, Figure 3's setting."""
    known, scored = scored_trials(fidelity, "r2_weighted")
    plain = init_units(fidelity, "r2")
    lines = []
    if known < scored:
        lost = len(plain) - len(weighted)
        lines.append(
            prose("fidelity-unknown", known=known, scored=scored, lost=lost, units=len(plain))
        )
    if plain:
        pairs = sum(u.pairs or 0 for u in plain)
        significant = [u for u in plain if math.isfinite(u.p) and u.p < 0.05]
        pro = sum(u.holds for u in significant)
        lstsq = np.mean([u.a for u in plain])
        gauss = np.mean([u.b for u in plain])
        lines.append(
            prose(
                "fidelity-plain",
                pairs=pairs,
                holds=sum(u.holds for u in plain),
                units=len(plain),
                pro=pro,
                con=len(significant) - pro,
                lstsq=f"{lstsq:.4f}",
                gauss=f"{gauss:.4f}",
            )
        )
    lines.append(_fig3_fidelity(fidelity))
    return lines


def _fig3_fidelity(fidelity: Table) -> str:
    """The shape-fidelity measures per initialisation at Figure 3's setting (N=15000, m=20,
    gamma=5), each over the trials that have it."""
    parts = []
    for init, name in (("lstsq", "least squares"), ("gaussian", "Gaussian")):
        rows = arm(fidelity, N=FIG3["N"], m=FIG3["m"], gamma=FIG3["gamma"], init=init)
        measures, counts = [], set()
        for column, label in FIDELITY_MEASURES.items():
            values = rows[column].to_numpy(dtype=float) if column in rows else np.array([])
            values = values[np.isfinite(values)]
            if len(values) == 0:
                continue
            std = f" ± {values.std(ddof=1):.4f}" if len(values) > 1 else ""
            short = f", † {len(values)}/{PAPER_TRIALS}" if len(values) < PAPER_TRIALS else ""
            counts.add(len(values))
            measures.append((f"{label} {values.mean():.4f}{std}", f"{len(values)} trials{short}"))
        if not measures:
            parts.append(f"{name}: {NOT_RUN}")
        elif len(counts) == 1:  # one count for all: said once
            parts.append(f"{name}: {', '.join(m for m, _ in measures)} ({measures[0][1]})")
        else:
            parts.append(f"{name}: " + ", ".join(f"{m} ({n})" for m, n in measures))
    setting = f"N={FIG3['N']}, m={FIG3['m']}, gamma={FIG3['gamma']}"
    return f"at Figure 3's setting ({setting}): " + "; ".join(parts)


def flat_features(records: pd.DataFrame, truth=None) -> list[tuple[int, int, float]]:
    """``(m, near-flat features, smallest std)`` per m of the synthetic ``records`` (the truth of
    their first ``data`` config at that m): how many true marginal value functions have a
    standard deviation below ``FLAT_STD`` on an even grid of their feature's range
    (``TrueShapes.grid``). ``truth``: data dict -> ``TrueShapes`` (default
    `pilid.report.shapes.true_shapes_of`); an m whose truth is unknown is left out."""
    from pilid.errors import PilidError
    from pilid.report.shapes import GRID_POINTS, true_shapes_of

    truth = truth or true_shapes_of
    if records is None or records.empty or not {"m", "data"} <= set(records.columns):
        return []
    out = []
    for m, group in records.groupby("m", sort=True):
        data = next((d for d in group["data"] if isinstance(d, dict)), None)
        if data is None:
            continue
        try:
            grid = truth(data).grid(GRID_POINTS)
        except PilidError:
            continue
        spread = grid.groupby("feature", sort=False)["value"].std(ddof=0).to_numpy(dtype=float)
        out.append((int(m), int((spread < FLAT_STD).sum()), float(spread.min())))
    return out


def _pairs_text(unit: Unit | None) -> str:
    """The (seed, m) pairs a unit compared, out of a full unit's ('—' without the unit)."""
    return "—" if unit is None else trials_text(unit.pairs or 0, PAPER_TRIALS * TABLE2_M_VALUES)


def _both(unit: Unit | None) -> str:
    """``least squares / Gaussian`` means of a unit ('—' without the unit)."""
    return "—" if unit is None else f"{unit.a:.4f} / {unit.b:.4f}"


def shape_fidelity_section(tables: list[Table], truth=None) -> list[str]:
    """The shape fidelity per (N, gamma) and initialisation: the variance-weighted R^2 (the
    headline), the median per-feature R^2 beside it and the plain mean as a column, each over the
    (seed, m) both initialisations have; what cannot be recovered; the near-flat true shapes
    (`flat_features`, ``truth`` as there). Empty without the shape-fidelity table."""
    fidelity = table_named(tables, FIDELITY_TABLE)
    if fidelity is None:
        return []
    units = {
        column: {u.name: u for u in init_units(fidelity, "r2", value=column)}
        for column in FIDELITY_MEASURES
    }
    full = PAPER_TRIALS * TABLE2_M_VALUES
    lines = [
        *paragraphs("fidelity-intro", full=full),
        "",
        "| N | γ | Variance-weighted R² | Median per-feature R² | Pairs | Plain mean of R²_j | "
        "Pairs |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, plain in units["value"].items():
        weighted, median = units["r2_weighted"].get(name), units["r2_median"].get(name)
        N, gamma = (part.split("=")[1] for part in name.split())
        lines.append(
            f"| {N} | {gamma} | {_both(weighted)} | {_both(median)} | {_pairs_text(weighted)} | "
            f"{_both(plain)} | {_pairs_text(plain)} |"
        )
    lines.append("")
    known, scored = scored_trials(fidelity, "r2_weighted")
    if known < scored:
        lines += [*paragraphs("fidelity-not-recoverable", known=known, scored=scored), ""]
    flat = flat_features(fidelity.records, truth)
    if flat:
        counts = ", ".join(f"m={m}: {n} of {m}" for m, n, _ in flat)
        flattest = f"{min(s for _, _, s in flat):.4f}"
        lines += [
            *paragraphs(
                "fidelity-flat", flat_std=f"{FLAT_STD:g}", counts=counts, flattest=flattest
            ),
            "",
        ]
    return lines
