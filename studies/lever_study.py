"""Levers for PiLiD's library defaults, measured on the development suite (issue 31, item 2).

Each *variant* is ``PiLiDRegressor`` / ``PiLiDClassifier`` with the library defaults and one or two
changes (`VARIANTS`: more pieces, more pieces held smooth, a lower or row-scaled lam, no penalty on
the MLP, ``schedule="additive_first"``, categories' codes instead of one-hot in the MLP, explicit
pair terms), fitted on the tables of the development suite (`pilid.data.suite.SUITE`, R's data sets,
none of the paper's UCI sets) exactly as ``studies.dev_suite`` fits PiLiD: the same splits (seeds
of `pilid.data.make_split`), the table as it comes, ``random_state`` = the split seed, one thread
(`dev_suite.fit_and_score`). A variant whose value depends on the table is a *rule* of the training
rows n (e.g. gamma = n^(1/3) / 1.5), never a value chosen per table. Results, one row per (variant,
table, split): ``results/studies/levers.csv``; resumable (rows already there are skipped; the file
is rewritten whole after every fit).

Every variant is measured on top of the library defaults before issue 31
(`EARLIER_DEFAULTS`, the variant ``defaults``); the library's defaults now are
the variant `LIBRARY_VARIANT` (``gamma40_smooth_rows_lam_steep_pairs_auto``) but the deep part's
input, whose rows equal ``studies.dev_suite``'s PiLiD rows of the defaults before
``deep_input="auto"`` (``dev_suite.COLUMNS_DEFAULTS``, read as PiLiD's:
``dev_suite.as_fitted_before_auto``); the levers measured before that were read against the
defaults then, `BASELINE_VARIANT` (``gamma40_smooth_rows_lam_rows_pairs_auto``). The summary
compares every variant with its baseline (`baseline_of`: ``defaults``, or ``code``, the defaults
before categorical features entered the deep part one-hot, for the variants measured then;
`BASELINE_VARIANT` for those measured since) and with EBM and LightGBM on the same
splits (read from ``results/studies/dev_suite.csv``): per table the mean over the splits; per
variant the tables where it beats its baseline and where it beats EBM. Splits 0 and 1 screen the
levers (a reduced run: 2 of the suite's 5 splits, and the summary says so); the best of them are
confirmed on splits 2-4, which took no part in the choice (``--splits 2 3 4``); the summary shows
the cells that have every split asked for.

The seed moves a table as much as many levers do: `SEED_VARIANT` is `BASELINE_VARIANT`
refit with ``random_state`` = the split seed + 1000 (a variant's `SEED_OFFSET`), and the summary
also reads every variant against `BASELINE_VARIANT` beside that move (`against_the_seed`:
better or worse, and by more than the seed moves the table or not).

``--uci`` fits the variants on the paper's four UCI sets instead, on the split seeds of
``studies.uci_new_splits`` (100-102, none of the paper's trials), beside its EBM and LightGBM
rows (``results/studies/levers_uci.csv``): issue 31's goal 3 for a variant. Nothing is chosen
there.

    OMP_NUM_THREADS=1 python -m studies lever_study --variants defaults gamma20 --splits 0 1
    python -m studies lever_study --summary-only                  # the screening (splits 0, 1)
    python -m studies lever_study --summary-only --splits 2 3 4   # the confirmation
    PILID_DATA_DIR=../shared/data/uci python -m studies lever_study --uci --variants defaults
    python -m studies lever_study --defaults-change         # earlier defaults against today's
    python -m studies lever_study --defaults-change --uci   # the same on the UCI sets' new splits
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from pilid.data.suite import SUITE, load_suite_table
from pilid.models.row_rules import (
    LAM_KNEE_ROWS,
    LAM_RANGE,
    SMOOTHNESS_RANGE,
    per_rows,
    rows_steep_lam,
)
from pilid.tasks import LOWER_IS_BETTER
from studies import dev_suite, uci_new_splits

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "results" / "studies" / "levers.csv"
#: The run that confirmed `LIBRARY_VARIANT` (the steep lam rule against the defaults then): its
#: rows on the suite are the library's, those of ``dev_suite.csv``'s PiLiD.
OUT_LIBRARY = REPO / "results" / "studies" / "levers_lam.csv"
#: ``--uci``: the variants on the paper's UCI sets, on ``studies.uci_new_splits``'s splits.
OUT_UCI = REPO / "results" / "studies" / "levers_uci.csv"
KEY = ["variant", "table", "split"]
COLUMNS = [*KEY, "task", "metric", "value", "fit_seconds", "n_train", "n_test", "deep_share"]
SCREEN_SPLITS = (0, 1)
#: The development suite's split seeds (`dev_suite.SPLITS`).
SUITE_SPLITS = tuple(dev_suite.SPLITS)


def gamma_rule(divisor: float, cap: int):
    """gamma = clip(round(n ** (1/3) / divisor), 2, cap) pieces, n the training rows (the form
    of `pilid.nn.piecewise.auto_gamma`, today divisor 3 and cap 5)."""
    return lambda n: {"gamma": int(min(max(round(n ** (1.0 / 3.0) / divisor), 2), cap))}


def lam_rule(c: float):
    """lam = c / n, clipped to [1e-6, 1e-2] (`pilid.models.row_rules.per_rows`, the form of the
    library's ``lam="rows"``, c = 5): a penalty whose weight against the mean loss falls as the
    rows grow (a fixed prior on the parameters against the summed loss)."""
    return lambda n: {"lam": per_rows(c, n, *LAM_RANGE)}


def steep_lam_rule(n: int) -> dict:
    """lam = 5 / n up to 5,000 rows and 5 / n * 5,000 / n beyond (a penalty that falls as
    1 / n^2 on many rows): the library's ``lam="rows_steep"`` (`pilid.models.row_rules`)."""
    return {"lam": rows_steep_lam(n)}


def above_rows(knee: int = LAM_KNEE_ROWS, **values):
    """``values`` above ``knee`` training rows (the knee of ``lam="rows_steep"``) and nothing
    up to it, where the variant keeps the parameters it has (``above_rows(n_bags=8)``: fewer
    members, ``above_rows(batch_size=1024)``: fewer, larger optimiser steps where the rows are
    many)."""
    return lambda n: dict(values) if n > knee else {}


def smooth_rule(c: float, floor: float = SMOOTHNESS_RANGE[0]):
    """smoothness = c / n, clipped to [floor, 10] (`pilid.models.row_rules.per_rows`, the form of
    the library's ``smoothness="rows"``, c = 500): a fixed prior on the shapes' roughness against
    the summed loss, i.e. a weight on the mean loss that grows as the rows shrink; ``floor``
    keeps the weight from falling below a constant on many rows."""
    return lambda n: {"smoothness": per_rows(c, n, floor, SMOOTHNESS_RANGE[1])}


def resolve_rules(params: dict, n: int) -> dict:
    """``params`` with each value that is a rule of the training rows (a function of n such as
    `smooth_rule`'s, returning ``{key: value}``) replaced by its value at ``n`` rows."""
    return {key: value(n)[key] if callable(value) else value for key, value in params.items()}


def library_rules(n: int) -> dict:
    """The library's rules of the rows at n (`smooth_rule` at 500 / n, `lam_rule` at 5 / n):
    ``smoothness="rows"`` and ``lam="rows"`` as numbers."""
    return {**smooth_rule(500.0)(n), **lam_rule(5.0)(n)}


#: The library defaults before the development suite (gamma a rule of the rows up to 5 pieces,
#: lam 1e-3, no roughness penalty, no pair terms): the baseline every study of the levers was
#: measured against (this study's ``defaults``, `studies.bands_coverage`'s and
#: `studies.choose_defaults`' ``library_earlier``), pinned so that their rows stay what they are.
EARLIER_DEFAULTS = {
    "gamma": "auto",
    "knots": "quantile",
    "hidden_layers": (64, 32),
    "lam": 1e-3,
    "n_bags": 16,
    "smoothness": 0.0,
    "pairs": 0,
    "deep_input": "columns",  # the default until deep_input="auto", after these levers
}

#: How the variants measured before one-hot categories became the default saw a categorical
#: feature in the deep part: its code (``deep_categorical="code"``), pinned so that their rows
#: stay what they are.
CODE = {"deep_categorical": "code"}

#: A variant's key that is no constructor parameter: its fits take ``random_state`` = the split's
#: seed plus this (0: the split's seed, as every other variant).
SEED_OFFSET = "seed_offset"


def with_seed1000(name: str, params: dict, rule) -> dict:
    """A variant and its refit with the seed + 1000 (``<name>_seed1000``): the same parameters
    and rule, every fit's ``random_state`` the split's seed + 1000."""
    return {name: (params, rule), f"{name}_seed1000": ({**params, SEED_OFFSET: 1000}, rule)}


#: Variant -> (constructor parameters on top of the earlier library defaults, rule of n or None).
#: ``defaults``: the library defaults before issue 31 (`EARLIER_DEFAULTS`,
#: the library defaults when these variants were measured); ``code``: the defaults before
#: one-hot categories (the library defaults then); the rest up to ``additive_first_gamma_rows``
#: were measured then, with the code, by the library of then; ``code_now``: the same parameters
#: as ``code`` measured by the library of later (the library changed in between: caravan's split
#: 0 gave AUC 0.7402 then and 0.7412 later, with no categorical feature), the one-hot default's
#: baseline.
VARIANTS = {
    "defaults": ({}, None),
    "code": (CODE, None),
    "gamma10": ({**CODE, "gamma": 10}, None),
    "gamma20": ({**CODE, "gamma": 20}, None),
    "gamma_rows": (CODE, gamma_rule(1.5, 20)),
    "gamma20_lam1e-5": ({**CODE, "gamma": 20, "lam": 1e-5}, None),
    "gamma20_lam_rows": ({**CODE, "gamma": 20}, lam_rule(5.0)),
    "additive_first": ({**CODE, "schedule": "additive_first"}, None),
    "additive_first_gamma20": ({**CODE, "schedule": "additive_first", "gamma": 20}, None),
    "additive_first_gamma_rows": ({**CODE, "schedule": "additive_first"}, gamma_rule(1.5, 20)),
    "code_now": (CODE, None),
    "lam1e-5": ({"lam": 1e-5}, None),
    "deep_unpenalised": ({"reg_groups": "additive"}, None),
    "onehot_additive_first_gamma_rows": ({"schedule": "additive_first"}, gamma_rule(1.5, 20)),
    # many pieces held smooth by the roughness penalty (P-splines' lever)
    "gamma20_smooth0.01": ({"gamma": 20, "smoothness": 0.01}, None),
    "gamma20_smooth0.1": ({"gamma": 20, "smoothness": 0.1}, None),
    "gamma40_smooth0.1": ({"gamma": 40, "smoothness": 0.1}, None),
    "gamma40_smooth1": ({"gamma": 40, "smoothness": 1.0}, None),
    "gamma40_smooth0.1_additive_first": (
        {"gamma": 40, "smoothness": 0.1, "schedule": "additive_first"},
        None,
    ),
    "gamma40_smooth_rows": ({"gamma": 40}, smooth_rule(500.0)),  # 0.1 at 5,000 rows
    # the library's pieces or 40 smooth ones, whichever validates better (inner validation):
    # measured first when the choice read the early-stopping rows alone (commit 3ec0ad8), then
    # with a bag's out-of-bag rows as well (today's library)
    "smooth_auto_holdout": ({"smoothness": "auto"}, None),
    "smooth_auto": ({"smoothness": "auto"}, None),
    # 40 smooth pieces with the MLP's penalty a fixed prior against the summed loss (lam = 5 / n:
    # 1e-3 at 5,000 rows, weaker on the large regression tables where an unpenalised MLP won),
    # joint or additive part first
    "gamma40_smooth0.1_lam_rows": ({"gamma": 40, "smoothness": 0.1}, lam_rule(5.0)),
    "gamma40_smooth0.1_additive_first_lam_rows": (
        {"gamma": 40, "smoothness": 0.1, "schedule": "additive_first"},
        lam_rule(5.0),
    ),
    # the same with explicit pair terms for FAST's first 10 pairs or none, whichever validates
    # better (``pairs="auto"``, pilid.nn.pairs; GA2M's lever)
    "gamma40_smooth0.1_lam_rows_pairs_auto": (
        {"gamma": 40, "smoothness": 0.1, "pairs": "auto"},
        lam_rule(5.0),
    ),
    # the same parameters after FAST's two rankings (`pilid.models.pair_choice.fast_pairs`): the
    # pairs on the main effects' residuals and on the target itself in turn (the variant above
    # was measured at commit b50f440, when the pairs came from the residual ranking alone)
    "gamma40_smooth0.1_lam_rows_pairs_auto_both": (
        {"gamma": 40, "smoothness": 0.1, "pairs": "auto"},
        lam_rule(5.0),
    ),
    # the same with the smoothness a rule of the rows (500 / n), whose shapes keep issue 31's
    # fidelity floor once the purification carries the penalty (studies.bands_coverage)
    "gamma40_smooth_rows_lam_rows_pairs_auto": (
        {"gamma": 40, "pairs": "auto"},
        library_rules,
    ),
    # the same with the weight never below 0.1 (the best constant weight of the screening,
    # `pilid.models.shape_choice.SMOOTH_WEIGHT`): 500 / n below 5,000 rows, 0.1 above
    "gamma40_smooth_rows_floor0.1_lam_rows_pairs_auto": (
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(500.0, floor=0.1)(n), **lam_rule(5.0)(n)},
    ),
    # BASELINE_VARIANT with 30 fixed pair terms (no choice), and with a longer training
    # (300 epochs, patience 20): levers for the tables where trees win (mlc_churn), screened on
    # `SCREEN_SPLITS`
    "gamma40_smooth_rows_lam_rows_pairs30": (
        {"gamma": 40, "pairs": 30},
        library_rules,
    ),
    "gamma40_smooth_rows_lam_rows_pairs_auto_epochs300": (
        {"gamma": 40, "pairs": "auto", "epochs": 300, "patience": 20},
        library_rules,
    ),
    # BASELINE_VARIANT choosing among 0, 10 and 30 pair terms by inner validation
    # (``pairs=[0, 10, 30]``; ``"auto"`` is [0, 10]): 30 fixed pairs helped mlc_churn, hmda and
    # computers on the screening splits and cost the others
    "gamma40_smooth_rows_lam_rows_pairs_0_10_30": (
        {"gamma": 40, "pairs": (0, 10, 30)},
        library_rules,
    ),
    # BASELINE_VARIANT with a wider MLP (the (64, 32) default was chosen on breast cancer,
    # diabetes and synthetic data; the suite's tables have up to 43,000 rows)
    "gamma40_smooth_rows_lam_rows_pairs_auto_mlp128_64": (
        {"gamma": 40, "pairs": "auto", "hidden_layers": (128, 64)},
        library_rules,
    ),
    # BASELINE_VARIANT with a bag of 32 (the default 16 was chosen on breast cancer,
    # diabetes and synthetic data): more members average more of the fits' noise away
    "gamma40_smooth_rows_lam_rows_pairs_auto_bags32": (
        {"gamma": 40, "pairs": "auto", "n_bags": 32},
        library_rules,
    ),
    "gamma40_smooth_rows_lam_rows_pairs_auto_mlp256_128": (
        {"gamma": 40, "pairs": "auto", "hidden_layers": (256, 128)},
        library_rules,
    ),
    # BASELINE_VARIANT refined at a tenth of the learning rate once early stopping ends
    # training (``lr_decay=0.1``: a second phase from the best weights, kept only where it
    # beats them; the learning-rate schedule)
    "gamma40_smooth_rows_lam_rows_pairs_auto_decay0.1": (
        {"gamma": 40, "pairs": "auto", "lr_decay": 0.1},
        library_rules,
    ),
    # BASELINE_VARIANT itself with another seed (random_state = split seed + 1000) on the
    # same splits: how far a table's mean moves with the seed alone, the scale of the
    # differences the levers are judged by
    "gamma40_smooth_rows_lam_rows_pairs_auto_seed1000": (
        {"gamma": 40, "pairs": "auto", SEED_OFFSET: 1000},
        library_rules,
    ),
    # and with a third seed (split seed + 2000): the seed's move as a spread of two, not one
    "gamma40_smooth_rows_lam_rows_pairs_auto_seed2000": (
        {"gamma": 40, "pairs": "auto", SEED_OFFSET: 2000},
        library_rules,
    ),
    # 0, 10 or 30 pairs with the other seed: whether its gains over the library's defaults
    # (compared with SEED_VARIANT) hold with another seed
    "gamma40_smooth_rows_lam_rows_pairs_0_10_30_seed1000": (
        {"gamma": 40, "pairs": (0, 10, 30), SEED_OFFSET: 1000},
        library_rules,
    ),
    # BASELINE_VARIANT with each bag member holding out its own early-stopping rows
    # (``bag_validation="own"``, as EBM's outer bags do): no row is left out of every member's
    # training, and the choice of ``pairs="auto"`` reads every row out of some members' bags
    "gamma40_smooth_rows_lam_rows_pairs_auto_own_val": (
        {"gamma": 40, "pairs": "auto", "bag_validation": "own"},
        library_rules,
    ),
    # BASELINE_VARIANT with 100 pieces per feature instead of 40, the roughness penalty's
    # rule unchanged (EBM cuts a feature into up to 1,024 bins; the suite's count features and
    # thresholds want sharp bends where the data hold them)
    "gamma100_smooth_rows_lam_rows_pairs_auto": (
        {"gamma": 100, "pairs": "auto"},
        library_rules,
    ),
    # BASELINE_VARIANT with a fifth of its roughness penalty (100 / n instead of 500 / n):
    # the penalty on neighbouring pieces holds back the steps of count features and thresholds
    # (the additive part alone loses most to it on computers, mlc_churn and caravan: the
    # ``..._additive_only`` variants below)
    "gamma40_smooth_rows100_lam_rows_pairs_auto": (
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(100.0)(n), **lam_rule(5.0)(n)},
    ),
    # the library's additive part alone (no MLP, no pair terms), with its roughness penalty and
    # with none: what the penalty costs the shapes themselves, apart from what the MLP makes up
    "gamma40_smooth_rows_lam_rows_additive_only": (
        {"gamma": 40, "pairs": 0, "hidden_layers": None},
        library_rules,
    ),
    "gamma40_smooth0_lam_rows_additive_only": (
        {"gamma": 40, "pairs": 0, "hidden_layers": None, "smoothness": 0.0},
        lambda n: lam_rule(5.0)(n),
    ),
    # BASELINE_VARIANT with the MLP seeing each numeric feature piecewise-linearly encoded
    # on 8 quantile bins (``deep_bins=8``; Gorishniy et al., NeurIPS 2022, whose encoding lifts
    # MLPs towards gradient boosting on tables) instead of one standardised column
    "gamma40_smooth_rows_lam_rows_pairs_auto_bins8": (
        {"gamma": 40, "pairs": "auto", "deep_bins": 8},
        library_rules,
    ),
    # BASELINE_VARIANT with a category's levels of fewer than 10 fit rows merged into one
    # (``min_frequency=10``, scikit-learn's OneHotEncoder convention): a level of a few rows
    # gets its own value in the shape and its own one-hot column in the MLP, fitted on those
    # rows alone. Only ames and hotel_rates have such levels in a split's training part; on the
    # other tables the fit is the library variant's
    "gamma40_smooth_rows_lam_rows_pairs_auto_minfreq10": (
        {"gamma": 40, "pairs": "auto", "min_frequency": 10},
        library_rules,
    ),
    # and with the other seed (compared with SEED_VARIANT, seed for seed): whether its gain on
    # ames holds with another seed
    "gamma40_smooth_rows_lam_rows_pairs_auto_minfreq10_seed1000": (
        {"gamma": 40, "pairs": "auto", "min_frequency": 10, SEED_OFFSET: 1000},
        library_rules,
    ),
    # BASELINE_VARIANT with a bag of 8 instead of 16 (issue 52: half the members to train)
    "gamma40_smooth_rows_lam_rows_pairs_auto_bags8": (
        {"gamma": 40, "pairs": "auto", "n_bags": 8},
        library_rules,
    ),
    # BASELINE_VARIANT with the bag's MLPs as one efficient ensemble (issue 51): the
    # members share the MLP's weights through per-member rank-1 adapters (BatchEnsemble, as TabM
    # trains its k members, ``deep_ensemble="shared"``), each keeping its additive part, its
    # bootstrap rows and its early stopping; the shared weights learn from the mean of the
    # members' losses. The rows of ``..._shared_sum``, ``..._shared_sum_bags8`` (8 members) and
    # ``..._shared_sum_mlp256_128`` (256 and 128 units) in ``levers_shared_sum.csv`` were fitted
    # at commit d3e92b6 as ``..._shared``, ``..._shared_bags8`` and ``..._shared_mlp256_128``,
    # when the shared weights learned from the sum of the losses (so ``lam`` weighed on them a
    # sixteenth as much as on one member's)
    "gamma40_smooth_rows_lam_rows_pairs_auto_shared": (
        {"gamma": 40, "pairs": "auto", "deep_ensemble": "shared"},
        library_rules,
    ),
    # BASELINE_VARIANT choosing ``pairs="auto"`` on each candidate's first 4 bag members
    # (``choice_members=4``), then training only the chosen candidate's other 12 (issue 52: 20
    # members trained instead of 32; the same bag of 16 wherever the choice agrees)
    "gamma40_smooth_rows_lam_rows_pairs_auto_choose4": (
        {"gamma": 40, "pairs": "auto", "choice_members": 4},
        library_rules,
    ),
    # and with the other seed (compared with SEED_VARIANT, seed for seed)
    "gamma40_smooth_rows_lam_rows_pairs_auto_choose4_seed1000": (
        {"gamma": 40, "pairs": "auto", "choice_members": 4, SEED_OFFSET: 1000},
        library_rules,
    ),
    # the same choice on each candidate's first 8 members (24 members trained), with both seeds
    "gamma40_smooth_rows_lam_rows_pairs_auto_choose8": (
        {"gamma": 40, "pairs": "auto", "choice_members": 8},
        library_rules,
    ),
    "gamma40_smooth_rows_lam_rows_pairs_auto_choose8_seed1000": (
        {"gamma": 40, "pairs": "auto", "choice_members": 8, SEED_OFFSET: 1000},
        library_rules,
    ),
    # BASELINE_VARIANT with a weaker penalty on the MLP (issue 51: the large regressions,
    # where LightGBM leads and the MLP carries almost nothing of the output): lam = 0.5 / n and
    # 0.05 / n instead of 5 / n, and the MLP not penalised at all (Omega on the additive part
    # only, ``reg_groups="additive"``)
    "gamma40_smooth_rows_lam_rows0.5_pairs_auto": (
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(500.0)(n), **lam_rule(0.5)(n)},
    ),
    "gamma40_smooth_rows_lam_rows0.05_pairs_auto": (
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(500.0)(n), **lam_rule(0.05)(n)},
    ),
    "gamma40_smooth_rows_lam_rows_pairs_auto_deep_unpenalised": (
        {"gamma": 40, "pairs": "auto", "reg_groups": "additive"},
        library_rules,
    ),
    # lam = 5 / n up to 5,000 rows (the defaults' penalty, where the small classification
    # tables want it) and 5 / n * 5,000 / n above: a tenth of it at 50,000 rows; and with the
    # other seed (compared with SEED_VARIANT, seed for seed)
    **with_seed1000(
        "gamma40_smooth_rows_lam_steep_pairs_auto",
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(500.0)(n), **steep_lam_rule(n)},
    ),
    # LIBRARY_VARIANT with a bag of 8 instead of 16 above 5,000 training rows (issue 52: half the
    # members where each member sees many rows; the same fits up to 5,000 rows), with both seeds
    **with_seed1000(
        "gamma40_smooth_rows_lam_steep_pairs_auto_bags8_above5k",
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(500.0)(n), **steep_lam_rule(n), **above_rows(n_bags=8)(n)},
    ),
    # LIBRARY_VARIANT with mini-batches of 1,024 rows instead of 256 above 5,000 training rows
    # (issue 52: a quarter of the optimiser's steps per epoch where the rows are many), with both
    # seeds
    **with_seed1000(
        "gamma40_smooth_rows_lam_steep_pairs_auto_batch1024_above5k",
        {"gamma": 40, "pairs": "auto"},
        lambda n: {**smooth_rule(500.0)(n), **steep_lam_rule(n), **above_rows(batch_size=1024)(n)},
    ),
}


