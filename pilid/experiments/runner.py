"""Run one setting: ``trials`` trials (the paper: 20, each its own 80/20 split and seed).

``run_setting(cfg)`` takes the composed config (a ``DictConfig`` or a plain dict with the keys
of ``conf/config.yaml``), skips the trials already in the results store, trains the missing
ones (as one batched ensemble, one by one, or in one-thread worker processes), writes one
record per finished trial at once, and returns the ``mean ± std`` summary over the trials.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from pilid.errors import PilidError
from pilid.experiments.setting import canonical_json, resolved_config, setting_id
from pilid.experiments.store import ResultStore

#: Keys of ``cfg.train`` handed to the estimators (with the model config minus ``name``).
TRAIN_PARAM_KEYS = ("epochs", "batch_size", "lr", "optimizer", "patience", "val_fraction")
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
def run_setting(cfg: DictConfig | Mapping[str, Any]) -> Summary:
    """Run the missing trials of one setting and summarise all of them.

    Trial ``t`` (``0 <= t < trials``) uses seed ``seed + t`` for its split and its model. Trials
    whose records are already in ``<results_dir>/records.jsonl`` are skipped unless
    ``force=true``. Each finished trial (or batched chunk of ``train.trials_per_batch`` trials)
    is recorded before the next starts, so an interrupted run loses at most one chunk.
    """
    try:
        config = resolved_config(cfg)
    except OmegaConfBaseException as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise PilidError(f"the config cannot be resolved: {first}; fix that key") from error
    _check_keys(config)
    sid = setting_id(config)
    store = ResultStore(_absolute(config["results_dir"]))
    label = setting_label(config)
    trials = int(config["trials"])
    ran = 0
    with _setting_lock(store.root, sid):
        done = set() if config.get("force") else store.done_trials(sid)
        missing = [t for t in range(trials) if t not in done]
        if missing:
            ran = _run_trials(config, sid, store, missing, label)
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
    """The summary of trials ``0..trials-1`` of setting ``sid`` from the store (newest records)."""
    records = [
        r
        for r in store.setting_records(sid)
        if isinstance(r.get("trial"), int) and 0 <= r["trial"] < trials
    ]
    values = np.array(
        [np.nan if r.get("value") is None else r["value"] for r in records], dtype=float
    )
    n = len(values)
    if n == 0:
        raise PilidError(f"no finished trials for {label} (setting {sid}); run it again")
    mean = float(np.mean(values))
    std = float(np.std(values, ddof=1)) if n > 1 else 0.0
    metric = METRIC_LABELS.get(records[0].get("metric"), str(records[0].get("metric")).upper())
    noun = "trial" if n == 1 else "trials"
    line = f"{label}: {metric} {mean:.4f} ± {std:.4f} over {n} {noun}"
    if n < trials:
        line += f" (of {trials})"
    return Summary(line, mean, std, n, records, sid, ran)


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
    params = {k: v for k, v in config["model"].items() if k != "name"}
    train = config.get("train") or {}
    params.update({k: train[k] for k in TRAIN_PARAM_KEYS if k in train})
    build_params = {**params, "verbose": bool(config.get("verbose", False))}
    return _Context(config, sid, dataset, spec, params, build_params, device)


def _run_trials(
    config: dict[str, Any], sid: str, store: ResultStore, missing: list[int], label: str
) -> int:
    ctx = _context(config, sid)
    train = config.get("train") or {}
    batched = bool(train.get("batched", True)) and bool(getattr(ctx.spec, "batchable", False))
    n_jobs = resolve_n_jobs(train.get("n_jobs", 1), batched, ctx.device, len(missing))
    with _progress(len(missing), label, bool(config.get("verbose"))) as bar:
        if batched:
            size = train.get("trials_per_batch") or len(missing)
            if int(size) < 1:
                raise PilidError(
                    f"train.trials_per_batch={size!r} is invalid; use a whole number >= 1 or null"
                )
            chunks = [missing[i : i + int(size)] for i in range(0, len(missing), int(size))]
            for chunk in chunks:
                finished = _fit_chunk_batched(ctx, chunk, n_jobs)
                _record(store, finished, bar)
        elif n_jobs > 1:
            from pilid.experiments.parallel import imap_processes

            jobs = [(config, sid, trial) for trial in missing]
            for finished in imap_processes(_trial_in_worker, jobs, n_jobs):
                _record(store, [finished], bar)
        else:
            for trial in missing:
                _record(store, [_fit_trial(ctx, trial, "sequential")], bar)
    return len(missing)


def resolve_n_jobs(value: Any, batched: bool, device: str, n_trials: int) -> int:
    """Worker processes for a setting's trials; ``auto`` picks what is fastest per device.

    Measured with ``scripts/bench_trials.py`` on 2 CPU cores (T=20, N=16,000, the paper's MLP,
    against training the trials one by one): one 2-thread process training the ensemble with
    batched matmuls 1.28x on a quiet machine but 0.65x beside another busy process, one
    one-thread worker per core (each training its share of the trials as an ensemble) 1.33x and
    1.70x; small nets 2.95x vs 2.77x. So on CPU ``auto`` is one one-thread worker per core for
    batched neural models (as fast when the machine is quiet, far more robust when it is not);
    on CUDA it is one process holding the whole ensemble on the GPU; models that do not batch
    run one by one
    (scikit-learn baselines parallelise inside, e.g. the random forest's and EBM's ``n_jobs``).
    """
    if value in (None, "auto"):
        if not batched or device != "cpu":
            return 1
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(int(cores or 1), n_trials))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PilidError(f"train.n_jobs={value!r} is invalid; use auto or a whole number >= 1")
    return value


def _record(store: ResultStore, finished: list[tuple[dict, dict]], bar) -> None:
    """Write artefacts, then the records (one atomic append): a record implies its artefacts."""
    for record, artefacts in finished:
        directory = store.root / "artifacts" / record["setting_id"]
        _write_artefacts(directory, record["trial"], artefacts)
    store.extend(record for record, _ in finished)
    bar.update(len(finished))
    last = finished[-1][0]
    bar.set_postfix_str(f"{last['metric']}={last['value']:.4f}", refresh=False)


def _trial_seed(ctx: _Context, trial: int) -> int:
    return int(ctx.config["seed"]) + int(trial)


def _build(ctx: _Context, seed: int, split) -> Any:
    categorical = [int(i) for i in np.flatnonzero(np.asarray(split.categorical, dtype=bool))]
    return ctx.spec.build(ctx.dataset.task, dict(ctx.build_params), seed, ctx.device, categorical)


def _fit_trial(ctx: _Context, trial: int, mode: str) -> tuple[dict, dict]:
    """Split, build, fit and score one trial on its own."""
    from pilid.data import make_split

    seed = _trial_seed(ctx, trial)
    split = make_split(ctx.dataset, seed)
    estimator = _build(ctx, seed, split)
    start = time.perf_counter()
    estimator.fit(split.X_train, split.y_train)
    seconds = time.perf_counter() - start
    return _finish(ctx, trial, seed, split, estimator, seconds, mode)


def _fit_chunk_batched(ctx: _Context, chunk: list[int], n_jobs: int) -> list[tuple[dict, dict]]:
    """Fit the chunk's trials as one ensemble (``pilid.train.fit_batched``)."""
    from pilid.data import make_split
    from pilid.train import fit_batched

    seeds = [_trial_seed(ctx, t) for t in chunk]
    splits = [make_split(ctx.dataset, seed) for seed in seeds]
    estimators = [_build(ctx, seed, split) for seed, split in zip(seeds, splits)]
    xs = [split.X_train for split in splits]
    ys = [split.y_train for split in splits]
    start = time.perf_counter()
    if n_jobs > 1:
        fitted = fit_batched(estimators, xs, ys, n_jobs=n_jobs)
    else:
        fitted = fit_batched(estimators, xs, ys)
    seconds = (time.perf_counter() - start) / len(chunk)
    return [
        _finish(ctx, t, seed, split, est, seconds, "batched")
        for t, seed, split, est in zip(chunk, seeds, splits, fitted)
    ]


