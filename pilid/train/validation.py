"""The rows of one trial held out for early stopping (its validation split).

Not `sklearn.model_selection.train_test_split(stratify=...)`: that draws from a NumPy
`RandomState` in another order, so it would pick other rows than the recorded results were
trained with. The split below is the one every record so far used; its draws come from the
trial's `STREAM_SPLIT` stream (`pilid.streams`).
"""

from __future__ import annotations

import numpy as np

from pilid.streams import STREAM_SPLIT, trial_rng


def holdout_split(
    target: np.ndarray, seed: int, fraction: float, stratified: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Training and validation row indices (each sorted): round(fraction * n) rows validate.

    With `stratified` (classification, labels 0..K-1) class c gives its share of the validation
    rows (largest remainders), so the validation size stays round(fraction * n). A fraction that
    leaves no validation row, or no training row, gives all rows to training.
    """
    n = len(target)
    n_val = int(round(fraction * n))
    if n_val < 1 or n - n_val < 1:
        return np.arange(n), np.arange(0)
    rng = trial_rng(seed, STREAM_SPLIT)
    if not stratified:
        perm = rng.permutation(n)
        return np.sort(perm[n_val:]), np.sort(perm[:n_val])
    counts = np.bincount(target.astype(np.int64), minlength=2)
    quota = n_val * counts / n
    take = np.floor(quota).astype(np.int64)
    rest = n_val - take.sum()
    take[np.argsort(-(quota - take), kind="stable")[:rest]] += 1
    val = []
    for c in range(len(counts)):
        idx = np.flatnonzero(target == c)
        val.append(idx[rng.permutation(len(idx))[: take[c]]])
    val = np.sort(np.concatenate(val))
    keep = np.ones(n, dtype=bool)
    keep[val] = False
    return np.flatnonzero(keep), val
