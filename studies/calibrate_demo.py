"""The demo generator's number of products, calibrated on the paper's linear regression alone.

Then linear regression on both synthetic generators is compared with the paper's.

    OMP_NUM_THREADS=1 nice python -m studies calibrate_demo                 # 4-12 min, one core
    OMP_NUM_THREADS=1 nice python -m studies calibrate_demo --seeds 5       # quicker, noisier
    OMP_NUM_THREADS=1 nice python -m studies calibrate_demo --compare-only  # the comparison only

The paper's simulation (Section 4.1; `pilid.data.demo`, following the authors' demo code) does not
say how many interaction products are appended (the demo script uses 900 for m=50). Linear
regression's test MSE depends on the data alone, so it is the one column of the paper's tables
this script matches; no other model's numbers are looked at. For each m in 10..50 and each
candidate count on a coarse grid (0.5m .. 20m), data seeds 0..S-1 (each a fresh random truth,
as each of the paper's tables is), N rows (the first 5000/10000/15000/20000 of one draw: the
generator's rows are nested in N) and two 80/20 splits per seed, scikit-learn's
LinearRegression is fitted and scored on the test part. The chosen count minimises
sum_N (our test MSE at N - paper's linear MSE at N)^2 over the paper's rows for that m, "ours"
being the median (``--stat``) over data seeds of the mean over splits (Table 1 at N=20000 and,
where `pilid.report.paper` has them, the supplementary N=5000, 10000 and 15000 tables). The
pooled rule ``pairs = round(c * m)`` takes the c that minimises the same sum over every m (the
pooled loss of each c is printed). The output is copied into the docstring of `pilid.data.demo`
and the rule into its ``PAIRS_PER_FEATURE``; the script says so when its c differs from that.

The comparison (always run; ``--compare-only`` runs nothing else): linear regression's test MSE
at N=20000 for m=10..50 on both generators, the Legendre one (`pilid.data.synthetic.generate`,
as ``conf/data/synthetic.yaml`` sets it: 5 pairwise interaction terms) and the demo one with its
calibrated default (``default_pairs(m)`` products), beside the paper's Table 1, noise 0.5 for
both. Per generator and m: the median and quartiles over data seeds 0..S-1 (two 80/20 splits
each, as above), and data_seed 0 with the experiments' 20 splits (`pilid.data.make_split`, trial
seeds 0..19), which is what the ``linear`` row of ``sim_regression`` records. It is printed and
written to ``results/tables/generators_linear.csv`` (``--csv`` elsewhere, ``--no-csv`` not at
all), a small file that is committed (REPRODUCTION.md reads it). Columns: ``generator, m, N,
n_interactions, paper_mean, paper_std, median_over_data_seeds, q25_over_data_seeds,
q75_over_data_seeds, data_seeds, data_seed0_mean, data_seed0_std, data_seed0_trials``.

Speed: a truth is drawn once with the largest candidate count and the candidates' targets are
nested sums of its product columns (the first k products do not depend on ``n_interactions``),
so one multi-output least-squares fit scores every candidate at once.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf
from sklearn.linear_model import LinearRegression
from threadpoolctl import threadpool_limits

from pilid.data import load_dataset, make_split
from pilid.data.demo import PAIRS_PER_FEATURE, _streams, generate_demo, make_demo_truth
from pilid.data.synthetic import GENERATORS, generate
from pilid.experiments.config import CONF_DIR
from pilid.report.paper import paper_results

MS = (10, 20, 30, 40, 50)
NS = (5000, 10000, 15000, 20000)
NOISE = 0.5
MULTIPLES = np.round(np.geomspace(0.5, 20.0, 12), 2)  # candidate pairs: round(multiple * m)
#: The Legendre generator's interaction terms as the experiments ran it (conf/data/synthetic.yaml).
LEGENDRE_PAIRS = int(OmegaConf.load(CONF_DIR / "data" / "synthetic.yaml")["n_interactions"])
#: Where the comparison of the two generators is written (a small file, committed).
COMPARISON_CSV = (
    Path(__file__).resolve().parents[1] / "results" / "tables" / "generators_linear.csv"
)


def paper_linear_rows(path: Path | None = None) -> pd.DataFrame:
    """The paper's linear-regression rows of the synthetic regression tables, with int ``N``
    and ``m``. From ``path`` (a ``paper_results.csv``) or the copy in ``pilid.report.paper``."""
    table = pd.read_csv(path) if path is not None else paper_results()
    rows = table[
        (table["task"] == "regression")
        & (table["model"] == "Linear Regression")
        & table["column"].str.startswith("m=")
        & table["N"].notna()
    ]
    return rows.assign(m=rows["column"].str[2:].astype(int), N=rows["N"].astype(int))


def paper_linear(path: Path | None = None) -> pd.DataFrame:
    """The paper's linear-regression test MSE of the synthetic regression tables: (N, m)."""
    return paper_linear_rows(path).pivot_table(index="N", columns="m", values="mean")


