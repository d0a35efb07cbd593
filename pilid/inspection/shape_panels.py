"""The pieces of a shape panel (`pilid.inspection.displays.ShapeDisplay`): the text of names,
levels and outputs as a plot draws them, the grid of a new figure's panels, the ticks of a
missing-value marker, the strip of the data's distribution along a panel's bottom and a bag's
band. `pilid.inspection.displays` re-exports the names its callers read from it.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.base import is_classifier

from pilid.errors import PilidError
from pilid.inspection.joint_grid import FeatureCounts

#: The tick label of the marker drawn for a feature's missing values (a row with ``x`` NaN).
MISSING_LABEL = "NA"
#: The gap between a numeric curve's last point and its missing-value marker (share of the range).
MISSING_GAP = 0.2
#: What a shape's curve looks like unless ``line_kw`` says otherwise (numeric, categorical).
LINE_STYLE = {"marker": "o", "ms": 2, "lw": 1.2}
STEP_STYLE = {"marker": "o", "ms": 3}
#: A bag's band unless ``band_kw`` says otherwise.
BAND_STYLE = {"alpha": 0.25, "lw": 0}
#: The line width of a level's tick label (characters; a longer name is wrapped onto at most
#: `LEVEL_LINES` lines), the longest panel title and the longest output name of a y label; a
#: longer one is cut at its end, `ELLIPSIS` standing for what is left out.
LEVEL_CHARS = 14
LEVEL_LINES = 3
#: More levels than this are drawn as one rotated line each instead of wrapped.
WRAPPED_LEVELS = 4
#: A numeric feature with at most this many distinct values is drawn as points at its values.
FEW_VALUES = 10
#: The height of the data's histogram strip (share of the panel's height) and its look.
DENSITY_HEIGHT = 0.16
DENSITY_STYLE = {"color": "0.55", "alpha": 0.35, "lw": 0, "zorder": 0}
TITLE_CHARS = 30
OUTPUT_CHARS = 26
ELLIPSIS = "\u2026"


def plain_text(text) -> str:
    """``text`` as matplotlib draws it literally: every ``$`` escaped (two of them would
    otherwise start and end mathtext, and an unmatched one could fail the drawing)."""
    return str(text).replace("$", r"\$")


def require_columns(table, columns: tuple[str, ...], what: str, source: str) -> None:
    """A one-line `PilidError` when `table` (a display's `what`, e.g. "shape table") lacks any
    of `columns`, naming the function whose table it should be like (`source`)."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise PilidError(
            f"the {what} lacks column(s) {missing}; pass a table like {source}()'s "
            f"({', '.join(columns)})"
        )


def _shorten(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, its last one `ELLIPSIS`, when it is longer."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + ELLIPSIS


def _level_labels(levels, limit: int = LEVEL_CHARS) -> list[str]:
    """One line per level of a categorical feature's `levels`: each level's text, a long one
    (over `limit` characters) shortened at its end with `ELLIPSIS` (never in the middle), the
    limit raised until no two labels are the same."""
    texts = [_level_text(v) for v in levels]
    longest = max((len(t) for t in texts), default=0)
    for width in range(limit, longest + 1):
        labels = [_shorten(t, width) for t in texts]
        if len(set(labels)) == len(set(texts)):
            return labels
    return texts


def _wrapped_labels(levels) -> list[str]:
    """The tick labels of a few levels: each wrapped onto lines of `LEVEL_CHARS` characters,
    at most `LEVEL_LINES` of them (the rest cut at the end with `ELLIPSIS`), more lines allowed
    where two labels would otherwise be the same."""
    import textwrap

    texts = [_level_text(v) for v in levels]
    lines = [textwrap.wrap(t, LEVEL_CHARS, break_long_words=False) or [t] for t in texts]
    for keep in range(LEVEL_LINES, max((len(x) for x in lines), default=0) + 1):
        labels = [
            "\n".join(x[: keep - 1] + [x[keep - 1] + ELLIPSIS]) if len(x) > keep else "\n".join(x)
            for x in lines
        ]
        if len(set(labels)) == len(set(texts)):
            return labels
    return ["\n".join(x) for x in lines]


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


def _strip(a, counts: FeatureCounts, where, missing_at: float):
    """Draw the data's distribution `counts` along the bottom of panel `a` (x in data units,
    height a share of the axes, `DENSITY_HEIGHT` for the largest count) and return the bars:
    a histogram's bins, or a bar per value (`where`: a categorical feature's level -> its
    position), the missing rows' at `missing_at`."""
    from matplotlib.transforms import blended_transform_factory

    heights = np.asarray(counts.counts, dtype=np.float64)
    if counts.edges is not None:
        edges = np.asarray(counts.edges, dtype=np.float64)
        left, width = edges[:-1], np.diff(edges)
    else:
        values = list(counts.values)
        if where is not None:  # levels at their positions (one the table lacks is not drawn)
            keep = np.array([v in where for v in values], dtype=bool)
            heights = heights[keep]
            left = np.array([where[v] for v, k in zip(values, keep) if k], dtype=np.float64)
            step = 1.0
        else:
            left = np.asarray(values, dtype=np.float64)
            step = float(np.min(np.diff(left))) if len(left) > 1 else 1.0
        width = np.full(len(left), 0.6 * step)
        left = left - width / 2
    if counts.missing:
        heights = np.append(heights, counts.missing)
        nan_width = float(np.min(width)) if len(width) else 1.0
        left, width = np.append(left, missing_at - nan_width / 2), np.append(width, nan_width)
    top = heights.max() if len(heights) and heights.max() > 0 else 1.0
    blend = blended_transform_factory(a.transData, a.transAxes)  # y: a share of the panel
    return a.bar(
        left,
        DENSITY_HEIGHT * heights / top,
        width=width,
        align="edge",
        transform=blend,
        **DENSITY_STYLE,
    )


def _band(rows: pd.DataFrame, has_band: bool) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of `rows`: the ``lower``/``upper`` columns, else ``value`` +- ``std``."""
    if has_band:
        return rows["lower"].to_numpy(dtype=np.float64), rows["upper"].to_numpy(dtype=np.float64)
    value = rows["value"].to_numpy(dtype=np.float64)
    std = rows["std"].to_numpy(dtype=np.float64)
    return value - std, value + std
