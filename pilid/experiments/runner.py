"""Run one setting: ``trials`` trials (the paper: 20, each its own 80/20 split and seed).

``run_setting(cfg)`` takes the composed config (a ``DictConfig`` or a plain dict with the keys
of ``conf/config.yaml``), skips the trials already in the results store, trains the missing
ones (in fixed blocks trained as one ensemble, one by one, or in one-thread worker
processes), writes one record per finished trial at once, and returns the ``mean ± std``
summary over the trials.

Same numbers after a resume: a neural model's trials train in blocks fixed by trial index
(``plan_blocks``), on one thread per block on the CPU, and a resume retrains the whole block a
missing trial belongs to. A trial's value is therefore a function of the setting, its block
(``train.trials_per_batch``), the device and the library versions, all in its record's
``layout``/``device``/``versions``; the number of worker processes (``train.n_jobs``) and the
moment of an interruption play no part.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import platform
import signal
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from pilid.config import TRAIN_PARAM_KEYS, model_params  # noqa: F401 - re-exported
from pilid.errors import PilidError
from pilid.experiments.setting import canonical_json, resolved_config, setting_id
from pilid.experiments.store import ResultStore

METRIC_LABELS = {"mse": "MSE", "auc": "AUC"}


@dataclass
class Summary:
    """The outcome of a setting: the summary ``line`` and ``mean``/``std`` over ``n`` trials.

    ``std`` is the sample standard deviation over trials (ddof=1; 0 for a single trial), as in
    the paper's ``mean ± std`` tables. ``records`` holds the setting's records, by trial.
    """

    line: str
    mean: float
    std: float
    n: int
    records: list[dict[str, Any]] = field(default_factory=list)
    setting_id: str = ""
    ran: int = 0  # trials trained by this call (the others came from the store)


# -- public entry ------------------------------------------------------------------------------
class RunInterrupted(Exception):
    """SIGINT or SIGTERM stopped a setting; the finished trials are recorded.

    ``recorded`` of ``trials`` trials of the setting are in the store; ``exit_code`` is
    128 + the signal number (130 for Ctrl-C, 143 for SIGTERM), the shell's convention.
    """

    def __init__(self, recorded: int, trials: int, signum: int):
        self.recorded, self.trials, self.signum = recorded, trials, signum
        self.exit_code = 128 + signum
        super().__init__(
            f"interrupted: {recorded} of {trials} trials recorded; run the same command to resume"
        )


def run_setting(cfg: DictConfig | Mapping[str, Any]) -> Summary:
    """Run the missing trials of one setting and summarise all of them.

    Trial ``t`` (``0 <= t < trials``) uses seed ``seed + t`` for its split and its model.
    Trials whose records are already in ``<results_dir>/records.jsonl`` are skipped unless
    ``force=true``. Neural models train in fixed blocks of trials (see ``plan_blocks``): a block
    with any missing trial is trained whole and its missing trials recorded at once, so that an
    interrupted and resumed run gives the same numbers as an uninterrupted one. SIGINT/SIGTERM
    stop the workers, keep every recorded trial and raise ``RunInterrupted``.
    """
    from pilid.config import check_config, normalize_config

    try:
        config = resolved_config(cfg)
    except OmegaConfBaseException as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PilidError(f"the config cannot be resolved: {first}; fix that key") from error
    _check_keys(config)
    check_config(config)
    config = normalize_config(config)
    sid = setting_id(config)
    store = ResultStore(_results_dir(config["results_dir"]))
    store.check_writable()
    label = setting_label(config)
    trials = int(config["trials"])
    ran = 0
    with _setting_lock(store.root, sid):
        recorded = store.done_trials(sid)
        missing = (
            list(range(trials)) if config.get("force") else sorted(set(range(trials)) - recorded)
        )
        if missing:
            try:
                with _signals_as_exceptions():
                    ran = _run_trials(config, sid, store, missing, recorded, label)
            except (KeyboardInterrupt, _Terminated) as stop:
                signum = getattr(stop, "signum", signal.SIGINT)
                done = len(store.done_trials(sid) & set(range(trials)))
                raise RunInterrupted(done, trials, int(signum)) from None
    return summarize(store, sid, trials, label, ran=ran)


def setting_label(config: Mapping[str, Any]) -> str:
    """``<model>[ gamma=<g>] <dataset>[-<task>]``, e.g. ``pilid gamma=5 synthetic-regression``."""
    model = config["model"]
    data = config["data"]
    label = str(model["name"])
    if model.get("gamma") is not None:
        label += f" gamma={model['gamma']}"
    dataset = str(data["name"])
    if dataset == "synthetic":
        dataset += f"-{data.get('task', 'regression')}"
    return f"{label} {dataset}"


def summarize(store: ResultStore, sid: str, trials: int, label: str, ran: int = 0) -> Summary:
    """The summary of trials ``0..trials-1`` of setting ``sid`` from the store (newest records).

    Records that fail the store's schema (a ``null`` value, a string trial) were skipped with a
    warning when read, so every value here is a finite number.
    """
    records = [r for r in store.setting_records(sid) if r["trial"] < trials]
    values = np.array([r["value"] for r in records], dtype=float)
    n = len(values)
    if n == 0:
        raise PilidError(f"no finished trials for {label} (setting {sid}); run it again")
    mean = float(np.mean(values))
    std = float(np.std(values, ddof=1)) if n > 1 else 0.0
    metric = records[0].get("metric", "value")
    metric = METRIC_LABELS.get(metric, str(metric).upper())
    noun = "trial" if n == 1 else "trials"
    line = f"{label}: {metric} {mean:.4f} ± {std:.4f} over {n} {noun}"
    if n < trials:
        line += f" (of {trials})"
    return Summary(line, mean, std, n, records, sid, ran)


# -- dry run -------------------------------------------------------------------------------------
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


def plan_setting(cfg: DictConfig | Mapping[str, Any], records=None) -> Plan:
    """The dry run of a setting: how many of its trials are recorded, and an estimate of the
    wall time of the others on this machine from the store's ``fit_seconds`` of the same model
    on the same data (same N and m where there are such records), divided over the worker
    processes the run would use. Trains nothing and loads no data."""
    from pilid.config import check_config, normalize_config

    config = resolved_config(cfg)
    check_config(config)
    config = normalize_config(config)
    sid = setting_id(config)
    store = ResultStore(_results_dir(config["results_dir"]))
    if records is None:
        records = store.records() if store.path.is_file() else []
    trials = int(config["trials"])
    done = {r["trial"] for r in records if r["setting_id"] == sid and r["trial"] < trials}
    missing = trials - (0 if config.get("force") else len(done))
    model, data = config["model"]["name"], config["data"]
    same = [r for r in records if r.get("model") == model and r.get("dataset") == data["name"]]
    exact = [
        r
        for r in same
        if r.get("data", {}).get("N") == data.get("N")
        and r.get("data", {}).get("m") == data.get("m")
    ]
    basis_records = exact or same
    seconds = None
    basis = f"no records of {model} on {data['name']} yet"
    if basis_records:
        per_trial = float(np.median([r.get("fit_seconds") or 0.0 for r in basis_records]))
        from pilid.models.registry import get_model

        batchable = bool(getattr(get_model(model), "batchable", False))
        train = config.get("train") or {}
        workers = resolve_n_jobs(train.get("n_jobs", "auto"), batchable, "cpu", max(missing, 1))
        seconds = per_trial * missing / max(1, workers if batchable else 1)
        basis = f"median {per_trial:.1f} s/trial of {len(basis_records)} records" + (
            "" if exact else ", other N or m"
        )
    return Plan(setting_label(config), sid, trials, trials - missing, seconds, basis)


# -- signals -------------------------------------------------------------------------------------
class _Terminated(BaseException):
    """SIGTERM (e.g. a Slurm time-out) while trials run; raised like KeyboardInterrupt."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_as_exceptions() -> Iterator[None]:
    """Turn SIGTERM into ``_Terminated`` while the block runs (main thread only, and only where
    nobody else, e.g. submitit, handles SIGTERM already); SIGINT stays KeyboardInterrupt."""
    import threading

    installed = False
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGTERM)
        if previous in (signal.SIG_DFL, None):

            def handler(signum, frame):
                raise _Terminated(signum)

            signal.signal(signal.SIGTERM, handler)
            installed = True
    try:
        yield
    finally:
        if installed:
            signal.signal(signal.SIGTERM, previous)


