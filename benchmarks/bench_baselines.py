"""Fit time per trial of every baseline on the paper's synthetic data.

    python benchmarks/bench_baselines.py                 # N=16,000, m=50, regression, all models
    python benchmarks/bench_baselines.py --task classification --models gam ga2m
    python benchmarks/bench_baselines.py --quick         # tiny smoke run (seconds)

Each model is built exactly as the runner builds it (`conf/model/<name>.yaml` + `train.*`
through `pilid.experiments.model_config`), fit on one 80/20 split of
`load_dataset("synthetic", N, m)` and scored on the test split. With `--trials T > 1` the
batchable neural models (mlp) are trained as one ensemble through `fit_batched` and their time
is the ensemble's divided by T, as the runner reports it; the other models are fit T times and
their mean is shown. All timings of one table come from one run on one machine: compare them
with each other, not across runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

MODELS = ("linear", "gam", "svm", "rf", "ga2m", "ga", "mlp")


def _config(name: str, overrides: list[str]) -> dict:
    """The resolved run config of model=<name> (the model's YAML with the overrides)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from pilid.experiments.config import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"model={name}", *overrides])
    return OmegaConf.to_container(cfg, resolve=True)


def _bench_one(name, task, splits, overrides, device):
    from sklearn.base import clone

    from pilid.experiments.model_config import build_estimator, estimator_class, is_batchable
    from pilid.models.fitting import fit_batched
    from pilid.models.metrics import predict_scores, score

    config = _config(name, overrides)
    model, train = config["model"], config["train"]
    metric = "mse" if task == "regression" else "auc"
    estimators = [build_estimator(model, task, train, s.seed, device, []) for s in splits]
    start = time.perf_counter()
    if is_batchable(estimator_class(model, task)) and len(splits) > 1:
        fitted = fit_batched(estimators, [s.X_train for s in splits], [s.y_train for s in splits])
    else:
        fitted = [clone(e).fit(s.X_train, s.y_train) for e, s in zip(estimators, splits)]
    fit_seconds = (time.perf_counter() - start) / len(splits)
    start = time.perf_counter()
    scores = [predict_scores(e, s.X_test, task) for e, s in zip(fitted, splits)]
    predict_seconds = (time.perf_counter() - start) / len(splits)
    values = [score(metric, s.y_test, v) for s, v in zip(splits, scores)]
    return fit_seconds, predict_seconds, metric, float(np.mean(values))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--N", type=int, default=16000, help="objects (default 16,000)")
    parser.add_argument("--m", type=int, default=50, help="features (default 50)")
    parser.add_argument("--task", choices=("regression", "classification"), default="regression")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--trials", type=int, default=1, help="trials (splits) per model")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first trial")
    parser.add_argument("--device", default="cpu", help="device of the neural models")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Hydra override for every model, e.g. train.epochs=20 (repeatable)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny smoke run: N=600, m=6")
    args = parser.parse_args(argv)

    overrides = list(args.override)
    if args.quick:
        args.N, args.m = 600, 6
        overrides = ["train.epochs=2", *overrides]

    from pilid.data import load_dataset, make_split

    data = load_dataset("synthetic", N=args.N, m=args.m, task=args.task)
    splits = [make_split(data, args.seed + t) for t in range(args.trials)]

    import torch

    print(
        f"# bench_baselines: synthetic {args.task}, N={args.N}, m={args.m}, trials={args.trials}; "
        f"{os.cpu_count()} CPU cores, torch threads {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
        f"python {platform.python_version()}"
    )
    if overrides:
        print(f"# overrides: {' '.join(overrides)}")
    header = f"{'model':<8} {'fit s/trial':>12} {'predict s':>10} {'metric':>6} {'value':>8}"
    print(header)
    print("-" * len(header))
    for name in args.models:
        model_overrides = list(overrides)
        if args.quick and name in ("mlp", "ga"):
            model_overrides.append("model.hidden_layers=[32,32]")
        if args.quick and name == "ga2m":
            model_overrides += ["model.outer_bags=2", "model.interactions=3"]
        if args.quick and name == "ga":
            model_overrides.append("model.student_outer_bags=2")
        fit_s, predict_s, metric, value = _bench_one(
            name, args.task, splits, model_overrides, args.device
        )
        print(f"{name:<8} {fit_s:>12.2f} {predict_s:>10.2f} {metric:>6} {value:>8.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
