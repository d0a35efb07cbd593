"""Choose PiLiD's library defaults on data that is not one of the paper's four UCI sets.

Candidates (knot rule, MLP size, bagging, inner-CV choice of gamma and lambda) are compared by
3-fold cross-validation on scikit-learn's bundled breast-cancer (AUC) and diabetes (R^2) data and
on synthetic data of both generators with known shapes (R^2 / AUC); the UCI sets (skill,
spambase, bank, bike) are never read, so choosing a default here cannot tune on their test
splits. Writes one row per (data, candidate, fold) to ``--out`` (CSV; a run replaces the rows of
the (data, candidate) pairs it ran and keeps the others) and prints the means.

    OMP_NUM_THREADS=1 python -m studies choose_defaults --out results/studies/defaults.csv
    # n_bags and the MLP at a larger size, on the synthetic sets only:
    OMP_NUM_THREADS=1 python -m studies choose_defaults --n-synthetic 20000 \
        --sets synthetic_legendre synthetic_demo --only linear paper quantile_small ...
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pilid import PiLiDClassifier, PiLiDClassifierCV, PiLiDRegressor, PiLiDRegressorCV
from pilid.data import load_dataset
from pilid.estimators.pilid import LIBRARY_DEFAULTS, PAPER_PROTOCOL
from pilid.models.metrics import score
from studies.lever_study import EARLIER_DEFAULTS, lam_rule, resolve_rules, smooth_rule

SMALL = (64, 32)
#: name -> PiLiD keyword arguments (beyond random_state) on top of the paper's protocol
#: (`PAPER_PROTOCOL`: gamma 5, uniform knots, the paper's MLP, lam 1e-5, one model), so that a
#: candidate's rows do not move when a library default does; "cv" marks the inner-CV estimator.
#: "library" is the library's defaults (`LIBRARY_DEFAULTS`, chosen on issue 31's development suite
#: with this study's MLP and bag); "library_earlier" those before issue 31 (`EARLIER_DEFAULTS`, as
#: chosen from this study), on top of which the "library_*" candidates were measured.
CANDIDATES = {
    "paper": {},
    "library": dict(LIBRARY_DEFAULTS),
    "library_earlier": dict(EARLIER_DEFAULTS),
    # 40 pieces held smooth, the development suite's best lever (not a default: see the guide)
    "library_smooth40": {**EARLIER_DEFAULTS, "gamma": 40, "smoothness": 0.1},
    # the library's pieces or 40 smooth ones by inner validation (pilid.models.shape_choice)
    "library_smooth_auto": {**EARLIER_DEFAULTS, "smoothness": "auto"},
    # 40 pieces with the smoothness a rule of the training rows n (500 / n: the rule whose
    # shapes kept issue 31's fidelity floor, studies.bands_coverage), and the MLP's lam as
    # well (5 / n, the suite's lever)
    "library_smooth40_rows": {**EARLIER_DEFAULTS, "gamma": 40, "smoothness": smooth_rule(500.0)},
    "library_smooth40_rows_lam_rows": {
        **EARLIER_DEFAULTS,
        "gamma": 40,
        "smoothness": smooth_rule(500.0),
        "lam": lam_rule(5.0),
    },
    "additive_gamma1": {"gamma": 1, "hidden_layers": None},  # PiLiD's linear model, no MLP
    "quantile": {"knots": "quantile"},
    "quantile_small": {"knots": "quantile", "hidden_layers": SMALL},
    "quantile_bag8": {"knots": "quantile", "n_bags": 8},
    "quantile_small_bag4": {"knots": "quantile", "hidden_layers": SMALL, "n_bags": 4},
    "quantile_small_bag8": {"knots": "quantile", "hidden_layers": SMALL, "n_bags": 8},
    "quantile_small_bag16": {"knots": "quantile", "hidden_layers": SMALL, "n_bags": 16},
    "quantile_small_bag16_lam1e-3": {
        "knots": "quantile",
        "hidden_layers": SMALL,
        "n_bags": 16,
        "lam": 1e-3,
    },
    "quantile_tiny_bag16": {"knots": "quantile", "hidden_layers": (16,), "n_bags": 16},
    "additive_quantile_bag16": {"knots": "quantile", "hidden_layers": None, "n_bags": 16},
    "quantile_small_bag16_gamma2_lam1e-3": {
        "knots": "quantile",
        "hidden_layers": SMALL,
        "n_bags": 16,
        "lam": 1e-3,
        "gamma": 2,
    },
    "quantile_small_bag16_gamma3_lam1e-3": {
        "knots": "quantile",
        "hidden_layers": SMALL,
        "n_bags": 16,
        "lam": 1e-3,
        "gamma": 3,
    },
    "quantile_small_bag16_lam1e-2": {
        "knots": "quantile",
        "hidden_layers": SMALL,
        "n_bags": 16,
        "lam": 1e-2,
    },
    "cv_quantile_small": {"cv": True, "knots": "quantile", "hidden_layers": SMALL},
    # gamma, lambda and the network (none: the additive part alone) chosen by inner CV
    "cv_quantile_networks": {"cv": True, "knots": "quantile", "networks": (None, SMALL)},
}


DEFAULT_N_SYNTHETIC = 4000
SETS = ("breast_cancer", "diabetes", "synthetic_legendre", "synthetic_demo")


def datasets(n_synthetic: int, sets=SETS):
    """(name, task, X, y) of the study: never a UCI set of the paper. Synthetic sets of another
    size than the default carry it in their name (``synthetic_demo_N20000``)."""
    if "breast_cancer" in sets:
        X, y = load_breast_cancer(return_X_y=True)
        yield "breast_cancer", "classification", X, y
    if "diabetes" in sets:
        X, y = load_diabetes(return_X_y=True)
        yield "diabetes", "regression", X, y
    suffix = "" if n_synthetic == DEFAULT_N_SYNTHETIC else f"_N{n_synthetic}"
    for generator, task in (("legendre", "regression"), ("demo", "classification")):
        if f"synthetic_{generator}" not in sets:
            continue
        options = {"label": "threshold"} if task == "classification" else {}
        data = load_dataset(
            "synthetic", N=n_synthetic, m=10, task=task, generator=generator, **options
        )
        X = np.asarray(data.X, dtype=float)
        yield f"synthetic_{generator}{suffix}", task, X, data.y


def build(name: str, task: str, seed: int, n_train: int):
    """Candidate ``name`` for ``task``; a parameter that is a rule of the training rows (a
    function of ``n_train``, `lever_study.smooth_rule`) gets its value."""
    if name == "linear":
        if task == "regression":
            return LinearRegression()
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    params = resolve_rules(CANDIDATES[name], n_train)
    if params.pop("cv", False):
        cls = PiLiDRegressorCV if task == "regression" else PiLiDClassifierCV
        networks = params.pop("networks", None)
        searched = {"gamma", "lam"} | ({"hidden_layers"} if networks is not None else set())
        base = {k: v for k, v in PAPER_PROTOCOL.items() if k not in searched}
        return cls(random_state=seed, networks=networks, estimator_params={**base, **params})
    cls = PiLiDRegressor if task == "regression" else PiLiDClassifier
    return cls(random_state=seed, **{**PAPER_PROTOCOL, **params})


def test_score(estimator, task: str, X, y) -> float:
    """R^2 for regression (1 - MSE / var), AUC for classification (`metrics.score`)."""
    if task == "classification":
        return score("auc", y, estimator.predict_proba(X)[:, 1])
    return 1.0 - score("mse", y, estimator.predict(X)) / float(np.var(y))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/studies/defaults.csv")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--n-synthetic", type=int, default=DEFAULT_N_SYNTHETIC)
    parser.add_argument("--sets", nargs="*", choices=SETS, default=list(SETS))
    parser.add_argument("--only", nargs="*", help="candidates to run (default: all + linear)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=UserWarning)
    names = args.only or ["linear", *CANDIDATES]
    rows = []
    for data_name, task, X, y in datasets(args.n_synthetic, args.sets):
        splitter = (StratifiedKFold if task == "classification" else KFold)(
            args.folds, shuffle=True, random_state=0
        )
        for fold, (train, test) in enumerate(splitter.split(X, y)):
            mean, std = X[train].mean(0), X[train].std(0) + 1e-12
            Xtr, Xte = (X[train] - mean) / std, (X[test] - mean) / std
            for name in names:
                started = time.perf_counter()
                estimator = build(name, task, seed=fold, n_train=len(train)).fit(Xtr, y[train])
                value = test_score(estimator, task, Xte, y[test])
                seconds = time.perf_counter() - started
                chosen = getattr(estimator, "best_params_", None)
                rows.append(
                    dict(
                        data=data_name,
                        task=task,
                        candidate=name,
                        fold=fold,
                        score=value,
                        seconds=round(seconds, 2),
                        chosen=chosen,
                    )  # fmt: skip
                )
                print(f"{data_name} fold {fold} {name}: {value:.4f} ({seconds:.0f} s)", flush=True)
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    if out.is_file():  # a run replaces the rows of its (data, candidate) pairs, keeps the others
        kept = pd.read_csv(out)
        ran = pd.MultiIndex.from_frame(frame[["data", "candidate"]])
        kept = kept[~pd.MultiIndex.from_frame(kept[["data", "candidate"]]).isin(ran)]
        frame = pd.concat([kept, frame], ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False)
    summary = frame.pivot_table(index="candidate", columns="data", values="score", aggfunc="mean")
    print(summary.round(4).to_string())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