#: The variant that the library's defaults are (`pilid.estimators.pilid.LIBRARY_DEFAULTS`: its
#: rules of n are ``lam="rows_steep"`` and ``smoothness="rows"``, `pilid.models.row_rules`).
LIBRARY_VARIANT = "gamma40_smooth_rows_lam_steep_pairs_auto"
#: The library's defaults from issue 31 until the steep lam rule (``lam="rows"``): the baseline of
#: every lever measured in that time, whose refits with other seeds (`SEED_VARIANTS`) are the
#: seed's own move.
BASELINE_VARIANT = "gamma40_smooth_rows_lam_rows_pairs_auto"


def load_uci(name: str, data_dir=None):
    """UCI set ``name`` as ``studies.uci_new_splits`` loads it (LightGBM-safe names)."""
    from pilid.data import load_dataset

    return uci_new_splits.plain_names(load_dataset(name, data_dir=data_dir))


def make_variant(variant: str, task: str, seed: int, n_train: int):
    """The estimator of ``variant`` for ``task`` (one thread, ``random_state=seed``): its
    parameters on top of the library defaults the levers were measured against
    (`EARLIER_DEFAULTS`), so that a variant's rows stay what they are now that the library's
    defaults are the variant ``gamma40_smooth_rows_lam_rows_pairs_auto``. A variant that sets a
    lever that was not adopted (`studies._levers.LEVERS`; no parameters of PiLiD) gets the
    class of the studies that takes them (`studies._levers.with_levers`), which computes what
    PiLiD computed with them."""
    from pilid import PiLiDClassifier, PiLiDRegressor
    from studies._levers import LEVERS, with_levers

    params, rule = VARIANTS[variant]
    params = {**EARLIER_DEFAULTS, **params, **(rule(n_train) if rule is not None else {})}
    offset = params.pop(SEED_OFFSET, 0)  # the same split, another seed of the model
    cls = PiLiDClassifier if task == "classification" else PiLiDRegressor
    if any(lever.name in params for lever in LEVERS):  # no parameters of PiLiD
        cls = with_levers(cls)
    return cls(random_state=seed + offset, **params)


