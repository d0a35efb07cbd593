"""The panels of the explorer (`pilid.inspection.explorer`): one Plotly figure each.

Each function takes Plotly's ``graph_objects`` (`go`; and ``make_subplots`` where a panel has
subplots) and the numbers `explore` has read off the model, and returns a figure; none imports
Plotly itself, so that importing this module needs no Plotly. Output units as in the explorer.
"""

from __future__ import annotations

import html
import numbers

import numpy as np
import pandas as pd

from pilid.inspection.displays import _level_labels
from pilid.inspection.explanation import DEEP, INTERCEPT

__all__ = [
    "deep_figure",
    "importance_figure",
    "pair_figure",
    "shape_figure",
    "waterfall_figure",
    "waterfalls",
]

#: Bins of a numeric feature's histogram.
BINS = 30
#: Colours: a term's kind in the importance bars; the waterfall's rises, falls and totals.
KIND_COLOURS = {"main": "#1f77b4", "pair": "#9467bd", "deep": "#7f7f7f"}
UP, DOWN, TOTAL = "#d62728", "#1f77b4", "#7f7f7f"
SHAPE, BAND, DENSITY, SPECIAL = "#1f77b4", "rgba(31,119,180,0.25)", "#aab7c4", "#ff7f0e"


def _layout(fig, title: str, height: int) -> None:
    fig.update_layout(
        title={"text": html.escape(title), "x": 0.01, "font": {"size": 14}},
        height=height,
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        showlegend=False,
        template="plotly_white",
    )


def importance_figure(go, table: pd.DataFrame, output: str):
    """Bars of `term_importances`' table (``term``, ``kind``, ``importance``), largest on top."""
    table = table.iloc[::-1]  # the largest on top
    colours = [KIND_COLOURS.get(k, TOTAL) for k in table["kind"]]
    fig = go.Figure(
        go.Bar(
            x=table["importance"].to_numpy(dtype=np.float64),
            y=[str(t) for t in table["term"]],
            orientation="h",
            marker_color=colours,
            customdata=list(table["kind"]),
            hovertemplate="%{y} (%{customdata}): %{x:.4g}<extra></extra>",
        )
    )
    _layout(fig, f"Term importance (mean |contribution| to the {output})", 120 + 22 * len(table))
    fig.update_xaxes(title_text=f"importance ({output})")
    fig.update_yaxes(type="category")
    return fig


