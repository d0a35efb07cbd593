"""One sweep expander (`pilid.experiments.grid`): the jobs Hydra's basic sweeper runs, used by
the report's grids, the setting ids, the command line's pre-check and the tests."""

from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser

from pilid.experiments.config import CONF_DIR, group_options
from pilid.experiments.grid import expand, experiment_jobs, first_values, sweep_axes, sweep_params
from pilid.report.records import Setting, _setting_fields, compose_experiment_grid


def _hydra_jobs(overrides: list[str]) -> list[list[str]]:
    """Hydra's own expansion: the basic sweeper's jobs, one batch."""
    parsed = OverridesParser.create().parse_overrides(overrides)
    return BasicSweeper.split_arguments(parsed, max_batch_size=None)[0]


@pytest.mark.parametrize(
    "overrides",
    [
        ["data.N=5000,10000", "data.m=10,20,30", "+experiment/method=pilid-1,mlp"],
        ["model=pilid,mlp", "model.hidden_layers=[16,16]", "gamma=range(1,4)"],
        ["gamma=1,5", "data=bike", "gamma=10,15,20"],  # a key given twice: its last values
        ["x=choice(a,b)", "~model.n_bags", "trials=2"],
    ],
)
def test_expand_gives_the_basic_sweepers_jobs_in_its_order(overrides):
    assert expand(overrides) == _hydra_jobs(overrides)


def test_a_list_value_is_one_value_and_parsed_values_keep_their_types():
    (hidden, n) = sweep_axes(["model.hidden_layers=[16,16]", "data.N=1000,2000"])
    assert hidden.values == ("[16,16]",) and hidden.parsed == ([16, 16],)
    assert n.values == ("1000", "2000") and n.parsed == (1000, 2000)


@pytest.mark.slow
@pytest.mark.parametrize("name", group_options("experiment"))
def test_every_experiment_expands_as_hydras_sweeper_launches_it(name):
    jobs = experiment_jobs(name)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        base = compose("config", overrides=[f"experiment={name}"], return_hydra_config=True)
    # the sweeper puts the config's params first and the command line's overrides after them
    hydra = _hydra_jobs([*sweep_params(base), f"experiment={name}"])
    assert [[job[-1], *job[:-1]] for job in hydra] == jobs
    assert len(jobs) == len({" ".join(job) for job in jobs})


def test_first_values_puts_each_sweep_at_its_first_value_and_keeps_the_rest_as_written():
    args = [
        "data.N=5000,10000",
        "+model.extra=3",
        "model.hidden_layers=[16,16]",
        "gamma=range(2,5)",
    ]
    first = ["data.N=5000", "+model.extra=3", "model.hidden_layers=[16,16]", "gamma=2"]
    assert first_values(args) == first


def test_the_reports_grid_is_every_job_composed_in_full():
    """`compose_experiment_grid` composes each config-group value once and sets plain keys on
    copies; composing a job whole gives its setting (every third job, for time)."""
    name = "smoke_sim_regression"  # plain axes data.N, data.m and a group axis, 40 settings
    jobs = experiment_jobs(name)
    grid = compose_experiment_grid(name)
    assert len(grid.settings) == len(jobs) == 40
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for index in range(0, len(jobs), 3):
            composed = compose("config", overrides=jobs[index])
            assert grid.settings[index] == Setting(**_setting_fields(composed)), jobs[index]