def run_one(dataset, seed: int, variant: str) -> dict:
    """Fit ``variant`` on split ``seed`` of ``dataset``; the CSV row."""
    n_train = len(dev_suite.make_split(dataset, seed).train_index)
    estimator = make_variant(variant, dataset.task, seed, n_train)
    scored = dev_suite.fit_and_score(dataset, seed, estimator)
    return {
        "variant": variant,
        "table": dataset.name,
        "split": int(seed),
        "task": dataset.task,
        "metric": dataset.metric,
        **scored,
    }


def on_splits(levers: pd.DataFrame, splits) -> pd.DataFrame:
    """The rows of ``splits``, of the (variant, table) cells that have every one of them (so
    that every mean shown is over the same splits)."""
    part = levers[levers["split"].isin(list(splits))]
    count = part.groupby(["variant", "table"])["split"].transform("nunique")
    return part[count == len(set(splits))].reset_index(drop=True)


#: The variants with a weaker penalty on the MLP, measured against the defaults then
#: (`BASELINE_VARIANT`); the steep rule became the library's.
WEAKER_MLP_PENALTY = (
    "gamma40_smooth_rows_lam_rows0.5_pairs_auto",
    "gamma40_smooth_rows_lam_rows0.05_pairs_auto",
    "gamma40_smooth_rows_lam_rows_pairs_auto_deep_unpenalised",
    "gamma40_smooth_rows_lam_steep_pairs_auto",
    "gamma40_smooth_rows_lam_steep_pairs_auto_seed1000",
)


