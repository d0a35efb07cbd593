"""The importance of each term of a fitted model: how much its output moves with each term.

Eq. (9) of Guo et al., IJCAI 2020 writes the raw output as ``intercept_ + sum_j u_j(x_j) +
deep part``; with ``pairs`` PiLiD's deep part holds explicit pair terms f_ab
(`pilid.nn.pairs.PairTerms`) beside its MLP. `term_importances` gives each term's mean absolute
contribution over rows, in the output's units (the target's for a regressor, the logit for a
classifier), as EBM's global term importance does:

* a main effect (``kind`` ``"main"``): mean_i |u_j(x_ij)|, u_j centred on the training rows as
  `feature_contributions` is;
* a pair term (``"pair"``, named ``"a x b"``): its pure interaction, the bilinear pair function
  with its main effects removed. f_ab is ``h_a(x_a)^T V h_b(x_b)`` over the hat functions h of
  the pair's grid (`pilid.nn.pairs`); with m_a, m_b the mean hats over the reference rows,
  ``(h_a - m_a)^T V (h_b - m_b)`` is f_ab less its partial dependence on each feature alone
  plus their mean (the functional ANOVA of f_ab over the product of the two features'
  marginals: what no shape can draw, as `pilid.inspection.pair_effect` reads the whole deep
  part's);
* the deep part (``"deep"``): the rest, ``deep - sum of the pure pair terms`` (the MLP, PiLiB's
  or NIT's blocks, and the main effects of the pair terms left in the deep part, which the
  purification of `pilid.nn.ensemble` moved into the shapes), so that the terms still sum to
  the raw output.

A pair term and the deep part are centred to mean 0 on the reference rows (their constant
belongs to the intercept). The reference rows are up to `pilid.inspection.joint_grid.N_REFERENCE`
training rows kept at fit (``_reference_X``, drawn at random); with ``X=None`` the importance
is read on them, which is the training data's importance up to the sample's noise. A bag
averages its members' terms (its output is their mean); K > 2 classes have one importance per
term and class (a column ``class``).

`ImportanceDisplay` draws the table as horizontal bars, the most important term on top (EBM's
first view); `ImportanceMixin` gives the estimators ``term_importances`` and
``plot_importance``.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from pilid.errors import PilidError
from pilid.inspection.displays import (
    TITLE_CHARS,
    _output_name,
    _shorten,
    plain_text,
    require_columns,
)
from pilid.nn.fitted import CHUNK as PREDICT_CHUNK
from pilid.nn.pairs import DeepWithPairs

__all__ = ["DEEP", "KINDS", "ImportanceDisplay", "ImportanceMixin", "pair_name", "term_importances"]

#: The term of the deep part (the name of `pilid.inspection.explanation`'s column too).
DEEP = "deep"
#: The kinds of term, in the order a legend lists them, and their bars' colours.
KINDS = {"main": "C0", "pair": "C1", "deep": "0.55"}
#: What a legend says each kind is.
KIND_MEANING = {"main": "main effect (shape)", "pair": "pair term", "deep": "deep part"}
#: The terms `ImportanceDisplay` draws unless told otherwise.
MAX_TERMS = 15


def pair_name(a: str, b: str) -> str:
    """The term name of the pair term of features `a` and `b`: ``"a x b"``."""
    return f"{a} x {b}"


def pair_hats(pairs, phi) -> torch.Tensor:
    """The hat functions of both features of every pair term of `pairs` (a
    `pilid.nn.pairs.PairTerms` of one trial) at compact Phi `phi`: (B, 2K, G), the pair k's
    first feature at 2k, its second at 2k + 1; each row a feature's weights on its grid nodes
    (1 - f at its node, f at the next)."""
    T, K = pairs.pairs.shape[:2]
    node, f = pairs._position(phi[0], phi[1], pairs.pairs.reshape(T, 2 * K))
    node, f = node[0], f[0].double()
    hats = torch.zeros(*node.shape, pairs.grid, dtype=torch.float64)
    hats.scatter_add_(2, node.unsqueeze(2), (1.0 - f).unsqueeze(2))
    return hats.scatter_add_(2, (node + 1).unsqueeze(2), f.unsqueeze(2))


@torch.no_grad()
def _pure_pairs(model, X: np.ndarray, reference: np.ndarray, names) -> dict:
    """Each pair term's pure interaction (module docstring) on the validated rows `X`, in
    output units: {term name: (n,)}; a bag's the mean of its members' (a pair a member lacks
    counts 0 there); {} for a model without pair terms."""
    if model._multiclass():  # K > 2 classes take no pair terms (`pilid.estimators.pilid`)
        return {}
    members = model.estimators_ if model._bagged() else [model]
    deeps = [getattr(getattr(m, "module_", None), "deep", None) for m in members]
    with_pairs = [m for m, deep in zip(members, deeps) if isinstance(deep, DeepWithPairs)]
    if not with_pairs:
        return {}
    ref_phi = model._inputs(reference)[1]
    means = [pair_hats(m.module_.deep.pairs, ref_phi).mean(0) for m in with_pairs]  # (2K, G)
    out: dict = {}
    for s in range(0, len(X), PREDICT_CHUNK):
        phi = model._inputs(X[s : s + PREDICT_CHUNK])[1]  # a bag's members share the inputs
        for member, mean in zip(with_pairs, means):
            pairs = member.module_.deep.pairs
            centred = pair_hats(pairs, phi) - mean
            V = pairs.V[0].detach().double()
            pure = torch.einsum("bkg,kgh,bkh->bk", centred[:, 0::2], V, centred[:, 1::2])
            pure = member.y_scale_ * pure.numpy() / len(members)
            for k, (a, b) in enumerate(pairs.pairs[0].tolist()):
                values = out.setdefault(pair_name(names[a], names[b]), np.zeros(len(X)))
                values[s : s + len(pure)] += pure[:, k]
    return out


def kept_at_fit(model, name: str):
    """What `pilid.inspection.joint_grid.keep_grid_rows` kept of the training rows (`name`:
    ``"_reference_X"``, ``"_feature_counts"``, ...), on the model or, where K > 2 classes'
    members kept it, on the first of them; None where nothing kept it."""
    members = getattr(model, "class_estimators_", None) or []
    for holder in (model, *members):
        value = getattr(holder, name, None)
        if value is not None:
            return value
    return None


def _reference(model) -> np.ndarray:
    """The training rows kept at fit for the importance (`pilid.inspection.joint_grid`; a model
    pickled before they were kept: the grid's background rows)."""
    for name in ("_reference_X", "_background_X"):
        rows = kept_at_fit(model, name)
        if rows is not None:
            return rows
    raise PilidError(
        f"{type(model).__name__} kept no training rows at fit; pass the rows to read, X=..."
    )


def _rows(model, X) -> np.ndarray:
    """`X` validated for `model` (None: its reference rows); one line when it has no row."""
    rows = _reference(model) if X is None else model._check_fitted_X(X)
    if len(rows) == 0:
        raise PilidError("X has no rows; pass at least one row, or X=None (the training rows)")
    return rows


def _terms(model, X: np.ndarray, reference: np.ndarray) -> list[tuple[str, str, np.ndarray]]:
    """(term, kind, values) of every term on the rows `X`, values (n,) or (n, K) (K > 2
    classes), centred as the module docstring says."""
    names = model._feature_names()
    _, contrib, deep = model._decompose(X)
    terms = []
    if contrib is not None:
        terms += [(name, "main", contrib[:, j]) for j, name in enumerate(names)]
    if deep is None:
        return terms
    same = X is reference  # X=None: the reference rows themselves, read once
    deep_ref = deep if same else model._decompose(reference)[2]
    pairs = _pure_pairs(model, X, reference, names)
    pairs_ref = pairs
    if pairs and not same:
        pairs_ref = _pure_pairs(model, reference, reference, names)
    for name, values in pairs.items():
        terms.append((name, "pair", values - pairs_ref[name].mean(0)))
        deep = deep - values
        deep_ref = deep_ref - pairs_ref[name]
    terms.append((DEEP, "deep", deep - deep_ref.mean(0)))
    return terms


def term_importances(estimator, X=None) -> pd.DataFrame:
    """The mean absolute contribution of every term of a fitted estimator (module docstring).

    Parameters
    ----------
    estimator : fitted PiLiD, PiLiB or NIT estimator (or a PiLiD CV estimator)
        Anything with ``decompose`` (a CV estimator's refit ``best_estimator_`` is read).
    X : array-like or DataFrame of shape (n_samples, n_features) or None, default=None
        The rows the contributions are averaged over; None: up to
        `pilid.inspection.joint_grid.N_REFERENCE` training rows kept at fit.

    Returns
    -------
    pandas.DataFrame
        Columns ``term`` (a feature's name, ``"a x b"`` for a pair term, ``"deep"``), ``kind``
        (``"main"``, ``"pair"``, ``"deep"``) and ``importance`` (output units), the most
        important term first. K > 2 classes: a first column ``class``, the classes in
        ``classes_`` order, each class's terms the most important first. A model without a
        deep part has no ``"deep"`` row; one without an additive part no ``"main"`` rows.
    """
    model = getattr(estimator, "best_estimator_", estimator)
    check_is_fitted(model, "intercept_")
    rows = _rows(model, X)
    terms = _terms(model, rows, _reference(model))
    multi = model._multiclass()
    classes = list(model.classes_) if multi else [None]
    tables = []
    for k, label in enumerate(classes):
        importance = [
            float(np.abs(values[:, k] if multi else values).mean()) for _, _, values in terms
        ]
        table = pd.DataFrame(
            {
                "term": [t for t, _, _ in terms],
                "kind": [kind for _, kind, _ in terms],
                "importance": importance,
            }
        )
        table = table.sort_values("importance", ascending=False, kind="stable")
        if multi:
            table.insert(0, "class", [label] * len(table))
        tables.append(table)
    return pd.concat(tables, ignore_index=True)


class ImportanceDisplay:
    """The terms' importance as horizontal bars, the most important on top.

    One bar per term of a `term_importances` table, its length the term's mean absolute
    contribution, coloured by its kind (`KINDS`: main effect, pair term, deep part) with a
    legend; with a ``class`` column (K > 2 classes) each term's bar is its classes' importances
    stacked, one colour per class, and the terms are ordered by their sum. Build it with
    `from_estimator` (or `ImportanceMixin.plot_importance`), or from a table and `plot`.

    Parameters
    ----------
    importances : pandas.DataFrame
        Columns ``term``, ``kind``, ``importance``; optional ``class``.
    output : str or None, default=None
        What the contributions add to (``"logit of class 'yes'"``, ``"predicted price"``), in
        the x label; None: ``"the output"``.

    Attributes
    ----------
    ax_ : matplotlib.axes.Axes
        The axes drawn on (after `plot`).
    figure_ : matplotlib.figure.Figure
        Their figure.
    bars_ : list of matplotlib.container.BarContainer
        The bars: one container (one class), or one per class, each bar top to bottom.
    terms_ : list of str
        The terms drawn, top to bottom.
    labels_ : list of str
        Their tick labels as drawn.
    legend_ : matplotlib.legend.Legend
        The kinds' (or the classes') legend.
    """

    def __init__(self, importances: pd.DataFrame, output=None):
        columns = ("term", "kind", "importance")
        require_columns(importances, columns, "importance table", "term_importances")
        self.importances = importances
        self.output = None if output is None else str(output)

    @classmethod
    def from_estimator(cls, estimator, X=None, ax=None, max_terms: int = MAX_TERMS):
        """Draw a fitted estimator's `term_importances` on the rows `X` (None: the training
        rows kept at fit).

        Parameters
        ----------
        estimator : fitted PiLiD, PiLiB or NIT estimator (or a PiLiD CV estimator)
            The model.
        X : array-like, DataFrame or None, default=None
            The rows the contributions are averaged over.
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure (``plt.gcf()``).
        max_terms : int, default=15
            The most important terms drawn.

        Returns
        -------
        ImportanceDisplay
            The display, drawn (`ax_`, `figure_`, `bars_`).
        """
        table = term_importances(estimator, X)
        model = getattr(estimator, "best_estimator_", estimator)
        return cls(table, output=_output_name(model)).plot(ax=ax, max_terms=max_terms)

    def plot(self, ax=None, max_terms: int = MAX_TERMS):
        """Draw the bars on `ax` (None: a new figure); returns self.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure (constrained layout).
        max_terms : int, default=15
            The most important terms drawn (the title says how many there are).

        Returns
        -------
        ImportanceDisplay
            self, with `ax_`, `figure_`, `bars_`, `terms_`, `labels_` and `legend_` set.
        """
        if isinstance(max_terms, bool) or not isinstance(max_terms, numbers.Integral):
            max_terms = -1
        if max_terms < 1:
            raise PilidError(
                f"max_terms={max_terms!r} is not a count; pass an integer >= 1, e.g. max_terms=15"
            )
        table = self.importances
        multi = "class" in table.columns
        total = table.groupby("term", sort=False)["importance"].sum()
        total = total.sort_values(ascending=False, kind="stable")
        terms = list(total.index[:max_terms])
        kinds = table.drop_duplicates("term").set_index("term")["kind"]
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(6.4, 1.3 + 0.28 * len(terms)), layout="constrained")
        y = -np.arange(len(terms), dtype=np.float64)  # the most important on top
        self.bars_ = []
        if multi:
            classes = list(dict.fromkeys(table["class"]))
            left = np.zeros(len(terms))
            for c, label in enumerate(classes):
                part = table[(table["class"] == label).to_numpy()].set_index("term")
                width = part["importance"].reindex(terms).fillna(0.0).to_numpy(dtype=np.float64)
                bars = ax.barh(y, width, left=left, color=f"C{c % 10}", height=0.7)
                bars.set_label(plain_text(label))
                self.bars_.append(bars)
                left = left + width
            self.legend_ = ax.legend(title="class", fontsize=7, title_fontsize=7, loc="lower right")
        else:
            width = total.reindex(terms).to_numpy(dtype=np.float64)
            colours = [KINDS.get(kinds[t], KINDS["deep"]) for t in terms]
            self.bars_.append(ax.barh(y, width, color=colours, height=0.7))
            from matplotlib.patches import Patch

            shown = [k for k in KINDS if k in set(kinds[terms])]
            handles = [Patch(color=KINDS[k], label=KIND_MEANING[k]) for k in shown]
            self.legend_ = ax.legend(handles=handles, fontsize=7, loc="lower right")
        self.terms_ = terms
        self.labels_ = [plain_text(_shorten(str(t), TITLE_CHARS)) for t in terms]
        ax.set_yticks(y, self.labels_)
        ax.set_xlim(left=0.0)
        ax.set_xlabel(plain_text(f"mean |contribution| to {self.output or 'the output'}"))
        title = "term importance"
        if len(total) > len(terms):
            title += f" (the {len(terms)} largest of {len(total)} terms)"
        ax.set_title(title, fontsize=10)
        ax.tick_params(labelsize=8)
        self.ax_, self.figure_ = ax, ax.figure
        return self