# -- training ----------------------------------------------------------------------------------
@dataclass
class _Context:
    """What every trial of a setting shares (built once per process)."""

    config: dict[str, Any]
    sid: str
    dataset: Any
    spec: Any
    params: dict[str, Any]  # recorded: model config minus name + training settings
    build_params: dict[str, Any]  # handed to the registry (adds verbose)
    device: str


def _context(config: dict[str, Any], sid: str) -> _Context:
    from pilid.device import resolve_device

    device = _device_name(resolve_device(config.get("device", "auto")))
    dataset = _load_dataset(canonical_json(config["data"]), config.get("data_dir"))
    spec = _model_spec(config["model"]["name"])
    params = model_params(config)
    build_params = {**params, "verbose": bool(config.get("verbose", False))}
    return _Context(config, sid, dataset, spec, params, build_params, device)


#: Trials per block when ``train.trials_per_batch`` is auto: on a CPU, blocks go one per
#: one-thread worker (2 blocks of 10 fill 2 cores at the paper's 20 trials); a GPU trains the
#: paper's 20 trials as one ensemble.
BLOCK_SIZE_CPU = 10
BLOCK_SIZE_CUDA = 20


def resolve_block_size(value: Any, device: str) -> int:
    """Trials per block: ``train.trials_per_batch``, or by device when it is auto/null."""
    if value in (None, "auto"):
        return BLOCK_SIZE_CPU if device == "cpu" else BLOCK_SIZE_CUDA
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


