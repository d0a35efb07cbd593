"""Stored shape artefacts: reading them, the true synthetic shapes, and shape fidelity (R^2).

The runner stores, per trial, ``<results>/artifacts/<setting_id>/shapes-trial<k>.csv`` with the
learned marginal value functions u_j (Definition 3, piecewise linear between the knots of
Definition 1) as ``feature, x, x_original, value``. Because u_j is linear between knots, it is
evaluated anywhere by linear interpolation of its stored points; the report compares it with the
true function on a dense uniform grid of the feature's range.

Three scores per trial (`FidelityScores`), from the per-feature centred R^2_j = 1 - SSE_j / SST_j
(SSE_j: mean squared error of the centred learned shape on the grid, SST_j: variance of the centred
true shape there):

- ``r2``: the plain mean over features of R^2_j. A near-flat true shape (small SST_j) turns a small
  estimation error into a large negative R^2_j, so this mean is dominated by the flattest features;
- ``r2_median``: the median over features of R^2_j;
- ``r2_weighted``: the variance-weighted R^2, 1 - sum_j SSE_j / sum_j SST_j (each feature weighted
  by the variance of its true shape), the headline of REPRODUCTION.md.

The artefacts are large and not committed; the per-trial fidelity derived from them is kept beside
the records (``<results>/shape_fidelity.csv``: ``setting_id, trial, r2`` and, for the trials
scored from their shapes since the cache has them, ``r2_median, r2_weighted``; written by
``python -m pilid.report tables``), so that the shape-fidelity table is rebuilt, value for value,
where the artefacts are absent (a fresh clone). A trial cached with ``r2`` only has no median or
variance-weighted R^2 (NaN): they need the per-feature errors, which the plain mean does not keep.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from pilid.atomic import write_text
from pilid.errors import PilidError
from pilid.experiments.artefacts import (
    GRID_FILE,
    DamagedArtefact,
    artefact_path,
    artifact_dir,
    read_artefact,
)

#: Points of the dense grid on which shapes are compared and averaged.
GRID_POINTS = 200

#: The per-trial fidelity derived from the artefacts, beside ``records.jsonl``.
FIDELITY_CACHE = "shape_fidelity.csv"
#: The cache's columns: the first three always, the last two where any trial has them.
FIDELITY_COLUMNS = ("setting_id", "trial", "r2", "r2_median", "r2_weighted")


class FidelityScores(NamedTuple):
    """The shape fidelity of one trial (see the module docstring): the plain mean, the median
    and the variance-weighted R^2 over its features (NaN where not known)."""

    r2: float
    r2_median: float = float("nan")
    r2_weighted: float = float("nan")


def read_shapes(root: str | os.PathLike, setting_id: str, trial: int) -> pd.DataFrame | None:
    """The stored shapes of one trial (``feature, x, x_original, value``), or None if absent."""
    path = artefact_path(root, setting_id, "shapes", int(trial))
    frame = read_checked(path, numeric=("x", "x_original", "value"))
    if frame is None:
        return None
    missing = {"feature", "value"} - set(frame.columns)
    if missing or not ({"x_original", "x"} & set(frame.columns)):
        raise PilidError(
            f"{path} lacks the columns {sorted(missing) or ['x_original']}; "
            "shape artefacts need feature, x, x_original, value"
        )
    if "x_original" not in frame.columns:
        frame = frame.assign(x_original=frame["x"])
    frame["feature"] = frame["feature"].astype(str)
    return frame


def interaction_grids(root: str | os.PathLike, setting_id: str) -> dict[tuple[str, str], dict]:
    """``{(feat_a, feat_b): {trial: DataFrame(x_a, x_b, value)}}`` from the stored grid files
    ``interaction-grid-trial<k>-<feat_a>__<feat_b>.csv`` of one setting."""
    out: dict[tuple[str, str], dict] = {}
    folder = artifact_dir(root, setting_id)
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        match = GRID_FILE.match(path.name)
        if match:
            trial, feat_a, feat_b = int(match[1]), match[2], match[3]
            frame = read_checked(path, numeric=("x_a", "x_b", "value"))
            if frame is not None:
                out.setdefault((feat_a, feat_b), {})[trial] = frame
    return out


#: Damaged artefact files already reported by this process (one notice per file).
_DAMAGED: set[str] = set()


def read_checked(path: Path, numeric: tuple = ()) -> pd.DataFrame | None:
    """An artefact CSV (`pilid.experiments.artefacts.read_artefact`), or None when it is absent
    or damaged (cut mid-line, a short row): a damaged file counts as missing, with one notice
    per file."""
    from pilid.report.records import notice

    try:
        return read_artefact(path, numeric=numeric)
    except FileNotFoundError:
        return None
    except DamagedArtefact as error:
        if str(path) not in _DAMAGED:
            _DAMAGED.add(str(path))
            notice(f"warning: {error}")
        return None


def dense_grid(x: np.ndarray, n_points: int = GRID_POINTS) -> np.ndarray:
    """``n_points`` evenly spaced points over the range of ``x``."""
    return np.linspace(float(np.min(x)), float(np.max(x)), n_points)


def interpolate(shape: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """A stored piecewise-linear shape (``x_original``, ``value``) evaluated on ``grid``. Rows
    of one ``x_original`` keep their stored order (a stable sort): a peer's step
    (`pilid.inspection.peer_shapes`) stores the left bin's score before the right bin's there."""
    ordered = shape.sort_values("x_original", kind="stable")
    return np.interp(grid, ordered["x_original"].to_numpy(float), ordered["value"].to_numpy(float))


def centred_r2(learned, true) -> float:
    """R^2 of a learned shape against the true one after centring both on the grid
    (`pilid.inspection.fidelity.shape_fidelity` for one feature; NaN for a flat true shape)."""
    from pilid.inspection.fidelity import shape_fidelity

    learned = np.asarray(learned, dtype=float).reshape(-1, 1)
    true = np.asarray(true, dtype=float).reshape(-1, 1)
    return float(shape_fidelity(learned, true)[0][0])


# -- true synthetic shapes ------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _true_shapes(data_json: str):
    """The truth of a synthetic data config: only its truth-defining options reach
    `make_true_shapes` (the truth depends on `data_seed` and m, not on N, noise or the task), so
    no data set is drawn."""
    import inspect

    from pilid.data.synthetic import make_true_shapes

    options = json.loads(data_json)
    options["seed"] = options.pop("data_seed", 0)
    accepted = inspect.signature(make_true_shapes).parameters
    if options.get("generator") is not None and "generator" not in accepted:
        raise PilidError(
            f"the true shapes of the synthetic generator {options['generator']!r} are unknown to "
            "pilid.data.synthetic.make_true_shapes; its shapes cannot be scored"
        )
    return make_true_shapes(**{k: v for k, v in options.items() if k in accepted})


def true_shapes_of(data: dict):
    """The `TrueShapes` of a record's synthetic ``data`` config (cached)."""
    return _true_shapes(json.dumps(dict(data), sort_keys=True))


