"""Planning a setting: its blocks of trials, its worker processes, and the dry run's estimate.

Same numbers after a resume: a neural model's trials train in blocks fixed by trial index
(``plan_blocks``), so a trial's value depends on its block, never on which trials were missing
or on the number of worker processes (``resolve_n_jobs``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from omegaconf import DictConfig

from pilid.errors import PilidError
from pilid.experiments.setting import (
    is_table,
    resolved_config,
    setting_id,
    setting_label,
    table_name,
)
from pilid.experiments.store import ResultStore, records_in


@dataclass
class Plan:
    """What running a setting would do: its trials recorded and the time left, estimated."""

    label: str
    setting_id: str
    trials: int
    recorded: int
    seconds: float | None  # estimated wall time of the missing trials; None: no basis
    basis: str  # where the estimate comes from

    @property
    def line(self) -> str:
        """One line: the setting, its trials recorded and the time left (or ``done``)."""
        left = self.trials - self.recorded
        if left == 0:
            cost = "done"
        elif self.seconds is None:
            cost = f"{left} to run, no estimate ({self.basis})"
        else:
            cost = f"{left} to run, ~{format_duration(self.seconds)} ({self.basis})"
        return f"{self.label}: {self.recorded}/{self.trials} trials recorded; {cost}"


def format_duration(seconds: float) -> str:
    """``42 s``, ``7.5 min`` or ``3.2 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _number(value) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else np.nan
    )


def _same(values: np.ndarray, target) -> np.ndarray:
    """Where ``values`` equal ``target``; NaN (unknown) counts as equal to None."""
    return np.isnan(values) if target is None else values == target


def trial_seconds(fit_seconds, rows, features, N, m) -> tuple[float, str]:
    """The expected fit time of one trial with ``N`` rows and ``m`` features, from the fit times
    of records of the same model on the same data set (``fit_seconds``, with each record's
    ``rows`` and ``features``; NaN where unknown): the median of the records with the same N
    and m; else of those with the same m, else of all, each scaled to N in proportion to the
    rows (an epoch's cost grows with N, the number of epochs does not; scikit-learn's SVM grows
    faster, so its estimate is low there). Returns the seconds and a phrase naming the basis."""
    seconds = np.nan_to_num(np.asarray(fit_seconds, dtype=float))
    rows = np.asarray(rows, dtype=float)
    features = np.asarray(features, dtype=float)
    exact = _same(rows, N) & _same(features, m)
    if exact.any():
        per_trial = float(np.median(seconds[exact]))
        return per_trial, f"median {per_trial:.1f} s/trial of {int(exact.sum())} records"
    same_m = _same(features, m)
    pool = same_m if same_m.any() else np.ones(len(seconds), dtype=bool)
    ratio = np.ones(int(pool.sum()))
    if N:
        known = rows[pool] > 0
        ratio[known] = N / rows[pool][known]
    scaled = seconds[pool] * ratio
    per_trial = float(np.median(scaled))
    where = "other N" if same_m.any() else "other N or m"
    return per_trial, (
        f"median {per_trial:.1f} s/trial of {int(pool.sum())} records, {where}"
        + (", scaled to N" if N else "")
    )


def plan_setting(cfg: DictConfig | Mapping[str, Any], records=None) -> Plan:
    """The dry run of a setting: how many of its trials are recorded, and an estimate of the
    wall time of the others on this machine from the store's ``fit_seconds`` of the same model
    on the same data (``trial_seconds``), divided over the worker processes the run would use.
    Trains nothing and loads no data."""
    from pilid.experiments.config import check_config, normalize_config

    config = resolved_config(cfg)
    check_config(config)
    config = normalize_config(config)
    sid = setting_id(config)
    store = ResultStore(records_in(config["results_dir"]))
    if records is None:  # none yet: []; a directory or an unreadable file: one PilidError line
        records = store.records()
    trials = int(config["trials"])
    done = {r["trial"] for r in records if r["setting_id"] == sid and r["trial"] < trials}
    missing = trials - (0 if config.get("force") else len(done))
    model, data = config["model"]["name"], config["data"]
    dataset = table_name(data) if is_table(data) else data["name"]  # a table: its records' name
    same = [r for r in records if r.get("model") == model and r.get("dataset") == dataset]
    seconds = None
    basis = f"no records of {model} on {dataset} yet"
    if same:
        per_trial, basis = trial_seconds(
            [r.get("fit_seconds") for r in same],
            [_number((r.get("data") or {}).get("N")) for r in same],
            [_number((r.get("data") or {}).get("m")) for r in same],
            data.get("N"),
            data.get("m"),
        )
        batchable = _batchable(config)
        train = config.get("train") or {}
        workers = resolve_n_jobs(train.get("n_jobs", "auto"), batchable, "cpu", max(missing, 1))
        seconds = per_trial * missing / max(1, workers if batchable else 1)
    return Plan(setting_label(config), sid, trials, trials - missing, seconds, basis)


