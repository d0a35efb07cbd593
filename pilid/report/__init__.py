"""pilid.report: the paper's tables, significance tests and figures from stored records.

Nothing here trains: everything is read from a results directory (``records.jsonl`` and
``artifacts/``). From the command line::

    python -m pilid.report tables  --results results/runs --out results/tables
    python -m pilid.report figures --results results/runs --out results/figures
"""

from __future__ import annotations

from pilid.report.records import (
    ExperimentGrid,
    Setting,
    experiment_grid,
    grids_for_records,
    load_records,
    select_records,
)
from pilid.report.stats import PairedTTest, paired_by_seed, paired_ttest, significance_marker
from pilid.report.tables import Cell, Table, build_tables, mark_best, write_tables

__all__ = [
    "Cell",
    "ExperimentGrid",
    "PairedTTest",
    "Setting",
    "Table",
    "build_figures",
    "build_tables",
    "experiment_grid",
    "grids_for_records",
    "load_records",
    "make_figures",
    "make_tables",
    "mark_best",
    "paired_by_seed",
    "paired_ttest",
    "select_records",
    "significance_marker",
    "write_tables",
]


def make_tables(results, out, conf_dir=None, fidelity: bool = True):
    """Read the records under ``results``, build every table and write it under ``out``."""
    from pilid.report.records import results_root

    records = load_records(results)
    grids = grids_for_records(records, conf_dir)
    tables = build_tables(records, grids, root=results_root(results), fidelity=fidelity)
    return tables, write_tables(tables, out)


def make_figures(results, out):
    """Read the records and artefacts under ``results`` and draw every figure under ``out``."""
    from pilid.report.records import results_root

    return build_figures(load_records(results), results_root(results), out)


def build_figures(records, root, out_dir, evaluator=None):
    """Figures 3-5 from records and the artefacts under ``root`` (see pilid.report.figures)."""
    from pilid.report.figures import build_figures as _build

    return _build(records, root, out_dir, evaluator=evaluator)
