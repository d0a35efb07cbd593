"""Bad input to the runner and its store: one clear line, nothing lost, no result changed
(runs that never lie)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hydra import compose, initialize_config_dir

from pilid.errors import PilidError
from pilid.experiments import ResultStore, run_setting
from pilid.experiments import runner as runner_module
from pilid.experiments.artefacts import ranked_pairs
from pilid.experiments.config import CONF_DIR, check_config, normalize_config, normalize_overrides
from pilid.experiments.setting import setting_id
from pilid.experiments.store import StoreWarning

FAST = ["model=linear", "data.N=300", "data.m=3", "data.n_interactions=1", "trials=2"]


def _compose(*overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def _cli(tmp_path, *args, multirun=False):
    command = [sys.executable, "-m", "pilid.run", *(["-m"] if multirun else []), *args]
    if not any(a.startswith("results_dir=") for a in args):
        command.append(f"results_dir={tmp_path / 'results'}")
    command += [f"hydra.run.dir={tmp_path / 'hydra'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def _one_error_line(result) -> str:
    assert result.returncode == 2, result.stderr[-2000:]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr
    assert lines and lines[0].startswith("pilid: error: "), result.stderr
    return lines[0]


# -- 2. unknown keys ----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "override, key, valid",
    [
        ("+train.epoch=3", "train.epoch", "epochs"),
        ("+model.gamm=3", "model.gamm", "gamma"),
        ("+data.Nn=500", "data.Nn", "n_interactions"),
        ("+trail=3", "'trail'", "trials"),
    ],
)
def test_unknown_keys_stop_the_run_listing_the_valid_ones(override, key, valid):
    with pytest.raises(PilidError, match="unknown key") as info:
        check_config(_compose(override))
    message = str(info.value)
    assert key in message and valid in message and "\n" not in message


@pytest.mark.slow
def test_typo_on_the_command_line_runs_nothing(tmp_path):
    line = _one_error_line(_cli(tmp_path, *FAST, "+train.epoch=3"))
    assert "train.epoch" in line and "epochs" in line
    assert not (tmp_path / "results" / "records.jsonl").exists()


@pytest.mark.slow
def test_every_experiment_setting_passes_the_key_check():
    for name in ("real_data", "sim_regression", "init_significance", "spambase_interactions"):
        check_config(_compose(f"experiment={name}"))


def test_loader_options_are_valid_data_keys():
    check_config(_compose("data.interaction_share=0.3", "data.degree=5"))
    check_config(_compose("data=skill", "data.verify=false", "data.download=false"))


# -- 3. equal settings, one id ------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    "a, b",
    [
        ("data.N=1e3", "data.N=1000"),
        ("model.lam=0", "model.lam=0.0"),
        ("train.epochs=50.0", "train.epochs=50"),
        ("gamma=5.0", "gamma=5"),
    ],
)
def test_equal_values_give_one_setting_id(a, b):
    # the command line writes a whole number typed as a float as an int (the schema's type)
    (a,) = normalize_overrides([a])
    assert setting_id(_compose(a)) == setting_id(_compose(b))
    config = normalize_config(_resolved(_compose(a)))
    assert config == normalize_config(_resolved(_compose(b)))


def test_plain_dict_values_are_normalised_to_the_schema_types():
    config = _resolved(_compose())
    config["data"]["N"], config["model"]["lam"], config["trials"] = 1e3, 0, 20.0
    normalized = normalize_config(config)
    assert normalized["data"]["N"] == 1000 and type(normalized["data"]["N"]) is int
    assert normalized["model"]["lam"] == 0.0 and type(normalized["model"]["lam"]) is float
    assert type(normalized["trials"]) is int
    assert setting_id(config) == setting_id(_compose("data.N=1000", "model.lam=0.0"))


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["data.N=1e3"], ["data.N=1000"]),
        (["data.N=5e3,1e4"], ["data.N=5000,10000"]),
        (["data.N=2.5"], ["data.N=2.5"]),  # not a whole number: the schema refuses it
        (["model.lam=1e3"], ["model.lam=1e3"]),  # a float key stays as typed
        (["-m", "gamma=5.0", "data=skill"], ["-m", "gamma=5", "data=skill"]),
    ],
)
def test_command_line_whole_numbers_are_written_as_ints(argv, expected):
    assert normalize_overrides(argv) == expected


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["model.gamm=3"], "unknown key model.gamm for model 'pilid'; valid keys: sigma"),
        (["trials=abc"], "trials='abc' is invalid"),
        (["force=maybe"], "use force=true|false"),
        (["data=bank", "data.N=5"], "unknown key data.N for data 'bank'"),
        (["+data.degree=5"], "set it without the '+': data.degree=5"),
    ],
)
def test_hydra_refuses_what_the_schema_lacks_in_one_line(args, fragment):
    """The typed configs make Hydra refuse these when it composes; the CLI's pre-check turns its
    several lines into one (no training, no Hydra app)."""
    from pilid.run import check_composition

    with pytest.raises(PilidError) as info:
        check_composition(args)
    message = str(info.value)
    assert fragment in message and "\n" not in message


def _resolved(cfg):
    from pilid.experiments.setting import resolved_config

    return resolved_config(cfg)


def test_different_values_keep_different_ids():
    assert setting_id(_compose("data.N=1000")) != setting_id(_compose("data.N=1001"))
    assert setting_id(_compose("data.noise=0.5")) != setting_id(_compose("data.noise=1"))


def test_verify_and_download_do_not_change_the_setting():
    assert setting_id(_compose("data=skill")) == setting_id(
        _compose("data=skill", "data.verify=false", "data.download=false")
    )


# Setting ids of experiments already run (computed by the code before this change): records
# made before must stay valid. The simulation experiments' ids are those since they moved to
# the demo generator (data.generator=demo, before any of their trials was recorded).
GOLDEN_IDS = {
    ("experiment=real_data", "data=skill", "model=pilid"): "d40d153e577e170c",
    ("experiment=real_data", "data=bike", "model=ga2m"): "ae0d8fdde76c36ee",
    ("experiment=real_data", "data=bank", "model=mlp"): "23cbd8a581488f02",
    (
        "experiment=sim_regression",
        "data.N=20000",
        "data.m=50",
        "+experiment/method=pilid-5",
    ): "3b7850cbb641939e",
    (
        "experiment=sim_regression",
        "data.N=5000",
        "data.m=10",
        "+experiment/method=gam",
    ): "a25b6262c425e4bc",
    (
        "experiment=init_significance",
        "data.N=10000",
        "data.m=30",
        "gamma=15",
        "model.init=gaussian",
    ): "f90affac9433cf5e",
}


@pytest.mark.parametrize("overrides", list(GOLDEN_IDS), ids=lambda o: " ".join(o[1:]))
def test_setting_ids_of_existing_experiments_do_not_change(overrides):
    assert setting_id(_compose(*overrides)) == GOLDEN_IDS[overrides]


# -- 4. silent no-ops -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "override, fragment",
    [
        ("train.trials_per_batch=0", "train.trials_per_batch=0 is invalid"),
        ("train.n_jobs=0", "train.n_jobs=0 is invalid"),
        ("results_dir=", "results_dir='' is empty"),
        ("seed=-1", "seed=-1 is invalid"),
    ],
)
def test_no_op_values_are_errors(override, fragment):
    with pytest.raises(PilidError, match=fragment.replace("(", r"\(")):
        check_config(_compose(override))


def test_seed_error_names_the_seed_that_was_typed():
    with pytest.raises(PilidError) as info:
        check_config(_compose("seed=4294967295", "trials=20"))
    message = str(info.value)
    assert message.startswith("seed=4294967295 with trials=20")
    assert "4294967296" not in message and "seed <= 4294967276" in message


def test_too_little_data_for_a_metric_is_an_error(tmp_path):
    with pytest.raises(PilidError, match="too few for a metric"):
        run_setting(_compose(*FAST, "data.N=5", f"results_dir={tmp_path}"))
    assert not (tmp_path / "records.jsonl").exists() or not ResultStore(tmp_path).records()


def test_null_value_is_skipped_with_a_warning_not_summarised_as_nan(tmp_path):
    cfg = _compose(*FAST, f"results_dir={tmp_path}")
    run_setting(cfg)
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    broken = json.loads(lines[1])
    broken["value"] = None
    (tmp_path / "records.jsonl").write_text(lines[0] + "\n" + json.dumps(broken) + "\n")
    with pytest.warns(StoreWarning, match=r"line 2 is not a valid record \('value' is None"):
        summary = run_setting(cfg)
    assert summary.ran == 1 and summary.n == 2 and "nan" not in summary.line


# -- 6-8. the results store -------------------------------------------------------------------
def test_results_dir_that_is_a_file_is_refused_and_left_alone(tmp_path):
    notes = tmp_path / "afile"
    notes.write_text("notes\n")
    with pytest.raises(PilidError, match="is a file, not a directory"):
        run_setting(_compose(*FAST, f"results_dir={notes}"))
    assert notes.read_text() == "notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("bad", [{"value": "abc"}, {"trial": "1"}, {"trial": -1}, {"value": None}])
def test_records_of_the_wrong_type_are_skipped_and_never_block_a_setting(tmp_path, bad):
    cfg = _compose(*FAST, f"results_dir={tmp_path}")
    first = run_setting(cfg)
    path = tmp_path / "records.jsonl"
    lines = path.read_text().splitlines()
    record = {**json.loads(lines[0]), **bad}
    path.write_text(json.dumps(record) + "\n" + lines[1] + "\n")
    for _ in range(2):  # the bad line is skipped every time; the trial reruns once
        with pytest.warns(StoreWarning, match=rf"{path}: line 1 is not a valid record"):
            summary = run_setting(cfg)
        assert summary.n == 2
        assert summary.mean == pytest.approx(first.mean, rel=1e-12)


def test_read_only_store_is_refused_before_any_training(tmp_path, monkeypatch):
    cfg = _compose(*FAST, f"results_dir={tmp_path}")
    run_setting(_compose(*FAST, "trials=1", f"results_dir={tmp_path}"))
    records = tmp_path / "records.jsonl"
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if os.fspath(path) == os.fspath(records) and flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    def no_training(*args, **kwargs):
        raise AssertionError("trained although the store cannot take the records")

    monkeypatch.setattr(os, "open", read_only)
    monkeypatch.setattr(runner_module, "_run_trials", no_training)
    with pytest.raises(PilidError, match="cannot write results to .*records.jsonl"):
        run_setting(cfg)


def test_records_path_that_is_a_directory_is_one_line(tmp_path):
    (tmp_path / "records.jsonl").mkdir()
    with pytest.raises(PilidError, match="is a directory, not a records file"):
        run_setting(_compose(*FAST, f"results_dir={tmp_path}"))


# -- 11. a sweep is checked before its first setting trains ---------------------------------------
@pytest.mark.slow
def test_sweep_with_one_bad_value_runs_nothing(tmp_path):
    result = _cli(
        tmp_path,
        "model=pilid",
        "gamma=1,0,5",
        "data.N=300",
        "trials=1",
        "train.epochs=1",
        multirun=True,
    )
    line = _one_error_line(result)
    assert "gamma=0" in line
    assert not (tmp_path / "results" / "records.jsonl").exists()


@pytest.mark.slow
def test_sweep_with_a_bad_baseline_parameter_runs_nothing(tmp_path):
    result = _cli(tmp_path, "model=rf", "model.n_estimators=10,0", *FAST[1:], multirun=True)
    line = _one_error_line(result)
    assert "model.n_estimators=0" in line
    assert not (tmp_path / "results" / "records.jsonl").exists()


# -- 15. the stored interaction grids are the strongest pairs -----------------------------------
class _Blocks:
    """A fitted block model's summary: which features each block uses, and how strongly."""

    def __init__(self, features, interaction, share):
        self.block_features_ = np.array(features, dtype=bool)
        self.block_interaction_share_ = np.array(interaction)
        self.block_share_ = np.array(share)

    def active_blocks_(self):
        return np.flatnonzero(self.block_features_.sum(1) > 0)


def test_pairs_are_ranked_by_their_blocks_contribution():
    blocks = _Blocks(
        features=[[1, 1, 0, 0, 0], [0, 0, 0, 1, 1], [0, 0, 1, 1, 1], [0, 1, 0, 0, 0]],
        interaction=[0.01, 0.30, 0.10, 0.50],
        share=[0.20, 0.40, 0.20, 0.90],
    )
    pairs = ranked_pairs(blocks, [f"x{j}" for j in range(5)])
    # block 1 (3, 4) is strongest; block 2's pairs next; block 0's (0, 1) last, though first
    # in column order; block 3 is a single feature and gives no pair
    assert pairs == [(3, 4), (2, 3), (2, 4), (0, 1)]


def test_warnings_are_not_raised_by_a_clean_run(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StoreWarning)
        run_setting(_compose(*FAST, f"results_dir={tmp_path}"))
        run_setting(_compose(*FAST, f"results_dir={tmp_path}"))