def linear_mse(m: int, seed: int, counts: np.ndarray, ns, splits: int) -> np.ndarray:
    """Mean test MSE of LinearRegression, shape (len(ns), len(counts)), for one data seed."""
    n_max = max(ns)
    truth = make_demo_truth(m, seed, int(counts.max()))
    rngs = _streams(seed)  # the same streams as generate_demo: same X, same noise
    X = rngs["objects"].random((n_max, m)) * truth.factors
    eps = rngs["noise"].standard_normal(n_max)
    columns = truth.columns(X)
    base = columns[:, :m].sum(axis=1)
    targets, running, done = [], np.zeros(n_max), 0
    for count in counts:  # nested sums of the product columns
        running = running + columns[:, m + done : m + count].sum(axis=1)
        done = count
        targets.append(base + running + NOISE * eps)
    Y = np.column_stack(targets)
    out = np.zeros((len(ns), len(counts)))
    for i, n in enumerate(ns):
        for split in range(splits):
            order = np.random.default_rng(split).permutation(n)
            n_test = int(round(0.2 * n))
            test, train = order[:n_test], order[n_test:]
            model = LinearRegression().fit(X[train], Y[train])
            out[i] += ((model.predict(X[test]) - Y[test]) ** 2).mean(axis=0) / splits
    return out


def check_nested(m: int = 10, count: int = 7, seed: int = 3) -> None:
    """The calibration's targets are generate_demo's: same rows, same products, same noise."""
    X, y, _ = generate_demo(500, m, n_interactions=count, noise=NOISE, seed=seed)
    truth = make_demo_truth(m, seed, 3 * count)
    rngs = _streams(seed)
    X2 = rngs["objects"].random((500, m)) * truth.factors
    columns = truth.columns(X2)
    y2 = (
        columns[:, :m].sum(1)
        + columns[:, m : m + count].sum(1)
        + NOISE * rngs["noise"].standard_normal(500)
    )
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_allclose(y, y2, rtol=0, atol=1e-12)


def _test_mse(X, y, n: int, splits: int) -> np.ndarray:
    """Test MSE of LinearRegression on the first ``n`` rows, one per 80/20 split (the
    calibration's splits: permutation ``default_rng(split)``)."""
    out = np.zeros(splits)
    for split in range(splits):
        order = np.random.default_rng(split).permutation(n)
        n_test = int(round(0.2 * n))
        test, train = order[:n_test], order[n_test:]
        model = LinearRegression().fit(X[train], y[train])
        out[split] = ((model.predict(X[test]) - y[test]) ** 2).mean()
    return out


def _generator_data(generator: str, N: int, m: int, seed: int):
    """``(X, y)`` of the regression task as the experiments configure each generator: the
    Legendre generator with ``conf/data/synthetic.yaml``'s options (5 pairwise interaction
    terms, noise 0.5), the demo generator with its calibrated default (``default_pairs(m)``)."""
    if generator == "legendre":
        X, y, _ = generate(N, m, n_interactions=LEGENDRE_PAIRS, noise=NOISE, seed=seed)
    else:
        X, y, _ = generate_demo(N, m, n_interactions=None, noise=NOISE, seed=seed)
    return X, y


