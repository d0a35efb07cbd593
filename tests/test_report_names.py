"""The report writes only inside ``--out``, whatever the records' fields hold: a table's file
name comes from its records' experiment, which a records file from elsewhere may set to a path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pilid.report.__main__ import main as report_main
from pilid.report.table_model import file_stem

#: Experiment names that are paths, separators, hidden names or empty.
HOSTILE = [
    "../../evil",
    "..",
    ".",
    ".hidden",
    "a/b",
    "a\\b",
    "",
    "tab\tname",
    "x" + os.sep + ".." + os.sep + "y",
]


def _record(trial: int, experiment: str, value: float) -> dict:
    return {
        "experiment": experiment,
        "dataset": "t",
        "model": "pilid",
        "params": {"gamma": 5},
        "N": 60,
        "m": 3,
        "task": "classification",
        "trial": trial,
        "seed": trial,
        "metric": "auc",
        "value": value,
        "setting_id": f"s{abs(hash(experiment)) % 10**8}",
        "data": {"name": "t", "task": "classification"},
    }


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", [*HOSTILE, "ABSOLUTE"])
def test_no_experiment_name_writes_outside_out(tmp_path, capsys, name):
    work = tmp_path / "work"
    work.mkdir()
    if name == "ABSOLUTE":
        name = str(tmp_path / "elsewhere" / "evil")
        (tmp_path / "elsewhere").mkdir()
    results = work / "runs"
    results.mkdir()
    lines = [json.dumps(_record(t, name, 0.5 + 0.1 * t)) for t in range(2)]
    (results / "records.jsonl").write_text("\n".join(lines) + "\n")
    before = _files(tmp_path)
    out = work / "o1" / "a" / "b" / "out"
    code = report_main(["tables", "--results", str(results), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    new = _files(tmp_path) - before
    assert new, "the report wrote nothing"
    assert all(p.parent == out for p in new), sorted(map(str, new))
    written = {p.name for p in new}
    assert f"{file_stem(name)}.md" in written and f"{file_stem(name)}.tex" in written
    table = (out / f"{file_stem(name)}.md").read_text()
    assert "0.5500" in table  # the mean of the two trials' 0.5 and 0.6


def test_file_stems_stay_in_the_folder_and_apart():
    names = [*HOSTILE, "/etc/passwd", "C:\\x", "plain_name-1.0", "a_b", "a/b", "a\\b"]
    stems = {name: file_stem(name) for name in names}
    for stem in stems.values():
        assert stem and not stem.startswith(".")
        assert "/" not in stem and "\\" not in stem and os.sep not in stem
        assert Path(stem).name == stem
    # distinct names never share a file; a plain name is kept as it is
    assert len(set(stems.values())) == len(set(names))
    assert stems["plain_name-1.0"] == "plain_name-1.0"
    assert stems["a_b"] == "a_b" != stems["a/b"]
