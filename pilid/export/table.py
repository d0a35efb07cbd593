"""The additive part of a fitted PiLiD or PiLiB as a portable table, scored with NumPy alone.

Eq. (9) of Guo et al., IJCAI 2020 writes the raw output (the prediction of a regressor, the
logit of a classifier) as ``intercept + sum_j u_j(x_j) + deep part``. `to_table` writes the
first two terms, the glass-box part, as one plain dict (and, given a path, one JSON file; given
a folder, one CSV per feature), and `score_table` evaluates such a table on new rows with
NumPy and pandas alone (no torch, no pilid estimator): its score equals the estimator's
``intercept + contributions.sum(1)`` of `decompose` (the columns of `explain` other than
``deep``) to float precision. What the table leaves out, the deep part (the MLP, PiLiB's
blocks, the pair terms beside an MLP), is `explain`'s ``deep`` column; given rows, `to_table`
states its share. A PiLiD without an MLP (``hidden_layers=None``) whose deep part is its pair
terms alone is glass whole: its table scores the pair terms too (``pairs_scored``), and its score
is the estimator's prediction (the logit of a classifier) to float precision.

The table (``format`` ``"pilid.table"``, ``version`` 2; version 1, written before the pair terms
were scored, reads as a table that does not score them):

- ``task`` ("regression" or "classification"), ``classes`` (None for a regression),
  ``outputs``: what each value column adds to (``["prediction"]``; a binary classifier
  ``["logit of <classes[1]>"]``; K > 2 classes one logit per class, the softmax of which is
  `predict_proba`), ``intercept`` (a number, or one per class);
- ``features``, one entry per column of ``fit`` in its order: ``name``, ``kind``, ``monotone``
  (-1, 0, +1), ``missing`` (the contribution of a missing value: learned when
  ``missing_learned``, else the feature's average, 0 up to rounding) and

  * ``kind`` "numeric": ``knots`` and ``values`` (u_j at the knots, centred on the training
    rows). Between two knots u_j is linear, beyond the first or last it is constant (clipped,
    Definition 2): ``np.interp(x, knots, values)``. A numeric column named in
    ``categorical_features`` is numeric here too: its knots are its training values.
  * ``kind`` "categorical": ``levels`` (as given to fit; levels a model merged into one are
    its ``"(infrequent)"`` level, their names in ``infrequent``), ``values`` (one per level)
    and ``unseen`` (a level not seen in fit: the feature's average).

  With K > 2 classes every value is a list of K (one column per class);
- ``pairs``: the pair terms of PiLiD's ``pairs`` (GA2M's f_ab), each its two features, its
  grid's nodes and its values there (bilinear between nodes in the features' piece positions,
  `pilid.nn.pairs`); their main effects the purification has moved into the shapes;
- ``pairs_scored``: whether `score_table` adds the pair terms. True for a model whose deep part
  is its pair terms alone: each feature then holds ``pairs_main`` (``values`` at its knots or
  levels, ``missing`` and, for a category, ``unseen``), the part of the pair terms its shape
  already holds, which the score takes off the pairs' sum. False beside an MLP, whose main
  effects were moved into the same shapes: the pair terms are then for reading, part of the
  deep part;
- ``deep_share`` (given rows): per output, the variance of `explain`'s ``deep`` column over
  the variance of the raw output on those rows, and the mean absolute deep part: how much of
  the prediction the table is not (0 where the table scores the pair terms, their share then
  ``pairs_share``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.export.spreadsheets import write_csv
from pilid.inspection.explanation import deep_share

if TYPE_CHECKING:  # scoring a table needs no torch
    from pilid.nn.fitted import FittedEnsemble

__all__ = ["FORMAT", "VERSION", "read_table", "score_table", "to_table"]

#: The ``format`` field of every table.
FORMAT = "pilid.table"
#: The version of the layout this module writes (and the latest it reads): 2 scores a glass
#: model's pair terms (``pairs_scored``).
VERSION = 2
#: The column of ``score_table(..., terms=True)`` holding the constant (as `explain`'s).
INTERCEPT = "intercept"
#: The column of ``score_table(..., terms=True)`` holding the pair terms of a table that scores
#: them (``pairs_scored``).
PAIRS = "pairs"


# ------------------------------------------------------------------------------ the estimator
def fitted_model(estimator, what: str):
    """The fitted PiLiD / PiLiB estimator behind `estimator` (a CV search's refit model);
    anything else (a baseline, an unfitted or diverged model) raises a one-line `PilidError`
    naming `what` could not take it."""
    from pilid.estimators.pilib import PiLiBBase
    from pilid.estimators.pilid import PiLiDBase
    from pilid.estimators.pilid_cv import PiLiDClassifierCV, PiLiDRegressorCV

    name = type(estimator).__name__
    if isinstance(estimator, PiLiDRegressorCV | PiLiDClassifierCV):
        if "best_estimator_" not in vars(estimator):
            raise PilidError(f"{name} is not fitted; call fit(X, y) before {what}")
        estimator = estimator.best_estimator_
    if not isinstance(estimator, PiLiDBase | PiLiBBase):
        raise PilidError(
            f"{what} takes a fitted PiLiD or PiLiB estimator (PiLiDRegressor, PiLiDClassifier, "
            f"PiLiBRegressor, PiLiBClassifier or a CV search of them); {name} is not one, so it "
            "cannot be exported"
        )
    if getattr(estimator, "diverged_", None):
        raise PilidError(
            f"{name} diverged in training ({estimator.diverged_}); refit before {what}"
        )
    if "fitted_" not in vars(estimator):
        raise PilidError(f"{name} is not fitted; call fit(X, y) before {what}")
    return estimator


def _plain(value):
    """`value` as JSON holds it: NumPy scalars as Python numbers, anything else not a str,
    bool, int or float as its text."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def _column(values: np.ndarray, multi: bool):
    """One value column (n,) or, with K > 2 classes, (n, K), as nested lists of floats."""
    return np.asarray(values, dtype=np.float64).tolist() if multi else [float(v) for v in values]


def _probe(fitted: FittedEnsemble) -> tuple[np.ndarray, list[np.ndarray]]:
    """Rows whose contributions are the table's values: per feature its probe points (a numeric
    feature's knots, a categorical one's level codes) padded with its last one, then a row of
    NaN (a missing value everywhere) and one of +inf (unseen everywhere)."""
    knots = fitted.knots.points
    categories = fitted.columns.levels
    points = [
        np.arange(len(categories[j]), dtype=np.float64) if j in categories else np.asarray(p)
        for j, p in enumerate(knots)
    ]
    from pilid.inspection.shapes import probe_rows  # here: scoring a table needs no torch

    return probe_rows(points, tail=(np.nan, np.inf)), points


def _pair_terms(fitted: FittedEnsemble) -> list[dict]:
    """The pair terms (PiLiD's ``pairs``; none for K > 2 classes): each pair's grid nodes and
    its values there (the bag's mean), in output units."""
    names, categories = fitted.columns.names, fitted.columns.levels
    out = []
    for a, b, V, coarse, ratio in fitted.pair_grids():
        nodes = []
        for j in (a, b):
            at = np.arange(int(coarse[j]) + 1) * float(ratio[j])  # piece positions of the nodes
            pts = np.asarray(fitted.knots.points[j])
            x = np.interp(at, np.arange(len(pts)), pts)
            levels = categories.get(j)
            nodes.append([_plain(levels[int(c)]) for c in x] if levels is not None else x.tolist())
        grid = V[: len(nodes[0]), : len(nodes[1])]
        out.append(
            {
                "features": [names[a], names[b]],
                "nodes": nodes,
                "piece_ratio": [float(ratio[a]), float(ratio[b])],
                "values": grid.tolist(),
            }
        )
    return out


def _left_out(shares: list[dict], scored: bool) -> list[dict]:
    """`deep_share`'s entries as the table states them: with the pair terms scored
    (``pairs_scored``) `explain`'s ``deep`` column is the pair terms', which the table holds:
    nothing is left out (``variance_share`` 0) and ``pairs_share`` is their share."""
    if not scored:
        return shares
    return [
        {**s, "variance_share": 0.0, "mean_abs_deep": 0.0, "pairs_share": s["variance_share"]}
        for s in shares
    ]


def _outputs(fitted: FittedEnsemble) -> list[str]:
    if fitted.task == "regression":
        return ["prediction"]
    if len(fitted.classes) == 2:
        return [f"logit of {_plain(fitted.classes[1])}"]
    return [f"logit of {_plain(c)}" for c in fitted.classes]


def to_table(estimator, path=None, *, X=None, csv_dir=None) -> dict:
    """The additive part of a fitted PiLiD or PiLiB as a table (module docstring).

    Parameters
    ----------
    estimator : fitted PiLiD or PiLiB estimator
        A regressor or classifier (K classes, bags and CV searches included); a baseline or an
        estimator without the additive part raises a one-line `pilid.errors.PilidError`.
    path : str, Path or None, default=None
        Where to write the table as JSON (None: not written).
    X : array-like or DataFrame or None, default=None
        Rows on which to state the deep part's share (``deep_share``); None: not stated
        (``explain(X)["deep"]`` gives it for any rows).
    csv_dir : str, Path or None, default=None
        A folder to write one CSV per feature into (its knots or levels and values, then its
        missing and unseen rows) and ``intercept.csv``; None: none.

    Returns
    -------
    dict
        The table: JSON-ready (numbers, strings, lists), readable back with `read_table` and
        scored with `score_table`.
    """
    import pilid

    est = fitted_model(estimator, "to_table")
    fitted = est.fitted_  # the one description of the fitted model (`pilid.nn.fitted`)
    columns = fitted.columns
    names = list(columns.names)
    probe, points = _probe(fitted)
    intercept, contrib, _ = fitted.decompose(probe)  # (rows, m) or (rows, m, K)
    multi = contrib.ndim == 3
    missing = columns.missing_mask()
    monotone = columns.monotone
    if monotone is None:
        monotone = np.zeros(len(names), dtype=np.int64)
    categories, infrequent = columns.levels, columns.infrequent
    features = []
    for j, name in enumerate(names):
        values = contrib[: len(points[j]), j]
        entry = {"name": name}
        if j in categories:
            entry.update(kind="categorical", levels=[_plain(v) for v in categories[j]])
        else:
            entry.update(kind="numeric", knots=[float(v) for v in points[j]])
        entry["values"] = _column(values, multi)
        entry["missing"] = _column(contrib[-2:-1, j], multi)[0]
        entry["missing_learned"] = bool(missing[j])
        if j in categories:
            entry["unseen"] = _column(contrib[-1:, j], multi)[0]
            if j in infrequent:
                entry["infrequent"] = [_plain(v) for v in infrequent[j]]
        entry["monotone"] = int(monotone[j])
        features.append(entry)
    pairs = _pair_terms(fitted) if not multi else []
    scored = bool(pairs) and fitted.pairs_alone  # no MLP: the pair terms are glass, scored too
    if scored:
        main = fitted.pair_main_effects(probe)  # what the shapes hold of the pair terms
        for j, entry in enumerate(features):
            entry["pairs_main"] = {
                "values": _column(main[: len(points[j]), j], False),
                "missing": float(main[-2, j]),
            }
            if j in categories:
                entry["pairs_main"]["unseen"] = float(main[-1, j])
    classes = fitted.classes
    table = {
        "format": FORMAT,
        "version": VERSION,
        "estimator": type(est).__name__,
        "pilid_version": pilid.__version__,
        "task": fitted.task,
        "classes": None if classes is None else [_plain(c) for c in classes],
        "outputs": _outputs(fitted),
        "intercept": np.asarray(intercept, dtype=np.float64).tolist()
        if multi
        else float(intercept),
        "features": features,
        "pairs": pairs,
        "pairs_scored": scored,
        "deep_share": None if X is None else _left_out(deep_share(est, X), scored),
    }
    _finite(table)
    if path is not None:
        Path(path).write_text(json.dumps(table, indent=1, allow_nan=False), encoding="utf-8")
    if csv_dir is not None:
        write_csv(table, csv_dir)
    return table


# ---------------------------------------------------------------------- reading and scoring
def read_table(path) -> dict:
    """A table written by `to_table` (its JSON file), checked: a file of another format or a
    later version raises a one-line `pilid.errors.PilidError`.

    Parameters
    ----------
    path : str or Path
        The JSON file.

    Returns
    -------
    dict
        The table, as `to_table` returned it.
    """
    try:
        table = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise PilidError(
            f"{path} is not UTF-8 text (byte {error.start}); pass a file written by to_table"
        ) from None
    except json.JSONDecodeError as error:
        raise PilidError(f"{path} is not JSON ({error}); pass a file written by to_table") from None
    return _checked(table, str(path))


def _finite(table: dict) -> None:
    """A table holds finite numbers only (JSON has no NaN): a model whose intercept or shapes
    are not finite (a fit that diverged) is refused in one line."""
    parts = {INTERCEPT: [table["intercept"]]}
    for feature in table["features"]:
        parts[feature["name"]] = [feature["values"], feature["missing"], feature.get("unseen", 0)]
    for pair in table["pairs"]:
        parts[" x ".join(pair["features"])] = [pair["values"]]
    bad = [
        name
        for name, values in parts.items()
        if not all(np.isfinite(np.asarray(v, dtype=np.float64)).all() for v in values)
    ]
    if bad:
        raise PilidError(
            f"the model's table holds NaN or inf ({_names(bad)}): its fit diverged; refit it "
            "(rescale X and y, or lower lr) before to_table"
        )


def _names(names: list[str], limit: int = 5) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


#: What each kind of feature entry of a table holds, besides ``name``, ``kind``, ``values``
#: and ``missing``.
_KIND_KEYS = {"numeric": ("knots",), "categorical": ("levels", "unseen")}


def _checked(table, where: str = "the table") -> dict:
    """`table` as `score_table` reads it, or a one-line `PilidError` naming what is wrong (a
    hand-edited file: another format, a later or unreadable version, a feature without the
    keys its kind needs, knots and values of other lengths)."""
    if not isinstance(table, dict) or table.get("format") != FORMAT:
        raise PilidError(
            f"{where} is not a pilid table (format {FORMAT!r}); write one with to_table"
        )
    try:
        version = int(table.get("version", 0))
    except (TypeError, ValueError):
        version = None
    if version is None:
        raise PilidError(
            f"{where} has version {table.get('version')!r}, not a whole number; write it again "
            "with to_table"
        )
    if version > VERSION:
        raise PilidError(
            f"{where} has version {table['version']}, newer than this pilid reads ({VERSION}); "
            "update pilid"
        )

    def wrong(what: str) -> PilidError:
        return PilidError(f"{where}: {what}; write it again with to_table")

    for key in ("intercept", "features"):
        if key not in table:
            raise wrong(f"it has no {key!r}")
    features = table["features"]
    if not isinstance(features, list) or not all(isinstance(f, dict) for f in features):
        raise wrong("'features' is not a list of feature entries")
    for j, feature in enumerate(features):
        name = feature.get("name", j)
        kind = feature.get("kind")
        if kind not in _KIND_KEYS:
            raise wrong(
                f"feature {name!r} has kind {kind!r}; a feature's kind is "
                + " or ".join(map(repr, _KIND_KEYS))
            )
        lacking = [k for k in ("name", "values", "missing", *_KIND_KEYS[kind]) if k not in feature]
        if lacking:
            raise wrong(f"feature {name!r} ({kind}) has no {', '.join(map(repr, lacking))}")
        points = feature["knots" if kind == "numeric" else "levels"]
        try:
            values = np.asarray(feature["values"], dtype=np.float64)
            if kind == "numeric":
                np.asarray(points, dtype=np.float64)
        except (TypeError, ValueError):
            raise wrong(f"feature {name!r} holds values that are not numbers") from None
        if not isinstance(points, list) or values.ndim < 1 or len(points) != values.shape[0]:
            raise wrong(
                f"feature {name!r} has {len(points) if isinstance(points, list) else 'no'} "
                f"{'knots' if kind == 'numeric' else 'levels'} but {values.shape[:1]} values"
            )
    table.setdefault("pairs", [])
    table.setdefault("pairs_scored", False)  # version 1: the pair terms were not scored
    if table["pairs_scored"]:
        for feature in features:
            main = feature.get("pairs_main")
            if not isinstance(main, dict) or not {"values", "missing"} <= set(main):
                raise wrong(
                    f"it scores its pair terms but feature {feature['name']!r} has no "
                    "'pairs_main' with 'values' and 'missing'"
                )
    return table


def _frame(table: dict, X) -> pd.DataFrame:
    """`X` as a DataFrame with the table's features as columns, in order (by name for a
    DataFrame, by position for an array)."""
    names = [f["name"] for f in table["features"]]
    if isinstance(X, pd.DataFrame):
        lacking = [n for n in names if n not in X.columns]
        if lacking and [str(c) for c in X.columns] != names and X.shape[1] == len(names):
            lacking = []  # columns without the names (e.g. 0, 1, ...): by position
            X = X.set_axis(names, axis=1)
        if lacking:
            shown = ", ".join(repr(n) for n in lacking[:5])
            raise PilidError(f"X lacks the table's column(s) {shown}; pass the columns of fit")
        return X[names]
    arr = np.asarray(X, dtype=object)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise PilidError(
            f"X has shape {arr.shape}; the table has {len(names)} features: pass (n, {len(names)})"
        )
    return pd.DataFrame(arr, columns=names)


def _numbers(feature: dict, column: pd.Series) -> np.ndarray:
    """A numeric feature's column as float64 (NaN for a missing value), or a one-line error."""
    try:
        numbers = pd.to_numeric(column.astype(object))
    except (TypeError, ValueError):
        raise PilidError(
            f"column {feature['name']!r} holds values that are not numbers; it was numeric "
            "in fit: convert it (NaN is a missing value)"
        ) from None
    return numbers.to_numpy(dtype=np.float64, na_value=np.nan)


def _codes(feature: dict, column: pd.Series) -> np.ndarray:
    """A categorical feature's level codes (a merged level's: its ``"(infrequent)"`` level's,
    the last; -1 for a missing or unseen value)."""
    codes = pd.Index(feature["levels"]).get_indexer(column.astype(object))
    members = feature.get("infrequent")
    if members:
        codes[column.isin(members).to_numpy()] = len(feature["levels"]) - 1
    return codes


def _contribution(feature: dict, column: pd.Series) -> np.ndarray:
    """One feature's contributions to the rows of `column`: (n,) or (n, K)."""
    values = np.asarray(feature["values"], dtype=np.float64)
    missing = np.asarray(feature["missing"], dtype=np.float64)
    if feature["kind"] == "numeric":
        x = _numbers(feature, column)
        knots = np.asarray(feature["knots"], dtype=np.float64)
        if values.ndim == 1:
            out = np.interp(x, knots, values)
        else:
            out = np.column_stack(
                [np.interp(x, knots, values[:, k]) for k in range(values.shape[1])]
            )
        nan = np.isnan(x)
        out[nan] = missing
        return out
    codes = _codes(feature, column)
    out = values[np.maximum(codes, 0)]
    absent = codes < 0
    if absent.any():
        na = column.isna().to_numpy()
        out[absent & na] = missing
        out[absent & ~na] = np.asarray(feature["unseen"], dtype=np.float64)
    return out


def score_table(table, X, terms: bool = False):
    """The additive part of a table's model on rows `X`, with NumPy and pandas alone.

    Parameters
    ----------
    table : dict, str or Path
        A table from `to_table` (or its JSON file).
    X : DataFrame or array-like of shape (n_samples, n_features)
        The rows, as the estimator's ``predict`` takes them: a DataFrame by column name (text
        columns as text, NaN or None for a missing value), an array by position.
    terms : bool, default=False
        False: the score; True: its parts, as `explain` lays them out without ``deep``.

    Returns
    -------
    ndarray of shape (n_samples,) or (n_samples, K), or DataFrame
        ``intercept + sum_j u_j(x_j)`` in output units (the target's, or logits), equal to the
        estimator's ``intercept + contributions.sum(1)`` (`decompose`) to float precision, plus
        the pair terms where the table scores them (``pairs_scored``: then the estimator's
        whole output); with K > 2 classes one column per class. ``terms=True``: one column per
        feature, ``pairs`` where scored, and ``intercept`` (K > 2 classes: a (``class``, row)
        MultiIndex, as `explain`).
    """
    if not isinstance(table, dict):
        table = read_table(table)
    table = _checked(table)
    if terms:
        own = [INTERCEPT, *([PAIRS] if table["pairs_scored"] else [])]
        clash = [f["name"] for f in table["features"] if f["name"] in own]
        if clash:
            name = clash[0]
            raise PilidError(
                f"feature {name!r} has the name of score_table's {name!r} column; "
                f"score it with terms=False, or rename that column of X (e.g. "
                f"X.rename(columns={{{name!r}: {name + '_'!r}}})) and refit"
            )
    frame = _frame(table, X)
    parts = [_contribution(f, frame.iloc[:, j]) for j, f in enumerate(table["features"])]
    intercept = np.asarray(table["intercept"], dtype=np.float64)
    n = len(frame)
    pairs = _pairs_part(table, frame) if table.get("pairs_scored") else None
    if not terms:
        total = np.broadcast_to(intercept, (n, *intercept.shape)).copy()
        for part in parts:
            total += part
        return total if pairs is None else total + pairs
    index = X.index if isinstance(X, pd.DataFrame) else None
    names = [f["name"] for f in table["features"]]

    def layout(k=None):
        columns = {name: (p if k is None else p[:, k]) for name, p in zip(names, parts)}
        if pairs is not None:
            columns[PAIRS] = pairs
        columns[INTERCEPT] = np.full(n, float(intercept if k is None else intercept[k]))
        return pd.DataFrame(columns, index=index)

    if intercept.ndim == 0:
        return layout()
    blocks = [layout(k) for k in range(len(intercept))]
    return pd.concat(blocks, keys=table["classes"], names=["class", None])


def _position(feature: dict, column: pd.Series) -> np.ndarray:
    """Each row's piece position g + f on the feature's characteristic points (compact Phi,
    `pilid.nn.piecewise.phi_compact`: piece g, fraction f; a category's code), 0 for a missing
    or unseen value, as `pilid.nn.pairs.PairTerms` reads it."""
    if feature["kind"] == "numeric":
        x = _numbers(feature, column)
        knots = np.asarray(feature["knots"], dtype=np.float64)
        if len(knots) < 2:
            return np.zeros(len(x))
        piece = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, len(knots) - 2)
        frac = np.clip((x - knots[piece]) / (knots[piece + 1] - knots[piece]), 0.0, 1.0)
        return np.where(np.isnan(x), 0.0, piece + frac)
    return np.maximum(_codes(feature, column), 0).astype(np.float64)


