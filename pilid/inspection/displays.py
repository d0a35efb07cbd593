"""Display objects: the one way pilid draws a shape or a pair's joint effect (matplotlib).

As scikit-learn's Display objects (`sklearn.inspection.PartialDependenceDisplay`), a display
holds the numbers it draws; a class method (`from_estimator`, `from_shapes`, `from_grid`)
builds one and draws it, and `plot(ax=...)` draws it (again, on other axes) and keeps the drawn
artists in attributes ending in ``_`` (``figure_``, ``axes_``, ``lines_``, ...).

- `ShapeDisplay`: each feature's marginal value function u_j (Definition 3 of Guo et al.,
  IJCAI 2020) from a tidy `shape_functions` table (``feature``, ``x``, ``value``): a
  piecewise-linear curve through the characteristic points; a bag's spread (``lower`` /
  ``upper``, or ``value`` +- ``std``) as a shaded band; a row whose ``x`` is NaN (the feature's
  contribution for a missing value) as a separate marker right of the curve, at a tick labelled
  ``NA``; a categorical feature as a step per level with the levels as tick labels; a ``class``
  column (multiclass) as one line per class, one colour per class, with a legend. The panels
  of the first column say what the values add to (``contribution to`` the prediction, the
  predicted target by its name, or the logit of the positive class by its label); a new
  figure is laid out (matplotlib's tight layout) so that no title runs into the tick labels of
  the panel above; long level names are wrapped (or shortened at their end with an ellipsis,
  never in the middle), long feature names shortened at their end. With the data's
  distribution (``density``: `pilid.inspection.joint_grid.FeatureCounts` per feature, which
  `from_estimator` takes from the training rows kept at fit or from given rows) each panel has
  a strip of the data's histogram (level frequencies for a categorical feature) along its
  bottom, and a numeric feature with at most `FEW_VALUES` distinct values (a 0/1 column) is
  drawn as points at its values with ticks there, not as a line; ``sharey`` gives every panel
  one y scale.
- `pilid.inspection.interaction_display.InteractionDisplay`: a pair's joint effect on a grid
  (``x_a``, ``x_b``, ``value``, the paper's Figure 5) as a heat map coloured symmetrically
  about 0.
- The waterfall of one prediction is `pilid.inspection.explanation.ExplanationDisplay`.

The estimators' ``plot_shapes`` / ``plot_interaction`` draw through these (and return the axes,
as they always did: the display is ``ShapeDisplay.from_estimator(est)``), and so do the
report's Figures 3-5 (`pilid.report.figures`). Without ``ax`` a display makes a new pyplot
figure (as scikit-learn's do, so that notebooks and sphinx-gallery show it); with ``ax`` it
draws there and never imports pyplot (the report draws on `matplotlib.figure.Figure` objects).
Feature names are drawn as they are written (`plain_text`): a ``$`` in a column name
(``price $ and $ tax``) is a dollar sign, not the start of matplotlib's mathtext.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.inspection.shape_panels import (  # noqa: F401 (re-exported: ELLIPSIS, _class_text)
    BAND_STYLE,
    ELLIPSIS,
    FEW_VALUES,
    LINE_STYLE,
    MISSING_GAP,
    MISSING_LABEL,
    OUTPUT_CHARS,
    STEP_STYLE,
    TITLE_CHARS,
    WRAPPED_LEVELS,
    _band,
    _class_text,
    _first_column,
    _is_numeric,
    _level_labels,
    _level_text,
    _missing_axis,
    _new_axes,
    _output_name,
    _shorten,
    _strip,
    _wrapped_labels,
    plain_text,
    require_columns,
)

__all__ = ["MISSING_LABEL", "ShapeDisplay", "plain_text"]


class ShapeDisplay:
    """The shape u_j of each feature, one small panel per feature (Definition 3).

    Each panel draws the feature's rows of a tidy `shape_functions` table: the curve through its
    characteristic points (linear between them, Definition 2); a bag's band between ``lower``
    and ``upper`` (or ``value`` +- ``std``); the contribution of a missing value (the row whose
    ``x`` is NaN) as a separate marker right of the curve, at a tick labelled ``NA``; a
    categorical feature (flagged, or with level labels as ``x``) as a step per level with the
    levels as tick labels (in `level_order`'s order where it names the feature, else the
    table's); with a ``class`` column, one line per class (the colour of the class's position
    among the table's classes) and a legend on the first panel; with `output`, the panels of
    the first column have the y label ``contribution to <output>``. With `density`, a strip of
    the feature's distribution along each panel's bottom (a histogram, the counts of its values
    or levels, the missing rows at the ``NA`` tick), scaled to the panel's largest count, and a
    numeric feature of at most `FEW_VALUES` values drawn as points at those values (u_j there,
    with the band as a vertical bar), ticks at the values. Build it with `from_estimator` or
    `from_shapes`, or from a table and `plot`.

    Parameters
    ----------
    shapes : pandas.DataFrame
        Columns ``feature``, ``x``, ``value``; optional ``lower`` and ``upper`` (or ``std``): a
        band; optional ``class``: one curve per class.
    features : list of str or None, default=None
        The features drawn, in panel order; None: every feature of `shapes`, in its order.
    categorical : dict, sequence or None, default=None
        The categorical features: a dict name -> bool, or a collection of names. A feature
        whose ``x`` are not numbers (level labels) is categorical whatever this says.
    output : str or None, default=None
        What the values are contributions to (``"logit of class 'yes'"``, ``"predicted
        price"``; `from_estimator` names the estimator's), drawn as the y label of the first
        column's panels; None: no y label.
    density : dict or None, default=None
        Feature name -> `pilid.inspection.joint_grid.FeatureCounts` (a categorical feature's
        ``values`` its levels as the table writes them); None: no strip.
    level_order : dict or None, default=None
        Feature name -> its levels in drawing order (levels it leaves out follow in the table's
        order); None: the table's order.

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure drawn on (after `plot`).
    axes_ : ndarray of matplotlib.axes.Axes, shape (n_features,)
        One panel per feature.
    lines_ : ndarray of matplotlib.lines.Line2D, shape (n_features, n_classes)
        The curves (points, for a feature of few values; one class without a ``class``
        column).
    bands_ : ndarray of object, shape (n_features, n_classes)
        The bands (a `matplotlib.collections.PolyCollection`, or the vertical bars of a feature
        of few values), None without one.
    missing_ : ndarray of object, shape (n_features, n_classes)
        The missing-value markers (`matplotlib.lines.Line2D`), None where the feature has no
        row with ``x`` NaN.
    density_ : ndarray of object, shape (n_features,)
        The data's strip of each panel (`matplotlib.container.BarContainer`), None without
        `density` for the feature.
    classes_ : list
        The classes in colour order (``[None]`` without a ``class`` column).
    legend_ : matplotlib.legend.Legend or None
        The classes' legend (on the first panel), None for one class.
    """

    def __init__(
        self,
        shapes: pd.DataFrame,
        features=None,
        categorical=None,
        output=None,
        density=None,
        level_order=None,
    ):
        require_columns(shapes, ("feature", "x", "value"), "shape table", "shape_functions")
        self.shapes = shapes
        names = list(dict.fromkeys(shapes["feature"].astype(str)))
        self.features = names if features is None else [str(f) for f in features]
        unknown = [f for f in self.features if f not in names]
        if unknown:
            raise PilidError(f"unknown feature(s) {unknown}; choose from {names}")
        if categorical is None:
            flagged = set()
        elif isinstance(categorical, dict):
            flagged = {str(k) for k, v in categorical.items() if v}
        else:
            flagged = {str(k) for k in categorical}
        self.categorical = {f: f in flagged for f in self.features}
        self.output = None if output is None else str(output)
        self.density = dict(density or {})
        self.level_order = dict(level_order or {})

    @staticmethod
    def _choose(features, names: list[str]) -> list[str] | None:
        """`features` (names or indices into `names`) as names; None: all."""
        if features is None:
            return None
        chosen = [
            names[f]
            if isinstance(f, numbers.Integral)
            and not isinstance(f, bool)
            and -len(names) <= f < len(names)
            else str(f)
            for f in features
        ]
        unknown = [f for f in chosen if f not in names]
        if unknown:
            raise PilidError(f"unknown feature(s) {unknown}; choose from {names}")
        return chosen

    @classmethod
    def from_shapes(
        cls,
        shapes: pd.DataFrame,
        features=None,
        categorical=None,
        ax=None,
        ncols: int = 4,
        line_kw=None,
        band_kw=None,
        reference_line: bool = True,
        feature_names=None,
        output=None,
        density=None,
        level_order=None,
        sharey: bool = False,
    ):
        """Draw the shapes of a tidy table (`shape_functions`'s columns).

        Parameters
        ----------
        shapes : pandas.DataFrame
            Columns ``feature``, ``x``, ``value``; optional ``lower``/``upper`` or ``std`` (a
            band) and ``class`` (one curve per class).
        features : list of str or int, or None, default=None
            The panels: names, or positions in `feature_names`; None: every feature.
        categorical : dict, sequence or None, default=None
            A dict name -> bool, one bool per name of `feature_names` (as
            ``categorical_``), or a collection of names.
        ax : matplotlib.axes.Axes, array of them, or None, default=None
            One axes per panel; None: a new pyplot figure with `ncols` columns.
        ncols : int, default=4
            Columns of the new figure's grid.
        line_kw : dict or None, default=None
            Keywords for the curves (``ax.plot`` / ``ax.step``), over the defaults.
        band_kw : dict or None, default=None
            Keywords for the bands (``ax.fill_between``), over the defaults.
        reference_line : bool, default=True
            Draw a thin line at 0.
        feature_names : list of str or None, default=None
            Every feature name in column order (what integer `features` and a bool
            `categorical` refer to); None: the table's features in order.
        output : str or None, default=None
            What the values are contributions to, the first column's y label
            (``contribution to <output>``); None: no y label.
        density, level_order : dict or None, default=None
            The data's distribution per feature and the levels' drawing order (the class's
            parameters).
        sharey : bool, default=False
            One y scale for every panel (their y axes shared).

        Returns
        -------
        ShapeDisplay
            The display, drawn (`figure_`, `axes_`, `lines_`).
        """
        names = (
            list(dict.fromkeys(shapes["feature"].astype(str)))
            if feature_names is None and "feature" in shapes.columns
            else [str(n) for n in (feature_names or [])]
        )
        if categorical is not None and not isinstance(categorical, dict):
            flags = list(categorical)
            if len(flags) == len(names) and all(isinstance(f, (bool, np.bool_)) for f in flags):
                categorical = dict(zip(names, flags))
            else:
                categorical = {
                    names[f] if isinstance(f, numbers.Integral) else str(f): True for f in flags
                }
        display = cls(
            shapes,
            features=cls._choose(features, names),
            categorical=categorical,
            output=output,
            density=density,
            level_order=level_order,
        )
        return display.plot(
            ax=ax,
            ncols=ncols,
            line_kw=line_kw,
            band_kw=band_kw,
            reference_line=reference_line,
            sharey=sharey,
        )

    @classmethod
    def from_estimator(
        cls,
        estimator,
        features=None,
        ax=None,
        ncols: int = 4,
        line_kw=None,
        band_kw=None,
        X=None,
        sharey: bool = False,
        order=None,
        density: bool = True,
    ):
        """Draw the shapes of a fitted estimator with an additive part (PiLiD, PiLiB, their
        CV and bagged forms): its `shape_functions()`, categorical features as its
        ``categorical_``, the y label naming its output (the logit of the positive class by
        its label, the logits of K > 2 classes, or the predicted target by its name), the
        data's distribution under each shape and the levels in the order of
        `pilid.inspection.shapes.ShapeMixin.shape_context`.

        Parameters
        ----------
        estimator : fitted estimator with ``shape_functions()``
            The model (a CV estimator's refit ``best_estimator_`` is drawn).
        features : list of str or int, or None, default=None
            The panels: names or column positions; None: every feature.
        ax : matplotlib.axes.Axes, array of them, or None, default=None
            One axes per panel; None: a new pyplot figure with `ncols` columns.
        ncols : int, default=4
            Columns of the new figure's grid.
        line_kw : dict or None, default=None
            Keywords for the curves, over the defaults.
        band_kw : dict or None, default=None
            Keywords for a bag's bands, over the defaults.
        X : array-like, DataFrame or None, default=None
            The rows whose distribution is drawn (and whose importance orders the panels);
            None: the training rows (their distribution is kept at fit).
        sharey : bool, default=False
            One y scale for every panel, so that a steep shape and a flat one look as they
            are.
        order : {None, "importance"}, default=None
            The panels' order: as `features` (None) or the most important main effect first
            (`pilid.inspection.importance.term_importances` on `X`).
        density : bool, default=True
            Draw the data's distribution under each shape.

        Returns
        -------
        ShapeDisplay
            The display, drawn (`figure_`, `axes_`, `lines_`).
        """
        if not callable(getattr(estimator, "shape_functions", None)):
            raise PilidError(
                f"{type(estimator).__name__} has no shape functions (no additive part); "
                "draw shapes of PiLiD or PiLiB, or explain one prediction with plot_explanation"
            )
        if order not in (None, "importance"):
            raise PilidError(f"order={order!r} is not an order; pass None or 'importance'")
        table = estimator.shape_functions()  # checks that it is fitted
        model = getattr(estimator, "best_estimator_", estimator)
        names = (
            model._feature_names()
            if callable(getattr(model, "_feature_names", None))
            else list(dict.fromkeys(table["feature"].astype(str)))
        )
        flags = getattr(model, "categorical_", None)
        if flags is None and getattr(model, "knots_", None) is not None:
            flags = model.knots_.categorical
        categorical = None if flags is None else dict(zip(names, np.asarray(flags, dtype=bool)))
        counts, levels = {}, {}
        if callable(getattr(model, "shape_context", None)):
            counts, levels = model.shape_context(X)
        chosen = cls._choose(features, names) or names
        if order == "importance":
            importance = model.term_importances(X)
            main = importance[(importance["kind"] == "main").to_numpy()]
            rank = main.groupby("term", sort=False)["importance"].sum()
            chosen = sorted(chosen, key=lambda f: -float(rank.get(f, 0.0)))
        return cls.from_shapes(
            table,
            features=chosen,
            categorical=categorical,
            ax=ax,
            ncols=ncols,
            line_kw=line_kw,
            band_kw=band_kw,
            feature_names=names,
            output=_output_name(model),
            density=counts if density else None,
            level_order=levels,
            sharey=sharey,
        )

    def plot(
        self,
        ax=None,
        ncols: int = 4,
        line_kw=None,
        band_kw=None,
        reference_line=True,
        sharey: bool = False,
    ):
        """Draw one panel per feature on `ax` (None: a new pyplot figure); returns self.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, array of them, or None, default=None
            One axes per feature; None: a new figure with a grid of `ncols` columns.
        ncols : int, default=4
            Columns of the new figure's grid.
        line_kw : dict or None, default=None
            Keywords for the curves (``ax.plot``; ``ax.step`` for a categorical feature),
            over the defaults (`LINE_STYLE`, `STEP_STYLE`; the colour is the class's).
        band_kw : dict or None, default=None
            Keywords for the bands (``ax.fill_between``), over `BAND_STYLE`.
        reference_line : bool, default=True
            Draw a thin line at 0.
        sharey : bool, default=False
            One y scale for every panel (their y axes shared with the first's).

        Returns
        -------
        ShapeDisplay
            self, with `figure_`, `axes_`, `lines_`, `bands_`, `missing_`, `density_`,
            `classes_` and `legend_` set. A new figure is laid out (tight layout) whenever it
            is drawn.
        """
        n = len(self.features)
        if ax is None:
            axes = _new_axes(n, ncols)
        else:
            axes = np.atleast_1d(np.asarray(ax, dtype=object)).ravel()
            if len(axes) < n:
                raise PilidError(f"ax has {len(axes)} panels for {n} features; pass enough axes")
            axes = axes[:n]
        table = self.shapes
        if "class" in table.columns:
            self.classes_ = list(dict.fromkeys(table["class"]))
        else:
            self.classes_ = [None]
        k = len(self.classes_)
        self.lines_ = np.empty((n, k), dtype=object)
        self.bands_ = np.full((n, k), None, dtype=object)
        self.missing_ = np.full((n, k), None, dtype=object)
        self.density_ = np.full(n, None, dtype=object)
        names = table["feature"].astype(str)
        for i, (a, name) in enumerate(zip(axes, self.features)):
            if sharey and i and a.get_shared_y_axes().get_siblings(a) == [a]:
                a.sharey(axes[0])
            self._panel(a, i, table[(names == name).to_numpy()], name, line_kw, band_kw)
            if reference_line:
                a.axhline(0.0, color="0.7", lw=0.6)
            a.set_title(plain_text(_shorten(name, TITLE_CHARS)), fontsize=9)
            a.tick_params(labelsize=7)
            if self.output is not None and _first_column(a):
                output = plain_text(_shorten(self.output, OUTPUT_CHARS))
                a.set_ylabel(f"contribution to\n{output}", fontsize=7)
        self.legend_ = None
        if k > 1 and n:
            self.legend_ = axes[0].legend(
                list(self.lines_[0]),
                [plain_text(c) for c in self.classes_],
                title="class",
                fontsize=7,
                title_fontsize=7,
            )
        self.axes_ = axes
        self.figure_ = axes[0].figure if n else None
        return self

    def _levels(self, name: str, present: pd.Series) -> list:
        """A categorical feature's levels in drawing order: `level_order`'s, then the table's."""
        levels = list(dict.fromkeys(present["x"]))
        order = [v for v in self.level_order.get(name, []) if v in set(levels)]
        return order + [v for v in levels if v not in set(order)]

    def _panel(self, a, i: int, part: pd.DataFrame, name: str, line_kw, band_kw) -> None:
        """Draw feature `name` (its rows `part`) on axes `a`, panel `i`."""
        absent = pd.isna(part["x"]).to_numpy()
        present = part[~absent]
        categorical = self.categorical[name] or not _is_numeric(present["x"])
        counts = self.density.get(name)
        few = None  # the values of a numeric feature of few values, drawn as points
        if not categorical and counts is not None and counts.values is not None:
            if 0 < len(counts.values) <= FEW_VALUES:
                few = np.asarray(counts.values, dtype=np.float64)
        has_band = {"lower", "upper"} <= set(part.columns)
        has_std = not has_band and "std" in part.columns
        if categorical:
            levels = self._levels(name, present)
            where = {level: p for p, level in enumerate(levels)}
            missing_at = float(len(levels))
            lo, hi = 0.0, float(max(len(levels) - 1, 0))
        else:
            xs = present["x"].to_numpy(dtype=np.float64)
            if few is not None:
                xs = np.concatenate([xs, few])
            lo, hi = (float(xs.min()), float(xs.max())) if len(xs) else (0.0, 0.0)
            missing_at = hi + (MISSING_GAP * (hi - lo) if hi > lo else 1.0)
        style = dict(STEP_STYLE if categorical else LINE_STYLE)
        if few is not None:
            style = {"ls": "none", "marker": "o", "ms": 4}
        style.update(line_kw or {})
        band_style = dict(BAND_STYLE)
        band_style.update(band_kw or {})
        any_missing = bool(absent.any()) or (counts is not None and counts.missing > 0)
        for c, cls in enumerate(self.classes_):
            colour = f"C{c % 10}"
            rows = present if cls is None else present[(present["class"] == cls).to_numpy()]
            if categorical:
                x = np.array([where[v] for v in rows["x"]], dtype=np.float64)
            else:
                x = rows["x"].to_numpy(dtype=np.float64)
            order = np.argsort(x, kind="stable")
            x, rows = x[order], rows.iloc[order]
            value = rows["value"].to_numpy(dtype=np.float64)
            kw = {"color": colour, **style}
            if has_band or has_std:
                lower, upper = _band(rows, has_band)
                if few is not None:  # the band at each value, as a vertical bar
                    lower, upper = np.interp(few, x, lower), np.interp(few, x, upper)
                    self.bands_[i, c] = a.vlines(few, lower, upper, color=colour, lw=3, alpha=0.35)
                else:
                    self.bands_[i, c] = a.fill_between(
                        x,
                        lower,
                        upper,
                        step="mid" if categorical else None,
                        **{"color": kw["color"], "label": "bag spread", **band_style},
                    )
            if categorical:
                (line,) = a.step(x, value, where="mid", **kw)
            elif few is not None:  # u_j at the feature's values (linear between points)
                (line,) = a.plot(few, np.interp(few, x, value), **kw)
            else:
                (line,) = a.plot(x, value, **kw)
            self.lines_[i, c] = line
            na = part[absent] if cls is None else part[absent & (part["class"] == cls).to_numpy()]
            if len(na):
                v = na["value"].to_numpy(dtype=np.float64)[:1]
                if has_band or has_std:
                    low, up = _band(na.iloc[:1], has_band)
                    a.plot([missing_at] * 2, [low[0], up[0]], color=kw["color"], lw=3, alpha=0.35)
                (marker,) = a.plot([missing_at], v, ls="none", marker="D", ms=4, color=kw["color"])
                self.missing_[i, c] = marker
        if counts is not None:
            self.density_[i] = _strip(a, counts, where if categorical else None, missing_at)
        if any_missing:
            a.axvline((hi + missing_at) / 2, color="0.8", lw=0.6, ls=":")
            a.set_xlim(right=missing_at + (missing_at - hi) / 2)  # the marker whole
        if categorical:
            ticks = np.arange(len(levels) + any_missing, dtype=np.float64)
            wrap = len(levels) <= WRAPPED_LEVELS
            labels = _wrapped_labels(levels) if wrap else _level_labels(levels)
            labels = [plain_text(t) for t in labels]
            a.set_xticks(ticks, labels + [MISSING_LABEL] * any_missing)
            if not wrap and any(len(t) > 3 for t in labels):
                a.tick_params(axis="x", labelrotation=45)
                for text in a.get_xticklabels():
                    text.set_horizontalalignment("right")
                    text.set_rotation_mode("anchor")
        elif few is not None:
            ticks = list(few) + [missing_at] * any_missing
            labels = [_level_text(v) for v in few] + [MISSING_LABEL] * any_missing
            a.set_xticks(ticks, labels)
            gap = float(np.min(np.diff(few))) if len(few) > 1 else 1.0
            a.set_xlim(lo - gap / 2, (missing_at if any_missing else hi) + gap / 2)
        elif any_missing:
            _missing_axis(a, lo, hi, missing_at)
