"""Benchmark: the library defaults' fit time now against an earlier commit's, in one run.

    python benchmarks/bench_since.py --since f38f150 --tables diamonds hotel_rates
    python benchmarks/bench_since.py --since HEAD~1 --tables chile --quick    # smoke run

Issue 52 asks for diamonds and hotel_rates to fit at least 4x faster than when it was filed
(commit f38f150, the last before its work). Both codes cannot live in one process, so each fit
runs in its own process (the script again, in a hidden ``--one`` mode) that imports pilid from
its tree: this checkout's ``pilid/``, or the earlier commit's, exported with ``git archive`` into
a temporary folder. The parent loads the table from the development suite (`pilid.data.suite`,
split ``--split`` as ``studies.dev_suite`` makes it), hands both processes the same training
and test rows, and fits ``PiLiDRegressor()`` / ``PiLiDClassifier()`` with no argument but
``random_state`` (the split's seed), one fit at a time, the earlier code first, then the
current one, ``--repeats`` times; it keeps each code's fastest fit and prints both fit seconds,
their ratio (earlier / now: how many times faster the fit is now) and both test metrics. Each
process runs ``--threads`` torch threads (default 1, as the suite's fits).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # run by its path: the studies package lies in the repository


def export_package(commit: str, into: Path) -> Path:
    """``pilid/`` of ``commit`` written under ``into`` (``git archive``); the folder to put first
    on a process's path."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "pilid"],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise SystemExit(
            f"bench_since: git archive {commit} failed: {archive.stderr.decode().strip()}; "
            "give a commit of this repository, e.g. --since f38f150"
        )
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def then_and_now(since: str, code: str, threads: int, script: str) -> tuple[dict, dict, float]:
    """Run `code` (a Python source with ``{tree}`` and ``{saved}`` to fill: the folder to import
    pilid from, the ``.npy`` file to save its numbers to; its last line of output JSON with the
    imported ``file``) once with commit `since`'s exported pilid and once with this checkout's,
    each in its own process on `threads` threads; returns both outputs and the largest absolute
    difference between the two saved arrays. Stops in one line if a run fails or both imported
    the same pilid."""
    import numpy as np

    outputs = []
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        earlier = export_package(since, folder / "earlier")
        for tree, saved in ((earlier, folder / "then.npy"), (REPO, folder / "now.npy")):
            source = code.format(tree=str(tree), saved=str(saved))
            env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
            done = subprocess.run(
                [sys.executable, "-c", source], capture_output=True, text=True, env=env
            )
            if done.returncode != 0:
                raise SystemExit(f"{script}: the run in {tree} failed: {done.stderr[-2000:]}")
            outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        gap = float(np.max(np.abs(np.load(folder / "then.npy") - np.load(folder / "now.npy"))))
    then, now = outputs
    if then["file"] == now["file"]:
        raise SystemExit(f"{script}: both runs imported {now['file']}")
    return then, now, gap


def child_job(path: Path, script: str = __file__) -> dict:
    """In a fit's process (``script``'s ``--one`` mode): the job written at ``path``, with its
    pilid (``job["tree"]``) first on the path and imported from there, and torch on the job's
    threads."""
    with open(path, "rb") as handle:
        job = pickle.load(handle)
    sys.path.insert(0, job["tree"])
    import torch

    import pilid

    torch.set_num_threads(job["threads"])
    where = Path(pilid.__file__).resolve().parent.parent
    if where != Path(job["tree"]).resolve():
        raise SystemExit(f"{Path(script).stem}: pilid came from {where}, not {job['tree']}")
    return job


def fit_one(path: Path) -> None:
    """The ``--one`` mode: fit the defaults on the rows of ``path`` with the pilid first on the
    path, and write the fit seconds and the test scores back into ``path``."""
    job = child_job(path)
    import numpy as np

    from pilid import PiLiDClassifier, PiLiDRegressor

    classification = job["task"] == "classification"
    cls = PiLiDClassifier if classification else PiLiDRegressor
    estimator = cls(random_state=job["seed"], **job["extra"])
    start = time.perf_counter()
    estimator.fit(job["X_train"], job["y_train"])
    seconds = time.perf_counter() - start
    if classification:
        proba = np.asarray(estimator.predict_proba(job["X_test"]), dtype=np.float64)
        scores = proba[:, 1] if proba.shape[1] == 2 else proba
    else:
        scores = np.asarray(estimator.predict(job["X_test"]), dtype=np.float64)
    with open(path, "wb") as handle:
        pickle.dump({"seconds": seconds, "scores": scores}, handle)


