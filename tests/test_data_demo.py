"""The demo code's simulation (`pilid.data.demo`): its data recomputed from its truth, nesting in
N, the label rules, its true shapes through the report's fidelity path, and its configuration."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from scipy import stats

from pilid.data import load_dataset, make_split
from pilid.data.demo import PAIRS_PER_FEATURE, default_pairs, generate_demo, make_demo_truth
from pilid.data.synthetic import make_true_shapes
from pilid.errors import PilidError
from pilid.experiments.config import CONF_DIR, check_config
from pilid.experiments.setting import setting_id
from pilid.report.shapes import evaluator_for, trial_fidelity

ROOT = Path(__file__).resolve().parents[1]
TRUTH = ("factors", "coef", "pairs")


def _recompute(X, coef, pairs):
    """The noiseless score from the truth's arrays with plain numpy, not the module's code:
    u_j(x) = sum_k coef[j, k] x^k, the products appended one at a time to the growing list of
    columns, the sum of every column."""
    powers = X[:, :, None] ** np.arange(coef.shape[1])  # (n, m, degree + 1)
    columns = list((powers * coef).sum(axis=2).T)
    for a, b in pairs:
        columns.append(columns[a] * columns[b])
    return np.sum(columns, axis=0)


def _same_truth(a, b) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in TRUTH)


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def _data(cfg) -> dict:
    """The composed ``data`` section, resolved (what the runner loads and records)."""
    return OmegaConf.to_container(cfg.data, resolve=True)


# -- the data, from the truth -------------------------------------------------------------------
def test_target_is_the_sum_of_marginal_values_and_products_recomputed_from_the_truth():
    m, k, N = 6, 25, 20000
    X, y, truth = generate_demo(N, m, n_interactions=k, noise=0.0, seed=7)
    assert truth.coef.shape == (m, 11) and truth.pairs.shape == (k, 2)
    assert np.all(truth.coef[:, 0] == 0) and np.all(np.abs(truth.coef[:, 1:]) < 1)
    assert np.all((truth.factors > 0) & (truth.factors < 1))
    assert np.all((X >= 0) & (X <= truth.factors))
    # each product picks two of the columns already there (marginal values, earlier products)
    assert np.all((truth.pairs >= 0) & (truth.pairs < (m + np.arange(k))[:, None]))
    score = _recompute(X, truth.coef, truth.pairs)
    np.testing.assert_allclose(y, score, rtol=1e-12, atol=1e-12)
    # the same rows with noise: the residual is N(0, 0.5^2)
    Xn, yn, _ = generate_demo(N, m, n_interactions=k, noise=0.5, seed=7)
    np.testing.assert_array_equal(Xn, X)
    residual = yn - score
    assert abs(residual.mean()) < 4 * 0.5 / math.sqrt(N)
    assert residual.std() == pytest.approx(0.5, abs=4 * 0.5 / math.sqrt(2 * N))
    assert stats.kstest(residual / 0.5, "norm").pvalue > 1e-3
    # features: U(0, 1) times their factor
    for j in range(m):
        assert stats.kstest(X[:, j] / truth.factors[j], "uniform").pvalue > 1e-3


def test_coefficients_factors_and_pairs_have_the_demo_distributions():
    truth = make_demo_truth(60, seed=1, n_interactions=0)
    assert stats.kstest(truth.coef[:, 1:].ravel(), "uniform", args=(-1, 2)).pvalue > 1e-3
    assert stats.kstest(truth.factors, "uniform").pvalue > 1e-3
    m, k = 5, 4000
    pairs = make_demo_truth(m, seed=2, n_interactions=k).pairs
    width = m + np.arange(k)  # columns there when product i is drawn
    for observed, expected in [
        (pairs[:, 0] == pairs[:, 1], 1.0 / width),  # with replacement: squares occur
        (pairs[:, 0] >= m, (width - m) / width),  # products of earlier products occur
        (pairs[:, 1] >= m, (width - m) / width),
    ]:
        sd = math.sqrt((expected * (1 - expected)).sum())
        assert abs(observed.sum() - expected.sum()) < 4 * sd
    # uniform over the columns there: the position within the width is U(0, 1)
    position = (pairs + 0.5) / width[:, None]
    assert stats.kstest(position.ravel(), "uniform").pvalue > 1e-3


# -- nesting and what the truth depends on ------------------------------------------------------
@pytest.mark.parametrize(
    "task, label", [("regression", "threshold"), ("classification", "threshold"),
                    ("classification", "bernoulli")],
)  # fmt: skip
def test_rows_are_nested_in_N(task, label):
    small = generate_demo(50, 7, task=task, label=label, n_interactions=30, seed=4)
    large = generate_demo(600, 7, task=task, label=label, n_interactions=30, seed=4)
    np.testing.assert_array_equal(small[0], large[0][:50])
    np.testing.assert_array_equal(small[1], large[1][:50])
    assert _same_truth(small[2], large[2])
    ds_small = load_dataset("synthetic", generator="demo", N=50, m=7, task=task, label=label)
    ds_large = load_dataset("synthetic", generator="demo", N=600, m=7, task=task, label=label)
    np.testing.assert_array_equal(ds_small.X.to_numpy(), ds_large.X.to_numpy()[:50])
    np.testing.assert_array_equal(ds_small.y, ds_large.y[:50])


def test_truth_depends_only_on_data_seed_m_and_the_pair_count():
    base = generate_demo(30, 8, n_interactions=40, noise=0.1, seed=9)[2]
    other_data = generate_demo(
        700, 8, task="classification", label="median", n_interactions=40, noise=0.9, seed=9
    )[2]
    assert _same_truth(base, other_data)
    assert _same_truth(base, make_demo_truth(8, seed=9, n_interactions=40))
    assert _same_truth(base, make_true_shapes(8, seed=9, n_interactions=40, generator="demo"))
    other_seed = make_demo_truth(8, seed=10, n_interactions=40)
    assert not any(np.array_equal(getattr(base, k), getattr(other_seed, k)) for k in TRUTH)
    # more products: the same factors, coefficients and first 40 products
    more = make_demo_truth(8, seed=9, n_interactions=90)
    np.testing.assert_array_equal(more.factors, base.factors)
    np.testing.assert_array_equal(more.coef, base.coef)
    np.testing.assert_array_equal(more.pairs[:40], base.pairs)
    # no count given: the calibrated default for m
    default = make_demo_truth(8, seed=9)
    assert default.n_interactions == default_pairs(8) == PAIRS_PER_FEATURE * 8
    np.testing.assert_array_equal(default.pairs[:40], base.pairs)


# -- labels -------------------------------------------------------------------------------------
@pytest.mark.parametrize("N", [1000, 1001])
def test_median_labels_split_the_noiseless_score_into_equal_halves(N):
    X, y, truth = generate_demo(
        N, 8, task="classification", label="median", n_interactions=30, seed=3
    )
    assert y.dtype == np.int64 and set(np.unique(y)) == {0, 1}
    assert (y == 0).sum() == math.ceil(N / 2) and (y == 1).sum() == N // 2
    score = _recompute(X, truth.coef, truth.pairs)
    assert score[y == 1].min() >= score[y == 0].max()
    noisy = generate_demo(
        N, 8, task="classification", label="median", n_interactions=30, seed=3, noise=2.0
    )[1]
    np.testing.assert_array_equal(noisy, y)  # the noiseless score: noise plays no part


def test_threshold_labels_are_the_sign_of_the_noisy_score():
    kw = dict(N=3000, m=8, n_interactions=30, seed=3, noise=0.5)
    X, y, truth = generate_demo(task="classification", label="threshold", **kw)
    Xr, noisy_score, _ = generate_demo(task="regression", **kw)
    np.testing.assert_array_equal(X, Xr)
    score = _recompute(X, truth.coef, truth.pairs)
    residual = noisy_score - score  # the regression target is the score plus the noise
    assert residual.std() == pytest.approx(0.5, rel=0.1)
    np.testing.assert_array_equal(y, (score + residual >= 0).astype(np.int64))
    # the noise flips label i with probability Phi(-|s_i| / 0.5): as many as that predicts
    flip = stats.norm.cdf(-np.abs(score) / 0.5)
    flips = (y != (score >= 0)).sum()
    assert abs(flips - flip.sum()) < 4 * math.sqrt((flip * (1 - flip)).sum())
    noiseless = generate_demo(task="classification", label="threshold", **{**kw, "noise": 0.0})
    np.testing.assert_array_equal(noiseless[1], (score >= 0).astype(np.int64))


# -- true shapes through the report's fidelity path ---------------------------------------------
def _true_frame(truth, n_points=1000, offset=3.0):
    """Shape artefact rows (``feature, x, x_original, value``, as the runner stores them) of the
    true u_j on each feature's range, shifted by ``offset`` (the fidelity centres both sides)."""
    frames = []
    for j, name in enumerate(truth.feature_names):
        x = np.linspace(0.0, truth.factors[j], n_points)
        value = (x[:, None] ** np.arange(truth.coef.shape[1])) @ truth.coef[j] + offset
        frames.append(
            pd.DataFrame(
                {"feature": name, "x": x / truth.factors[j], "x_original": x, "value": value}
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_true_shapes_score_r2_one_against_themselves_through_the_report():
    data = _data(_compose(["experiment=sim_regression", "data.N=300", "data.m=6"]))
    assert data["generator"] == "demo"
    options = {k: v for k, v in data.items() if k != "name"}
    dataset = load_dataset(data["name"], **options)  # what the runner loads ...
    evaluator = evaluator_for(data)  # ... and the truth the report rebuilds from the record
    truth = dataset.true_shapes
    assert _same_truth(evaluator.true_shapes, truth)
    assert truth.n_interactions == default_pairs(6)
    assert trial_fidelity(_true_frame(truth), evaluator) > 0.9999
    # a truth of another data seed scores far lower: the check can fail
    other = make_demo_truth(6, seed=int(data["data_seed"]) + 1, n_interactions=0)
    wrong = _true_frame(other)
    wrong["x_original"] = wrong["x"].to_numpy() * np.repeat(truth.factors, 1000)  # same ranges
    assert trial_fidelity(wrong, evaluator) < 0.5


@pytest.mark.slow
def test_pilid_recovers_the_demo_shapes_without_interactions():
    from pilid.estimators import PiLiDRegressor
    from pilid.experiments.artefacts import artefact_frames

    # the first data seed whose features all span at least [0, 0.3] (a feature squeezed into
    # [0, 0.05] has a nearly flat shape that no noise level leaves recoverable)
    seed = next(s for s in range(100) if make_demo_truth(3, s, 0).factors.min() >= 0.3)
    data = dict(name="synthetic", generator="demo", N=1000, m=3, n_interactions=0, noise=0.05,
                data_seed=seed)  # fmt: skip
    dataset = load_dataset("synthetic", **{k: v for k, v in data.items() if k != "name"})
    split = make_split(dataset, 0)
    est = PiLiDRegressor(
        gamma=10, hidden_layers=(16, 8), epochs=30, batch_size=64, random_state=0, device="cpu"
    ).fit(split.X_train, split.y_train)
    shapes = artefact_frames(est, split)["shapes"]  # what the runner stores per trial
    evaluator = evaluator_for(data)
    per_feature = [trial_fidelity(rows, evaluator) for _, rows in shapes.groupby("feature")]
    assert min(per_feature) > 0.9, per_feature
    assert trial_fidelity(shapes, evaluator) > 0.95


# -- configuration ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "experiment, method, label",
    [("sim_regression", "pilid-5", None), ("sim_classification", "linear", "threshold"),
     ("init_significance", None, None), ("smoke_sim_regression", "rf", None)],
)  # fmt: skip
def test_simulation_experiments_select_the_demo_generator(experiment, method, label):
    overrides = [f"experiment={experiment}", "data.N=5000", "data.m=10"]
    overrides += [f"+experiment/method={method}"] if method else []
    cfg = _compose(overrides)
    check_config(cfg)
    data = _data(cfg)
    assert data["generator"] == "demo" and data["n_interactions"] is None
    if label:
        assert data["label"] == label
    small = load_dataset("synthetic", **{k: v for k, v in data.items() if k != "name"} | {"N": 200})
    assert small.true_shapes.n_interactions == default_pairs(10)
    assert small.info["generator"]["generator"] == "demo"


@pytest.mark.slow
def test_generator_option_on_the_command_line_and_a_typo_fails_with_one_line(tmp_path):
    plain = _compose([])
    demo = _compose(["data.generator=demo"])
    check_config(demo)
    assert setting_id(demo) != setting_id(plain)  # demo runs never fill the default's cells
    # the key is listed since the typed configs, and left out of the id at its default, so the
    # setting ids from before it was listed stay as they were
    assert plain.data.generator == "legendre"
    without = OmegaConf.to_container(plain, resolve=True)
    del without["data"]["generator"]
    assert setting_id(plain) == setting_id(without)
    with pytest.raises(PilidError) as info:
        check_config(_compose(["+data.generatr=demo"]))
    message = str(info.value)
    assert "data.generatr" in message and "generator" in message and "\n" not in message
    with pytest.raises(PilidError) as info:
        load_dataset("synthetic", generator="demoo", N=50)
    assert "demoo" in str(info.value) and "\n" not in str(info.value)
    # and through `python -m pilid.run`: exit status 2 and one line on stderr
    result = subprocess.run(
        [sys.executable, "-m", "pilid.run", "+data.generatr=demo", "dry_run=true",
         f"results_dir={tmp_path / 'results'}", f"hydra.run.dir={tmp_path / 'hydra'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pilid: error:") and "generatr" in lines[0]
