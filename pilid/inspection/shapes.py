"""The shape read-out of the additive component (Definition 3): `ShapeMixin`.

PiLiD's and PiLiB's fitted additive part (Eq. 10, `pilid.nn`) is a
marginal value function u_j per feature, piecewise linear between its characteristic points
(Definitions 1-2). `ShapeMixin` reads it off a fitted estimator of `pilid.estimators` as a tidy
table (`shape_functions`), as per-row contributions (`feature_contributions`) and as a plot
(`plot_shapes`, through `pilid.inspection.displays.ShapeDisplay`); it adds the explanation of
single predictions (`pilid.inspection.explanation.ExplainMixin`). It reads the fitted
model's one description (`pilid.nn.fitted.FittedEnsemble`): the contributions of each member at
the characteristic points (`knot_probe`), a bag's members joined by
`pilid.models.bagging.bag_shapes` and K > 2 classes' by `pilid.models.multiclass.class_table`.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from pilid.inspection.displays import ShapeDisplay
from pilid.inspection.explanation import ExplainMixin
from pilid.inspection.explorer import ExploreMixin
from pilid.inspection.importance import ImportanceMixin, kept_at_fit
from pilid.inspection.joint_grid import FeatureCounts, feature_counts
from pilid.models import bagging, multiclass
from pilid.models.inputs import INFREQUENT_LEVEL

__all__ = ["ShapeMixin", "knot_probe", "level_order", "probe_rows"]


def probe_rows(points: list[np.ndarray], tail=(np.nan,)) -> np.ndarray:
    """Rows that visit each feature's `points`: row k holds each feature's k-th point (its last
    where it has fewer), then one row per value of `tail` (that value in every column)."""
    rows = max(len(p) for p in points)
    X = np.empty((rows + len(tail), len(points)))
    for j, p in enumerate(points):
        X[: len(p), j] = p
        X[len(p) : rows, j] = p[-1]
    for k, value in enumerate(tail):
        X[rows + k] = value
    return X


def knot_probe(knots) -> tuple[np.ndarray, list[np.ndarray]]:
    """Rows whose contributions are the shapes at their characteristic points (Definition 1),
    then one row of NaN (a missing value everywhere) (`probe_rows`); and the points per
    feature."""
    points = [np.asarray(p, dtype=np.float64) for p in knots.points]
    return probe_rows(points), points


#: The first number in a level's name (``"10+"``: 10, ``"<5"``: 5, ``"5-10 years"``: 5).
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _number_key(text: str) -> tuple[float, int] | None:
    """The order of a level that reads as a number: its first number, then -1 where a ``<``
    (or ``under``, ``below``, ``less``) comes before it, +1 where a ``+`` or ``>`` (or
    ``over``, ``more``) marks it as open above, else 0; None where it holds no number."""
    found = NUMBER.search(text)
    if found is None:
        return None
    before, after = text[: found.start()].lower(), text[found.end() :].lower()
    value = float(found.group().replace(",", "."))
    if before.endswith("-") and not before[:-1].strip():  # "-5": a negative number
        value = -value
    if re.search(r"<|under|below|less", before):
        return value, -1
    if re.search(r"^\s*\+|>|over|more", after) or ">" in before:
        return value, 1
    return value, 0


def level_order(levels, counts=None, fixed: bool = False) -> list:
    """The order in which a categorical feature's `levels` are drawn: as given where `fixed`
    (a pandas Categorical's order) or where the given order is not the sorted one (the
    estimator keeps a Categorical's categories as given and sorts other levels); else by the
    first number in each name where every name holds one (``9, 10, 11, 12``; ``<5, 5, 10+``),
    else the most frequent first (`counts`: level -> rows; None: as given). The level that
    merges infrequent ones (`pilid.models.inputs.INFREQUENT_LEVEL`) stays last."""
    levels = list(levels)
    merged = [v for v in levels if v == INFREQUENT_LEVEL]
    rest = [v for v in levels if v != INFREQUENT_LEVEL]
    texts = [str(v) for v in rest]
    if fixed or texts != sorted(texts):
        return rest + merged
    keys = [_number_key(t) for t in texts]
    if all(k is not None for k in keys):
        order = sorted(range(len(rest)), key=lambda i: keys[i])
    elif counts:
        order = sorted(range(len(rest)), key=lambda i: -counts.get(rest[i], 0))
    else:
        order = range(len(rest))
    return [rest[i] for i in order] + merged


class ShapeMixin(ExploreMixin, ImportanceMixin, ExplainMixin):
    """Interpretation API of the additive component (Definition 3: u_j per feature), and the
    explanation of single predictions (`pilid.inspection.explanation`: `explain`,
    `plot_explanation`) and the terms' importance (`pilid.inspection.importance`:
    `term_importances`, `plot_importance`)."""

    def feature_contributions(self, X) -> np.ndarray:
        """u_j(x_ij) (n, m) in output units, each column centred to mean 0 on the training
        rows; ``intercept_ + contributions.sum(1) + deep part`` is the raw output (Eq. 9)."""
        return self.decompose(X)[1]

    def shape_functions(self) -> pd.DataFrame:
        """Tidy DataFrame (`feature`, `x`, `value`): u_j at its characteristic points.

        Values are centred like `feature_contributions`; between points u_j is linear
        (Definition 2). A categorical column of strings or pandas categories has its levels as
        `x` (``'fairly'``, not a code); a numeric column named in ``categorical_features`` its
        values. A feature with missing values in fit has one more row, `x` NaN, whose `value`
        is the (centred) contribution of NaN. A bag (``n_bags`` > 1) gives its members' mean
        with their spread in columns `std`, `lower` and `upper` (`pilid.models.bagging.bag_shapes`).
        """
        check_is_fitted(self, "module_")
        fitted = self._description()
        probe, points = knot_probe(fitted.knots)
        per_head = [
            [self._shape_table(fitted, contrib, points) for contrib, _ in members]
            for members in fitted.member_terms(probe)
        ]
        tables = [t[0] if len(t) == 1 else bagging.bag_shapes(t) for t in per_head]
        return multiclass.class_table(self, tables) if fitted.multiclass else tables[0]

    def _shape_table(self, fitted, contrib: np.ndarray, points: list) -> pd.DataFrame:
        """One member's shape table from its contributions on `knot_probe`'s rows."""
        missing = fitted.columns.missing_mask()
        rows = []
        for j, (name, pts) in enumerate(zip(fitted.columns.names, points)):
            x = pts
            levels = fitted.columns.levels.get(j)
            if levels is not None:  # the levels as given, not their codes
                x = pd.Series([levels[int(k)] for k in pts], dtype=object)
            rows.append(pd.DataFrame({"feature": name, "x": x, "value": contrib[: len(pts), j]}))
            if missing[j]:  # the contribution of NaN, as a row of its own
                nan_row = {"feature": [name], "x": [np.nan], "value": [contrib[-1, j]]}
                rows.append(pd.DataFrame(nan_row))
        return pd.concat(rows, ignore_index=True)

    def shape_context(self, X=None) -> tuple[dict, dict]:
        """What `plot_shapes` draws beside the shapes: (density, levels), dicts by feature name.

        density: each feature's `pilid.inspection.joint_grid.FeatureCounts` over the rows `X`
        (None: the training rows, counted at fit), a categorical feature's ``values`` its
        levels as `shape_functions` writes them. levels: each categorical feature's levels in
        drawing order (`level_order`: a pandas Categorical column of `X`, given as a DataFrame,
        keeps its categories' order).
        """
        check_is_fitted(self, "intercept_")
        names = self._feature_names()
        flags = np.asarray(self.categorical_, dtype=bool)
        frame = X if isinstance(X, pd.DataFrame) else None
        counts = kept_at_fit(self, "_feature_counts")
        if X is not None:
            counts = feature_counts(self._check_fitted_X(X), flags)
        levels_of = getattr(self, "categories_", {})
        density, levels = {}, {}
        for j, name in enumerate(names):
            c = None if counts is None else counts[j]
            labels = levels_of.get(j)
            if c is not None and labels is not None:  # codes as their levels
                known = np.isfinite(c.values) & (c.values < len(labels))
                values = np.array([labels[int(k)] for k in c.values[known]], dtype=object)
                c = FeatureCounts(c.counts[known], values=values, missing=c.missing)
            if c is not None:
                density[name] = c
            if flags[j] and labels is not None:
                fixed = frame is not None and isinstance(
                    frame[name].dtype if name in frame.columns else None, pd.CategoricalDtype
                )
                frequency = None if c is None else dict(zip(c.values, c.counts))
                levels[name] = level_order(labels, frequency, fixed=fixed)
        return density, levels

    def plot_shapes(
        self,
        features=None,
        ax=None,
        ncols: int = 4,
        X=None,
        sharey: bool = False,
        order=None,
        density: bool = True,
    ):
        """One small panel per feature with its piecewise-linear shape u_j (with a bag, its
        band between `lower` and `upper`), the first column's y label naming the output the
        values add to (the logit of class ``classes_[1]``, or the predicted target by its
        name), a strip of the data's distribution along each panel's bottom (`X`'s rows, None:
        the training rows'); returns the axes.

        ``sharey=True`` gives every panel one y scale; ``order="importance"`` puts the most
        important main effect first (`term_importances`); ``density=False`` leaves the strips
        out. A numeric feature of few values (a 0/1 column) is drawn as points at its values,
        a categorical one's levels in `level_order`'s order.
        ``pilid.inspection.displays.ShapeDisplay.from_estimator(self, ...)`` draws the same and
        returns the display (its ``axes_`` are these, ``lines_`` the curves)."""
        display = ShapeDisplay.from_estimator(
            self,
            features=features,
            ax=ax,
            ncols=ncols,
            X=X,
            sharey=sharey,
            order=order,
            density=density,
        )
        return display.axes_
