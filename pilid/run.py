"""Hydra entry point: `python -m pilid.run model=pilid gamma=5 data=skill` (sweeps with `-m`).

This layer only composes and checks the config and hands it to the runner, which is plain Python.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from pilid.config import check_config, check_overrides
from pilid.errors import PilidError


def _fail(error: Exception) -> None:
    print(f"pilid: error: {error}", file=sys.stderr)
    sys.exit(2)


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    """Run one setting (all its trials) and print the summary line."""
    from pilid.experiments.interrupts import RunInterrupted
    from pilid.experiments.planning import plan_setting
    from pilid.experiments.runner import run_setting

    try:
        check_config(cfg)
        if cfg.get("dry_run"):
            print(plan_setting(cfg).line, flush=True)
            return None
        summary = run_setting(cfg)
    except PilidError as error:
        _fail(error)
    except RunInterrupted as stop:  # SIGINT / SIGTERM: finished trials are kept
        print(f"pilid: {stop}", file=sys.stderr, flush=True)
        sys.exit(stop.exit_code)
    print(summary.line, flush=True)
    return summary.mean


def cli() -> None:
    try:
        check_overrides(sys.argv[1:])
    except PilidError as error:
        _fail(error)
    main()


if __name__ == "__main__":
    cli()
