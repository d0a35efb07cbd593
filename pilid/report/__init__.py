"""pilid.report: the paper's tables, significance tests and figures from stored records.

Nothing here trains: everything is read from a results directory (``records.jsonl`` and
``artifacts/``). From the command line::

    python -m pilid.report tables  --results results/runs --out results/tables
    python -m pilid.report figures --results results/runs --out results/figures
"""

from __future__ import annotations

from pilid.errors import PilidError
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


def make_tables(results, out, conf_dir=None, fidelity: bool = True, records=None):
    """Read the records under ``results``, build every table and write it under ``out``.

    ``records``: the already loaded records of ``results`` (default: read them). Raises
    ``PilidError``, writing nothing, when no table can be built from them.
    """
    from pilid.report.records import records_file, results_root

    if records is None:
        records = load_records(results)
    grids = grids_for_records(records, conf_dir)
    tables = build_tables(records, grids, root=results_root(results), fidelity=fidelity)
    if not tables:
        names = sorted(records["experiment"].dropna().astype(str).unique().tolist())
        found = f"experiment(s) {', '.join(names)}" if names else "no experiment name"
        raise PilidError(
            f"no table can be built from {records_file(results)}: its records are from {found}; "
            "run a table experiment (python -m pilid.run -m experiment=sim_regression, "
            "init_significance or real_data), or use `figures` for skill_shapes"
        )
    return tables, write_tables(tables, out)


def make_figures(results, out, records=None):
    """Read the records and artefacts under ``results`` and draw every figure under ``out``."""
    from pilid.report.records import results_root

    if records is None:
        records = load_records(results)
    return build_figures(records, results_root(results), out)


def build_figures(records, root, out_dir, evaluator=None):
    """Figures 3-5 from records and the artefacts under ``root`` (see pilid.report.figures)."""
    from pilid.report.figures import build_figures as _build

    return _build(records, root, out_dir, evaluator=evaluator)
