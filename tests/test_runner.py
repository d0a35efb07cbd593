"""The trial runner end to end through `python -m pilid.run`: records, resume, kill, sweeps."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pilid.data import load_dataset, make_split
from pilid.experiments import ResultStore, load_results, run_setting
from pilid.experiments.config import CONF_DIR
from pilid.experiments.model_config import builtin_estimator
from pilid.experiments.setting import setting_id
from pilid.experiments.store import RECORD_FIELDS, StoreWarning

TINY_DATA = ["data.N=300", "data.m=3", "data.n_interactions=2"]
TINY_PILID = [
    "model=pilid",
    "gamma=3",
    "model.hidden_layers=[8,8]",
    "train.epochs=3",
    "train.batch_size=64",
    "train.patience=null",
]
SUMMARY = re.compile(r"^(.+): (MSE|AUC) (\d+\.\d+) ± (\d+\.\d+) over (\d+) trials?$")


def _run(tmp_path, *args, results="results", multirun=False, timeout=300, check=True):
    """`python -m pilid.run [-m] args` with results and Hydra outputs under tmp_path."""
    command = [sys.executable, "-m", "pilid.run", *(["-m"] if multirun else []), *args]
    command += [
        f"results_dir={tmp_path / results}",
        f"hydra.run.dir={tmp_path / 'hydra'}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def _lines(tmp_path, results="results"):
    """The raw records file, one parsed record per line (fails on any unreadable line)."""
    data = (tmp_path / results / "records.jsonl").read_text()
    assert data.endswith("\n")
    return [json.loads(line) for line in data.splitlines()]


def _summaries(stdout):
    return [m.groups() for m in map(SUMMARY.match, stdout.splitlines()) if m]


def _compose(overrides):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def _dataset(record):
    options = dict(record["data"])
    return load_dataset(options.pop("name"), **options)


@pytest.mark.slow
def test_records_resume_extend_and_force(tmp_path):
    args = ["model=linear", *TINY_DATA, "trials=3", "seed=7"]
    first = _run(tmp_path, *args)
    records = _lines(tmp_path)
    assert [r["trial"] for r in records] == [0, 1, 2]
    assert [r["seed"] for r in records] == [7, 8, 9]
    for record in records:
        assert set(record) == set(RECORD_FIELDS)
        assert record["experiment"] == "adhoc" and record["dataset"] == "synthetic"
        assert record["model"] == "linear" and record["task"] == "regression"
        assert (record["N"], record["m"]) == (300, 3) and record["metric"] == "mse"
        assert record["device"] == "cpu" and record["fit_mode"] == "sequential"
        assert record["fit_seconds"] >= 0 and record["params"]["epochs"] == 100
        assert record["data"]["N"] == 300 and record["data"]["name"] == "synthetic"
        assert {"python", "torch", "numpy", "sklearn", "pilid"} <= set(record["versions"])
    assert len({r["setting_id"] for r in records}) == 1

    # each value is the test MSE of the model fitted on that trial's split, computed here anew
    dataset = _dataset(records[0])
    for record in records:
        split = make_split(dataset, record["seed"])
        model = builtin_estimator("linear", "regression", record["params"], record["seed"])
        model.fit(split.X_train, split.y_train)
        mse = np.mean((model.predict(split.X_test) - split.y_test) ** 2)
        assert record["value"] == pytest.approx(mse, rel=1e-9)

    values = np.array([r["value"] for r in records])
    ((label, metric, mean, std, n),) = _summaries(first.stdout)
    assert (label, metric, n) == ("linear synthetic-regression N=300 m=3", "MSE", "3")
    assert float(mean) == pytest.approx(values.mean(), abs=6e-5)
    assert float(std) == pytest.approx(values.std(ddof=1), abs=6e-5)

    # the same command again: nothing runs, nothing is written, the same summary is printed
    before = (tmp_path / "results" / "records.jsonl").read_bytes()
    again = _run(tmp_path, *args)
    assert (tmp_path / "results" / "records.jsonl").read_bytes() == before
    assert _summaries(again.stdout) == _summaries(first.stdout)

    # more trials: only the missing ones run
    _run(tmp_path, *args[:-2], "trials=5", "seed=7")
    records = _lines(tmp_path)
    assert [r["trial"] for r in records] == [0, 1, 2, 3, 4]

    # force=true redoes them; the reader keeps the newest record of each trial
    _run(tmp_path, *args[:-2], "trials=2", "seed=7", "force=true")
    records = _lines(tmp_path)
    assert [r["trial"] for r in records] == [0, 1, 2, 3, 4, 0, 1]
    assert records[5]["value"] == records[0]["value"]  # same seed, same device: same value
    frame = load_results(tmp_path / "results")
    assert sorted(frame["trial"]) == [0, 1, 2, 3, 4]
    assert sorted(frame["finished_at"])[-2:] == sorted(r["finished_at"] for r in records[5:])


@pytest.mark.slow
def test_batched_pilid_is_repeatable_and_matches_sequential(tmp_path):
    args = [*TINY_PILID, *TINY_DATA, "trials=3"]
    _run(tmp_path, *args, results="a")
    _run(tmp_path, *args, results="b")
    a, b = _lines(tmp_path, "a"), _lines(tmp_path, "b")
    assert [r["fit_mode"] for r in a] == ["batched"] * 3
    assert a[0]["params"]["gamma"] == 3 and a[0]["params"]["hidden_layers"] == [8, 8]
    assert [r["value"] for r in a] == [r["value"] for r in b]  # bit for bit
    assert len({r["value"] for r in a}) == 3  # trials differ

    # one by one (in this process, through the Python API): the same trials, the same setting
    cfg = _compose([*args, "train.batched=false", f"results_dir={tmp_path / 'c'}"])
    summary = run_setting(cfg)
    assert summary.n == 3 and summary.ran == 3 and summary.setting_id == a[0]["setting_id"]
    sequential = [r["value"] for r in summary.records]
    assert [r["fit_mode"] for r in summary.records] == ["sequential"] * 3
    np.testing.assert_allclose(sequential, [r["value"] for r in a], rtol=1e-4)
    assert summary.mean == pytest.approx(np.mean(sequential))
    assert summary.std == pytest.approx(np.std(sequential, ddof=1))
    assert summary.line.startswith("pilid gamma=3 synthetic-regression N=300 m=3: MSE ")

    # artefacts: the learned shapes, with x mapped back to the data's units
    dataset = _dataset(a[0])
    directory = tmp_path / "a" / "artifacts" / a[0]["setting_id"]
    for record in a:
        shapes = pd.read_csv(directory / f"shapes-trial{record['trial']}.csv")
        assert list(shapes.columns) == ["feature", "x", "x_original", "value"]
        split = make_split(dataset, record["seed"])
        assert set(shapes["feature"]) == set(split.feature_names)
        j = shapes["feature"].map({name: k for k, name in enumerate(split.feature_names)})
        expected = shapes["x"] * split.x_scale[j] + split.x_offset[j]
        np.testing.assert_allclose(shapes["x_original"], expected, rtol=1e-9)
        assert np.isfinite(shapes["value"]).all()


@pytest.mark.slow
def test_kill_mid_run_then_rerun_records_every_trial_once(tmp_path):
    trials = 8
    args = [
        *TINY_PILID[:-3],
        "train.epochs=25",
        "train.patience=null",
        "data.N=600",
        "data.m=3",
        "data.n_interactions=2",
        f"trials={trials}",
        "train.trials_per_batch=2",
    ]
    path = tmp_path / "results" / "records.jsonl"
    command = [sys.executable, "-m", "pilid.run", *args, f"results_dir={tmp_path / 'results'}"]
    command.append(f"hydra.run.dir={tmp_path / 'hydra'}")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # its own process group, as a job under a scheduler or a shell: SIGKILL reaches the runner and
    # the worker processes it trains trials in (train.n_jobs=auto)
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    killed_at = len(_lines(tmp_path))
    assert 2 <= killed_at < trials, "the run should have been killed in the middle"

    # a writer killed inside its write leaves half a line; the reader must still work
    with open(path, "ab") as handle:
        handle.write(b'{"setting_id": "x", "trial": 3, "val')
    with pytest.warns(StoreWarning):
        assert len(load_results(tmp_path / "results")) == killed_at

    rerun = _run(tmp_path, *args)
    ((label, _, _, _, n),) = _summaries(rerun.stdout)
    assert n == str(trials) and label == "pilid gamma=3 synthetic-regression N=600 m=3"
    lines = path.read_text().splitlines()
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    assert len(records) == len(lines) - 1  # only the torn line is unreadable
    assert sorted(r["trial"] for r in records) == list(range(trials))  # each exactly once
    with pytest.warns(StoreWarning):
        frame = load_results(tmp_path / "results")
    assert sorted(frame["trial"]) == list(range(trials))


@pytest.mark.slow
def test_process_pool_gives_the_sequential_values(tmp_path):
    args = ["model=linear", *TINY_DATA, "trials=3"]
    cfg = _compose([*args, f"results_dir={tmp_path / 'seq'}"])
    sequential = run_setting(cfg)
    _run(tmp_path, *args, "train.n_jobs=2", results="proc")
    records = _lines(tmp_path, "proc")
    assert sorted(r["trial"] for r in records) == [0, 1, 2]
    assert {r["fit_mode"] for r in records} == {"process"}
    by_trial = {r["trial"]: r["value"] for r in records}
    expected = [r["value"] for r in sequential.records]
    np.testing.assert_allclose([by_trial[t] for t in range(3)], expected, rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(
    "launcher",
    [
        [],
        ["hydra/launcher=pilid_joblib", "hydra.launcher.n_jobs=2"],
        ["hydra/launcher=pilid_local"],
    ],
    ids=["basic", "joblib", "submitit_local"],
)
def test_multirun_sweep_records_each_setting(tmp_path, launcher):
    args = [*launcher, "model=linear", "data.N=300", "data.m=2,3", "trials=2"]
    args.append("data.n_interactions=1")
    result = _run(tmp_path, *args, multirun=True)
    records = _lines(tmp_path)
    settings = {}
    for record in records:
        settings.setdefault((record["setting_id"], record["m"]), []).append(record["trial"])
    assert sorted((m, sorted(t)) for (_, m), t in settings.items()) == [(2, [0, 1]), (3, [0, 1])]
    if not launcher:  # the basic launcher runs the jobs in this process: their lines show
        assert len(_summaries(result.stdout)) == 2
        # a resumed sweep runs nothing new and prints the same summaries
        again = _run(tmp_path, *args, multirun=True)
        assert len(_lines(tmp_path)) == 4
        assert _summaries(again.stdout) == _summaries(result.stdout)


def test_slurm_launcher_config_extends_the_plugin():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated schema matching
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = compose(
                config_name="config",
                overrides=["hydra/launcher=pilid_slurm", "hydra.launcher.cpus_per_task=8"],
                return_hydra_config=True,
            )
    launcher = OmegaConf.to_container(cfg.hydra.launcher, resolve=True)
    from hydra.utils import get_class

    # pilid's subclass (one-line errors); Hydra's plugin scan re-creates the classes: by name
    bases = [f"{c.__module__}.{c.__name__}" for c in get_class(launcher["_target_"]).__mro__]
    assert any(name.endswith("submitit_launcher.SlurmLauncher") for name in bases)
    assert launcher["setup"][0] == "export OMP_NUM_THREADS=8"
    assert 'trap "" TERM' in launcher["setup"][1]  # the job's scontrol survives its requeue
    assert launcher["max_num_timeout"] >= 1  # safe: requeued jobs skip recorded trials
    assert {"partition", "account", "gres", "array_parallelism"} <= set(launcher)


def test_setting_id_of_a_run_matches_its_config(tmp_path):
    cfg = _compose(["model=linear", *TINY_DATA, "trials=1", f"results_dir={tmp_path}"])
    summary = run_setting(cfg)
    assert summary.setting_id == setting_id(cfg) == summary.records[0]["setting_id"]
    assert summary.line.endswith("over 1 trial") and summary.std == 0.0
    assert math.isfinite(summary.mean)
    assert ResultStore(tmp_path).done_trials(summary.setting_id) == {0}


@pytest.mark.slow
def test_block_model_writes_its_interactions(tmp_path):
    tiny_pilib = ["model=pilib", "gamma=3", "model.n_blocks=3", "model.block_layers=[4]"]
    tiny_pilib += ["model.phase1_epochs=3", "train.epochs=2"]
    cfg = _compose([*tiny_pilib, *TINY_DATA, "trials=1", f"results_dir={tmp_path}"])
    summary = run_setting(cfg)
    (record,) = summary.records
    assert record["model"] == "pilib" and record["fit_mode"] == "batched"
    directory = tmp_path / "artifacts" / summary.setting_id
    blocks = pd.read_csv(directory / "interactions-trial0.csv", keep_default_na=False)
    assert list(blocks.columns) == ["block", "features"]
    assert list(blocks["block"]) == list(range(len(blocks)))
    names = set(make_split(_dataset(record), record["seed"]).feature_names)
    assert all(set(group.split(";")) <= names for group in blocks["features"] if group)
    assert (directory / "shapes-trial0.csv").exists()


def test_block_model_interaction_grids_are_stored_in_original_units(tmp_path):
    """Figure 5's artefacts: one grid per pair of every order>=2 block, mapped to original units."""
    from types import SimpleNamespace

    from pilid.experiments.artefacts import artefact_frames
    from pilid.experiments.artefacts import write_artefacts as _write_artefacts

    class Blocks:  # the two methods the runner reads from a fitted block model
        def interactions_(self, min_order=1, min_interaction=0.05):
            assert min_interaction == 0.0 or min_order == 1
            return [("a", "b", "c")] if min_order == 2 else [("a",), ("a", "b", "c")]

        def interaction_grid(self, i, j, n=50):
            x = np.linspace(-1.0, 1.0, n)
            A, B = np.meshgrid(x, x, indexing="ij")
            return pd.DataFrame({"x_a": A.ravel(), "x_b": B.ravel(), "value": (A * B).ravel()})

    split = SimpleNamespace(
        feature_names=["a", "b", "c"],
        x_scale=np.array([2.0, 3.0, 4.0]),
        x_offset=np.array([10.0, 20.0, 30.0]),
    )
    frames = artefact_frames(Blocks(), split)
    _write_artefacts(tmp_path, 7, frames)
    stored = sorted(p.name for p in tmp_path.glob("interaction-grid-*.csv"))
    assert stored == [f"interaction-grid-trial7-{a}__{b}.csv" for a, b in ("ab", "ac", "bc")]
    grid = pd.read_csv(tmp_path / "interaction-grid-trial7-b__c.csv")
    assert grid["x_a"].min() == pytest.approx(20.0 - 3.0) and grid["x_a"].max() == 23.0
    assert grid["x_b"].min() == pytest.approx(30.0 - 4.0) and grid["x_b"].max() == 34.0
    np.testing.assert_allclose(grid["value"], ((grid["x_a"] - 20) / 3) * ((grid["x_b"] - 30) / 4))


