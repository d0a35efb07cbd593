"""Hydra entry point: `python -m pilid.run model=pilid gamma=5 data=skill` (sweeps with `-m`).

This layer only composes and checks the config and hands it to the runner, which is plain Python.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from pilid.config import (
    CONF_DIR,
    check_config,
    check_overrides,
    composition_error,
    normalize_overrides,
)
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


#: Hydra flags that pick another config: the pre-check composes conf/config.yaml only.
_OTHER_CONFIG_FLAGS = ("-cn", "-cp", "-cd", "--config-name", "--config-path", "--config-dir")


def check_composition(args: list[str]) -> None:
    """Compose the config with the command line's values before Hydra does, so that a key the
    schema lacks (``model.gamm=3``) or a value of the wrong type (``trials=abc``) stops with one
    line instead of Hydra's several. A sweep is composed at its first value (the sweeper checks
    every job before the first one runs)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    if any(a.split("=", 1)[0] in _OTHER_CONFIG_FLAGS for a in args):
        return
    task = [a for a in args if "=" in a and not a.startswith("-")]
    task = [a for a in task if not a.lstrip("+~").startswith("hydra")]
    try:
        parsed = OverridesParser.create().parse_overrides(task)
    except Exception:  # a syntax error: Hydra's own message names it
        return
    overrides = []
    for override in parsed:
        if override.is_sweep_override():
            first = next(iter(override.sweep_string_iterator()), None)
            if first is None:
                continue
            overrides.append(f"{override.get_key_element()}={first}")
        else:
            overrides.append(override.input_line)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            compose("config", overrides=overrides)
    except Exception as error:
        raise composition_error(error, overrides) from error
    finally:
        GlobalHydra.instance().clear()


def cli() -> None:
    try:
        sys.argv[1:] = normalize_overrides(sys.argv[1:])
        check_overrides(sys.argv[1:])
        check_composition(sys.argv[1:])
    except PilidError as error:
        _fail(error)
    main()


if __name__ == "__main__":
    cli()
