"""pilid.experiments: run settings x trials and keep one record per finished trial.

- `run_setting(cfg) -> Summary`: all trials of one setting (skipping those already recorded).
- `ResultStore(results_dir)`: the append-only JSON Lines store (`records.jsonl`).
- `load_results(path) -> DataFrame`: the records, one row per trial.
- `setting_id(cfg)`: the stable hash that ties records to their setting.
"""

from __future__ import annotations

from pilid.experiments.setting import setting_id
from pilid.experiments.store import ResultStore, load_results

__all__ = ["ResultStore", "Summary", "load_results", "run_setting", "setting_id"]


def __getattr__(name: str):
    if name in ("run_setting", "Summary"):  # the runner pulls in torch: import it on demand
        from pilid.experiments import runner

        return getattr(runner, name)
    raise AttributeError(f"module 'pilid.experiments' has no attribute {name!r}")