def baseline_of(variant: str) -> str:
    """The variant that ``variant`` changes one or two things of: ``code`` for the variants
    measured with the code (`CODE`) before one-hot became the default, `BASELINE_VARIANT` for the
    shared MLP's (``deep_ensemble="shared"``), the choice on the first members'
    (``choice_members``) and the weaker penalties on the MLP (`WEAKER_MLP_PENALTY`), ``defaults``
    for the rest (and for ``code`` and ``code_now`` themselves, the one-hot default's own
    lever)."""
    params = VARIANTS[variant][0] if variant in VARIANTS else {}
    shared = variant.startswith(f"{BASELINE_VARIANT}_shared")  # ``_shared_sum``'s rows too
    later = (
        params.get("deep_ensemble") == "shared"
        or "choice_members" in params
        or variant in WEAKER_MLP_PENALTY
    )
    if later or shared:  # measured against the defaults of issue 31
        return BASELINE_VARIANT
    with_code = params.get("deep_categorical") == "code"
    return "code" if with_code and variant not in ("code", "code_now") else "defaults"


def summarise(levers: pd.DataFrame, suite: pd.DataFrame) -> pd.DataFrame:
    """Per variant: tables where its mean beats its baseline's (`baseline_of`) and EBM's, and
    the tables compared.

    Means are over the splits the variant has, each compared model over the same splits; a
    win is strictly better (lower MSE, higher AUC). ``suite`` is ``dev_suite.csv``.
    """
    rows = []
    for variant, part in levers.groupby("variant", sort=False):
        baseline = baseline_of(variant)
        beats = {"baseline": [0, 0], "ebm": [0, 0]}
        for table, cells in part.groupby("table"):
            splits = set(cells["split"])
            mine = cells["value"].mean()
            lower = LOWER_IS_BETTER[cells["metric"].iloc[0]]
            base = levers[
                (levers["variant"] == baseline)
                & (levers["table"] == table)
                & levers["split"].isin(splits)
            ]
            ebm = suite[
                (suite["model"] == "ebm") & (suite["table"] == table) & suite["split"].isin(splits)
            ]
            for name, other in (("baseline", base), ("ebm", ebm)):
                if variant == baseline and name == "baseline":
                    continue  # the defaults against themselves
                if len(other) != len(splits):
                    continue  # not on the same splits
                theirs = other["value"].mean()
                beats[name][0] += bool(mine < theirs if lower else mine > theirs)
                beats[name][1] += 1
        rows.append(
            {
                "variant": variant,
                "baseline": baseline,
                "beats_baseline": beats["baseline"][0],
                "of_baseline": beats["baseline"][1],
                "beats_ebm": beats["ebm"][0],
                "of_ebm": beats["ebm"][1],
                "mean_fit_seconds": part["fit_seconds"].mean(),
            }
        )
    return pd.DataFrame(rows).set_index("variant")


