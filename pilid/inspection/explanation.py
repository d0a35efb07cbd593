"""The explanation of single predictions: a table of additive parts and its waterfall plot.

Eq. (9) of Guo et al., IJCAI 2020 writes the raw output of PiLiD (and PiLiB) as a sum:
``intercept_ + sum_j u_j(x_j) + deep part``. `explain` lays that sum out per row: one column per
feature (u_j, centred on the training rows as `feature_contributions` is), a column ``deep``
(the MLP, or PiLiB's / NIT's gated blocks: the interactions) and a column ``intercept``, in the
output's units: the target's for a regressor (the standardisation of the target undone), the
logit for a classifier. The columns of a row sum to `predict` (regression) or
`decision_function` (classification) up to float32 rounding of the network (about 1e-7 of the
output's size). A bag (``n_bags`` > 1, `pilid.models.bagging`) averages its members' parts,
which again sum to its output. NIT has no additive component: its table has ``deep`` and
``intercept`` only. `deep_share` says how much of the output on given rows the deep part
carries (the variance of the ``deep`` column over the variance of the output).

`ExplanationDisplay` draws one row as a waterfall, as scikit-learn's Display objects do
(``ExplanationDisplay.from_estimator(est, X, row=0)``): it is kept apart from the estimators,
which only delegate to it (`ExplainMixin`). It draws on the given axes, or (as scikit-learn's
displays and `pilid.inspection.displays` do) on a new pyplot figure, ``plt.gcf()``, that notebooks
show and ``plt.savefig`` saves. The waterfall starts at the intercept (a marker, not a bar from
0) and its value axis spans the bars with a margin, so that contributions are not slivers
beside a large intercept. Its title names the output (``logit of class 'yes' = 0.21
(probability 0.55)`` for a classifier: the logit and the class's probability, ``predicted
price = 12.3`` for a regressor fitted on a target named ``price``) and a legend says what the
bars' colours mean. Feature names are drawn literally
(`pilid.inspection.plotting.plain_text`: a ``$`` is a dollar sign).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from pilid.errors import PilidError
from pilid.inspection.displays import _class_text, _output_name
from pilid.inspection.plotting import plain_text

__all__ = ["DEEP", "INTERCEPT", "ExplainMixin", "ExplanationDisplay", "deep_share", "explain"]

#: The column of `explain` holding the deep (interaction) part of Eq. (9).
DEEP = "deep"
#: The column of `explain` holding the constant of the raw output.
INTERCEPT = "intercept"
#: Bar colours of the waterfall: contributions raising / lowering the output, the rest.
UP, DOWN, NEUTRAL = "#d62728", "#1f77b4", "0.6"
#: The margin of the waterfall's value axis on each side (share of the span of the bars).
WATERFALL_MARGIN = 0.12
#: What the legend says each colour means.
COLOUR_MEANING = {
    UP: "raises the output",
    DOWN: "lowers the output",
    NEUTRAL: "intercept, deep part",
}


def deep_share(estimator, X) -> list[dict]:
    """How much of a fitted estimator's raw output on the rows `X` its deep part carries, per
    output (one for a regressor or two classes, K for K classes): ``rows``, ``variance_share``
    (the variance of `explain`'s `DEEP` column over the variance of the raw output; 0 where the
    output is constant), ``mean_abs_deep`` and ``output_std`` (the raw output's standard
    deviation), all from ``decompose(X)``."""
    intercept, contrib, deep = estimator.decompose(X)
    parts = [p for p in (contrib, deep) if p is not None]
    n = parts[0].shape[0]
    raw = np.asarray(intercept) + (0.0 if contrib is None else contrib.sum(1))
    raw = raw + (0.0 if deep is None else deep)
    deep = np.zeros_like(raw) if deep is None else deep
    raw, deep = raw.reshape(n, -1), deep.reshape(n, -1)
    total, spread = raw.var(axis=0), deep.var(axis=0)  # per output
    share = np.where(total > 0, spread / np.where(total > 0, total, 1.0), 0.0)
    mean_abs = np.abs(deep).mean(axis=0)
    return [
        {
            "rows": int(n),
            "variance_share": float(share[k]),
            "mean_abs_deep": float(mean_abs[k]),
            "output_std": math.sqrt(float(total[k])),
        }
        for k in range(raw.shape[1])
    ]


def explain(estimator, X) -> pd.DataFrame:
    """The additive parts of a fitted estimator's raw output, one row per sample of `X`.

    Parameters
    ----------
    estimator : fitted PiLiD, PiLiB or NIT estimator
        Anything with ``decompose(X)`` (`pilid.estimators.neural.NeuralEstimator.decompose`).
    X : array-like or DataFrame of shape (n_samples, n_features)
        The samples, as the estimator's `predict` takes them.

    Returns
    -------
    pandas.DataFrame of shape (n_samples, n_features + 2)
        One column per feature (its contribution u_j, named as in ``feature_names_in_``, or
        ``x0``, ``x1``, ... for arrays; none for NIT), then `DEEP` (0 for a model without a
        deep part) and `INTERCEPT`. Each row sums to the raw output: `predict` for a
        regressor, `decision_function` (the logit) for a classifier. The index is `X`'s
        when `X` is a DataFrame. A classifier fitted on K > 2 classes
        (`pilid.models.multiclass`) gives K blocks of rows, a MultiIndex (``class``, row):
        ``table.loc[c]`` explains the logit of class ``c`` (its column of
        `decision_function`).
    """
    intercept, contrib, deep = estimator.decompose(X)
    index = X.index if isinstance(X, pd.DataFrame) else None
    if np.ndim(intercept) == 1:  # K > 2 classes: one table per class logit
        parts = [
            _table(
                estimator,
                intercept[k],
                None if contrib is None else contrib[..., k],
                None if deep is None else deep[..., k],
                index,
            )
            for k in range(len(intercept))
        ]
        return pd.concat(parts, keys=list(estimator.classes_), names=["class", None])
    return _table(estimator, intercept, contrib, deep, index)


def _table(estimator, intercept, contrib, deep, index) -> pd.DataFrame:
    """`explain`'s table of one raw output (a value, a logit, or one class's logit)."""
    names = estimator._feature_names() if contrib is not None else []
    for special in (DEEP, INTERCEPT):
        if special in names:
            raise PilidError(
                f"feature {special!r} has the name of explain's {special!r} column; rename "
                f"that column of X (e.g. X.rename(columns={{{special!r}: {special + '_'!r}}}))"
            )
    n = (contrib if contrib is not None else deep).shape[0]
    columns = {name: contrib[:, j] for j, name in enumerate(names)}
    columns[DEEP] = np.zeros(n) if deep is None else deep
    columns[INTERCEPT] = np.full(n, float(intercept))
    return pd.DataFrame(columns, index=index)


def _row(X, row) -> tuple:
    """Row `row` (a position) of `X` as a one-row input and its raw values per column."""
    if not isinstance(row, numbers.Integral) or isinstance(row, bool):
        raise PilidError(f"row={row!r} is not a row position; pass an integer, e.g. row=0")
    if isinstance(X, pd.DataFrame):
        n = len(X)
        if not -n <= row < n:
            raise PilidError(f"row={row} is out of range for X of {n} rows; pass 0 <= row < {n}")
        one = X.iloc[[int(row)]]
        return one, list(one.iloc[0])
    arr = np.asarray(X)
    if arr.ndim == 1:  # one sample given as a flat vector
        arr = arr[None]
    n = arr.shape[0]
    if not -n <= row < n:
        raise PilidError(f"row={row} is out of range for X of {n} rows; pass 0 <= row < {n}")
    one = arr[[int(row)]]
    return one, list(one[0])


def _value_text(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return "NA"  # a missing value (its own contribution, `pilid.models.inputs`)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{float(value):.4g}"
    return str(value)


class ExplanationDisplay:
    """Waterfall plot of one prediction's additive parts (a row of `explain`).

    From the intercept (a diamond, a dotted line), each shown feature's contribution (the
    largest in absolute value first), the rest of the features summed in one bar, and the deep
    part are stacked end to end, each bar labelled with its value; a dashed line marks where
    they end, the raw output, which the title names and gives (``logit of class 'yes' = 0.21
    (probability 0.55)``). The value axis spans the intercept and the bars' ends with a margin
    of `WATERFALL_MARGIN` (0 is drawn only where it falls inside). A legend says what the
    colours mean (`COLOUR_MEANING`).
    Build it with `from_estimator` (or `ExplainMixin.plot_explanation`), or from a row of
    `explain` and `plot`.

    Parameters
    ----------
    explanation : pandas.Series
        One row of `explain`: the features' contributions, then `DEEP` and `INTERCEPT`.
    feature_values : sequence or None, default=None
        The row's value of each feature (drawn as ``name = value``); None: names alone.
    output_name : str, default="prediction"
        What the sum is called in the title and the x label (`from_estimator`: ``"logit of
        class 'yes'"`` for a classifier, ``"predicted price"`` for a regressor fitted on a
        target named ``price``, else ``"prediction"``).
    probability : float or None, default=None
        A classifier's probability of the explained class (`from_estimator`: from
        ``predict_proba``), given in the title beside the logit; None: none.

    Attributes
    ----------
    ax_ : matplotlib.axes.Axes
        The axes drawn on (after `plot`).
    figure_ : matplotlib.figure.Figure
        Their figure.
    start_ : matplotlib.lines.Line2D
        The intercept's marker, where the bars start (top row).
    bars_ : matplotlib.container.BarContainer
        The bars, top to bottom: shown features, the rest (if any), deep part.
    bar_labels_ : list of matplotlib.text.Text
        Each bar's value (``+1.23``).
    labels_ : list of str
        The rows' labels as drawn (``$`` escaped): intercept, then the bars'.
    legend_ : matplotlib.legend.Legend
        The legend of the bars' colours (right of the axes).
    """

    def __init__(
        self,
        explanation: pd.Series,
        feature_values=None,
        output_name="prediction",
        probability=None,
    ):
        self.explanation = explanation
        self.feature_values = feature_values
        self.output_name = output_name
        self.probability = None if probability is None else float(probability)

    @classmethod
    def from_estimator(
        cls, estimator, X, row: int = 0, ax=None, max_features: int = 10, class_label=None
    ):
        """Explain row `row` of `X` by a fitted estimator and draw its waterfall.

        Parameters
        ----------
        estimator : fitted PiLiD, PiLiB or NIT estimator
            The model whose prediction is explained (`explain`).
        X : array-like or DataFrame of shape (n_samples, n_features)
            The samples; only row `row` is explained.
        row : int, default=0
            The row's position in `X`.
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure (``plt.gcf()``).
        max_features : int, default=10
            The features drawn one by one (the largest contributions); the rest share a bar.
        class_label : label or None, default=None
            K > 2 classes: the class whose logit is explained; None: the row's predicted class.

        Returns
        -------
        ExplanationDisplay
            The display, drawn (`ax_`, `figure_`, `bars_`).
        """
        one, values = _row(X, row)
        table = explain(estimator, one)
        output = _output_name(estimator)  # a binary classifier: the logit of classes_[1]
        model = getattr(estimator, "best_estimator_", estimator)
        probability = None
        if callable(getattr(model, "predict_proba", None)):  # the explained class's
            proba = model.predict_proba(one)[0]
            probability = proba[-1]  # two classes: classes_[1]'s
        if isinstance(table.index, pd.MultiIndex):  # K > 2 classes: one class's logit
            if class_label is None:
                class_label = estimator.predict(one)[0]
            if class_label not in list(estimator.classes_):
                raise PilidError(
                    f"class_label={class_label!r} is not a class of the model; pass one of "
                    f"{list(estimator.classes_)}"
                )
            table = table.loc[class_label]
            output = f"logit of class {_class_text(class_label)}"
            probability = proba[list(estimator.classes_).index(class_label)]
        features = [c for c in table.columns if c not in (DEEP, INTERCEPT)]
        shown = dict(zip(features, values)) if features else None
        display = cls(table.iloc[0], shown, output_name=output, probability=probability)
        return display.plot(ax=ax, max_features=max_features)

    def plot(self, ax=None, max_features: int = 10):
        """Draw the waterfall on `ax` (None: a new figure); returns self.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure (``plt.gcf()``, laid out by matplotlib's
            constrained layout, the legend inside it).
        max_features : int, default=10
            The features drawn one by one (the largest contributions); the rest share a bar.

        Returns
        -------
        ExplanationDisplay
            self, with `ax_`, `figure_`, `start_`, `bars_`, `bar_labels_`, `labels_` and
            `legend_` set.
        """
        if not isinstance(max_features, numbers.Integral) or max_features < 0:
            raise PilidError(
                f"max_features={max_features!r} is not a count; pass an integer >= 0, "
                "e.g. max_features=10"
            )
        row = self.explanation
        features = [c for c in row.index if c not in (DEEP, INTERCEPT)]
        contrib = row[features].to_numpy(dtype=np.float64)
        order = np.argsort(-np.abs(contrib), kind="stable")
        shown, rest = order[:max_features], order[max_features:]
        labels = [INTERCEPT]
        values = [float(row[INTERCEPT])]
        for j in shown:
            name = features[j]
            if self.feature_values is not None and name in self.feature_values:
                name = f"{name} = {_value_text(self.feature_values[name])}"
            labels.append(name)
            values.append(float(contrib[j]))
        if rest.size:
            labels.append(f"{rest.size} other feature" + ("s" if rest.size > 1 else ""))
            values.append(float(contrib[rest].sum()))
        labels.append(DEEP)
        values.append(float(row[DEEP]))
        values = np.asarray(values)
        ends = np.cumsum(values)  # the intercept, then each bar's end
        starts = ends - values
        colours = [UP if v > 0 else DOWN for v in values[1:]]
        colours[-1] = NEUTRAL
        if ax is None:
            import matplotlib.pyplot as plt

            height = 1.2 + 0.32 * len(values)
            _, ax = plt.subplots(figsize=(7.4, height), layout="constrained")
        y = -np.arange(len(values))  # top to bottom in drawing order
        self.labels_ = [plain_text(t) for t in labels]
        (self.start_,) = ax.plot(
            [ends[0]], [y[0]], ls="none", marker="D", ms=6, color=NEUTRAL, zorder=3
        )
        self.bars_ = ax.barh(y[1:], values[1:], left=starts[1:], color=colours, height=0.7)
        self.bar_labels_ = ax.bar_label(
            self.bars_, labels=[f"{v:+.3g}" for v in values[1:]], padding=2, fontsize=7
        )
        ax.set_yticks(y, self.labels_)
        ax.axvline(float(ends[0]), color="0.6", lw=0.6, ls=":")
        ax.axvline(float(ends[-1]), color="0.2", lw=0.8, ls="--")
        lo, hi = float(ends.min()), float(ends.max())
        pad = WATERFALL_MARGIN * (hi - lo) if hi > lo else max(0.05 * abs(hi), 1e-3)
        ax.set_xlim(lo - pad, hi + pad)  # around the bars, not from 0
        if lo - pad < 0.0 < hi + pad:
            ax.axvline(0.0, color="0.8", lw=0.6)
        ax.set_xlabel(plain_text(self.output_name))
        title = f"{self.output_name} = {ends[-1]:.4g}"
        if self.probability is not None:
            title += f" (probability {self.probability:.3g})"
        ax.set_title(plain_text(title), fontsize=10)
        ax.tick_params(labelsize=8)
        from matplotlib.patches import Patch

        handles = [Patch(color=c, label=text) for c, text in COLOUR_MEANING.items()]
        self.legend_ = ax.legend(
            handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7
        )
        self.ax_, self.figure_ = ax, ax.figure
        return self


class ExplainMixin:
    """`explain` and `plot_explanation` for the estimators (delegating to this module)."""

    def explain(self, X) -> pd.DataFrame:
        """The additive parts of the raw output per sample: features, deep part, intercept.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        pandas.DataFrame of shape (n_samples, n_features + 2)
            `pilid.inspection.explanation.explain`: each row sums to `predict` (regression) or
            `decision_function` (classification).
        """
        return explain(self, X)

    def plot_explanation(self, X, row: int = 0, ax=None, max_features: int = 10):
        """Waterfall plot of row `row` of `X` (`ExplanationDisplay.from_estimator`).

        Parameters
        ----------
        X : array-like or DataFrame
            The samples (one row, or several and `row`).
        row : int, default=0
            The row's position in `X`.
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure (``plt.gcf()``).
        max_features : int, default=10
            The features drawn one by one; the rest share a bar.

        Returns
        -------
        ExplanationDisplay
            The drawn display (`ax_`, `figure_`, `bars_`).
        """
        return ExplanationDisplay.from_estimator(self, X, row=row, ax=ax, max_features=max_features)
