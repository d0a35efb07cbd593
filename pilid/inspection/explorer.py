"""The explorer: a fitted PiLiD or PiLiB as one self-contained HTML page (Plotly).

``explore(estimator, X, "model.html")`` (or ``model.explore(X, "model.html")``, `ExploreMixin`)
writes one HTML file that a browser opens offline, without a server: Plotly's JavaScript is
inlined, every number is in the page. Its panels, each an interactive Plotly figure:

- **importance**: the terms' importances as bars, the largest on top
  (`pilid.inspection.importance.term_importances` on the rows of `X`), coloured by kind (main
  effect, pair term, deep part);
- **shapes**: per feature its shape u_j (Definition 3; `shape_functions`: a line between the
  characteristic points for a number, a bar per level for a category), the bag's band between
  `lower` and `upper`, and beside it the contributions of a missing value and, for a category,
  of a level not seen in fit (the feature's average); under it the density of `X`'s column (a
  histogram, or the count per level) and its count of missing values and unseen levels;
- **pairs**: the model's pair terms (PiLiD's ``pairs_``, PiLiB's two-feature groups of
  ``interactions_``) as heat maps of ``interaction_grid`` (at most `max_pairs` of them);
- **deep part**: its share of the output's variance per output (`deep_share`) and the spread of
  its contribution over the rows of `X`;
- **one row**: a waterfall of the parts of one row's output (`explain`, as
  `ExplanationDisplay` draws it), the row picked in a dropdown over the first `max_rows` rows
  of `X` (Plotly's own ``updatemenus``; each row's bars are in the page).

Everything is in output units: the target's for a regressor, the logit for a classifier (of
``classes_[1]`` for two classes; of `class_label`, by default the first class, for K > 2
classes, which the page names). Plotly is an optional dependency (``pip install
"pilid[explore]"``), imported when `explore` runs; `pilid.inspection.explorer_panels` draws the
panels.
"""

from __future__ import annotations

import html
import itertools
import numbers
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from pilid.atomic import write_text
from pilid.errors import PilidError
from pilid.inspection import explorer_panels as panels
from pilid.inspection.displays import _class_text, _output_name
from pilid.inspection.explanation import DEEP, deep_share, explain
from pilid.models.inputs import UnseenCategoryWarning

__all__ = ["ExploreMixin", "explore"]

#: Rows of `X` the row picker offers by default (its first ones).
MAX_ROWS = 200
#: Pair terms drawn as heat maps by default (the model's first ones).
MAX_PAIRS = 6
#: Grid points per feature of a pair's heat map.
PAIR_GRID = 20
#: Options of every figure (no Plotly logo, no link out of the page).
CONFIG = {"displaylogo": False, "responsive": True}


def _plotly():
    """Plotly's modules, or one line naming the extra that installs it."""
    try:
        import plotly
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots
    except ImportError:
        raise PilidError(
            'explore draws with plotly, which is not installed; pip install "pilid[explore]"'
        ) from None
    return plotly, go, make_subplots


def _fitted(estimator):
    """The fitted PiLiD / PiLiB behind `estimator` (a CV search's refit model)."""
    est = getattr(estimator, "best_estimator_", estimator)
    if not hasattr(est, "shape_functions"):
        raise PilidError(
            f"explore takes a fitted PiLiD or PiLiB estimator; {type(est).__name__} has no "
            "shapes to explore"
        )
    check_is_fitted(est, "module_")
    return est