class TrueShapeEvaluator:
    """Evaluates the true marginal value function of one named feature (``TrueShapes``)."""

    def __init__(self, true_shapes, feature_names):
        if true_shapes is None:
            raise PilidError("the data set has no true shapes; shape fidelity needs synthetic data")
        self.true_shapes = true_shapes
        self.index = {str(name): j for j, name in enumerate(feature_names)}

    def __call__(self, feature: str, grid: np.ndarray) -> np.ndarray:
        """The true u_j of ``feature`` on ``grid`` (the other features at 0.5)."""
        if feature not in self.index:
            raise PilidError(f"feature {feature!r} is not one of the synthetic data's features")
        j = self.index[feature]
        X = np.full((len(grid), len(self.index)), 0.5)
        X[:, j] = grid
        return np.asarray(self.true_shapes.functions(X), dtype=float)[:, j]


def evaluator_for(data: dict) -> TrueShapeEvaluator:
    """The true-shape evaluator of the synthetic data set a record was run on."""
    truth = true_shapes_of(data)
    return TrueShapeEvaluator(truth, truth.feature_names)


def feature_fidelity(
    shapes: pd.DataFrame, truth: Callable[[str, np.ndarray], np.ndarray]
) -> pd.DataFrame:
    """Per feature of one trial's stored ``shapes``: ``feature``, ``r2`` (centred R^2 of learned
    vs true shape on a dense grid of the feature's range, `centred_r2`), ``sse`` (mean squared
    difference of the centred shapes on the grid) and ``sst`` (variance of the true shape there)."""
    rows = []
    for feature, shape in shapes.groupby("feature", sort=False):
        grid = dense_grid(shape["x_original"].to_numpy(float))
        learned, true = interpolate(shape, grid), truth(str(feature), grid)
        centred_learned, centred_true = learned - learned.mean(), true - true.mean()
        rows.append(
            (
                str(feature),
                centred_r2(learned, true),
                float(np.mean((centred_learned - centred_true) ** 2)),
                float(np.mean(centred_true**2)),
            )
        )
    return pd.DataFrame(rows, columns=["feature", "r2", "sse", "sst"])


