"""Bad input through the command line: exit code != 0 and one clear line, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from pilid.experiments.config import CONF_DIR, group_options
from pilid.experiments.setting import setting_id


def _cli(*args, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pilid.run",
            *args,
            f"hydra.run.dir={tmp_path / 'hydra'}",
            f"results_dir={tmp_path / 'results'}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "arg, names, choices",
    [
        ("data=nosuch", ["'nosuch'", "data"], group_options("data")),
        ("model=nosuch", ["'nosuch'", "model"], group_options("model")),
        ("model=pilid,nosuch", ["'nosuch'"], group_options("model")),
        ("gamma=0", ["gamma=0", ">= 1"], []),
        ("gamma=-1", ["gamma=-1", ">= 1"], []),
        ("trials=0", ["trials=0", ">= 1"], []),
    ],
)
def test_bad_input_exits_nonzero_with_one_line(arg, names, choices, tmp_path):
    result = _cli(arg, tmp_path=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    (line,) = lines
    assert "Traceback" not in result.stderr + result.stdout
    for fragment in names:
        assert fragment in line
    for choice in choices:  # every valid option is listed
        assert choice in line
    assert not (tmp_path / "results" / "records.jsonl").exists()


def test_default_run_config_composes_into_a_runnable_setting():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config")
    config = OmegaConf.to_container(cfg, resolve=True)
    assert config["trials"] == 20 and config["seed"] == 0 and config["device"] == "auto"
    assert config["model"]["name"] == "pilid" and config["model"]["gamma"] == config["gamma"]
    assert config["data"]["name"] == "synthetic"
    assert config["train"]["batched"] is True and config["train"]["trials_per_batch"] == "auto"
    assert config["results_dir"] == "results/runs" and config["force"] is False
    assert len(setting_id(cfg)) == 16
