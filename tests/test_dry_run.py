"""`dry_run=true`: the trials a sweep has recorded and the time its missing trials will take,
estimated from the records' fit times; nothing trains and the records file stays as it was."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from test_runner import TINY_DATA, TINY_PILID, _compose  # the runner tests' tiny settings

from pilid.experiments import run_setting
from pilid.experiments.planning import plan_setting
from pilid.experiments.store import ResultStore, records_in


def _records(results):
    return ResultStore(records_in(str(results))).records()


def test_plan_counts_recorded_trials_and_scales_fit_time(tmp_path):
    results = tmp_path / "results"
    base = ["model=linear", *TINY_DATA, f"results_dir={results}"]
    run_setting(_compose([*base, "trials=3"]))
    fit = np.array([r["fit_seconds"] for r in _records(results)])
    assert fit.size == 3

    # the recorded setting asked for 5 trials: 3 recorded, 2 to run at the median fit time
    plan = plan_setting(_compose([*base, "trials=5"]))
    assert (plan.trials, plan.recorded) == (5, 3)
    assert plan.seconds == pytest.approx(2 * np.median(fit))
    assert "of 3 records" in plan.basis and "scaled" not in plan.basis
    assert plan.line.startswith("linear synthetic-regression N=300 m=3: 3/5 trials recorded; 2 ")

    # twice the rows, nothing recorded: every record's time scaled by 2, for all 5 trials
    bigger = [a if a != "data.N=300" else "data.N=600" for a in base]
    plan = plan_setting(_compose([*bigger, "trials=5"]))
    assert (plan.recorded, plan.setting_id != _records(results)[0]["setting_id"]) == (0, True)
    assert plan.seconds == pytest.approx(5 * np.median(2 * fit))
    assert "other N, scaled to N" in plan.basis

    # another model has no records to estimate from
    plan = plan_setting(_compose([*base, "model=svm", "trials=5"]))
    assert plan.seconds is None and "no records of svm" in plan.line

    # all trials recorded: done
    assert plan_setting(_compose([*base, "trials=3"])).line.endswith("3/3 trials recorded; done")


def test_plan_of_a_table_reads_the_records_named_after_its_file(tmp_path):
    rng = np.random.default_rng(0)
    path, results = tmp_path / "shop.csv", tmp_path / "results"
    frame = {"a": rng.normal(size=80), "b": rng.normal(size=80)}
    frame["y"] = frame["a"] - frame["b"] + rng.normal(size=80) * 0.1
    pd.DataFrame(frame).to_csv(path, index=False)
    table = ["data=table", f"data.path={path}", "data.target=y", "data.task=regression"]
    base = ["model=linear", *table, f"results_dir={results}"]
    run_setting(_compose([*base, "trials=2"]))
    assert {r["dataset"] for r in _records(results)} == {"shop"}
    plan = plan_setting(_compose([*base, "trials=4"]))
    assert (plan.trials, plan.recorded) == (4, 2)
    assert "of 2 records" in plan.basis  # the table's own records, under its file's name


def test_plan_of_batched_model_divides_over_its_workers(tmp_path):
    results = tmp_path / "results"
    base = [*TINY_PILID, *TINY_DATA, f"results_dir={results}"]
    run_setting(_compose([*base, "trials=2"]))
    fit = np.median([r["fit_seconds"] for r in _records(results)])
    plan = plan_setting(_compose([*base, "trials=6"]))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = max(1, min(cores or 1, 4))  # one one-thread worker per core, at most one a trial
    assert plan.recorded == 2
    assert plan.seconds == pytest.approx(fit * 4 / workers)
    # a Gaussian initialisation is another setting and says so in its label
    gaussian = plan_setting(_compose([*base, "trials=6", "model.init=gaussian"]))
    assert gaussian.recorded == 0 and " init=gaussian " in gaussian.line


@pytest.mark.slow
def test_sweep_dry_run_lists_settings_and_trains_nothing(tmp_path):
    results = tmp_path / "results"
    run_setting(_compose(["model=linear", *TINY_DATA, "trials=2", f"results_dir={results}"]))
    before = (results / "records.jsonl").read_bytes()
    command = [
        sys.executable, "-m", "pilid.run", "-m", "model=linear", "data.N=300,600", "data.m=3",
        "data.n_interactions=2", "trials=4", "dry_run=true", f"results_dir={results}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("linear synthetic-regression N=300 m=3: 2/4 trials recorded; 2 ")
    assert lines[1].startswith("linear synthetic-regression N=600 m=3: 0/4 trials recorded; 4 ")
    assert lines[-1].startswith("dry run: 2 settings, 6 trials to run, ~")
    assert lines[-1].endswith("on this machine; nothing was run")
    assert (results / "records.jsonl").read_bytes() == before
    assert not (tmp_path / "sweep").exists() or not any((tmp_path / "sweep").rglob("*.jsonl"))
