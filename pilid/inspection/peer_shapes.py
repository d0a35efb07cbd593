"""The learned shapes of today's peers, read off the fitted estimators (beyond the paper).

InterpretML keeps the explanation apart from the estimator (``explain_global``); so does this
module: `peer_shape_functions` returns the same tidy table as `PiLiDRegressor.shape_functions`
(``feature, x, value``; main effects only) for a fitted peer, without a method on any estimator:

- an explainable boosting machine (InterpretML's ``ExplainableBoostingRegressor`` /
  ``ExplainableBoostingClassifier``, also inside `pilid.baselines.ga2m.GA2MRegressor` /
  ``GA2MClassifier``, which ``conf/model/ebm.yaml`` and ``ga2m.yaml`` build): each main term is a
  step function over its bins (``bins_``, ``term_scores_``). Every bin gives two rows, its left
  and its right end, both with the bin's score, so a line through the rows in their order draws
  the steps (at a cut point two rows share ``x``: the left bin's score, then the right bin's; a
  value on a cut falls in the right bin, as in EBM); neighbouring bins of one score are one step.
  The outer bins end at the training range (``feature_bounds_``). The scores are centred as EBM
  centres them (a zero mean over the training rows); the bins of missing and unseen values are
  not shown; a nominal feature gives one row per category.
- APLR (``aplr.APLRRegressor`` / ``APLRClassifier``, 10.x; ``conf/model/aplr.yaml``): each
  main-effect term affiliation's shape (``get_unique_term_affiliation_shape``), which APLR reads at
  every training value of the feature and at more points between: piecewise-linear. Not centred
  (APLR's intercept holds the terms' offsets).

A classifier's shapes are on the logit of ``classes_[1]`` (EBM's ``decision_function``, APLR's
logit model of that class); with K > 2 classes the table has a first column ``class`` (one
shape per class, as `pilid.models.multiclass`). Either peer may sit inside the project's
DataFrame-only adapter (`pilid.models.frame_input.FrameInput`). Terms of two or more features
(interactions) are left out, so with interactions the table is not the whole model; with none,
``peer_intercept`` plus the shapes read at a row's values is the model's raw output (its
prediction, or for a classifier its logit; APLR's ``predict`` caps that at the training range of
y unless ``cap_predictions_to_minmax_in_training=False``).

`pilid.experiments.artefacts.artefact_frames` stores these tables as the per-trial ``shapes``
artefacts of the peers, beside PiLiD's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["has_peer_shapes", "peer_intercept", "peer_shape_functions"]


def _unwrap(estimator):
    """(the peer inside ``estimator``, the outermost object that names the columns): the
    estimator itself, a `FrameInput`'s ``estimator_``, a GA2M's ``ebm_``, in any nesting."""
    from pilid.models.frame_input import FrameInput

    outer, inner = estimator, estimator
    for _ in range(4):  # a wrapper of a wrapper at most
        if isinstance(inner, FrameInput) and hasattr(inner, "estimator_"):
            inner = inner.estimator_
        elif hasattr(inner, "ebm_"):
            inner = inner.ebm_
        else:
            break
    return outer, inner


def _kind(peer) -> str | None:
    """``"ebm"``, ``"aplr"`` or None: what kind of fitted peer this is, by its attributes."""
    if all(hasattr(peer, a) for a in ("term_features_", "term_scores_", "bins_", "intercept_")):
        return "ebm"
    if callable(getattr(peer, "get_unique_term_affiliations", None)) or callable(
        getattr(peer, "get_logit_model", None)
    ):
        return "aplr"
    return None


def has_peer_shapes(estimator) -> bool:
    """Whether ``estimator`` is (or wraps) a fitted EBM or APLR whose shapes this module reads."""
    _, peer = _unwrap(estimator)
    kind = _kind(peer)
    if kind == "aplr":  # APLR's object answers unfitted too: fitted once it knows its columns
        return hasattr(peer, "n_features_in_")
    return kind is not None


def _names(outer, peer, m: int) -> list[str]:
    """The column names: the outermost estimator's ``feature_names_in_``, else the peer's when
    the user gave them (not EBM's ``feature_0000``), else ``x0``, ``x1``, ..."""
    for source in (outer, peer):
        names = getattr(source, "feature_names_in_", None)
        if names is not None and len(names) == m:
            names = [str(n) for n in names]
            if names != [f"feature_{j:04d}" for j in range(m)]:
                return names
    return [f"x{j}" for j in range(m)]


def _classes(outer, peer) -> list | None:
    """The class labels of a classifier (None for a regressor)."""
    classes = getattr(peer, "classes_", None)
    if classes is None:
        classes = getattr(outer, "classes_", None)
    return None if classes is None else list(classes)


# -- EBM -----------------------------------------------------------------------------------------
def _ebm_rows(peer, j: int, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, value) of main term ``scores`` (its missing bin first, unseen last) of feature j."""
    cuts = peer.bins_[j][0]
    if isinstance(cuts, dict):  # a nominal feature: {category: bin index}
        levels = list(cuts)
        x = pd.to_numeric(pd.Series(levels, dtype=object), errors="coerce")
        x = x.to_numpy(dtype=float) if not x.isna().any() else np.asarray(levels, dtype=object)
        return x, np.asarray([scores[cuts[level]] for level in levels], dtype=float)
    cuts = np.asarray(cuts, dtype=float)
    lo, hi = (float(b) for b in np.asarray(peer.feature_bounds_, dtype=float)[j])
    if cuts.size:  # the outer bins end at the training range (never inside a bin)
        lo, hi = min(lo, float(cuts[0])), max(hi, float(cuts[-1]))
    edges = np.concatenate([[lo], cuts, [hi]])
    bins = np.asarray(scores, dtype=float)[1 : cuts.size + 2]  # the data bins, left to right
    # neighbouring bins of one score are one step (the same function, fewer rows)
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
    left, right = edges[starts], edges[np.r_[starts[1:], bins.size]]
    return np.column_stack([left, right]).ravel(), np.repeat(bins[starts], 2)


def _ebm_table(outer, peer) -> pd.DataFrame:
    m = len(peer.bins_)
    names = _names(outer, peer, m)
    classes = _classes(outer, peer)
    parts = []
    for features, scores in zip(peer.term_features_, peer.term_scores_):
        if len(features) != 1:
            continue
        j = int(features[0])
        scores = np.asarray(scores, dtype=float)
        if scores.ndim == 1:
            x, value = _ebm_rows(peer, j, scores)
            parts.append(pd.DataFrame({"feature": names[j], "x": x, "value": value}))
        else:  # K > 2 classes: one score per class in the last axis
            for k, label in enumerate(classes):
                x, value = _ebm_rows(peer, j, scores[:, k])
                table = pd.DataFrame({"feature": names[j], "x": x, "value": value})
                table.insert(0, "class", label)
                parts.append(table)
    table = pd.concat(parts, ignore_index=True)
    if "class" in table.columns:  # class-major, as `pilid.models.multiclass.class_table`
        order = {label: k for k, label in enumerate(classes)}
        table = table.sort_values("class", key=lambda c: c.map(order), kind="stable")
        table = table.reset_index(drop=True)
    return table


# -- APLR ----------------------------------------------------------------------------------------
def _aplr_models(outer, peer) -> list[tuple[object, object]]:
    """``[(class label or None, APLRRegressor)]``: the regressor itself, a binary classifier's
    logit model of ``classes_[1]``, or one logit model per class."""
    if not callable(getattr(peer, "get_logit_model", None)):
        return [(None, peer)]
    classes = _classes(outer, peer)
    if len(classes) == 2:
        return [(None, peer.get_logit_model(str(classes[1])))]
    return [(label, peer.get_logit_model(str(label))) for label in classes]


def _aplr_table(outer, peer) -> pd.DataFrame:
    names = _names(outer, peer, int(peer.n_features_in_))
    parts = []
    for label, model in _aplr_models(outer, peer):
        affiliations = model.get_unique_term_affiliations()
        predictors = model.get_base_predictors_in_each_unique_term_affiliation()
        for affiliation, used in zip(affiliations, predictors):
            if len(used) != 1:
                continue
            shape = np.asarray(model.get_unique_term_affiliation_shape(affiliation), dtype=float)
            order = np.argsort(shape[:, 0], kind="stable")
            table = pd.DataFrame(
                {"feature": names[int(used[0])], "x": shape[order, 0], "value": shape[order, 1]}
            )
            if label is not None:
                table.insert(0, "class", label)
            parts.append(table)
    if not parts:
        return pd.DataFrame({"feature": [], "x": [], "value": []})
    return pd.concat(parts, ignore_index=True)


def peer_shape_functions(estimator) -> pd.DataFrame | None:
    """Tidy DataFrame (``feature``, ``x``, ``value``) of a fitted peer's main effects (see the
    module), or None when ``estimator`` is neither an EBM nor an APLR (nor wraps one).

    Parameters
    ----------
    estimator : fitted estimator
        An EBM or APLR, a `pilid.baselines.ga2m` GA2M, or a `FrameInput` around one of them.

    Returns
    -------
    pandas.DataFrame or None
        One row per shape point: the feature's column name (``x<j>`` without names), its value
        ``x`` in the estimator's input units and the term's ``value`` there (a first column
        ``class`` with K > 2 classes). Features without a main term have no rows.
    """
    outer, peer = _unwrap(estimator)
    kind = _kind(peer)
    if kind == "ebm":
        return _ebm_table(outer, peer)
    if kind == "aplr" and has_peer_shapes(estimator):
        return _aplr_table(outer, peer)
    return None


def peer_intercept(estimator):
    """The intercept that, with the shapes of `peer_shape_functions` read at a row's values,
    gives the raw output of a peer fitted without interactions: EBM's ``intercept_``, APLR's
    ``get_intercept()`` (a classifier's: of the logit model of ``classes_[1]``; with K > 2
    classes an array, one per class). None for another estimator."""
    outer, peer = _unwrap(estimator)
    kind = _kind(peer)
    if kind == "ebm":
        value = np.asarray(peer.intercept_, dtype=float)
        return float(value.reshape(-1)[0]) if value.size == 1 else value
    if kind == "aplr" and has_peer_shapes(estimator):
        values = [float(model.get_intercept()) for _, model in _aplr_models(outer, peer)]
        return values[0] if len(values) == 1 else np.asarray(values)
    return None