def shape_figure(go, make_subplots, est, j, shape, column, missing, unseen, output):
    """Feature `j`'s panel: its shape (and band), its missing / unseen values, its density."""
    name = est._feature_names()[j]
    levels = getattr(est, "categories_", {}).get(j)
    special = ["missing"] + (["unseen"] if levels is not None else [])
    fig = make_subplots(
        rows=2,
        cols=2,
        shared_xaxes="columns",
        shared_yaxes="rows",
        row_heights=[0.68, 0.32],
        column_widths=[0.84, 0.16],
        horizontal_spacing=0.03,
        vertical_spacing=0.05,
    )
    curve = shape[shape["x"].notna()]
    value = curve["value"].to_numpy(dtype=np.float64)
    band = {"lower", "upper"} <= set(curve.columns)
    is_missing = column.isna().to_numpy()
    if levels is None:  # a number: the piecewise-linear shape over a histogram of X's column
        x = curve["x"].to_numpy(dtype=np.float64)
        if band:
            upper = curve["upper"].to_numpy(dtype=np.float64)
            lower = curve["lower"].to_numpy(dtype=np.float64)
            fig.add_trace(
                go.Scatter(x=x, y=upper, mode="lines", line_width=0, hoverinfo="skip"), 1, 1
            )
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=lower,
                    mode="lines",
                    line_width=0,
                    fill="tonexty",
                    fillcolor=BAND,
                    hoverinfo="skip",
                ),
                1,
                1,
            )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=value,
                mode="lines+markers",
                line={"color": SHAPE, "width": 2},
                marker={"size": 4},
                hovertemplate=f"{html.escape(name)} = %{{x:.4g}}: %{{y:.4g}}<extra></extra>",
            ),
            1,
            1,
        )
        values = pd.to_numeric(column[~is_missing], errors="coerce").to_numpy(dtype=np.float64)
        values = values[np.isfinite(values)]
        counts, edges = np.histogram(values, bins=BINS) if values.size else ([], [0.0])
        fig.add_trace(
            go.Bar(
                x=(np.asarray(edges[:-1]) + np.asarray(edges[1:])) / 2,
                y=counts,
                width=np.diff(edges),
                marker_color=DENSITY,
                hovertemplate="%{x:.4g}: %{y} rows<extra></extra>",
            ),
            2,
            1,
        )
        unseen_rows = 0
    else:  # a category: a bar per level over the count of each level in X's column
        labels = _level_labels(list(curve["x"]))
        error = None
        if band:
            error = {
                "type": "data",
                "symmetric": False,
                "array": curve["upper"].to_numpy(dtype=np.float64) - value,
                "arrayminus": value - curve["lower"].to_numpy(dtype=np.float64),
                "color": "#444",
            }
        fig.add_trace(
            go.Bar(
                x=labels,
                y=value,
                marker_color=SHAPE,
                error_y=error,
                hovertemplate=f"{html.escape(name)} = %{{x}}: %{{y:.4g}}<extra></extra>",
            ),
            1,
            1,
        )
        given = column[~is_missing]
        counts = given.value_counts()
        known = [counts.get(level, 0) for level in curve["x"]]
        unseen_rows = int(len(given) - sum(known))
        fig.add_trace(
            go.Bar(
                x=labels,
                y=known,
                marker_color=DENSITY,
                hovertemplate="%{x}: %{y} rows<extra></extra>",
            ),
            2,
            1,
        )
        fig.update_xaxes(type="category", row=1, col=1)
    specials = [missing] + ([unseen] if levels is not None else [])
    learned = bool(np.asarray(getattr(est, "missing_", np.zeros(est.n_features_in_)))[j])
    notes = ["learned in fit" if learned else "none in fit: the average"]
    notes += ["not seen in fit: the average"] * (len(special) - 1)
    fig.add_trace(
        go.Bar(
            x=special,
            y=specials,
            marker_color=[SPECIAL if learned else TOTAL] + [TOTAL] * (len(special) - 1),
            customdata=notes,
            hovertemplate="%{x} (%{customdata}): %{y:.4g}<extra></extra>",
        ),
        1,
        2,
    )
    fig.add_trace(
        go.Bar(
            x=special,
            y=[int(is_missing.sum())] + ([unseen_rows] if levels is not None else []),
            marker_color=DENSITY,
            hovertemplate="%{x}: %{y} rows<extra></extra>",
        ),
        2,
        2,
    )
    fig.update_xaxes(type="category", col=2)
    fig.update_yaxes(title_text="contribution", row=1, col=1)
    fig.update_yaxes(title_text="rows", row=2, col=1)
    _layout(fig, f"{name} (contribution to the {output})", 360)
    fig.update_layout(bargap=0.15)
    return fig


def _axis_labels(est, j: int, values) -> list:
    levels = getattr(est, "categories_", {}).get(j)
    if levels is None:
        return [float(v) for v in values]
    return _level_labels([levels[int(v)] for v in values])


def pair_figure(go, est, pair, grid: pd.DataFrame, output: str):
    """The heat map of a pair's ``interaction_grid`` (a text feature's axis by its levels)."""
    a, b = (est._index(f) for f in pair)
    table = grid.pivot_table(index="x_a", columns="x_b", values="value", sort=True)
    z = table.to_numpy(dtype=np.float64)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=_axis_labels(est, b, table.columns),
            y=_axis_labels(est, a, table.index),
            colorscale="RdBu_r",
            zmid=0.0,
            colorbar={"title": {"text": "effect"}, "thickness": 12},
            hovertemplate=f"{html.escape(pair[0])} = %{{y}}, {html.escape(pair[1])} = %{{x}}: "
            "%{z:.4g}<extra></extra>",
        )
    )
    _layout(fig, f"{pair[0]} x {pair[1]} (interaction, {output})", 380)
    fig.update_xaxes(title_text=html.escape(pair[1]))
    fig.update_yaxes(title_text=html.escape(pair[0]))
    return fig


