"""Bagged PiLiD on synthetic data with known shapes: fidelity and the bands' coverage.

For each seed, a single PiLiD (``n_bags=1``) and a bag (``--bags``, 8) are fitted on the same 80%
of a synthetic regression set (the legendre generator: every main effect known) and compared on
the other 20%:

- shape fidelity: the mean R^2 of the learned against the true centred main effects
  (``pilid.inspection.fidelity``) on the held-out rows, single model vs bag;
- coverage: at every characteristic point of every feature, whether the true main effect
  (centred over the training rows, as the learned shapes are) lies inside the bag's band
  [``lower``, ``upper``] (2.5/97.5 percentiles over members), and how wide the band is.

``--defaults paper`` (the default) fits both with the paper's protocol and gamma=5
(`PAPER_PROTOCOL`), ``--defaults library`` with the library's defaults (`LIBRARY_DEFAULTS`),
``--defaults library_earlier`` with those before issue 31 (`EARLIER_DEFAULTS`), ``--defaults
library_smooth40`` with 40 pieces held smooth, ``n_bags`` aside; a run replaces
the CSV rows of its ``defaults`` and keeps the others.

    OMP_NUM_THREADS=1 python -m studies bands_coverage --out results/studies/bands_coverage.csv
    OMP_NUM_THREADS=1 python -m studies bands_coverage --defaults library --bags 16
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from pilid import PiLiDRegressor
from pilid.data import load_dataset
from pilid.estimators.pilid import LIBRARY_DEFAULTS, PAPER_PROTOCOL
from pilid.inspection.fidelity import estimator_fidelity
from studies.lever_study import EARLIER_DEFAULTS, lam_rule, resolve_rules, smooth_rule

#: The hyper-parameters besides n_bags: the paper's protocol (gamma=5), the library's defaults
#: (``library``: 40 pieces held smooth at 500 / n, ``lam="rows_steep"``, pairs by inner
#: validation), those before issue 31 (``library_earlier``, `EARLIER_DEFAULTS`), and the
#: candidates measured on top of those earlier ones on the way (``library_*``): 40 pieces held
#: smooth (``gamma=40, smoothness=0.1``), or with the smoothness a rule of the training rows n
#: (`lever_study.smooth_rule`: 500 / n; a value that is a function of n is called with it).
DEFAULTS = {
    "paper": dict(PAPER_PROTOCOL),
    "library": dict(LIBRARY_DEFAULTS),
    # the library's defaults before ``deep_input="auto"`` (the MLP on Eq. 6's columns at every
    # size): the ``library`` rows fitted then, renamed
    "library_columns": {**LIBRARY_DEFAULTS, "deep_input": "columns"},
    "library_earlier": dict(EARLIER_DEFAULTS),
    "library_smooth40": {**EARLIER_DEFAULTS, "gamma": 40, "smoothness": 0.1},
    "library_smooth40_rows": {**EARLIER_DEFAULTS, "gamma": 40, "smoothness": smooth_rule(500.0)},
    "library_smooth_auto": {**EARLIER_DEFAULTS, "smoothness": "auto"},
    # and with the MLP's lam a rule of n (`lever_study.lam_rule`: 5 / n) and pair terms chosen by
    # inner validation (the development suite's ``gamma40_smooth_rows_lam_rows_pairs_auto``): the
    # parameters that became the library's defaults, measured before they did (``library``)
    "library_smooth40_rows_lam_rows_pairs_auto": {
        **EARLIER_DEFAULTS,
        "gamma": 40,
        "smoothness": smooth_rule(500.0),
        "lam": lam_rule(5.0),
        "pairs": "auto",
    },
}


def coverage(model, data, X_train: np.ndarray) -> pd.DataFrame:
    """Per characteristic point: the band, the true centred effect and whether it is inside."""
    shapes = model.shape_functions()
    offsets = data.true_shapes.functions(X_train).mean(axis=0)
    rows = []
    for j, name in enumerate(data.feature_names):
        part = shapes[shapes["feature"] == name]
        grid = np.zeros((len(part), X_train.shape[1]))
        grid[:, j] = part["x"].to_numpy()
        truth = data.true_shapes.functions(grid)[:, j] - offsets[j]
        rows.append(
            pd.DataFrame(
                {
                    "feature": name,
                    "x": part["x"].to_numpy(),
                    "truth": truth,
                    "lower": part["lower"].to_numpy(),
                    "upper": part["upper"].to_numpy(),
                }
            )
        )
    frame = pd.concat(rows, ignore_index=True)
    frame["inside"] = (frame["lower"] <= frame["truth"]) & (frame["truth"] <= frame["upper"])
    frame["width"] = frame["upper"] - frame["lower"]
    return frame


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/studies/bands_coverage.csv")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--N", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--bags", type=int, default=8)
    parser.add_argument("--defaults", choices=sorted(DEFAULTS), default="paper")
    args = parser.parse_args(argv)
    rows = []
    for n in args.N:
        data = load_dataset("synthetic", N=n, m=10, noise=0.5, n_interactions=5)
        X = np.asarray(data.X, dtype=float)
        for seed in range(args.seeds):
            X_train, X_test, y_train, _ = train_test_split(
                X, data.y, test_size=0.2, random_state=seed
            )
            true_test = data.true_shapes.functions(X_test)
            for bags in (1, args.bags):
                started = time.perf_counter()
                params = {**DEFAULTS[args.defaults], "n_bags": bags}
                params = resolve_rules(params, len(X_train))
                model = PiLiDRegressor(random_state=seed, **params)
                model.fit(X_train, y_train)
                seconds = time.perf_counter() - started
                _, fidelity = estimator_fidelity(model, X_test, true_test)
                row = dict(
                    defaults=args.defaults,
                    N=n,
                    seed=seed,
                    n_bags=bags,
                    fidelity=fidelity,
                    seconds=seconds,
                )
                if bags > 1:
                    points = coverage(model, data, X_train)
                    row.update(
                        coverage=float(points["inside"].mean()),
                        band_width=float(points["width"].mean()),
                        points=len(points),
                    )
                rows.append(row)
                print(
                    f"N={n} seed={seed} n_bags={bags}: fidelity {fidelity:.4f}"
                    + (f", coverage {row['coverage']:.3f}" if bags > 1 else "")
                    + f" ({seconds:.0f} s)",
                    flush=True,
                )
    frame = pd.DataFrame(rows)
    out = Path(args.out)
    if out.is_file():  # keep the rows of the other defaults (rows before the column: "paper")
        kept = pd.read_csv(out)
        if "defaults" not in kept:
            kept.insert(0, "defaults", "paper")
        frame = pd.concat([kept[kept["defaults"] != args.defaults], frame], ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out, index=False)
    columns = ["fidelity", "coverage", "band_width"]
    summary = frame.groupby(["defaults", "N", "n_bags"])[columns].mean()
    print(summary.round(4).to_string())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