def _run_trials(
    config: dict[str, Any],
    sid: str,
    store: ResultStore,
    missing: list[int],
    recorded: set[int],
    label: str,
) -> int:
    ctx = _context(config, sid)
    _check_split_sizes(ctx)
    train = config.get("train") or {}
    batched = bool(train.get("batched", True)) and bool(getattr(ctx.spec, "batchable", False))
    neural = bool(getattr(ctx.spec, "batchable", False))
    trials = int(config["trials"])
    if batched:
        block_size = resolve_block_size(train.get("trials_per_batch"), ctx.device)
        units = plan_blocks(trials, block_size, missing)
    else:
        block_size = 1
        units = [[t] for t in missing]
    n_jobs = resolve_n_jobs(train.get("n_jobs", "auto"), batched, ctx.device, len(units))
    threads = 1 if (neural and ctx.device == "cpu") else None
    wanted = set(missing)
    old_values = {} if config.get("force") else _recorded_values(store, sid, recorded)
    jobs = [
        (config, sid, unit, sorted(wanted.intersection(unit)), block_size, threads, n_jobs)
        for unit in units
    ]
    with _progress(len(missing), label, bool(config.get("verbose"))) as bar:
        if n_jobs > 1 and len(jobs) > 1:
            from pilid.parallel import imap_processes

            with contextlib.closing(imap_processes(_unit_in_worker, jobs, n_jobs)) as results:
                for finished, others in results:
                    _record(store, finished, others, old_values, bar)
        else:
            for job in jobs:
                finished, others = _fit_unit(ctx, *job[2:])
                _record(store, finished, others, old_values, bar)
    return len(missing)


def resolve_n_jobs(value: Any, batched: bool, device: str, n_units: int) -> int:
    """Worker processes for a setting's blocks or trials; ``auto`` picks what is fastest.

    Measured with ``scripts/bench_trials.py`` on 2 CPU cores (T=20, N=16,000, the paper's MLP,
    against training the trials one by one): one 2-thread process training the ensemble with
    batched matmuls 1.28x on a quiet machine but 0.65x beside another busy process, one
    one-thread worker per core (each training its share of the trials as an ensemble) 1.33x and
    1.70x; small nets 2.95x vs 2.77x. So on CPU ``auto`` is one one-thread worker per core for
    batched neural models, at most one per block; on CUDA it is one process holding each block
    on the GPU; models that do not batch run one by one (scikit-learn baselines parallelise
    inside, e.g. the random forest's and EBM's ``n_jobs``). The number of workers never changes
    a result: on the CPU every neural block trains on one thread wherever it runs.
    """
    if value in (None, "auto"):
        if not batched or device != "cpu":
            return 1
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(int(cores or 1), n_units))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PilidError(f"train.n_jobs={value!r} is invalid; use auto or a whole number >= 1")
    return value