def generators_linear(
    seeds: int, splits: int, trials: int = 20, N: int = 20000, paper_path: Path | None = None
) -> pd.DataFrame:
    """Linear regression's test MSE on both generators beside the paper's, m = 10..50 at ``N``.

    Two summaries per (generator, m): the median (and quartiles) over data seeds 0..seeds-1 with
    ``splits`` 80/20 splits each (the calibration's statistic), and the experiments' own
    protocol: data_seed 0 (the default, which every simulation setting uses) and the ``trials``
    splits of `pilid.data.make_split` with trial seeds 0..trials-1 (mean and std over trials,
    what the ``linear`` row of ``sim_regression`` records).
    """
    paper = paper_linear_rows(paper_path)
    paper = paper[paper["N"] == N].set_index("m")
    rows = []
    for generator in GENERATORS:
        for m in MS:
            with threadpool_limits(1):
                runs = np.array(
                    [
                        _test_mse(*_generator_data(generator, N, m, s), N, splits)
                        for s in range(seeds)
                    ]
                ).mean(axis=1)
                options = {"n_interactions": LEGENDRE_PAIRS if generator == "legendre" else None}
                dataset = load_dataset("synthetic", N=N, m=m, noise=NOISE, data_seed=0,
                                       generator=generator, **options)  # fmt: skip
                seed0 = []
                for trial in range(trials):
                    split = make_split(dataset, trial)
                    model = LinearRegression().fit(split.X_train, split.y_train)
                    seed0.append(((model.predict(split.X_test) - split.y_test) ** 2).mean())
            rows.append(
                {
                    "generator": generator,
                    "m": m,
                    "N": N,
                    "n_interactions": int(dataset.info["generator"]["n_interactions"]),
                    "paper_mean": float(paper.loc[m, "mean"]),
                    "paper_std": float(paper.loc[m, "std"]),
                    "median_over_data_seeds": float(np.median(runs)),
                    "q25_over_data_seeds": float(np.quantile(runs, 0.25)),
                    "q75_over_data_seeds": float(np.quantile(runs, 0.75)),
                    "data_seeds": seeds,
                    "data_seed0_mean": float(np.mean(seed0)),
                    "data_seed0_std": float(np.std(seed0, ddof=1)),
                    "data_seed0_trials": trials,
                }
            )
    return pd.DataFrame(rows)


