"""The report on damaged input: a record with a wrongly typed field, an
artefact CSV cut mid-line, a shape-fidelity cache left empty, and column names with ``$``."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib import cbook
from test_report_cli import CONF, TINY_SWEEP, _record, _run, _write

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pilid.errors import PilidError  # noqa: E402
from pilid.inspection.plotting import draw_joint_effect, plot_shapes  # noqa: E402
from pilid.report import figures, shapes  # noqa: E402
from pilid.report.records import normalise_records  # noqa: E402


@pytest.fixture
def conf(tmp_path):
    """The repository's configs with a one-setting smoke_sim_regression (as test_report_cli)."""
    import shutil

    copy = tmp_path / "conf"
    shutil.copytree(CONF, copy)
    (copy / "experiment" / "smoke_sim_regression.yaml").write_text(TINY_SWEEP)
    return copy


# -- a record with a wrongly typed field ----------------------------------------------------------
@pytest.mark.parametrize("field, value", [("experiment", 123), ("task", 5)])
def test_a_wrongly_typed_field_is_one_warning_and_the_table_is_built(
    tmp_path, capsys, conf, field, value
):
    file = _write(
        tmp_path / "runs" / "records.jsonl",
        [
            json.dumps(_record(0, 0.3)),
            json.dumps({**_record(1, 0.5), field: value}),
            json.dumps(_record(1, 0.5)),
        ],
    )
    out = tmp_path / "tables"
    code, err = _run(capsys, "tables", "--results", file.parent, "--out", out, "--conf-dir", conf)
    assert code == 0, err
    assert err == [
        f"pilid: warning: {file}: line 2 is not a valid record ({field!r} is {value!r}, not a "
        "string); skipped",
        f"pilid: skipped 1 unreadable record line(s) in {file}",
    ]
    assert "0.4000" in (out / "smoke_sim_regression_N400.md").read_text()  # both good records


# -- artefacts cut mid-line -----------------------------------------------------------------------
def _shapes_file(root, trial=0):
    folder = root / "artifacts" / "sid"
    folder.mkdir(parents=True, exist_ok=True)
    x = np.linspace(0.0, 1.0, 6)
    frame = pd.DataFrame({"feature": "x0", "x": x, "x_original": x, "value": 2.0 * x})
    path = folder / f"shapes-trial{trial}.csv"
    frame.to_csv(path, index=False)
    return path


def _cut(path, keep):
    data = path.read_bytes()
    path.write_bytes(keep(data))


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda data: data[:-7], "is cut off (its last line has no end)"),  # mid-number
        (lambda data: data.rsplit(b",", 1)[0] + b"\n", "line 7 has fewer fields"),  # short row
        (lambda data: b"", "is empty"),
    ],
    ids=["cut-mid-line", "short-last-row", "empty"],
)
def test_a_damaged_shape_artefact_counts_as_missing_with_one_notice(tmp_path, capsys, damage, says):
    path = _shapes_file(tmp_path)
    good = shapes.read_shapes(tmp_path, "sid", 0)
    assert len(good) == 6
    _cut(path, damage)
    assert shapes.read_shapes(tmp_path, "sid", 0) is None
    assert shapes.read_shapes(tmp_path, "sid", 0) is None  # read again: no second notice
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"pilid.report: warning: {path}"), err
    assert says in err[0] and "treated as missing" in err[0]


def test_fidelity_takes_the_cached_value_of_a_trial_whose_shapes_are_cut(tmp_path, capsys):
    path = _shapes_file(tmp_path)
    _cut(path, lambda data: data[:-3])
    records = normalise_records(
        pd.DataFrame.from_records(
            [{"setting_id": "sid", "trial": 0, "value": 0.3, "experiment": "e", "data": {}}]
        )
    )
    cache = {("sid", 0): shapes.FidelityScores(0.75)}
    scores = shapes.fidelity_frame(records, tmp_path, evaluator=lambda data: None, cache=cache)
    assert scores["value"].tolist() == [0.75]  # not a fidelity computed from a torn file
    assert "is cut off" in capsys.readouterr().err


