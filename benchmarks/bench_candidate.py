"""Benchmark: a candidate for the next default against the library defaults, fit time side by side.

    python benchmarks/bench_candidate.py --tables hmda computers mlc_churn deliveries
    python benchmarks/bench_candidate.py --candidate pilid_smooth_auto4 --tables chile --repeats 2

Issue 64's fit-time goal compares a default-to-be with today's defaults on every suite table, in
one run. For each table (`pilid.data.suite`, split ``--split`` as ``studies.dev_suite`` makes
it) this fits ``studies.dev_suite.make_model("pilid")`` (the library defaults) and the candidate
(`studies.dev_suite.CANDIDATES`), both with ``random_state`` the split's seed, one after the
other in this process on ``--threads`` torch threads (default 1, as the suite's fits),
``--repeats`` times in turn; it keeps each one's fastest fit and prints its CPU seconds
(``time.process_time``: what the fit itself costs, less moved by other jobs than the wall
clock), its wall seconds, their ratio (candidate / defaults: above 1 slower) and both test
metrics. ``--out`` also writes the printout to a file.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run by its path: the studies package lies in the repository


def time_fit(model: str, dataset, split: int) -> dict:
    """One fit of ``model`` (a name of `studies.dev_suite`) on ``split`` of ``dataset``: its CPU
    and wall seconds and its test metric (`studies.dev_suite.fit_and_score`)."""
    from studies import dev_suite

    estimator = dev_suite.make_model(model, dataset.task, split)
    cpu, wall = time.process_time(), time.perf_counter()
    scored = dev_suite.fit_and_score(dataset, split, estimator)
    return {
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "value": float(scored["value"]),
    }


def compare(tables, candidate: str, split: int, repeats: int) -> list[dict]:
    """Per table: the defaults' and the candidate's fastest fit of ``repeats`` (fitted in turn)."""
    from pilid.data.suite import load_suite_table

    rows = []
    for table in tables:
        dataset = load_suite_table(table)
        best: dict[str, dict] = {}
        for _ in range(repeats):
            for model in ("pilid", candidate):
                fit = time_fit(model, dataset, split)
                if model not in best or fit["cpu"] < best[model]["cpu"]:
                    best[model] = fit
                seconds = f"cpu {fit['cpu']:.1f} s, wall {fit['wall']:.1f} s"
                print(f"{table} {model}: {seconds}", flush=True)
        rows.append({"table": table, "metric": dataset.metric, **best})
    return rows


def report(rows: list[dict], candidate: str) -> str:
    """The table of fit seconds and metrics, and the ratios candidate / defaults."""
    lines = [
        f"{'table':<12} {'metric':<6} {'defaults cpu s':>14} {'candidate cpu s':>15} "
        f"{'ratio':>6} {'wall ratio':>10} {'defaults':>9} {'candidate':>9}"
    ]
    for row in rows:
        base, cand = row["pilid"], row[candidate]
        lines.append(
            f"{row['table']:<12} {row['metric']:<6} {base['cpu']:>14.1f} {cand['cpu']:>15.1f} "
            f"{cand['cpu'] / base['cpu']:>6.2f} {cand['wall'] / base['wall']:>10.2f} "
            f"{base['value']:>9.4f} {cand['value']:>9.4f}"
        )
    ratios = [row[candidate]["cpu"] / row["pilid"]["cpu"] for row in rows]
    if ratios:
        lines.append(
            f"candidate / defaults, CPU seconds: largest {max(ratios):.2f}, "
            f"smallest {min(ratios):.2f} over {len(ratios)} tables"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    from pilid.data.suite import SUITE
    from studies import dev_suite

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=list(SUITE), choices=list(SUITE))
    parser.add_argument(
        "--candidate", default=next(iter(dev_suite.CANDIDATES)), choices=list(dev_suite.CANDIDATES)
    )
    parser.add_argument("--split", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also write the printout here")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats {args.repeats}: give at least 1")
    import torch

    torch.set_num_threads(args.threads)
    rows = compare(args.tables, args.candidate, args.split, args.repeats)
    header = (
        f"# python benchmarks/bench_candidate.py --candidate {args.candidate} --tables "
        f"{' '.join(args.tables)} --split {args.split} --repeats {args.repeats} "
        f"--threads {args.threads}"
    )
    text = "\n".join([header, report(rows, args.candidate)])
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