def trial_scores(
    shapes: pd.DataFrame, truth: Callable[[str, np.ndarray], np.ndarray]
) -> FidelityScores:
    """`FidelityScores` of one trial: mean and median over features of the centred R^2 (features
    with a flat true shape, R^2 NaN, left out) and the variance-weighted R^2
    ``1 - sum_j SSE_j / sum_j SST_j`` over every feature."""
    per = feature_fidelity(shapes, truth)
    r2 = per["r2"].to_numpy(float)
    if not np.isfinite(r2).any():
        return FidelityScores(float("nan"))
    total = float(per["sst"].sum())
    weighted = 1.0 - float(per["sse"].sum()) / total if total > 0 else float("nan")
    return FidelityScores(float(np.nanmean(r2)), float(np.nanmedian(r2)), weighted)


def trial_fidelity(shapes: pd.DataFrame, truth: Callable[[str, np.ndarray], np.ndarray]) -> float:
    """Mean over features of the centred R^2 of learned vs true shape (dense grid per feature)."""
    return trial_scores(shapes, truth).r2


def read_fidelity_cache(root: str | os.PathLike) -> dict[tuple[str, int], FidelityScores]:
    """``{(setting_id, trial): FidelityScores}`` from ``<root>/shape_fidelity.csv`` (empty when
    absent); a cache without the ``r2_median``/``r2_weighted`` columns (or with an empty field)
    gives NaN for them."""
    path = Path(root) / FIDELITY_CACHE
    if not path.is_file():
        return {}
    data = path.read_bytes()
    if not data.endswith(b"\n"):  # empty, or cut mid-line by a writer older than pilid.atomic
        what = "is empty" if not data else "is cut off (its last line has no end)"
        raise PilidError(
            f"{path} {what}; restore it (git checkout -- {path}) or delete it to rebuild it "
            "with python -m pilid.report tables (it needs the shape artefacts)"
        )
    # pandas 3 reads floats exactly
    frame = pd.read_csv(io.BytesIO(data), dtype={"setting_id": str})
    if not {"setting_id", "trial", "r2"} <= set(frame.columns):
        raise PilidError(
            f"{path} lacks the columns setting_id, trial, r2; delete it and rebuild it with "
            "python -m pilid.report tables (it needs the shape artefacts)"
        )
    nan = np.full(len(frame), np.nan)
    extra = [frame[c].to_numpy(float) if c in frame else nan for c in FIDELITY_COLUMNS[3:]]
    return {
        (str(sid), int(trial)): FidelityScores(float(r2), float(median), float(weighted))
        for sid, trial, r2, median, weighted in zip(
            frame["setting_id"], frame["trial"], frame["r2"], *extra
        )
    }


