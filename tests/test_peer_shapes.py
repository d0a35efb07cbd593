"""The peers' shapes read apart from the estimators (`pilid.inspection.peer_shapes`) and stored as
the runner's ``shapes`` artefacts: with no interactions, the shapes read at a row's values plus
the model's own intercept are the model's own raw output."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pilid.baselines.ga2m import GA2MClassifier, GA2MRegressor
from pilid.experiments.artefacts import artefact_frames
from pilid.inspection.peer_shapes import peer_intercept, peer_shape_functions
from pilid.models.frame_input import FrameInput

aplr = pytest.importorskip("aplr", reason='pip install -e ".[peers]" for APLR')


def _data(n=240, m=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = np.sin(X[:, 0]) + 0.5 * np.abs(X[:, 1]) - 0.3 * X[:, 2] + 0.3 * rng.normal(size=n)
    return X, y, (y > np.median(y)).astype(int)


def _read(table: pd.DataFrame, X: np.ndarray, names) -> np.ndarray:
    """Sum over features of a line through each feature's rows (in their order), read at X."""
    total = np.zeros(len(X))
    for j, name in enumerate(names):
        part = table[table["feature"] == name]
        assert len(part), f"no shape for {name}"
        total += np.interp(X[:, j], part["x"].to_numpy(float), part["value"].to_numpy(float))
    return total


def _logit(p):
    return np.log(p / (1 - p))


def _ebm(task):
    kw = {"interactions": 0, "outer_bags": 2, "max_rounds": 300, "n_jobs": 1, "random_state": 0}
    return GA2MRegressor(**kw) if task == "regression" else GA2MClassifier(**kw)


def _aplr(task):
    kw = {"m": 200, "cv_folds": 2, "max_interaction_level": 0, "random_state": 0}
    return aplr.APLRRegressor(**kw) if task == "regression" else aplr.APLRClassifier(**kw)


