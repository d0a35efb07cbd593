"""Two rows of Table 3 (or Table 3+) compared trial by trial, per data set.

Each arm is the setting a config gives (``experiment=<name> data=<set> model=<model>``, its
setting id, `pilid.experiments.setting.setting_id`), so a row of a later setting id (a changed
default) never mixes with an earlier one. Per data set: both arms' means over the trials both
have, the mean difference (first minus second) with its standard error, and the number of
trials in which the first arm is better (lower MSE, higher AUC); `pilid.report.stats`.

    python -m studies paired_rows pilid_lib ebm --results results/records
    python -m studies paired_rows pilid_lib ga2m --data bank spambase --results results/records
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from hydra import compose, initialize_config_dir

from pilid.experiments.config import CONF_DIR
from pilid.experiments.setting import setting_id
from pilid.report.records import load_records
from pilid.report.stats import paired_ttest, shared_units
from pilid.tasks import LOWER_IS_BETTER

DATA = ("bike", "bank", "spambase", "skill")


def arm_ids(experiment: str, arms) -> dict:
    """The setting id of ``experiment=<experiment> data=<data> model=<model>`` for each
    ``(data, model)`` of `arms`, composed under one Hydra start."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return {
            (data, model): setting_id(
                compose(
                    "config",
                    overrides=[f"experiment={experiment}", f"data={data}", f"model={model}"],
                )
            )
            for data, model in arms
        }


def arm_id(experiment: str, data: str, model: str) -> str:
    """The setting id of ``experiment=<experiment> data=<data> model=<model>``."""
    return arm_ids(experiment, [(data, model)])[data, model]


def compare(records, data: str, first_id: str, second_id: str) -> dict:
    """The paired comparison of two settings on one data set (see the module's docstring):
    `pilid.report.stats.paired_ttest` over the trials both have."""
    arms = [records[records["setting_id"] == sid] for sid in (first_id, second_id)]
    pairs = shared_units(*arms, block=())
    a, b = pairs["value_a"].to_numpy(), pairs["value_b"].to_numpy()
    metric = arms[0]["metric"].iloc[0] if len(arms[0]) else "mse"
    test = paired_ttest(a, b)
    better = (a < b) if LOWER_IS_BETTER[metric] else (a > b)
    return {
        "data": data,
        "metric": metric,
        "trials": test.n,
        "first": test.mean_a,
        "second": test.mean_b,
        "diff": test.mean_diff,
        "se": test.std_diff / math.sqrt(test.n) if test.n > 1 else math.nan,
        "first_better": int(np.sum(better)),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", help="a model config name, e.g. pilid_lib")
    parser.add_argument("second", help="the model it is compared with, e.g. ebm")
    parser.add_argument("--data", nargs="+", default=list(DATA), choices=list(DATA))
    parser.add_argument("--experiment", default="real_data")
    parser.add_argument("--results", default="results/records")
    args = parser.parse_args(argv)
    records = load_records(args.results)
    ids = arm_ids(args.experiment, [(d, m) for d in args.data for m in (args.first, args.second)])
    for data in args.data:
        row = compare(records, data, ids[data, args.first], ids[data, args.second])
        if row["trials"] == 0:
            print(f"{data}: no trials that both {args.first} and {args.second} have")
            continue
        print(
            f"{data} ({row['metric'].upper()}, {row['trials']} trials): {args.first} "
            f"{row['first']:.4f}, {args.second} {row['second']:.4f}, difference "
            f"{row['diff']:+.4f} +- {row['se']:.4f} (standard error); {args.first} better in "
            f"{row['first_better']} of {row['trials']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
