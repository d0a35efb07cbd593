"""Per-trial artefacts: what the runner stores beside a record for the figures, and where.

The file layout (read by the report as well, ``pilid.report.shapes``):
``<results_dir>/artifacts/<setting_id>/<kind>-trial<k>.csv`` with ``kind`` ``shapes`` (the learned
marginal value functions u_j, Definition 3, or a peer's main effects:
``feature, x, x_original, value``) or
``interactions`` (the active blocks' feature groups), and per strong feature pair
``interaction-grid-trial<k>-<a>__<b>.csv`` (Figure 5's joint effect: ``x_a, x_b, value``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from pilid.atomic import is_disk_full, replacing
from pilid.errors import PilidError

#: The folder of the artefacts inside a results directory.
ARTIFACTS_DIR = "artifacts"
#: The kind of a pair's joint-effect grid (``artefact_name(("interaction-grid", a, b), k)``).
GRID_KIND = "interaction-grid"
#: ``interaction-grid-trial<k>-<a>__<b>.csv``: groups trial, feature a, feature b.
GRID_FILE = re.compile(r"^interaction-grid-trial(\d+)-(.+)__(.+)\.csv$")


def artifact_dir(root: str | os.PathLike, setting_id: str) -> Path:
    """``<root>/artifacts/<setting_id>``: the artefacts of one setting."""
    return Path(root) / ARTIFACTS_DIR / str(setting_id)


def artefact_name(kind: str | tuple, trial: int) -> str:
    """File stem of an artefact: ``<kind>-trial<k>``, or for a pair's interaction grid
    ``interaction-grid-trial<k>-<a>__<b>`` (feature names used as they are, braces too)."""
    if isinstance(kind, tuple):
        prefix, *features = kind
        return f"{prefix}-trial{trial}-" + "__".join(str(f) for f in features)
    return f"{kind}-trial{trial}"


def artefact_path(root: str | os.PathLike, setting_id: str, kind: str | tuple, trial: int) -> Path:
    """The CSV file of one artefact of one trial."""
    return artifact_dir(root, setting_id) / f"{artefact_name(kind, trial)}.csv"


def artefact_frames(estimator, split) -> dict[str, Any]:
    """Per-trial tables for the figures: learned shapes (and block interactions). A model of
    K > 2 classes (`pilid.models.multiclass`) keeps its first column ``class`` in both tables
    and stores no interaction grids (they are per class; its ``class_estimators_`` have them).
    The shapes are an estimator's ``shape_functions()`` or, for a peer without one (an EBM, a
    GA2M, an APLR, also inside `pilid.models.frame_input.FrameInput`), its main effects read by
    `pilid.inspection.peer_shapes.peer_shape_functions`."""
    import pandas as pd

    from pilid.inspection.peer_shapes import peer_shape_functions

    frames: dict[str, Any] = {}
    by_class = getattr(estimator, "class_estimators_", None) is not None
    if hasattr(estimator, "shape_functions"):
        table = estimator.shape_functions()
    else:  # a peer (EBM, APLR): its main effects, read off apart from the estimator
        table = peer_shape_functions(estimator)
        table = table if table is not None and len(table) else None
    if table is not None:
        shapes = pd.DataFrame(table).copy()
        index = _feature_index(shapes["feature"], list(split.feature_names))
        x = shapes["x"].to_numpy(dtype=float)
        scale = np.asarray(split.x_scale, dtype=float)[index]
        offset = np.asarray(split.x_offset, dtype=float)[index]
        shapes["feature"] = np.asarray(split.feature_names, dtype=object)[index]
        shapes["x_original"] = x * scale + offset
        columns = ["class"] if "class" in shapes.columns else []
        frames["shapes"] = shapes[[*columns, "feature", "x", "x_original", "value"]]
    if hasattr(estimator, "interactions_"):
        names = np.asarray(split.feature_names, dtype=object)
        found = estimator.interactions_()
        per_class = found if isinstance(found, dict) else {None: found}
        rows = [
            (label, ";".join(names[_feature_index(_as_tuple(group), list(names))]))
            for label, groups in per_class.items()
            for group in groups
        ]
        table = pd.DataFrame({"block": range(len(rows)), "features": [r[1] for r in rows]})
        if isinstance(found, dict):
            table.insert(0, "class", [r[0] for r in rows])
        frames["interactions"] = table
    # Figure 5's grids: of a model that lists its interactions (PiLiB, NIT); a PiLiD's
    # `interaction_grid` reads any pair, so there is no strongest pair to store
    if hasattr(estimator, "interactions_") and hasattr(estimator, "interaction_grid"):
        if not by_class:
            frames.update(_interaction_grids(estimator, split))
    return frames


MAX_GRID_PAIRS = 8  # interaction grids stored per trial: the pairs of the strongest blocks


def ranked_pairs(estimator, names: list[str]) -> list[tuple[int, int]]:
    """Column pairs used by the active blocks of order >= 2, strongest first.

    A pair's strength is the largest ``block_interaction_share_`` (the std of the part of a
    block's output that no sum of one-feature functions explains, over the output's std) of
    the blocks that use it, then its largest ``block_share_``; ties keep column order. Every
    block of order >= 2 counts, even one whose joint effect is mostly additive: the heat map
    shows what the block learned, and on spambase the blocks are weak.
    """
    from itertools import combinations

    strength: dict[tuple[int, int], tuple[float, float]] = {}
    active = getattr(estimator, "active_blocks_", None)
    features = getattr(estimator, "block_features_", None)
    if callable(active) and features is not None:
        inter = np.asarray(getattr(estimator, "block_interaction_share_", []), dtype=float)
        share = np.asarray(getattr(estimator, "block_share_", []), dtype=float)
        for i in active():
            used = np.flatnonzero(np.asarray(features[i]))
            if len(used) < 2:
                continue
            key = (
                float(inter[i]) if i < len(inter) else 0.0,
                float(share[i]) if i < len(share) else 0.0,
            )
            for pair in combinations(sorted(int(j) for j in used), 2):
                strength[pair] = max(strength.get(pair, key), key)
    else:  # an estimator without block strengths: the groups it lists, in its order
        for group in estimator.interactions_(min_order=2, min_interaction=0.0):
            index = sorted(_feature_index(_as_tuple(group), names).tolist())
            for pair in combinations(index, 2):
                strength.setdefault(pair, (0.0, -len(strength)))
    return sorted(strength, key=lambda p: (-strength[p][0], -strength[p][1], p))


def _interaction_grids(estimator, split) -> dict[str, Any]:
    """Figure 5's data: the joint effect of the ``MAX_GRID_PAIRS`` strongest feature pairs
    (``ranked_pairs``) on a 50 x 50 grid in original units, as
    ``interaction-grid-trial<k>-<a>__<b>.csv``."""
    names = list(split.feature_names)
    frames: dict[str, Any] = {}
    for a, b in ranked_pairs(estimator, names)[:MAX_GRID_PAIRS]:
        grid = estimator.interaction_grid(a, b).copy()
        grid["x_a"] = grid["x_a"] * split.x_scale[a] + split.x_offset[a]
        grid["x_b"] = grid["x_b"] * split.x_scale[b] + split.x_offset[b]
        frames[(GRID_KIND, names[a], names[b])] = grid
    return frames


def _as_tuple(group) -> tuple:
    return (group,) if isinstance(group, str | int | np.integer) else tuple(group)


def _feature_index(features, names: list[str]) -> np.ndarray:
    """Column index of each shape row's feature: a name of the split, an index, or ``x<k>``."""
    position = {name: j for j, name in enumerate(names)}
    values = list(features)
    unique = {v: _one_index(v, position, len(names)) for v in dict.fromkeys(values)}
    return np.array([unique[v] for v in values], dtype=int)


