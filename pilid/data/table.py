"""Any table as a data set: ``data=table data.path=<file> data.target=<column>``.

A CSV or Parquet file becomes a ``Dataset`` like the UCI sets: the same 80/20 split per trial,
one-hot encoding of the categorical columns (the listed ones, plus every column of text,
``category`` or ``bool`` type) and standardisation of the numeric ones with the training part's
statistics (``pilid.data.split.make_split``). ``frame_dataset`` does the same for a pandas
DataFrame already in memory (``load_table`` is `read_frame` followed by it; the development
suite's tables, `pilid.data.suite`, come this way).

Missing values (``missing``, `MISSING_RULES`): ``"drop"`` (the functions' default, as the UCI
loaders do) drops every row with a missing value in a used column; ``"keep"`` (``data=table``'s
default, ``conf/data/table.yaml``) drops only the rows without a target and keeps NaN in the
features: a numeric column keeps it as NaN, a missing category becomes a level of its own at
the split (`pilid.data.split.encode`). The runner hands such a dataset to a model that takes NaN
(PiLiD, PiLiB, NIT, the MLP, LightGBM, random forests: scikit-learn's ``allow_nan`` tag) as it
is, and to one that does not through `drop_missing` (the rows with a missing number dropped).
Either way the rows removed are logged and counted in ``Dataset.info["rows_removed"]``.

A classification target may hold any two values, the larger one (in sort order) the positive
class, or up to `MAX_CLASSES` classes (coded 0..K-1 in sort order, scored by one-vs-rest AUC,
`pilid.models.metrics.score`); ``info["classes"]`` keeps the labels. Every problem with the
file or the options is one line naming it and the fix, in the command line's syntax.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.data.dataset import Dataset
from pilid.errors import DataFileError, PilidError
from pilid.tasks import TASK_METRIC, TASKS

log = logging.getLogger("pilid.data")

#: File suffixes ``load_table`` reads.
READERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Most distinct values a classification target may have before it looks like a regression one.
MAX_CLASSES = 20
#: What ``missing`` may say: keep the rows with a missing feature value (NaN), or drop every row
#: with a missing value in a used column.
MISSING_RULES = ("keep", "drop")


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


def _table_file(path: str | Path) -> tuple[Path, str]:
    """The file at ``path`` and its reader, with one-line errors for a missing or empty file."""
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
    return file, kind


def _read_bytes(path: str | Path) -> tuple[Path, str, bytes]:
    file, kind = _table_file(path)
    try:
        return file, kind, file.read_bytes()
    except OSError as error:
        raise DataFileError(f"data.path={path} cannot be read: {error.strerror}") from None


def _parse(path: str | Path, kind: str, raw: bytes) -> pd.DataFrame:
    """The table in ``raw`` (the bytes of ``path``), with one-line errors."""
    try:
        if kind == "csv":
            frame = pd.read_csv(io.BytesIO(raw))
        else:
            frame = pd.read_parquet(io.BytesIO(raw))
    except ImportError as error:
        raise PilidError(
            f"reading {Path(str(path)).name} needs a Parquet engine ({error}); pip install "
            "pyarrow, or save the table as CSV"
        ) from None
    except (pd.errors.EmptyDataError, pd.errors.ParserError, OSError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataFileError(f"data.path={path} cannot be read as {kind}: {first}") from None
    if frame.empty:
        raise DataFileError(f"data.path={path} holds no rows; point data.path at a filled table")
    return frame


def read_frame(path: str | Path) -> pd.DataFrame:
    """The table at ``path`` (CSV or Parquet), with one-line errors for a missing, empty or
    unreadable file."""
    _, kind, raw = _read_bytes(path)
    return _parse(path, kind, raw)


def table_sha256(path: str | Path) -> str:
    """SHA-256 of the bytes of the table at ``path`` (relative to the working directory), with
    `read_frame`'s one-line errors for a missing or empty file: what ``data.sha256`` checks and
    what a table's setting id holds (`pilid.experiments.setting.table_identity`)."""
    return hashlib.sha256(_read_bytes(path)[2]).hexdigest()


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
    missing: str = "drop",
) -> Dataset:
    """A CSV/Parquet file as a ``Dataset`` (see the module): `read_frame`, then `frame_dataset`.

    ``target``: the column to predict; ``task``: ``classification`` (two or more classes, AUC) or
    ``regression`` (MSE); ``categorical``: columns to one-hot encode besides those of text,
    ``category`` or ``bool`` type; ``drop``: columns to leave out; ``sha256``: the file's
    checksum, checked when given against the very bytes the table is parsed from;
    ``standardize_target``: report a regression MSE in units of the target's training standard
    deviation (as bike's); ``missing``: ``"drop"`` the rows with a missing value, or ``"keep"``
    NaN in the features (see the module).
    """
    _check_task(task)
    _check_missing(missing)
    categorical = _columns(categorical, "categorical")
    drop = _columns(drop, "drop")
    file, kind, raw = _read_bytes(path)
    info: dict = {"file": str(file)}
    if sha256:
        actual = hashlib.sha256(raw).hexdigest()
        if actual != str(sha256).lower():
            raise DataFileError(
                f"data.path={path} fails its sha256 check (data.sha256 starts {str(sha256)[:12]}, "
                f"the file's is {actual[:12]}...: another file, or one edited since): point "
                f"data.path at the right file, or give data.sha256={actual}"
            )
        info["sha256"] = actual
    frame = _parse(path, kind, raw)
    info["rows_raw"] = len(frame)
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
        missing=missing,
    )


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise PilidError(
            f"data.task={task!r} is invalid; use data.task=classification or data.task=regression"
        )


