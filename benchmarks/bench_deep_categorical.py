"""Benchmark: what one-hot categories in the MLP cost in fit time, as a ratio from one run.

    OMP_NUM_THREADS=1 python benchmarks/bench_deep_categorical.py             # hotel_rates
    OMP_NUM_THREADS=1 python benchmarks/bench_deep_categorical.py --table deliveries --repeats 2
    python benchmarks/bench_deep_categorical.py --quick                       # smoke run

Fits ``PiLiDRegressor()`` / ``PiLiDClassifier()`` (the library defaults) with
``deep_categorical="code"`` and ``"onehot"`` in alternation on split 0 of a table of the
development suite (`pilid.data.suite`, through ``studies.dev_suite``'s fit and score), keeps
each one's fastest fit (which damps noise from other processes on the machine; an untimed
one-epoch fit first pays the process's one-time imports) and prints both
fit times, their ratio and both test metrics. hotel_rates, the default, has the most levels
(three features with 98, 124 and 164): its MLP input grows from 26 columns to 411.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run by its path: the studies package lies in the repository

from pilid.data.suite import SUITE, load_suite_table  # noqa: E402
from studies import dev_suite  # noqa: E402  (the development suite's fit and score)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="hotel_rates", choices=list(SUITE))
    parser.add_argument("--repeats", type=int, default=1, help="fits per value (fastest kept)")
    parser.add_argument("--quick", action="store_true", help="chile, 2 epochs, 2 bags")
    args = parser.parse_args(argv)
    table = "chile" if args.quick else args.table
    dataset = load_suite_table(table)
    extra = {"epochs": 2, "n_bags": 2} if args.quick else {}
    warm = dev_suite.make_model("pilid", dataset.task, 0).set_params(epochs=1, n_bags=1)
    dev_suite.fit_and_score(dataset, 0, warm)  # a process's first fit imports torch's optimiser
    best: dict[str, dict] = {}
    for _ in range(max(args.repeats, 1)):
        for how in ("code", "onehot"):
            estimator = dev_suite.make_model("pilid", dataset.task, 0)
            estimator.set_params(deep_categorical=how, **extra)
            scored = dev_suite.fit_and_score(dataset, 0, estimator)
            if how not in best or scored["fit_seconds"] < best[how]["fit_seconds"]:
                best[how] = scored
    code, onehot = best["code"], best["onehot"]
    print(f"{table} split 0, {code['n_train']} training rows, metric {dataset.metric}")
    for how, scored in best.items():
        print(f"  {how:<7} fit {scored['fit_seconds']:8.1f} s   {scored['value']:.4f}")
    print(f"one-hot / code fit time: {onehot['fit_seconds'] / code['fit_seconds']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
