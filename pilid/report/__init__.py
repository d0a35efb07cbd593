"""pilid.report: the paper's tables, significance tests and figures from stored records.

Nothing here trains: everything is read from a results directory (``records.jsonl`` and
``artifacts/``). From the command line::

    python -m pilid.report tables       --results results/records --out results/tables
    python -m pilid.report figures      --results results/records --out results/figures
    python -m pilid.report reproduction --results results/records --out REPRODUCTION.md
"""

from __future__ import annotations

import importlib
from pathlib import Path

from pilid.atomic import moved_path, staged_folder
from pilid.errors import PilidError

#: The public names of the report's modules, imported when first used (PEP 562), so that
#: ``python -m pilid.report`` reaches its own signal handling before the heavy imports (a Ctrl-C
#: then is one line, not a traceback from inside an import).
_LAZY = {
    **dict.fromkeys(
        (
            "ExperimentGrid",
            "Setting",
            "experiment_grid",
            "grids_for_records",
            "load_records",
            "notice",
            "select_records",
        ),
        "pilid.report.records",
    ),
    **dict.fromkeys(("PAPER_EXPERIMENTS", "paper_generator"), "pilid.report.reproduction"),
    **dict.fromkeys(
        ("PairedTTest", "paired_by_seed", "paired_ttest", "significance_marker"),
        "pilid.report.stats",
    ),
    **dict.fromkeys(("Cell", "Table", "mark_best", "write_tables"), "pilid.report.table_model"),
    "build_tables": "pilid.report.tables",
}


