"""The whole reproduction at a glance: every paper cell we ran, the paper's mean against ours
(one panel per metric, the diagonal where they agree), drawn from `paper_cells`' rows and saved
as ``paper_vs_ours.png``/``.pdf`` by `pilid.report.figures.save` (a `matplotlib.figure.Figure`,
never pyplot)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from pilid.report.figures import save
from pilid.report.records import notice
from pilid.tasks import LOWER_IS_BETTER, METRIC_LABELS, metric_label

PAPER_VS_OURS = "paper_vs_ours"


def figure_paper_vs_ours(
    cells: pd.DataFrame,
    out_dir: str | os.PathLike,
    n_paper_cells: int | None = None,
    table_order: list[str] | None = None,
    table_labels: dict | None = None,
    paper_trials: int = 20,
) -> list[Path]:
    """Every paper cell we ran: the paper's mean (x) against ours (y), one marker per cell,
    coloured by paper table (a fixed colour per table), hollow where ours has fewer than
    ``paper_trials`` trials; the diagonal drawn; MSE and AUC in separate panels.

    ``cells``: `pilid.report.reproduction.paper_cells` rows with ``trials > 0`` (columns
    ``paper_table, metric, paper_mean, ours_mean, reduced``); ``n_paper_cells``: the number of
    cells of the paper's tables (the title says how many of them were run).
    """
    if cells.empty:
        notice("paper_vs_ours: no cell of the paper's tables has records yet; skipped")
        return []
    order = list(table_order or dict.fromkeys(cells["paper_table"]))
    labels = table_labels or {}
    colours = {t: matplotlib.colormaps["tab10"](i % 10) for i, t in enumerate(order)}
    metrics = [m for m in METRIC_LABELS if (cells["metric"] == m).any()]
    metrics += sorted(set(cells["metric"]) - set(metrics))
    fig = Figure(figsize=(5.2 * len(metrics), 5.0))
    axes = fig.subplots(1, len(metrics), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        part = cells[cells["metric"] == metric]
        values = np.concatenate([part["paper_mean"].to_numpy(), part["ours_mean"].to_numpy()])
        lo, hi = float(np.min(values)), float(np.max(values))
        pad = 0.05 * (hi - lo) if hi > lo else 0.01
        lo, hi = lo - pad, hi + pad
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=1.0, ls="--", zorder=1)
        for table in order:
            rows = part[part["paper_table"] == table]
            if rows.empty:
                continue
            reduced = rows["reduced"].to_numpy(dtype=bool)
            colour = colours[table]
            name = f"{labels.get(table, table)} ({len(rows)})"
            full, short = rows[~reduced], rows[reduced]
            if len(full):
                ax.scatter(
                    full["paper_mean"], full["ours_mean"], s=22, color=colour, label=name, zorder=3
                )
            if len(short):
                ax.scatter(
                    short["paper_mean"],
                    short["ours_mean"],
                    s=22,
                    facecolors="none",
                    edgecolors=[colour],
                    label=None if len(full) else name,
                    zorder=3,
                )
        if part["reduced"].any():  # one legend entry explains the hollow markers
            ax.scatter(
                [],
                [],
                s=22,
                facecolors="none",
                edgecolors="0.3",
                label=f"hollow: < {paper_trials} trials",
            )
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        better = "below" if LOWER_IS_BETTER.get(metric, metric == "mse") else "above"
        cells_text = f"{len(part)} cell" + ("" if len(part) == 1 else "s")
        ax.set_title(
            f"{metric_label(metric)}: {cells_text} (ours better {better} the diagonal)", fontsize=9
        )
        ax.set_xlabel("paper", fontsize=9)
        ax.set_ylabel("ours (mean over trials)", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="best", title="paper table (cells)", title_fontsize=7)
    run = len(cells)
    total = f" of {n_paper_cells}" if n_paper_cells else ""
    title = f"The paper's tables against ours: {run}{total} cells run"
    n_reduced = int(cells["reduced"].sum())
    if n_reduced:
        title += f" (reduced run: {n_reduced} with fewer than {paper_trials} trials, hollow)"
    elif n_paper_cells and run < n_paper_cells:
        title += f" (reduced run: the other {n_paper_cells - run} not run yet)"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, PAPER_VS_OURS)
