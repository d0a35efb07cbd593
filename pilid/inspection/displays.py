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
  the panel above; long level names and feature names are shortened with an ellipsis.
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
from sklearn.base import is_classifier

from pilid.errors import PilidError

__all__ = ["MISSING_LABEL", "ShapeDisplay", "plain_text"]

#: The tick label of the marker drawn for a feature's missing values (a row with ``x`` NaN).
MISSING_LABEL = "NA"
#: The gap between a numeric curve's last point and its missing-value marker (share of the range).
MISSING_GAP = 0.2
#: What a shape's curve looks like unless ``line_kw`` says otherwise (numeric, categorical).
LINE_STYLE = {"marker": "o", "ms": 2, "lw": 1.2}
STEP_STYLE = {"marker": "o", "ms": 3}
#: A bag's band unless ``band_kw`` says otherwise.
BAND_STYLE = {"alpha": 0.25, "lw": 0}
#: The longest level name drawn as a tick label, the longest panel title and the longest output
#: name of a y label (characters); a longer one is cut, `ELLIPSIS` standing for what is left out
#: (in a level name, its middle: levels often differ only at their end).
LEVEL_CHARS = 14
TITLE_CHARS = 30
OUTPUT_CHARS = 26
ELLIPSIS = "\u2026"


def plain_text(text) -> str:
    """``text`` as matplotlib draws it literally: every ``$`` escaped (two of them would
    otherwise start and end mathtext, and an unmatched one could fail the drawing)."""
    return str(text).replace("$", r"\$")


def _shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, its last one `ELLIPSIS`, when it is longer."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def _level_labels(levels) -> list[str]:
    """The tick labels of a categorical feature's `levels`: each level's text, a long one
    (over `LEVEL_CHARS`) cut in the middle (``an unus…e first``), the cut made longer until no
    two labels are the same."""
    texts = [_level_text(v) for v in levels]
    longest = max((len(t) for t in texts), default=0)
    for limit in range(LEVEL_CHARS, longest + 1):
        labels = [_cut_middle(t, limit) for t in texts]
        if len(set(labels)) == len(set(texts)):
            return labels
    return texts