def _count(value, name: str, example: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise PilidError(f"{name}={value!r} is not a count; pass an integer >= 1, e.g. {example}")
    return int(value)


def _frame(est, X) -> pd.DataFrame:
    """`X` as a DataFrame whose columns are the model's features, in order."""
    names = est._feature_names()
    if isinstance(X, pd.DataFrame):
        if [str(c) for c in X.columns] == names:
            return X.set_axis(names, axis=1)
        lacking = [n for n in names if n not in X.columns]
        if lacking:
            raise PilidError(
                f"X lacks the model's feature {lacking[0]!r}; pass the columns it was fitted on"
            )
        return X[names]
    arr = np.asarray(X, dtype=object if np.asarray(X).dtype.kind in "OUS" else None)
    if arr.ndim != 2 or arr.shape[1] != len(names):
        raise PilidError(
            f"X has shape {arr.shape}; pass a table of {len(names)} columns, as in fit"
        )
    return pd.DataFrame(arr, columns=names)


def _importances(est, X, class_label) -> pd.DataFrame:
    """The terms' importances (`pilid.inspection.importance.term_importances`) for the shown
    output, largest first."""
    from pilid.inspection.importance import term_importances

    table = term_importances(est, X)
    if "class" in table.columns:
        table = table[table["class"] == class_label]
    return table.sort_values("importance", ascending=False, ignore_index=True)


def _special_values(est, k) -> tuple[np.ndarray, np.ndarray]:
    """Per feature the contribution of a missing value (learned where fit saw one, else the
    feature's average) and of a value not seen in fit, in output units."""
    m = est.n_features_in_
    probe = np.vstack([np.full(m, np.nan), np.full(m, np.inf)])  # missing, unseen everywhere
    _, contrib, _ = est._decompose(probe)
    if k is not None:
        contrib = contrib[..., k]
    return contrib[0], contrib[1]


# ------------------------------------------------------------------------------------- page
PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       padding: 0 1em; color: #222; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.2em; margin-top: 1.6em; }}
.note {{ color: #555; }}
.grid {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr));
        gap: 0.5em; }}
