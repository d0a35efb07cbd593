"""The reproduction scripts (`scripts/reproduce_*.sh`) run only commands the runner accepts:
each step's overrides, with every value of its comma sweeps, compose and pass the key check, so
a typo in a step stops nobody's overnight run halfway. A stand-in ``python`` records the
commands instead of training."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from pilid.experiments.config import CONF_DIR, check_config
from pilid.experiments.grid import sweep_axes

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("reproduce_*.sh"))


def _commands(script: Path, tmp_path: Path, **env) -> list[list[str]]:
    """The argument lists the script passes to ``python``, in order."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "commands.jsonl"
    fake = bin_dir / "python"
    fake.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "with open(os.environ['COMMAND_LOG'], 'a') as f:\n"
        "    f.write(json.dumps(sys.argv[1:]) + '\\n')\n"
    )
    fake.chmod(0o755)
    full_env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "COMMAND_LOG": str(log),
        **env,
    }
    subprocess.run(["bash", str(script)], check=True, env=full_env, cwd=tmp_path, timeout=60)
    return [json.loads(line) for line in log.read_text().splitlines()]


def _variants(overrides: list[str]) -> list[list[str]]:
    """The command's overrides with each sweep axis at each of its values (others at their
    first; `pilid.experiments.grid.sweep_axes`, so ``[16,16]`` is one value): every value is
    composed once, without the full product."""
    axes = sweep_axes(overrides)
    base = [axis.override(0) for axis in axes]
    variants = [base]
    for i, axis in enumerate(axes):
        for j in range(1, len(axis.values)):
            variants.append([*base[:i], axis.override(j), *base[i + 1 :]])
    return variants


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_step_of_a_reproduction_script_is_a_valid_sweep(script, tmp_path):
    commands = _commands(script, tmp_path)
    assert commands, f"{script.name} ran no command"
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for argv in commands:
            assert argv[:3] == ["-m", "pilid.run", "-m"], argv
            overrides = [a for a in argv[3:] if not a.startswith("hydra.")]
            assert any(o.startswith("experiment=") for o in overrides), argv
            for variant in _variants(overrides):
                check_config(compose("config", overrides=variant))


@pytest.mark.slow
def test_simulation_script_runs_reduced_cells_before_full_ones_and_dry_runs_on_request(tmp_path):
    script = ROOT / "scripts" / "reproduce_simulation.sh"
    commands = _commands(script, tmp_path, REDUCED_TRIALS="6")
    trials = [next((a for a in c if a.startswith("trials=")), None) for c in commands]
    counted = [t for t in trials if t is not None]
    # every step with a trial count runs once at the reduced count, then once at the paper's 20
    assert counted == ["trials=6"] * (len(counted) // 2) + ["trials=20"] * (len(counted) // 2)
    reduced = [c for c, t in zip(commands, trials, strict=True) if t == "trials=6"]
    full = [c for c, t in zip(commands, trials, strict=True) if t == "trials=20"]
    assert [[a for a in c if not a.startswith(("trials=", "hydra."))] for c in reduced] == [
        [a for a in c if not a.startswith(("trials=", "hydra."))] for c in full
    ]
    assert not any("dry_run=true" in c for c in commands)
    (tmp_path / "dry").mkdir()
    dry = _commands(script, tmp_path / "dry", DRY_RUN="1")
    assert len(dry) == len(commands) and all("dry_run=true" in c for c in dry)
