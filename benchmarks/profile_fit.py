"""Where a fit's seconds go (issue 52): PiLiD's defaults on the scale benchmark's data, by stage.

    python benchmarks/profile_fit.py                        # 100,000 rows, this checkout
    python benchmarks/profile_fit.py --since f38f150        # an earlier commit's code beside it
    python benchmarks/profile_fit.py --rows 20000 --quick   # 2 epochs, 2 bags: a smoke run

Each code fits ``PiLiDRegressor(random_state=0)`` in its own process (this script again, in a
hidden ``--one`` mode; an earlier commit's ``pilid/`` exported with ``git archive`` as
`bench_since` does), one fit at a time, on the same rows: the scale benchmark's synthetic data
(`bench_scale.make_data`, m = 20, the first 75% of ``--rows`` rows), with ``--threads`` torch
threads (default 1). The fit runs under `cProfile`; the table gives the fit's seconds and the
cumulative seconds of the engine's stages, found by their functions' names (`STAGES`), so that
codes whose modules moved compare stage for stage:

- preparation: the characteristic points, FAST's pair ranking, the data's checks and encodings
  (``_prepare_all``);
- least-squares start: Algorithm 1, step 2 (``lstsq_init``);
- training: the epochs of every ensemble, early stopping's validation loss included
  (``train_ensemble``);
- purification: the deep part's main effects moved into the shapes (``purify_``);
- choice: ``pairs="auto"``'s validation loss of each candidate (``validation_loss``);
- the rest: everything else (the centring of the shapes, unstacking the members, Python).

cProfile adds its own overhead to every Python call (more to code with more calls): compare the
stages' shares and the two codes' stages with each other, and time fits with `bench_since`.
"""

from __future__ import annotations

import argparse
import cProfile
import pickle
import pstats
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_since import add_fit_options, child_job, export_package, run_fit  # noqa: E402  (a script beside this one)

#: (stage, the functions whose cumulative seconds it is): disjoint parts of a fit.
STAGES = (
    ("preparation", ("_prepare_all",)),
    ("least-squares start", ("lstsq_init",)),
    ("training", ("train_ensemble",)),
    ("purification", ("purify_",)),
    ("choice", ("validation_loss",)),
)


def stage_seconds(stats: pstats.Stats) -> dict[str, float]:
    """Cumulative seconds per stage (`STAGES`) from a profile: for each function name, the
    outermost calls' time (cProfile's cumulative time counts a recursive call once)."""
    found = {name: 0.0 for name, _ in STAGES}
    for (_, _, function), (_, _, _, cumulative, _) in stats.stats.items():
        for name, functions in STAGES:
            if function in functions:
                found[name] += cumulative
    return found


def fit_one(path: Path) -> None:
    """The ``--one`` mode: fit under cProfile with the pilid first on the path; write the fit
    seconds and the stages' seconds back into ``path``."""
    job = child_job(path, script=__file__)
    from bench_scale import TRAIN_FRACTION, make_data

    from pilid import PiLiDRegressor

    X, y, _ = make_data(job["rows"])
    n_fit = int(TRAIN_FRACTION * len(y))
    estimator = PiLiDRegressor(random_state=0, **job["extra"])
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    estimator.fit(X[:n_fit], y[:n_fit])
    profile.disable()
    seconds = time.perf_counter() - start
    stages = stage_seconds(pstats.Stats(profile))
    with open(path, "wb") as handle:
        pickle.dump({"seconds": seconds, "stages": stages, "rows": n_fit}, handle)


def report(fits: dict[str, dict]) -> str:
    """The stages' seconds and shares of each code's fit, side by side."""
    names = list(fits)
    head = f"{'stage':<22}" + "".join(f"{name:>20}" for name in names)
    lines = [head]
    for stage, _ in (*STAGES, ("the rest", ())):
        cells = []
        for name in names:
            fit = fits[name]
            if stage == "the rest":
                value = fit["seconds"] - sum(fit["stages"].values())
            else:
                value = fit["stages"][stage]
            cells.append(f"{value:>10.1f} s ({value / fit['seconds']:>4.0%})")
        lines.append(f"{stage:<22}" + "".join(f"{c:>20}" for c in cells))
    total = [f"{fits[n]['seconds']:>10.1f} s (100%)" for n in names]
    lines.append(f"{'fit (profiled)':<22}" + "".join(f"{c:>20}" for c in total))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows drawn (75%% fitted)")
    parser.add_argument("--since", help="an earlier commit whose code fits beside this checkout")
    add_fit_options(parser)
    args = parser.parse_args(argv)
    if args.one is not None:
        fit_one(args.one)
        return 0
    if args.rows < 100:
        parser.error(f"--rows {args.rows}: too few rows to fit; give at least 100")
    extra = {"epochs": 2, "n_bags": 2} if args.quick else {}
    fits = {}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"now": str(REPO)}
        if args.since:
            trees = {args.since: str(export_package(args.since, Path(tmp) / "earlier")), **trees}
        print(
            f"profile_fit: PiLiDRegressor(random_state=0) on {args.rows:,} rows of the scale "
            f"benchmark's data (75% fitted), {args.threads} thread(s), under cProfile"
            + (" (quick: 2 epochs, 2 bags)" if args.quick else ""),
            flush=True,
        )
        for name, tree in trees.items():
            job = {"tree": tree, "rows": args.rows, "threads": args.threads, "extra": extra}
            fits[name] = run_fit(job, Path(tmp), args.cap, script=__file__)
            print(f"{name}: fit {fits[name]['seconds']:.1f} s (profiled)", flush=True)
    print()
    print(report(fits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
