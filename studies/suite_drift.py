"""How far a rerun of the development suite moved from the committed results (issue 31).

``studies.dev_suite`` refits every cell (table, split, model) from its seed, so a rerun of
the committed ``results/studies/dev_suite.csv`` should give the same numbers. It does on the
machine that wrote them (in any order of the cells); on another processor EBM's and LightGBM's
cells still do, but the last digits of a PiLiD fit move (torch's CPU build computes in MKL,
whose kernels follow the processor), and where the inner validation of ``pairs="auto"`` or
early stopping nearly ties, a small move becomes a different model. This script reads two
results CSVs of ``dev_suite.py`` or ``uci_new_splits.py`` (the committed one and a rerun, e.g.
``--out`` on another machine) and prints, on the cells both hold:

* per model: the cells, how many are bit-identical, the median and the largest absolute
  difference of the metric and the cell that moved most (`drift_by_model`);
* the suite's summary (`dev_suite.summarise`: wins against EBM, mean ranks) of each, on the
  same cells, and the tables whose verdict (PiLiD better than EBM or not) differs
  (`verdict_changes`). A rerun of some models only (``--models pilid``: the one whose fits
  move) is read beside the first file's cells of the others (`with_peers`), and the script
  says so.

    python -m studies suite_drift results/studies/dev_suite.csv results/studies/dev_suite_rerun.csv
    python -m studies suite_drift results/studies/uci_new_splits.csv \
        results/studies/uci_new_splits_rerun.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from studies import dev_suite

KEY = dev_suite.KEY


def common_cells(first: pd.DataFrame, second: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of `first` and of `second` whose (table, split, model) both hold, in one order."""
    both = first[KEY].merge(second[KEY], on=KEY)
    take = lambda frame: both.merge(frame, on=KEY, how="left")  # noqa: E731
    return take(first), take(second)


def with_peers(first: pd.DataFrame, second: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """`second` plus `first`'s cells of the models `second` lacks, on `second`'s (table, split)
    pairs; and the names of those models (none: `second` unchanged)."""
    missing = [m for m in dict.fromkeys(first["model"]) if m not in set(second["model"])]
    if not missing:
        return second, []
    places = second[["table", "split"]].drop_duplicates()
    borrowed = first[first["model"].isin(missing)].merge(places, on=["table", "split"])
    return pd.concat([second, borrowed[second.columns]], ignore_index=True), missing


def drift(first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Per cell both hold: ``first``, ``second`` (the metric of each) and ``difference``
    (second - first)."""
    a, b = common_cells(first, second)
    cells = a[KEY].assign(first=a["value"].to_numpy(), second=b["value"].to_numpy())
    return cells.assign(difference=cells["second"] - cells["first"])


def drift_by_model(cells: pd.DataFrame) -> pd.DataFrame:
    """Per model of `drift`'s cells: ``cells``, ``identical`` (bit-equal metrics),
    ``median_abs`` and ``max_abs`` (of the absolute difference) and ``largest`` (the table and
    split of the largest)."""
    rows = []
    for model, group in cells.groupby("model", sort=False):
        gap = group["difference"].abs()
        worst = group.loc[gap.idxmax()]
        rows.append(
            {
                "model": model,
                "cells": len(group),
                "identical": int((group["first"] == group["second"]).sum()),
                "median_abs": float(np.median(gap)),
                "max_abs": float(gap.max()),
                "largest": f"{worst['table']} split {int(worst['split'])}",
            }
        )
    return pd.DataFrame(rows).set_index("model")


def verdict_changes(first: dict, second: dict) -> list[str]:
    """The tables where PiLiD beats EBM in one `dev_suite.summarise` and not in the other."""
    a = first["per_table"]["pilid_beats_ebm"]
    b = second["per_table"]["pilid_beats_ebm"].reindex(a.index)
    both = a.notna() & b.notna()
    return [t for t in a.index[both] if bool(a[t]) != bool(b[t])]


def read(path: Path) -> pd.DataFrame:
    """A results CSV of ``dev_suite.py`` (PiLiD's rows those of the defaults the reruns were
    made with, before ``deep_input="auto"``: ``dev_suite.as_fitted_before_auto``), or one line
    naming the missing file."""
    if not path.is_file():
        raise SystemExit(
            f"suite_drift: no results file {path}; write one with "
            f"python -m studies dev_suite --out {path}"
        )
    return dev_suite.as_fitted_before_auto(dev_suite.read_results(path))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path, help="e.g. results/studies/dev_suite.csv")
    parser.add_argument("second", type=Path, help="a rerun of the same cells")
    args = parser.parse_args(argv)
    first, second = read(args.first), read(args.second)
    cells = drift(first, second)
    if cells.empty:
        print(f"{args.first} and {args.second} hold no cell (table, split, model) in common")
        return 1
    print(f"{len(cells)} cells in both files")
    with pd.option_context("display.float_format", "{:.3g}".format, "display.width", 120):
        print(drift_by_model(cells).to_string())
    second, borrowed = with_peers(first, second)
    if borrowed:
        print(
            f"\n{args.second} holds no {', '.join(borrowed)}: {args.first}'s cells read beside it"
        )
    a, b = common_cells(first, second)
    summaries = [dev_suite.summarise(a), dev_suite.summarise(b)]
    for path, summary in zip((args.first, args.second), summaries):
        print(f"\n{path}, on these cells:")
        print(dev_suite.format_summary(summary))
    changed = verdict_changes(*summaries)
    print(f"\nPiLiD against EBM changes its verdict on {len(changed)} table(s)", end="")
    print(f": {', '.join(changed)}" if changed else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