#: (model, task, wrapped in the DataFrame-only adapter) -> (own intercept, own raw output)
CASES = {
    ("ebm", "regression", False): (lambda e: e.ebm_.intercept_, lambda e, X: e.predict(X)),
    ("ebm", "classification", False): (
        lambda e: e.ebm_.intercept_[0],
        lambda e, X: e.decision_function(X),
    ),
    ("ebm", "classification", True): (
        lambda e: e.estimator_.ebm_.intercept_[0],
        lambda e, X: _logit(e.predict_proba(X)[:, 1]),
    ),
    # APLR's predict caps at the training range of y by default: the raw output is uncapped
    ("aplr", "regression", False): (
        lambda e: e.get_intercept(),
        lambda e, X: e.predict(X, cap_predictions_to_minmax_in_training=False),
    ),
    ("aplr", "regression", True): (
        lambda e: e.estimator_.get_intercept(),
        lambda e, X: e.estimator_.predict(X, cap_predictions_to_minmax_in_training=False),
    ),
    ("aplr", "classification", False): (
        lambda e: e.get_logit_model(str(e.classes_[1])).get_intercept(),
        lambda e, X: _logit(e.predict_proba(X)[:, 1]),
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: "-".join(map(str, c)))
def test_shapes_at_the_training_rows_plus_the_intercept_are_the_raw_output(case):
    model, task, wrapped = case
    X, y, labels = _data()
    estimator = _ebm(task) if model == "ebm" else _aplr(task)
    if wrapped:
        estimator = FrameInput(estimator)
    estimator.fit(X, y if task == "regression" else labels)
    table = peer_shape_functions(estimator)
    assert list(table.columns) == ["feature", "x", "value"]
    own_intercept, own_output = CASES[case]
    names = [f"x{j}" for j in range(X.shape[1])]
    got = float(own_intercept(estimator)) + _read(table, X, names)
    np.testing.assert_allclose(got, own_output(estimator, X), rtol=0, atol=1e-6)
    assert peer_intercept(estimator) == pytest.approx(float(own_intercept(estimator)), abs=1e-12)


def test_ebm_steps_hold_both_ends_of_each_bin_and_a_cut_falls_in_the_right_bin():
    X, y, _ = _data()
    est = _ebm("regression").fit(X, y)
    table = peer_shape_functions(est)
    part = table[table["feature"] == "x0"]
    x, value = part["x"].to_numpy(float), part["value"].to_numpy(float)
    assert len(part) % 2 == 0 and np.all(np.diff(x) >= 0)
    assert np.array_equal(value[0::2], value[1::2])  # one score per bin: left and right end
    assert x[0] == X[:, 0].min() and x[-1] == X[:, 0].max()  # the training range
    # EBM's own prediction at its cut points (the other features fixed) steps where the rows do
    cuts = np.asarray(est.ebm_.bins_[0][0], dtype=float)
    rows = np.zeros((cuts.size, X.shape[1]))
    rows[:, 0] = cuts
    base = est.predict(rows) - np.interp(cuts, x, value)
    assert np.ptp(base) < 1e-9  # reading the rows at a cut gives EBM's bin of that cut
    # the centring is EBM's: the training rows' mean contribution is 0
    assert abs(np.mean(np.interp(X[:, 0], x, value))) < 1e-9


def test_a_frame_fitted_ebm_names_its_columns_and_a_non_peer_has_no_shapes():
    from interpret.glassbox import ExplainableBoostingRegressor
    from sklearn.linear_model import LinearRegression

    X, y, _ = _data()
    frame = pd.DataFrame(X, columns=["age", "hours", "apm"])
    ebm = ExplainableBoostingRegressor(interactions=0, outer_bags=2, max_rounds=200, n_jobs=1)
    ebm.fit(frame, y)
    table = peer_shape_functions(ebm)
    assert list(dict.fromkeys(table["feature"])) == ["age", "hours", "apm"]
    got = ebm.intercept_ + _read(table, X, ["age", "hours", "apm"])
    np.testing.assert_allclose(got, ebm.predict(frame), atol=1e-6)
    assert peer_shape_functions(LinearRegression().fit(X, y)) is None
    assert peer_intercept(LinearRegression().fit(X, y)) is None


def test_k_class_ebm_gives_one_shape_per_class():
    X, y, _ = _data(n=300)
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    from interpret.glassbox import ExplainableBoostingClassifier

    ebm = ExplainableBoostingClassifier(interactions=0, outer_bags=2, max_rounds=200, n_jobs=1)
    ebm.fit(X, labels)
    table = peer_shape_functions(ebm)
    assert list(table.columns) == ["class", "feature", "x", "value"]
    logits = ebm.decision_function(X)
    names = [f"x{j}" for j in range(X.shape[1])]
    for k, label in enumerate(ebm.classes_):
        got = ebm.intercept_[k] + _read(table[table["class"] == label], X, names)
        np.testing.assert_allclose(got, logits[:, k], atol=1e-6)


@pytest.mark.parametrize("model", ["ebm", "aplr"])
def test_the_runner_stores_a_peers_shapes_in_original_units(model):
    X, y, labels = _data()
    est = _ebm("classification") if model == "ebm" else FrameInput(_aplr("classification"))
    est.fit(X, labels)
    names = ["Age", "APM", "Hours"]
    split = SimpleNamespace(
        feature_names=names, x_scale=np.array([2.0, 10.0, 0.5]), x_offset=np.array([30, 100, 0])
    )
    frames = artefact_frames(est, split)
    assert set(frames) == {"shapes"}  # a peer has no interaction blocks
    shapes = frames["shapes"]
    assert list(shapes.columns) == ["feature", "x", "x_original", "value"]
    expected = peer_shape_functions(est)
    np.testing.assert_array_equal(shapes["x"], expected["x"])
    np.testing.assert_array_equal(shapes["value"], expected["value"])
    index = expected["feature"].str[1:].astype(int).to_numpy()
    assert shapes["feature"].tolist() == [names[j] for j in index]
    np.testing.assert_allclose(
        shapes["x_original"], expected["x"] * split.x_scale[index] + split.x_offset[index]
    )


# -- the figure of Table 3+'s shapes (pilid.report.figures.figure_peers_shapes) ------------------
#: Spread (max - min) of each feature's shape per model: PiLiD (library defaults) ranks
#: f4 > f1 > f5 > f0 > f2 > f3; the peers would rank otherwise.
SPREAD = {
    "pilid_lib": {"f0": 3.0, "f1": 5.0, "f2": 2.0, "f3": 1.0, "f4": 6.0, "f5": 4.0},
    "ebm": {"f0": 9.0, "f1": 1.0, "f2": 8.0, "f3": 7.0, "f4": 1.0, "f5": 1.0},
    "aplr": {"f0": 1.0, "f1": 2.0, "f2": 3.0, "f3": 4.0, "f4": 5.0, "f5": 6.0},
}


def _peer_record(model, trial):
    from omegaconf import OmegaConf

    from pilid.experiments.config import CONF_DIR

    params = {}  # PiLiD's records carry the gamma and smoothness of its config (the setting)
    if model == "pilid_lib":
        config = OmegaConf.load(CONF_DIR / "model" / "pilid_lib.yaml")
        params = {key: config[key] for key in ("gamma", "smoothness")}
    return {
        "experiment": "peers" if model != "pilid_lib" else "real_data",
        "dataset": "skill",
        "model": model,
        "params": params,
        "task": "classification",
        "trial": trial,
        "seed": trial,
        "metric": "auc",
        "value": 0.88,
        "setting_id": f"sid-{model}",
        "data": {"name": "skill"},
    }


def _peer_shape(model, trial):
    """A stored shape per feature on [0, 10] (original units): PiLiD and APLR piecewise linear,
    EBM steps (both ends of each bin); each trial shifted so that centring matters."""
    rows = []
    for feature, spread in SPREAD[model].items():
        if model == "ebm":
            edges = np.array([0.0, 2.5, 5.0, 7.5, 10.0])
            steps = spread * np.array([0.0, 1.0, 0.25, 0.5]) + trial
            x, value = np.column_stack([edges[:-1], edges[1:]]).ravel(), np.repeat(steps, 2)
        else:
            x = np.linspace(0.0, 10.0, 6)
            value = spread * (x / 10.0) ** (1 + trial) - trial
        rows.append(
            pd.DataFrame({"feature": feature, "x": x / 10, "x_original": x, "value": value})
        )
    return pd.concat(rows, ignore_index=True)


def _peer_results(root, counts):
    """Records of skill for each model (``counts``: trials), shape artefacts for those in it."""
    records = []
    for model in ("pilid_lib", "ebm", "aplr"):
        for trial in range(3):
            records.append(_peer_record(model, trial))
        for trial in range(counts.get(model, 0)):
            folder = root / "artifacts" / f"sid-{model}"
            folder.mkdir(parents=True, exist_ok=True)
            _peer_shape(model, trial).to_csv(folder / f"shapes-trial{trial}.csv", index=False)
    from pilid.report.records import normalise_records

    return normalise_records(pd.DataFrame.from_records(records))


def _grid(trials=3):
    from pilid.report.records import ExperimentGrid, Setting

    settings = [
        Setting(dataset="skill", model=m, task="classification")
        for m in ("pilid_lib", "ebm", "aplr")
    ]
    return ExperimentGrid(name="peers", trials=trials, settings=settings)


def test_peers_shape_figure_draws_each_models_mean_on_piliDs_top_features(tmp_path, monkeypatch):
    from pilid.report import figures

    records = _peer_results(tmp_path, {"pilid_lib": 3, "ebm": 2, "aplr": 3})
    drawn = {}

    def keep(fig, out_dir, stem):
        drawn[stem] = fig
        return [tmp_path / f"{stem}.png"]

    monkeypatch.setattr(figures, "save", keep)
    written = figures.figure_peers_shapes(records, tmp_path, tmp_path / "out", grid=_grid())
    assert [p.name for p in written] == ["peers_shapes_skill.png"]
    fig = drawn["peers_shapes_skill"]
    axes = [a for a in fig.axes if a.get_title()]
    # PiLiD's (library defaults) spreads, widest first (EBM and APLR would rank otherwise)
    assert [a.get_title() for a in axes] == ["f4", "f1", "f5", "f0"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == [
        "PiLiD (library defaults): 3 trials",
        "EBM (InterpretML defaults): 2/3 trials (reduced)",
        "APLR: 3 trials",
    ]
    for ax in axes:
        feature = ax.get_title()
        lines = [line for line in ax.get_lines() if line.get_label() in labels]
        assert len(lines) == 3
        for line, model, count in zip(lines, ("pilid_lib", "ebm", "aplr"), (3, 2, 3)):
            x, y = line.get_xdata(), line.get_ydata()
            # independently: each trial's rows read on the drawn grid, the mean, centred
            curves = []
            for trial in range(count):
                part = _peer_shape(model, trial)
                part = part[part["feature"] == feature]
                curves.append(np.interp(x, part["x_original"], part["value"]))
            mean = np.mean(curves, axis=0)
            np.testing.assert_allclose(y, mean - mean.mean(), atol=1e-12)
            assert x[0] == 0.0 and x[-1] == 10.0 and len(x) == 200


def test_peers_shape_figure_is_skipped_until_a_peer_has_shapes(tmp_path, capsys):
    from pilid.report import figures

    records = _peer_results(tmp_path, {"pilid_lib": 3})  # EBM and APLR recorded, no shapes
    out = tmp_path / "out"
    assert figures.figure_peers_shapes(records, tmp_path, out, grid=_grid()) == []
    lines = [line for line in capsys.readouterr().err.splitlines() if "peers shapes" in line]
    assert len(lines) == 1 and "skipped" in lines[0]
    assert not out.exists()


@pytest.mark.slow
def test_build_figures_draws_the_peers_shapes_and_lists_the_artefacts_it_reads(tmp_path):
    """Through `build_figures` and `figure_artifacts`, with conf/experiment/peers.yaml's grid
    (20 trials configured): every model here is reduced."""
    from pilid.report import figures

    records = _peer_results(tmp_path, {"pilid_lib": 2, "aplr": 1})
    out = tmp_path / "out"
    written = figures.build_figures(records, tmp_path, out)
    assert {p.name for p in written} == {"peers_shapes_skill.png", "peers_shapes_skill.pdf"}
    assert (out / "peers_shapes_skill.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    paths = figures.figure_artifacts(records, tmp_path)
    names = sorted(p.relative_to(tmp_path / "artifacts").as_posix() for p in paths)
    assert names == [
        "sid-aplr/shapes-trial0.csv",
        "sid-pilid_lib/shapes-trial0.csv",
        "sid-pilid_lib/shapes-trial1.csv",
    ]
    # without a peer's shapes the figure is not drawn and its artefacts are not needed
    (tmp_path / "artifacts" / "sid-aplr" / "shapes-trial0.csv").unlink()
    assert figures.figure_artifacts(records, tmp_path) == []
