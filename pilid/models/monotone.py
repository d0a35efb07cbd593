"""Monotone constraints of PiLiD and PiLiB (beyond the paper): the prediction monotone in a feature.

``monotone_constraints`` takes what LightGBM and InterpretML's EBM take: a list with one value
per feature, or a dict ``{column name (or index): value}``; +1 makes the prediction (the value,
or the logit) non-decreasing in that feature, -1 non-increasing, 0 leaves it free. It holds for
the whole prediction, for every row, by construction (no penalty):

* the feature's shape u_j (Definition 3, Eq. 10) is monotone: every piece's slope omega_j w_k
  is parameterised with the constraint's sign (`pilid.nn.additive.AdditiveEnsemble`, ``sign``),
  and the least-squares start (Algorithm 1, step 2) has its slopes of the wrong sign set to 0
  (`pilid.nn.least_squares.monotone_start`);
* the deep part (PiLiD's MLP, PiLiB's blocks) does not see the feature: its standardised input
  is the constant 0 (``x_scale_`` is inf for it, so ``(x - x_mean_) / x_scale_`` is 0 exactly
  for every finite x), and PiLiB's gates of the feature start closed, so no block lists it;
* purification moves none of the deep part's main effects into the feature's shape
  (`pilid.nn.ensemble.PiLiDEnsemble.purify_` projects on the other features alone).

A constrained feature therefore acts on the prediction through its own monotone shape alone
(no interaction with other features). Categorical features cannot be constrained (their codes
have no order). A bag averages monotone members, so it is monotone too.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from pilid.errors import PilidError
from pilid.models.params import Satisfies

__all__ = ["MONOTONE_CONSTRAINTS", "MonotoneMixin", "monotone_vector"]

#: The valid constraint values (LightGBM's and EBM's).
_SIGNS = (-1, 0, 1)
#: PiLiB: a constrained feature's gates start at this log_alpha (P(gate != 0) about 1e-8); with
#: the feature's input at 0 only the L0 penalty moves them, and it closes them further.
CLOSED_LOG_ALPHA = -20.0
_HOW = (
    "a dict {column: 1 or -1} (0: none, e.g. {'bmi': 1}) or a list with one of -1, 0, 1 per feature"
)


def _is_sign(value) -> bool:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        return False
    return float(value) in _SIGNS


def _valid(value) -> bool:
    """The shape of a `monotone_constraints` value (names and length are checked at fit)."""
    if value is None:
        return True
    if isinstance(value, Mapping):
        keys_ok = all(
            isinstance(k, str) or (isinstance(k, numbers.Integral) and not isinstance(k, bool))
            for k in value
        )
        return keys_ok and all(_is_sign(v) for v in value.values())
    if isinstance(value, str | bytes) or np.ndim(value) != 1:
        return False
    return all(_is_sign(v) for v in np.asarray(value, dtype=object).tolist())


#: The `_parameter_constraints` entry of ``monotone_constraints``.
MONOTONE_CONSTRAINTS = [Satisfies(_valid, f"None, {_HOW}")]

#: The parameter's numpydoc entry (PiLiD's and PiLiB's docstrings).
MONOTONE_DOC = """
    monotone_constraints : dict, list or None, default=None
        Beyond the paper (`pilid.models.monotone`): +1 makes the prediction (value or logit)
        non-decreasing in a feature for every row, -1 non-increasing, 0 leaves it free; a list
        with one value per feature or a dict ``{column name or index: value}``, as LightGBM and
        EBM take them. Exact by construction: the feature's shape has slopes of that sign and
        the deep part does not see the feature, so it has no interaction. Not for categorical
        features."""

#: The fitted attribute's numpydoc entry.
MONOTONE_ATTRIBUTE_DOC = """
    monotone_constraints_ : ndarray of int, shape (`n_features_in_`,)
        The constraint of every feature (-1, 0, +1), from ``monotone_constraints``."""


def monotone_vector(value, names: list[str], categorical: np.ndarray, who: str) -> np.ndarray:
    """`monotone_constraints` as one int per feature (-1, 0, +1), checked against the fit data's
    column `names` and `categorical` mask; bad input raises `PilidError` on one line."""
    m = len(names)
    out = np.zeros(m, dtype=np.int64)
    if value is None:
        return out
    if not _valid(value):
        raise PilidError(f"{who}: monotone_constraints={value!r} is invalid; use {_HOW}")
    if isinstance(value, Mapping):
        for key, sign in value.items():
            if isinstance(key, str):
                if key not in names:
                    known = ", ".join(repr(n) for n in names[:5]) + (", ..." if m > 5 else "")
                    raise PilidError(
                        f"{who}: monotone_constraints names {key!r}, which is no column of X "
                        f"({known}); use the columns' names or indices < {m}"
                    )
                j = names.index(key)
            else:
                if not -m <= key < m:
                    raise PilidError(
                        f"{who}: monotone_constraints has index {key}, but X has {m} columns; "
                        f"use indices < {m} or the columns' names"
                    )
                j = int(key) % m
            out[j] = int(sign)
    else:
        values = np.asarray(value, dtype=object).tolist()
        if len(values) != m:
            raise PilidError(
                f"{who}: monotone_constraints has {len(values)} values but X has {m} columns; "
                "give one of -1, 0, 1 per column, or a dict {column: 1 or -1}"
            )
        out[:] = [int(v) for v in values]
    bad = np.flatnonzero((out != 0) & np.asarray(categorical, dtype=bool))
    if bad.size:
        name = names[bad[0]]
        raise PilidError(
            f"{who}: monotone_constraints constrains the categorical column {name!r}, whose "
            f"categories have no order; drop {name!r} from monotone_constraints"
        )
    return out


class MonotoneMixin:
    """``monotone_constraints`` for an estimator with the additive component (PiLiD, PiLiB):
    resolves it at fit (``monotone_constraints_``) and gives the constrained features a constant
    deep input (``x_scale_`` inf, see the module docstring)."""

    def _prepare(self, X, y, sample_weight=None):
        """`pilid.train.Trainable._prepare`, then the constraints (`monotone_vector`)."""
        prep = super()._prepare(X, y, sample_weight)
        self.monotone_constraints_ = monotone_vector(
            self.monotone_constraints,
            self._feature_names(),
            self.categorical_,
            type(self).__name__,
        )
        constrained = self.monotone_constraints_ != 0
        if constrained.any():  # (x - mean) / inf is 0 for every finite x: the deep part's input
            prep.x_scale = np.where(constrained, np.inf, prep.x_scale)
        return prep

    def _constrained(self) -> np.ndarray:
        """Boolean (n_features,): the features with a monotone constraint."""
        constraints = getattr(self, "monotone_constraints_", None)
        if constraints is None:
            return np.zeros(0, dtype=bool)
        return np.asarray(constraints) != 0
