"""The command line's names and shortcuts: an experiment name that is a path, a results folder
named like the records file, a value outside Hydra's grammar, and a top-level shortcut that a
chosen model does not read (each one line), and a sweep that never runs one setting twice."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pilid.errors import PilidError
from pilid.experiments.config import (
    CONF_DIR,
    check_config,
    check_override_syntax,
    unread_shortcuts,
)


def _composed(*overrides) -> dict:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    return OmegaConf.to_container(cfg, resolve=False)


def _cli(*args, cwd):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pilid.run", *args, f"hydra.run.dir={cwd / 'hydra'}"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


@pytest.mark.parametrize("name", ["../../evil", "/tmp/evil", "a/b", "a\\b", ".hidden", " "])
def test_an_experiment_name_that_is_a_path_is_one_line(name):
    cfg = _composed()
    cfg["experiment_name"] = name
    with pytest.raises(PilidError, match="experiment_name=.* is not a plain name") as info:
        check_config(cfg)
    assert "\n" not in str(info.value)
    suggested = str(info.value).rsplit("experiment_name=", 1)[1]
    cfg["experiment_name"] = suggested
    check_config(cfg)  # the suggested name is taken


def test_a_plain_experiment_name_is_taken():
    cfg = _composed()
    cfg["experiment_name"] = "my_study-2.1"
    check_config(cfg)


def test_a_results_dir_named_like_the_records_file_is_one_line():
    cfg = _composed()
    cfg["results_dir"] = "x.jsonl"
    with pytest.raises(PilidError, match=r"results_dir=x\.jsonl names a file.*results_dir=x$"):
        check_config(cfg)


def test_a_value_outside_the_override_grammar_is_shown_quoted():
    with pytest.raises(PilidError) as info:
        check_override_syntax(["trials=2", "results_dir=ré中"])
    message = str(info.value)
    assert "\n" not in message and "results_dir=ré中" in message
    quoted = message.split('"')[1]
    check_override_syntax([quoted])  # the fix it names parses
    assert quoted == "results_dir='ré中'"
    check_override_syntax(["model=pilid,pilid_lib", "'model.hidden_layers=[8]'"[1:-1]])


def test_a_shortcut_a_model_does_not_read_is_said():
    fixed = _composed("model=pilid_lib", "gamma=3")
    (notice,) = unread_shortcuts(fixed, ["model=pilid_lib", "gamma=3"])
    assert "model=pilid_lib" in notice and "model.gamma=" in notice
    reads = _composed("model=pilid", "gamma=3")
    assert unread_shortcuts(reads, ["model=pilid", "gamma=3"]) == []
    assert unread_shortcuts(fixed, ["model=pilid_lib"]) == []  # gamma not given: nothing to say


@pytest.mark.slow
def test_a_sweep_runs_each_setting_once_and_says_which_jobs_were_one(tmp_path):
    table = tmp_path / "t.csv"
    rows = ["a,b,y"] + [f"{i % 7},{(i * 3) % 5},{i % 2}" for i in range(40)]
    table.write_text("\n".join(rows) + "\n")
    args = [
        "-m",
        "model=pilid,pilid_lib",
        "gamma=2,3",
        "data=table",
        f"data.path={table}",
        "data.target=y",
        "data.task=classification",
        "trials=1",
        f"results_dir={tmp_path / 'runs'}",
        f"hydra.sweep.dir={tmp_path / 'multirun'}",
    ]
    dry = _cli(*args, "dry_run=true", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.strip().splitlines()
    assert len(lines) == 4 and lines[-1].startswith("dry run: 3 settings"), dry.stdout
    assert sum("pilid_lib" in line for line in lines[:-1]) == 1
    assert "does not reach model=pilid_lib" in dry.stderr
    assert "is the setting of" in dry.stderr
    # jobs of one setting that run it another way (more trials) are two jobs
    args = [a.replace("trials=1", "trials=1,2") for a in args]
    twice = _cli(*args, "dry_run=true", cwd=tmp_path)
    assert twice.returncode == 0, twice.stderr
    assert twice.stdout.strip().splitlines()[-1].startswith("dry run: 6 settings"), twice.stdout


@pytest.mark.slow
def test_the_command_line_refuses_bad_names_with_one_line_and_rc_2(tmp_path):
    for arg, says in (
        ("results_dir=ré中", "quote the value"),
        ("experiment_name=../../evil", "is not a plain name"),
        ("results_dir=x.jsonl", "names a file"),
    ):
        result = _cli("trials=1", arg, "dry_run=true", cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], result.stderr
    assert not (tmp_path / "x.jsonl").exists()