def write_comparison(frame: pd.DataFrame, path: Path) -> None:
    """The comparison as CSV (floats to 4 decimals: the paper's precision)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, float_format="%.4f", lineterminator="\n")


def print_comparison(frame: pd.DataFrame) -> None:
    wide = frame.pivot(index="m", columns="generator")
    table = pd.DataFrame({"paper": wide[("paper_mean", "demo")]})
    for generator in GENERATORS:
        short = {"legendre": "leg", "demo": "dem"}[generator]
        table[f"{short}_pairs"] = wide[("n_interactions", generator)]
        table[f"{short}_median"] = wide[("median_over_data_seeds", generator)]
        table[f"{short}_IQR"] = [
            f"{a:.3f}-{b:.3f}"
            for a, b in zip(
                wide[("q25_over_data_seeds", generator)], wide[("q75_over_data_seeds", generator)]
            )
        ]
        table[f"{short}_seed0"] = wide[("data_seed0_mean", generator)]
    N = int(frame["N"].iloc[0])
    seeds, trials = int(frame["data_seeds"].iloc[0]), int(frame["data_seed0_trials"].iloc[0])
    print(f"linear regression test MSE at N={N}, both generators beside the paper's (Table 1)")
    print(table.reset_index().to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"(leg: legendre, dem: demo; median, IQR: over data seeds 0..{seeds - 1};")
    print(
        f" seed0: data_seed 0, mean over the {trials} splits of make_split, as the experiments run)"
    )


def calibrate(args) -> None:
    """The calibration: the best count per m and the pooled rule (printed)."""
    check_nested()
    paper = paper_linear(args.paper)
    ns = [n for n in NS if n in paper.index]
    i20 = ns.index(20000) if 20000 in ns else len(ns) - 1
    summary = np.median if args.stat == "median" else np.mean
    print(f"paper rows used: N = {', '.join(map(str, ns))}; data seeds 0..{args.seeds - 1}, "
          f"{args.splits} splits each; {args.stat} over data seeds")  # fmt: skip
    per_m, pooled = [], np.zeros(len(MULTIPLES))
    for m in MS:
        wanted = np.maximum(1, np.round(MULTIPLES * m).astype(int))
        counts = np.unique(wanted)
        with threadpool_limits(1):
            runs = np.stack([linear_mse(m, s, counts, ns, args.splits) for s in range(args.seeds)])
        mse = summary(runs, axis=0)  # (len(ns), len(counts))
        target = paper.loc[ns, m].to_numpy()[:, None]
        loss = ((mse - target) ** 2).sum(axis=0)
        best = int(np.argmin(loss))
        pooled += loss[np.searchsorted(counts, wanted)]
        per_m.append(
            {
                "m": m,
                "pairs": int(counts[best]),
                "ours20k": mse[i20, best],
                "paper20k": target[i20, 0],
                "ours_allN": mse[:, best].mean(),
                "paper_allN": target.mean(),
                "seed0_20k": runs[0, i20, best],
                "q25_20k": np.quantile(runs[:, i20, best], 0.25),
                "q75_20k": np.quantile(runs[:, i20, best], 0.75),
                "range_20k": f"{mse[i20].min():.3f}-{mse[i20].max():.3f}",
            }
        )
        print(f"m={m}: candidate pairs {counts.tolist()}")
        print(f"  {args.stat} linear MSE at N=20000:", np.round(mse[i20], 3).tolist())
    c = float(MULTIPLES[int(np.argmin(pooled))])
    print()
    print(pd.DataFrame(per_m).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"(ours: the linear MSE's {args.stat} over data seeds at the best count; 20k: N=20000;")
    print(" allN: mean over the N rows; seed0: data seed 0; q25/q75: quartiles over data seeds;")
    print(" range_20k: from the lowest to the highest candidate count's MSE at N=20000)")
    losses = [f"{c:g}: {v:.3f}" for c, v in zip(MULTIPLES, pooled)]
    print("pooled loss (sum over m and N of squared differences) by c:")
    for first in range(0, len(losses), 6):
        print("  " + ", ".join(losses[first : first + 6]))
    print(f"pooled rule: pairs = round({c} * m) -> "
          f"{', '.join(f'm={m}: {round(c * m)}' for m in MS)}")  # fmt: skip
    if c != PAIRS_PER_FEATURE:
        print(f"NOTE: pilid.data.demo.PAIRS_PER_FEATURE is {PAIRS_PER_FEATURE}, not {c}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=40, help="data seeds (random truths)")
    parser.add_argument("--splits", type=int, default=2, help="80/20 splits per data seed")
    parser.add_argument(
        "--stat", choices=("median", "mean"), default="median", help="summary over data seeds"
    )
    parser.add_argument("--paper", type=Path, default=None, help="a paper_results.csv")
    parser.add_argument(
        "--compare-only", action="store_true", help="skip the calibration; only compare generators"
    )
    parser.add_argument(
        "--csv", type=Path, default=COMPARISON_CSV, help="where the comparison is written"
    )
    parser.add_argument("--no-csv", action="store_true", help="print the comparison only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if not args.compare_only:
        calibrate(args)
        print()
    comparison = generators_linear(args.seeds, args.splits, paper_path=args.paper)
    print_comparison(comparison)
    if not args.no_csv:
        write_comparison(comparison, args.csv)
        print(f"wrote {args.csv}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
