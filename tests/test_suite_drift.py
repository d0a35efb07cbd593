"""`studies.suite_drift`: how far a rerun of the development suite moved, against numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from studies import dev_suite, suite_drift


def _frame(values: dict) -> pd.DataFrame:
    """A results CSV of dev_suite.py: {(table, split, model): value}; table a MSE, b AUC."""
    rows = [
        (t, s, m, "classification" if t == "b" else "regression", "auc" if t == "b" else "mse", v)
        for (t, s, m), v in values.items()
    ]
    frame = pd.DataFrame(rows, columns=["table", "split", "model", "task", "metric", "value"])
    return frame.assign(fit_seconds=1.0, n_train=80, n_test=20)


COMMITTED = {
    ("a", 0, "pilid"): 0.50,
    ("a", 1, "pilid"): 0.70,
    ("a", 0, "ebm"): 0.61,
    ("a", 1, "ebm"): 0.61,
    ("b", 0, "pilid"): 0.90,
    ("b", 1, "pilid"): 0.80,
    ("b", 0, "ebm"): 0.85,
    ("b", 1, "ebm"): 0.85,
    ("b", 2, "ebm"): 0.99,  # only in the committed file: not compared
}
RERUN = {
    **{k: v for k, v in COMMITTED.items() if k != ("b", 2, "ebm")},
    ("a", 1, "pilid"): 0.74,  # PiLiD's mean on a goes from 0.60 (beats EBM's 0.61) to 0.62
    ("b", 0, "pilid"): 0.9 + 1e-9,
    ("a", 0, "ebm"): 0.6099,
}


def test_the_drift_per_model_is_numpys_on_the_cells_both_files_hold():
    drift = suite_drift
    cells = drift.drift(_frame(COMMITTED), _frame(RERUN))
    assert len(cells) == 8  # b's split 2 is in one file only
    by_model = drift.drift_by_model(cells)
    pilid = np.abs(np.array([0.0, 0.74 - 0.70, 1e-9, 0.0]))
    ebm = np.abs(np.array([0.6099 - 0.61, 0.0, 0.0, 0.0]))
    assert by_model.loc["pilid", "cells"] == 4 and by_model.loc["pilid", "identical"] == 2
    assert by_model.loc["pilid", "median_abs"] == pytest.approx(np.median(pilid))
    assert by_model.loc["pilid", "max_abs"] == pytest.approx(pilid.max())
    assert by_model.loc["pilid", "largest"] == "a split 1"
    assert by_model.loc["ebm", "identical"] == 3
    assert by_model.loc["ebm", "max_abs"] == pytest.approx(ebm.max())


def test_a_verdict_that_flips_is_named_and_one_that_holds_is_not():
    drift = suite_drift
    dev = dev_suite
    a, b = drift.common_cells(_frame(COMMITTED), _frame(RERUN))
    first, second = dev.summarise(a), dev.summarise(b)
    assert first["wins"] == 2 and second["wins"] == 1  # a: 0.60 < 0.61, then 0.62 > 0.60995
    assert drift.verdict_changes(first, second) == ["a"]


def test_the_script_prints_the_drift_and_both_summaries(tmp_path, capsys):
    drift = suite_drift
    paths = tmp_path / "committed.csv", tmp_path / "rerun.csv"
    _frame(COMMITTED).to_csv(paths[0], index=False)
    _frame(RERUN).to_csv(paths[1], index=False)
    assert drift.main([str(p) for p in paths]) == 0
    out = capsys.readouterr().out
    assert "8 cells in both files" in out
    assert "PiLiD beats EBM on 2 of 2 tables" in out and "PiLiD beats EBM on 1 of 2 tables" in out
    assert "changes its verdict on 1 table(s): a" in out


def test_a_missing_file_is_one_line_naming_it_and_the_command_that_writes_it(tmp_path):
    drift = suite_drift
    present = tmp_path / "committed.csv"
    _frame(COMMITTED).to_csv(present, index=False)
    missing = tmp_path / "rerun.csv"
    with pytest.raises(SystemExit) as stop:
        drift.main([str(present), str(missing)])
    message = str(stop.value)
    assert "\n" not in message and str(missing) in message
    assert f"python -m studies dev_suite --out {missing}" in message


def test_a_rerun_of_pilid_alone_is_read_beside_the_first_files_peers(tmp_path, capsys):
    drift = suite_drift
    rerun = _frame(RERUN)
    pilid_only = rerun[rerun["model"] == "pilid"]
    combined, borrowed = drift.with_peers(_frame(COMMITTED), pilid_only)
    assert borrowed == ["ebm"]
    # EBM's cells come from the first file, on the rerun's (table, split) only: not b's split 2
    ebm = combined[combined["model"] == "ebm"].set_index(["table", "split"])["value"]
    assert ebm.to_dict() == {k[:2]: v for k, v in COMMITTED.items() if k[2] == "ebm" and k[1] < 2}
    paths = tmp_path / "committed.csv", tmp_path / "pilid.csv"
    _frame(COMMITTED).to_csv(paths[0], index=False)
    pilid_only.to_csv(paths[1], index=False)
    assert drift.main([str(p) for p in paths]) == 0
    out = capsys.readouterr().out
    assert "4 cells in both files" in out and "holds no ebm" in out
    # a: PiLiD 0.62 against the committed EBM's 0.61: the verdict on a flips
    assert "changes its verdict on 1 table(s): a" in out