def test_a_damaged_interaction_grid_is_left_out(tmp_path, capsys):
    folder = tmp_path / "artifacts" / "spam"
    folder.mkdir(parents=True)
    a, b = np.meshgrid(np.linspace(0, 1, 3), np.linspace(0, 1, 3), indexing="ij")
    grid = pd.DataFrame({"x_a": a.ravel(), "x_b": b.ravel(), "value": (a * b).ravel()})
    for trial in (0, 1):
        grid.to_csv(folder / f"interaction-grid-trial{trial}-f1__f2.csv", index=False)
    _cut(folder / "interaction-grid-trial1-f1__f2.csv", lambda data: data[:-2])
    found = shapes.interaction_grids(tmp_path, "spam")
    assert list(found[("f1", "f2")]) == [0]
    assert "interaction-grid-trial1-f1__f2.csv is cut off" in capsys.readouterr().err


# -- the shape-fidelity cache left empty by an older, killed report -------------------------------
@pytest.mark.parametrize(
    "content, says",
    [(b"", "is empty"), (b"setting_id,trial,r2\nsid,0,0.12", "is cut off")],
    ids=["empty", "cut-mid-line"],
)
def test_a_damaged_fidelity_cache_is_one_line_naming_the_fix(tmp_path, content, says):
    (tmp_path / shapes.FIDELITY_CACHE).write_bytes(content)
    with pytest.raises(PilidError) as raised:
        shapes.read_fidelity_cache(tmp_path)
    message = str(raised.value)
    assert "\n" not in message and says in message
    assert "git checkout --" in message and "python -m pilid.report tables" in message


# -- a `$` in a column name -----------------------------------------------------------------------
NAME = "price $ and $ tax"


def _shown(text) -> str:
    """What matplotlib draws for a Text: its string and whether it is parsed as mathtext."""
    assert not cbook.is_math_text(text.get_text()), text.get_text()
    return text._preprocess_math(text.get_text())[0]


def test_dollar_signs_in_feature_names_are_drawn_as_dollars():
    frame = pd.DataFrame({"feature": NAME, "x": [0.0, 1.0], "value": [0.0, 1.0]})
    (ax,) = plot_shapes(frame, [NAME], [False])
    assert _shown(ax.title) == NAME
    ax.figure.canvas.draw()  # renders without a mathtext error
    plt.close(ax.figure)

    _, ax = plt.subplots()
    draw_joint_effect(ax, np.arange(2), np.arange(3), np.zeros((3, 2)), NAME, "cost $5")
    assert _shown(ax.xaxis.label) == NAME and _shown(ax.yaxis.label) == "cost $5"
    assert _shown(ax.title) == f"{NAME} x cost $5"
    ax.figure.canvas.draw()
    plt.close(ax.figure)


def test_figure_3_draws_dollar_feature_names_as_dollars(tmp_path, monkeypatch):
    folder = tmp_path / "artifacts" / "sid"
    folder.mkdir(parents=True)
    x = np.linspace(0.0, 1.0, 6)
    pd.DataFrame({"feature": NAME, "x": x, "x_original": x, "value": x}).to_csv(
        folder / "shapes-trial0.csv", index=False
    )
    record = {
        "experiment": "init_significance",
        "dataset": "synthetic",
        "model": "pilid",
        "params": {"gamma": 5, "init": "lstsq"},
        "N": 15000,
        "m": 1,
        "task": "regression",
        "trial": 0,
        "value": 0.3,
        "setting_id": "sid",
        "data": {"name": "synthetic"},
    }
    records = normalise_records(pd.DataFrame.from_records([record]))
    titles = []

    def keep_titles(fig, out_dir, stem):
        titles.extend(_shown(ax.title) for ax in fig.axes if ax.get_title())
        plt.close(fig)
        return []

    monkeypatch.setattr(figures, "save", keep_titles)
    figures.figure_simulation_shapes(
        records, tmp_path, tmp_path / "out", evaluator=lambda data: lambda feature, grid: grid
    )
    assert titles == [NAME]
