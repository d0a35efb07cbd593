"""Glass mode and EBM's pair budget, screened on a fixed subset of the suite (issue 64, 1 and 3).

A REDUCED screening: the tables `SCREEN_TABLES` (6 of the development suite's 15), splits 0 and 1
(`SCREEN_SPLITS`, 2 of `studies.dev_suite`'s 5) and one model seed (``random_state`` = the split
seed, offset 0: 1 of its 3), one thread. Each variant (`VARIANTS`) is ``PiLiDRegressor`` /
``PiLiDClassifier`` with the library defaults of the screening and a few changes: the deep
part's input of the defaults then (``dev_suite.CANDIDATE_BASE``, before ``deep_input="auto"``
became the default) under every variant that does not set it:

- ``defaults``: the library defaults then (its rows are ``dev_suite.csv``'s
  ``dev_suite.COLUMNS_DEFAULTS`` rows at offset 0, read as ``pilid``'s:
  ``dev_suite.as_fitted_before_auto``);
- ``glass``: ``hidden_layers=None``, the additive part alone ("glass mode"), ``pairs`` at the
  default (``"auto"``);
- ``glass_ebm_pairs``: glass mode with EBM 0.7.8's pair budget, ``pairs=k`` (exactly FAST's first
  k pairs, no choice): k = 3 m for classification and 5 m for regression, m the columns of the
  table's X, capped at m (m - 1) / 2, the pairs there are (`pair_budget`);
- ``glass_ebm_pairs_steps``: the same, and every numeric column with at most `STEP_LEVELS`
  distinct values in the split's training rows cast to a pandas category (`StepsCast`: one level
  per value, a step per value as EBM bins each distinct value; decided on the training rows
  alone, a test value not among them an unseen level);
- ``hybrid_ebm_pairs``: the library defaults (with the MLP) and EBM's pair budget;
- ``hybrid_ebm_pairs_steps``: the same with the steps cast;
- ``glass_pairs20``: glass mode with FAST's first 20 pairs (``pairs=20``, no choice), between
  the default's 0-or-10 choice and EBM's budget;
- ``glass_gamma100``: glass mode with 100 pieces per numeric feature (``gamma=100``; the
  roughness penalty at its default), closer to EBM's many bins;
- ``glass_patience30``: glass mode trained longer (``patience=30``, ``epochs=300``);
- ``glass_ebm_pairs_lr0.02``: glass mode with EBM's pair budget and a 4x larger step
  (``lr=0.02``): pair terms start at 0 and may be fitted too slowly at the default step;
- ``glass_ebm_pairs_smooth_auto``: glass mode with EBM's pair budget and the roughness penalty
  chosen by inner validation (``smoothness="auto"``) instead of the rule of the rows;
- ``hybrid_smooth_auto``, ``hybrid_ebm_pairs_smooth_auto``: the library defaults (with the MLP)
  and ``smoothness="auto"``, without and with EBM's pair budget;
- ``hybrid_smooth_auto_choose4``: ``hybrid_smooth_auto`` choosing among its four candidates
  (pieces and penalty x no or ten pairs) on each candidate's first 4 bag members, then training
  only the chosen one's other 12 (the studies' lever ``choice_members=4``,
  `studies._levers.estimators`): 28 members trained instead of 64, fewer than the defaults' 32.
- ``hybrid_lam_choice0.05``: the library defaults, their ``pairs="auto"`` candidates (no or ten
  pairs) trained twice, at the rule's weight of Eq. 11's penalty (``lam_``) and at 0.05 times it,
  the better of the four kept by the same inner validation (the studies' lever
  ``lam_choice=0.05``): the lever study's two splits found the penalty's best weight far apart
  from table to table, so the data chooses it;
- ``hybrid_lam_choice0.05_choose4``: the same on each candidate's first 4 members, then only
  the chosen one's other 12 (``choice_members=4``);
- ``glass_lam_choice0.05``, ``glass_ebm_pairs_lam_choice0.05``: glass mode (with the default
  pairs, and with EBM's pair budget) choosing the penalty's weight the same way (Eq. 11's penalty
  then weighs on the shapes and the pair terms alone);
- ``hybrid_smooth_auto_lam_choice0.05_choose4``: both choices at once, the roughness penalty's
  (``smoothness="auto"``) and the penalty weight's (``lam_choice=0.05``): eight candidates, each
  judged on its first 4 members, then the chosen one's other 12 (44 members trained);
- ``hybrid_additive_first``: the library defaults trained in two phases, the additive part
  alone first (the MLP held at its zero output), then jointly from there, the joint weights
  kept only where they beat the first phase's validation loss (the studies' lever
  ``schedule="additive_first"``);
- ``hybrid_dropout0.1``: the library defaults with dropout 0.1 after each of the MLP's hidden
  layers, as TabM trains (``deep_dropout=0.1``);
- ``hybrid_embed16``: the library defaults, the MLP reading TabM's piecewise-linear embeddings
  (16 numbers per feature) of Phi instead of the standardised columns (``deep_embedding=16``,
  `studies._levers.deep_embedding`);
- ``glass_from_hybrid``, ``glass_from_hybrid_ebm_pairs``: a glass mode trained as the hybrid
  is: the library defaults (without and with EBM's pair budget) train with their MLP, which is
  then dropped, its main effects kept in the shapes (the studies' lever ``keep="glass"``,
  `studies._levers.glass_part`): the model is its table, the MLP served only in training;
- ``hybrid_clip3``: the library defaults, the MLP's standardised inputs read through RealMLP's
  smooth clipping, x / sqrt(1 + (x / 3)^2) (``deep_clip=3``): heavy tails held near +-3;
- ``glass_finish``: ``glass_from_hybrid`` with a last phase in which the MLP's output layer is
  held at 0 and the shapes and the pair terms train on alone from the hybrid's (``keep=
  "glass_finish"``): they take up what they can of what the MLP held. It lost on the screening
  subset, and the engine's hook it needed (a phase that zeroes parameters on entry,
  ``Phase.zeroed``) was taken out again: its rows stay, and `RETIRED` says where its code is;
- ``hybrid_tabm_256x3``: TabM's deep part on this CPU's budget: the embeddings, dropout 0.1 and
  three hidden layers of 256 (TabM's are 512 wide), each of the bag's 16 members its own MLP;
- ``hybrid_deep_free``, ``hybrid_deep_free_dropout0.1``, ``hybrid_deep_free_embed16``: Eq. 11's
  penalty on the additive part only (``reg_groups="additive"``, a parameter of the library), the
  deep part (the MLP and the pair terms, which `pilid.nn.pairs.DeepWithPairs` holds in it) free
  of it as TabM's MLP is of all but a small weight decay: alone, with dropout 0.1, and with
  dropout and the embeddings; ``hybrid_deep_free_embed16_nodrop``: the embeddings free of it
  without dropout (whose masks cost CPU time);
- ``glass_pairs_free``, ``glass_ebm_pairs_free``: the glass mode (without and with EBM's pair
  budget) with its pair terms free of Eq. 11's penalty (``reg_groups="additive"``: the pair
  terms are held in the deep part), the shapes under it;
- ``glass_lam0``, ``glass_lam0_ebm_pairs``: the glass mode (with the default pairs, and with EBM's
  pair budget) free of Eq. 11's penalty altogether (``lam=0``): the shapes held by the roughness
  penalty and early stopping alone, as EBM's bins are by its small steps and early stopping (the
  glass mode trained alone fits its training rows less well than the hybrid's shapes do, under
  a weight of the penalty chosen for the MLP);
- ``glass_lam_choice1e-6``: the glass mode choosing by inner validation between the rule's weight
  of Eq. 11's penalty and practically none (a millionth of it; the lever ``lam_choice`` takes a
  factor above 0): ``glass_lam0`` gained on some suite tables and lost on others;
- ``glass_pairs_choice_smooth_auto``: the glass mode choosing by inner validation among 0 pair
  terms, the default's 10 and EBM's pair budget (``pairs=[0, 10, k]``, k as for
  ``glass_ebm_pairs``), each with and without the roughness penalty (``smoothness="auto"``):
  six candidates. EBM's budget won on mlc_churn and hmda and lost on attrition, the smoothness
  choice won on computers: the data decide each, on the training part alone;
- ``glass_pairs_choice_smooth_auto_lam0``: the same free of Eq. 11's penalty (``lam=0``), which
  won on attrition and mlc_churn at the default pairs;
- ``glass_mains``, ``glass_mains_smooth0``, ``glass_smooth0``: where the glass mode's gap to EBM
  lies: its shapes alone (``pairs=0``), with and without the roughness penalty
  (``smoothness=0``: a sharp threshold costs nothing), and the glass mode with its default pairs
  without the penalty;
- ``glass_choose4``: the glass mode's choice of its pairs (``pairs="auto"``: 0 or 10) on each
  candidate's first 4 members, then only the chosen one's other 12 (the lever
  ``choice_members=4``, as ``deep_input="auto"`` chooses): the glass mode's fit for less, where
  it is slower than EBM's;
- ``hybrid_deep_free_heads4_bags4``, ``hybrid_deep_free_heads16_bags1``: the deep part free of
  the penalty, as k MLP heads beside one additive part trained on the mean of the heads' losses
  as TabM trains its members (``deep_heads=k``, `studies._levers.deep_heads`): 4 bag members of
  4 heads each, and one model of 16 heads (``n_bags=1``), against the defaults' 16 members with
  an additive part and an MLP each;
- ``hybrid_deep_choice16_choose4``: the defaults' ``pairs="auto"`` candidates twice, with PiLiD's
  deep part and with the deep part free of the penalty reading the embeddings (d=16, no
  dropout), chosen by validation loss on each candidate's first 4 members, then only the chosen
  one's other 12 (the library's ``deep_input="auto"``; fitted as the levers ``deep_choice=16``,
  ``choice_members=4``, which computed the same fits before the library took them): the
  embeddings where they help, PiLiD's deep part where they do not;
- ``hybrid_deep_choice16_choose2``: the same choice on each candidate's first 2 members (the
  lever ``choice_members=2`` beside ``deep_input="auto"``), then the chosen one's other 14: the
  embedded members that train before the choice halved, for the fit's cost where the
  embeddings lose.

A variant whose parameters name a lever of `studies._levers.estimators.LEVERS` is fitted by
``PiLiDLeverRegressor`` / ``PiLiDLeverClassifier``, which compute PiLiD's fits at the levers'
neutral values.

Every fit is `studies.dev_suite.fit_and_score` on `pilid.data.suite.load_suite_table`'s table (the
split, the test rows, the metric, the deep part's share); the CSV adds ``n_features`` (the columns
the fitted model took), ``n_pairs`` (its pair terms, ``pairs_``: the chosen candidate's under
``"auto"`` or a list), ``pairs_asked`` (the int given, or -1 for a choice: ``"auto"`` or a
list) and ``n_steps`` (the columns cast). Results, one row per (variant, table, split):
``results/studies/hybrid_screen.csv``, resumable (cells there are skipped), rewritten whole after
every fit (`dev_suite.write_frame`, `pilid.atomic.replacing`); the cells run variant by variant
(the variants' order as given), so an interrupted run has whole variants.

The summary (`format_summary`) reads the baseline ``defaults`` per cell from this CSV where it has
the cell, else from ``dev_suite.csv``'s ``pilid`` rows (offset 0, the same fits), and says how many
came from each; EBM's rows from ``dev_suite.csv`` (model ``ebm``, offset 0; computers has none).
Fit seconds were measured beside another job on a 2-core machine: a rough guide.

    OMP_NUM_THREADS=1 nice -n 10 python -m studies hybrid_screen --variants glass glass_ebm_pairs \
        glass_ebm_pairs_steps hybrid_ebm_pairs hybrid_ebm_pairs_steps
    python -m studies hybrid_screen --summary-only               # print the CSV's summary
    python -m studies hybrid_screen --summary-only --write-log   # and write hybrid_screen.log
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from tqdm import tqdm

from pilid.atomic import replacing
from pilid.data.suite import SUITE, load_suite_table
from pilid.models.pair_choice import AUTO_PAIRS
from pilid.tasks import LOWER_IS_BETTER
from pilid.train.version import ENGINE_VERSION
from studies import dev_suite

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "results" / "studies" / "hybrid_screen.csv"
LOG = REPO / "results" / "studies" / "hybrid_screen.log"
#: The library's defaults on these cells at engine 2 (commit 5090c7a, ``screen_engine.log``):
#: the check of ``defaults`` beside ``dev_suite.csv``'s older rows.
ENGINE_SCREEN = REPO / "results" / "studies" / "screen_engine2.csv"
SCREEN_TABLES = ("hmda", "attrition", "wage", "credit_data", "computers", "mlc_churn")
SCREEN_SPLITS = (0, 1)
KEY = ["variant", "table", "split"]
COLUMNS = [
    *KEY,
    "task",
    "metric",
    "value",
    "fit_seconds",
    "n_train",
    "n_test",
    "deep_share",
    "n_features",
    "n_pairs",
    "pairs_asked",
    "n_steps",
    "engine",
]
#: The engine of the rows fitted before the CSV had an ``engine`` column (all of them after
#: engine 2 came, on 2026-12-02).
ENGINE_BEFORE_COLUMN = "2"
#: A numeric column with at most this many distinct training values becomes a category.
STEP_LEVELS = 12
#: EBM 0.7.8's default pair budget per column of X: ``interactions=3x`` (classification) and
#: ``5x`` (regression).
EBM_PAIRS_PER_COLUMN = {"classification": 3, "regression": 5}

#: The second field of a variant that asks for the choice among 0 pair terms, the default's
#: `pilid.models.pair_choice.AUTO_PAIRS` and EBM's pair budget (`pair_budget`).
PAIRS_CHOICE = "choice"
#: Variant -> (constructor parameters on top of the library defaults, EBM's pair budget: True for
#: exactly that many, `PAIRS_CHOICE` for the choice among it, 0 and the default's; steps).
VARIANTS = {
    "defaults": ({}, False, False),
    "glass": ({"hidden_layers": None}, False, False),
    "glass_ebm_pairs": ({"hidden_layers": None}, True, False),
    "glass_ebm_pairs_steps": ({"hidden_layers": None}, True, True),
    "hybrid_ebm_pairs": ({}, True, False),
    "hybrid_ebm_pairs_steps": ({}, True, True),
    "glass_pairs20": ({"hidden_layers": None, "pairs": 20}, False, False),
    "glass_gamma100": ({"hidden_layers": None, "gamma": 100}, False, False),
    "glass_patience30": ({"hidden_layers": None, "patience": 30, "epochs": 300}, False, False),
    "glass_ebm_pairs_lr0.02": ({"hidden_layers": None, "lr": 0.02}, True, False),
    "glass_ebm_pairs_smooth_auto": ({"hidden_layers": None, "smoothness": "auto"}, True, False),
    "hybrid_smooth_auto": ({"smoothness": "auto"}, False, False),
    "hybrid_ebm_pairs_smooth_auto": ({"smoothness": "auto"}, True, False),
    "hybrid_smooth_auto_choose4": ({"smoothness": "auto", "choice_members": 4}, False, False),
    "hybrid_lam_choice0.05": ({"lam_choice": 0.05}, False, False),
    "hybrid_lam_choice0.05_choose4": ({"lam_choice": 0.05, "choice_members": 4}, False, False),
    "glass_lam_choice0.05": ({"hidden_layers": None, "lam_choice": 0.05}, False, False),
    "glass_ebm_pairs_lam_choice0.05": ({"hidden_layers": None, "lam_choice": 0.05}, True, False),
    "hybrid_smooth_auto_lam_choice0.05_choose4": (
        {"smoothness": "auto", "lam_choice": 0.05, "choice_members": 4},
        False,
        False,
    ),
    "hybrid_additive_first": ({"schedule": "additive_first"}, False, False),
    "hybrid_dropout0.1": ({"deep_dropout": 0.1}, False, False),
    "hybrid_embed16": ({"deep_embedding": 16}, False, False),
    "hybrid_clip3": ({"deep_clip": 3.0}, False, False),
    "glass_from_hybrid": ({"keep": "glass"}, False, False),
    "glass_from_hybrid_ebm_pairs": ({"keep": "glass"}, True, False),
    "glass_finish": ({"keep": "glass_finish"}, False, False),
    "hybrid_tabm_256x3": (
        {"deep_embedding": 16, "deep_dropout": 0.1, "hidden_layers": (256, 256, 256)},
        False,
        False,
    ),
    "hybrid_deep_free": ({"reg_groups": "additive"}, False, False),
    "hybrid_deep_free_dropout0.1": ({"reg_groups": "additive", "deep_dropout": 0.1}, False, False),
    "hybrid_deep_free_embed16": (
        {"reg_groups": "additive", "deep_embedding": 16, "deep_dropout": 0.1},
        False,
        False,
    ),
    "hybrid_deep_free_embed16_nodrop": (
        {"reg_groups": "additive", "deep_embedding": 16},
        False,
        False,
    ),
    "glass_pairs_free": ({"hidden_layers": None, "reg_groups": "additive"}, False, False),
    "glass_ebm_pairs_free": ({"hidden_layers": None, "reg_groups": "additive"}, True, False),
    "glass_lam0": ({"hidden_layers": None, "lam": 0.0}, False, False),
    "glass_lam0_ebm_pairs": ({"hidden_layers": None, "lam": 0.0}, True, False),
    "glass_lam_choice1e-6": ({"hidden_layers": None, "lam_choice": 1e-6}, False, False),
    "glass_pairs_choice_smooth_auto": (
        {"hidden_layers": None, "smoothness": "auto"},
        PAIRS_CHOICE,
        False,
    ),
    "glass_pairs_choice_smooth_auto_lam0": (
        {"hidden_layers": None, "smoothness": "auto", "lam": 0.0},
        PAIRS_CHOICE,
        False,
    ),
    "glass_mains": ({"hidden_layers": None, "pairs": 0}, False, False),
    "glass_mains_smooth0": ({"hidden_layers": None, "pairs": 0, "smoothness": 0.0}, False, False),
    "glass_smooth0": ({"hidden_layers": None, "smoothness": 0.0}, False, False),
    "glass_choose4": ({"hidden_layers": None, "choice_members": 4}, False, False),
    "hybrid_deep_free_heads4_bags4": (
        {"reg_groups": "additive", "deep_heads": 4, "n_bags": 4},
        False,
        False,
    ),
    "hybrid_deep_free_heads16_bags1": (
        {"reg_groups": "additive", "deep_heads": 16, "n_bags": 1},
        False,
        False,
    ),
    "hybrid_deep_choice16_choose4": ({"deep_input": "auto", "deep_min_rows": 0}, False, False),
    "hybrid_deep_choice16_choose2": (
        {"deep_input": "auto", "deep_min_rows": 0, "choice_members": 2},
        False,
        False,
    ),
}
#: Variants measured whose code was taken out again after they lost: the commit that holds it.
RETIRED = {"glass_finish": "3a05d08"}
#: The commands of the screening (the variants, then ``defaults`` on every cell), written at the
#: top of the log.
RUN_COMMANDS = (
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass glass_ebm_pairs glass_ebm_pairs_steps hybrid_ebm_pairs "
    "hybrid_ebm_pairs_steps > /tmp/hybrid_screen.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nice -n 10 python -m studies hybrid_screen "
    "--variants defaults",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_pairs20 glass_gamma100 glass_patience30 > /tmp/hybrid_screen2.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_ebm_pairs_lr0.02 glass_ebm_pairs_smooth_auto "
    "> /tmp/hybrid_screen3.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_smooth_auto hybrid_ebm_pairs_smooth_auto > /tmp/hybrid_screen4.out 2>&1 &",
    "then, splits 2-4 (no part in the screening) to confirm hybrid_smooth_auto:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants defaults hybrid_smooth_auto --splits 2 3 4 > /tmp/hybrid_confirm.out 2>&1 &",
    "then the two large tables where PiLiD trails the black boxes, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants defaults hybrid_smooth_auto --tables diamonds hotel_rates "
    "> /tmp/hybrid_big.out 2>&1 &",
    "then the other suite tables, table by table (splits 0 and 1): for t in chile default caravan "
    "ames slid cps1988 deliveries; do OMP_NUM_THREADS=1 nice -n 10 python -m studies "
    "hybrid_screen --variants defaults hybrid_smooth_auto --tables $t; done",
    "then the cheaper choice of hybrid_smooth_auto on all 15 tables, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_smooth_auto_choose4 --tables hmda attrition wage credit_data computers "
    "mlc_churn diamonds hotel_rates chile default caravan ames slid cps1988 deliveries "
    "> /tmp/hybrid_choose4.out 2>&1 &",
    "then the penalty's weight chosen by inner validation, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_lam_choice0.05 hybrid_lam_choice0.05_choose4 > /tmp/hybrid_lam.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_lam_choice0.05 glass_ebm_pairs_lam_choice0.05 > /tmp/glass_lam.out 2>&1 &",
    "then the cheaper choice of the penalty's weight on the other 9 suite tables, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_lam_choice0.05_choose4 --tables diamonds hotel_rates chile default "
    "caravan ames slid cps1988 deliveries > /tmp/hybrid_lam_all.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_smooth_auto_lam_choice0.05_choose4 > /tmp/hybrid_both.out 2>&1 &",
    "and both choices on the other 9 suite tables, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_smooth_auto_lam_choice0.05_choose4 --tables diamonds hotel_rates chile "
    "default caravan ames slid cps1988 deliveries > /tmp/hybrid_both_all.out 2>&1 &",
    "then the deep part built as TabM's and the schedule, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_additive_first hybrid_dropout0.1 hybrid_embed16 hybrid_tabm_256x3 "
    "> /tmp/hybrid_deep.out 2>&1 &",
    "then the glass part of the trained hybrid, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_from_hybrid glass_from_hybrid_ebm_pairs > /tmp/glass_hybrid.out 2>&1 &",
    "and the glass part of the trained hybrid on the other 9 suite tables, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_from_hybrid --tables diamonds hotel_rates chile default caravan ames "
    "slid cps1988 deliveries > /tmp/glass_hybrid_all.out 2>&1 &",
    "then RealMLP's smooth clipping of the MLP's inputs, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_clip3 > /tmp/hybrid_clip.out 2>&1 &",
    "then the glass part of the trained hybrid with a last phase without the MLP, all 15 tables "
    "(stopped after the six screening tables: it lost there):",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 15 python -m studies hybrid_screen "
    "--variants glass_finish --tables hmda attrition wage credit_data computers mlc_churn "
    "chile default caravan ames slid cps1988 deliveries diamonds hotel_rates "
    "> /tmp/glass_finish.out 2>&1 &",
    "then the deep part (the MLP and the pair terms) out of Eq. 11's penalty (alone, with "
    "dropout, with the embeddings), on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free hybrid_deep_free_dropout0.1 hybrid_deep_free_embed16 "
    "> /tmp/hybrid_free.out 2>&1 &",
    "then the embeddings free of the penalty on the two large tables where PiLiD trails the "
    "black boxes, and the heads on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free_embed16 --tables diamonds hotel_rates > /tmp/free_big.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free_heads4_bags4 hybrid_deep_free_heads16_bags1 "
    "> /tmp/free_heads.out 2>&1 &",
    "then the embeddings free of the penalty without dropout, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free_embed16_nodrop > /tmp/free_nodrop.out 2>&1 &",
    "and the embeddings free of the penalty on the other suite tables, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free_embed16 --tables chile default caravan ames slid cps1988 "
    "deliveries > /tmp/free_all.out 2>&1 &",
    "then, splits 2-4 (no part in the screening) to confirm it on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free_embed16 --splits 2 3 4 > /tmp/free_confirm.out 2>&1 &",
    "and the deep part free of the penalty alone on the two large tables, splits 0 and 1:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_free --tables diamonds hotel_rates > /tmp/free_alone_big.out 2>&1 &",
    "then the glass mode's pair terms free of the penalty, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_pairs_free glass_ebm_pairs_free > /tmp/glass_free.out 2>&1 &",
    "then the choice by validation between PiLiD's deep part and the free embeddings, on the "
    "screening subset, then on the other suite tables (the two large ones first):",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_choice16_choose4 > /tmp/deep_choice.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_choice16_choose4 --tables diamonds hotel_rates chile default "
    "caravan ames slid cps1988 deliveries > /tmp/deep_choice_big.out 2>&1 &",
    "then the same choice on the candidates' first 2 members, on every suite table, the widest "
    "(where the embedded members cost most) first:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants hybrid_deep_choice16_choose2 --tables caravan deliveries ames attrition "
    "mlc_churn chile computers hotel_rates diamonds credit_data hmda wage default slid cps1988 "
    "> /tmp/deep_choose2.out 2>&1 &",
    "then the glass mode free of Eq. 11's penalty, and its choice of the weight, on the "
    "screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_lam0 glass_lam0_ebm_pairs > /tmp/glass_lam0.out 2>&1 &",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_lam_choice1e-6 > /tmp/glass_lam_choice.out 2>&1 &",
    "then the glass mode's choice among 0, 10 and EBM's pair terms, with and without the "
    "roughness penalty (and free of Eq. 11's penalty), on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_pairs_choice_smooth_auto glass_pairs_choice_smooth_auto_lam0 "
    "> /tmp/glass_pairs_choice.out 2>&1 &",
    "then the glass mode's shapes alone and the roughness penalty, on the screening subset:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_mains glass_mains_smooth0 glass_smooth0 > /tmp/glass_mains.out 2>&1 &",
    "then the glass mode's pair choice on its candidates' first 4 members, on the screening "
    "subset and the two tables where the glass mode fits no faster than EBM:",
    "cd /work/main && OMP_NUM_THREADS=1 nohup nice -n 10 python -m studies hybrid_screen "
    "--variants glass_choose4 --tables hmda attrition wage credit_data computers mlc_churn "
    "cps1988 default > /tmp/glass_choose4.out 2>&1 &",
    "and the glass mode at the defaults on those two tables, to compare:",
    "cd /work/main && OMP_NUM_THREADS=1 nice -n 10 python -m studies hybrid_screen "
    "--variants glass --tables cps1988 default",
)
SUMMARY_COMMAND = "python -m studies hybrid_screen --summary-only --write-log"


def pair_budget(task: str, m: int) -> int:
    """EBM 0.7.8's pair budget for ``m`` columns (`EBM_PAIRS_PER_COLUMN` x m), capped at the
    m (m - 1) / 2 pairs there are."""
    return int(min(EBM_PAIRS_PER_COLUMN[task] * m, m * (m - 1) // 2))


def step_columns(X: pd.DataFrame, max_levels: int = STEP_LEVELS) -> dict:
    """The numeric (non-category) columns of ``X`` with at most ``max_levels`` distinct values,
    each with its sorted values (NaN left out): ``{column: [values]}``."""
    found = {}
    for name in X.columns:
        col = X[name]
        if isinstance(col.dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(col):
            continue
        if pd.api.types.is_bool_dtype(col):
            continue
        values = np.sort(col.dropna().unique())
        if len(values) <= max_levels:
            found[name] = list(values)
    return found


def cast_steps(X: pd.DataFrame, levels: dict) -> pd.DataFrame:
    """``X`` with each column of ``levels`` a pandas category whose categories are its training
    values (``levels[column]``) followed by any other value the rows hold, so that PiLiD sees a
    value not seen in fit as an unseen level (its feature's average contribution, 0)."""
    if not levels:
        return X
    X = X.copy()
    for name, seen in levels.items():
        extra = sorted(set(X[name].dropna().unique()) - set(seen))
        X[name] = pd.Categorical(X[name], categories=[*seen, *extra])
    return X


class StepsCast(BaseEstimator):
    """``estimator`` fitted on X with the numeric columns of at most ``max_levels`` distinct
    training values as categories (`step_columns` on the rows ``fit`` gets, `cast_steps`), and
    the same columns cast the same way wherever it predicts (``predict``, ``predict_proba``,
    ``decision_function``, ``decompose``). ``estimator_`` is the fitted estimator,
    ``step_levels_`` the cast columns and their training values."""

    def __init__(self, estimator, max_levels: int = STEP_LEVELS):
        self.estimator = estimator
        self.max_levels = max_levels

    def fit(self, X, y, **fit_params):
        """Decide the columns on these (training) rows, cast them and fit a clone."""
        self.step_levels_ = step_columns(X, self.max_levels)
        self.estimator_ = clone(self.estimator).fit(cast_steps(X, self.step_levels_), y)
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X):
        """The fitted estimator's ``predict`` on the cast rows."""
        return self.estimator_.predict(cast_steps(X, self.step_levels_))

    def predict_proba(self, X):
        """The fitted estimator's ``predict_proba`` on the cast rows."""
        return self.estimator_.predict_proba(cast_steps(X, self.step_levels_))

    def decision_function(self, X):
        """The fitted estimator's ``decision_function`` on the cast rows."""
        return self.estimator_.decision_function(cast_steps(X, self.step_levels_))

    def decompose(self, X):
        """The fitted estimator's ``decompose`` on the cast rows (`dev_suite.deep_share`)."""
        return self.estimator_.decompose(cast_steps(X, self.step_levels_))


