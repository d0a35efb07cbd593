"""The tables of the study pages (docs/studies/), computed from the committed CSVs.

Plain pandas, no Sphinx: the directive ``study-table`` of `pilid_docs` renders what these
functions return, so every number on a study page is read from its CSV when the site is built
(``make docs``) and none is typed by hand. The computations are the studies' own
(``studies.dev_suite``'s `summarise`, ``studies.lever_study``'s `summarise`, `against_the_seed`
and `defaults_change`, ``studies.suite_drift``'s `drift_by_model`), so a page shows what
``--summary-only`` prints.

A view returns a `Table`: a header and rows of cells, each a string, or a `Bold` string (the best
of a row).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.report.stats import mean_pm
from pilid.tasks import LOWER_IS_BETTER

ROOT = Path(__file__).resolve().parents[2]
#: Aggregations the generic ``pivot`` view takes (``:aggregate:``).
AGGREGATES = ("mean", "median", "sum", "min", "max", "std", "count", "first")


#: Between a value and its spread (``0.9540 ± 0.0066``): non-breaking spaces, so that a table
#: cell never wraps them apart (a wide table scrolls instead: ``docs/_static/pilid.css``).
PLUS_MINUS = "\u00a0±\u00a0"


class Bold(str):
    """A cell shown in bold (the best value of its row)."""


@dataclass
class Table:
    """A rendered table: ``header`` (column labels) and ``rows`` (cells: str or `Bold`)."""

    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


def script(name: str):
    """The study ``studies.<name>`` (the repository root is on the path: ``docs/conf.py`` puts
    it there, pytest's ``pythonpath`` too), imported when a table first needs it."""
    return importlib.import_module(f"studies.{name}")


def number(value, digits: int = 4) -> str:
    """``value`` as a cell: ``--`` for a missing one, an integer as it is, a float to
    ``digits`` decimals."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "--"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}"
    return str(value)


def seconds(value) -> str:
    """Mean fit seconds as a cell: ``--`` for a missing one, else to two significant digits,
    whole units kept whole (`pilid.report.stats.mean_pm` without a spread)."""
    if value is None or np.isnan(value):
        return "--"
    return mean_pm(float(value))


def of(count, total) -> str:
    """``"count of total"``."""
    return f"{int(count)} of {int(total)}"


def _list(text: str | None) -> list[str]:
    return [] if not text else text.replace(",", " ").split()


# -- the generic view ---------------------------------------------------------------------------


def pivot(
    frame: pd.DataFrame,
    index: Sequence[str],
    values: Sequence[str],
    columns: Sequence[str] = (),
    aggregate: str = "mean",
    query: str | None = None,
    size: str | None = None,
    digits: int = 4,
) -> Table:
    """``frame`` (after ``query``) grouped by ``index`` (rows, in order of first appearance),
    ``values`` aggregated with ``aggregate``; with ``columns`` one column per value of those
    columns (in order of first appearance) for each of ``values``; ``size``: a first column of
    that label holding each group's row count."""
    if not index or not values:
        raise ValueError("view pivot needs :index: and :values: (column names)")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate {aggregate!r} is none of {', '.join(AGGREGATES)}")
    if query:
        frame = frame.query(query)
    keys = [*index, *columns]
    missing = [c for c in [*keys, *values] if c not in frame.columns]
    if missing:
        raise ValueError(f"no column {', '.join(missing)}; the CSV has {', '.join(frame.columns)}")
    groups = frame.groupby(keys, sort=False)
    table = groups[list(values)].agg(aggregate)
    counts = groups.size()
    if columns:
        table = table.unstack(list(columns), sort=False)
        counts = counts.unstack(list(columns), sort=False).max(axis=1)
        labels = [
            " ".join(str(part) for part in (col[:1] if len(values) > 1 else ()) + col[1:])
            for col in table.columns
        ]
    else:
        labels = list(values)
    header = [*index, *([size] if size else []), *labels]
    rows = []
    for key, row in table.iterrows():
        key = key if isinstance(key, tuple) else (key,)
        cells = [str(k) for k in key]
        if size:
            cells.append(str(int(counts[key if len(key) > 1 else key[0]])))
        cells += [number(v.item() if hasattr(v, "item") else v, digits) for v in row.to_numpy()]
        rows.append(cells)
    return Table(header, rows)


# -- the development suite, the UCI sets' new splits and their reruns -----------------------------


def suite_summary(results: pd.DataFrame, digits: int = 4) -> Table:
    """Per table, each model's mean +- std over the splits and mean fit seconds, and whether
    PiLiD beats EBM (``studies.dev_suite``'s `summarise`); the best mean of a table in bold."""
    dev = script("dev_suite")
    summary = dev.summarise(results)
    per_table = summary["per_table"]
    models = list(summary["mean_rank"].index)
    header = ["table", "metric", *models, *[f"{m} fit s" for m in models], "PiLiD beats EBM"]
    rows = []
    for table, row in per_table.iterrows():
        means = {m: row[f"{m}_mean"] for m in models if not np.isnan(row[f"{m}_mean"])}
        best = (min if LOWER_IS_BETTER[row["metric"]] else max)(means.values()) if means else None
        cells = [table, row["metric"].upper()]
        for m in models:
            mean, std = row[f"{m}_mean"], row[f"{m}_std"]
            text = number(mean, digits)
            if not np.isnan(mean) and not np.isnan(std):
                text += f"{PLUS_MINUS}{std:.{digits}f}"
            cells.append(Bold(text) if m in means and means[m] == best else text)
        cells += [seconds(row[f"{m}_seconds"]) for m in models]
        beats = row["pilid_beats_ebm"]
        cells.append("--" if beats is None or pd.isna(beats) else number(bool(beats)))
        rows.append(cells)
    return Table(header, rows)


def suite_criterion(results: pd.DataFrame, digits: int = 4, base: str = "pilid") -> Table:
    """The noise-aware criterion (``studies.dev_suite``'s `criterion`): per table, the mean
    advantage of ``base`` (PiLiD's defaults, or a candidate) over each peer on the (split, seed)
    pairs both have, with its paired standard error and the number of pairs; a cell on fewer
    than 15 pairs, or a budget's, is marked reduced (``*``); the wins per peer as a note."""
    dev = script("dev_suite")
    pairs = dev.criterion(results, base)
    peers = list(dict.fromkeys(pairs.index.get_level_values("model")))
    tables = list(dict.fromkeys(pairs.index.get_level_values("table")))
    header = ["table", "metric", *[f"vs {p}" for p in peers]]
    rows = []
    for table in tables:
        part = pairs.xs(table, level="table")
        cells = [table, part["metric"].iloc[0].upper()]
        for peer in peers:
            if peer not in part.index:
                cells.append("--")
                continue
            row = part.loc[peer]
            text = f"{row['advantage']:+.{digits}f}"
            if not np.isnan(row["se"]):
                text += f"{PLUS_MINUS}{row['se']:.{digits}f}"
            text += f" ({int(row['n'])})" + ("*" if row["reduced"] else "")
            cells.append(Bold(text) if row["pilid_better"] else text)
        rows.append(cells)
    wins = dev.peer_wins(pairs)
    note = "; ".join(
        f"{'PiLiD' if base == 'pilid' else base} better than {peer} on "
        f"{of(w['wins'], w['compared'])} tables"
        + (f" ({int(w['reduced'])} reduced)" if w["reduced"] else "")
        for peer, w in wins.iterrows()
    )
    return Table(header, rows, note=note + ".")


def suite_shares(results: pd.DataFrame, base: str = "pilid") -> Table:
    """Per table, each PiLiD model's median deep share over its cells (``studies.dev_suite``'s
    `summarise`: the MLP with the pair terms beside it, or without an MLP the pair terms; the
    shapes carry the rest) and, for a candidate ``base``, its fit seconds over the defaults' on
    the cells both have; the median table as a note."""
    summary = script("dev_suite").summarise(results, base)
    shares, ratio = summary["deep_share"], summary["seconds_ratio"]
    if shares.empty:
        raise ValueError("suite-shares: no row of the CSVs states a deep_share")
    models = list(shares.columns)
    header = ["table", *[f"{m} deep share" for m in models]]
    header += [] if ratio.empty else [f"{base} fit s / pilid's"]
    rows = []
    for table, row in shares.iterrows():
        cells = [table, *[number(v, 3) for v in row.to_numpy()]]
        if not ratio.empty:
            cells.append(f"x{ratio[table]:.1f}" if table in ratio.index else "--")
        rows.append(cells)
    note = "median table: " + ", ".join(f"{m} {shares[m].median():.3f}" for m in models)
    if not ratio.empty:
        note += "; fit seconds of cells fitted at other times, beside other jobs: rough"
    return Table(header, rows, note=note + ".")


def suite_verdict(results: pd.DataFrame, base: str = "pilid") -> Table:
    """``base``'s (PiLiD's, or a candidate's) wins against EBM and every model's mean rank
    (``dev_suite.summarise``): over the tables where the models at their defaults have every
    cell, and, where a peer ran reduced (fewer cells, or a budget only), all models on the cells
    they share."""
    suite = script("dev_suite")
    summary = suite.summarise(results, base)

    def ranks(rank: pd.Series) -> list:
        best = rank.min()
        return [
            "--" if np.isnan(r) else Bold(f"{r:.2f}") if r == best else f"{r:.2f}" for r in rank
        ]

    rank = summary["mean_rank"]
    header = [
        "ranked on",
        f"{suite.LABELS.get(base, base)} beats EBM",
        "tables ranked",
        *[f"mean rank: {m}" for m in rank.index],
    ]
    rows = [
        [
            "every cell, at the defaults",
            of(summary["wins"], summary["compared"]),
            str(summary["ranked"]),
            *ranks(rank),
        ]
    ]
    if summary["shared_shown"]:
        shared = summary["shared_rank"].reindex(rank.index)
        rows.append(
            [
                "the cells every model has (reduced)",
                "",
                str(summary["shared_ranked"]),
                *ranks(shared),
            ]
        )
    return Table(header, rows)


def drift(first: pd.DataFrame, second: pd.DataFrame) -> Table:
    """Per model, the cells both files hold, how many are bit for bit the same, the median and
    largest absolute move and where (``studies.suite_drift``'s `drift_by_model`)."""
    moved = script("suite_drift")
    per_model = moved.drift_by_model(moved.drift(first, second))
    header = ["model", "cells", "bit for bit", "median move", "largest move", "where"]
    rows = [
        [
            model,
            str(row["cells"]),
            str(row["identical"]),
            f"{row['median_abs']:.1e}",
            f"{row['max_abs']:.1e}",
            row["largest"] if row["max_abs"] > 0 else "--",
        ]
        for model, row in per_model.iterrows()
    ]
    return Table(header, rows)


def drift_verdict(first: pd.DataFrame, second: pd.DataFrame, names: Sequence[str]) -> Table:
    """The suite's verdicts from each file on the cells both hold (a rerun of some models read
    beside the first file's cells of the others) and the tables whose verdict flips."""
    moved, dev = script("suite_drift"), script("dev_suite")
    second, _ = moved.with_peers(first, second)
    a, b = moved.common_cells(first, second)
    summaries = [dev.summarise(a), dev.summarise(b)]
    models = list(summaries[0]["mean_rank"].index)
    header = ["run", "PiLiD beats EBM", *[f"mean rank: {m}" for m in models], "verdict flips on"]
    changed = moved.verdict_changes(*summaries)
    rows = []
    for name, summary in zip(names, summaries):
        rank = summary["mean_rank"]
        rows.append(
            [name, of(summary["wins"], summary["compared"]), *[f"{rank[m]:.2f}" for m in models]]
        )
    rows[0].append("")
    rows[1].append(", ".join(changed) if changed else "none")
    return Table(header, rows)


# -- the lever study --------------------------------------------------------------------------


def _levers(levers: pd.DataFrame, splits, variants) -> pd.DataFrame:
    study = script("lever_study")
    part = study.on_splits(levers, splits) if splits else levers
    if variants:
        unknown = sorted(set(variants) - set(levers["variant"]))
        if unknown:
            raise ValueError(f"no variant {', '.join(unknown)} in the CSV")
        part = part[part["variant"].isin(variants)]
    return part


def lever_variants(levers: pd.DataFrame) -> Table:
    """Every variant of the CSV: what it changes on top of the earlier defaults
    (``lever_study.VARIANTS``; a rule of the training rows n named by the parameters it sets),
    the splits it has and on how many tables."""
    study = script("lever_study")
    header = ["variant", "changes", "rule of the rows n", "splits", "tables"]
    rows = []
    for variant, part in levers.groupby("variant", sort=False):
        params, rule = study.VARIANTS.get(variant, ({}, None))
        changes = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "--"
        ruled = ", ".join(rule(1000)) if rule is not None else "--"
        splits = " ".join(str(s) for s in sorted(set(part["split"])))
        rows.append([variant, changes, ruled, splits, str(part["table"].nunique())])
    return Table(header, rows)


def _constraint_words(rule) -> str:
    """A constraint of a `pilid.hyperparameters.Hyperparameter` (`Integers`, `Reals`, `OneOf`,
    None) in words."""
    if rule is None:
        return "None"
    kind = type(rule).__name__
    if kind == "OneOf":
        return " or ".join(repr(o) for o in rule.options)
    if kind in ("Integers", "Reals"):
        noun = "a whole number" if kind == "Integers" else "a number"
        left = "[" if rule.closed in ("left", "both") else "("
        right = "]" if rule.closed in ("right", "both") else ")"
        low = "-inf" if rule.low is None else rule.low
        high = "inf" if rule.high is None else rule.high
        return f"{noun} in {left}{low}, {high}{right}"
    return str(rule)


def lever_knobs(levers: pd.DataFrame) -> Table:
    """The levers that needed a knob PiLiD does not have (``studies._levers.LEVERS``, declared
    in the studies, not the library): each one's neutral value (the fit without it), its valid
    values, what it does, and the variants of ``lever_study.VARIANTS`` that set it, each with the
    tables it has rows on in the CSV (0: its rows are in another of the study's CSVs)."""
    study = script("lever_study")
    knobs = importlib.import_module("studies._levers").LEVERS
    tables = levers.groupby("variant")["table"].nunique()
    header = ["lever", "neutral value", "valid values", "what it does", "variants (tables)"]
    rows = []
    for knob in knobs:
        variants = [v for v, (params, _) in study.VARIANTS.items() if knob.name in params]
        shown = ", ".join(f"{v} ({int(tables.get(v, 0))})" for v in variants) or "--"
        words = "; ".join(_constraint_words(rule) for rule in knob.constraint)
        rows.append([knob.name, repr(knob.default), words, knob.doc, shown])
    return Table(header, rows)


def lever_counts(
    levers: pd.DataFrame, suite: pd.DataFrame, splits=(), variants=(), fit_seconds: bool = True
) -> Table:
    """Per variant, on ``splits``: the tables where its mean beats its baseline's and where it
    beats EBM's (``lever_study.summarise``), and its mean fit seconds."""
    study = script("lever_study")
    part = _levers(levers, splits, variants)
    summary = study.summarise(part, suite)
    header = ["variant", "baseline", "beats its baseline", "beats EBM"]
    header += ["mean fit s"] if fit_seconds else []
    rows = []
    for variant, row in summary.iterrows():
        against = (
            "--" if variant == row["baseline"] else of(row["beats_baseline"], row["of_baseline"])
        )
        cells = [variant, row["baseline"], against, of(row["beats_ebm"], row["of_ebm"])]
        cells += [seconds(row["mean_fit_seconds"])] if fit_seconds else []
        rows.append(cells)
    return Table(header, rows)


def lever_ranks(levers: pd.DataFrame, suite: pd.DataFrame, splits=(), variants=()) -> Table:
    """Per variant, the development suite's verdict with its rows in place of PiLiD's: wins
    against EBM and the three models' mean ranks (``dev_suite.summarise``)."""
    dev = script("dev_suite")
    part = _levers(levers, splits, variants)
    peers = suite[suite["model"] != "pilid"]
    if splits:
        peers = peers[peers["split"].isin(list(splits))]
    models = [m for m in dev.MODELS if m in set(suite["model"])]
    header = ["variant", "beats EBM", "tables ranked", *[f"mean rank: {m}" for m in models]]
    rows = []
    for variant, own in part.groupby("variant", sort=False):
        rows_ = own.drop(columns="variant").assign(model="pilid")[suite.columns]
        mixed = pd.concat([peers[peers["table"].isin(set(own["table"]))], rows_])
        summary = dev.summarise(mixed)
        rank = summary["mean_rank"]
        best = rank.min()
        cells = [variant, of(summary["wins"], summary["compared"]), str(summary["ranked"])]
        cells += [Bold(f"{rank[m]:.2f}") if rank[m] == best else f"{rank[m]:.2f}" for m in models]
        rows.append(cells)
    return Table(header, rows)


def lever_seed(levers: pd.DataFrame, splits=(), variants=(), baseline=()) -> Table:
    """Per variant, against the baseline defaults (``lever_study.BASELINE_VARIANT``), or the
    two variants of ``baseline`` (a variant and its refit with the seed + 1000), beside the
    seed's own move (``lever_study.against_the_seed``)."""
    study = script("lever_study")
    part = study.on_splits(levers, splits) if splits else levers
    if baseline and len(baseline) != 2:
        raise ValueError(":baseline: takes two variants: one and its refit with the seed + 1000")
    seeded = study.against_the_seed(part, *baseline)
    if variants:
        seeded = seeded.loc[[v for v in seeded.index if v in set(variants)]]
    header = ["variant", "tables", "better", "worse", "better beyond the seed", "worse beyond"]
    rows = [
        [variant, *(str(int(row[k])) for k in seeded.columns)] for variant, row in seeded.iterrows()
    ]
    return Table(header, rows)


def lever_means(
    levers: pd.DataFrame, suite: pd.DataFrame, splits=(), variants=(), digits: int = 4
) -> Table:
    """Per table, the mean over ``splits`` of each variant and of EBM and LightGBM on the same
    splits (``lever_study.per_table``); the best of a row in bold."""
    study = script("lever_study")
    part = _levers(levers, splits, variants)
    wide = study.per_table(part, suite)
    if variants:
        wide = wide[
            [v for v in variants if v in wide.columns]
            + [c for c in ("ebm", "lightgbm") if c in wide.columns]
        ]
    metric = part.groupby("table")["metric"].first()
    header = ["table", "metric", *wide.columns]
    rows = []
    for table, row in wide.iterrows():
        values = row.dropna()
        lower = LOWER_IS_BETTER[metric[table]]
        best = (values.min() if lower else values.max()) if len(values) else None
        cells = [table, metric[table].upper()]
        for value in row:
            text = number(value, digits)
            cells.append(Bold(text) if not pd.isna(value) and value == best else text)
        rows.append(cells)
    return Table(header, rows)


def defaults_change(levers: pd.DataFrame, suite: pd.DataFrame, digits: int = 4) -> Table:
    """The earlier defaults against the library's, EBM and LightGBM per table
    (``lever_study.defaults_change``, what ``--defaults-change`` prints), with the wins against
    EBM and the mean ranks of each as a note."""
    study = script("lever_study")
    frame, summaries = study.defaults_change(levers, suite)
    header = ["table", "metric", "earlier defaults", "library defaults", "EBM", "LightGBM"]
    header += ["fit s: earlier", "fit s: library", "fit s: EBM"]
    rows = []
    for table, row in frame.iterrows():
        current = {k: row[k] for k in ("library", "ebm", "lightgbm") if pd.notna(row[k])}
        best = (min if LOWER_IS_BETTER[row["metric"]] else max)(current.values())
        cells = [table, row["metric"].upper()]
        for key in ("earlier", "library", "ebm", "lightgbm"):
            text = number(row[key], digits)
            cells.append(Bold(text) if key in current and row[key] == best else text)
        cells += [number(row[k], 1) for k in ("earlier_s", "library_s", "ebm_s")]
        rows.append(cells)
    notes = []
    for name, label in (("earlier", "earlier defaults"), ("library", "library defaults")):
        summary = summaries[name]
        rank = summary["mean_rank"]
        ranks = ", ".join(f"{m} {rank[m]:.2f}" for m in rank.index)
        notes.append(
            f"{label}: EBM beaten on {of(summary['wins'], summary['compared'])} tables; mean "
            f"rank over {summary['ranked']} tables: {ranks}"
        )
    return Table(header, rows, note="; ".join(notes) + ".")


# -- the screening of the glass mode and the pair budget (studies.hybrid_screen) ------------------


def _screened(rows: pd.DataFrame, suite: pd.DataFrame, splits=()) -> pd.DataFrame:
    """`hybrid_screen.per_table` of the variants complete on ``splits`` (the screening's when
    none are given: the confirmation reads its own splits)."""
    study = script("hybrid_screen")
    return study.per_table(study.complete(rows, splits or study.SCREEN_SPLITS), suite)


def screen_variants(rows: pd.DataFrame, suite: pd.DataFrame, digits: int = 4, splits=()) -> Table:
    """Per screened variant (``hybrid_screen.VARIANTS``): what it changes on the library's
    defaults, the tables where it beats EBM and the defaults (paired, `hybrid_screen.per_table`),
    the mean of those paired differences and its mean fit seconds beside the defaults'."""
    study = script("hybrid_screen")
    frame = _screened(rows, suite, splits)
    header = [
        "variant",
        "changes",
        "beats EBM",
        "beats defaults",
        "mean vs EBM",
        "mean vs defaults",
        "fit s",
        "defaults' fit s",
    ]
    out = []
    for variant, part in frame.groupby("variant", sort=False):
        params, ebm_pairs, steps = study.VARIANTS[variant]
        changes = [f"{k}={v!r}" for k, v in params.items()]
        if ebm_pairs == study.PAIRS_CHOICE:
            changes += ["pairs chosen among 0, 10 and EBM's budget"]
        elif ebm_pairs:
            changes += ["EBM's pair budget"]
        changes += ["steps"] if steps else []
        ebm, base = part["vs_ebm"].dropna(), part["vs_defaults"].dropna()
        mine = variant == "defaults"
        out.append(
            [
                variant,
                ", ".join(changes) or "--",
                of((ebm > 0).sum(), len(ebm)),
                "--" if mine else of((base > 0).sum(), len(base)),
                number(float(ebm.mean()), digits),
                "--" if mine else number(float(base.mean()), digits),
                seconds(part["fit_s"].mean()),
                seconds(part["defaults_s"].mean()),
            ]
        )
    return Table(
        header,
        out,
        note="positive differences: the variant better (AUC higher, MSE lower); REDUCED: "
        f"{frame['table'].nunique()} tables, splits "
        f"{', '.join(str(s) for s in splits or study.SCREEN_SPLITS)}, one seed.",
    )


def screen_tables(
    rows: pd.DataFrame, suite: pd.DataFrame, against: str, digits: int = 4, splits=()
) -> Table:
    """The paired difference of every screened variant against ``against`` ("defaults" or
    "ebm") per table (`hybrid_screen.per_table`), a row per variant; the best variant of each
    table in bold."""
    frame = _screened(rows, suite, splits)
    column = f"vs_{against}"
    wide = frame.pivot(index="variant", columns="table", values=column)
    wide = wide.loc[frame["variant"].unique(), frame["table"].unique()]
    best = wide.dropna(axis=1, how="all").idxmax()  # a table with no such row: none
    out = []
    for variant, row in wide.iterrows():
        cells = [variant]
        for table, value in row.items():
            cell = number(float(value), digits)
            cells.append(Bold(cell) if best.get(table) == variant and not np.isnan(value) else cell)
        out.append(cells)
    return Table(["variant", *wide.columns], out)


#: The views ``:view:`` names (`build`); the CSV of the directive's argument is the first input.
VIEWS = (
    "pivot",
    "suite-summary",
    "suite-criterion",
    "suite-verdict",
    "suite-shares",
    "drift",
    "drift-verdict",
    "lever-variants",
    "lever-knobs",
    "lever-counts",
    "lever-ranks",
    "lever-seed",
    "lever-means",
    "defaults-change",
    "screen-variants",
    "screen-tables",
)


def read(path: str | Path) -> pd.DataFrame:
    """A committed CSV, by its path from the repository's root."""
    full = ROOT / path
    if not full.is_file():
        raise ValueError(f"no CSV {path} (paths are from the repository's root)")
    return pd.read_csv(full)


def with_rows(levers: pd.DataFrame, other: pd.DataFrame, variants) -> pd.DataFrame:
    """``levers`` and the rows of ``variants`` from another lever CSV ``other`` (the same fits
    committed with another study: the defaults and their refit with the seed + 1000, which a
    lever read against them needs beside its own rows); a (variant, table, split) that
    ``levers`` has keeps its own row."""
    if not variants:
        raise ValueError(":with: needs :with-variants: (the variants to take from it)")
    missing = sorted(set(variants) - set(other["variant"]))
    if missing:
        raise ValueError(f"no variant {', '.join(missing)} in the :with: CSV")
    key = ["variant", "table", "split"]
    taken = other[other["variant"].isin(list(variants))]
    known = pd.MultiIndex.from_frame(levers[key])
    taken = taken[~pd.MultiIndex.from_frame(taken[key]).isin(known)]
    return pd.concat([levers, taken[levers.columns]], ignore_index=True)


def only_models(frame: pd.DataFrame, models) -> pd.DataFrame:
    """The rows of ``frame`` (a suite CSV and the files joined to it) of ``models``; a name
    none of its rows has is an error."""
    missing = sorted(set(models) - set(frame["model"]))
    if missing:
        raise ValueError(f":models: {', '.join(missing)}: no rows of that model in the CSVs")
    return frame[frame["model"].isin(list(models))].reset_index(drop=True)


def only_tables(frame: pd.DataFrame, tables) -> pd.DataFrame:
    """The rows of ``frame`` (a lever or suite CSV) on ``tables`` (a lever measured on some
    tables only, read beside rows that cover them all); a name the CSV lacks is an error."""
    missing = sorted(set(tables) - set(frame["table"]))
    if missing:
        raise ValueError(f":tables: {', '.join(missing)}: no rows of that table in the CSV")
    return frame[frame["table"].isin(list(tables))].reset_index(drop=True)


def build(view: str, path: str, options: dict) -> Table:
    """The `Table` of ``view`` on the CSV ``path`` with the directive's ``options`` (strings:
    ``against``, ``suite``, ``with`` and ``with-variants``, ``also`` and ``base`` (suite CSVs
    whose rows join, and the model a criterion is of), ``models`` (the suite's models to
    keep, the ``base`` among them), ``splits``, ``variants``,
    ``tables``, ``baseline``, ``index``, ``columns``, ``values``, ``aggregate``, ``query``,
    ``size``, ``digits``, ``names``)."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; use one of {', '.join(VIEWS)}")
    frame = read(path)
    if options.get("also"):  # suite CSVs' rows beside (a candidate's files and the suite's)
        frame = script("dev_suite").with_rows_of(frame, *map(read, _list(options["also"])))
    if "defaults-then" in options:  # PiLiD's rows: the defaults before deep_input="auto"
        frame = script("dev_suite").as_fitted_before_auto(frame)
    if options.get("with"):
        frame = with_rows(frame, read(options["with"]), _list(options.get("with-variants")))
    if options.get("tables"):
        frame = only_tables(frame, _list(options["tables"]))
    if options.get("models"):  # a suite CSV's models to show (a candidate beside the peers)
        frame = only_models(frame, [*_list(options["models"]), options.get("base") or "pilid"])
    digits = int(options.get("digits") or 4)
    splits = tuple(int(s) for s in _list(options.get("splits")))
    variants = tuple(_list(options.get("variants")))

    def other(key: str) -> pd.DataFrame:
        if not options.get(key):
            raise ValueError(f"view {view} needs :{key}: (a CSV path)")
        # a suite's CSV (dev_suite.py's, uci_new_splits.py's, a rerun): its first seed at the
        # library's defaults, one row per (table, split, model), as the lever study reads it,
        # PiLiD's rows those of the defaults the levers and reruns were measured against
        suites = script("dev_suite")
        return suites.as_fitted_before_auto(suites.first_seed(read(options[key])))

    if view == "pivot":
        return pivot(
            frame,
            index=_list(options.get("index")),
            values=_list(options.get("values")),
            columns=_list(options.get("columns")),
            aggregate=options.get("aggregate") or "mean",
            query=options.get("query"),
            size=options.get("size"),
            digits=digits,
        )
    if view == "suite-summary":
        return suite_summary(frame, digits)
    if view == "suite-criterion":
        return suite_criterion(frame, digits, options.get("base") or "pilid")
    if view == "suite-verdict":
        return suite_verdict(frame, options.get("base") or "pilid")
    if view == "suite-shares":
        return suite_shares(frame, options.get("base") or "pilid")
    if view in ("drift", "drift-verdict"):  # reruns of the defaults before deep_input="auto"
        suites = script("dev_suite")
        frame = suites.as_fitted_before_auto(suites.first_seed(frame))
    if view == "drift":
        return drift(frame, other("against"))
    if view == "drift-verdict":
        names = options.get("names", "").split(";") if options.get("names") else []
        names = [n.strip() for n in names] or [path, options["against"]]
        return drift_verdict(frame, other("against"), names)
    if view in ("screen-variants", "screen-tables"):
        if variants:  # the variants read (e.g. the two measured on every suite table)
            frame = frame[frame["variant"].isin(variants)].reset_index(drop=True)
        if not options.get("suite"):
            raise ValueError(f"view {view} needs :suite: (dev_suite.csv's path)")
        suites = script("dev_suite")
        suite = suites.as_fitted_before_auto(suites.read_results(ROOT / options["suite"]))
        if view == "screen-variants":
            return screen_variants(frame, suite, digits, splits)
        against = options.get("against") or "defaults"
        return screen_tables(frame, suite, against, digits, splits)
    if view == "lever-variants":
        return lever_variants(frame)
    if view == "lever-knobs":
        return lever_knobs(frame)
    if view == "lever-counts":
        return lever_counts(frame, other("suite"), splits, variants)
    if view == "lever-ranks":
        return lever_ranks(frame, other("suite"), splits, variants)
    if view == "lever-seed":
        return lever_seed(frame, splits, variants, tuple(_list(options.get("baseline"))))
    if view == "lever-means":
        return lever_means(frame, other("suite"), splits, variants, digits)
    return defaults_change(frame, other("suite"), digits)
