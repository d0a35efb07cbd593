"""Benchmark: ``plot_interaction`` on the getting-started model, now against an earlier commit's,
in one run.

    python benchmarks/bench_interaction.py --since 7b79e61
    python benchmarks/bench_interaction.py --since HEAD~1 --repeats 1     # smoke run

The getting-started model (docs/getting_started.md): ``PiLiDRegressor(random_state=0)`` on
``load_dataset("synthetic", N=3000, m=5, noise=0.3)``'s first split. Each code runs in its own
process that imports pilid from its tree (this checkout's ``pilid/``, or the earlier commit's
exported with ``git archive``, `bench_since.export_package`), fits the model once and times
``model.plot_interaction("x0", "x1")`` (matplotlib's Agg backend) ``--repeats`` times; the parent
prints each code's fastest call, their ratio (earlier / now) and the largest difference between
the two codes' interaction grids (``interaction_grid``: the same numbers, or not).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_since import export_package  # noqa: E402  (benchmarks/: scripts, not a package)

#: What each process runs: the fit, the timed calls, the grid written for the comparison.
CHILD = """
import json, sys, time, warnings
sys.path.insert(0, {tree!r})  # before the editable install's finder (PYTHONPATH is not)
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
torch.set_num_threads({threads})
warnings.simplefilter("ignore")
from pilid import PiLiDRegressor
from pilid.data import load_dataset, make_split
data = load_dataset("synthetic", N=3000, m=5, noise=0.3)
split = make_split(data, 0)
model = PiLiDRegressor(random_state=0).fit(split.X_train, split.y_train)
seconds = []
for _ in range({repeats}):
    plt.close("all")
    start = time.perf_counter()
    model.plot_interaction("x0", "x1")
    seconds.append(time.perf_counter() - start)
grid = model.interaction_grid("x0", "x1")
np.save({grid!r}, grid["value"].to_numpy())
print(json.dumps({{"seconds": min(seconds), "pilid": __import__("pilid").__file__}}))
"""


def run_one(tree: Path, repeats: int, threads: int, grid: Path) -> dict:
    """One code's fastest ``plot_interaction`` call, in a process importing pilid from `tree`."""
    code = CHILD.format(tree=str(tree), threads=threads, repeats=repeats, grid=str(grid))
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_interaction: the run in {tree} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", required=True, help="the earlier commit, e.g. 7b79e61")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="torch threads per process")
    args = parser.parse_args(argv)
    import numpy as np

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        earlier = export_package(args.since, folder / "earlier")
        then = run_one(earlier, args.repeats, args.threads, folder / "then.npy")
        now = run_one(REPO, args.repeats, args.threads, folder / "now.npy")
        gap = float(np.max(np.abs(np.load(folder / "then.npy") - np.load(folder / "now.npy"))))
    if then["pilid"] == now["pilid"]:
        raise SystemExit(f"bench_interaction: both runs imported {now['pilid']}")
    print(
        f"plot_interaction('x0', 'x1') on the getting-started model ({args.threads} threads, "
        f"best of {args.repeats}): {args.since} {then['seconds']:.2f} s, now "
        f"{now['seconds']:.2f} s, {then['seconds'] / now['seconds']:.1f}x faster; the grids "
        f"differ by at most {gap:.1e} ({then['pilid']} against {now['pilid']})"
    )


if __name__ == "__main__":
    main()
