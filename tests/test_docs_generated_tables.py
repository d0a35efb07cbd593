"""The tables the documentation builds from the code and the committed CSVs (docs/_ext): the
generic study table aggregates as pandas does by hand, the views mark the best value by the
metric's direction, bad options are one line, and the hyper-parameter rows are the signature's
defaults beside the paper's values, naming any parameter the page lacks."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

DOCS_EXT = Path(__file__).resolve().parent.parent / "docs" / "_ext"
if str(DOCS_EXT) not in sys.path:
    sys.path.insert(0, str(DOCS_EXT))

import parameter_table  # noqa: E402  (docs/_ext: no Sphinx needed)
import study_tables  # noqa: E402


def _results() -> pd.DataFrame:
    """A dev_suite.py results frame: table a (MSE), b (AUC), two splits, three models."""
    rows = []
    values = {
        ("a", "pilid"): (0.5, 0.7),
        ("a", "ebm"): (0.4, 0.6),
        ("a", "lightgbm"): (0.9, 0.9),
        ("b", "pilid"): (0.9, 0.8),
        ("b", "ebm"): (0.7, 0.7),
        ("b", "lightgbm"): (0.6, 0.6),
    }
    for (table, model), pair in values.items():
        for split, value in enumerate(pair):
            metric = "mse" if table == "a" else "auc"
            task = "regression" if table == "a" else "classification"
            rows.append((table, split, model, task, metric, value, 2.0 + split, 80, 20))
    columns = [*study_tables.script("dev_suite").COLUMNS]
    return pd.DataFrame(rows, columns=columns)


def test_a_pivot_is_the_groupby_mean_in_the_order_of_first_appearance():
    frame = pd.DataFrame(
        {
            "who": ["z", "z", "a", "a", "z"],
            "data": ["d2", "d1", "d1", "d2", "d2"],
            "score": [1.0, 2.0, 3.0, 4.0, 6.0],
        }
    )
    table = study_tables.pivot(frame, index=["who"], columns=["data"], values=["score"], size="n")
    assert table.header == ["who", "n", "d2", "d1"]
    # z: d2 = mean(1, 6) = 3.5 over 2 rows, d1 = 2; a: d2 = 4, d1 = 3
    assert table.rows == [["z", "2", "3.5000", "2.0000"], ["a", "1", "4.0000", "3.0000"]]
    summed = study_tables.pivot(frame, index=["data"], values=["score"], aggregate="sum", digits=1)
    by_hand = frame.groupby("data", sort=False)["score"].sum()
    assert summed.rows == [[k, f"{v:.1f}"] for k, v in by_hand.items()]


def test_a_missing_cell_shows_as_dashes():
    frame = pd.DataFrame({"who": ["a", "b"], "data": ["d1", "d2"], "score": [1.0, 2.0]})
    table = study_tables.pivot(frame, index=["who"], columns=["data"], values=["score"])
    assert table.rows == [["a", "1.0000", "--"], ["b", "--", "2.0000"]]


def test_the_suite_summary_is_the_mean_and_std_with_the_best_in_bold_by_direction():
    table = study_tables.suite_summary(_results())
    rows = {row[0]: row for row in table.rows}
    a, b = rows["a"], rows["b"]
    # a is an MSE: the lowest mean (EBM's 0.5) is the best; std over the two splits, ddof 1
    std = np.std([0.4, 0.6], ddof=1)
    assert a[3] == f"0.5000\u00a0±\u00a0{std:.4f}" and isinstance(a[3], study_tables.Bold)
    assert not any(isinstance(cell, study_tables.Bold) for cell in (a[2], a[4]))
    assert a[-1] == "no"  # PiLiD 0.6 against EBM's 0.5
    # b is an AUC: the highest mean (PiLiD's 0.85) is the best
    assert isinstance(b[2], study_tables.Bold) and b[2].startswith("0.8500")
    assert b[-1] == "yes"
    verdict = study_tables.suite_verdict(_results())
    assert len(verdict.rows) == 1  # every model on every cell: no reduced ranking
    assert verdict.rows[0][1] == "1 of 2"
    # a peer fitted under a budget only: "--" at the defaults, ranked on the shared cells
    budget = _results().assign(budget="")
    tabm = budget[budget["model"] == "lightgbm"].assign(model="tabm", budget="n_epochs=2")
    verdict = study_tables.suite_verdict(pd.concat([budget, tabm], ignore_index=True))
    assert len(verdict.rows) == 2 and verdict.rows[0][-1] == "--"
    assert verdict.rows[1][-1] == verdict.rows[1][-2]  # the same values as LightGBM's
    # a candidate as the base: its wins, under its name
    renamed = _results().replace({"model": {"pilid": "pilid_deep_auto"}})
    verdict = study_tables.suite_verdict(renamed, "pilid_deep_auto")
    assert verdict.rows[0][1] == "1 of 2" and verdict.header[1] == "PiLiD deep auto beats EBM"


@pytest.mark.parametrize(
    ("view", "options", "message"),
    [
        ("nosuch", {}, "unknown view 'nosuch'; use one of pivot,"),
        ("pivot", {"index": "table", "values": "nope"}, "no column nope; the CSV has table,"),
        ("pivot", {"index": "table"}, "view pivot needs :index: and :values: (column names)"),
        ("pivot", {"index": "table", "values": "value", "aggregate": "mode"}, "aggregate 'mode'"),
        ("drift", {}, "view drift needs :against: (a CSV path)"),
    ],
)
def test_a_bad_view_or_option_is_one_line(view, options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        study_tables.build(view, "results/studies/dev_suite.csv", options)
    assert "\n" not in str(e.value)


def test_a_missing_csv_is_one_line_naming_it():
    with pytest.raises(ValueError, match=r"no CSV results/studies/nosuch.csv \(paths are from"):
        study_tables.build("pivot", "results/studies/nosuch.csv", {})


def test_the_hyperparameter_rows_are_the_signatures_defaults_and_the_papers_values():
    from pilid import PiLiDRegressor
    from pilid.estimators.pilid import PAPER_PROTOCOL

    words = {name: "why" for name in inspect.signature(PiLiDRegressor).parameters}
    rows, problems = parameter_table.rows(PiLiDRegressor, "pilid", words)
    assert problems == []
    signature = inspect.signature(PiLiDRegressor).parameters
    assert [r[0] for r in rows] == list(signature)
    for name, default, paper, text in rows:
        assert default == repr(signature[name].default)
        assert text == "why"
        if name in PAPER_PROTOCOL:
            assert paper == repr(PAPER_PROTOCOL[name])
    by_name = {r[0]: r for r in rows}
    assert by_name["random_state"][2] == "--"  # no config sets it
    assert by_name["lr"][2] == repr(0.005)  # conf/config.yaml's train block


def test_a_parameter_without_words_or_words_for_no_parameter_is_named():
    from pilid import PiLiBRegressor

    words = {name: "x" for name in inspect.signature(PiLiBRegressor).parameters}
    del words["lambda0"]
    words["nosuch"] = "x"
    _, problems = parameter_table.rows(PiLiBRegressor, "pilib", words)
    assert problems == [
        "PiLiBRegressor's parameter lambda0 has no line",
        "nosuch is no parameter of PiLiBRegressor",
    ]


def test_the_pilib_configs_warmup_is_the_papers_not_the_default():
    from pilid import PiLiBRegressor

    words = {name: "" for name in inspect.signature(PiLiBRegressor).parameters}
    rows, _ = parameter_table.rows(PiLiBRegressor, "pilib", words)
    warmup = {r[0]: r for r in rows}["warmup_epochs"]
    assert warmup[1] == repr(inspect.signature(PiLiBRegressor).parameters["warmup_epochs"].default)
    assert warmup[2] == "10" != warmup[1]  # conf/model/pilib.yaml keeps the paper configs' 10


def test_words_continue_on_indented_lines_and_a_line_without_a_bar_is_one_line():
    words = parameter_table.parse_words(["gamma | more", "  pieces", "", "lam | a prior"])
    assert words == {"gamma": "more pieces", "lam": "a prior"}
    with pytest.raises(ValueError, match=r"line 'gamma more': write `name \| when to change it`"):
        parameter_table.parse_words(["gamma more"])


def test_differences_name_parameters_whose_defaults_differ():
    from pilid import PiLiBRegressor, PiLiDClassifier, PiLiDRegressor

    assert parameter_table.differences(PiLiDRegressor, PiLiDClassifier) == []
    differ = parameter_table.differences(PiLiDRegressor, PiLiBRegressor)
    assert "gamma" in differ and "n_blocks" in differ and "lr" not in differ


def test_rows_of_another_lever_csv_join_only_where_the_frame_has_none():
    """``:with:``: the named variants' rows of another CSV are added, a (variant, table, split)
    the frame already has keeps its own value, and other variants stay out."""
    key = ["variant", "table", "split", "value"]
    mine = pd.DataFrame([("lever", "a", 0, 1.0), ("base", "a", 0, 2.0)], columns=key)
    other = pd.DataFrame(
        [("base", "a", 0, 9.0), ("base", "a", 1, 3.0), ("seed", "a", 0, 4.0), ("x", "a", 0, 5.0)],
        columns=key,
    )
    joined = study_tables.with_rows(mine, other, ["base", "seed"])
    got = {tuple(r[:3]): r[3] for r in joined[key].itertuples(index=False)}
    assert got == {
        ("lever", "a", 0): 1.0,
        ("base", "a", 0): 2.0,
        ("base", "a", 1): 3.0,
        ("seed", "a", 0): 4.0,
    }
    with pytest.raises(ValueError, match="no variant nosuch in the :with: CSV"):
        study_tables.with_rows(mine, other, ["nosuch"])
    with pytest.raises(ValueError, match=":with: needs :with-variants:"):
        study_tables.with_rows(mine, other, [])


def test_the_lever_knobs_are_the_studies_levers_with_the_variants_that_set_them():
    """``lever-knobs``: one row per lever of ``studies._levers.LEVERS`` (the studies', not the
    library's), its neutral value, its valid values in words and the variants of the study that
    set it with their tables in the CSV, counted here by hand."""
    from studies import lever_study
    from studies._levers import LEVERS

    bins = "gamma40_smooth_rows_lam_rows_pairs_auto_bins8"
    levers = pd.DataFrame(
        [(bins, "a", 0), (bins, "b", 0), (bins, "b", 1), ("defaults", "a", 0)],
        columns=["variant", "table", "split"],
    )
    table = study_tables.lever_knobs(levers)
    assert [row[0] for row in table.rows] == [p.name for p in LEVERS]
    rows = {row[0]: row for row in table.rows}
    assert rows["deep_bins"][1:4] == [
        "None",
        "a whole number in [2, inf); None",
        next(p.doc for p in LEVERS if p.name == "deep_bins"),
    ]
    assert rows["deep_bins"][4] == f"{bins} (2)"
    assert rows["schedule"][1:3] == ["'joint'", "'joint' or 'additive_first'"]
    assert rows["lr_decay"][2] == "a number in (0, 1); None"
    setting = [v for v, (params, _) in lever_study.VARIANTS.items() if "schedule" in params]
    assert rows["schedule"][4] == ", ".join(f"{v} (0)" for v in setting) and len(setting) == 6


def test_tables_keeps_the_rows_of_those_tables_and_names_one_the_csv_lacks():
    frame = pd.DataFrame(
        {"variant": ["a", "a", "b"], "table": ["t1", "t2", "t1"], "split": [0, 0, 0]}
    )
    kept = study_tables.only_tables(frame, ["t1"])
    assert kept[["variant", "table"]].values.tolist() == [["a", "t1"], ["b", "t1"]]
    with pytest.raises(ValueError, match="t3"):
        study_tables.only_tables(frame, ["t1", "t3"])


def test_the_criterion_view_shows_the_paired_advantage_its_se_and_pairs_by_hand():
    """PiLiD against one peer on two tables: the advantage (positive: PiLiD better), its paired
    standard error and the pairs, computed here from the rows; bold where PiLiD is better, *
    where fewer than 15 pairs."""
    rows = []
    values = {  # table: (metric, pilid, peer) over three splits
        "a": ("mse", [0.5, 0.6, 0.7], [0.6, 0.6, 0.9]),
        "c": ("auc", [0.80, 0.82, 0.81], [0.85, 0.83, 0.84]),
    }
    for table, (metric, ours, theirs) in values.items():
        for split in range(3):
            for model, value in (("pilid", ours[split]), ("ebm", theirs[split])):
                rows.append((table, split, model, metric, value, 1.0))
    columns = ["table", "split", "model", "metric", "value", "fit_seconds"]
    frame = pd.DataFrame(rows, columns=columns)
    table = study_tables.suite_criterion(frame, digits=3)
    assert table.header == ["table", "metric", "vs ebm"]
    gap_a = np.array([0.6, 0.6, 0.9]) - np.array([0.5, 0.6, 0.7])
    gap_c = np.array([0.80, 0.82, 0.81]) - np.array([0.85, 0.83, 0.84])
    expected = [
        f"{gap.mean():+.3f}\u00a0±\u00a0{gap.std(ddof=1) / np.sqrt(3):.3f} (3)*"
        for gap in (gap_a, gap_c)
    ]
    assert [row[2] for row in table.rows] == expected
    assert isinstance(table.rows[0][2], study_tables.Bold)  # a: PiLiD's MSE lower
    assert not isinstance(table.rows[1][2], study_tables.Bold)  # c: EBM's AUC higher
    assert table.note == "PiLiD better than ebm on 1 of 2 tables (2 reduced)."


def test_a_candidates_criterion_reads_its_own_csv_beside_the_suites(tmp_path, monkeypatch):
    """``:also:`` joins a suite CSV's rows to a candidate's file and ``:base:`` makes the
    criterion the candidate's: its advantage over PiLiD's defaults and EBM on the pairs both
    have, computed here by hand (a row the candidate's file has wins over the other's)."""
    suite = _results()
    ours = suite[suite["model"] == "pilid"].assign(
        model="cand", value=suite.loc[suite["model"] == "pilid", "value"] - 0.1
    )
    (tmp_path / "results").mkdir()
    suite.to_csv(tmp_path / "results" / "suite.csv", index=False)
    ours.to_csv(tmp_path / "results" / "cand.csv", index=False)
    monkeypatch.setattr(study_tables, "ROOT", tmp_path)
    options = {"also": "results/suite.csv", "base": "cand", "digits": 3}
    table = study_tables.build("suite-criterion", "results/cand.csv", options)
    assert table.header == ["table", "metric", "vs pilid", "vs ebm", "vs lightgbm"]
    a, b = table.rows  # a: MSE 0.1 lower than PiLiD's (better); b: AUC 0.1 lower (worse)
    assert a[2].startswith("+0.100") and isinstance(a[2], study_tables.Bold)
    assert b[2].startswith("-0.100") and not isinstance(b[2], study_tables.Bold)
    ebm_a = np.array([0.4, 0.6]) - (np.array([0.5, 0.7]) - 0.1)
    assert a[3].startswith(f"{ebm_a.mean():+.3f}")
    assert table.note.startswith("cand better than pilid on 1 of 2 tables")


def test_the_shares_view_is_each_pilids_median_deep_share_and_the_candidates_seconds():
    """Per table the median deep share of each PiLiD model over its cells and a candidate's fit
    seconds over the defaults', computed here from the rows; the median table as the note."""
    suite = _results()
    ours = suite[suite["model"] == "pilid"]
    cand = ours.assign(model="cand", fit_seconds=2 * ours["fit_seconds"])
    frame = pd.concat([suite, cand], ignore_index=True)
    split = frame["split"].to_numpy()
    frame["deep_share"] = np.where(frame["model"] == "pilid", 0.1 * (split + 1), np.nan)
    frame.loc[frame["model"] == "cand", "deep_share"] = 0.3
    table = study_tables.suite_shares(frame, base="cand")
    assert table.header == ["table", "pilid deep share", "cand deep share", "cand fit s / pilid's"]
    assert [row[1:] for row in table.rows] == [["0.150", "0.300", "x2.0"]] * len(table.rows)
    assert table.note.startswith("median table: pilid 0.150, cand 0.300;")
    with pytest.raises(ValueError, match="deep_share"):
        study_tables.suite_shares(suite.assign(deep_share=np.nan))


def test_also_joins_several_csvs_as_one_file_of_their_rows(tmp_path, monkeypatch):
    """``:also:`` with two CSVs (a candidate's seeds written to a second file beside the suite's)
    gives the criterion of one file holding all their rows."""
    suite = _results()
    ours = suite[suite["model"] == "pilid"].assign(
        model="cand", value=suite.loc[suite["model"] == "pilid", "value"] - 0.1
    )
    first, second = ours.iloc[::2], ours.iloc[1::2]
    assert len(first) and len(second)
    (tmp_path / "results").mkdir()
    suite.to_csv(tmp_path / "results" / "suite.csv", index=False)
    first.to_csv(tmp_path / "results" / "cand.csv", index=False)
    second.to_csv(tmp_path / "results" / "cand_more.csv", index=False)
    pd.concat([suite, ours]).to_csv(tmp_path / "results" / "all.csv", index=False)
    monkeypatch.setattr(study_tables, "ROOT", tmp_path)
    options = {"also": "results/suite.csv results/cand_more.csv", "base": "cand", "digits": 3}
    joined = study_tables.build("suite-criterion", "results/cand.csv", options)
    whole = study_tables.build("suite-criterion", "results/all.csv", {"base": "cand", "digits": 3})
    assert [list(map(str, r)) for r in joined.rows] == [list(map(str, r)) for r in whole.rows]
    assert joined.note == whole.note
    alone = study_tables.build(
        "suite-criterion", "results/cand.csv", {"also": "results/suite.csv", "base": "cand"}
    )
    assert [list(map(str, r)) for r in alone.rows] != [list(map(str, r)) for r in whole.rows]
    shown = study_tables.build(
        "suite-criterion", "results/all.csv", {"base": "cand", "models": "ebm", "digits": 3}
    )
    assert shown.header == ["table", "metric", "vs ebm"]
    assert [r[2] for r in shown.rows] == [r[3] for r in whole.rows]  # the same pairs as before
    with pytest.raises(ValueError, match=":models: tabm: no rows"):
        study_tables.build("suite-criterion", "results/all.csv", {"base": "cand", "models": "tabm"})


def test_a_value_and_its_spread_never_wrap_apart_and_wide_tables_scroll():
    """The suite's tables: no breakable space beside a ``±`` in any cell of the views that
    show a spread; the site's stylesheet, listed in the Sphinx config, scrolls the generated
    tables sideways and keeps their cells on one line."""
    for table in (
        study_tables.suite_summary(_results()),
        study_tables.suite_criterion(_results()),
    ):
        cells = [str(cell) for row in table.rows for cell in row if "±" in str(cell)]
        assert cells and all(" ±" not in c and "± " not in c for c in cells), cells
    docs = DOCS_EXT.parent
    css = (docs / "_static" / "pilid.css").read_text()
    rules = dict(re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", css, flags=re.S)))
    rules = {" ".join(k.split()): v for k, v in rules.items()}
    assert "overflow-x: auto" in rules["table.pilid-generated"]
    assert "white-space: nowrap" in rules["table.pilid-generated td, table.pilid-generated th"]
    conf = (docs / "conf.py").read_text()
    assert re.search(r'html_css_files = \[[^]]*"pilid.css"', conf)
    assert re.search(r'html_static_path = \[[^]]*"_static"', conf)


def _screen() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A hybrid_screen.py CSV (defaults and glass on hmda, AUC, and wage, MSE; splits 0, 1) and
    the suite's rows of EBM on the same cells."""
    study = study_tables.script("hybrid_screen")
    values = {
        ("defaults", "hmda"): (0.80, 0.90),
        ("glass", "hmda"): (0.84, 0.92),  # better than the defaults by 0.03, EBM by 0.01
        ("defaults", "wage"): (0.70, 0.60),
        ("glass", "wage"): (0.75, 0.65),  # MSE 0.05 worse than the defaults, 0.01 than EBM
    }
    ebm = {"hmda": (0.83, 0.91), "wage": (0.74, 0.64)}
    rows, suite = [], []
    for (variant, table), pair in values.items():
        metric = "mse" if table == "wage" else "auc"
        task = "regression" if table == "wage" else "classification"
        for split, value in enumerate(pair):
            rows.append(
                dict.fromkeys(study.COLUMNS, 0)
                | dict(variant=variant, table=table, split=split, task=task, metric=metric)
                | dict(value=value, fit_seconds=1.0 + (variant == "glass"))
            )
    for table, pair in ebm.items():
        metric = "mse" if table == "wage" else "auc"
        for split, value in enumerate(pair):
            # the suite's own PiLiD rows: the CSV's defaults stand for them on these cells
            suite.append(
                dict(
                    table=table,
                    split=split,
                    model="pilid",
                    metric=metric,
                    value=0.5,
                    fit_seconds=5.0,
                )
            )
            suite.append(
                dict(
                    table=table,
                    split=split,
                    model="ebm",
                    metric=metric,
                    value=value,
                    fit_seconds=9.0,
                )
            )
    return pd.DataFrame(rows), pd.DataFrame(suite)


def test_the_screening_views_read_paired_differences_in_the_metrics_direction():
    rows, suite = _screen()
    table = study_tables.screen_variants(rows, suite)
    by = {r[0]: dict(zip(table.header, r)) for r in table.rows}
    assert by["glass"]["beats EBM"] == "1 of 2" and by["glass"]["beats defaults"] == "1 of 2"
    # hmda +0.01 and wage -0.01 against EBM; +0.03 and -0.05 against the defaults
    assert float(by["glass"]["mean vs EBM"]) == pytest.approx(0.0, abs=1e-12)
    assert float(by["glass"]["mean vs defaults"]) == pytest.approx(-0.01)
    # the defaults: hmda 0.02 below EBM, wage 0.04 below EBM's MSE (better)
    assert by["defaults"]["beats EBM"] == "1 of 2" and by["defaults"]["beats defaults"] == "--"
    assert by["glass"]["fit s"] == "2.0" and by["glass"]["defaults' fit s"] == "1.0"
    assert "REDUCED: 2 tables, splits 0, 1" in table.note  # the tables the rows hold
    wide = study_tables.screen_tables(rows, suite, "defaults")
    assert wide.header == ["variant", "hmda", "wage"]
    cells = {r[0]: r[1:] for r in wide.rows}
    assert [float(c) for c in cells["glass"]] == pytest.approx([0.03, -0.05])
    assert isinstance(cells["glass"][0], study_tables.Bold)  # better than the defaults there
    assert isinstance(cells["defaults"][1], study_tables.Bold)  # the defaults' 0 beats -0.05
