"""Benchmark: the cost of the additive part and the MLP throughput, as ratios from one run.

    python benchmarks/bench_pilid.py           # N=16,000, m=50, gamma=20, paper's MLP, batch 256
    python benchmarks/bench_pilid.py --quick   # tiny smoke run

Prints (1) one PiLiD epoch / one bare-MLP epoch (target <= 1.2: the additive part nearly free)
and (2) the MLP epoch's GFLOP/s against the machine's float32 matmul GFLOP/s measured in the same
run (target >= 50 %). Epoch times are the trainer's own (`history_["epoch_seconds"]`); the two
models are fitted in alternation and each keeps its fastest epoch, which damps noise from other
processes on the machine. Set OMP_NUM_THREADS / --threads to the cores you want to measure.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from pilid.estimators.pilid import MLPRegressor, PiLiDRegressor
from pilid.nn.least_squares import lstsq_init
from pilid.nn.mlp import PAPER_HIDDEN_LAYERS
from pilid.nn.piecewise import fit_knots, phi_torch


def matmul_gflops(size: int, repeats: int) -> float:
    """Best float32 GFLOP/s of a square matmul (2 n^3 flops); the peak is the best of 1024, 2048."""
    a = torch.randn(size, size)
    b = torch.randn(size, size)
    torch.mm(a, b)
    best = 0.0
    for _ in range(repeats):
        t = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * size**3 / (time.perf_counter() - t) / 1e9)
    return best


def mlp_epoch_flops(n: int, m: int, layers) -> float:
    """Forward (2 flops per multiply-add) + backward (weights and inputs, twice the forward,
    minus the input gradient of the first layer, which is not needed)."""
    sizes = (m, *layers, 1)
    macs = sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    return n * (2 * macs + 4 * macs - 2 * sizes[0] * sizes[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=16000)
    ap.add_argument("--m", type=int, default=50)
    ap.add_argument("--gamma", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=3, help="epochs per fit (first one dropped)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating fits of each model")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    args = ap.parse_args()
    layers = PAPER_HIDDEN_LAYERS
    if args.quick:
        args.N, args.m, args.gamma, args.epochs, args.rounds = 1000, 10, 5, 2, 1
        layers = (32, 64, 32)
    if args.threads:
        torch.set_num_threads(args.threads)

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(args.N, args.m))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=args.N)
    common = dict(
        hidden_layers=layers,
        epochs=args.epochs,
        batch_size=args.batch,
        patience=None,
        lam=0.0,
        random_state=0,
        device="cpu",
    )
    models = {
        "pilid": PiLiDRegressor(
            gamma=args.gamma, purify=False, knots="uniform", n_bags=1, **common
        ),
        "mlp": MLPRegressor(**common),
    }
    best = {k: np.inf for k in models}
    fit_s = {k: np.inf for k in models}
    for _ in range(args.rounds):
        for name, est in models.items():
            t = time.perf_counter()
            est.fit(X, y)
            fit_s[name] = min(fit_s[name], time.perf_counter() - t)
            secs = est.history_["epoch_seconds"]
            best[name] = min(best[name], min(secs[1:] if len(secs) > 1 else secs))

    knots = fit_knots(X, args.gamma)
    phi = phi_torch(torch.as_tensor(X, dtype=torch.float32), knots.torch_layout())[None]
    target = torch.as_tensor(y, dtype=torch.float32)[None]
    mask = torch.ones(1, phi.shape[2])
    init_s = np.inf
    for _ in range(3):
        t = time.perf_counter()
        lstsq_init(phi, target, mask)
        init_s = min(init_s, time.perf_counter() - t)

    peak = max(
        matmul_gflops(size, repeats=5) for size in ((1024, 2048) if not args.quick else (256,))
    )
    flops = mlp_epoch_flops(args.N, args.m, layers)
    mlp_gflops = flops / best["mlp"] / 1e9
    pilid_ratio = best["pilid"] / best["mlp"]
    print(
        f"setting: N={args.N} m={args.m} gamma={args.gamma} batch={args.batch} "
        f"layers={list(layers)} threads={torch.get_num_threads()}"
    )
    print(f"PiLiD epoch {best['pilid']:.3f} s | bare-MLP epoch {best['mlp']:.3f} s")
    print(
        f"ratio PiLiD/MLP epoch = {pilid_ratio:.3f}  (target <= 1.2)  "
        f"[whole fit incl. init: {fit_s['pilid']:.2f} s vs {fit_s['mlp']:.2f} s]"
    )
    print(
        f"lstsq init (Cholesky of the ridge normal equations, {phi.shape[1]} x {phi.shape[2]} "
        f"Phi) {init_s:.3f} s = {init_s / best['pilid']:.2f} PiLiD epochs (5 % of a run of "
        f"{int(np.ceil(init_s / best['pilid'] / 0.05))} epochs)"
    )
    print(
        f"MLP epoch {mlp_gflops:.1f} GFLOP/s | matmul peak {peak:.1f} GFLOP/s | "
        f"ratio = {mlp_gflops / peak:.2f}  (target >= 0.50)"
    )


if __name__ == "__main__":
    main()