#: `BASELINE_VARIANT` refit with another seed: its move from that variant's rows is the scale a
#: lever's change is read against (`against_the_seed`).
SEED_VARIANT = "gamma40_smooth_rows_lam_rows_pairs_auto_seed1000"
#: Every refit of `BASELINE_VARIANT` with another seed (`SEED_VARIANT` first): seed readings,
#: not levers, so `against_the_seed` lists none of them.
SEED_VARIANTS = (SEED_VARIANT, "gamma40_smooth_rows_lam_rows_pairs_auto_seed2000")


def against_the_seed(
    levers: pd.DataFrame, baseline: str = BASELINE_VARIANT, reseeded_baseline: str = SEED_VARIANT
) -> pd.DataFrame:
    """Per variant, its tables against ``baseline`` (default: the defaults of issue 31,
    `BASELINE_VARIANT`) next to the seed's own move: for each table where the variant,
    ``baseline`` and ``reseeded_baseline`` (``baseline`` refit with the seed + 1000, default
    `SEED_VARIANT`) share splits, the variant's change of the mean over those splits (positive:
    better) and the seed's (the absolute change of ``reseeded_baseline``'s mean from
    ``baseline``'s). A variant fitted with the other seed itself (its `SEED_OFFSET`) is compared
    with ``reseeded_baseline`` instead, seed for seed. Counts ``better`` / ``worse`` and, of
    those, the tables where the change is larger than the seed's own (``better_beyond`` /
    ``worse_beyond``); ``tables`` compared. The two baselines and the refits of
    `BASELINE_VARIANT` with other seeds (`SEED_VARIANTS`) are left out."""
    columns = ["variant", "tables", "better", "worse", "better_beyond", "worse_beyond"]
    cells = levers.pivot_table(index=["table", "split"], columns="variant", values="value")
    if baseline not in cells or reseeded_baseline not in cells:
        return pd.DataFrame(columns=columns).set_index("variant")
    metric = levers.groupby("table")["metric"].first()
    rows = []
    for variant in levers["variant"].unique():
        if variant in (baseline, reseeded_baseline, BASELINE_VARIANT, *SEED_VARIANTS):
            continue
        shared = cells[[variant, baseline, reseeded_baseline]].dropna()
        if shared.empty:
            continue
        means = shared.groupby(level="table").mean()
        sign = np.where(metric[means.index].map(LOWER_IS_BETTER).astype(bool), -1.0, 1.0)
        reseeded = variant in VARIANTS and VARIANTS[variant][0].get(SEED_OFFSET, 0) != 0
        against = reseeded_baseline if reseeded else baseline
        change = (means[variant] - means[against]) * sign
        seed = (means[reseeded_baseline] - means[baseline]).abs()
        rows.append(
            {
                "variant": variant,
                "tables": len(change),
                "better": int((change > 0).sum()),
                "worse": int((change < 0).sum()),
                "better_beyond": int((change > seed).sum()),
                "worse_beyond": int((change < -seed).sum()),
            }
        )
    return pd.DataFrame(rows, columns=columns).set_index("variant")


