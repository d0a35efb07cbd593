"""Run one setting: ``trials`` trials (the paper: 20, each its own 80/20 split and seed).

``run_setting(cfg)`` takes the composed config (a ``DictConfig`` or a plain dict with the keys
of ``conf/config.yaml``), skips the trials already in the results store, trains the missing
ones (in fixed blocks trained as one ensemble, one by one, or in one-thread worker
processes), writes one record per finished trial at once, and returns the ``mean ± std``
summary over the trials. With a ``logger`` (``logger=mlflow``) the summary then goes to the
tracker too (`pilid.experiments.tracking`), after the trials are in the store.

Same numbers after a resume: a neural model's trials train in blocks fixed by trial index
(``plan_blocks``), on one thread per block on the CPU, and a resume retrains the whole block a
missing trial belongs to. A trial's value is therefore a function of the setting, its block
(``train.trials_per_batch``), the device and the library versions, all in its record's
``layout``/``device``/``versions``; the number of worker processes (``train.n_jobs``) and the
moment of an interruption play no part.
"""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

import numpy as np
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from pilid.errors import PilidError
from pilid.experiments.artefacts import artefact_frames, artifact_dir, write_artefacts
from pilid.experiments.config import TRAIN_PARAM_KEYS, model_params  # noqa: F401 - re-exported
from pilid.experiments.interrupts import RunInterrupted, Terminated, signals_as_exceptions
from pilid.experiments.locking import setting_lock
from pilid.experiments.planning import plan_blocks, resolve_block_size, resolve_n_jobs
from pilid.experiments.progress import progress
from pilid.experiments.scoring import Summary, refusal_line, summarize, trial_value
from pilid.experiments.setting import (
    canonical_json,
    is_table,
    resolved_config,
    setting_id,
    setting_label,
    table_identity,
)
from pilid.experiments.store import ResultStore, records_in
from pilid.experiments.tracking import tracker_from_config


def run_setting(cfg: DictConfig | Mapping[str, Any]) -> Summary:
    """Run the missing trials of one setting and summarise all of them.

    Trial ``t`` (``0 <= t < trials``) uses seed ``seed + t`` for its split and its model.
    Trials whose records are already in ``<results_dir>/records.jsonl`` are skipped unless
    ``force=true``. Neural models train in fixed blocks of trials (see ``plan_blocks``): a block
    with any missing trial is trained whole and its missing trials recorded at once, so that an
    interrupted and resumed run gives the same numbers as an uninterrupted one. SIGINT/SIGTERM
    stop the workers, keep every recorded trial and raise ``RunInterrupted``.
    """
    from pilid.experiments.config import check_config, normalize_config

    try:
        config = resolved_config(cfg)
    except OmegaConfBaseException as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PilidError(f"the config cannot be resolved: {first}; fix that key") from error
    _check_keys(config)
    check_config(config)
    config = normalize_config(config)
    config["data"] = table_identity(config["data"])  # a table: its name and its file's sha256
    sid = setting_id(config)
    tracker = tracker_from_config(config.get("logger"))  # None: off (the default)
    store = ResultStore(records_in(config["results_dir"]))
    store.check_writable()
    label = setting_label(config)
    trials = int(config["trials"])
    ran = 0
    with setting_lock(store.root, sid):
        recorded = store.done_trials(sid)
        if is_table(config["data"]) and not recorded:
            _note_other_contents(store, config["data"])
        missing = (
            list(range(trials)) if config.get("force") else sorted(set(range(trials)) - recorded)
        )
        if missing and recorded and not config.get("force"):
            _check_engine(config, store.setting_records(sid), label, sid)
        if missing:
            try:
                with signals_as_exceptions():
                    ran = _run_trials(config, sid, store, missing, recorded, label)
            except (KeyboardInterrupt, Terminated) as stop:
                signum = getattr(stop, "signum", signal.SIGINT)
                done = len(store.done_trials(sid) & set(range(trials)))
                raise RunInterrupted(done, trials, int(signum)) from None
        summary = summarize(store, sid, trials, label, ran=ran)
        if tracker is not None:  # after the trials are stored; under the lock: logged once
            tracker.log_setting(config, summary, artifact_dir(store.root, sid), label)
    return summary


