"""Every experiment config composes, and its sweep expands to the paper's grid of settings."""

from __future__ import annotations

import itertools

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pilid.experiments.config import CONF_DIR, check_config, group_options
from pilid.report.records import experiment_grid

PAPER = (
    "sim_regression",
    "sim_classification",
    "init_significance",
    "real_data",
    "skill_shapes",
    "spambase_interactions",
)
EXPERIMENTS = PAPER + tuple(f"smoke_{name}" for name in PAPER)
GAMMAS = (1, 5, 10, 15, 20)
SIM_METHODS = [("pilid", g, "lstsq") for g in GAMMAS] + [
    (m, None, None) for m in ("mlp", "svm", "rf", "linear", "gam")
]
REAL_DATA = ("bike", "bank", "spambase", "skill")
REAL_MODELS = ("pilid", "pilib", "mlp", "nit", "ga", "gam", "ga2m", "ebm", "pilid_lib")


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides, return_hydra_config=True)


@pytest.fixture(scope="module")
def grids():
    return {name: experiment_grid(name) for name in EXPERIMENTS}


def test_the_experiment_group_has_every_paper_artefact():
    assert set(EXPERIMENTS) <= set(group_options("experiment"))


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_composes_with_its_own_values(name):
    cfg = _compose([f"experiment={name}"])
    check_config(cfg)
    assert cfg.experiment_name == name, (
        "the experiment's values do not reach the composed config: conf/config.yaml must list "
        "`experiment: null` after `_self_` in its defaults"
    )
    assert cfg.hydra.sweeper.params, "the sweep grid belongs in hydra.sweeper.params"
    if name.startswith("smoke_"):
        assert cfg.trials <= 3 and cfg.train.epochs <= 3
    else:
        assert cfg.trials == 20 and cfg.train.epochs == 100


def _keys(grid):
    return [(s.N, s.m, s.model, s.gamma, s.init) for s in grid.settings]


@pytest.mark.slow
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_simulation_grid_is_n_by_m_by_method(grids, task):
    grid = grids[f"sim_{task}"]
    expected = [
        (N, m, model, gamma, init)
        for N in (5000, 10000, 15000, 20000)
        for m in (10, 20, 30, 40, 50)
        for model, gamma, init in SIM_METHODS
    ]
    assert sorted(_keys(grid), key=str) == sorted(expected, key=str)
    assert len(grid.settings) == 200  # every baseline once per (N, m), not once per gamma
    assert {s.task for s in grid.settings} == {task} and grid.trials == 20
    assert {s.dataset for s in grid.settings} == {"synthetic"}


@pytest.mark.slow
def test_init_significance_grid_crosses_gamma_and_init(grids):
    grid = grids["init_significance"]
    expected = itertools.product(
        (5000, 10000, 15000, 20000), (10, 20, 30, 40, 50), ["pilid"], GAMMAS, ("lstsq", "gaussian")
    )
    assert sorted(_keys(grid)) == sorted(expected)
    assert {s.task for s in grid.settings} == {"regression"}


@pytest.mark.slow
def test_real_data_grid_is_every_model_on_every_data_set(grids):
    grid = grids["real_data"]
    pairs = {(s.dataset, s.model) for s in grid.settings}
    assert pairs == set(itertools.product(REAL_DATA, REAL_MODELS))
    assert len(grid.settings) == len(pairs)
    for s in grid.settings:
        if s.model in ("pilid", "pilib") and s.gamma is not None:
            assert s.gamma == 5  # the paper's gamma_j = 5 for both
    assert {s.task for s in grid.settings if s.dataset == "bike"} <= {"regression", None}


@pytest.mark.slow
def test_skill_shapes_grid_is_pilid_on_skill_for_every_gamma(grids):
    grid = grids["skill_shapes"]
    assert sorted((s.dataset, s.model, s.gamma) for s in grid.settings) == [
        ("skill", "pilid", g) for g in GAMMAS
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPER)
def test_smoke_variant_keeps_the_rows_and_shrinks_the_grid(grids, name):
    full, smoke = grids[name], grids[f"smoke_{name}"]
    rows = {(s.dataset, s.model, s.gamma, s.init, s.task) for s in full.settings}
    assert {(s.dataset, s.model, s.gamma, s.init, s.task) for s in smoke.settings} == rows
    assert len(smoke.settings) <= len(full.settings)
    assert all(s.N is None or s.N <= 1000 for s in smoke.settings)
    assert smoke.trials < full.trials


def test_a_sweep_job_composes_and_passes_the_checks():
    cfg = _compose(
        ["experiment=smoke_sim_regression", "+experiment/method=pilid-15", "data.N=800", "data.m=8"]
    )
    check_config(cfg)
    resolved = OmegaConf.to_container(cfg.model, resolve=True)
    assert resolved["name"] == "pilid" and resolved["gamma"] == 15
    assert (cfg.data.N, cfg.data.m, cfg.data.task) == (800, 8, "regression")
    baseline = _compose(["experiment=smoke_sim_regression", "+experiment/method=rf"])
    assert baseline.model.name == "rf" and "gamma" not in baseline.model