def _cut_middle(text: str, limit: int) -> str:
    """`text` with its middle replaced by `ELLIPSIS` so that it has `limit` characters, when it
    is longer."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - 1 - head
    return text[:head] + ELLIPSIS + text[len(text) - tail :]


def _class_text(label) -> str:
    """A class label as a message or a plot names it: ``'yes'`` (quoted) for a string, ``1``
    for a number (numpy's scalars as Python's)."""
    if isinstance(label, np.generic):
        label = label.item()
    return repr(label) if isinstance(label, str) else _level_text(label)


def _output_name(estimator, class_label=None) -> str:
    """What a fitted estimator's raw output is, as a plot names it: ``logit of class 'yes'``
    (a classifier: `class_label`'s logit, by default the positive class ``classes_[1]``;
    ``logit of each class`` for K > 2 classes without `class_label`), ``predicted price`` (a
    regressor fitted on a target named ``price``), else ``prediction``."""
    model = getattr(estimator, "best_estimator_", estimator)
    if is_classifier(model):
        classes = list(model.classes_)
        if class_label is None:
            if len(classes) > 2:
                return "logit of each class"
            class_label = classes[-1]
        return f"logit of class {_class_text(class_label)}"
    name = getattr(model, "target_name_", None)
    return "prediction" if name is None else f"predicted {name}"


def _first_column(ax) -> bool:
    """Whether `ax` is in the first column of its grid (an axes of no grid: True)."""
    spec = ax.get_subplotspec()
    return spec is None or spec.is_first_col()


def _level_text(level) -> str:
    """A categorical level as a tick label: ``2`` for 2.0, strings as they are."""
    if isinstance(level, numbers.Real) and not isinstance(level, bool):
        value = float(level)
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return str(level)


def _is_numeric(values: pd.Series) -> bool:
    """Whether the non-missing ``x`` of a feature are numbers (not level labels)."""
    kind = pd.api.types.infer_dtype(values, skipna=True)
    return kind in ("floating", "integer", "mixed-integer-float", "decimal", "empty")


def _new_axes(n: int, ncols: int):
    """A new pyplot figure with a grid of `ncols` columns for `n` panels (extras hidden), laid
    out by matplotlib's tight layout at every drawing: titles, tick labels and y labels of
    neighbouring panels do not overlap, and none leaves the figure."""
    import matplotlib.pyplot as plt

    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    _, axes = plt.subplots(
        nrows, ncols, figsize=(2.6 * ncols, 2.3 * nrows), squeeze=False, layout="tight"
    )
    axes = axes.ravel()
    for extra in axes[n:]:
        extra.set_visible(False)
    return axes[:n]


def _missing_axis(ax, lo: float, hi: float, missing: float) -> None:
    """Ticks of a numeric panel with a missing-value marker at ``missing`` (right of the curve's
    range [lo, hi]): the usual ticks inside the range, and one labelled `MISSING_LABEL`."""
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    class Locator(MaxNLocator):
        def tick_values(self, vmin, vmax):
            ticks = super().tick_values(lo, hi)
            tol = 1e-9 * max(abs(lo), abs(hi), 1.0)
            inside = ticks[(ticks >= lo - tol) & (ticks <= hi + tol)]
            return np.append(inside, missing)

    class Formatter(ScalarFormatter):
        def set_locs(self, locs):
            super().set_locs([t for t in locs if t != missing])

        def __call__(self, x, pos=None):
            return MISSING_LABEL if x == missing else super().__call__(x, pos)

    ax.xaxis.set_major_locator(Locator(nbins="auto", steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(Formatter())


class ShapeDisplay:
    """The shape u_j of each feature, one small panel per feature (Definition 3).

    Each panel draws the feature's rows of a tidy `shape_functions` table: the curve through its
    characteristic points (linear between them, Definition 2); a bag's band between ``lower``
    and ``upper`` (or ``value`` +- ``std``); the contribution of a missing value (the row whose
    ``x`` is NaN) as a separate marker right of the curve, at a tick labelled ``NA``; a
    categorical feature (flagged, or with level labels as ``x``) as a step per level with the
    levels as tick labels; with a ``class`` column, one line per class (the colour of the
    class's position among the table's classes) and a legend on the first panel; with
    `output`, the panels of the first column have the y label ``contribution to <output>``.
    Build it with `from_estimator` or `from_shapes`, or from a table and `plot`.

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

    Attributes
    ----------
    figure_ : matplotlib.figure.Figure
        The figure drawn on (after `plot`).
    axes_ : ndarray of matplotlib.axes.Axes, shape (n_features,)
        One panel per feature.
    lines_ : ndarray of matplotlib.lines.Line2D, shape (n_features, n_classes)
        The curves (one class without a ``class`` column).
    bands_ : ndarray of object, shape (n_features, n_classes)
        The bands (`matplotlib.collections.PolyCollection`), None without one.
    missing_ : ndarray of object, shape (n_features, n_classes)
        The missing-value markers (`matplotlib.lines.Line2D`), None where the feature has no
        row with ``x`` NaN.
    classes_ : list
        The classes in colour order (``[None]`` without a ``class`` column).
    legend_ : matplotlib.legend.Legend or None
        The classes' legend (on the first panel), None for one class.
    """

    def __init__(self, shapes: pd.DataFrame, features=None, categorical=None, output=None):
        missing = [c for c in ("feature", "x", "value") if c not in shapes.columns]
        if missing:
            raise PilidError(
                f"the shape table lacks column(s) {missing}; pass a table like "
                "shape_functions()'s (feature, x, value)"
            )
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
            shapes, features=cls._choose(features, names), categorical=categorical, output=output
        )
        return display.plot(
            ax=ax, ncols=ncols, line_kw=line_kw, band_kw=band_kw, reference_line=reference_line
        )

    @classmethod
    def from_estimator(
        cls, estimator, features=None, ax=None, ncols: int = 4, line_kw=None, band_kw=None
    ):
        """Draw the shapes of a fitted estimator with an additive part (PiLiD, PiLiB, their
        CV and bagged forms): its `shape_functions()`, categorical features as its
        ``categorical_``, the y label naming its output (the logit of the positive class by
        its label, the logits of K > 2 classes, or the predicted target by its name).

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
        return cls.from_shapes(
            table,
            features=features,
            categorical=categorical,
            ax=ax,
            ncols=ncols,
            line_kw=line_kw,
            band_kw=band_kw,
            feature_names=names,
            output=_output_name(model),
        )

    def plot(self, ax=None, ncols: int = 4, line_kw=None, band_kw=None, reference_line=True):
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

        Returns
        -------
        ShapeDisplay
            self, with `figure_`, `axes_`, `lines_`, `bands_`, `missing_`, `classes_` and
            `legend_` set. A new figure is laid out (tight layout) whenever it is drawn.
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
        names = table["feature"].astype(str)
        for i, (a, name) in enumerate(zip(axes, self.features)):
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

    def _panel(self, a, i: int, part: pd.DataFrame, name: str, line_kw, band_kw) -> None:
        """Draw feature `name` (its rows `part`) on axes `a`, panel `i`."""
        absent = pd.isna(part["x"]).to_numpy()
        present = part[~absent]
        categorical = self.categorical[name] or not _is_numeric(present["x"])
        has_band = {"lower", "upper"} <= set(part.columns)
        has_std = not has_band and "std" in part.columns
        if categorical:
            levels = list(dict.fromkeys(present["x"]))
            where = {level: p for p, level in enumerate(levels)}
            missing_at = float(len(levels))
            lo, hi = 0.0, float(max(len(levels) - 1, 0))
        else:
            xs = present["x"].to_numpy(dtype=np.float64)
            lo, hi = (float(xs.min()), float(xs.max())) if len(xs) else (0.0, 0.0)
            missing_at = hi + (MISSING_GAP * (hi - lo) if hi > lo else 1.0)
        style = dict(STEP_STYLE if categorical else LINE_STYLE)
        style.update(line_kw or {})
        band_style = dict(BAND_STYLE)
        band_style.update(band_kw or {})
        any_missing = bool(absent.any())
        for c, cls in enumerate(self.classes_):
            colour = f"C{c % 10}"
            rows = present if cls is None else present[(present["class"] == cls).to_numpy()]
            if categorical:
                x = np.array([where[v] for v in rows["x"]], dtype=np.float64)
                order = np.argsort(x, kind="stable")
            else:
                x = rows["x"].to_numpy(dtype=np.float64)
                order = np.argsort(x, kind="stable")
            x, rows = x[order], rows.iloc[order]
            value = rows["value"].to_numpy(dtype=np.float64)
            kw = {"color": colour, **style}
            if has_band or has_std:
                lower, upper = _band(rows, has_band)
                self.bands_[i, c] = a.fill_between(
                    x,
                    lower,
                    upper,
                    step="mid" if categorical else None,
                    **{"color": kw["color"], "label": "bag spread", **band_style},
                )
            if categorical:
                (line,) = a.step(x, value, where="mid", **kw)
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
        if any_missing:
            a.axvline((hi + missing_at) / 2, color="0.8", lw=0.6, ls=":")
            a.set_xlim(right=missing_at + (missing_at - hi) / 2)  # the marker whole
        if categorical:
            ticks = np.arange(len(levels) + any_missing, dtype=np.float64)
            labels = [plain_text(t) for t in _level_labels(levels)]
            a.set_xticks(ticks, labels + [MISSING_LABEL] * any_missing)
            if any(len(t) > 3 for t in labels):
                a.tick_params(axis="x", labelrotation=30)
                for text in a.get_xticklabels():
                    text.set_horizontalalignment("right")
                    text.set_rotation_mode("anchor")
        elif any_missing:
            _missing_axis(a, lo, hi, missing_at)


def _band(rows: pd.DataFrame, has_band: bool) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of `rows`: the ``lower``/``upper`` columns, else ``value`` +- ``std``."""
    if has_band:
        return rows["lower"].to_numpy(dtype=np.float64), rows["upper"].to_numpy(dtype=np.float64)
    value = rows["value"].to_numpy(dtype=np.float64)
    std = rows["std"].to_numpy(dtype=np.float64)
    return value - std, value + std