def _batchable(config: Mapping[str, Any]) -> bool:
    """Whether the setting's model trains its trials in blocks (pilid's neural estimators)."""
    from pilid.experiments.model_config import estimator_class, is_batchable

    task = (config.get("data") or {}).get("task") or "regression"
    try:
        return is_batchable(estimator_class(config["model"], str(task)))
    except PilidError:  # the check of the config names the problem; the plan assumes one by one
        return False


#: Trials per block when ``train.trials_per_batch`` is auto: on a CPU, blocks go one per
#: one-thread worker (2 blocks of 10 fill 2 cores at the paper's 20 trials); a GPU trains the
#: paper's 20 trials as one ensemble.
BLOCK_SIZE_CPU = 10
BLOCK_SIZE_CUDA = 20


def resolve_block_size(value: Any, device: str, n_bags: int = 1) -> int:
    """Trials per block: ``train.trials_per_batch``, or by device when it is auto/null.

    With bagging (``model.n_bags`` = k > 1) every member trains as a trial of the ensemble and
    holds its own copy of its bootstrap rows (x and Phi), so auto divides the block by k (at
    least one trial): 10 trials of a bag of 16 on bank (36,000 training rows) held 10.8 GB per
    worker, one trial holds about a tenth of it.
    """
    if value in (None, "auto"):
        size = BLOCK_SIZE_CPU if device == "cpu" else BLOCK_SIZE_CUDA
        return max(1, size // max(1, int(n_bags)))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PilidError(
            f"train.trials_per_batch={value!r} is invalid; use a whole number >= 1 or auto"
        )
    return value


def plan_blocks(trials: int, block_size: int, to_run: Iterable[int]) -> list[list[int]]:
    """The blocks to train: block ``b`` holds trials ``b*block_size .. (b+1)*block_size - 1``
    (cut at ``trials``), whatever else is recorded; a block is trained whole when any of its
    trials is in ``to_run``. A trial's numbers thus depend on its block, never on which other
    trials happened to be missing."""
    wanted = set(to_run)
    blocks = []
    for start in range(0, trials, block_size):
        block = list(range(start, min(start + block_size, trials)))
        if wanted.intersection(block):
            blocks.append(block)
    return blocks


def resolve_n_jobs(value: Any, batched: bool, device: str, n_units: int) -> int:
    """Worker processes for a setting's blocks or trials; ``auto`` picks what is fastest.

    On the CPU, one one-thread worker per core, each training its share of the trials as one
    batched ensemble, is faster than one multi-threaded process, which slows most beside another
    busy process (the documentation's Benchmarks page measures both). So on CPU ``auto`` is one
    one-thread worker per core for batched neural models, at most one per block; on CUDA it is
    one process holding each block on the GPU; models that do not batch run one by one (scikit-
    learn baselines parallelise inside, e.g. the random forest's and EBM's ``n_jobs``). Inside a
    worker process of the ``pilid_joblib`` launcher (``pilid.parallel.in_worker()``) ``auto`` is
    1: the launcher already runs one setting per core, so the setting's blocks train one after
    the other in that worker. The number of workers never changes a result: on the CPU every
    neural block trains on one thread wherever it runs.
    """
    if value in (None, "auto"):
        from pilid.parallel import in_worker

        if not batched or device != "cpu" or in_worker():
            return 1
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(int(cores or 1), n_units))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PilidError(f"train.n_jobs={value!r} is invalid; use auto or a whole number >= 1")
    return value