def _check_engine(config: dict[str, Any], records: list[dict], label: str, sid: str) -> None:
    """A setting of a model the engine trains, resumed by another engine version than the one
    its records name (`pilid.train.version`), is refused in one line: its trials would mix two
    engines' digits."""
    from pilid.experiments.model_config import estimator_class, is_batchable
    from pilid.train.version import ENGINE_VERSION, FIRST_ENGINE_VERSION

    engines = {str((r.get("versions") or {}).get("engine", FIRST_ENGINE_VERSION)) for r in records}
    if engines <= {ENGINE_VERSION}:
        return
    task = str(records[0].get("task") or config["data"].get("task"))
    if not is_batchable(estimator_class(config["model"], task)):
        return  # the engine does not train it: its numbers do not depend on the engine
    found = ", ".join(sorted(engines - {ENGINE_VERSION}))
    raise PilidError(
        f"{label} (setting {sid}) has {len(records)} trial(s) recorded by engine {found}; this "
        f"pilid's engine is {ENGINE_VERSION}, whose fits differ in their last digits, and a "
        "setting never mixes two: run it anew with force=true (newer records supersede the "
        "old), or into another results_dir=<folder>"
    )


# -- training ----------------------------------------------------------------------------------
@dataclass
class _Context:
    """What every trial of a setting shares (built once per process)."""

    config: dict[str, Any]
    sid: str
    dataset: Any
    batchable: bool  # the model trains through fit_batched (pilid's neural estimators)
    estimator: str  # the class's dotted path (recorded)
    params: dict[str, Any]  # recorded: model config minus name + training settings
    device: str
    encoding: str = "onehot"  # how the splits give the categorical columns (recorded)


def _context(config: dict[str, Any], sid: str) -> _Context:
    from pilid.device import resolve_device

    device = _device_name(resolve_device(config.get("device", "auto")))
    data_json = canonical_json(config["data"])
    dataset = _load_dataset(data_json, config.get("data_dir"))
    from pilid.experiments.model_config import estimator_class, estimator_path, is_batchable

    task = str(dataset.task)
    batchable = is_batchable(estimator_class(config["model"], task))
    path = estimator_path(config["model"], task)
    if _has_missing_numbers(dataset) and not _takes_nan(config, task, device):
        model = str(config["model"]["name"])
        dataset = _load_dataset(data_json, config.get("data_dir"), no_nan_model=model)
    encoding = _encoding(config, task, dataset)
    params = model_params(config)
    return _Context(config, sid, dataset, batchable, path, params, device, encoding)


def _encoding(config: dict[str, Any], task: str, dataset) -> str:
    """How this model gets the categorical columns (`pilid.data.split.ENCODINGS`): a table's
    ``data.encoding=auto`` gives a model that takes them itself (`takes_categories`) one
    column of level codes each, every other model (and ``onehot``, and every other data set)
    one-hot."""
    from pilid.experiments.model_config import takes_categories

    chosen = (config.get("data") or {}).get("encoding", "onehot")
    if chosen == "auto" and dataset.categorical and takes_categories(config["model"], task):
        return "codes"
    return "onehot"


def _has_missing_numbers(dataset) -> bool:
    categorical = set(dataset.categorical or [])
    numeric = [c for c in dataset.X.columns if c not in categorical]
    return bool(numeric) and bool(dataset.X[numeric].isna().to_numpy().any())


def _takes_nan(config: dict[str, Any], task: str, device: str) -> bool:
    """Whether the model's estimator takes NaN in X (scikit-learn's ``allow_nan`` tag: PiLiD,
    PiLiB, NIT, the MLP, LightGBM, random forests); an estimator without tags is taken not to."""
    from sklearn.utils import get_tags

    from pilid.experiments.model_config import build_estimator

    estimator = build_estimator(config["model"], task, config.get("train") or {}, 0, device, [])
    try:
        return bool(get_tags(estimator).input_tags.allow_nan)
    except (AttributeError, TypeError, ValueError):
        return False


def _note_other_contents(store: ResultStore, data: dict[str, Any]) -> None:
    """One line on stderr when the store holds records of the same table file (name and path)
    made of other contents: the file was edited, or another one sits at that relative path;
    this run is a new setting and those records stay under their own."""
    if not store.path.is_file():
        return
    same = [
        (r.get("data") or {}).get("sha256")
        for r in store.records()
        if isinstance(r.get("data"), dict)
        and r["data"].get("path") == data["path"]
        and r.get("dataset") == data["name"]
    ]
    other = sorted({f"{s[:12]}..." if s else "none" for s in same if s != data["sha256"]})
    if other:
        print(
            f"pilid: note: data.path={data['path']} now has sha256 {data['sha256'][:12]}..., "
            f"not that of {len(same)} earlier record(s) of it ({', '.join(other)}): the file "
            "changed, so this is a new setting; the earlier records stay under their own",
            file=sys.stderr,
        )


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
    batched = bool(train.get("batched", True)) and ctx.batchable
    neural = ctx.batchable
    trials = int(config["trials"])
    if batched:
        n_bags = (config.get("model") or {}).get("n_bags") or 1
        block_size = resolve_block_size(train.get("trials_per_batch"), ctx.device, n_bags)
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
    refused: list[tuple[int, str]] = []  # trials not recorded (training diverged), and why
    with progress(len(missing), label, bool(config.get("verbose"))) as bar:
        if n_jobs > 1 and len(jobs) > 1:
            from pilid.parallel import imap_processes

            with contextlib.closing(imap_processes(_unit_in_worker, jobs, n_jobs)) as results:
                for finished, others in results:
                    refused += _record(store, finished, others, old_values, bar)
        else:
            for job in jobs:
                finished, others = _fit_unit(ctx, *job[2:])
                refused += _record(store, finished, others, old_values, bar)
    _refuse(ctx, label, refused, len(missing))
    return len(missing)


