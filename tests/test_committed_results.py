"""The committed results are what the committed records give: ``results/tables`` (byte for byte),
``REPRODUCTION.md`` (byte for byte) and ``results/figures`` (the same files, rebuilt without
error) are rebuilt here from ``results/records`` exactly as ``make tables figures reproduction``
builds them, with nothing trained. The tables are rebuilt as on a fresh clone: from
``records.jsonl`` and the shape-fidelity cache alone, the git-ignored artefacts left out.

After new records: ``make tables figures reproduction``, then commit the records, the outputs and
the artefacts that ``python -m pilid.report artifacts`` lists (``git add -f``) together.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pilid.report import (
    EXTERNAL_TABLE_FILES,
    committed_artifacts,
    load_records,
    make_figures,
    make_reproduction,
    make_tables,
)
from pilid.report.shapes import FIDELITY_CACHE

REPO = Path(__file__).resolve().parents[1]
RECORDS = REPO / "results" / "records"
TABLES = REPO / "results" / "tables"
FIGURES = REPO / "results" / "figures"
REPRODUCTION = REPO / "REPRODUCTION.md"
#: The limit on the committed results' size.
MAX_RESULTS_BYTES = 50 * 1024 * 1024
FIX = "run `make tables figures reproduction` and commit the outputs with the records"

pytestmark = pytest.mark.skipif(
    not (RECORDS / "records.jsonl").is_file(), reason="no committed records in results/records"
)


def _files(folder: Path) -> set[str]:
    if not folder.is_dir():
        return set()
    return {p.name for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")}


@pytest.fixture(scope="module")
def records():
    return load_records(RECORDS)


@pytest.mark.slow
def test_committed_tables_equal_a_rebuild_from_the_committed_records(tmp_path):
    # a fresh clone: the records and the shape-fidelity cache, no artefacts
    clone = tmp_path / "records"
    clone.mkdir()
    shutil.copyfile(RECORDS / "records.jsonl", clone / "records.jsonl")
    if (RECORDS / FIDELITY_CACHE).is_file():
        shutil.copyfile(RECORDS / FIDELITY_CACHE, clone / FIDELITY_CACHE)
    out = tmp_path / "tables"
    _, written = make_tables(clone, out, update_fidelity_cache=False)
    names = {p.name for p in written}
    committed = _files(TABLES) - set(EXTERNAL_TABLE_FILES)
    assert committed == names, f"results/tables differs from a rebuild in its files; {FIX}"
    for name in sorted(names):
        assert (out / name).read_bytes() == (TABLES / name).read_bytes(), (
            f"results/tables/{name} differs from a rebuild; {FIX}"
        )


@pytest.mark.slow
def test_committed_reproduction_md_equals_a_rebuild(records, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the file names its inputs relative to the repository
    out = tmp_path / "REPRODUCTION.md"
    make_reproduction(
        "results/records",
        out,
        figures_dir=tmp_path / "results" / "figures",
        records=records,
        tables_dir="results/tables",
    )
    assert REPRODUCTION.is_file(), f"REPRODUCTION.md is missing; {FIX}"
    assert out.read_text(encoding="utf-8") == REPRODUCTION.read_text(encoding="utf-8"), (
        f"REPRODUCTION.md differs from a rebuild; {FIX}"
    )


@pytest.mark.slow
def test_committed_figures_are_rebuilt_without_error(records, tmp_path):
    out = tmp_path / "figures"
    written = make_figures(RECORDS, out, records=records)
    assert written, "no figure could be drawn from the committed records"
    assert {p.name for p in written} == _files(FIGURES), (
        f"results/figures differs from a rebuild in its files; {FIX} and the artefacts that "
        "`python -m pilid.report artifacts` lists"
    )
    for path in written:
        assert path.stat().st_size > 0


def _git_tracked(paths: list[Path]) -> set[Path] | None:
    """The ``paths`` git tracks (or has staged); None outside a git work tree."""
    if shutil.which("git") is None or not paths:
        return None
    relative = [p.resolve().relative_to(REPO).as_posix() for p in paths]
    try:
        result = subprocess.run(
            ["git", "--literal-pathspecs", "ls-files", "-z", "--", *relative],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return {REPO / name for name in result.stdout.decode().split("\0") if name}


def test_the_artefacts_the_figures_read_are_committed(records):
    """Checked once the records are committed (or staged): a fresh clone has only these."""
    if not _git_tracked([RECORDS / "records.jsonl"]):
        pytest.skip("results/records/records.jsonl is not committed (or not a git work tree)")
    paths = committed_artifacts(RECORDS, records=records)
    tracked = _git_tracked(paths)
    if tracked is None:
        pytest.skip("no artefact is needed")
    missing = [p.relative_to(REPO).as_posix() for p in paths if p.resolve() not in tracked]
    assert not missing, (
        f"{len(missing)} artefact(s) the figures read are not committed (e.g. {missing[:3]}): "
        "python -m pilid.report artifacts | git --literal-pathspecs add -f "
        "--pathspec-from-file=-"
    )


def test_the_committed_results_stay_small(records):
    files = [RECORDS / "records.jsonl", *committed_artifacts(RECORDS, records=records)]
    for folder in (TABLES, FIGURES):
        files += [folder / name for name in _files(folder)]
    size = sum(p.stat().st_size for p in files)
    assert size < MAX_RESULTS_BYTES, f"the committed results take {size / 1e6:.1f} MB"
