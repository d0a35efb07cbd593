"""The LaTeX that `make tables` writes compiles with pdflatex: the committed
``results/tables/tables.tex`` (every table of the records) and the tables written from small
fixture records (every table kind, the reduced and missing cells, the shape-fidelity table).

pdflatex is not a Python dependency: without it (Debian: ``apt-get install
texlive-latex-base texlive-latex-recommended``) these tests are skipped and say why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "results" / "tables"
PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex is not installed (Debian: apt-get install texlive-latex-base "
    "texlive-latex-recommended); the LaTeX tables are not compiled",
)


def compile_tables(folder: Path) -> int:
    """Run pdflatex on ``folder/tables.tex`` (in ``folder``, never stopping for input) and
    return the number of pages written; fail with the end of the log on any error."""
    run = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "tables.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    log = (
        (folder / "tables.log").read_text(errors="replace")
        if (folder / "tables.log").is_file()
        else ""
    )
    assert run.returncode == 0, (run.stdout + log)[-3000:]
    for problem in ("! ", "Undefined control sequence", "Missing character"):
        assert problem not in log, log[max(0, log.find(problem) - 1000) :][:2000]
    pages = re.search(r"Output written on tables\.pdf \((\d+) pages?", log)
    assert pages and (folder / "tables.pdf").read_bytes()[:5] == b"%PDF-", log[-2000:]
    return int(pages[1])


@needs_pdflatex
def test_the_committed_tables_compile(tmp_path):
    if not (TABLES / "tables.tex").is_file():
        pytest.skip(f"{TABLES / 'tables.tex'} does not exist; build it with make tables")
    for path in TABLES.glob("*.tex"):  # a copy: pdflatex writes its aux, log and pdf beside it
        shutil.copyfile(path, tmp_path / path.name)
    inputs = re.findall(r"\\input\{([^}]+)\}", (tmp_path / "tables.tex").read_text())
    assert inputs and all((tmp_path / name).is_file() for name in inputs)
    assert compile_tables(tmp_path) >= 1


@needs_pdflatex
def test_tables_written_from_fixture_records_compile(tmp_path):
    from test_reproduction import INIT, REAL, SIM, fidelity_scores, fixture_records

    from pilid.report.records import normalise_records
    from pilid.report.table_model import write_tables
    from pilid.report.tables import build_tables, fidelity_table

    frame = normalise_records(pd.DataFrame.from_records(fixture_records(good=True)))
    tables = build_tables(frame, [REAL, SIM, INIT], root=None, fidelity=False)
    tables.append(fidelity_table(fidelity_scores(frame, True), INIT))
    write_tables(tables, tmp_path)
    assert {t.name for t in tables} >= {"real_data", "init_significance_shape_fidelity"}
    assert compile_tables(tmp_path) >= 1
