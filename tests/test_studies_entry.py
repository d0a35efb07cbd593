"""``python -m studies``: it lists every study of ``studies/`` with its docstring's first line,
hands a study its arguments as running that study's own ``main`` does, and refuses an unknown
study in one line."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from studies import __main__ as entry
from studies import suite_drift

REPO = Path(__file__).resolve().parent.parent
STUDIES = sorted(p.stem for p in (REPO / "studies").glob("*.py") if not p.stem.startswith("_"))


def _source(name: str) -> str:
    return (REPO / "studies" / f"{name}.py").read_text(encoding="utf-8")


def _first_doc_line(name: str) -> str:
    """The text after the module's opening quotes, up to the end of that line."""
    return re.match(r'"""(.*)\n', _source(name)).group(1)


def test_the_listing_names_every_study_file_with_its_docstrings_first_line(capsys):
    assert len(STUDIES) >= 11 and "dev_suite" in STUDIES and "lever_study" in STUDIES
    assert entry.main([]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("usage: python -m studies <study> [args...]")
    rows = [line.split(maxsplit=1) for line in printed[2:]]
    assert [name for name, _ in rows] == STUDIES
    for name, doc in rows:
        assert doc == _first_doc_line(name)
    assert entry.main(["--help"]) == 0
    assert capsys.readouterr().out.splitlines() == printed


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_takes_its_arguments_as_a_list(name):
    tree = ast.parse(_source(name))
    (main,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert [a.arg for a in main.args.args] == ["argv"] and len(main.args.defaults) == 1


def _results(path: Path, pilid_value: float) -> Path:
    rows = [
        ("a", 0, "pilid", "regression", "mse", pilid_value),
        ("a", 0, "ebm", "regression", "mse", 0.5),
    ]
    columns = ["table", "split", "model", "task", "metric", "value"]
    frame = pd.DataFrame(rows, columns=columns).assign(fit_seconds=1.0, n_train=8, n_test=2)
    frame.to_csv(path, index=False)
    return path


def test_a_study_runs_with_the_arguments_after_its_name(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", list(sys.argv))  # the entry point names the study there
    first = _results(tmp_path / "first.csv", 0.40)
    second = _results(tmp_path / "second.csv", 0.46)
    assert suite_drift.main([str(first), str(second)]) == 0
    direct = capsys.readouterr().out
    assert "0.06" in direct  # PiLiD's cell moved by 0.46 - 0.40
    assert entry.main(["suite_drift", str(first), str(second)]) == 0
    assert capsys.readouterr().out == direct
    with pytest.raises(SystemExit) as stop:  # the study's own parser, named as it was called
        entry.main(["suite_drift", str(first)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("usage: python -m studies suite_drift ")


def test_an_unknown_study_is_refused_in_one_line_that_lists_the_studies(capsys):
    assert entry.main(["dev_suit", "--summary-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("python -m studies: error: no study 'dev_suit'; run one of ")
    assert ", ".join(STUDIES) in err and err.endswith("(`python -m studies` lists them)")


@pytest.mark.slow
def test_both_command_lines_run_a_study_from_the_repository_root(tmp_path):
    first = _results(tmp_path / "first.csv", 0.40)
    second = _results(tmp_path / "second.csv", 0.46)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("PYTHONPATH", None)  # the repository root is the working directory, nothing more
    outputs = []
    for command in (["studies", "suite_drift"], ["studies.suite_drift"]):
        done = subprocess.run(
            [sys.executable, "-m", *command, str(first), str(second)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and "0.06" in outputs[0]
    listing = subprocess.run(
        [sys.executable, "-m", "studies"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert listing.returncode == 0 and "lever_study" in listing.stdout