def run_fit(job: dict, folder: Path, cap: float, script: str = __file__) -> dict:
    """One fit in its own process (``script`` in its ``--one`` mode, with the pilid of
    ``job["tree"]`` first on the path); what it wrote back (here: its seconds and test
    scores)."""
    path = folder / "job.pkl"
    with open(path, "wb") as handle:
        pickle.dump(job, handle)
    env = {**os.environ, "OMP_NUM_THREADS": str(job["threads"]), "PYTHONPATH": job["tree"]}
    done = subprocess.run(
        [sys.executable, script, "--one", str(path)], env=env, timeout=cap, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{Path(script).stem}: the fit with pilid of {job['tree']} failed")
    with open(path, "rb") as handle:
        return pickle.load(handle)


def add_fit_options(parser: argparse.ArgumentParser) -> None:
    """The options of a script whose fits run one at a time in their own processes."""
    parser.add_argument("--threads", type=int, default=1, help="torch threads per fit")
    parser.add_argument("--cap", type=float, default=1800.0, help="seconds before a fit is killed")
    parser.add_argument("--quick", action="store_true", help="2 epochs and 2 bags: a smoke run")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", default="f38f150", help="the earlier commit (default f38f150)")
    parser.add_argument("--tables", nargs="+", default=["diamonds", "hotel_rates"])
    parser.add_argument("--split", type=int, default=0, help="the suite's split (and seed)")
    parser.add_argument("--repeats", type=int, default=1, help="fits per code (fastest kept)")
    add_fit_options(parser)
    args = parser.parse_args(argv)
    if args.one is not None:
        fit_one(args.one)
        return 0

    from pilid.data.suite import SUITE, load_suite_table
    from pilid.models.metrics import score
    from studies import dev_suite

    wrong = sorted(set(args.tables) - set(SUITE))
    if wrong:
        parser.error(f"--tables {' '.join(wrong)}: not a suite table; one of {', '.join(SUITE)}")
    extra = {"epochs": 2, "n_bags": 2} if args.quick else {}
    print(
        f"bench_since: PiLiD's defaults at {args.since} against this checkout, split "
        f"{args.split}, {args.threads} thread(s) per fit, one fit at a time, fastest of "
        f"{args.repeats}" + (" (quick: 2 epochs, 2 bags)" if args.quick else ""),
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        earlier = export_package(args.since, Path(tmp) / "earlier")
        trees = {args.since: str(earlier), "now": str(REPO)}
        for table in args.tables:
            dataset = load_suite_table(table)
            split = dev_suite.make_split(dataset, args.split)
            X = dataset.X
            base = {
                "task": dataset.task,
                "seed": args.split,
                "threads": args.threads,
                "extra": extra,
                "X_train": X.iloc[split.train_index].reset_index(drop=True),
                "y_train": split.y_train,
                "X_test": X.iloc[split.test_index].reset_index(drop=True),
            }
            best: dict[str, dict] = {}
            for _ in range(max(args.repeats, 1)):
                for name, tree in trees.items():
                    fit = run_fit({**base, "tree": tree}, Path(tmp), args.cap)
                    print(f"{table} {name}: fit {fit['seconds']:.1f} s", flush=True)
                    if name not in best or fit["seconds"] < best[name]["seconds"]:
                        best[name] = fit
            then, now = best[args.since], best["now"]
            rows.append(
                (
                    table,
                    len(split.train_index),
                    dataset.metric,
                    then["seconds"],
                    now["seconds"],
                    score(dataset.metric, split.y_test, then["scores"]),
                    score(dataset.metric, split.y_test, now["scores"]),
                )
            )
    print(f"\n{'table':<12} {'train rows':>10}  {'then s':>8} {'now s':>8} {'then/now':>8}  metric")
    for table, n, metric, t_then, t_now, v_then, v_now in rows:
        print(
            f"{table:<12} {n:>10,}  {t_then:>8.1f} {t_now:>8.1f} {t_then / t_now:>8.2f}  "
            f"{metric} {v_then:.5f} then, {v_now:.5f} now"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
