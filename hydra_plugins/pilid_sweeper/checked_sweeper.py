"""Hydra's basic sweeper, checking every job's config before the first job runs.

``python -m pilid.run -m gamma=1,0,5`` would otherwise train gamma=1, stop at gamma=0 and never run
gamma=5. The sweeper composes each job's config (Hydra's basic sweeper already does, to catch
composition errors) and runs ``pilid.experiments.config.check_config`` on it, which also validates
the model's hyper-parameters; the first bad job stops the sweep with one line before anything
trains. Hydra loads plugins only from the ``hydra_plugins`` namespace package, hence this place.
Selected by ``conf/hydra/sweeper/pilid.yaml`` (the default in ``conf/config.yaml``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from omegaconf import OmegaConf

from pilid.errors import PilidError
from pilid.experiments.config import (
    check_config,
    composition_error,
    missing_names,
    unread_shortcuts,
    user_config_dirs,
)
from pilid.experiments.interrupts import watch_settings
from pilid.experiments.setting import setting_id


class CheckedSweeper(BasicSweeper):
    """``BasicSweeper`` whose batch check also runs ``check_config`` on every job."""

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Compose every job of ``batch`` and check it; stop the sweep with one line at the
        first bad job (``dry_run=true``: print the plan and stop)."""
        assert self.hydra_context is not None and self.config is not None
        containers = []
        notices: list[str] = []
        for overrides in batch:
            try:
                try:
                    cfg = self.hydra_context.config_loader.load_sweep_config(
                        self.config, list(overrides)
                    )
                except Exception as error:  # the schema refused a key or a value's type
                    dirs = user_config_dirs(sys.argv[1:])  # to name a YAML file of theirs
                    raise composition_error(error, overrides, dirs) from error
                container = OmegaConf.to_container(cfg, resolve=False)
                hydra_node = container.pop("hydra", None) or {}
                choices = (hydra_node.get("runtime") or {}).get("choices") or {}
                for group, name in missing_names(container, choices).items():
                    container[group] = {**container[group], "name": name}
                containers.append(container)
                check_config(container)
                notices += [n for n in unread_shortcuts(container, overrides) if n not in notices]
            except PilidError as error:
                where = " ".join(overrides) or "the base config"
                print(f"pilid: error: in the sweep job [{where}]: {error}", file=sys.stderr)
                print(
                    "pilid: nothing was run; fix that value and run the sweep again",
                    file=sys.stderr,
                )
                sys.exit(2)
        for notice in notices:
            print(f"pilid: {notice}", file=sys.stderr, flush=True)
        containers = self._once_each(batch, containers)
        if containers and OmegaConf.create(containers[0]).get("dry_run"):
            try:
                _dry_run(containers)
            except PilidError as error:  # e.g. a records.jsonl that is a directory
                print(f"pilid: error: {error}", file=sys.stderr)
                sys.exit(2)
            sys.exit(0)
        # an interrupt's one line counts the recorded trials of every setting of the sweep
        watch_settings(containers, replace=False)

    def _once_each(self, batch: Sequence[Sequence[str]], containers: list[dict]) -> list[dict]:
        """Drop from ``batch`` (in place) every job whose setting an earlier job of the sweep
        already runs the same way (`_how_it_runs`; ``model=pilid_lib gamma=2,3``: pilid_lib
        fixes its gamma, so both jobs are one), with one line each; returns the kept jobs'
        configs."""
        seen = self.__dict__.setdefault("_pilid_settings", {})
        kept_jobs, kept = [], []
        for overrides, container in zip(batch, containers):
            try:
                sid = setting_id(container)
                key = (sid, _how_it_runs(container))
            except Exception:  # noqa: BLE001 - not resolvable here: the runner names it
                sid = key = None
            if key is not None and key in seen:
                first = seen[key]
                shown = [o for o in overrides if o not in first or o.startswith("model=")]
                was = [o for o in first if o not in overrides or o.startswith("model=")]
                print(
                    f"pilid: the sweep job [{' '.join(shown)}] is the setting of "
                    f"[{' '.join(was)}] (setting {sid}); it runs once",
                    file=sys.stderr,
                    flush=True,
                )
                continue
            if key is not None:
                seen[key] = list(overrides)
            kept_jobs.append(overrides)
            kept.append(container)
        if len(kept_jobs) < len(batch) and isinstance(batch, list):
            batch[:] = kept_jobs
        return kept


def _how_it_runs(container: dict) -> str:
    """What a job runs besides its setting (`setting_id` leaves these out): how many trials,
    into which store, under which experiment name, forced or not, where it logs; two jobs are
    one only when these are the same too (``trials=5,20`` are two jobs of one setting)."""
    from pilid.experiments.setting import BOOKKEEPING_KEYS, canonical_json, resolved_config

    resolved = resolved_config(container)
    return canonical_json({k: resolved.get(k) for k in BOOKKEEPING_KEYS if k not in SHORTCUTS})


#: Top-level keys that only pass a value on to the model (``gamma``): not how a job runs.
SHORTCUTS = ("gamma", "hydra")


def _dry_run(containers: list[dict]) -> None:
    """``dry_run=true``: one line per setting and the total time left; nothing is launched."""
    from pilid.experiments.planning import format_duration, plan_setting
    from pilid.experiments.store import ResultStore, records_in

    stores: dict[str, list] = {}
    total, unknown, left = 0.0, 0, 0
    for container in containers:
        resolved = OmegaConf.to_container(OmegaConf.create(container), resolve=True)
        root = str(resolved["results_dir"])
        if root not in stores:
            stores[root] = ResultStore(records_in(root)).records()  # a directory: PilidError
        plan = plan_setting(resolved, records=stores[root])
        print(plan.line, flush=True)
        left += plan.trials - plan.recorded
        if plan.seconds is None and plan.trials > plan.recorded:
            unknown += 1
        total += plan.seconds or 0.0
    print(
        f"dry run: {len(containers)} settings, {left} trials to run, ~{format_duration(total)} "
        f"on this machine"
        + (f" plus {unknown} setting(s) without an estimate" if unknown else "")
        + "; nothing was run",
        flush=True,
    )
