"""One trial's data: the paper's 80/20 train/test split (Section 4.1), encoded and scaled.

Categorical columns are one-hot encoded with the categories of the whole dataset, so every trial
has the same columns (``encoding="onehot"``, the paper's); with ``encoding="codes"`` (for a
model that takes categorical columns itself, `ENCODINGS`) each is one column of its level's
position in those categories, the missing level last. Numeric columns are standardised with the
training part's mean and standard deviation only, and so is a regression target when the
dataset asks for it (bike: MSE is reported in that standardised unit, as in the paper).

Missing values (a table loaded with ``missing="keep"``, `pilid.data.table`): NaN in a numeric
column stays NaN (the mean and standard deviation are those of the training part's values), for
the models that take it; a missing category is a level of its own, the indicator column
``"<column>=(missing)"`` (`MISSING_LEVEL`) after the column's other levels, present in every
trial when the whole dataset has a missing value in that column. Infinity is refused.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from pilid.data.dataset import Dataset, Split
from pilid.errors import PilidError

#: The level of a missing category in the one-hot columns (``"<column>=(missing)"``).
MISSING_LEVEL = "(missing)"
#: How a split hands the categorical columns to a model: one 0/1 column per level, or one
#: column of level codes (flagged in ``Split.categorical``, never scaled).
ENCODINGS = ("onehot", "codes")
#: Keys of a data config that the split reads (how to encode), not the data set's loader.
SPLIT_OPTIONS = ("encoding",)


def encode(dataset: Dataset, encoding: str = "onehot") -> tuple[np.ndarray, list[str], np.ndarray]:
    """``Dataset.X`` as a float64 matrix: numeric columns as they are, categorical ones one-hot
    (or, ``encoding="codes"``, as one column of level codes).

    Returns ``(matrix, names, is_categorical)``; an indicator column is named
    ``"<column>=<level>"`` and the levels are the column's categories (whole dataset, so stable
    across trials), then `MISSING_LEVEL` where the column has a missing value; a codes column
    keeps the column's name and holds each row's level position in that list. NaN in a numeric
    column stays NaN; infinity raises ``PilidError``.
    """
    if encoding not in ENCODINGS:
        raise PilidError(f"encoding={encoding!r} is invalid; use one of {', '.join(ENCODINGS)}")
    X = dataset.X
    categorical = set(dataset.categorical or [])
    blocks: list[np.ndarray] = []
    names: list[str] = []
    flags: list[bool] = []
    bad: list[str] = []
    for column in X.columns:
        values = X[column]
        if column in categorical or isinstance(values.dtype, pd.CategoricalDtype):
            if not isinstance(values.dtype, pd.CategoricalDtype):
                values = values.astype("category")
            codes = values.cat.codes.to_numpy()
            levels = [str(level) for level in values.cat.categories]
            if (codes < 0).any():  # a missing category: a level of its own, coded last
                codes = np.where(codes < 0, len(levels), codes)
                levels.append(_missing_level(levels))
            if encoding == "codes":
                blocks.append(codes[:, None].astype(np.float64))
                names.append(str(column))
                flags.append(True)
                continue
            blocks.append((codes[:, None] == np.arange(len(levels))[None, :]).astype(np.float64))
            names.extend(f"{column}={level}" for level in levels)
            flags.extend([True] * len(levels))
        else:
            try:
                block = values.to_numpy(dtype=np.float64)
            except (TypeError, ValueError) as error:
                raise PilidError(
                    f"column {column!r} of dataset {dataset.name!r} is not numeric; declare it "
                    "categorical or convert it to numbers"
                ) from error
            if np.isinf(block).any():
                bad.append(str(column))
                continue
            blocks.append(block[:, None])
            names.append(str(column))
            flags.append(False)
    if bad:
        raise PilidError(
            f"dataset {dataset.name!r} has inf in column(s) {', '.join(bad)}; replace it by a "
            "number, or by NaN (a missing value), before splitting"
        )
    matrix = np.concatenate(blocks, axis=1) if blocks else np.empty((len(X), 0))
    return matrix, names, np.asarray(flags, dtype=bool)


def _missing_level(levels: list[str]) -> str:
    """`MISSING_LEVEL`, bracketed once more while a category of the column has that name."""
    level = MISSING_LEVEL
    while level in levels:
        level = f"({level})"
    return level


def _standardiser(train: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (ddof 0) of ``train`` for ``active`` columns, else 0 and 1.

    NaN (a missing value) is left out of both; a constant column, or one without a value in
    ``train``, gets scale 1 (no division by zero) and a column without a value offset 0.
    """
    offset = np.zeros(train.shape[1])
    scale = np.ones(train.shape[1])
    if active.any() and len(train):
        values = train[:, active]
        present = ~np.isnan(values)
        count = present.sum(axis=0)
        filled = np.where(present, values, 0.0)
        mean = filled.sum(axis=0) / np.maximum(count, 1)
        spread = np.where(present, values - mean, 0.0)
        std = np.sqrt((spread**2).sum(axis=0) / np.maximum(count, 1))
        std = np.where(np.isfinite(std) & (std > 0), std, 1.0)
        offset[active] = mean
        scale[active] = std
    return offset, scale


