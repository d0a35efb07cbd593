"""The README's "Use it" example, run as written, and its figure: a bagged PiLiD's shapes with
their bands against the true shapes.

Fits `PiLiDRegressor` with the library's defaults (a bag of 16, `pilid.models.pilid.
LIBRARY_DEFAULTS`) on synthetic data with known shapes, prints the numbers the README quotes
(test R^2, shape-fidelity R^2 per feature, the share of the characteristic points whose band
holds the true shape) and draws `plot_shapes()` with the true centred shapes dashed on top.

    OMP_NUM_THREADS=1 python scripts/readme_example.py --out results/examples/bagged_shapes.png
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
from pilid.models.fidelity import estimator_fidelity  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/examples/bagged_shapes.png")
    args = parser.parse_args()

    # -- the README's example, unchanged ------------------------------------------------------
    data = load_dataset("synthetic", N=3000, m=5, noise=0.3)  # known true shapes
    X_train, X_test, y_train, y_test = train_test_split(data.X, data.y, random_state=0)
    model = PiLiDRegressor(random_state=0).fit(X_train, y_train)  # the library's defaults
    print(f"test R^2: {model.score(X_test, y_test):.3f}")
    true_test = data.true_shapes.functions(np.asarray(X_test))
    per_feature, mean = estimator_fidelity(model, X_test, true_test)
    print(f"shape fidelity R^2 per feature {np.round(per_feature, 3)}, mean {mean:.3f}")

    # -- the bands against the truth (the coverage of scripts/bands_coverage.py) ---------------
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


if __name__ == "__main__":
    main()
