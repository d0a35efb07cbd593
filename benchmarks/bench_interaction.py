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
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_since import then_and_now  # noqa: E402  (benchmarks/: scripts, not a package)

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
np.save({saved!r}, grid["value"].to_numpy())
print(json.dumps({{"seconds": min(seconds), "file": __import__("pilid").__file__}}))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", required=True, help="the earlier commit, e.g. 7b79e61")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="torch threads per process")
    args = parser.parse_args(argv)
    code = CHILD.replace("{threads}", str(args.threads)).replace("{repeats}", str(args.repeats))
    then, now, gap = then_and_now(args.since, code, args.threads, "bench_interaction")
    print(
        f"plot_interaction('x0', 'x1') on the getting-started model ({args.threads} threads, "
        f"best of {args.repeats}): {args.since} {then['seconds']:.2f} s, now "
        f"{now['seconds']:.2f} s, {then['seconds'] / now['seconds']:.1f}x faster; the grids "
        f"differ by at most {gap:.1e} ({then['file']} against {now['file']})"
    )


if __name__ == "__main__":
    main()