def _field(value: float) -> str:
    """A cache field: the float's repr (round-trips exactly), empty for NaN."""
    return repr(float(value)) if np.isfinite(value) else ""


def write_fidelity_cache(root: str | os.PathLike, scores: pd.DataFrame) -> Path | None:
    """Merge the per-trial ``scores`` (``setting_id, trial, value`` and, where known,
    ``r2_median, r2_weighted``) into the cache file and write it, sorted, when its content
    changes. The median and variance-weighted columns are written only when some trial has
    them. Returns the path written, or None."""
    path = Path(root) / FIDELITY_CACHE
    merged = read_fidelity_cache(root)
    nan = np.full(len(scores), np.nan)
    extra = [scores[c].to_numpy(float) if c in scores else nan for c in FIDELITY_COLUMNS[3:]]
    for sid, trial, value, median, weighted in zip(
        scores["setting_id"], scores["trial"], scores["value"], *extra
    ):
        merged[(str(sid), int(trial))] = FidelityScores(
            float(value), float(median), float(weighted)
        )
    if not merged:
        return None
    wide = any(np.isfinite(s.r2_median) or np.isfinite(s.r2_weighted) for s in merged.values())
    columns = FIDELITY_COLUMNS if wide else FIDELITY_COLUMNS[:3]
    lines = [",".join(columns)]
    for sid, trial in sorted(merged):
        fields = merged[(sid, trial)][: len(columns) - 2]
        lines.append(",".join([sid, str(trial), repr(fields[0]), *map(_field, fields[1:])]))
    text = "\n".join(lines) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return None
    write_text(path, text)  # atomic: a killed report leaves the old cache, never a torn one
    return path


def fidelity_frame(
    records: pd.DataFrame,
    root: str | os.PathLike,
    evaluator: Callable[[dict], Callable] = evaluator_for,
    cache: dict[tuple[str, int], FidelityScores] | None = None,
) -> pd.DataFrame:
    """Shape fidelity of every record that has stored shapes: ``records`` with ``value``
    replaced by the trial's mean centred R^2 and the columns ``r2_median``, ``r2_weighted``
    added (`trial_scores`). A record without stored shapes takes its scores from ``cache``
    (default: ``read_fidelity_cache(root)``; NaN median and variance-weighted R^2 where the cache
    has the plain mean only), else it is dropped; so is a record whose true shapes are unknown
    (one notice per data config)."""
    from pilid.report.records import notice

    cache = read_fidelity_cache(root) if cache is None else cache
    rows, values = [], []
    evaluators: dict[str, Callable | None] = {}
    for position, record in enumerate(records.itertuples(index=False)):
        shapes = read_shapes(root, record.setting_id, record.trial)
        if shapes is None:
            cached = cache.get((str(record.setting_id), int(record.trial)))
            if cached is not None:
                rows.append(position)
                values.append(FidelityScores(*np.atleast_1d(np.asarray(cached, dtype=float))))
            continue
        data = dict(record.data) if isinstance(record.data, dict) else {}
        key = json.dumps(data, sort_keys=True)
        if key not in evaluators:
            try:
                evaluators[key] = evaluator(data)
            except PilidError as error:
                notice(f"shape fidelity skipped for {key}: {error}")
                evaluators[key] = None
        if evaluators[key] is None:
            continue
        rows.append(position)
        values.append(trial_scores(shapes, evaluators[key]))
    out = records.iloc[rows].copy()
    scores = np.asarray(values, dtype=float).reshape(len(values), len(FidelityScores._fields))
    out["value"] = scores[:, 0]
    out["r2_median"] = scores[:, 1]
    out["r2_weighted"] = scores[:, 2]
    out["metric"] = "r2"
    return out.reset_index(drop=True)
