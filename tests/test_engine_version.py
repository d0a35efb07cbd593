"""Every record names the engine version that trained it, and a setting is never resumed by
another engine: its trials would mix two engines' digits (one line; ``force=true`` or another
results folder starts it anew). Models the engine does not train resume as before."""

from __future__ import annotations

import json

import pytest
from hydra import compose, initialize_config_dir

from pilid.errors import PilidError
from pilid.experiments import run_setting
from pilid.experiments.config import CONF_DIR
from pilid.train.version import ENGINE_VERSION, FIRST_ENGINE_VERSION

TINY = ["data.N=200", "data.m=5", "gamma=3", "model.hidden_layers=[8]", "train.epochs=2"]


def _config(results, *extra):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[f"results_dir={results}", *extra])


def _rewrite_engine(path, engine):
    """The records as another engine would have written them (None: as before engines had one)."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        if engine is None:
            record["versions"].pop("engine", None)
        else:
            record["versions"]["engine"] = engine
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


@pytest.mark.slow
def test_a_resume_by_another_engine_is_one_line_and_force_starts_anew(tmp_path):
    results = tmp_path / "runs"
    first = run_setting(_config(results, "model=pilid", "trials=2", *TINY))
    assert {r["versions"]["engine"] for r in first.records} == {ENGINE_VERSION}
    path = results / "records.jsonl"
    before = _rewrite_engine(path, "0")
    with pytest.raises(PilidError, match="recorded by engine 0; this pilid's engine is") as info:
        run_setting(_config(results, "model=pilid", "trials=3", *TINY))
    assert "force=true" in str(info.value) and "\n" not in str(info.value)
    assert [json.loads(line) for line in path.read_text().splitlines()] == before  # untouched
    # the same trials, all recorded: nothing to resume, nothing refused
    assert len(run_setting(_config(results, "model=pilid", "trials=2", *TINY)).records) == 2
    anew = run_setting(_config(results, "model=pilid", "trials=3", "force=true", *TINY))
    assert {r["versions"]["engine"] for r in anew.records} == {ENGINE_VERSION}
    assert len(anew.records) == 3


@pytest.mark.slow
def test_records_without_an_engine_are_the_first_engine_and_baselines_resume(tmp_path):
    results = tmp_path / "runs"
    run_setting(_config(results, "model=pilid", "trials=1", *TINY))
    before = _rewrite_engine(results / "records.jsonl", None)  # written before records named it
    with pytest.raises(PilidError, match=f"recorded by engine {FIRST_ENGINE_VERSION}; this"):
        run_setting(_config(results, "model=pilid", "trials=2", *TINY))
    lines = (results / "records.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == before  # untouched
    run_setting(_config(results, "model=linear", "trials=1", "data.N=200", "data.m=5"))
    _rewrite_engine(results / "records.jsonl", "0")
    linear = run_setting(_config(results, "model=linear", "trials=2", "data.N=200", "data.m=5"))
    assert len(linear.records) == 2  # not trained by the engine: resumed as before
