"""The report's command line: bad paths and bad records stop with one line (exit 2, nothing
written); unreadable record lines are skipped with one warning line each and a count."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import pilid.report.__main__ as cli
from pilid.report.__main__ import main as report_main

CONF = Path(__file__).resolve().parents[1] / "conf"

#: A one-setting version of smoke_sim_regression (composing the real 40-setting grid is slow).
TINY_SWEEP = """# @package _global_
defaults:
  - override /data: synthetic
experiment_name: smoke_sim_regression
trials: 2
data:
  task: regression
hydra:
  sweeper:
    params:
      data.N: 400
      data.m: 4
      +experiment/method: pilid-5
"""


def _record(trial: int, value: float, experiment: str = "smoke_sim_regression") -> dict:
    return {
        "experiment": experiment,
        "dataset": "synthetic",
        "model": "pilid",
        "params": {"gamma": 5, "init": "lstsq"},
        "N": 400,
        "m": 4,
        "task": "regression",
        "trial": trial,
        "seed": trial,
        "metric": "mse",
        "value": value,
        "setting_id": "tiny",
        "data": {"name": "synthetic", "task": "regression", "N": 400, "m": 4},
    }


@pytest.fixture
def conf(tmp_path) -> Path:
    copy = tmp_path / "conf"
    shutil.copytree(CONF, copy)
    (copy / "experiment" / "smoke_sim_regression.yaml").write_text(TINY_SWEEP)
    return copy


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _good_results(tmp_path: Path) -> Path:
    return _write(tmp_path / "runs" / "records.jsonl", [json.dumps(_record(0, 0.3))]).parent


def _run(capsys, *argv) -> tuple[int, list[str]]:
    code = report_main([str(a) for a in argv])
    return code, capsys.readouterr().err.strip().splitlines()


def _one_error(err: list[str], *fragments: str) -> str:
    assert len(err) == 1, err
    assert err[0].startswith("pilid: error: "), err
    for fragment in fragments:
        assert fragment in err[0], (fragment, err[0])
    return err[0]


# -- output path ----------------------------------------------------------------------------------
def test_out_that_is_a_file_is_one_line(tmp_path, capsys, conf):
    results = _good_results(tmp_path)
    out = tmp_path / "tables.md"
    out.write_text("keep me")
    for command in (["tables", "--conf-dir", conf], ["figures"]):
        code, err = _run(capsys, *command, "--results", results, "--out", out)
        assert code == 2
        _one_error(err, f"--out {out} is an existing file, not a directory", "pass --out")
    assert out.read_text() == "keep me"
    code, err = _run(capsys, "tables", "--results", results, "--out", out / "sub")
    assert code == 2
    _one_error(err, f"{out} is a file", "pass --out a writable directory")


def _read_only(monkeypatch, folder: Path) -> None:
    """Make ``folder`` read-only; as root (chmod does not stop root) refuse its writes too."""
    folder.chmod(0o555)
    if os.geteuid() == 0:
        real = tempfile.mkstemp

        def refuse(*args, dir=None, **kwargs):  # noqa: A002 (tempfile's own name)
            if dir is not None and Path(dir).resolve() == folder.resolve():
                raise PermissionError(13, "Permission denied", str(dir))
            return real(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", refuse)


def test_read_only_out_is_one_line_and_nothing_is_written(tmp_path, capsys, monkeypatch, conf):
    results = _good_results(tmp_path)
    out = tmp_path / "readonly"
    out.mkdir()
    _read_only(monkeypatch, out)
    try:
        code, err = _run(capsys, "tables", "--results", results, "--out", out, "--conf-dir", conf)
        assert code == 2
        _one_error(err, f"--out {out} is not writable (Permission denied)", "pass --out a writ")
        code, err = _run(capsys, "figures", "--results", results, "--out", out / "figs")
        assert code == 2
        _one_error(err, f"--out {out / 'figs'} cannot be created in {out} (Permission denied)")
        assert list(out.iterdir()) == []
    finally:
        out.chmod(0o755)


# -- results that are not records ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lines", "fragment"),
    [
        (["# my notes", "a,b,c", "1,2,3"], "holds no readable trial records (3 unreadable line"),
        ([json.dumps({"a": 1}), json.dumps({"b": [2]})], "trial records"),
        ([json.dumps({k: v for k, v in _record(0, 0.3).items() if k != "experiment"})], "trial"),
    ],
    ids=["plain-text-file", "json-that-is-not-records", "records-of-no-experiment"],
)
def test_results_without_records_are_one_line_and_write_nothing(
    tmp_path, capsys, conf, lines, fragment
):
    results = _write(tmp_path / "notes.txt", lines)
    out = tmp_path / "tables"
    code, err = _run(capsys, "tables", "--results", results, "--out", out, "--conf-dir", conf)
    assert code == 2
    _one_error(err, str(results), fragment, "pass --results")
    assert not out.exists()  # no empty tables.md


def test_records_of_no_table_experiment_are_an_error(tmp_path, capsys, conf):
    results = _write(
        tmp_path / "runs" / "records.jsonl", [json.dumps(_record(0, 0.3, "skill_shapes"))]
    )
    out = tmp_path / "tables"
    code, err = _run(capsys, "tables", "--results", results, "--out", out, "--conf-dir", conf)
    assert code == 2
    _one_error(err, "no table can be built", "skill_shapes", "figures")
    assert not out.exists()


def test_missing_conf_dir_is_one_line(tmp_path, capsys):
    results = _good_results(tmp_path)
    out = tmp_path / "tables"
    missing = tmp_path / "nonexistent"
    code, err = _run(capsys, "tables", "--results", results, "--out", out, "--conf-dir", missing)
    assert code == 2
    _one_error(err, f"--conf-dir {missing} does not exist", "conf/ directory")
    code, err = _run(capsys, "tables", "--results", results, "--out", out, "--conf-dir", tmp_path)
    assert code == 2
    _one_error(err, "has no experiment/ folder")
    assert not out.exists()


# -- skipped lines --------------------------------------------------------------------------------
def test_torn_line_is_skipped_with_one_warning_line_and_a_count(tmp_path, capsys, conf):
    file = _write(
        tmp_path / "runs" / "records.jsonl",
        [json.dumps(_record(0, 0.3)), '{"experiment": "smoke_sim_reg', json.dumps(_record(1, 0.5))],
    )
    out = tmp_path / "tables"
    code, err = _run(capsys, "tables", "--results", file.parent, "--out", out, "--conf-dir", conf)
    assert code == 0
    warned = [line for line in err if line.startswith("pilid: warning: ")]
    assert len(warned) == 1 and warned[0].startswith(f"pilid: warning: {file}: line 2 ")
    assert f"pilid: skipped 1 unreadable record line(s) in {file}" in err
    assert not any("StoreWarning" in line or "warnings.warn" in line for line in err), err
    text = (out / "smoke_sim_regression_N400.md").read_text()
    assert "0.4000" in text  # mean of the two good records: both were read


def test_many_skipped_lines_print_ten_warnings_then_the_count(tmp_path, capsys, conf):
    lines = [json.dumps(_record(0, 0.3)), *(f"garbage {k}" for k in range(15))]
    file = _write(tmp_path / "runs" / "records.jsonl", lines)
    code, err = _run(
        capsys, "tables", "--results", file, "--out", tmp_path / "t", "--conf-dir", conf
    )
    assert code == 0
    warned = [line for line in err if line.startswith("pilid: warning: ")]
    assert len(warned) == cli.MAX_WARNINGS and "line 2 " in warned[0]
    assert f"pilid: skipped 15 unreadable record line(s) in {file} (first 10 shown above)" in err


def test_clean_records_print_no_skip_line(tmp_path, capsys, conf):
    results = _good_results(tmp_path)
    code, err = _run(
        capsys, "tables", "--results", results, "--out", tmp_path / "t", "--conf-dir", conf
    )
    assert code == 0 and not any("skipped" in line or "warning" in line for line in err), err


@pytest.mark.slow
def test_the_real_command_line_prints_one_line_and_no_traceback(tmp_path):
    results = _good_results(tmp_path)
    out = tmp_path / "a-file"
    out.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "pilid.report", "figures", "--results", results, "--out", out],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"pilid: error: --out {out} is an existing file, not a directory; pass --out a writable "
        "directory (it is created if missing)"
    ]
