"""REPRODUCTION.md: every table of the paper with ours beside it, a verdict per claim, the compute
used and the commands, all computed from the stored records (nothing here trains).

``python -m pilid.report reproduction --results results/records --out REPRODUCTION.md`` builds the
paper's tables from the records exactly as ``python -m pilid.report tables`` does (the same
functions, so the numbers are the tables' numbers), matches every cell of the paper
(`pilid.report.paper`, the paper's ``paper_results.csv``) with ours, and writes the document.
It reads in one pass, one module per step:

- `cells`: our tables of the paper experiments (`paper_tables`) and every cell of the paper with
  ours beside it (`paper_cells`: also ``results/tables/paper_vs_ours_cells.csv`` and the
  paper-vs-ours figure); the paper's constants (``PAPER_TRIALS``, its tables and grids);
- `pairing`: two cells' records compared on the trial seeds (and values of m) both have;
- `claims`: the four claims (a)-(d), each unit graded by the rule its part states;
- `shape_fidelity`: the shape fidelity per (N, gamma) and initialisation (beyond the paper), and
  claim (b)'s shape lines;
- `reduced_run`: the reduced run (the simulation cells first run at 5 trials) read back from the
  records, and what changed in each claim since;
- `compute`: the compute the records used (fit time, active wall time, devices, layouts);
- `sections`: the Markdown of each section, with the prose of ``reproduction_text.md``
  (`prose`, a template beside the hand-written ``reproduction_notes.md``);
- `document`: the sections in the committed order (`build_reproduction`) and the file and
  figure (`make_reproduction`).

The names below are this package's public ones, importable from here.
"""

from __future__ import annotations

from pilid.report.remaining import PAPER_EXPERIMENTS
from pilid.report.reproduction.cells import (
    CELL_COLUMNS,
    FIG3,
    NOT_ENOUGH,
    NOT_RUN,
    PAPER_TABLE_EXPERIMENT,
    PAPER_TABLE_ORDER,
    PAPER_TRIALS,
    SHORT_LABELS,
    TABLE2_M_VALUES,
    draw_paper_vs_ours,
    experiment_of,
    paper_cells,
    paper_generator,
    paper_grids,
    paper_tables,
    run_cells,
    write_cells_csv,
)
from pilid.report.reproduction.claims import (
    CLAIM_RULES,
    SCALE,
    Claim,
    Part,
    claim_a,
    claim_b,
    claim_c,
    claim_d,
    claims,
)
from pilid.report.reproduction.compute import (
    BRIDGE_SECONDS,
    active_wall_seconds,
    compute_summary,
    duration,
)
from pilid.report.reproduction.document import (
    NOTES_FILE,
    build_reproduction,
    make_reproduction,
    read_notes,
)
from pilid.report.reproduction.pairing import Unit
from pilid.report.reproduction.reduced_run import (
    REDUCED_RUN_TRIALS,
    changes_since_reduced_run,
    reduced_run_records,
)
from pilid.report.reproduction.sections import (
    GENERATORS_CSV,
    claims_section,
    commands_section,
    compute_section,
    gam_family_section,
    generator_section,
    left_section,
    overview_section,
    table_section,
)
from pilid.report.reproduction.shape_fidelity import (
    FIDELITY_MEASURES,
    FIDELITY_TABLE,
    FLAT_STD,
    flat_features,
    shape_fidelity_section,
)

__all__ = [
    "BRIDGE_SECONDS",
    "CELL_COLUMNS",
    "CLAIM_RULES",
    "FIDELITY_MEASURES",
    "FIDELITY_TABLE",
    "FIG3",
    "FLAT_STD",
    "GENERATORS_CSV",
    "NOTES_FILE",
    "NOT_ENOUGH",
    "NOT_RUN",
    "PAPER_EXPERIMENTS",
    "PAPER_TABLE_EXPERIMENT",
    "PAPER_TABLE_ORDER",
    "PAPER_TRIALS",
    "REDUCED_RUN_TRIALS",
    "SCALE",
    "SHORT_LABELS",
    "TABLE2_M_VALUES",
    "Claim",
    "Part",
    "Unit",
    "active_wall_seconds",
    "build_reproduction",
    "changes_since_reduced_run",
    "claim_a",
    "claim_b",
    "claim_c",
    "claim_d",
    "claims",
    "claims_section",
    "commands_section",
    "compute_section",
    "compute_summary",
    "draw_paper_vs_ours",
    "duration",
    "experiment_of",
    "flat_features",
    "gam_family_section",
    "generator_section",
    "left_section",
    "make_reproduction",
    "overview_section",
    "paper_cells",
    "paper_generator",
    "paper_grids",
    "paper_tables",
    "read_notes",
    "reduced_run_records",
    "run_cells",
    "shape_fidelity_section",
    "table_section",
    "write_cells_csv",
]