def _trial_in_worker(job: tuple[dict, str, int]) -> tuple[dict, dict]:
    """One trial in a worker process (``train.n_jobs > 1``); the parent writes the record."""
    config, sid, trial = job
    return _fit_trial(_context(config, sid), trial, "process")


def _finish(ctx, trial, seed, split, estimator, seconds, mode) -> tuple[dict, dict]:
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


MAX_GRID_PAIRS = 8  # interaction grids stored per trial (the pairs of the strongest blocks)


def _interaction_grids(estimator, split) -> dict[str, Any]:
    """Figure 5's data: the joint effect of each feature pair that a block of order >= 2 uses,
    on a 50 x 50 grid in original units, as ``interaction-grid-trial<k>-<a>__<b>.csv``."""
    from itertools import combinations

    names = list(split.feature_names)
    pairs: list[tuple[int, int]] = []
    # every block of order >= 2, even one whose joint effect is mostly additive (min_interaction
    # 0): the heat map shows what the block learned, and on spambase the blocks are weak.
    for group in estimator.interactions_(min_order=2, min_interaction=0.0):
        index = sorted(_feature_index(_as_tuple(group), names).tolist())
        pairs.extend(p for p in combinations(index, 2) if p not in pairs)
    frames: dict[str, Any] = {}
    for a, b in pairs[:MAX_GRID_PAIRS]:
        grid = estimator.interaction_grid(a, b).copy()
        grid["x_a"] = grid["x_a"] * split.x_scale[a] + split.x_offset[a]
        grid["x_b"] = grid["x_b"] * split.x_scale[b] + split.x_offset[b]
        frames[f"interaction-grid-trial{{trial}}-{names[a]}__{names[b]}"] = grid
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


def _write_artefacts(directory: Path, trial: int, frames: dict[str, Any]) -> None:
    if not frames:
        return
    directory.mkdir(parents=True, exist_ok=True)
    for kind, frame in frames.items():
        name = kind.format(trial=trial) if "{trial}" in kind else f"{kind}-trial{trial}"
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