def per_table(levers: pd.DataFrame, suite: pd.DataFrame) -> pd.DataFrame:
    """Mean metric per table (rows) and variant (columns), with EBM and LightGBM on the same
    splits as the variants (`SCREEN_SPLITS` where every variant has them)."""
    splits = sorted(set(levers["split"]))
    wide = levers.pivot_table(index="table", columns="variant", values="value", aggfunc="mean")
    # VARIANTS' order, then any variant of the CSV that is no longer one (rows of an earlier code)
    wide = wide[[v for v in VARIANTS if v in wide.columns] + [v for v in wide if v not in VARIANTS]]
    peers = suite[suite["split"].isin(splits) & suite["model"].isin(["ebm", "lightgbm"])]
    peers = peers.pivot_table(index="table", columns="model", values="value", aggfunc="mean")
    out = wide.join(peers)
    return out.loc[[t for t in (*SUITE, *uci_new_splits.TABLES) if t in out.index]]


def format_summary(levers: pd.DataFrame, suite: pd.DataFrame) -> str:
    """The lines the script prints: the per-table means and each variant's counts."""
    splits = sorted(set(levers["split"]))
    uci = set(levers["table"]) <= set(uci_new_splits.TABLES)
    full = len(uci_new_splits.SPLITS if uci else SUITE_SPLITS)
    note = "" if len(splits) >= full else f" (reduced: splits {splits}, of {full})"
    if uci:
        note = f" (UCI sets, new splits {splits}; a reduced run: 3 per set, not the paper's 20)"
    lines = [f"mean over splits{note}", per_table(levers, suite).round(4).to_string(), ""]
    summary = summarise(levers, suite)
    for row in summary.itertuples():
        against = (
            f"beats {row.baseline} on {row.beats_baseline} of {row.of_baseline} tables, "
            if row.Index != row.baseline
            else ""
        )
        lines.append(
            f"{row.Index:<18} {against}EBM on {row.beats_ebm} of {row.of_ebm}; mean fit"
            f" {row.mean_fit_seconds:.1f}s"
        )
    seeded = against_the_seed(levers)
    if len(seeded):
        lines += [
            "",
            f"against {BASELINE_VARIANT}, beside the seed's own move ({SEED_VARIANT}):",
        ]
    for row in seeded.itertuples():
        lines.append(
            f"{row.Index:<18} better on {row.better}, worse on {row.worse} of {row.tables} tables;"
            f" by more than the seed moves the table: better on {row.better_beyond}, worse on"
            f" {row.worse_beyond}"
        )
    return "\n".join(lines)


