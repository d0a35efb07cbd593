"""Hydra entry point: `python -m pilid.run model=pilid gamma=5 data=skill` (sweeps with `-m`).

This layer only composes and checks the config and hands it to the runner, which is plain Python.
"""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from pilid.errors import PilidError
from pilid.experiments.config import (
    CONF_DIR,
    check_config,
    check_override_syntax,
    check_overrides,
    composition_error,
    missing_names,
    normalize_overrides,
    unread_shortcuts,
    user_config_dirs,
)


def _fail(error: Exception) -> None:
    print(f"pilid: error: {error}", file=sys.stderr)
    sys.exit(2)


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def main(cfg: DictConfig) -> float | None:
    """Run one setting (all its trials) and print the summary line."""
    from pilid.experiments import interrupts
    from pilid.experiments.planning import plan_setting
    from pilid.experiments.runner import run_setting

    if not interrupts.watched_settings():  # a single run (a sweep's sweeper registers its jobs)
        interrupts.watch_settings([cfg])
    try:
        cfg = _named(cfg)
        check_config(cfg)
        _say_unread_shortcuts(cfg)
        if cfg.get("dry_run"):
            print(plan_setting(cfg).line, flush=True)
            return None
        summary = run_setting(cfg)
    except PilidError as error:
        _fail(error)
    except interrupts.RunInterrupted as stop:  # SIGINT/SIGTERM/SIGHUP: finished trials kept
        interrupts.exit_interrupted(stop.signum, stop)
    print(summary.line, flush=True)
    return summary.mean


def _named(cfg: DictConfig) -> DictConfig:
    """The config with ``model.name``/``data.name`` filled in from the chosen options where a
    YAML of the user's own directory gives none (``pilid.experiments.config.missing_names``)."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf, open_dict

    choices = OmegaConf.to_container(HydraConfig.get().runtime.choices)
    for group, name in missing_names(cfg, choices).items():
        with open_dict(cfg):
            cfg[group]["name"] = name
    return cfg


def _say_unread_shortcuts(cfg: DictConfig) -> None:
    """A single run (a sweep's sweeper says it once for all its jobs): one line for a top-level
    shortcut of the command line (``gamma=3``) that the chosen model does not read."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    hydra_cfg = HydraConfig.get()
    if hydra_cfg.mode == RunMode.MULTIRUN:
        return
    container = OmegaConf.to_container(cfg, resolve=False)
    for notice in unread_shortcuts(container, hydra_cfg.overrides.task):
        print(f"pilid: {notice}", file=sys.stderr, flush=True)


#: Hydra flags that pick another config: the pre-check composes conf/config.yaml only
#: (``--config-dir`` is followed: it adds the user's own YAMLs to the search path).
_OTHER_CONFIG_FLAGS = ("-cn", "-cp", "--config-name", "--config-path")


def check_composition(args: list[str]) -> None:
    """Compose the config with the command line's values before Hydra does, so that a key the
    schema lacks (``model.gamm=3``) or a value of the wrong type (``trials=abc``) stops with one
    line instead of Hydra's several. A sweep is composed at its first value (the sweeper checks
    every job before the first one runs)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pilid.experiments.grid import first_values

    if any(a.split("=", 1)[0] in _OTHER_CONFIG_FLAGS for a in args):
        return
    task = [a for a in args if "=" in a and not a.startswith("-")]
    task = [a for a in task if not a.lstrip("+~").startswith("hydra")]
    try:
        overrides = first_values(task)
    except Exception:  # a syntax error: Hydra's own message names it
        return
    given = user_config_dirs(args)
    dirs = [str(d.resolve()) for d in given]
    search = [f"hydra.searchpath=[{','.join('file://' + d for d in dirs)}]"] if dirs else []
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            try:
                compose("config", overrides=[*search, *overrides])
            except Exception as error:
                _check_added_key(compose, search, overrides, error)
                raise composition_error(error, overrides, given) from error
    finally:
        GlobalHydra.instance().clear()


def _check_added_key(compose, search: list[str], overrides: list[str], error: Exception) -> None:
    """A model of the user's own directory has no schema, so ``model.<key>=<value>`` for a key
    its YAML lacks is refused by Hydra. Composed again with ``+``: a key the model's class does
    not take is named by ``check_config``; one it takes is added with ``+``, so say that."""
    from omegaconf import OmegaConf

    cause = error.__cause__ or error
    key = str(getattr(cause, "full_key", "") or "")
    if not key.startswith("model.") or getattr(cause, "object_type", None) is not dict:
        return
    plus = [f"+{o}" if o.split("=", 1)[0] == key else o for o in overrides]
    try:
        cfg = compose("config", overrides=[*search, *plus], return_hydra_config=True)
    except Exception:  # noqa: BLE001 - another problem: Hydra's own message names it
        return
    container = OmegaConf.to_container(cfg, resolve=False)
    choices = (container.pop("hydra", None) or {}).get("runtime", {}).get("choices", {})
    for group, name in missing_names(container, choices).items():
        container[group] = {**container[group], "name": name}
    check_config(container)  # raises the one line for a key the class does not take
    value = next(o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0] == key)
    raise PilidError(
        f"{key} is not in the YAML of model={container['model'].get('name')}; add it with a "
        f"'+': +{key}={value}"
    )


def cli() -> None:
    """``python -m pilid.run``: SIGINT/SIGTERM/SIGHUP at any moment end it with one line (exit
    130/143/129)."""
    from pilid.experiments.interrupts import exit_on_interrupt

    with exit_on_interrupt():
        try:
            check_override_syntax(sys.argv[1:])
            sys.argv[1:] = normalize_overrides(sys.argv[1:])
            check_overrides(sys.argv[1:])
            check_composition(sys.argv[1:])
        except PilidError as error:
            _fail(error)
        main()


if __name__ == "__main__":
    cli()
