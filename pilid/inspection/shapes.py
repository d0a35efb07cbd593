"""The shape read-out of the additive component (Definition 3): `ShapeMixin`.

PiLiD's and PiLiB's fitted additive part (Eq. 10, `pilid.nn`) is a
marginal value function u_j per feature, piecewise linear between its characteristic points
(Definitions 1-2). `ShapeMixin` reads it off a fitted estimator of `pilid.estimators` as a tidy
table (`shape_functions`), as per-row contributions (`feature_contributions`) and as a plot
(`plot_shapes`, through `pilid.inspection.displays.ShapeDisplay`); it adds the explanation of
single predictions (`pilid.inspection.explanation.ExplainMixin`). It reads only what the
estimator holds after fit (``module_``, ``knots_``, ``contribution_offset_``, ``y_scale_``,
``decompose``): a bag's members and K > 2 classes' members are read one by one and joined by
`pilid.models.bagging.bag_shapes` and `pilid.models.multiclass.class_table`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from pilid.inspection.displays import ShapeDisplay
from pilid.inspection.explanation import ExplainMixin
from pilid.inspection.explorer import ExploreMixin
from pilid.inspection.importance import ImportanceMixin
from pilid.models import bagging, multiclass
from pilid.nn.piecewise import piece_values

__all__ = ["ShapeMixin"]


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
        if self._multiclass():
            tables = [m.shape_functions() for m in self.class_estimators_]
            return multiclass.class_table(self, tables)
        if self._bagged():
            return bagging.bag_shapes([m.shape_functions() for m in self.estimators_])
        a = self.module_.additive
        with torch.no_grad():
            v, _ = a.effective()
            v = (v + self.module_.shift_w)[0].double().numpy()
            const = a.constants()[0].double() + float(self.module_.shift_c[0]) / a.n_features
            const = const.numpy()
        values = piece_values(self.knots_, v, const)
        missing = self.knots_.missing_mask
        if missing.any():  # u_j(NaN), centred, from a row of NaN (`decompose`)
            nan_terms = self._decompose(np.where(missing, np.nan, 0.0)[None])[1][0]
        rows = []
        for j, (name, pts, val) in enumerate(
            zip(self._feature_names(), self.knots_.points, values)
        ):
            centred = self.y_scale_ * (val - self.contribution_offset_[j])
            x = pts
            levels = getattr(self, "categories_", {}).get(j)
            if levels is not None:  # the levels as given, not their codes
                x = pd.Series([levels[int(k)] for k in pts], dtype=object)
            rows.append(pd.DataFrame({"feature": name, "x": x, "value": centred}))
            if missing[j]:  # the contribution of NaN, as a row of its own
                nan_row = {"feature": [name], "x": [np.nan], "value": [nan_terms[j]]}
                rows.append(pd.DataFrame(nan_row))
        return pd.concat(rows, ignore_index=True)

    def plot_shapes(self, features=None, ax=None, ncols: int = 4):
        """One small panel per feature with its piecewise-linear shape u_j (with a bag, its
        band between `lower` and `upper`), the first column's y label naming the output the
        values add to (the logit of class ``classes_[1]``, or the predicted target by its
        name); returns the axes.

        ``pilid.inspection.displays.ShapeDisplay.from_estimator(self, ...)`` draws the same and
        returns the display (its ``axes_`` are these, ``lines_`` the curves)."""
        return ShapeDisplay.from_estimator(self, features=features, ax=ax, ncols=ncols).axes_