def _recorded_values(store: ResultStore, sid: str, recorded: set[int]) -> dict[int, float]:
    return {r["trial"]: r["value"] for r in store.setting_records(sid) if r["trial"] in recorded}


def _record(store, finished, others, old_values, bar) -> None:
    """Write artefacts, then the records (one atomic append): a record implies its artefacts.

    ``others`` are the values of the block's already-recorded trials, retrained with it; a value
    that differs from its record is reported (the record came from another layout or machine).
    """
    changed = [
        (t, old_values[t], v) for t, v in others.items() if t in old_values and old_values[t] != v
    ]
    if changed:
        t, old, new = changed[0]
        print(
            f"pilid: warning: {len(changed)} recorded trial(s) of this block retrained to other "
            f"values (trial {t}: record {old:.6g}, now {new:.6g}); the records were made with "
            "another layout, version or machine (see each record's layout); kept the records",
            file=sys.stderr,
        )
    bad = [r for r, _ in finished if not math.isfinite(r["value"])]
    finished = [(r, a) for r, a in finished if math.isfinite(r["value"])]
    for record, artefacts in finished:
        directory = store.root / "artifacts" / record["setting_id"]
        _write_artefacts(directory, record["trial"], artefacts)
    store.extend(record for record, _ in finished)
    bar.update(len(finished))
    if finished:
        last = finished[-1][0]
        bar.set_postfix_str(f"{last['metric']}={last['value']:.4f}", refresh=False)
    if bad:
        raise PilidError(
            f"trial {bad[0]['trial']} gave {bad[0]['metric']} = {bad[0]['value']} (training "
            "diverged), so it was not recorded; lower train.lr or check the data"
        )


def _trial_seed(ctx: _Context, trial: int) -> int:
    return int(ctx.config["seed"]) + int(trial)


def _build(ctx: _Context, seed: int, split) -> Any:
    categorical = [int(i) for i in np.flatnonzero(np.asarray(split.categorical, dtype=bool))]
    return ctx.spec.build(ctx.dataset.task, dict(ctx.build_params), seed, ctx.device, categorical)


def _check_split_sizes(ctx: _Context) -> None:
    """Refuse a dataset whose test split cannot give a meaningful metric (``data.N=5``)."""
    from pilid.data import make_split

    split = make_split(ctx.dataset, _trial_seed(ctx, 0))
    n_test, n_train = len(split.y_test), len(split.y_train)
    if n_test < MIN_TEST_ROWS or n_train < MIN_TEST_ROWS:
        raise PilidError(
            f"the data has {len(ctx.dataset.y)} rows: {n_train} to train and {n_test} to test "
            f"per trial, too few for a metric; use at least {5 * MIN_TEST_ROWS} rows (e.g. "
            f"data.N={max(100, 5 * MIN_TEST_ROWS)})"
        )
    if ctx.dataset.metric == "auc" and len(np.unique(split.y_test)) < 2:
        raise PilidError(
            "the test split holds one class only, so AUC is undefined; use more rows (data.N)"
        )


#: Fewest test (and training) rows per trial that give a metric worth reporting.
MIN_TEST_ROWS = 10