def make_variant(variant: str, task: str, seed: int, m: int):
    """The estimator of ``variant`` for ``task`` on a table of ``m`` columns, ``random_state`` =
    ``seed``, and the ``pairs`` asked (-1: a choice, the library's ``"auto"`` or a list)."""
    from pilid import PiLiDClassifier, PiLiDRegressor
    from studies._levers.estimators import LEVERS, PiLiDLeverClassifier, PiLiDLeverRegressor

    if variant in RETIRED:
        raise SystemExit(
            f"hybrid_screen: {variant} was measured and its code taken out again (its rows stay "
            f"in the CSV); to refit it, check out commit {RETIRED[variant]} and run it there"
        )
    params, ebm_pairs, steps = VARIANTS[variant]
    params = {**dev_suite.CANDIDATE_BASE, **params}  # the defaults the variants were screened on
    if ebm_pairs == PAIRS_CHOICE:
        params["pairs"] = sorted({0, min(AUTO_PAIRS, m * (m - 1) // 2), pair_budget(task, m)})
    elif ebm_pairs:
        params["pairs"] = pair_budget(task, m)
    if set(params) & {lever.name for lever in LEVERS}:  # a lever of the studies
        cls = PiLiDLeverClassifier if task == "classification" else PiLiDLeverRegressor
    else:
        cls = PiLiDClassifier if task == "classification" else PiLiDRegressor
    estimator = cls(random_state=seed, **params)
    asked = params.get("pairs", -1)
    return (StepsCast(estimator) if steps else estimator), (
        -1 if isinstance(asked, list) else int(asked)
    )


def run_one(dataset, seed: int, variant: str) -> dict:
    """Fit ``variant`` on split ``seed`` of ``dataset`` (`dev_suite.fit_and_score`); the CSV
    row."""
    estimator, asked = make_variant(variant, dataset.task, seed, dataset.X.shape[1])
    scored = dev_suite.fit_and_score(dataset, seed, estimator)
    fitted = getattr(estimator, "estimator_", estimator)
    return {
        "variant": variant,
        "table": dataset.name,
        "split": int(seed),
        "task": dataset.task,
        "metric": dataset.metric,
        **scored,
        "n_features": int(fitted.n_features_in_),
        "n_pairs": len(getattr(fitted, "pairs_", [])),
        "pairs_asked": asked,
        "n_steps": len(getattr(estimator, "step_levels_", {})),
        "engine": ENGINE_VERSION,
    }


def in_order(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` in `VARIANTS`' order, then `SCREEN_TABLES`' and the splits'."""
    ranks = {
        "variant": {name: i for i, name in enumerate(VARIANTS)},
        "table": {name: i for i, name in enumerate(SCREEN_TABLES)},
    }
    return rows.sort_values(
        KEY, key=lambda c: c.map(ranks[c.name]) if c.name in ranks else c, kind="stable"
    )


def complete(rows: pd.DataFrame, splits) -> pd.DataFrame:
    """The rows of ``splits`` of the (variant, table) cells that have every one of them."""
    part = rows[rows["split"].isin(list(splits))]
    count = part.groupby(["variant", "table"])["split"].transform("nunique")
    return part[count == len(set(splits))].reset_index(drop=True)


def baseline(rows: pd.DataFrame, suite: pd.DataFrame) -> pd.DataFrame:
    """``defaults`` per (table, split): this CSV's row where it has one, else ``dev_suite.csv``'s
    ``pilid`` row (offset 0); columns ``value``, ``fit_seconds``, ``source``."""
    mine = rows[rows["variant"] == "defaults"].set_index(["table", "split"])
    theirs = suite[suite["model"] == "pilid"].set_index(["table", "split"])
    out = theirs[["value", "fit_seconds"]].assign(source="dev_suite.csv")
    out.loc[mine.index, ["value", "fit_seconds"]] = mine[["value", "fit_seconds"]].to_numpy()
    out.loc[mine.index, "source"] = "hybrid_screen.csv"
    return out


def per_table(rows: pd.DataFrame, suite: pd.DataFrame) -> pd.DataFrame:
    """Per (variant, table) over the splits it has: its mean, the paired differences against
    ``defaults`` and EBM on the same cells (positive: the variant better; NaN where the other has
    not every cell), the mean fit seconds of both, and the mean pair terms."""
    base = baseline(rows, suite)
    ebm = suite[suite["model"] == "ebm"].set_index(["table", "split"])
    out = []
    for (variant, table), cells in rows.groupby(["variant", "table"], sort=False):
        keys = list(zip(cells["table"], cells["split"]))
        sign = -1.0 if LOWER_IS_BETTER[cells["metric"].iloc[0]] else 1.0
        value = cells["value"].to_numpy()
        row = {
            "variant": variant,
            "table": table,
            "metric": cells["metric"].iloc[0],
            "splits": len(cells),
            "mean": value.mean(),
        }
        for name, other in (("defaults", base), ("ebm", ebm)):
            there = [k in other.index for k in keys]
            if all(there):
                theirs = other.loc[keys]
                row[f"vs_{name}"] = float(np.mean(sign * (value - theirs["value"].to_numpy())))
                row[f"{name}_s"] = float(theirs["fit_seconds"].mean())
            else:
                row[f"vs_{name}"] = row[f"{name}_s"] = np.nan
        row["fit_s"] = cells["fit_seconds"].mean()
        row["n_pairs"] = cells["n_pairs"].mean()
        row["n_steps"] = cells["n_steps"].mean()
        out.append(row)
    frame = pd.DataFrame(out)
    order = {name: i for i, name in enumerate(VARIANTS)}
    tables = {name: i for i, name in enumerate(SCREEN_TABLES)}
    frame = frame.sort_values(
        ["variant", "table"],
        key=lambda c: c.map(order if c.name == "variant" else tables),
        kind="stable",
    )
    return frame.reset_index(drop=True)


def format_summary(rows: pd.DataFrame, suite: pd.DataFrame, splits=SCREEN_SPLITS) -> str:
    """The lines the script prints: the per-table frame, the baseline's sources and check, and
    per variant the tables where it beats EBM and ``defaults``."""
    rows = complete(rows, splits)
    lines = [
        f"REDUCED screening: {len(SCREEN_TABLES)} of 15 suite tables, splits {list(splits)}"
        f" ({len(splits)} of 5), 1 of 3 model seeds (offset 0); one thread. Fit seconds measured"
        " beside another job on a 2-core machine: a rough guide.",
        "vs_defaults, vs_ebm: mean paired difference over the splits, positive = the variant"
        " better (MSE lower, AUC higher). EBM: dev_suite.csv (model ebm, offset 0); computers has"
        " no EBM row (NaN).",
    ]
    if rows.empty:
        return "\n".join([*lines, "no complete (variant, table) cells yet"])
    base = baseline(rows, suite)
    used = base.loc[[k for k in base.index if k[0] in SCREEN_TABLES and k[1] in splits]]
    counts = used["source"].value_counts()
    lines.append(
        "defaults per cell: "
        + ", ".join(f"{n} from {source}" for source, n in counts.items())
        + " (pilid rows at offset 0 where this CSV has none)"
    )
    mine = rows[rows["variant"] == "defaults"].set_index(["table", "split"])
    checks = (("dev_suite.csv", suite), (ENGINE_SCREEN.name, dev_suite.read_results(ENGINE_SCREEN)))
    for name, other in checks if len(mine) else ():
        theirs = other[other["model"] == "pilid"].set_index(["table", "split"])
        shared = mine.index.intersection(theirs.index)
        if len(shared):
            gap = (mine.loc[shared, "value"] - theirs.loc[shared, "value"]).abs()
            lines.append(
                f"check: this CSV's defaults against {name}'s pilid (offset 0): identical on"
                f" {int((gap == 0).sum())} of {len(shared)} cells, within 1e-8 on"
                f" {int((gap <= 1e-8).sum())}, largest |difference| {gap.max():.2e}"
                f" ({' split '.join(map(str, gap.idxmax()))})"
            )
    frame = per_table(rows, suite)
    lines += ["", frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"), ""]
    for variant, part in frame.groupby("variant", sort=False):
        parts = []
        for name in ("ebm", "defaults"):
            if variant == "defaults" and name == "defaults":
                continue
            known = part[f"vs_{name}"].dropna()
            parts.append(f"beats {name} on {int((known > 0).sum())} of {len(known)} tables")
        lines.append(f"{variant:<24} {', '.join(parts)}; mean fit {part['fit_s'].mean():.1f}s")
    return "\n".join(lines)


def main(argv=None) -> int:
    """Run the missing (variant, table, split) cells, then print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument(  # the screening's tables, or any suite table to look further
        "--tables", nargs="+", default=list(SCREEN_TABLES), choices=list(SUITE)
    )
    parser.add_argument("--splits", nargs="+", type=int, default=list(SCREEN_SPLITS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--suite", type=Path, default=dev_suite.OUT, help="dev_suite.csv")
    parser.add_argument("--summary-only", action="store_true", help="print the CSV's summary")
    parser.add_argument(
        "--write-log", action="store_true", help=f"also write the summary to {LOG.name}"
    )
    args = parser.parse_args(argv)
    with dev_suite.sole_writer(args.out, "hybrid_screen", fits=not args.summary_only):
        return _run(args)  # one run at a time fits into --out


def _run(args) -> int:
    """`main`'s work: the missing cells fitted into ``args.out``, then the summary."""
    rows = pd.read_csv(args.out) if args.out.is_file() else pd.DataFrame(columns=COLUMNS)
    if not rows.empty and "engine" not in rows:
        rows["engine"] = ENGINE_BEFORE_COLUMN
    rows = rows.reindex(columns=COLUMNS)
    todo = (
        []
        if args.summary_only
        else dev_suite.missing_cells(  # variant by variant
            rows, args.variants, args.tables, args.splits, by="variant"
        )
    )
    datasets: dict = {}
    for variant, table, seed in tqdm(todo, desc="hybrid_screen", unit="fit", file=sys.stderr):
        if table not in datasets:
            datasets[table] = load_suite_table(table)
        new = pd.DataFrame([run_one(datasets[table], seed, variant)], columns=COLUMNS)
        rows = new if rows.empty else pd.concat([rows, new], ignore_index=True)
        rows = in_order(rows)
        dev_suite.write_frame(args.out, rows[COLUMNS])
    if rows.empty:
        print(f"no results in {args.out}")
        return 0
    suite = dev_suite.as_fitted_before_auto(dev_suite.read_results(args.suite))
    text = format_summary(rows, suite, args.splits)
    print(text)
    if args.write_log:
        cells = len(args.variants) * len(args.tables) * len(args.splits)
        have = len(complete(rows, args.splits))
        header = [
            "# the screening (resumable; hmda split 0 of defaults and glass_ebm_pairs_steps"
            " first, as a smoke test):",
            *(f"# {command}" for command in RUN_COMMANDS),
            "# this log:",
            f"# {SUMMARY_COMMAND}",
            f"# rows in {args.out.name}: {len(rows)}; in complete cells: {have} (of {cells} for"
            f" the variants {', '.join(args.variants)})",
            "",
        ]
        with replacing(LOG) as temporary:
            temporary.write_text("\n".join([*header, text, ""]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
