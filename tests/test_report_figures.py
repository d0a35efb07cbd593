"""Figures and shape fidelity from a fixture results directory (records + artefacts)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_report_tables import check_latex

from pilid.report import figures, shapes
from pilid.report.records import ExperimentGrid, Setting, normalise_records
from pilid.report.tables import build_tables

TRUE = {  # the fixture's true marginal value functions (original units, x in [0, 1])
    "x0": lambda x: np.sin(2 * np.pi * x),
    "x1": lambda x: 2.0 * x - 1.0,
    "x2": lambda x: (x - 0.3) ** 2,
}


def _truth_for(data):
    def truth(feature, grid):
        return TRUE[feature](np.asarray(grid, dtype=float))

    return truth


def _record(setting_id, trial, dataset="synthetic", model="pilid", gamma=5, init="lstsq", **kw):
    return {
        "experiment": kw.get("experiment", "init_significance"),
        "dataset": dataset,
        "model": model,
        "params": {"gamma": gamma, "init": init} if gamma is not None else {},
        "N": kw.get("N", 15000),
        "m": kw.get("m", 3),
        "task": kw.get("task", "regression"),
        "trial": trial,
        "seed": trial,
        "metric": "mse",
        "value": 0.3,
        "setting_id": setting_id,
        "data": {"name": dataset, "N": kw.get("N", 15000), "m": kw.get("m", 3)},
    }


def _write_shapes(root, setting_id, trial, frame):
    folder = root / "artifacts" / setting_id
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / f"shapes-trial{trial}.csv", index=False)


def _knot_shapes(gamma, offset=0.0, noise=0.0, rng=None):
    """Piecewise-linear learned shapes: the true functions at gamma+1 uniform knots."""
    rows = []
    for feature, f in TRUE.items():
        x = np.linspace(0, 1, gamma + 1)
        value = f(x) + offset + (rng.normal(0, noise, size=x.size) if noise else 0.0)
        rows.append(pd.DataFrame({"feature": feature, "x": x, "x_original": x, "value": value}))
    return pd.concat(rows, ignore_index=True)


@pytest.fixture
def results(tmp_path):
    """Synthetic PiLiD shapes (gamma 5, both inits, 3 trials), skill Age shapes for gamma 1 and
    5, and PiLiB interaction grids for one spambase pair (2 trials)."""
    rng = np.random.default_rng(0)
    records = []
    for init, noise in (("lstsq", 0.02), ("gaussian", 0.3)):
        sid = f"syn-{init}"
        for trial in range(3):
            records.append(_record(sid, trial, init=init))
            _write_shapes(tmp_path, sid, trial, _knot_shapes(5, offset=trial, noise=noise, rng=rng))
    for gamma in (1, 5):
        sid = f"skill-{gamma}"
        for trial in range(2):
            records.append(_record(sid, trial, dataset="skill", gamma=gamma, task="classification"))
            x = np.linspace(16, 44, gamma + 1)
            frame = pd.DataFrame(
                {"feature": "Age", "x": (x - 30) / 5, "x_original": x, "value": -0.01 * (x - 25)}
            )
            _write_shapes(tmp_path, sid, trial, frame)
    folder = tmp_path / "artifacts" / "spam"
    folder.mkdir(parents=True)
    a, b = np.meshgrid(np.linspace(0, 3, 4), np.linspace(0, 1, 3), indexing="ij")
    for trial in range(2):
        records.append(_record("spam", trial, dataset="spambase", model="pilib", gamma=5))
        grid = pd.DataFrame({"x_a": a.ravel(), "x_b": b.ravel(), "value": (a * b).ravel() + trial})
        name = f"interaction-grid-trial{trial}-capital_run_length_average__word_freq_receive.csv"
        grid.to_csv(folder / name, index=False)
    return tmp_path, normalise_records(pd.DataFrame.from_records(records))


def _is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_every_figure_is_written_as_png_and_pdf(results, tmp_path, capsys):
    root, frame = results
    out = tmp_path / "figures"
    written = figures.build_figures(frame, root, out, evaluator=_truth_for)
    stems = {
        "fig3_simulation_shapes_lstsq",
        "fig3_simulation_shapes_gaussian",
        "fig4_skill_age",
        "fig5_spambase_interactions",
    }
    assert {p.name for p in written} == {f"{s}.{e}" for s in stems for e in ("png", "pdf")}
    for stem in stems:
        assert _is_png(out / f"{stem}.png")
        assert (out / f"{stem}.pdf").read_bytes()[:5] == b"%PDF-"
    err = capsys.readouterr().err
    assert "gamma [10, 15, 20]" in err  # figure 4 draws the gammas it has and says so
    assert "drawing {'N': 15000, 'm': 3, 'gamma': 5}" in err  # not the paper's m=20: says so


def test_figures_without_data_are_skipped_with_a_notice(tmp_path, capsys):
    frame = normalise_records(pd.DataFrame.from_records([_record("none", 0, model="linear")]))
    assert figures.build_figures(frame, tmp_path, tmp_path / "out") == []
    err = capsys.readouterr().err
    for number in ("figure 3", "figure 4", "figure 5"):
        assert number in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_average_shape_interpolates_each_trial_onto_one_grid():
    t0 = pd.DataFrame({"feature": "f", "x_original": [0.0, 1.0], "value": [0.0, 1.0]})
    t1 = pd.DataFrame({"feature": "f", "x_original": [0.0, 0.5, 2.0], "value": [1.0, 0.0, 3.0]})
    grid, mean, std = figures.average_shape([t0, t1], "f", n_points=5)
    assert np.allclose(grid, [0.0, 0.5, 1.0, 1.5, 2.0])
    c0 = np.array([0.0, 0.5, 1.0, 1.0, 1.0])  # held flat beyond its last knot
    c1 = np.array([1.0, 0.0, 1.0, 2.0, 3.0])
    assert np.allclose(mean, (c0 + c1) / 2)
    assert np.allclose(std, np.std([c0, c1], axis=0, ddof=1))


def test_average_grid_means_the_trials_and_drops_other_grids():
    a, b = np.meshgrid([0.0, 1.0, 2.0], [5.0, 6.0], indexing="ij")
    g0 = pd.DataFrame({"x_a": a.ravel(), "x_b": b.ravel(), "value": (a + 10 * b).ravel()})
    g1 = g0.assign(value=g0["value"] * 3)
    other = g0.assign(x_a=g0["x_a"] + 0.5)
    xa, xb, values, count = figures.average_grid({0: g0, 1: g1, 2: other})
    assert count == 2 and np.allclose(xa, [0, 1, 2]) and np.allclose(xb, [5, 6])
    assert values.shape == (2, 3)
    assert np.allclose(values, 2 * (xa[None, :] + 10 * xb[:, None]))


def test_choose_fig3_setting_prefers_the_paper_then_the_nearest():
    def frame(keys):
        rows = [
            _record(f"s{i}", 0, N=N, m=m, gamma=g, init=init)
            for i, (N, m, g, init) in enumerate(keys)
        ]
        return normalise_records(pd.DataFrame.from_records(rows))

    both = [(15000, 20, 5, "lstsq"), (15000, 20, 5, "gaussian")]
    assert figures.choose_fig3_setting(frame(both + [(20000, 20, 10, "lstsq")])) == {
        "N": 15000,
        "m": 20,
        "gamma": 5,
    }
    near = [(400, 8, 5, "lstsq"), (400, 8, 5, "gaussian"), (800, 8, 5, "lstsq")]
    near += [(800, 8, 5, "gaussian"), (800, 20, 1, "lstsq"), (800, 20, 1, "gaussian")]
    near += [(800, 4, 5, "lstsq"), (800, 4, 5, "gaussian")]
    # gamma first (5), then m nearest 20 (8 beats 4), then N nearest 15000 (800 beats 400)
    assert figures.choose_fig3_setting(frame(near)) == {"N": 800, "m": 8, "gamma": 5}
    # a setting run with both initialisations beats a closer one run with one
    one = [(15000, 20, 5, "lstsq"), (400, 4, 5, "lstsq"), (400, 4, 5, "gaussian")]
    assert figures.choose_fig3_setting(frame(one)) == {"N": 400, "m": 4, "gamma": 5}


# -- shape fidelity -------------------------------------------------------------------------------
def _r2(y_true, y_pred):
    y_true, y_pred = y_true - y_true.mean(), y_pred - y_pred.mean()
    return 1 - np.sum((y_true - y_pred) ** 2) / np.sum(y_true**2)


def test_centred_r2_known_cases():
    x = np.linspace(0, 1, 50)
    true = np.sin(3 * x)
    assert shapes.centred_r2(true + 7.0, true) == pytest.approx(1.0)  # offsets do not count
    assert shapes.centred_r2(np.zeros_like(x), true) == pytest.approx(0.0)
    other = np.cos(5 * x)
    assert shapes.centred_r2(other, true) == pytest.approx(_r2(true, other))


def test_fidelity_of_stored_shapes_against_an_independent_computation(results):
    root, frame = results
    synthetic = frame[frame["dataset"] == "synthetic"]
    scores = shapes.fidelity_frame(synthetic, root, evaluator=_truth_for)
    assert len(scores) == 6 and (scores["metric"] == "r2").all()
    for record in scores.itertuples():
        stored = pd.read_csv(
            root / "artifacts" / record.setting_id / f"shapes-trial{record.trial}.csv"
        )
        per_feature = []
        for feature, f in TRUE.items():
            part = stored[stored["feature"] == feature]
            grid = np.linspace(0, 1, shapes.GRID_POINTS)
            learned = np.interp(grid, part["x_original"], part["value"])
            per_feature.append(_r2(f(grid), learned))
        assert record.value == pytest.approx(np.mean(per_feature))
    # x1 is linear: its knots reproduce it exactly whatever the offset
    exact = _knot_shapes(5, offset=3.0)
    linear = exact[exact["feature"] == "x1"]
    assert shapes.trial_fidelity(linear, _truth_for({})) == pytest.approx(1.0)
    by_init = scores.groupby("init")["value"].mean()
    assert by_init["lstsq"] > by_init["gaussian"]  # less noise on the knots, closer shapes


def test_fidelity_table_is_built_when_shapes_are_stored(results):
    root, frame = results
    synthetic = frame[frame["dataset"] == "synthetic"]
    settings = [
        Setting("synthetic", "pilid", task="regression", N=15000, m=3, gamma=5, init=i)
        for i in ("lstsq", "gaussian")
    ]
    grid = ExperimentGrid("init_significance", 3, settings)
    tables = build_tables(synthetic, [grid], root=root, evaluator=_truth_for)
    assert [t.name for t in tables] == ["init_significance", "init_significance_shape_fidelity"]
    fidelity = tables[1]
    lstsq, gaussian = fidelity.cells[0]
    assert lstsq.bold and not gaussian.bold  # higher R^2 is better
    assert "$R^2$" in fidelity.to_latex() and "R²" in fidelity.to_markdown()
    check_latex(fidelity.to_latex())
    expected = shapes.fidelity_frame(synthetic, root, evaluator=_truth_for)
    assert lstsq.mean == pytest.approx(expected[expected["init"] == "lstsq"]["value"].mean())


def test_true_shapes_of_a_record_equal_the_generated_data_sets():
    from pilid.data import load_dataset

    data = {
        "name": "synthetic",
        "task": "classification",
        "N": 300,
        "m": 4,
        "n_interactions": 2,
        "noise": 0.3,
        "data_seed": 7,
    }
    truth = shapes.true_shapes_of(data)
    expected = load_dataset("synthetic", **{k: v for k, v in data.items() if k != "name"})
    X = np.random.default_rng(0).uniform(size=(50, 4))
    np.testing.assert_array_equal(truth.functions(X), expected.true_shapes.functions(X))
    np.testing.assert_array_equal(truth.interactions(X), expected.true_shapes.interactions(X))


_BACKEND_PROBE = """
import sys
import matplotlib
import pandas as pd

before = matplotlib.get_backend()
import pilid.report
from pilid.report.reproduction import figure

cells = pd.DataFrame(
    {
        "paper_table": ["tab-predictive", "tab-predictive"],
        "metric": ["mse", "auc"],
        "paper_mean": [0.3, 0.9],
        "ours_mean": [0.25, 0.88],
        "reduced": [False, True],
    }
)
written = figure.figure_paper_vs_ours(cells, sys.argv[1])
print(before, matplotlib.get_backend(), len(written), "matplotlib.pyplot" in sys.modules)
"""


@pytest.mark.slow
def test_importing_and_drawing_leave_the_users_matplotlib_backend_alone(tmp_path):
    """The report draws on `matplotlib.figure.Figure` objects: importing it, or drawing a
    figure, neither switches the backend the user chose (``MPLBACKEND``) nor loads pyplot."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MPLBACKEND": "template"}
    done = subprocess.run(
        [sys.executable, "-c", _BACKEND_PROBE, str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["template", "template", "2", "False"]
    assert _is_png(tmp_path / "out" / "paper_vs_ours.png")