def test_n_jobs_auto_picks_workers_per_device():
    from pilid.errors import PilidError
    from pilid.experiments.planning import resolve_n_jobs

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert resolve_n_jobs("auto", True, "cpu", 20) == min(cores, 20)
    assert resolve_n_jobs("auto", True, "cpu", 1) == 1  # one trial: no worker to spare
    assert resolve_n_jobs("auto", True, "cuda:0", 20) == 1  # the whole ensemble on the GPU
    assert resolve_n_jobs("auto", False, "cpu", 20) == 1  # baselines parallelise inside
    assert resolve_n_jobs(3, True, "cpu", 20) == 3
    for bad in (0, -1, "many", 2.5, True):
        with pytest.raises(PilidError, match="train.n_jobs"):
            resolve_n_jobs(bad, True, "cpu", 20)


def test_auto_blocks_of_a_bag_hold_about_as_many_members_as_plain_blocks_hold_trials():
    from pilid.experiments.planning import BLOCK_SIZE_CPU, BLOCK_SIZE_CUDA, resolve_block_size

    assert resolve_block_size("auto", "cpu") == BLOCK_SIZE_CPU
    assert resolve_block_size(None, "cuda", n_bags=1) == BLOCK_SIZE_CUDA
    assert resolve_block_size("auto", "cpu", n_bags=4) == BLOCK_SIZE_CPU // 4
    assert resolve_block_size("auto", "cuda", n_bags=4) == BLOCK_SIZE_CUDA // 4
    assert resolve_block_size("auto", "cpu", n_bags=16) == 1  # never an empty block
    assert resolve_block_size(7, "cpu", n_bags=16) == 7  # a number given is kept


def test_records_name_the_installed_model_libraries_versions(monkeypatch):
    """A record names the versions of the libraries that fit some model (EBM's numbers moved
    between two days, the recorded versions equal), where installed, and leaves out those that
    are not."""
    from importlib.metadata import version

    from pilid.experiments import runner

    libraries = {**runner.MODEL_LIBRARIES, "nothing": "no-such-distribution-pilid"}
    monkeypatch.setattr(runner, "MODEL_LIBRARIES", libraries)
    runner.versions.cache_clear()
    try:
        found = runner.versions()
    finally:
        runner.versions.cache_clear()
    assert found["scipy"] == version("scipy")
    assert found["interpret"] == version("interpret-core")
    assert "nothing" not in found
    assert {"python", "torch", "numpy", "pandas", "sklearn", "pilid"} <= set(found)
