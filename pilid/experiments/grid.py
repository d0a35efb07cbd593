"""A sweep expanded into its jobs, the way Hydra's basic sweeper expands it.

``python -m pilid.run -m data.N=5000,10000 gamma=1,5`` runs one job per combination of the
values: the cartesian product of the sweep's axes, in the order the axes are given, the last
axis varying fastest. An experiment config keeps its axes in ``hydra.sweeper.params``, which
the sweeper puts before the command line's. Hydra's own sweeper runs the jobs; everything else
that needs them (the report's grids of settings, the setting ids of every job, the command
line's pre-check, the tests) expands a sweep here, with Hydra's override parser, so that a
list value (``model.hidden_layers=[16,16]``), ``range(1,4)`` or ``choice(a,b)`` means what it
means to Hydra.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SweepAxis:
    """One key of a sweep and its values.

    Attributes
    ----------
    key : str
        The key as written, with its prefix (``data.N``, ``+experiment/method``).
    name : str
        The key or config group without prefix (``data.N``, ``experiment/method``).
    values : tuple of str
        Each value as the job's override gives it (``5000``, ``pilid-5``).
    parsed : tuple
        The same values as Hydra parses them (``5000`` an int, a list value a list).
    """

    key: str
    name: str
    values: tuple[str, ...]
    parsed: tuple[Any, ...]

    def override(self, index: int) -> str:
        """The job override ``key=value`` of the value at ``index``."""
        return f"{self.key}={self.values[index]}"


def _parser(config_loader=None):
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create(config_loader=config_loader)


def sweep_axes(overrides: Iterable[str], config_loader=None) -> list[SweepAxis]:
    """The axes of a sweep given as overrides (``key=v1,v2``; a plain ``key=v`` is an axis of
    one value), by Hydra's basic sweeper's rule: a key given twice keeps its first place and
    its last values.

    Parameters
    ----------
    overrides : iterable of str
        Hydra overrides, e.g. ``["data.N=5000,10000", "model=pilid"]``.
    config_loader : optional
        Hydra's config loader, needed only by ``glob(...)`` sweeps.

    Returns
    -------
    list of SweepAxis
        In the order the keys were first given.
    """
    axes: dict[str, SweepAxis] = {}
    for override in _parser(config_loader).parse_overrides(list(overrides)):
        key = override.get_key_element()
        if override.is_sweep_override():
            values = tuple(override.sweep_string_iterator())
            parsed = tuple(override.sweep_iterator())
        else:
            values = (override.get_value_element_as_str(),)
            parsed = (override.value(),)
        axes[key] = SweepAxis(key, override.key_or_group, values, parsed)
    return list(axes.values())


def jobs(axes: list[SweepAxis]) -> list[list[str]]:
    """Every job of the sweep ``axes`` as its list of overrides, in the sweeper's order (the
    cartesian product of the axes, the last one varying fastest)."""
    return [
        [axis.override(i) for axis, i in zip(axes, indices)]
        for indices in itertools.product(*(range(len(axis.values)) for axis in axes))
    ]


def job_values(axes: list[SweepAxis]) -> list[tuple]:
    """The parsed values of every job of ``axes`` (one per axis), in the order of `jobs`."""
    return list(itertools.product(*(axis.parsed for axis in axes)))


def expand(overrides: Iterable[str], config_loader=None) -> list[list[str]]:
    """The jobs of a sweep given as overrides: `jobs` of `sweep_axes`.

    Parameters
    ----------
    overrides : iterable of str
        Hydra overrides, sweeps among them (``gamma=1,5``).
    config_loader : optional
        Hydra's config loader, needed only by ``glob(...)`` sweeps.

    Returns
    -------
    list of list of str
        One override list per job.
    """
    return jobs(sweep_axes(overrides, config_loader))


def first_values(overrides: Iterable[str]) -> list[str]:
    """The overrides with every sweep at its first value (a sweep with no value is left out),
    the others as written: the first job's values, for a check before the sweeper starts.

    Raises Hydra's ``OverrideParseException`` on a syntax error.
    """
    first = []
    for override in _parser().parse_overrides(list(overrides)):
        if override.is_sweep_override():
            value = next(iter(override.sweep_string_iterator()), None)
            if value is not None:
                first.append(f"{override.get_key_element()}={value}")
        else:
            first.append(override.input_line)
    return first


def sweep_params(cfg: Mapping) -> list[str]:
    """A composed config's ``hydra.sweeper.params`` (its sweep) as overrides ``key=values``.

    Parameters
    ----------
    cfg : DictConfig or dict
        A config composed with ``return_hydra_config=True``.
    """
    sweeper = (cfg.get("hydra") or {}).get("sweeper") or {}
    return [f"{key}={value}" for key, value in (sweeper.get("params") or {}).items()]


def experiment_jobs(name: str, conf_dir: str | os.PathLike | None = None) -> list[list[str]]:
    """Every job of ``conf/experiment/<name>.yaml``'s sweep as the overrides that run it
    (``experiment=<name>`` first), in the sweeper's order.

    Parameters
    ----------
    name : str
        The experiment config's name.
    conf_dir : path, optional
        The config directory (default: the repository's ``conf/``).

    Returns
    -------
    list of list of str
        One override list per job.

    Notes
    -----
    Composes with Hydra's global state, which it clears before and after: call it outside
    another ``initialize_config_dir`` block (inside one, compose the experiment there and
    `expand` its `sweep_params`).
    """
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from pilid.schema import CONF_DIR

    conf_dir = Path(conf_dir or CONF_DIR).resolve()
    base = [f"experiment={name}"]
    if GlobalHydra.instance().is_initialized():
        GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
            cfg = compose("config", overrides=base, return_hydra_config=True)
    finally:
        GlobalHydra.instance().clear()
    return [[*base, *job] for job in expand(sweep_params(cfg))]