def deep_figure(go, make_subplots, shares, outputs, shown: int, deep: np.ndarray, output):
    """`deep_share`'s variance share per output (`shown` the output of the page) and a
    histogram of the deep part over the rows."""
    fig = make_subplots(rows=1, cols=2, column_widths=[0.35, 0.65], horizontal_spacing=0.12)
    share = np.array([s["variance_share"] for s in shares])
    mean_abs = [s["mean_abs_deep"] for s in shares]
    colours = [SPECIAL if k == shown else TOTAL for k in range(len(shares))]
    fig.add_trace(
        go.Bar(
            x=outputs,
            y=share,
            marker_color=colours,
            customdata=mean_abs,
            text=[f"{v:.1%}" for v in share],
            textposition="auto",
            hovertemplate="%{x}: %{y:.1%} of the variance, mean |deep| %{customdata:.4g}"
            "<extra></extra>",
        ),
        1,
        1,
    )
    counts, edges = np.histogram(deep, bins=BINS)
    fig.add_trace(
        go.Bar(
            x=(edges[:-1] + edges[1:]) / 2,
            y=counts,
            width=np.diff(edges),
            marker_color=DENSITY,
            hovertemplate="deep part %{x:.4g}: %{y} rows<extra></extra>",
        ),
        1,
        2,
    )
    fig.update_yaxes(title_text="share of the output's variance", tickformat=".1%", row=1, col=1)
    fig.update_xaxes(type="category", row=1, col=1)
    fig.update_xaxes(title_text=f"deep part of the {output}", row=1, col=2)
    fig.update_yaxes(title_text="rows", row=1, col=2)
    _layout(fig, "Deep part: its share of the output and its spread over the rows", 340)
    return fig


def waterfalls(names, values: pd.DataFrame, explained: pd.DataFrame, max_features: int):
    """Each row's waterfall as ``(labels, contributions, terms)``: the intercept, the
    `max_features` largest contributions, the rest summed, the deep part and the total."""
    contrib = explained[names].to_numpy(dtype=np.float64)
    n, m = contrib.shape
    order = np.argsort(-np.abs(contrib), axis=1, kind="stable")
    shown, rest = order[:, :max_features], order[:, max_features:]
    shown_values = np.take_along_axis(contrib, shown, axis=1)
    rest_values = np.take_along_axis(contrib, rest, axis=1).sum(1)
    intercept = explained[INTERCEPT].to_numpy(dtype=np.float64)
    deep = explained[DEEP].to_numpy(dtype=np.float64)
    columns = [intercept[:, None], shown_values]
    if rest.shape[1]:
        columns.append(rest_values[:, None])
    parts = np.hstack(columns + [deep[:, None]])
    totals = parts.sum(1)
    texts = values.astype(object).where(values.notna(), "NA").to_numpy()
    rows = []
    for i in range(n):
        terms = [INTERCEPT] + [names[j] for j in shown[i]]
        labels = [INTERCEPT] + [f"{names[j]} = {_value(texts[i, j])}" for j in shown[i]]
        if rest.shape[1]:
            terms.append("rest")
            labels.append(f"{rest.shape[1]} other feature" + ("s" if rest.shape[1] > 1 else ""))
        terms += [DEEP, "total"]
        labels += [DEEP, "output"]
        rows.append((labels, [*parts[i].tolist(), float(totals[i])], terms))
    return rows


def _value(value) -> str:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{float(value):.4g}"
    return str(value)


def waterfall_figure(go, rows, index, output: str):
    """The waterfall of the first of `rows` (`waterfalls`) and a dropdown (Plotly's
    ``updatemenus``) whose entry i shows row i's, `index` naming the rows."""

    def trace(labels, contrib, terms):
        measure = ["absolute"] + ["relative"] * (len(contrib) - 2) + ["total"]
        return {
            "y": labels,
            "x": contrib,
            "customdata": terms,
            "measure": measure,
            "text": [f"{v:+.3g}" if k else f"{v:.3g}" for k, v in enumerate(contrib)],
        }

    first = trace(*rows[0])
    fig = go.Figure(
        go.Waterfall(
            orientation="h",
            textposition="outside",
            increasing={"marker": {"color": UP}},
            decreasing={"marker": {"color": DOWN}},
            totals={"marker": {"color": TOTAL}},
            connector={"line": {"color": "#bbb", "width": 1}},
            hovertemplate="%{y}: %{x:.4g}<extra></extra>",
            **first,
        )
    )

    def title(i):
        return f"Row {i} (index {html.escape(str(index[i]))}): {output} = {rows[i][1][-1]:.4g}"

    buttons = []
    for i, row in enumerate(rows):
        data = trace(*row)
        buttons.append(
            {
                "label": f"row {i} (index {index[i]})",
                "method": "update",
                "args": [{k: [v] for k, v in data.items()}, {"title.text": title(i)}],
            }
        )
    height = 170 + 30 * len(first["x"])
    _layout(fig, title(0), height)
    fig.update_layout(
        margin={"l": 220, "t": 90},
        updatemenus=[
            {
                "type": "dropdown",
                "buttons": buttons,
                "active": 0,
                "showactive": True,
                "x": 1.0,
                "xanchor": "right",
                "y": 1.0,
                "yanchor": "bottom",
                "pad": {"t": 4, "b": 28},
            }
        ],
    )
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_xaxes(title_text=output)
    return fig
