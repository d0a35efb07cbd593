"""Tables from a small fixture of records: values, missing and short cells, the bold rule (ties
included), Table 2's stars, and the LaTeX/Markdown structure."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from pilid.report.__main__ import main as report_main
from pilid.report.paper import paper_results
from pilid.report.records import (
    ExperimentGrid,
    Setting,
    normalise_records,
    select_records,
    smoothness_key,
)
from pilid.report.table_model import Cell, mark_best, write_tables
from pilid.report.tables import build_tables, init_table, real_table, sim_tables

PM = r" $\pm$ "


# -- fixture helpers ------------------------------------------------------------------------------
def _record(experiment, setting, trial, value, setting_id, metric):
    params = {}
    if setting.gamma is not None:
        params["gamma"] = setting.gamma
    if setting.init is not None:
        params["init"] = setting.init
    return {
        "experiment": experiment,
        "dataset": setting.dataset,
        "model": setting.model,
        "params": params,
        "N": setting.N or 1000,
        "m": setting.m or 7,
        "task": setting.task or ("regression" if metric == "mse" else "classification"),
        "trial": trial,
        "seed": 100 + trial,
        "metric": metric,
        "value": float(value),
        "setting_id": setting_id,
        "data": {
            "name": setting.dataset,
            "N": setting.N,
            "m": setting.m,
            **({"generator": setting.generator} if setting.generator else {}),
        },
    }


def _frame(records):
    return normalise_records(pd.DataFrame.from_records(records))


def _sim_settings(Ns, ms, methods, task="regression", generator=None):
    return [
        Setting(
            "synthetic", model, task=task, N=N, m=m, gamma=gamma, init=init, generator=generator
        )
        for N in Ns
        for m in ms
        for model, gamma, init in methods
    ]


SIM_METHODS = [
    ("pilid", 1, "lstsq"),
    ("pilid", 5, "lstsq"),
    ("mlp", None, None),
    ("svm", None, None),
    ("linear", None, None),
]
SIM_LABELS = {
    ("pilid", 1): r"\textit{PiLiD-1}",
    ("pilid", 5): r"\textit{PiLiD-5}",
    ("mlp", None): "MLP",
    ("svm", None): "SVM (rbf kernel)",
    ("linear", None): "Linear Regression",
}


@pytest.fixture
def sim():
    """sim_regression with N in {5000, 20000}, m in {10, 20}, 3 trials; svm at (5000, 20) not
    run, mlp at (5000, 10) short of one trial, a tie at 4 decimals at (20000, 10)."""
    rng = np.random.default_rng(0)
    grid = ExperimentGrid("sim_regression", 3, _sim_settings([5000, 20000], [10, 20], SIM_METHODS))
    records, expected = [], {}
    for index, s in enumerate(grid.settings):
        key = (s.N, s.m, s.model, s.gamma)
        if key == (5000, 20, "svm", None):
            continue
        trials = 2 if key == (5000, 10, "mlp", None) else 3
        values = rng.normal(0.35, 0.02, size=trials)
        if key == (20000, 10, "pilid", 1):
            values = np.array([0.25, 0.25, 0.25])
        if key == (20000, 10, "pilid", 5):
            values = np.array([0.25003, 0.25003, 0.25003])  # prints as 0.2500 too: a tie
        expected[key] = values
        for trial, value in enumerate(values):
            records.append(_record("sim_regression", s, trial, value, f"s{index}", "mse"))
        records.append(_record("sim_regression", s, 3, 9.0, f"s{index}", "mse"))  # beyond trials
    # a rival run of one setting in another experiment (e.g. a smoke run): must not be mixed in
    rival = grid.settings[0]
    records += [_record("other", rival, t, 5.0, "rival", "mse") for t in range(3)]
    return grid, _frame(records), expected


# -- structure checks -----------------------------------------------------------------------------
def _split_cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)&", row)]


def _width(cells: list[str]) -> int:
    total = 0
    for cell in cells:
        match = re.match(r"\\multicolumn\{(\d+)\}", cell)
        total += int(match[1]) if match else 1
    return total


def check_latex(text: str) -> list[list[str]]:
    """Assert balanced environments, booktabs rules in order and the column count of every
    row; return the body rows (between midrule and bottomrule) as lists of cells."""
    stack = []
    for kind, name in re.findall(r"\\(begin|end)\{(\w+\*?)\}", text):
        if kind == "begin":
            stack.append(name)
        else:
            assert stack and stack.pop() == name, f"unbalanced \\end{{{name}}}"
    assert not stack, f"unclosed environments {stack}"
    assert text.count(r"\begin{table}") == 1 and text.count(r"\begin{tabular}") == 1
    assert text.count("{") == text.count("}") + text.count(r"\}") - text.count(r"\{")
    spec = re.search(r"\\begin\{tabular\}\{([lrc]+)\}", text)[1]
    tabular = text[text.index(r"\begin{tabular}") : text.index(r"\end{tabular}")]
    tabular = tabular.split("\n", 1)[1]
    positions = [tabular.index(rule) for rule in (r"\toprule", r"\midrule", r"\bottomrule")]
    assert positions == sorted(positions)
    body = []
    in_body = False
    for line in tabular.splitlines():
        line = line.strip()
        if line.startswith(r"\midrule"):
            in_body = True
            continue
        if not line or line.startswith((r"\toprule", r"\bottomrule", r"\cmidrule")):
            continue
        assert line.endswith(r"\\"), line
        cells = _split_cells(line[:-2])
        assert _width(cells) == len(spec), (line, len(spec))
        if in_body:
            body.append(cells)
    assert re.search(r"\\caption\{.+\}", text) and r"\label{tab:" in text
    for line in text.splitlines():  # a bare % would comment out the rest of a line
        if not line.startswith("%"):
            assert not re.search(r"(?<!\\)%", line), line
            text_mode = re.sub(r"\$[^$]*\$|\\label\{[^}]*\}", "", line)  # ^ _ only in math
            assert not re.search(r"(?<!\\)[_^]", text_mode), line
    return body


def check_markdown(text: str, n_columns: int) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) >= 3
    for row in rows:
        assert row.endswith("|")
        assert len(re.split(r"(?<!\\)\|", row)) - 2 == n_columns, row
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


def _expected_text(values):
    return f"{np.mean(values):.4f}{PM}{np.std(values, ddof=1):.4f}"


# -- simulation tables ---------------------------------------------------------------------------
def test_sim_tables_values_missing_short_and_bold(sim):
    grid, frame, expected = sim
    tables = sim_tables(select_records(frame, grid), grid, paper_results())
    assert [t.name for t in tables] == ["sim_regression_N5000", "sim_regression_N20000"]
    for table, N in zip(tables, (5000, 20000)):
        body = check_latex(table.to_latex())
        assert [row[0] for row in body] == [SIM_LABELS[(m, g)] for m, g, _ in SIM_METHODS]
        means = {}
        for (model, gamma, _), row in zip(SIM_METHODS, body):
            for m, cell in zip((10, 20), row[1:]):
                values = expected.get((N, m, model, gamma))
                if values is None:
                    assert cell == "--"
                    continue
                means[(model, gamma, m)] = float(f"{np.mean(values):.4f}")
                assert _expected_text(values) in cell
                short = len(values) < 3
                assert (r"\dagger" in cell) == short
                if short:
                    assert cell.endswith(f"({len(values)}/3)")
        for m in (10, 20):  # bold: every cell whose displayed mean is the column's lowest
            column = {k: v for k, v in means.items() if k[2] == m}
            best = min(column.values())
            for (model, gamma, _), row in zip(SIM_METHODS, body):
                cell = row[1 + (0 if m == 10 else 1)]
                if (model, gamma, m) in column:
                    assert cell.startswith(r"\textbf{") == (column[(model, gamma, m)] == best)
        caption = table.caption()
        assert "3 trials per cell" in caption and "MSE" in caption
    n20000 = tables[1].to_latex()
    tied = [row for row in check_latex(n20000) if row[0] in (SIM_LABELS[("pilid", 1)],)]
    assert tied[0][1].startswith(r"\textbf{0.2500")
    assert check_latex(n20000)[1][1].startswith(r"\textbf{0.2500")  # PiLiD-5 ties: bold too
    assert "--: not run yet" in tables[0].caption() and r"\dagger" in tables[0].caption()
    assert "--: not run yet" not in tables[1].caption()


def test_sim_markdown_has_the_same_cells(sim):
    grid, frame, expected = sim
    table = sim_tables(select_records(frame, grid), grid)[0]
    rows = check_markdown(table.to_markdown(), n_columns=3)
    assert [r[0] for r in rows] == [
        "PiLiD-1",
        "PiLiD-5",
        "MLP",
        "SVM (rbf kernel)",
        "Linear Regression",
    ]
    assert rows[3][2] == "--"
    values = expected[(5000, 10, "mlp", None)]
    assert rows[2][1].startswith(f"{np.mean(values):.4f} ± {np.std(values, ddof=1):.4f}")
    assert rows[2][1].endswith("† (2/3)")
    assert sum(cell.startswith("**") for row in rows for cell in row[1:2]) >= 1


def test_paper_values_sit_beside_ours(sim):
    grid, frame, _ = sim
    table = sim_tables(select_records(frame, grid), grid, paper_results())[1]
    assert table.paper_table == "tab-n20000" and "Table 1" in table.caption()
    paper = pd.read_csv(__import__("io").StringIO(_paper_csv_rows("tab-n20000")))
    comparison = table.comparison()
    row = comparison[(comparison["row"] == "PiLiD-5") & (comparison["column"] == "20")].iloc[0]
    expected = paper[(paper["model"] == "PiLiD-5") & (paper["column"] == "m=20")]["mean"].iloc[0]
    assert row["paper_mean"] == pytest.approx(expected)
    assert row["difference"] == pytest.approx(row["ours_mean"] - expected)
    assert "(0.3042)" in table.comparison_markdown()  # PiLiD-5, m=20 in the paper's Table 1


def _paper_csv_rows(label):
    frame = paper_results()
    return frame[frame["table"] == label].to_csv(index=False)


def test_rival_runs_and_trials_beyond_the_grid_are_left_out(sim):
    grid, frame, expected = sim
    selected = select_records(frame, grid)
    assert set(selected["setting_id"]) >= {"s0"} and "rival" not in set(selected["setting_id"])
    assert selected["trial"].max() == 2
    assert len(selected[selected["cell"] == 0]) == 3


def test_of_two_equal_runs_of_one_setting_the_newest_fills_the_cell():
    setting = Setting("synthetic", "rf", task="regression", N=400, m=4)
    grid = ExperimentGrid("sim_regression", 2, [setting])
    old = [_record("sim_regression", setting, t, 0.5, "old", "mse") for t in range(2)]
    new = [_record("sim_regression", setting, t, 0.4, "new", "mse") for t in range(2)]
    more = [_record("sim_regression", setting, t, 0.6, "more", "mse") for t in range(3)]
    assert set(select_records(_frame(old + new), grid)["setting_id"]) == {"new"}
    assert set(select_records(_frame(new + old), grid)["setting_id"]) == {"old"}
    # trials beyond the grid's 2 do not count: "more" ties on trials and is the newest
    assert set(select_records(_frame(new + more), grid)["setting_id"]) == {"more"}


def test_mark_best_ties_and_direction():
    cells = [Cell(0.30001, n=1), Cell(0.29996, n=1), Cell(0.31, n=1), Cell(n=0)]
    mark_best(cells, lower_is_better=True)
    assert [c.bold for c in cells] == [True, True, False, False]  # 0.3000 == 0.3000
    cells = [Cell(0.91, n=1), Cell(0.93, n=1), Cell(0.92999, n=1)]
    mark_best(cells, lower_is_better=False)
    assert [c.bold for c in cells] == [False, True, True]


# -- Table 2 -------------------------------------------------------------------------------------
@pytest.fixture
def init():
    """init_significance: N in {5000, 10000}, m in {10, 20}, gamma in {1, 5}, 5 trials; the
    Gaussian init is clearly worse at (5000, 1); (10000, 5, gaussian) was not run."""
    rng = np.random.default_rng(4)
    settings = [
        Setting("synthetic", "pilid", task="regression", N=N, m=m, gamma=g, init=i)
        for N in (5000, 10000)
        for m in (10, 20)
        for g in (1, 5)
        for i in ("lstsq", "gaussian")
    ]
    grid = ExperimentGrid("init_significance", 5, settings)
    base = {
        (N, m, t): rng.normal(0.3, 0.02) for N in (5000, 10000) for m in (10, 20) for t in range(5)
    }
    records, values = [], {}
    for index, s in enumerate(settings):
        if (s.N, s.gamma, s.init) == (10000, 5, "gaussian"):
            continue
        shift = 0.0
        if s.init == "gaussian":
            shift = 0.02 if (s.N, s.gamma) == (5000, 1) else 0.0
        for t in range(5):
            noise = rng.normal(0, 0.004)
            value = base[(s.N, s.m, t)] + shift + noise
            values[(s.N, s.m, s.gamma, s.init, t)] = value
            # the lstsq half may have been recorded by sim_regression (the store runs it once)
            experiment = "sim_regression" if s.init == "lstsq" else "init_significance"
            records.append(_record(experiment, s, t, value, f"i{index}", "mse"))
    return grid, _frame(records), values


def _per_seed(values, N, gamma, init):
    return np.array([np.mean([values[(N, m, gamma, init, t)] for m in (10, 20)]) for t in range(5)])


def test_init_table_means_pairs_and_stars(init):
    grid, frame, values = init
    table = init_table(select_records(frame, grid), grid, paper_results())
    body = check_latex(table.to_latex())
    assert r"\multicolumn{2}{c}{$\gamma_j=1$}" in table.to_latex()
    assert [row[0] for row in body] == ["5000", "10000"]
    for N, row in zip((5000, 10000), body):
        for k, (gamma, init_name) in enumerate(
            [(g, i) for g in (1, 5) for i in ("lstsq", "gaussian")]
        ):
            cell = row[1 + k]
            if (N, gamma, init_name) == (10000, 5, "gaussian"):
                assert cell == "--"
                continue
            per_seed = _per_seed(values, N, gamma, init_name)
            assert _expected_text(per_seed) in cell
        for j, gamma in enumerate((1, 5)):
            lstsq, gauss = row[1 + 2 * j], row[2 + 2 * j]
            if gauss == "--":
                assert lstsq.startswith(r"\textbf{") and "*" not in lstsq
                continue
            a, b = _per_seed(values, N, gamma, "lstsq"), _per_seed(values, N, gamma, "gaussian")
            p = sps.ttest_rel(a, b).pvalue
            stars = "**" if p < 0.05 else "*" if p < 0.10 else ""
            better, worse = (lstsq, gauss) if a.mean() < b.mean() else (gauss, lstsq)
            assert better.startswith(r"\textbf{") and not worse.startswith(r"\textbf{")
            assert (f"$^{{{stars}}}$" in better) if stars else ("$^{*" not in better)
            assert "$^{*" not in worse
    assert "$^{**}$" in body[0][1]  # the planted difference at (5000, gamma=1)
    assert "20 trials" not in table.caption() and "5 trials per cell" in table.caption()
    assert table.paper_table == "tab-initial"
    rows = check_markdown(table.to_markdown(), n_columns=5)
    assert r"\*\*" in rows[0][1]


# -- Table 3 -------------------------------------------------------------------------------------
def test_real_table_columns_metrics_and_bold():
    settings = [
        Setting(d, model, gamma=g, init=i)
        for d in ("bike", "spambase")
        for model, g, i in (("pilid", 5, "lstsq"), ("mlp", None, None), ("gam", None, None))
    ]
    grid = ExperimentGrid("real_data", 2, settings)
    values = {
        ("bike", "pilid"): [0.07, 0.08],
        ("bike", "mlp"): [0.09, 0.10],
        ("bike", "gam"): [0.20, 0.22],
        ("spambase", "pilid"): [0.95, 0.96],
        ("spambase", "mlp"): [0.97, 0.98],
    }  # gam on spambase not run
    records = []
    for index, s in enumerate(settings):
        metric = "mse" if s.dataset == "bike" else "auc"
        for t, v in enumerate(values.get((s.dataset, s.model), [])):
            records.append(_record("real_data", s, t, v, f"r{index}", metric))
    frame = _frame(records)
    table = real_table(select_records(frame, grid), grid, paper_results())
    text = table.to_latex()
    body = check_latex(text)
    assert "bike sharing (MSE) & spambase (AUC)" in text
    assert [row[0] for row in body] == [r"\textit{PiLiD}", "MLP", "GAM"]
    assert body[0][1].startswith(r"\textbf{")  # lowest MSE
    assert body[1][2].startswith(r"\textbf{")  # highest AUC
    assert not body[0][2].startswith(r"\textbf{") and body[2][2] == "--"
    assert _expected_text(values[("bike", "gam")]) in body[2][1]
    comparison = table.comparison()
    row = comparison[(comparison["row"] == "PiLiD") & (comparison["column"].str.startswith("bike"))]
    assert row["paper_mean"].iloc[0] == pytest.approx(0.068)


# -- all tables, files and the command line -------------------------------------------------------
def test_build_and_write_every_table(sim, init, tmp_path):
    grid_s, frame_s, _ = sim
    grid_i, frame_i, _ = init
    frame = pd.concat([frame_s, frame_i], ignore_index=True)
    tables = build_tables(frame, [grid_s, grid_i], root=None)
    names = [t.name for t in tables]
    assert names == ["sim_regression_N5000", "sim_regression_N20000", "init_significance"]
    written = write_tables(tables, tmp_path)
    for name in names:
        check_latex((tmp_path / f"{name}.tex").read_text())
        assert (tmp_path / f"{name}.md").read_text().startswith("**")
    document = (tmp_path / "tables.tex").read_text()
    assert document.count(r"\input{") == 3 and r"\usepackage{booktabs}" in document
    comparison = pd.read_csv(tmp_path / "paper_vs_ours.csv")
    assert set(comparison["paper_table"]) == {"tab-n5000", "tab-n20000", "tab-initial"}
    assert tmp_path / "tables.md" in written


@pytest.mark.slow
def test_cli_writes_tables_and_fails_with_one_line(tmp_path, capsys):
    settings = _sim_settings(
        [400], [4], [("pilid", 5, "lstsq"), ("rf", None, None)], generator="demo"
    )
    records = [
        _record("smoke_sim_regression", s, t, 0.3 + 0.01 * t, f"c{k}", "mse")
        for k, s in enumerate(settings)
        for t in range(2)
    ]
    results = tmp_path / "results"
    results.mkdir()
    with open(results / "records.jsonl", "w") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in records)
    out = tmp_path / "tables"
    assert report_main(["tables", "--results", str(results), "--out", str(out)]) == 0
    text = (out / "smoke_sim_regression_N400.tex").read_text()
    body = check_latex(text)
    assert body[0][0] == r"\textit{PiLiD-1}"  # the smoke grid's rows, the paper's order
    assert any("0.3050" in cell for row in body for cell in row)
    assert report_main(["tables", "--results", str(tmp_path / "none"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[-1]] and err[-1].startswith("pilid: error: no records found")


def test_a_setting_with_a_gamma_rule_takes_only_the_records_of_that_rule():
    """``gamma: auto`` in the config (the library defaults' row): a later run of the same model
    with a number of pieces (``model.gamma=40``) does not fill, or replace, its cell."""
    setting = Setting("skill", "pilid_lib", task="classification", gamma_rule="auto")
    auto = [_record("real_data", setting, t, 0.80, "sid-auto", "auc") for t in range(3)]
    for record in auto:
        record["params"] = {"gamma": "auto"}
    forty = [_record("real_data", setting, t, 0.90, "sid-40", "auc") for t in range(3)]
    for record in forty:
        record["params"] = {"gamma": 40}
    frame = normalise_records(pd.DataFrame.from_records(auto + forty))  # the 40s written last
    grid = ExperimentGrid(name="real_data", trials=3, settings=[setting])
    chosen = select_records(frame, grid)
    assert chosen["setting_id"].unique().tolist() == ["sid-auto"]
    assert chosen["value"].tolist() == [0.80] * 3
    # without the rule (a setting that does not say) the newest run with most trials wins
    plain = ExperimentGrid(name="real_data", trials=3, settings=[Setting("skill", "pilid_lib")])
    assert select_records(frame, plain)["setting_id"].unique().tolist() == ["sid-40"]


def test_a_setting_with_a_smoothness_takes_only_the_records_of_that_weight():
    """``smoothness: 0.0`` in the config (the library defaults' row): a later run with
    ``model.smoothness=auto`` or ``0.1`` does not fill its cell; a record made before the key
    existed (no ``smoothness`` in its params) counts as 0, the weight that reproduces it."""
    setting = Setting("skill", "pilid_lib", task="classification", smoothness=smoothness_key(0.0))
    old = [_record("real_data", setting, t, 0.80, "sid-old", "auc") for t in range(3)]
    for record in old:
        record["params"] = {"gamma": "auto"}
    runs = []
    for weight, sid in (("auto", "sid-auto"), (0.1, "sid-0.1")):
        for t in range(3):
            record = _record("real_data", setting, t, 0.90, sid, "auc")
            record["params"] = {"gamma": "auto", "smoothness": weight}
            runs.append(record)
    frame = normalise_records(pd.DataFrame.from_records(old + runs))  # the others written last
    grid = ExperimentGrid(name="real_data", trials=3, settings=[setting])
    chosen = select_records(frame, grid)
    assert chosen["setting_id"].unique().tolist() == ["sid-old"]
    for weight, sid in (("auto", "sid-auto"), (0.1, "sid-0.1")):
        other = ExperimentGrid(
            name="real_data",
            trials=3,
            settings=[replace(setting, smoothness=smoothness_key(weight))],
        )
        assert select_records(frame, other)["setting_id"].unique().tolist() == [sid]