def _refuse(ctx: _Context, label: str, refused: list[tuple[int, str]], ran: int) -> None:
    """After every unit is recorded: one line (`TrainingDivergedError`, exit 2) naming the
    trials that were not, why, and the ``train.lr`` to try."""
    if refused:
        from pilid.errors import TrainingDivergedError

        diverged = any(why.startswith("training diverged") for _, why in refused)
        lr = ctx.params.get("lr") if (ctx.batchable or diverged) else None
        line = refusal_line(label, ctx.sid, refused, lr, recorded=ran - len(refused))
        raise TrainingDivergedError(line)


def _recorded_values(store: ResultStore, sid: str, recorded: set[int]) -> dict[int, float]:
    return {r["trial"]: r["value"] for r in store.setting_records(sid) if r["trial"] in recorded}


def _record(store, finished, others, old_values, bar) -> list[tuple[int, str]]:
    """Write artefacts, then the records (one atomic append): a record implies its artefacts.

    ``others`` are the values of the block's already-recorded trials, retrained with it; a value
    that differs from its record is reported (the record came from another layout or machine).
    Returns the refused trials (`scoring.trial_value`: training diverged), not recorded.
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
    refused = [(r["trial"], why) for r, _, why in finished if why is not None]
    finished = [(r, a) for r, a, why in finished if why is None]
    for record, artefacts in finished:
        directory = artifact_dir(store.root, record["setting_id"])
        write_artefacts(directory, record["trial"], artefacts)
    store.extend(record for record, _ in finished)
    bar.update(len(finished))
    if finished:
        last = finished[-1][0]
        bar.set_postfix_str(f"{last['metric']}={last['value']:.4f}", refresh=False)
    return refused


def _trial_seed(ctx: _Context, trial: int) -> int:
    return int(ctx.config["seed"]) + int(trial)


def _build(ctx: _Context, seed: int, split) -> Any:
    from pilid.experiments.model_config import build_estimator

    categorical = [int(i) for i in np.flatnonzero(np.asarray(split.categorical, dtype=bool))]
    model = ctx.config["model"]
    return build_estimator(
        model,
        str(ctx.dataset.task),
        ctx.config.get("train") or {},
        seed,
        ctx.device,
        categorical,
        verbose=bool(ctx.config.get("verbose", False)),
    )


def _check_split_sizes(ctx: _Context) -> None:
    """Refuse a dataset whose test split cannot give a meaningful metric (``data.N=5``)."""
    from pilid.data import make_split

    split = make_split(ctx.dataset, _trial_seed(ctx, 0), encoding=ctx.encoding)
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
    from pilid.models.fitting import fit_batched
    from pilid.parallel import torch_threads

    seeds = [_trial_seed(ctx, t) for t in unit]
    splits = [make_split(ctx.dataset, seed, encoding=ctx.encoding) for seed in seeds]
    estimators = [_build(ctx, seed, split) for seed, split in zip(seeds, splits)]
    batched = ctx.batchable
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
        if batched:  # a diverged trial is flagged (`diverged_`), the others fitted
            fitted = fit_batched(
                estimators,
                [s.X_train for s in splits],
                [s.y_train for s in splits],
                on_divergence="flag",
            )
        else:
            fitted = [_fit_one(est, s) for est, s in zip(estimators, splits)]
    seconds = (time.perf_counter() - start) / len(unit)
    mode = "batched" if layout["mode"] == "block" else ("process" if n_jobs > 1 else "sequential")
    finished, others = [], {}
    keep = set(to_record)
    for t, seed, split, est in zip(unit, seeds, splits, fitted):
        if t in keep:
            finished.append(_finish(ctx, t, seed, split, est, seconds, mode, layout))
        else:
            others[t] = trial_value(est, split, str(ctx.dataset.metric), str(ctx.dataset.task))[0]
    return finished, others


def _fit_one(estimator, split):
    """``estimator.fit`` on the split's training rows; an internal network's diverged
    training (GA's teacher) flags the trial (``diverged_``) instead of ending the run."""
    from pilid.errors import TrainingDivergedError

    try:
        return estimator.fit(split.X_train, split.y_train)
    except TrainingDivergedError as error:
        estimator.diverged_ = getattr(error, "reason", None) or str(error)
        return estimator


def _unit_in_worker(job) -> tuple[list, dict]:
    """One unit in a worker process; the parent writes the records."""
    config, sid, *rest = job
    return _fit_unit(_context(config, sid), *rest)


def _finish(ctx, trial, seed, split, estimator, seconds, mode, layout) -> tuple:
    """The trial's record, its artefacts, and why it must not be recorded (None: record it)."""
    dataset = ctx.dataset
    metric = str(dataset.metric)
    value, refused = trial_value(estimator, split, metric, str(dataset.task))
    record = {
        "experiment": ctx.config.get("experiment_name", "adhoc"),
        "dataset": str(ctx.config["data"]["name"]),
        "model": str(ctx.config["model"]["name"]),
        "estimator": ctx.estimator,
        "params": ctx.params,
        "N": int(len(dataset.y)),
        "m": int(dataset.X.shape[1]),
        "task": str(dataset.task),
        "trial": int(trial),
        "seed": int(seed),
        "metric": metric,
        "value": value,
        "fit_seconds": float(seconds),
        "fit_mode": mode,
        "layout": layout,
        "device": ctx.device if _takes_device(estimator) else "cpu",
        "versions": versions(),
        "setting_id": ctx.sid,
        "data": ctx.config["data"],
        "encoding": ctx.encoding,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if refused is not None:
        return record, None, refused
    return record, artefact_frames(estimator, split), None


def _takes_device(estimator) -> bool:
    """Whether the estimator runs on the resolved device (scikit-learn baselines use the CPU)."""
    get_params = getattr(estimator, "get_params", None)
    return callable(get_params) and "device" in get_params(deep=False)


# -- helpers -----------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _load_dataset(data_json: str, data_dir: str | None, no_nan_model: str | None = None):
    """``pilid.data.load_dataset`` for a data config (cached: workers load once per setting);
    for a model that takes no NaN (``no_nan_model``, its name), without the rows that have a
    missing number (`pilid.data.table.drop_missing`, logged)."""
    import json

    from pilid.data import load_dataset
    from pilid.data.split import SPLIT_OPTIONS
    from pilid.data.table import drop_missing

    if no_nan_model is not None:
        full = _load_dataset(data_json, data_dir)
        return drop_missing(full, f"model={no_nan_model} takes no NaN")
    options = json.loads(data_json)
    name = options.pop("name")
    for key in SPLIT_OPTIONS:  # how the splits encode, not how the data set is read
        options.pop(key, None)
    if data_dir is not None:
        data_dir = os.path.expanduser(str(data_dir))
    return load_dataset(name, data_dir=data_dir, **options)


def _device_name(device) -> str:
    """``cpu``, or ``cuda:<index>`` with the index filled in."""
    if device.type == "cuda" and device.index is None:
        import torch

        return f"cuda:{torch.cuda.current_device()}"
    return str(device)


#: Record key -> distribution of the libraries that fit or score some model, recorded where
#: installed. EBM's skill trial 0 gave AUC 0.88386 in a record of 2026-11-25 and 0.88439 a day
#: later with interpret-core 0.7.8 (with 1 core or all), the config and the recorded versions
#: equal: the record did not name interpret's version, so what changed is not known.
MODEL_LIBRARIES = {
    "scipy": "scipy",
    "interpret": "interpret-core",
    "lightgbm": "lightgbm",
    "aplr": "aplr",
    "pygam": "pygam",
    "pytabkit": "pytabkit",
}


@lru_cache(maxsize=1)
def versions() -> dict[str, str]:
    """Versions of Python and the libraries that decide the numbers (`MODEL_LIBRARIES` where
    installed)."""
    from importlib.metadata import PackageNotFoundError, version

    import pandas
    import sklearn
    import torch

    import pilid
    from pilid.train.version import ENGINE_VERSION

    found = {
        "python": platform.python_version(),
        "pilid": pilid.__version__,
        "engine": ENGINE_VERSION,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "pandas": pandas.__version__,
        "sklearn": sklearn.__version__,
    }
    for key, distribution in MODEL_LIBRARIES.items():
        with contextlib.suppress(PackageNotFoundError):
            found[key] = version(distribution)
    return found


def _check_keys(config: Mapping[str, Any]) -> None:
    """The keys a run cannot do without (their values are checked by `check_config`)."""
    for key in ("trials", "seed", "results_dir", "data", "model"):
        if key not in config or config[key] is None:
            raise PilidError(f"the config has no {key!r}; compose it from conf/config.yaml")