</style>
<script type="text/javascript">{plotly}</script>
</head>
<body>
<h1>{title}</h1>
{body}
</body>
</html>
"""


def explore(
    estimator,
    X,
    path,
    *,
    class_label=None,
    max_rows: int = MAX_ROWS,
    max_pairs: int = MAX_PAIRS,
    max_features: int = 10,
) -> Path:
    """Write the explorer of a fitted PiLiD or PiLiB on the rows `X`: one self-contained HTML
    file (module docstring).

    Parameters
    ----------
    estimator : fitted PiLiD or PiLiB estimator
        A regressor or classifier (two or K classes, bags and CV searches included).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows the page reads: the importances, the densities, the deep part's share, and
        the row picker's rows (its first `max_rows`).
    path : str or Path
        The HTML file to write (replaced whole).
    class_label : label or None, default=None
        K > 2 classes: the class whose logit the page shows; None: the first class.
    max_rows : int, default=200
        The rows of `X` the row picker offers (the first ones).
    max_pairs : int, default=6
        The pair terms drawn as heat maps (the model's first ones).
    max_features : int, default=10
        The features of a row's waterfall drawn one by one; the rest share a bar.

    Returns
    -------
    Path
        `path`, written.
    """
    plotly, go, make_subplots = _plotly()
    est = _fitted(estimator)
    max_rows = _count(max_rows, "max_rows", MAX_ROWS)
    max_features = _count(max_features, "max_features", 10)
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, numbers.Integral) or max_pairs < 0:
        raise PilidError(f"max_pairs={max_pairs!r} is not a count; pass an integer >= 0, e.g. 6")
    frame = _frame(est, X)
    if len(frame) == 0:
        raise PilidError("X has no rows; pass at least one row to explore")
    explained = explain(est, frame)  # says once which levels fit never saw
    k, label, notes = None, None, []
    if isinstance(explained.index, pd.MultiIndex):  # K > 2 classes: one class's logit
        classes = list(est.classes_)
        label = classes[0] if class_label is None else class_label
        if label not in classes:
            raise PilidError(
                f"class_label={class_label!r} is not a class of the model; pass one of {classes}"
            )
        k = classes.index(label)
        explained = explained.loc[label]
        notes.append(
            f"The model has {len(classes)} classes; this page shows the logit of class "
            f"{_class_text(label)} (explore(..., class_label=...) writes another)."
        )
    elif class_label is not None:
        raise PilidError(
            f"class_label={class_label!r} picks a class of a model of K > 2 classes; this one "
            "has one output, leave class_label=None"
        )
    with warnings.catch_warnings():  # explain has warned of unseen levels
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        figures = _figures(go, make_subplots, est, frame, explained, k, max_pairs, notes)
    output = _output_name(est, label)
    shown = frame.iloc[:max_rows]
    rows = panels.waterfalls(est._feature_names(), shown, explained.iloc[:max_rows], max_features)
    figures.append(("One row", panels.waterfall_figure(go, rows, list(shown.index), output)))
    return _write(plotly, est, figures, notes, len(frame), len(shown), output, path)


def _figures(go, make_subplots, est, frame, explained, k, max_pairs, notes) -> list:
    """The panels other than the row picker, as ``(section, figure)``; `k` the class shown
    (K > 2 classes) or None. A note for the page goes into `notes`."""
    label = None if k is None else est.classes_[k]
    output = _output_name(est, label)
    outputs = [_output_name(est)]
    shapes = est.shape_functions()
    if k is not None:
        shapes = shapes[shapes["class"] == label]
        outputs = [f"logit of class {_class_text(c)}" for c in est.classes_]
    importances = _importances(est, frame, label)
    figures = [("Importance", panels.importance_figure(go, importances, output))]
    missing, unseen = _special_values(est, k)
    for j, name in enumerate(est._feature_names()):
        shape = shapes[shapes["feature"] == name]
        fig = panels.shape_figure(
            go, make_subplots, est, j, shape, frame[name], missing[j], unseen[j], output
        )
        figures.append(("Shapes", fig))
    pairs = _pairs(est)
    if len(pairs) > max_pairs:
        notes.append(f"The model has {len(pairs)} pair terms; the first {max_pairs} are drawn.")
    for pair in pairs[:max_pairs]:
        grid = est.interaction_grid(pair[0], pair[1], n=PAIR_GRID)
        if "class" in grid.columns:
            grid = grid[grid["class"] == label]
        figures.append(("Pair terms", panels.pair_figure(go, est, pair, grid, output)))
    shares = deep_share(est, frame)
    deep = explained[DEEP].to_numpy(dtype=np.float64)
    figures.append(
        ("Deep part", panels.deep_figure(go, make_subplots, shares, outputs, k or 0, deep, output))
    )
    return figures


def _pairs(est) -> list[tuple[str, str]]:
    """The model's pair terms: PiLiD's ``pairs_``, each two features of a group of PiLiB's
    ``interactions_`` (for K > 2 classes, of any class)."""
    pairs = getattr(est, "pairs_", None)
    if pairs is None and hasattr(est, "interactions_"):
        found = est.interactions_(min_order=2)
        groups = found.values() if isinstance(found, dict) else [found]
        pairs = [p for gs in groups for g in gs for p in itertools.combinations(g, 2)]
    return list(dict.fromkeys(tuple(p) for p in pairs or []))


def _write(plotly, est, figures, notes, n_rows, n_shown, output, path) -> Path:
    import plotly.io as pio

    sections, current = [], None
    for i, (section, fig) in enumerate(figures):
        if section != current:
            if current is not None:
                sections.append("</div>")
            sections.append(f"<h2>{section}</h2>")
            sections.append('<div class="grid">' if section == "Shapes" else "<div>")
            current = section
        div = pio.to_html(
            fig,
            full_html=False,
            include_plotlyjs=False,
            config=CONFIG,
            div_id=f"panel-{i}",
            default_height=f"{fig.layout.height}px",
        )
        sections.append(f'<div class="panel">{div}</div>')
    sections.append("</div>")
    intro = (
        f"<p class='note'>Every value is a contribution to the {html.escape(output)}, read on "
        f"{n_rows} rows; the row picker offers the first {n_shown}.</p>"
    )
    intro += "".join(f"<p class='note'>{html.escape(note)}</p>" for note in notes)
    title = f"{type(est).__name__} explorer"
    text = PAGE.format(
        title=html.escape(title),
        plotly=plotly.offline.get_plotlyjs(),
        body=intro + "\n".join(sections),
    )
    return write_text(path, text)


class ExploreMixin:
    """`explore` for the estimators (delegating to `pilid.inspection.explorer.explore`)."""

    def explore(self, X, path, **options) -> Path:
        """Write this model's explorer on the rows `X` to the HTML file `path`: importances,
        shapes with bands and densities, pair terms, the deep part's share and a row picker's
        waterfall, in one self-contained page (`pilid.inspection.explorer.explore`, which
        takes the `options`: ``class_label``, ``max_rows``, ``max_pairs``, ``max_features``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows the page reads.
        path : str or Path
            The HTML file to write.
        **options
            ``class_label``, ``max_rows``, ``max_pairs``, ``max_features`` of `explore`.

        Returns
        -------
        Path
            `path`, written.
        """
        return explore(self, X, path, **options)