def defaults_change(levers: pd.DataFrame, suite: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Issue 31's change of the defaults, per table: the earlier defaults (the variant
    ``defaults``, `EARLIER_DEFAULTS`) and the library's defaults (``suite``'s
    ``pilid`` rows: ``dev_suite.py`` or ``uci_new_splits.py``) beside EBM and LightGBM, on the
    splits every model has. Returns the frame (by table: ``metric``, ``earlier``, ``library``,
    ``ebm``, ``lightgbm`` means, ``earlier_s``, ``library_s``, ``ebm_s`` mean fit seconds, and
    each one's ``*_beats_ebm``) and, per defaults, `dev_suite.summarise` of the three models
    (``{"earlier": ..., "library": ...}``: wins against EBM, mean ranks)."""
    earlier = levers[levers["variant"] == "defaults"].drop(columns="variant")
    peers = suite[suite["model"] != "pilid"]
    before = pd.concat([peers, earlier.assign(model="pilid")[peers.columns]], ignore_index=True)
    summaries = {"earlier": dev_suite.summarise(before), "library": dev_suite.summarise(suite)}
    old, new = summaries["earlier"]["per_table"], summaries["library"]["per_table"]
    frame = pd.DataFrame(
        {
            "metric": new["metric"],
            "earlier": old["pilid_mean"],
            "library": new["pilid_mean"],
            "ebm": new.get("ebm_mean"),
            "lightgbm": new.get("lightgbm_mean"),
            "earlier_s": old["pilid_seconds"],
            "library_s": new["pilid_seconds"],
            "ebm_s": new.get("ebm_seconds"),
            "earlier_beats_ebm": old["pilid_beats_ebm"],
            "library_beats_ebm": new["pilid_beats_ebm"],
        }
    )
    return frame, summaries


def format_defaults_change(frame: pd.DataFrame, summaries: dict) -> str:
    """`defaults_change` as a Markdown table (the best of the library's defaults, EBM and
    LightGBM in bold per table; a cell a model has not run: --) and one line per defaults."""
    lines = [
        "| table | metric | earlier defaults | library defaults | EBM | LightGBM "
        "| fit s: earlier / library / EBM |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for table, row in frame.iterrows():
        lower = LOWER_IS_BETTER[row["metric"]]
        current = {k: row[k] for k in ("library", "ebm", "lightgbm") if pd.notna(row[k])}
        best = (min if lower else max)(current.values())
        cells = []
        for key in ("earlier", "library", "ebm", "lightgbm"):
            value = row[key]
            text = "--" if pd.isna(value) else f"{value:.4f}"
            cells.append(f"**{text}**" if key in current and value == best else text)
        seconds = " / ".join(
            "--" if pd.isna(row[k]) else f"{row[k]:.1f}"
            for k in ("earlier_s", "library_s", "ebm_s")
        )
        lines.append(f"| {table} | {row['metric'].upper()} | {' | '.join(cells)} | {seconds} |")
    for name, label in (("earlier", "earlier defaults"), ("library", "library defaults")):
        summary = summaries[name]
        rank = summary["mean_rank"]
        others = ", ".join(f"{m} {rank[m]:.2f}" for m in rank.index if m != "pilid")
        lines.append(
            f"{label}: EBM beaten on {summary['wins']} of {summary['compared']} tables; mean rank"
            f" over {summary['ranked']} tables {rank['pilid']:.2f} ({others})"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the missing (variant, table, split) cells, then print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--tables", nargs="+", choices=[*SUITE, *uci_new_splits.TABLES])
    parser.add_argument("--splits", nargs="+", type=int)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--suite", type=Path, help="the peers' CSV (dev_suite.csv)")
    parser.add_argument("--summary-only", action="store_true", help="print the CSV's summary")
    parser.add_argument(
        "--uci",
        action="store_true",
        help="the paper's UCI sets on the splits of studies.uci_new_splits (no choice is "
        "made there: issue 31's goal 3 for a variant); rows in levers_uci.csv",
    )
    parser.add_argument("--data-dir", default=None, help="the UCI files (default: $PILID_DATA_DIR)")
    parser.add_argument(
        "--defaults-change",
        action="store_true",
        help="print the earlier defaults against the library's, EBM and LightGBM per table "
        "(Markdown; with --uci on the UCI sets' new splits) and fit nothing",
    )
    args = parser.parse_args(argv)
    uci = args.uci
    args.tables = args.tables or list(uci_new_splits.TABLES if uci else SUITE)
    args.splits = args.splits or list(uci_new_splits.SPLITS if uci else SCREEN_SPLITS)
    args.out = args.out or (OUT_UCI if uci else OUT)
    args.suite = args.suite or (uci_new_splits.OUT if uci else dev_suite.OUT)
    wrong = sorted(set(args.tables) - set(uci_new_splits.TABLES if uci else SUITE))
    if wrong and uci:
        parser.error(
            f"--tables {' '.join(wrong)}: not a UCI set; with --uci use "
            f"{' '.join(uci_new_splits.TABLES)}, or drop --uci for the development suite"
        )
    if wrong:
        parser.error(f"--tables {' '.join(wrong)}: a UCI set of the paper; add --uci")
    if uci:
        uci_new_splits.refuse_paper_seeds(parser, args.splits)
    fits = not (args.summary_only or args.defaults_change)
    with dev_suite.sole_writer(args.out, "lever_study", fits=fits):
        return _run(args)  # one run at a time fits into --out


def _run(args) -> int:
    """`main`'s work: the missing cells fitted into ``args.out``, then the summary."""
    uci = args.uci
    levers = pd.read_csv(args.out) if args.out.is_file() else pd.DataFrame(columns=COLUMNS)
    levers = levers.reindex(columns=COLUMNS)  # deep_share: NaN in rows from before it was kept
    if args.defaults_change:
        if uci:
            print(f"UCI sets, new splits {args.splits}; a reduced run: 3 per set, not 20")
        suite = dev_suite.as_fitted_before_auto(dev_suite.read_results(args.suite))
        print(format_defaults_change(*defaults_change(levers, suite)))
        return 0
    todo = (
        []
        if args.summary_only
        else dev_suite.missing_cells(  # table by table: an
            levers,
            args.variants,
            args.tables,
            args.splits,
            by="table",  # interrupted run has
        )
    )  # every variant on the tables it reached
    datasets: dict = {}
    for variant, table, seed in tqdm(todo, desc="levers", unit="fit", file=sys.stderr):
        if table not in datasets:
            datasets = {table: load_uci(table, args.data_dir) if uci else load_suite_table(table)}
        new = pd.DataFrame([run_one(datasets[table], seed, variant)], columns=COLUMNS)
        levers = new if levers.empty else pd.concat([levers, new], ignore_index=True)
        order = {name: i for i, name in enumerate(VARIANTS)}
        levers = levers.sort_values(
            ["variant", "table", "split"],
            key=lambda c: c.map(order) if c.name == "variant" else c,
            kind="stable",
        )
        dev_suite.write_frame(args.out, levers[COLUMNS])
    if levers.empty:
        print(f"no results in {args.out}")
        return 0
    suite = dev_suite.as_fitted_before_auto(dev_suite.read_results(args.suite))
    print(format_summary(on_splits(levers, args.splits), suite))
    return 0


if __name__ == "__main__":
    sys.exit(main())
