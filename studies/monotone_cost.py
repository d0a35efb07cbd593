"""The accuracy cost of monotone constraints (`pilid.models.monotone`), for the README.

scikit-learn's diabetes data (442 rows, 10 features; offline, none of the paper's UCI sets):
the disease progression should rise with body-mass index (``bmi``) and with the log serum
triglycerides (``s5``). 5-fold cross-validation (``KFold(shuffle=True, random_state=0)``, the
same folds for every model) of PiLiD with the library's defaults, without and with
``monotone_constraints={"bmi": 1, "s5": 1}``; per model the mean and standard deviation of the
fold MSEs and the largest step against the constraints that each one's test-row predictions
make when bmi or s5 sweeps a grid over its range (0 for the constrained model, by
construction). ``--pilib`` adds PiLiB (its defaults).

    OMP_NUM_THREADS=1 python -m studies monotone_cost
    OMP_NUM_THREADS=1 python -m studies monotone_cost --pilib --n-bags 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.datasets import load_diabetes
from sklearn.model_selection import KFold

from pilid import PiLiBRegressor, PiLiDRegressor

CONSTRAINTS = {"bmi": 1, "s5": 1}


def worst_step(model, X: pd.DataFrame, constraints: dict, points: int = 101) -> float:
    """The largest step against the constraints (>= 0; 0: monotone) of `model`'s predictions
    on the rows of `X` when each constrained column sweeps a grid over its range."""
    worst = 0.0
    for name, sign in constraints.items():
        grid = np.linspace(X[name].min(), X[name].max(), points)
        rows = X.loc[X.index.repeat(points)].reset_index(drop=True)
        rows[name] = np.tile(grid, len(X))
        out = model.predict(rows).reshape(len(X), points)
        worst = max(worst, float(-(np.diff(out, axis=1) * sign).min()))
    return max(worst, 0.0)


def main(argv=None) -> pd.DataFrame:
    """Run the comparison and print one row per model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--n-bags", type=int, default=None, help="PiLiD's n_bags (default 16)")
    parser.add_argument("--pilib", action="store_true", help="also PiLiB (its defaults)")
    args = parser.parse_args(argv)
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    folds = list(KFold(args.folds, shuffle=True, random_state=0).split(X))
    pilid_params = {} if args.n_bags is None else {"n_bags": args.n_bags}
    families = [("PiLiD", PiLiDRegressor, pilid_params)]
    if args.pilib:
        families.append(("PiLiB", PiLiBRegressor, {}))
    rows = []
    for family, cls, params in families:
        for constraints in (None, CONSTRAINTS):
            start = time.perf_counter()
            mse, steps = [], []
            for k, (train, test) in enumerate(folds):
                model = cls(random_state=k, monotone_constraints=constraints, **params)
                model.fit(X.iloc[train], y.iloc[train])
                pred = model.predict(X.iloc[test])
                mse.append(float(np.mean((pred - y.iloc[test].to_numpy()) ** 2)))
                steps.append(worst_step(model, X.iloc[test], CONSTRAINTS))
            rows.append(
                {
                    "model": family,
                    "monotone_constraints": "none" if constraints is None else str(constraints),
                    "cv_mse": np.mean(mse),
                    "cv_mse_std": np.std(mse),
                    "worst_step_against": max(steps),
                    "seconds": time.perf_counter() - start,
                }
            )
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 200, "display.precision", 4):
        print(table.to_string(index=False))
    for family in table["model"].unique():
        part = table[table["model"] == family]["cv_mse"].to_numpy()
        print(f"{family}: constrained/unconstrained CV MSE = {part[1] / part[0]:.4f}")
    return table


if __name__ == "__main__":
    main()
