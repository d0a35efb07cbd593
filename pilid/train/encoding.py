"""How the deep part sees a trial's rows (beyond Eq. 6-8's standardised inputs).

`deep_input` builds the MLP's input from a trial's rows: each numeric feature standardised (or,
with bins, piecewise-linearly encoded on quantile bins: `piecewise_encoding`, `quantile_bins`),
a 0/1 missing indicator after each feature that had NaN in fit (NaN itself replaced by 0, the
standardised mean), and a categorical feature one-hot where asked. `deep_columns` counts its
columns. The engine (`pilid.train.batched`) and the estimators build the same input through it.
"""

from __future__ import annotations

import numpy as np


def piecewise_encoding(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The piecewise-linear encoding of one feature's values `x` (n,) on bin `edges` (b+1,
    increasing): column k is 0 below ``edges[k]``, 1 from ``edges[k+1]`` on and linear between
    (Phi of Definition 2 on these points; Gorishniy et al., NeurIPS 2022, "On embeddings for
    numerical features in tabular deep learning", PLE), so the columns sum to the number of bins
    below x plus its place in its own. NaN (a missing value): all 0. Shape (n, b)."""
    lo, hi = edges[None, :-1], edges[None, 1:]
    with np.errstate(invalid="ignore"):
        out = np.clip((x[:, None] - lo) / (hi - lo), 0.0, 1.0)
    return np.nan_to_num(out, nan=0.0)


def quantile_bins(X: np.ndarray, n_bins: int, features) -> tuple[tuple[int, np.ndarray], ...]:
    """`Prepared.bins` for rows `X` (n, m): for each feature j of `features` (indices) its
    edges, the quantiles at 0, 1/n_bins, ..., 1 of its finite values with repeats dropped (so a
    feature with few distinct values gets fewer bins); a feature with fewer than 2 bins left (a
    constant or 0/1 column, which one standardised column holds as well) is left out."""
    out = []
    grid = np.linspace(0.0, 1.0, int(n_bins) + 1)
    for j in features:
        column = X[:, j]
        column = column[np.isfinite(column)]
        if column.size == 0:
            continue
        edges = np.unique(np.quantile(column, grid))
        if len(edges) >= 3:
            out.append((int(j), edges))
    return tuple(out)


def deep_input(X: np.ndarray, x_mean, x_scale, missing=None, onehot=None, bins=None) -> np.ndarray:
    """The deep part's input for rows `X` (n, m): X standardised by (`x_mean`, `x_scale`),
    NaN (a missing value) and +inf (a category not seen in fit) at 0, i.e. the training mean
    (a neutral value); then, for each pair (j, levels) of `onehot` (None: none), feature j's
    column replaced by one 0/1 indicator per level (a missing or unseen category: all 0),
    appended in pair order; then, for each pair (j, edges) of `bins` (None: none), feature j's
    column replaced by its `piecewise_encoding`, appended in pair order; then one missing
    indicator column (1.0 where NaN) per feature of `missing` (bool (m,); None: none), in
    column order. Shape (n, `deep_columns`)."""
    with np.errstate(invalid="ignore"):  # +inf over a monotone feature's inf scale: NaN, then 0
        z = (X - x_mean) / x_scale
    bad = ~np.isfinite(X)
    if bad.any():
        z = np.where(bad, 0.0, z)
    if onehot or bins:
        replaced = [j for j, _ in (onehot or ())] + [j for j, _ in (bins or ())]
        keep = np.setdiff1d(np.arange(X.shape[1]), replaced)
        indicators = [X[:, [j]] == np.asarray(levels)[None, :] for j, levels in onehot or ()]
        encoded = [piecewise_encoding(X[:, j], np.asarray(e)) for j, e in bins or ()]
        z = np.concatenate([z[:, keep], *indicators, *encoded], axis=1)
    if missing is not None and np.any(missing):
        z = np.concatenate([z, np.isnan(X[:, np.asarray(missing, dtype=bool)])], axis=1)
    return z


def deep_columns(m: int, missing=None, onehot=None, bins=None) -> int:
    """Columns of `deep_input` for m features: one per feature, a one-hot feature's one per
    level instead, an encoded feature's one per bin, plus one per feature with missing
    values."""
    width = m + sum(len(levels) - 1 for _, levels in onehot or ())
    width += sum(len(edges) - 2 for _, edges in bins or ())
    return width + (0 if missing is None else int(np.sum(missing)))