def __getattr__(name: str):
    """The names of `_LAZY`, imported from their module on first use (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Cell",
    "ExperimentGrid",
    "PairedTTest",
    "Setting",
    "Table",
    "build_figures",
    "build_tables",
    "committed_artifacts",
    "experiment_grid",
    "grids_for_records",
    "load_records",
    "make_figures",
    "make_reproduction",
    "make_tables",
    "mark_best",
    "paired_by_seed",
    "paired_ttest",
    "select_records",
    "significance_marker",
    "write_tables",
]


#: The matched paper cells (the paper-vs-ours figure's data), beside the tables.
CELLS_CSV = "paper_vs_ours_cells.csv"


def make_tables(
    results,
    out,
    conf_dir=None,
    fidelity: bool = True,
    records=None,
    update_fidelity_cache: bool = False,
):
    """Read the records under ``results``, build every table and write it under ``out``, with
    ``paper_vs_ours_cells.csv`` (every paper cell we ran, ours beside the paper's) when the
    records hold a paper experiment. The files are written into a hidden folder beside ``out``
    and moved in together (`pilid.atomic.staged_folder`): an interrupt leaves ``out`` with the
    old build's files or all of the new one's, never a mix.

    Parameters
    ----------
    results : path
        A results directory or ``records.jsonl``.
    out : path
        The tables' directory (created if missing).
    conf_dir : path or None, default=None
        The Hydra configs whose experiment grids lay the tables out (default: ``conf/``).
    fidelity : bool, default=True
        Build the shape-fidelity table where shapes are stored.
    records : pandas.DataFrame or None, default=None
        The already loaded records of ``results`` (default: read them).
    update_fidelity_cache : bool, default=False
        Merge the shape fidelity computed from the artefacts into
        ``<results>/shape_fidelity.csv`` (see `pilid.report.shapes`).

    Returns
    -------
    tables : list of Table
        The tables built.
    written : list of Path
        The files written (LaTeX and Markdown per table, the cells CSV).

    Raises
    ------
    PilidError
        No table can be built from the records (nothing is written).
    """
    from pilid.experiments.store import records_path
    from pilid.report.records import grids_for_records, load_records, notice, results_root
    from pilid.report.reproduction import experiment_of, paper_cells, write_cells_csv
    from pilid.report.table_model import write_tables
    from pilid.report.tables import build_tables

    if records is None:
        records = load_records(results)
    grids = grids_for_records(records, conf_dir)
    root = results_root(results)
    tables = build_tables(records, grids, root=root, fidelity=fidelity)
    if not tables:
        names = sorted(records["experiment"].dropna().astype(str).unique().tolist())
        found = f"experiment(s) {', '.join(names)}" if names else "no experiment name"
        raise PilidError(
            f"no table can be built from {records_path(results)}: its records are from {found}; "
            "run a table experiment (python -m pilid.run -m experiment=sim_regression, "
            "init_significance or real_data), or use `figures` for skill_shapes"
        )
    # all files into a hidden folder first, moved in together: an interrupt leaves `out` whole
    with staged_folder(out) as staging:
        written = write_tables(tables, staging)
        if any(experiment_of(t.name) for t in tables):
            written.append(write_cells_csv(paper_cells(tables), staging / CELLS_CSV))
    written = [moved_path(path, staging, out) for path in written]
    if update_fidelity_cache:
        from pilid.report.shapes import write_fidelity_cache

        for table in tables:
            if table.name.endswith("_shape_fidelity") and table.records is not None:
                try:
                    write_fidelity_cache(root, table.records)
                except OSError as error:
                    notice(f"could not update the shape-fidelity cache in {root}: {error}")
    note_stale(out, written)
    return tables, written


#: Files of ``results/tables`` written by other scripts (not by ``make tables``), never stale.
EXTERNAL_TABLE_FILES = ("generators_linear.csv",)


def note_stale(out, written) -> None:
    """One notice naming the files in ``out`` that this build did not write (left over from
    an older build; committed, they would not match a rebuild). ``EXTERNAL_TABLE_FILES`` are
    not named."""
    from pilid.report.records import notice

    folder = Path(out)
    if not folder.is_dir():
        return
    names = {Path(p).name for p in written} | set(EXTERNAL_TABLE_FILES)
    stale = sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.name not in names
    )
    if stale:
        notice(f"{folder} holds files this build did not write (stale? delete them): {stale}")


def make_figures(results, out, records=None, conf_dir=None, paper_vs_ours: bool = True):
    """Read the records and artefacts under ``results`` and draw every figure under ``out``:
    Figures 3-5, the peers' shapes (Table 3+) and, when the records hold a paper experiment, the
    paper-vs-ours figure. Like `make_tables`, the files are moved into ``out`` together once all
    are drawn (`pilid.atomic.staged_folder`).

    Parameters
    ----------
    results : path
        A results directory (its ``artifacts/`` hold the shapes) or ``records.jsonl``.
    out : path
        The figures' directory (PNG and PDF of each).
    records : pandas.DataFrame or None, default=None
        The already loaded records of ``results`` (default: read them).
    conf_dir : path or None, default=None
        The Hydra configs (default: ``conf/``).
    paper_vs_ours : bool, default=True
        Also draw the paper-vs-ours figure.

    Returns
    -------
    list of Path
        The files written; a figure without data is skipped with a notice.
    """
    from pilid.report.records import load_records, notice, results_root
    from pilid.report.reproduction import (
        PAPER_EXPERIMENTS,
        draw_paper_vs_ours,
        paper_cells,
        paper_generator,
        paper_tables,
    )

    if records is None:
        records = load_records(results)
    generator = paper_generator(conf_dir)
    with staged_folder(out) as staging:  # moved in together once all are drawn (`make_tables`)
        written = build_figures(
            records, results_root(results), staging, generator=generator, conf_dir=conf_dir
        )
        if paper_vs_ours:
            tables = paper_tables(records, conf_dir=conf_dir, fidelity=False)
            if tables:
                written += draw_paper_vs_ours(paper_cells(tables), staging)
            else:
                notice(
                    "paper_vs_ours: no records of a paper experiment ("
                    + ", ".join(PAPER_EXPERIMENTS)
                    + "); skipped"
                )
    written = [moved_path(path, staging, out) for path in written]
    note_stale(out, written)
    return written


def committed_artifacts(results, records=None, conf_dir=None) -> list[Path]:
    """The files under ``results`` besides ``records.jsonl`` that a fresh clone needs to rebuild
    the committed tables and figures: the artefacts the figures read
    (`pilid.report.figures.figure_artifacts`) and the shape-fidelity cache
    (``shape_fidelity.csv``) where it exists. The other artefacts are git-ignored."""
    from pilid.report.figures import figure_artifacts
    from pilid.report.records import load_records, results_root
    from pilid.report.reproduction import paper_generator
    from pilid.report.shapes import FIDELITY_CACHE

    if records is None:
        records = load_records(results)
    root = results_root(results)
    paths = figure_artifacts(records, root, generator=paper_generator(conf_dir), conf_dir=conf_dir)
    cache = Path(root) / FIDELITY_CACHE
    return ([cache] if cache.is_file() else []) + paths


def make_reproduction(
    results,
    out,
    figures_dir="results/figures",
    conf_dir=None,
    records=None,
    tables_dir="results/tables",
):
    """REPRODUCTION.md and the paper-vs-ours figure (see `pilid.report.reproduction`).

    Parameters
    ----------
    results : path
        A results directory or ``records.jsonl``.
    out : path
        The Markdown file to write.
    figures_dir : path or None, default="results/figures"
        Where the paper-vs-ours figure goes (None: not drawn).
    conf_dir : path or None, default=None
        The Hydra configs (default: ``conf/``).
    records : pandas.DataFrame or None, default=None
        The already loaded records of ``results`` (default: read them).
    tables_dir : path, default="results/tables"
        The tables directory the file points to (and reads ``generators_linear.csv`` from).

    Returns
    -------
    list of Path
        ``out`` and the figure files.
    """
    from pilid.report.reproduction import make_reproduction as _make

    return _make(
        results,
        out,
        figures_dir=figures_dir,
        conf_dir=conf_dir,
        records=records,
        tables_dir=tables_dir,
    )


def build_figures(records, root, out_dir, evaluator=None, generator=None, conf_dir=None):
    """Figures 3-5 and the peers' shapes from records and the artefacts under ``root`` (see
    pilid.report.figures)."""
    from pilid.report.figures import build_figures as _build

    return _build(
        records, root, out_dir, evaluator=evaluator, generator=generator, conf_dir=conf_dir
    )
