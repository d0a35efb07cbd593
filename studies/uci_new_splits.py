"""PiLiD's library defaults against EBM and LightGBM on the paper's UCI sets' unused splits.

The splits are ones the project never used (issue 31, goal 3: "better than EBM on at least 3 of
4").

Table 3's trials use the split seeds 0-19 (``seed`` + trial, `pilid.data.make_split`); here the
seeds are 100, 101, ... (`SPLITS`), which took part in no choice of a default. Each (data set,
split, model) is fitted and scored exactly as ``studies.dev_suite`` does on the development
suite (`dev_suite.run_one`: ``PiLiDRegressor()`` / ``PiLiDClassifier()``, InterpretML's EBM and
LightGBM with their defaults, one thread each, the loader's table as it comes, a regression
target standardised with the training part's statistics) and recorded in
``results/studies/uci_new_splits.csv``, resumable (rows already there are skipped; the file is
rewritten whole after every fit). The summary is the development suite's: per data set the
three models side by side (mean +- std over the splits, mean fit seconds), PiLiD's wins against
EBM and the mean ranks.

    OMP_NUM_THREADS=1 PILID_DATA_DIR=../shared/data/uci python -m studies uci_new_splits
    python -m studies uci_new_splits --tables skill spambase --models pilid ebm --splits 100
    python -m studies uci_new_splits --summary-only
    python -m studies uci_new_splits --models pilid_deep_auto --out \
        results/studies/uci_new_splits_candidates.csv
    python -m studies uci_new_splits --summary-only --models pilid pilid_deep_auto ebm \
        lightgbm --also results/studies/uci_new_splits_candidates.csv --base pilid_deep_auto
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import re
import sys
from pathlib import Path

from pilid.data import load_dataset
from studies import dev_suite

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "results" / "studies" / "uci_new_splits.csv"
TABLES = ("bike", "bank", "spambase", "skill")
#: Split seeds none of the paper's 20 trials uses (they use 0-19).
SPLITS = (100, 101, 102)


def plain_names(dataset):
    """``dataset`` with the characters LightGBM refuses in a feature name (JSON's ``[]{}",:``,
    e.g. spambase's ``char_freq_[``) written as their code points (``char_freq__91``); the same
    columns in the same order, so no model sees anything else."""

    def plain(name: str) -> str:
        return re.sub(r'[\[\]{}",:]', lambda m: f"_{ord(m.group())}", name)

    return dataclasses.replace(
        dataset,
        X=dataset.X.rename(columns=plain),
        feature_names=[plain(n) for n in dataset.feature_names or dataset.X.columns],
        categorical=[plain(n) for n in dataset.categorical or []],
    )


def refuse_paper_seeds(parser: argparse.ArgumentParser, splits) -> None:
    """Exit through ``parser`` with one line when a split seed is one of the paper's trials
    (0-19): those splits are Table 3's, not new ones."""
    paper = sorted(s for s in splits if 0 <= s < 20)
    if paper:
        parser.error(f"split seeds {paper} are the paper's trials (0-19); use seeds from 20 up")


def main(argv=None) -> int:
    """Run the missing (data set, split, model) cells, then print the summary of ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    parser.add_argument(
        "--models",
        nargs="+",
        default=list(dev_suite.MODELS),
        choices=[*dev_suite.MODELS, *dev_suite.CANDIDATES],
        help="the models to fit (default: the library's defaults and the peers; a candidate of "
        "the development suite only when named)",
    )
    parser.add_argument("--splits", nargs="+", type=int, default=list(SPLITS))
    parser.add_argument("--data-dir", default=None, help="the UCI files (default: $PILID_DATA_DIR)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summary-only", action="store_true", help="print the CSV's summary")
    dev_suite.add_reading_arguments(parser)
    dev_suite.add_adoption_argument(parser)
    args = parser.parse_args(argv)
    refuse_paper_seeds(parser, args.splits)
    dev_suite.check_adoption(parser, args)
    return dev_suite.run_and_summarise(
        args,
        lambda name: plain_names(load_dataset(name, data_dir=args.data_dir)),
        functools.partial(dev_suite.write_results, tables=TABLES),
        "UCI, new splits",
    )


if __name__ == "__main__":
    sys.exit(main())
