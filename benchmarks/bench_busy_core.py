"""A fit beside a busy core (issue 52): each model's fit alone, then beside one busy one-thread
process, on `bench_scale`'s synthetic table; prints the seconds and the ratio busy / alone.

    python benchmarks/bench_busy_core.py                        # N = 100,000, every model
    python benchmarks/bench_busy_core.py --rows 20000 --models pilid ebm --cap 300

A laptop is rarely idle: a fit that keeps a thread on every core waits, at each step, for the
thread that shares its core with another program. Each fit runs in its own process through
`bench_scale.run_child` (the same data, model, threads and cap as `bench_scale.py`: all cores by
default); "beside a busy core" starts a one-thread Python loop that spins for the whole fit
(``nice`` 0, like any other program) and stops it afterwards. The two fits of a model run one
after the other in this call, so their ratio is measured in one run; the seconds themselves
say how loaded the machine was otherwise. ``--out`` appends one CSV row per fit.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale  # noqa: E402  (the benchmark beside this one)

COLUMNS = ["model", "rows", "beside", "status", "fit_s", "wall_s", "test_mse", "threads"]
SPIN = "while True:\n    pass\n"


def fit(name: str, rows: int, threads: int, cap: float, busy: bool) -> dict:
    """One fit of `bench_scale`'s table in its own process; with `busy`, beside a spinning
    one-thread process."""
    command = [sys.executable, str(Path(bench_scale.__file__).resolve()), "--one", name]
    command += ["--one-rows", str(rows), "--features", "20", "--device", "cpu"]
    command += ["--threads", str(threads), "--seed", "0"]
    spinner = subprocess.Popen([sys.executable, "-c", SPIN]) if busy else None
    try:
        result = bench_scale.run_child(command, cap, bench_scale._child_env(threads))
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    return {
        "model": name,
        "rows": rows,
        "beside": "busy core" if busy else "alone",
        "threads": threads,
        **{k: result.get(k) for k in ("status", "fit_s", "wall_s", "test_mse")},
    }


def ratio(alone: dict, busy: dict, cap: float) -> str:
    """busy / alone fit seconds ("> x" when the busy fit was capped, "-" when either failed)."""
    if alone["status"] != "ok" or busy["status"] not in ("ok", "capped"):
        return "-"
    seconds = cap if busy["status"] == "capped" else busy["fit_s"]
    prefix = "> " if busy["status"] == "capped" else ""
    return f"{prefix}{seconds / alone['fit_s']:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="N (default 100000)")
    parser.add_argument(
        "--models", nargs="+", choices=bench_scale.MODELS, default=list(bench_scale.MODELS)
    )
    parser.add_argument("--cap", type=float, default=900.0, help="seconds per fit (default 900)")
    parser.add_argument("--threads", type=int, help="threads per fit (default: all cores)")
    parser.add_argument("--out", type=Path, help="CSV to append one row per fit to")
    args = parser.parse_args(argv)
    threads = args.threads or len(os.sched_getaffinity(0))
    print(f"bench_busy_core: N={args.rows:,}, {threads} thread(s) per fit, cap {args.cap:g} s")
    lines = [f"{'model':<10} {'alone s':>9} {'busy s':>9} {'busy/alone':>11}"]
    for name in args.models:
        pair = [fit(name, args.rows, threads, args.cap, busy) for busy in (False, True)]
        for row in pair:
            print(f"{name} {row['beside']}: {row['status']}, fit {row['fit_s']} s", flush=True)
        if args.out is not None:
            new = not args.out.is_file()
            with args.out.open("a", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=COLUMNS)
                if new:
                    writer.writeheader()
                writer.writerows(pair)
        cells = [f"{r['fit_s']:.1f}" if r["status"] == "ok" else r["status"] for r in pair]
        label = bench_scale.LABEL[name]
        lines.append(f"{label:<10} {cells[0]:>9} {cells[1]:>9} {ratio(*pair, args.cap):>11}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