def _fit_unit(ctx, unit, to_record, block_size, threads, n_jobs):
    """Train one unit (a block of trials as one ensemble, or one trial alone) and return the
    records and artefacts of ``to_record``, plus the values of the unit's other trials."""
    from pilid.data import make_split
    from pilid.parallel import torch_threads
    from pilid.train import fit_batched

    seeds = [_trial_seed(ctx, t) for t in unit]
    splits = [make_split(ctx.dataset, seed) for seed in seeds]
    estimators = [_build(ctx, seed, split) for seed, split in zip(seeds, splits)]
    batched = bool(getattr(ctx.spec, "batchable", False))
    layout = {
        "mode": "block" if len(unit) > 1 or block_size > 1 else "single",
        "block": [unit[0], unit[-1] + 1],
        "block_size": block_size,
        "threads": threads,
        "device": ctx.device if batched else "cpu",
        "processes": n_jobs,
    }
    start = time.perf_counter()
    with torch_threads(threads) if threads else contextlib.nullcontext():
        if batched:
            fitted = fit_batched(
                estimators, [s.X_train for s in splits], [s.y_train for s in splits]
            )
        else:
            fitted = [est.fit(s.X_train, s.y_train) for est, s in zip(estimators, splits)]
    seconds = (time.perf_counter() - start) / len(unit)
    mode = "batched" if layout["mode"] == "block" else ("process" if n_jobs > 1 else "sequential")
    finished, others = [], {}
    keep = set(to_record)
    for t, seed, split, est in zip(unit, seeds, splits, fitted):
        if t in keep:
            finished.append(_finish(ctx, t, seed, split, est, seconds, mode, layout))
        else:
            others[t] = score(est, split, str(ctx.dataset.metric), str(ctx.dataset.task))
    return finished, others


def _unit_in_worker(job) -> tuple[list, dict]:
    """One unit in a worker process; the parent writes the records."""
    config, sid, *rest = job
    return _fit_unit(_context(config, sid), *rest)


