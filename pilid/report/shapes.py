"""Stored shape artefacts: reading them, the true synthetic shapes, and shape fidelity (R^2).

The runner stores, per trial, ``<results>/artifacts/<setting_id>/shapes-trial<k>.csv`` with the
learned marginal value functions u_j (Definition 3, piecewise linear between the knots of
Definition 1) as ``feature, x, x_original, value``. Because u_j is linear between knots, it is
evaluated anywhere by linear interpolation of its stored points; the report compares it with the
true function on a dense uniform grid of the feature's range.

The artefacts are large and not committed; the per-trial fidelity derived from them is kept beside
the records (``<results>/shape_fidelity.csv``: ``setting_id, trial, r2``, written by
``python -m pilid.report tables``), so that the shape-fidelity table is rebuilt, value for value,
where the artefacts are absent (a fresh clone).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.experiments.artefacts import GRID_FILE, artefact_path, artifact_dir

#: Points of the dense grid on which shapes are compared and averaged.
GRID_POINTS = 200

#: The per-trial fidelity derived from the artefacts, beside ``records.jsonl``.
FIDELITY_CACHE = "shape_fidelity.csv"


def read_shapes(root: str | os.PathLike, setting_id: str, trial: int) -> pd.DataFrame | None:
    """The stored shapes of one trial (``feature, x, x_original, value``), or None if absent."""
    path = artefact_path(root, setting_id, "shapes", int(trial))
    if not path.exists():
        return None
    frame = pd.read_csv(path)
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
            out.setdefault((feat_a, feat_b), {})[trial] = pd.read_csv(path)
    return out


def dense_grid(x: np.ndarray, n_points: int = GRID_POINTS) -> np.ndarray:
    """``n_points`` evenly spaced points over the range of ``x``."""
    return np.linspace(float(np.min(x)), float(np.max(x)), n_points)


def interpolate(shape: pd.DataFrame, grid: np.ndarray) -> np.ndarray:
    """A stored piecewise-linear shape (``x_original``, ``value``) evaluated on ``grid``."""
    ordered = shape.sort_values("x_original")
    return np.interp(grid, ordered["x_original"].to_numpy(float), ordered["value"].to_numpy(float))


def centred_r2(learned, true) -> float:
    """R^2 of a learned shape against the true one after centring both on the grid
    (`pilid.models.fidelity.shape_fidelity` for one feature; NaN for a flat true shape)."""
    from pilid.models.fidelity import shape_fidelity

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


def trial_fidelity(shapes: pd.DataFrame, truth: Callable[[str, np.ndarray], np.ndarray]) -> float:
    """Mean over features of the centred R^2 of learned vs true shape (dense grid per feature)."""
    scores = []
    for feature, shape in shapes.groupby("feature", sort=False):
        grid = dense_grid(shape["x_original"].to_numpy(float))
        scores.append(centred_r2(interpolate(shape, grid), truth(str(feature), grid)))
    return float(np.nanmean(scores)) if scores else float("nan")


def read_fidelity_cache(root: str | os.PathLike) -> dict[tuple[str, int], float]:
    """``{(setting_id, trial): r2}`` from ``<root>/shape_fidelity.csv`` (empty when absent)."""
    path = Path(root) / FIDELITY_CACHE
    if not path.is_file():
        return {}
    frame = pd.read_csv(path, dtype={"setting_id": str})  # pandas 3 reads floats exactly
    if not {"setting_id", "trial", "r2"} <= set(frame.columns):
        raise PilidError(
            f"{path} lacks the columns setting_id, trial, r2; delete it and rebuild it with "
            "python -m pilid.report tables (it needs the shape artefacts)"
        )
    return {
        (str(sid), int(trial)): float(r2)
        for sid, trial, r2 in zip(frame["setting_id"], frame["trial"], frame["r2"])
    }


def write_fidelity_cache(root: str | os.PathLike, scores: pd.DataFrame) -> Path | None:
    """Merge the per-trial ``scores`` (``setting_id, trial, value``) into the cache file and
    write it, sorted, when its content changes. Returns the path written, or None."""
    path = Path(root) / FIDELITY_CACHE
    merged = read_fidelity_cache(root)
    for sid, trial, value in zip(scores["setting_id"], scores["trial"], scores["value"]):
        merged[(str(sid), int(trial))] = float(value)
    if not merged:
        return None
    lines = ["setting_id,trial,r2"]
    lines += [f"{sid},{trial},{merged[(sid, trial)]!r}" for sid, trial in sorted(merged)]
    text = "\n".join(lines) + "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return None
    path.write_text(text, encoding="utf-8")
    return path


def fidelity_frame(
    records: pd.DataFrame,
    root: str | os.PathLike,
    evaluator: Callable[[dict], Callable] = evaluator_for,
    cache: dict[tuple[str, int], float] | None = None,
) -> pd.DataFrame:
    """Shape fidelity of every record that has stored shapes: ``records`` with ``value``
    replaced by the trial's mean centred R^2. A record without stored shapes takes its value
    from ``cache`` (default: ``read_fidelity_cache(root)``), else it is dropped; so is a record
    whose true shapes are unknown (one notice per data config)."""
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
                values.append(cached)
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
        values.append(trial_fidelity(shapes, evaluators[key]))
    out = records.iloc[rows].copy()
    out["value"] = np.asarray(values, dtype=float)
    out["metric"] = "r2"
    return out.reset_index(drop=True)
