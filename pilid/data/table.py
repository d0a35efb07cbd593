"""Any table as a data set: ``data=table data.path=<file> data.target=<column>``.

A CSV or Parquet file becomes a ``Dataset`` like the UCI sets: the same 80/20 split per trial,
one-hot encoding of the categorical columns (the listed ones, plus every column of text,
``category`` or ``bool`` type) and standardisation of the numeric ones with the training part's
statistics (``pilid.data.split.make_split``). Rows with a missing value in a used column are
dropped, and how many is logged and kept in ``Dataset.info`` (as the UCI loaders do).
``frame_dataset`` does the same for a pandas DataFrame already in memory (``load_table`` is
`read_frame` followed by it; the development suite's tables, `pilid.data.suite`, come this way).

A classification target may hold any two values, the larger one (in sort order) the positive
class, or up to `MAX_CLASSES` classes (coded 0..K-1 in sort order, scored by one-vs-rest AUC,
`pilid.models.metrics.score`); ``info["classes"]`` keeps the labels. Every problem with the
file or the options is one line naming it and the fix, in the command line's syntax.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.data.dataset import Dataset
from pilid.data.files import file_sha256
from pilid.errors import DataFileError, PilidError
from pilid.tasks import TASK_METRIC, TASKS

log = logging.getLogger("pilid.data")

#: File suffixes ``load_table`` reads.
READERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Most distinct values a classification target may have before it looks like a regression one.
MAX_CLASSES = 20


def _columns(value, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise PilidError(
            f"data.{key}={value!r} is invalid; give a list of column names, e.g. "
            f"data.{key}=[colour,size]"
        )
    return list(value)


def read_frame(path: str | Path) -> pd.DataFrame:
    """The table at ``path`` (CSV or Parquet), with one-line errors for a missing, empty or
    unreadable file."""
    file = Path(str(path)).expanduser()
    kind = READERS.get(file.suffix.lower())
    if kind is None:
        raise PilidError(
            f"data.path={path} is neither a .csv nor a .parquet file; convert it (e.g. "
            "DataFrame.to_csv) and point data.path at it"
        )
    if not file.is_file():
        raise DataFileError(
            f"data.path={path}: no such file (from {Path.cwd()}); give the table's path, "
            "absolute or relative to where you run the command"
        )
    if file.stat().st_size == 0:
        raise DataFileError(f"data.path={path} is an empty file; point data.path at the table")
    try:
        if kind == "csv":
            frame = pd.read_csv(file)
        else:
            frame = pd.read_parquet(file)
    except ImportError as error:
        raise PilidError(
            f"reading {file.name} needs a Parquet engine ({error}); pip install pyarrow, or save "
            "the table as CSV"
        ) from None
    except (pd.errors.EmptyDataError, pd.errors.ParserError, OSError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataFileError(f"data.path={path} cannot be read as {kind}: {first}") from None
    if frame.empty:
        raise DataFileError(f"data.path={path} holds no rows; point data.path at a filled table")
    return frame


def _target(values: pd.Series, column: str, task: str) -> tuple[np.ndarray, dict]:
    """The target as the ``Dataset`` wants it (float, or 0/1) and what was done to it."""
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    levels = pd.unique(values)
    if task == "regression":
        if not numeric:
            raise PilidError(
                f"data.target={column} holds text ({len(levels)} distinct values), not numbers; "
                "use data.task=classification, or a numeric column"
            )
        return values.to_numpy(dtype=np.float64), {}
    if len(levels) > MAX_CLASSES:
        whole = numeric and np.all(np.mod(values.to_numpy(dtype=np.float64), 1) == 0)
        if numeric and not whole:
            raise PilidError(
                f"data.target={column} has {len(levels)} distinct float values: a regression "
                "target; use data.task=regression"
            )
        raise PilidError(
            f"data.target={column} has {len(levels)} classes, more than {MAX_CLASSES}: pick a "
            "column with fewer classes, or data.task=regression for a numeric one"
        )
    if len(levels) < 2:
        raise PilidError(
            f"data.target={column} holds one value only ({levels[0]!r}); a classification "
            "target needs two classes"
        )
    classes = sorted(levels.tolist(), key=lambda v: (str(type(v)), v))
    y = pd.Index(classes).get_indexer(values.to_numpy()).astype(np.int64)  # 0..K-1 (0/1 if K=2)
    return y, {"classes": [_plain(c) for c in classes]}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def load_table(
    path: str,
    target: str,
    task: str,
    categorical: list[str] | None = None,
    drop: list[str] | None = None,
    sha256: str | None = None,
    standardize_target: bool = False,
    name: str = "table",
) -> Dataset:
    """A CSV/Parquet file as a ``Dataset`` (see the module): `read_frame`, then `frame_dataset`.

    ``target``: the column to predict; ``task``: ``classification`` (two or more classes, AUC) or
    ``regression`` (MSE); ``categorical``: columns to one-hot encode besides those of text,
    ``category`` or ``bool`` type; ``drop``: columns to leave out; ``sha256``: the file's
    checksum, checked when given; ``standardize_target``: report a regression MSE in units of
    the target's training standard deviation (as bike's).
    """
    _check_task(task)
    categorical = _columns(categorical, "categorical")
    drop = _columns(drop, "drop")
    frame = read_frame(path)
    file = Path(str(path)).expanduser()
    info: dict = {"file": str(file), "rows_raw": len(frame)}
    if sha256:
        actual = file_sha256(file)
        if actual != str(sha256).lower():
            raise DataFileError(
                f"data.path={path} fails its sha256 check (data.sha256 starts {str(sha256)[:12]}, "
                f"the file's is {actual[:12]}...): point data.path at the right file, or give "
                f"data.sha256={actual}"
            )
        info["sha256"] = actual
    return frame_dataset(
        frame,
        target,
        task,
        categorical=categorical,
        drop=drop,
        standardize_target=standardize_target,
        name=name,
        source=file.name,
        info=info,
    )


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise PilidError(
            f"data.task={task!r} is invalid; use data.task=classification or data.task=regression"
        )


def frame_dataset(
    frame: pd.DataFrame,
    target: str,
    task: str,
    categorical: list[str] | None = None,
    drop: list[str] | None = None,
    standardize_target: bool = False,
    name: str = "table",
    source: str | None = None,
    info: dict | None = None,
) -> Dataset:
    """A DataFrame as a ``Dataset``, as `load_table` makes one of a file (see the module).

    The same options as `load_table` (without the file's ``sha256``): rows with a missing value
    in a used column are dropped, text / ``category`` / ``bool`` columns and those listed in
    ``categorical`` become categories, the others float64; the target is coded as the task
    wants it. ``source`` names the table in messages (default: "the DataFrame"); ``info`` is
    provenance to keep in ``Dataset.info`` (``rows_raw`` and ``rows_removed`` are added).
    ``frame`` itself is left as it is.
    """
    _check_task(task)
    if not isinstance(frame, pd.DataFrame):
        raise PilidError(
            f"frame_dataset needs a pandas DataFrame, not {type(frame).__name__}; wrap the "
            "table in pd.DataFrame"
        )
    source = "the DataFrame" if source is None else str(source)
    if frame.empty:
        raise DataFileError(f"{source} holds no rows; give a filled table")
    categorical = _columns(categorical, "categorical")
    drop = _columns(drop, "drop")
    info = {**(info or {}), "rows_raw": len(frame)}
    columns = [str(c) for c in frame.columns]
    frame = frame.set_axis(columns, axis=1)
    for key, names in (("target", [target]), ("drop", drop), ("categorical", categorical)):
        unknown = [c for c in names if c not in columns]
        if unknown:
            raise PilidError(
                f"data.{key}: column {unknown[0]!r} is not in {source}; its columns: "
                f"{', '.join(columns[:30])}{' ...' if len(columns) > 30 else ''}"
            )
    features = [c for c in columns if c != target and c not in drop]
    if not features:
        raise PilidError(f"{source} has no feature column left besides data.target={target}")
    frame = frame[[*features, target]]
    keep = frame.notna().all(axis=1).to_numpy()
    removed = int((~keep).sum())
    if removed:
        log.info("%s: rule 'missing value' removed %d of %d rows", name, removed, len(frame))
        frame = frame.loc[keep].reset_index(drop=True)
    info["rows_removed"] = {"missing value": removed}
    if frame.empty:
        raise PilidError(f"every row of {source} has a missing value; fill or drop columns")
    y, target_info = _target(frame[target], target, task)
    info.update(target_info)
    X = frame[features].copy()
    kinds = [c for c in features if c in categorical or not pd.api.types.is_numeric_dtype(X[c])]
    kinds += [c for c in features if pd.api.types.is_bool_dtype(X[c]) and c not in kinds]
    for column in kinds:
        text = X[column].astype(str)
        X[column] = text.astype(pd.CategoricalDtype(sorted(text.unique())))
    for column in features:
        if column not in kinds:
            X[column] = X[column].astype(np.float64)
    return Dataset(
        name=str(name),
        task=task,
        metric=TASK_METRIC[task],
        X=X,
        y=y,
        categorical=[c for c in features if c in kinds],
        standardize_target=bool(standardize_target),
        info=info,
    )