def _finish(ctx, trial, seed, split, estimator, seconds, mode, layout) -> tuple[dict, dict]:
    dataset = ctx.dataset
    metric = str(dataset.metric)
    record = {
        "experiment": ctx.config.get("experiment_name", "adhoc"),
        "dataset": str(ctx.config["data"]["name"]),
        "model": str(ctx.config["model"]["name"]),
        "params": ctx.params,
        "N": int(len(dataset.y)),
        "m": int(dataset.X.shape[1]),
        "task": str(dataset.task),
        "trial": int(trial),
        "seed": int(seed),
        "metric": metric,
        "value": score(estimator, split, metric, str(dataset.task)),
        "fit_seconds": float(seconds),
        "fit_mode": mode,
        "layout": layout,
        "device": ctx.device if _takes_device(estimator) else "cpu",
        "versions": versions(),
        "setting_id": ctx.sid,
        "data": ctx.config["data"],
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    return record, artefact_frames(estimator, split)


def _takes_device(estimator) -> bool:
    """Whether the estimator runs on the resolved device (scikit-learn baselines use the CPU)."""
    get_params = getattr(estimator, "get_params", None)
    return callable(get_params) and "device" in get_params(deep=False)


def score(estimator, split, metric: str, task: str) -> float:
    """Test-split metric (``pilid.models.registry.score``): MSE in the split's target units, or
    ROC AUC of the positive-class score."""
    from pilid.models.registry import predict_scores
    from pilid.models.registry import score as metric_value

    return metric_value(metric, split.y_test, predict_scores(estimator, split.X_test, task))


# -- artefacts ---------------------------------------------------------------------------------
def artefact_frames(estimator, split) -> dict[str, Any]:
    """Per-trial tables for the figures: learned shapes (and block interactions)."""
    import pandas as pd

    frames: dict[str, Any] = {}
    if hasattr(estimator, "shape_functions"):
        shapes = pd.DataFrame(estimator.shape_functions()).copy()
        index = _feature_index(shapes["feature"], list(split.feature_names))
        x = shapes["x"].to_numpy(dtype=float)
        scale = np.asarray(split.x_scale, dtype=float)[index]
        offset = np.asarray(split.x_offset, dtype=float)[index]
        shapes["feature"] = np.asarray(split.feature_names, dtype=object)[index]
        shapes["x_original"] = x * scale + offset
        frames["shapes"] = shapes[["feature", "x", "x_original", "value"]]
    if hasattr(estimator, "interactions_"):
        names = np.asarray(split.feature_names, dtype=object)
        groups = [
            ";".join(names[_feature_index(_as_tuple(group), list(names))])
            for group in estimator.interactions_()
        ]
        frames["interactions"] = pd.DataFrame({"block": range(len(groups)), "features": groups})
    if hasattr(estimator, "interaction_grid"):
        frames.update(_interaction_grids(estimator, split))
    return frames


MAX_GRID_PAIRS = 8  # interaction grids stored per trial: the pairs of the strongest blocks


def ranked_pairs(estimator, names: list[str]) -> list[tuple[int, int]]:
    """Column pairs used by the active blocks of order >= 2, strongest first.

    A pair's strength is the largest ``block_interaction_share_`` (the std of the part of a
    block's output that no sum of one-feature functions explains, over the output's std) of
    the blocks that use it, then its largest ``block_share_``; ties keep column order. Every
    block of order >= 2 counts, even one whose joint effect is mostly additive: the heat map
    shows what the block learned, and on spambase the blocks are weak.
    """
    from itertools import combinations

    strength: dict[tuple[int, int], tuple[float, float]] = {}
    active = getattr(estimator, "active_blocks_", None)
    features = getattr(estimator, "block_features_", None)
    if callable(active) and features is not None:
        inter = np.asarray(getattr(estimator, "block_interaction_share_", []), dtype=float)
        share = np.asarray(getattr(estimator, "block_share_", []), dtype=float)
        for i in active():
            used = np.flatnonzero(np.asarray(features[i]))
            if len(used) < 2:
                continue
            key = (
                float(inter[i]) if i < len(inter) else 0.0,
                float(share[i]) if i < len(share) else 0.0,
            )
            for pair in combinations(sorted(int(j) for j in used), 2):
                strength[pair] = max(strength.get(pair, key), key)
    else:  # an estimator without block strengths: the groups it lists, in its order
        for group in estimator.interactions_(min_order=2, min_interaction=0.0):
            index = sorted(_feature_index(_as_tuple(group), names).tolist())
            for pair in combinations(index, 2):
                strength.setdefault(pair, (0.0, -len(strength)))
    return sorted(strength, key=lambda p: (-strength[p][0], -strength[p][1], p))


def _interaction_grids(estimator, split) -> dict[str, Any]:
    """Figure 5's data: the joint effect of the ``MAX_GRID_PAIRS`` strongest feature pairs
    (``ranked_pairs``) on a 50 x 50 grid in original units, as
    ``interaction-grid-trial<k>-<a>__<b>.csv``."""
    names = list(split.feature_names)
    frames: dict[str, Any] = {}
    for a, b in ranked_pairs(estimator, names)[:MAX_GRID_PAIRS]:
        grid = estimator.interaction_grid(a, b).copy()
        grid["x_a"] = grid["x_a"] * split.x_scale[a] + split.x_offset[a]
        grid["x_b"] = grid["x_b"] * split.x_scale[b] + split.x_offset[b]
        frames[("interaction-grid", names[a], names[b])] = grid
    return frames


def _as_tuple(group) -> tuple:
    return (group,) if isinstance(group, str | int | np.integer) else tuple(group)


def _feature_index(features, names: list[str]) -> np.ndarray:
    """Column index of each shape row's feature: a name of the split, an index, or ``x<k>``."""
    position = {name: j for j, name in enumerate(names)}
    values = list(features)
    unique = {v: _one_index(v, position, len(names)) for v in dict.fromkeys(values)}
    return np.array([unique[v] for v in values], dtype=int)


def _one_index(value, position: dict[str, int], m: int) -> int:
    if isinstance(value, str) and value in position:
        return position[value]
    text = str(value)
    for candidate in (text, text[1:] if text[:1] == "x" else None):
        if candidate is not None and candidate.isdigit() and int(candidate) < m:
            return int(candidate)
    raise PilidError(f"shape_functions() names feature {value!r}, which is not in the split")


def artefact_name(kind: str | tuple, trial: int) -> str:
    """File stem of an artefact: ``<kind>-trial<k>``, or for a pair's interaction grid
    ``interaction-grid-trial<k>-<a>__<b>`` (feature names used as they are, braces too)."""
    if isinstance(kind, tuple):
        prefix, *features = kind
        return f"{prefix}-trial{trial}-" + "__".join(str(f) for f in features)
    return f"{kind}-trial{trial}"


def _write_artefacts(directory: Path, trial: int, frames: dict[str, Any]) -> None:
    if not frames:
        return
    directory.mkdir(parents=True, exist_ok=True)
    for kind, frame in frames.items():
        name = artefact_name(kind, trial)
        target = directory / f"{name}.csv"
        temporary = directory / f".{name}.csv.{os.getpid()}.tmp"
        frame.to_csv(temporary, index=False)
        os.replace(temporary, target)


# -- helpers -----------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _load_dataset(data_json: str, data_dir: str | None):
    """``pilid.data.load_dataset`` for a data config (cached: workers load once per setting)."""
    import json

    from pilid.data import load_dataset

    options = json.loads(data_json)
    name = options.pop("name")
    if data_dir is not None:
        data_dir = os.path.expanduser(str(data_dir))
    return load_dataset(name, data_dir=data_dir, **options)


def _model_spec(name: str):
    from pilid.models.registry import get_model

    return get_model(name)


def _device_name(device) -> str:
    """``cpu``, or ``cuda:<index>`` with the index filled in."""
    if device.type == "cuda" and device.index is None:
        import torch

        return f"cuda:{torch.cuda.current_device()}"
    return str(device)


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """Versions of Python and the libraries that decide the numbers."""
    import pandas
    import sklearn
    import torch

    import pilid

    return {
        "python": platform.python_version(),
        "pilid": pilid.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "pandas": pandas.__version__,
        "sklearn": sklearn.__version__,
    }


def _check_keys(config: Mapping[str, Any]) -> None:
    for key in ("trials", "seed", "results_dir", "data", "model"):
        if key not in config or config[key] is None:
            raise PilidError(f"the config has no {key!r}; compose it from conf/config.yaml")
    trials = config["trials"]
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise PilidError(f"trials={trials!r} is invalid; use a whole number >= 1 (the paper: 20)")
    if isinstance(config["seed"], bool) or not isinstance(config["seed"], int):
        raise PilidError(f"seed={config['seed']!r} is invalid; use a whole number")


def _results_dir(path: str | os.PathLike) -> Path:
    """The records file of ``results_dir``, which must be a directory (made when missing)."""
    from pilid.experiments.store import RECORDS_FILE

    return _absolute(path) / RECORDS_FILE


def _absolute(path: str | os.PathLike) -> Path:
    """``results_dir`` relative to where the command was started (also under Hydra's chdir)."""
    path = Path(os.path.expanduser(str(path)))
    if path.is_absolute():
        return path
    try:
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized():
            return Path(HydraConfig.get().runtime.cwd) / path
    except ImportError:  # pragma: no cover - hydra is a dependency
        pass
    return Path.cwd() / path


@contextlib.contextmanager
def _setting_lock(root: Path, sid: str) -> Iterator[None]:
    """Hold ``<results_dir>/.locks/<setting_id>.lock`` while a setting runs.

    A second process on the same setting (a duplicate job, a Slurm requeue racing the old one)
    waits, then finds the trials recorded and only prints the summary. The kernel drops the lock
    when its holder dies, even by SIGKILL.
    """
    directory = root / ".locks"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = open(directory / f"{sid}.lock", "a+b")  # noqa: SIM115 - closed below
    except OSError as error:
        raise PilidError(
            f"cannot write to results_dir {str(root)!r} ({error.strerror}); "
            "set results_dir to a writable directory"
        ) from error
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(
                f"pilid: setting {sid} is running in another process; waiting for it",
                file=sys.stderr,
                flush=True,
            )
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        handle.close()


@contextlib.contextmanager
def _progress(total: int, label: str, verbose: bool):
    """A tqdm bar over trials on stderr; off when stderr is not a terminal unless verbose."""
    from tqdm.auto import tqdm

    desc = label
    with contextlib.suppress(Exception):
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized() and HydraConfig.get().mode.name == "MULTIRUN":
            desc = f"#{HydraConfig.get().job.num} {label}"
    disable = not (verbose or sys.stderr.isatty())
    bar = tqdm(total=total, desc=desc, unit="trial", file=sys.stderr, disable=disable)
    try:
        yield bar
    finally:
        bar.close()
