"""The README's "Use it" example, run as written, and its figures: a bagged PiLiD's shapes with
their bands against the true shapes, and its interactions against the true pair terms.

Fits `PiLiDRegressor` with the library's defaults (a bag of 16, `pilid.estimators.pilid.
LIBRARY_DEFAULTS`) on synthetic data with known shapes, prints the numbers the README quotes
(test R^2, shape-fidelity R^2 per feature, the share of the characteristic points whose band
holds the true shape) and draws `plot_shapes()` with the true centred shapes dashed on top; then,
for each true pair term of the data (a product of two centred functions, so its own interaction
is itself), the model's `interaction_grid` (`pilid.inspection.pair_effect`) against it: its R^2 on
the grid (`interaction_fidelity`) and the heat maps side by side.

    OMP_NUM_THREADS=1 python scripts/readme_example.py --out results/examples/bagged_shapes.png \
        --interactions-out results/examples/interactions.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from bands_coverage import coverage  # noqa: E402 - scripts/ is on sys.path when run as a script
from sklearn.model_selection import train_test_split  # noqa: E402

from pilid import PiLiDRegressor  # noqa: E402
from pilid.data import load_dataset  # noqa: E402
from pilid.inspection.fidelity import estimator_fidelity, shape_fidelity  # noqa: E402

#: Grid points per feature of the interaction figure.
GRID = 25


def interaction_fidelity(model, truth, X_train: np.ndarray, a: int, b: int) -> tuple:
    """The model's interaction of features a and b (`interaction_grid`) against the true pair
    term on the same grid: (R^2 of the truth by the model's grid, both centred,
    `pilid.inspection.fidelity.shape_fidelity`; the grid; the centred truth)."""
    grid = model.interaction_grid(a, b, n=GRID)
    rows = np.repeat(np.asarray(X_train)[:1], len(grid), axis=0)
    rows[:, a], rows[:, b] = grid["x_a"], grid["x_b"]
    terms = truth.interaction_terms(rows)
    pair = [k for k, f in enumerate(truth.interaction_features) if sorted(f) == sorted([a, b])]
    true = terms[:, pair].sum(axis=1)
    (r2,), _ = shape_fidelity(grid[["value"]].to_numpy(), true[:, None])  # centred R^2
    return float(r2), grid, true - true.mean()


def draw_interactions(model, data, X_train, out: Path) -> None:
    """Per true pair term: the truth (top) and the model's interaction (bottom), one colour
    scale per pair; prints each pair's R^2."""
    truth = data.true_shapes
    names = model._feature_names()
    pairs = [tuple(int(j) for j in f) for f in truth.interaction_features if len(f) == 2]
    fig, axes = plt.subplots(
        2, len(pairs), figsize=(3.2 * len(pairs), 6.0), squeeze=False, layout="constrained"
    )
    scores = []
    for col, (a, b) in enumerate(pairs):
        r2, grid, true = interaction_fidelity(model, truth, X_train, a, b)
        scores.append(r2)
        shape = (GRID, GRID)
        limit = float(np.abs(true).max()) or 1.0
        for row, values, title in (
            (0, true, f"true {names[a]} x {names[b]}"),
            (1, grid["value"].to_numpy() - grid["value"].mean(), f"PiLiD: R^2 {r2:.2f}"),
        ):
            ax = axes[row, col]
            mesh = ax.pcolormesh(
                np.unique(grid["x_a"]),
                np.unique(grid["x_b"]),
                values.reshape(shape).T,
                shading="nearest",
                cmap="RdBu_r",
                vmin=-limit,
                vmax=limit,
            )
            ax.set_title(title, fontsize=9)
            ax.set_xlabel(names[a], fontsize=8)
            ax.set_ylabel(names[b], fontsize=8)
        fig.colorbar(mesh, ax=axes[:, col], location="bottom", shrink=0.8)
        print(f"interaction {names[a]} x {names[b]}: R^2 {r2:.3f}")
    print(f"interaction fidelity R^2, mean over the {len(pairs)} true pairs: {np.mean(scores):.3f}")
    fig.suptitle(
        "true pair terms (top) and PiLiD's interaction_grid (bottom), library defaults; "
        f"mean R^2 {np.mean(scores):.2f}",
        fontsize=9,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/examples/bagged_shapes.png")
    parser.add_argument("--interactions-out", default="results/examples/interactions.png")
    args = parser.parse_args()

    # -- the README's example, unchanged ------------------------------------------------------
    data = load_dataset("synthetic", N=3000, m=5, noise=0.3)  # known true shapes
    X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, random_state=0)
    model = PiLiDRegressor(random_state=0).fit(X_train, y_train)  # the library's defaults
    print(f"test R^2: {model.score(X_test, y_test):.3f}")
    true_test = data.true_shapes.functions(np.asarray(X_test))
    per_feature, mean = estimator_fidelity(model, X_test, true_test)
    print(f"shape fidelity R^2 per feature {np.round(per_feature, 3)}, mean {mean:.3f}")

    # -- the bands against the truth (the coverage of studies/bands_coverage.py) ---------------
    points = coverage(model, data, np.asarray(X_train))
    print(
        f"true shape inside the bag's 2.5-97.5% band at {points['inside'].mean():.0%} of the points"
    )

    axes = model.plot_shapes(ncols=5)
    names = list(dict.fromkeys(points["feature"]))  # feature order
    offset = data.true_shapes.functions(np.asarray(X_train)).mean(axis=0)  # centred as u_j
    truth = data.true_shapes.grid()
    for ax, (j, name) in zip(np.ravel(axes), enumerate(names)):
        rows = truth[truth["feature"] == name]
        ax.plot(rows["x"], rows["value"] - offset[j], "k--", lw=1, label="true shape")
    np.ravel(axes)[0].legend(fontsize=7, loc="best")
    fig = np.ravel(axes)[0].figure
    fig.suptitle(
        f"PiLiD, library defaults (bag of {model.n_bags}): mean shape and 2.5-97.5% band; "
        f"fidelity R^2 {mean:.3f}, band holds the truth at {points['inside'].mean():.0%} "
        "of the points",
        fontsize=8,
    )
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"wrote {out}")
    print(f"pair terms: {model.pairs_}")
    draw_interactions(model, data, X_train, Path(args.interactions_out))


if __name__ == "__main__":
    main()