class ImportanceMixin:
    """``term_importances`` and ``plot_importance`` for the estimators (delegating to this
    module)."""

    def term_importances(self, X=None) -> pd.DataFrame:
        """The mean absolute contribution of every term (main effects, pair terms, the deep
        part) over the rows `X` (None: up to 1,000 training rows kept at fit), the most
        important first: `pilid.inspection.importance.term_importances`.

        Parameters
        ----------
        X : array-like, DataFrame or None, default=None
            The rows the contributions are averaged over.

        Returns
        -------
        pandas.DataFrame
            Columns ``term``, ``kind`` (``"main"``, ``"pair"``, ``"deep"``), ``importance``
            (output units); K > 2 classes a first column ``class``.
        """
        return term_importances(self, X)

    def plot_importance(self, X=None, ax=None, max_terms: int = MAX_TERMS):
        """Horizontal bars of `term_importances`, the most important on top
        (`ImportanceDisplay.from_estimator`).

        Parameters
        ----------
        X : array-like, DataFrame or None, default=None
            The rows the contributions are averaged over; None: the training rows kept at fit.
        ax : matplotlib.axes.Axes or None, default=None
            Where to draw; None: a new pyplot figure (``plt.gcf()``).
        max_terms : int, default=15
            The most important terms drawn.

        Returns
        -------
        ImportanceDisplay
            The drawn display (`ax_`, `figure_`, `bars_`, `terms_`).
        """
        return ImportanceDisplay.from_estimator(self, X, ax=ax, max_terms=max_terms)