def _pairs_part(table: dict, frame: pd.DataFrame) -> np.ndarray:
    """The pair terms of a table that scores them (``pairs_scored``) on the rows of `frame`:
    each pair's bilinear interpolation of its grid values (`pilid.nn.pairs.PairTerms`), summed,
    less the main effects of theirs the shapes already hold (each feature's ``pairs_main``)."""
    features = table["features"]
    at = {f["name"]: j for j, f in enumerate(features)}
    positions: dict[int, np.ndarray] = {}
    total = np.zeros(len(frame))
    for pair in table["pairs"]:
        nodes, fracs = [], []
        for side, name in enumerate(pair["features"]):
            j = at[name]
            if j not in positions:
                positions[j] = _position(features[j], frame.iloc[:, j])
            pos = positions[j] / float(pair["piece_ratio"][side])
            last = len(pair["nodes"][side]) - 2  # the last cell's lower node
            node = np.clip(np.floor(pos), 0, max(last, 0)).astype(np.int64)
            nodes.append(node)
            fracs.append(np.clip(pos - node, 0.0, 1.0))
        grid = np.asarray(pair["values"], dtype=np.float64)
        (ka, kb), (fa, fb) = nodes, fracs
        ka1, kb1 = np.minimum(ka + 1, grid.shape[0] - 1), np.minimum(kb + 1, grid.shape[1] - 1)
        total += (
            grid[ka, kb] * (1 - fa) * (1 - fb)
            + grid[ka, kb1] * (1 - fa) * fb
            + grid[ka1, kb] * fa * (1 - fb)
            + grid[ka1, kb1] * fa * fb
        )
    for j, feature in enumerate(features):
        main = feature["pairs_main"]
        total -= _contribution({**feature, **main}, frame.iloc[:, j])
    return total
