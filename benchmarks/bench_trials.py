"""Benchmark of batched trials: T trials trained as one batched ensemble vs one after another.

    python benchmarks/bench_trials.py           # T=20, N=16,000, m=20: paper MLP and a small net
    python benchmarks/bench_trials.py --quick   # tiny smoke run

For each network, prints the wall time of T PiLiD trials (same hyper-parameters, seeds 0..T-1,
each on its own 80 % subsample, fixed epoch count so every variant does the same work)

* sequential: ``clone(est).fit(X_t, y_t)`` for t = 1..T, in this process;
* batched: ``fit_batched(T estimators)``: one ensemble, every parameter with a leading trial dim;
* workers: ``fit_batched(..., n_jobs=W)``: W one-thread processes, each a batched ensemble of
  T / W trials (the worker pool is started before timing, as in a long sweep);

and the speed-up of each over sequential, on whatever device `--device` resolves to.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from sklearn.base import clone

from pilid.estimators.pilid import PiLiDRegressor
from pilid.models.fitting import fit_batched
from pilid.nn.mlp import PAPER_HIDDEN_LAYERS


def _trials(T: int, N: int, m: int):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(N, m))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=N)
    n_fit = int(0.8 * N)
    Xs, ys = [], []
    for t in range(T):
        idx = np.random.default_rng(t).permutation(N)[:n_fit]
        Xs.append(X[idx])
        ys.append(y[idx])
    return Xs, ys


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench(name, template, Xs, ys, workers: int, device) -> None:
    T = len(Xs)
    ests = [clone(template).set_params(random_state=t) for t in range(T)]
    clone(template).fit(Xs[0][:256], ys[0][:256])  # warm-up (lazy imports, allocator)
    seq = _timed(lambda: [clone(e).fit(X, y) for e, X, y in zip(ests, Xs, ys)])
    bat = _timed(lambda: fit_batched([clone(e) for e in ests], Xs, ys))
    line = (
        f"{name:<28} T={T} device={device}: sequential {seq:7.2f} s | batched {bat:7.2f} s "
        f"(x{seq / bat:.2f})"
    )
    if workers > 1 and device.type == "cpu":
        # start the (reused) worker pool first: imports in fresh processes take seconds
        warm = [clone(template).set_params(epochs=1) for _ in range(workers)]
        fit_batched(
            warm, [X[:256] for X in Xs[:workers]], [y[:256] for y in ys[:workers]], n_jobs=workers
        )
        wk = _timed(lambda: fit_batched([clone(e) for e in ests], Xs, ys, n_jobs=workers))
        line += f" | {workers} one-thread workers {wk:7.2f} s (x{seq / wk:.2f})"
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=20)
    ap.add_argument("--N", type=int, default=16000)
    ap.add_argument("--m", type=int, default=20)
    ap.add_argument("--gamma", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    args = ap.parse_args()
    nets = {"paper MLP": PAPER_HIDDEN_LAYERS, "small net (32, 16)": (32, 16)}
    if args.quick:
        args.T, args.N, args.m, args.epochs = 4, 800, 5, 1
        nets = {"tiny net (16,)": (16,)}
    from pilid.device import resolve_device

    device = resolve_device(args.device)
    print(
        f"setting: N={args.N} (80 % per trial) m={args.m} gamma={args.gamma} epochs={args.epochs} "
        f"batch={args.batch} threads={torch.get_num_threads()} cpus={os.cpu_count()}"
    )
    Xs, ys = _trials(args.T, args.N, args.m)
    for name, layers in nets.items():
        template = PiLiDRegressor(
            gamma=args.gamma,
            hidden_layers=layers,
            epochs=args.epochs,
            batch_size=args.batch,
            patience=None,
            purify=False,
            device=str(device),
            knots="uniform",  # the paper's knots, one model per trial (not the library's bag)
            n_bags=1,
        )
        bench(name, template, Xs, ys, args.workers, device)


if __name__ == "__main__":
    main()