def _check_missing(missing: str) -> None:
    if missing not in MISSING_RULES:
        raise PilidError(
            f"data.missing={missing!r} is invalid; use data.missing=keep (NaN kept for the models "
            "that take it) or data.missing=drop (rows with a missing value dropped)"
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
    missing: str = "drop",
) -> Dataset:
    """A DataFrame as a ``Dataset``, as `load_table` makes one of a file (see the module).

    The same options as `load_table` (without the file's ``sha256``): ``missing="drop"`` drops
    the rows with a missing value in a used column, ``"keep"`` only those without a target (the
    features keep NaN; a column with no value at all is refused); text / ``category`` /
    ``bool`` columns and those listed in ``categorical`` become categories (NaN: a missing
    category), the others float64; the target is coded as the task wants it. ``source`` names
    the table in messages (default: "the DataFrame"); ``info`` is provenance to keep in
    ``Dataset.info`` (``rows_raw`` and ``rows_removed`` are added). ``frame`` itself is left as
    it is.
    """
    _check_task(task)
    _check_missing(missing)
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
    rule = "missing value" if missing == "drop" else "missing target"
    keep = (frame if missing == "drop" else frame[[target]]).notna().all(axis=1).to_numpy()
    removed = int((~keep).sum())
    if removed:
        log.info("%s: rule '%s' removed %d of %d rows", name, rule, removed, len(frame))
        frame = frame.loc[keep].reset_index(drop=True)
    info["rows_removed"] = {rule: removed}
    if frame.empty:
        what = "a missing value" if missing == "drop" else "no target"
        raise PilidError(f"every row of {source} has {what}; fill or drop columns")
    if missing == "keep":
        empty = [c for c in features if frame[c].isna().all()]
        if empty:
            raise PilidError(
                f"column {empty[0]!r} of {source} holds no value; leave it out with "
                f"data.drop=[{','.join(empty)}]"
            )
        gaps = int(frame[features].isna().any(axis=1).sum())
        if gaps:
            log.info("%s: %d of %d rows have a missing value, kept (NaN)", name, gaps, len(frame))
    y, target_info = _target(frame[target], target, task)
    info.update(target_info)
    X = frame[features].copy()
    kinds = [c for c in features if c in categorical or not pd.api.types.is_numeric_dtype(X[c])]
    kinds += [c for c in features if pd.api.types.is_bool_dtype(X[c]) and c not in kinds]
    for column in kinds:
        text = X[column].astype(str).where(X[column].notna())  # NaN: a missing category
        X[column] = text.astype(pd.CategoricalDtype(sorted(text.dropna().unique())))
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


def drop_missing(dataset: Dataset, why: str) -> Dataset:
    """``dataset`` without its rows that have a missing (NaN) value in a numeric column: what a
    model that takes no NaN is given of a table loaded with ``missing="keep"`` (a missing
    category needs no row dropped: it is a level of its own, `pilid.data.split.encode`).

    The rows removed are logged (``why`` says for what) and counted in ``info["rows_removed"]``
    under ``"missing value"``; ``dataset`` itself is left as it is (returned when no row goes).
    """
    categorical = set(dataset.categorical or [])
    numeric = [c for c in dataset.X.columns if c not in categorical]
    keep = dataset.X[numeric].notna().all(axis=1).to_numpy()
    removed = int((~keep).sum())
    if not removed:
        return dataset
    if not keep.any():
        raise PilidError(
            f"every row of {dataset.name!r} has a missing number, and {why}; use a model that "
            "takes NaN (e.g. model=pilid) or fill the table"
        )
    log.info(
        "%s: rule 'missing value' removed %d of %d rows (%s)", dataset.name, removed, len(keep), why
    )
    counts = {**dataset.info.get("rows_removed", {})}
    counts["missing value"] = counts.get("missing value", 0) + removed
    return dataclasses.replace(
        dataset,
        X=dataset.X.loc[keep].reset_index(drop=True),
        y=dataset.y[keep],
        info={**dataset.info, "rows_removed": counts},
    )
