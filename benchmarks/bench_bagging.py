"""Benchmark of bagged PiLiD: fit time of a bag of k members vs one model.

    python benchmarks/bench_bagging.py           # N=8,000, m=10, small net, k = 1, 4, 8
    python benchmarks/bench_bagging.py --quick   # tiny smoke run

A bag (`n_bags=k`, `pilid.models.bagging`) trains its k bootstrap members as ONE batched
ensemble (`pilid.models.fitting.fit_batched`). For each device (the CPU, and CUDA when present)
prints the wall time of `PiLiDRegressor(n_bags=k).fit` for every k and its ratio to k=1, all
measured in one run (best of `--repeats`) with a fixed epoch count (no early stopping), so every
member does the same work. A last line times the library's defaults (`LIBRARY_DEFAULTS`: a bag of 16
with a (64, 32) MLP, 40 smooth pieces, two candidates with and without pair terms) against the
paper's single model (`PAPER_PROTOCOL`: the six-layer MLP, ``--gamma`` pieces).
Run it with OMP_NUM_THREADS=1 for the one-core figure.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from sklearn.base import clone

from pilid.estimators.pilid import PAPER_PROTOCOL, PiLiDRegressor


def _data(N: int, m: int):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(N, m))
    y = np.sin(1.5 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + X[:, 2] * X[:, 3] + 0.2 * rng.normal(size=N)
    return X, y


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench(template, X, y, ks, device: str, repeats: int) -> None:
    template = clone(template).set_params(device=device)
    clone(template).set_params(epochs=1).fit(X[:512], y[:512])  # warm-up (imports, allocator)
    times = {}
    for k in ks:
        est = clone(template).set_params(n_bags=k)
        times[k] = min(_timed(lambda e=est: clone(e).fit(X, y)) for _ in range(repeats))
    base = times[ks[0]]
    parts = [f"k={k}: {t:6.2f} s (x{t / base:.2f})" for k, t in times.items()]
    print(f"device={device:<5} " + " | ".join(parts), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=8000)
    ap.add_argument("--m", type=int, default=10)
    ap.add_argument("--gamma", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, nargs="*", default=[64, 32])
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 4, 8])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    args = ap.parse_args()
    if args.quick:
        args.N, args.m, args.epochs, args.hidden, args.ks = 600, 4, 1, [16], [1, 2]
    print(
        f"setting: N={args.N} m={args.m} gamma={args.gamma} hidden={args.hidden} "
        f"epochs={args.epochs} batch={args.batch} threads={torch.get_num_threads()} "
        f"cpus={os.cpu_count()}"
    )
    X, y = _data(args.N, args.m)
    template = PiLiDRegressor(
        gamma=args.gamma,
        hidden_layers=args.hidden,
        epochs=args.epochs,
        batch_size=args.batch,
        patience=None,
        random_state=0,
        knots="uniform",  # the paper's knots and penalty; n_bags is set per k below
        lam=1e-5,
        smoothness=0.0,  # no roughness penalty and no pair candidates: the bag's cost alone
        pairs=0,
    )
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        bench(template, X, y, args.ks, device, args.repeats)
    fixed = dict(epochs=args.epochs, batch_size=args.batch, patience=None, random_state=0)
    paper = PiLiDRegressor(**{**PAPER_PROTOCOL, "gamma": args.gamma}, **fixed)
    library = PiLiDRegressor(**fixed)  # every other value the library's default (40 pieces)
    if args.quick:
        paper.set_params(hidden_layers=args.hidden)
        library.set_params(n_bags=2)
    for device in devices:
        times = {}
        for name, est in (("paper single", paper), ("library bag", library)):
            est = clone(est).set_params(device=device)
            clone(est).set_params(epochs=1).fit(X[:512], y[:512])  # warm-up
            times[name] = min(_timed(lambda e=est: clone(e).fit(X, y)) for _ in range(args.repeats))
        ratio = times["library bag"] / times["paper single"]
        print(
            f"device={device:<5} the paper's single model {times['paper single']:6.2f} s | "
            f"library defaults (bag of {library.n_bags}, {library.hidden_layers}) "
            f"{times['library bag']:6.2f} s (x{ratio:.2f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
