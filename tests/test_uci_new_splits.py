"""`studies.uci_new_splits` (issue 31, goal 3): the paper's UCI sets on split seeds none of
the paper's trials uses. The paper's seeds are refused in one line; a fitted cell scores what
the same model, fitted by hand on the same split, scores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _uci import uci_dir  # tests/_uci.py
from sklearn.metrics import roc_auc_score

from pilid.data import load_dataset, make_split
from studies import uci_new_splits

REPO = Path(__file__).resolve().parent.parent


def _run(*args, env_extra=None):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "studies", "uci_new_splits", *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_split_seed_of_the_papers_trials_is_refused_in_one_line(tmp_path):
    out = tmp_path / "uci.csv"
    result = _run("--splits", "100", "7", "--out", out)
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert "split seeds [7] are the paper's trials (0-19); use seeds from 20 up" in last
    assert not out.exists()  # nothing fitted, nothing written


@pytest.mark.slow
@pytest.mark.uci
def test_a_cell_scores_what_the_model_fitted_by_hand_on_that_split_scores(tmp_path):
    root = str(uci_dir())
    out = tmp_path / "uci.csv"
    result = _run("--tables", "skill", "--models", "lightgbm", "--splits", "100", "--out", out)
    assert result.returncode == 0, result.stderr[-2000:]
    row = pd.read_csv(out).iloc[0]
    cell = (row["table"], row["split"], row["model"], row["metric"])
    assert cell == ("skill", 100, "lightgbm", "auc")
    from lightgbm import LGBMClassifier

    dataset = load_dataset("skill", data_dir=root)
    split = make_split(dataset, 100)
    assert not np.array_equal(split.test_index, make_split(dataset, 0).test_index)
    X_train, X_test = dataset.X.iloc[split.train_index], dataset.X.iloc[split.test_index]
    model = LGBMClassifier(verbose=-1, n_jobs=1).fit(X_train, split.y_train)
    by_hand = roc_auc_score(split.y_test, model.predict_proba(X_test)[:, 1])
    assert row["value"] == pytest.approx(by_hand, abs=1e-12)
    assert (row["n_train"], row["n_test"]) == (len(split.train_index), len(split.test_index))


def test_names_lightgbm_refuses_are_rewritten_and_nothing_else():
    from pilid.data import Dataset

    script = uci_new_splits
    X = pd.DataFrame(
        {"char_freq_[": [0.0, 1.0], "emp.var.rate": [1.0, 2.0], "job:x": ["a", "b"]}
    ).astype({"job:x": "category"})
    dataset = Dataset("t", "classification", "auc", X, np.array([0, 1]))
    plain = script.plain_names(dataset)
    assert list(plain.X.columns) == ["char_freq__91", "emp.var.rate", "job_58x"]
    assert plain.categorical == ["job_58x"]
    np.testing.assert_array_equal(plain.X.to_numpy(), X.to_numpy())
    assert list(dataset.X.columns) == list(X.columns)  # the loaded data set is left as it was


def test_a_candidates_rows_are_read_beside_the_committed_ones_as_the_base(tmp_path, capsys):
    """``--also`` joins another CSV's rows (read, never written) and ``--base`` reads the
    summary's wins as the candidate's: its wins against EBM, counted here by hand."""
    rng = np.random.default_rng(3)
    rows = [
        ("skill", split, model, "classification", "auc", float(rng.uniform(0.8, 0.9)), 1.0)
        for split in (100, 101, 102)
        for model in ("pilid", "pilid_deep_auto", "ebm")
    ]
    columns = ["table", "split", "model", "task", "metric", "value", "fit_seconds"]
    frame = pd.DataFrame(rows, columns=columns).assign(n_train=80, n_test=20)
    mine, theirs = tmp_path / "candidate.csv", tmp_path / "uci.csv"
    frame[frame["model"] == "pilid_deep_auto"].to_csv(mine, index=False)
    frame[frame["model"] != "pilid_deep_auto"].to_csv(theirs, index=False)
    before = theirs.read_bytes()
    args = ["--summary-only", "--tables", "skill", "--out", str(mine), "--also", str(theirs)]
    args += ["--models", "pilid", "pilid_deep_auto", "ebm", "--base", "pilid_deep_auto"]
    assert uci_new_splits.main(args) == 0
    means = frame.groupby("model")["value"].mean()
    wins = int(means["pilid_deep_auto"] > means["ebm"])
    assert f"PiLiD deep auto beats EBM on {wins} of 1 tables" in capsys.readouterr().out
    assert theirs.read_bytes() == before


def test_adoption_takes_one_model_in_one_line_and_writes_nothing(tmp_path):
    """``--adopt-from`` (the development suite's): with two models, or the source itself, one
    line that names the fix, before anything is read or fitted."""
    out = tmp_path / "uci.csv"
    for models in (["pilid", "ebm"], ["pilid_deep_auto"]):
        result = _run("--models", *models, "--adopt-from", "pilid_deep_auto", "--out", out)
        assert result.returncode == 2
        assert "give it one model in --models" in result.stderr.strip().splitlines()[-1]
    assert not out.exists()