def _one_index(value, position: dict[str, int], m: int) -> int:
    if isinstance(value, str) and value in position:
        return position[value]
    text = str(value)
    for candidate in (text, text[1:] if text[:1] == "x" else None):
        if candidate is not None and candidate.isdigit() and int(candidate) < m:
            return int(candidate)
    raise PilidError(f"shape_functions() names feature {value!r}, which is not in the split")


def write_artefacts(directory: Path, trial: int, frames: dict[str, Any]) -> None:
    """Write ``frames`` as the trial's artefact files, each replaced atomically
    (`pilid.atomic.replacing`: a failed write leaves the old file and no temporary file).

    A write that fails raises ``PilidError`` (one line; for a full disk: free space and run the
    same command to resume, the trial having no record yet)."""
    if not frames:
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for kind, frame in frames.items():
            with replacing(directory / f"{artefact_name(kind, trial)}.csv") as temporary:
                frame.to_csv(temporary, index=False)
    except OSError as error:
        if is_disk_full(error):
            raise PilidError(
                f"cannot write the artefacts of trial {trial} to {str(directory)!r}: the disk is "
                f"full ({error.strerror}); the trials of this block are not recorded; free space "
                "and run the same command to resume"
            ) from error
        raise PilidError(
            f"cannot write the artefacts of trial {trial} to {str(directory)!r} "
            f"({error.strerror or type(error).__name__}); make it writable or set results_dir "
            "to a writable directory, then run the same command to resume"
        ) from error


class DamagedArtefact(PilidError):
    """An artefact file is not a whole CSV table (cut mid-line, a row of the wrong width)."""


def read_artefact(path: str | os.PathLike, columns: tuple = (), numeric: tuple = ()):
    """An artefact CSV as a DataFrame, checked whole: it must end with a newline (a file cut
    mid-line does not), parse as CSV, hold every column of ``columns``, and have a number in
    every row of the ``numeric`` columns it holds (a row with fewer fields than the header has
    an empty field at its end). Raises ``DamagedArtefact`` (one line) otherwise;
    ``FileNotFoundError`` when it does not exist."""
    import io

    import pandas as pd

    path = Path(path)
    data = path.read_bytes()
    fix = "treated as missing; rerun its setting with force=true to rewrite it"
    if not data.endswith(b"\n"):
        what = "is empty" if not data else "is cut off (its last line has no end)"
        raise DamagedArtefact(f"{path} {what}; {fix}")
    try:
        frame = pd.read_csv(io.BytesIO(data))
    except (ValueError, UnicodeDecodeError) as error:  # pandas' ParserError is a ValueError
        first = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        raise DamagedArtefact(f"{path} is not a whole CSV table ({first}); {fix}") from error
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DamagedArtefact(f"{path} lacks the column(s) {', '.join(missing)}; {fix}")
    present = [c for c in numeric if c in frame.columns]
    if present:
        values = frame[present].apply(pd.to_numeric, errors="coerce")
        empty = values.isna().any(axis=1).to_numpy()
        if empty.any():
            line = int(empty.argmax()) + 2  # the header is line 1
            raise DamagedArtefact(
                f"{path}: line {line} has fewer fields than the header or a field that is not "
                f"a number; {fix}"
            )
    return frame