def make_split(
    dataset: Dataset, seed: int, test_size: float = 0.2, encoding: str = "onehot"
) -> Split:
    """The trial with seed ``seed``: 80/20 train/test (stratified for classification).

    Deterministic given ``seed``. Scaling uses the training part only; a synthetic dataset
    (``info["scale_features"] is False``) keeps its features on the true functions' [0, 1] axis.

    Parameters
    ----------
    dataset : Dataset
        From `load_dataset`.
    seed : int
        The trial seed, in [0, 2**32).
    test_size : float, default=0.2
        The test fraction, in (0, 1).
    encoding : {"onehot", "codes"}, default="onehot"
        The categorical columns one-hot, or as one column of level codes each (`encode`).

    Returns
    -------
    Split
        The encoded, scaled train and test arrays, with the scaling to undo it.
    """
    if not isinstance(dataset, Dataset):
        raise PilidError("make_split needs a pilid.data.Dataset; build one with load_dataset()")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**32:
        raise PilidError(f"seed={seed!r} is invalid; use a whole number in [0, 2**32)")
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real):
        raise PilidError(f"test_size={test_size!r} is invalid; use a fraction such as 0.2")
    if not 0.0 < float(test_size) < 1.0:
        raise PilidError(
            f"test_size={test_size!r} is invalid; use a fraction in (0, 1) such as 0.2"
        )
    seed = int(seed)
    matrix, names, indicator = encode(dataset, encoding)
    n = len(matrix)
    classification = dataset.task == "classification"
    try:
        train_index, test_index = train_test_split(
            np.arange(n),
            test_size=float(test_size),
            random_state=seed,
            shuffle=True,
            stratify=dataset.y if classification else None,
        )
    except ValueError as error:
        raise PilidError(
            f"cannot split dataset {dataset.name!r} ({n} rows) with test_size={test_size}: "
            f"{str(error).splitlines()[0]}; use more rows or another test_size"
        ) from error
    scale_features = dataset.info.get("scale_features") is not False
    active = ~indicator if scale_features else np.zeros_like(indicator)
    x_offset, x_scale = _standardiser(matrix[train_index], active)
    X_train = (matrix[train_index] - x_offset) / x_scale
    X_test = (matrix[test_index] - x_offset) / x_scale

    y = dataset.y
    y_offset, y_scale = 0.0, 1.0
    if classification:
        y_train = y[train_index].astype(np.int64)
        y_test = y[test_index].astype(np.int64)
    else:
        y_train = y[train_index].astype(np.float64)
        y_test = y[test_index].astype(np.float64)
        if dataset.standardize_target:
            y_offset = float(y_train.mean())
            std = float(y_train.std())
            y_scale = std if np.isfinite(std) and std > 0 else 1.0
            y_train = (y_train - y_offset) / y_scale
            y_test = (y_test - y_offset) / y_scale
    return Split(
        X_train=X_train,
        X_test=X_test,
        y_train=y_train,
        y_test=y_test,
        feature_names=names,
        categorical=indicator,
        x_offset=x_offset,
        x_scale=x_scale,
        y_offset=y_offset,
        y_scale=y_scale,
        seed=seed,
        task=dataset.task,
        train_index=np.asarray(train_index),
        test_index=np.asarray(test_index),
    )
