"""`fit_batched`: T estimators trained as one ensemble (every parameter with a leading trial
dimension), and the protocol an estimator follows to be trained that way.

Algorithm 1 of Guo et al., IJCAI 2020 for T trials at once: each estimator prepares its own data
(`Trainable._prepare`: checks, encoding, scaling, the characteristic points of Definition 1 and
its validation rows), the trials are stacked, the additive part is initialised (step 2: least
squares of y on Phi, or Gaussian), the deep part is built from the trial seeds, `train_ensemble`
runs step 3 and every trial's slice is copied back into its estimator as a T=1 module.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from pilid.device import resolve_device
from pilid.errors import PilidError, TrainingDivergedError, TrainingDivergedWarning
from pilid.nn.additive import AdditiveEnsemble, difference_penalty
from pilid.nn.ensemble import PiLiDEnsemble
from pilid.nn.least_squares import DENSE_COLUMNS, CompactPhi, lstsq_init, monotone_start
from pilid.nn.pairs import DeepWithPairs, PairTerms, coarse_pieces
from pilid.nn.piecewise import Knots, compact_layout, phi_compact, phi_dense
from pilid.streams import STREAM_ADDITIVE, trial_generator
from pilid.train.divergence import divergence_reasons, lr_advice
from pilid.train.trainer import EnsembleData, Phase, TrainConfig, evaluate_loss, train_ensemble

#: What `fit_batched` does with a trial whose training diverged (`pilid.train.divergence`).
ON_DIVERGENCE = ("raise", "flag")


@dataclass
class Prepared:
    """One trial's data, ready to stack: encoded X, target, split, scaling and knots."""

    X: np.ndarray
    target: np.ndarray
    train_idx: np.ndarray
    val_idx: np.ndarray
    seed: int
    x_mean: np.ndarray
    x_scale: np.ndarray
    knots: Knots | None
    #: Classification with K > 2 classes: the class whose logit this trial holds (its
    #: least-squares start codes that class +1, the others -1); None otherwise.
    class_index: int | None = None
    #: Sample weights of the rows of X (statistics, validation loss); None: unweighted.
    weight: np.ndarray | None = None
    #: Sample weights of the rows `train_idx` (training loss, least-squares start,
    #: purification); None: unit weights (unweighted, or a bag member's bootstrap rows).
    train_weight: np.ndarray | None = None
    #: Missing values: per feature, did the fit rows of X hold NaN? Such a feature gets a
    #: learned contribution for NaN (the additive part) and a missing indicator (the deep
    #: part's input, `deep_input`); None: no feature had missing values.
    missing: np.ndarray | None = None
    #: Categorical features the deep part sees one-hot (`deep_input`): pairs (feature j, its
    #: levels, the sorted codes seen in fit); None: every feature enters as one standardised
    #: column (its code, for a categorical feature).
    onehot: tuple[tuple[int, np.ndarray], ...] | None = None
    #: Explicit pair terms (`pilid.nn.pairs`): the feature indices of each pair, (K, 2), added
    #: to the deep part on the grid of `knots`; None: none (the paper's model).
    pairs: np.ndarray | None = None
    #: Numeric features the deep part sees piecewise-linearly encoded (`deep_input`; PiLiD's
    #: ``deep_bins``): pairs (feature j, its bin edges); None: each as one standardised column.
    bins: tuple[tuple[int, np.ndarray], ...] | None = None


def piecewise_encoding(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The piecewise-linear encoding of one feature's values `x` (n,) on bin `edges` (b+1,
    increasing): column k is 0 below ``edges[k]``, 1 from ``edges[k+1]`` on and linear between
    (Phi of Definition 2 on these points; Gorishniy et al., NeurIPS 2022, "On embeddings for
    numerical features in tabular deep learning", PLE), so the columns sum to the number of bins
    below x plus its place in its own. NaN (a missing value): all 0. Shape (n, b)."""
    lo, hi = edges[None, :-1], edges[None, 1:]
    with np.errstate(invalid="ignore"):
        out = np.clip((x[:, None] - lo) / (hi - lo), 0.0, 1.0)
    return np.nan_to_num(out, nan=0.0)


def quantile_bins(X: np.ndarray, n_bins: int, features) -> tuple[tuple[int, np.ndarray], ...]:
    """`Prepared.bins` for rows `X` (n, m): for each feature j of `features` (indices) its
    edges, the quantiles at 0, 1/n_bins, ..., 1 of its finite values with repeats dropped (so a
    feature with few distinct values gets fewer bins); a feature with fewer than 2 bins left (a
    constant or 0/1 column, which one standardised column holds as well) is left out."""
    out = []
    grid = np.linspace(0.0, 1.0, int(n_bins) + 1)
    for j in features:
        column = X[:, j]
        column = column[np.isfinite(column)]
        if column.size == 0:
            continue
        edges = np.unique(np.quantile(column, grid))
        if len(edges) >= 3:
            out.append((int(j), edges))
    return tuple(out)


def deep_input(X: np.ndarray, x_mean, x_scale, missing=None, onehot=None, bins=None) -> np.ndarray:
    """The deep part's input for rows `X` (n, m): X standardised by (`x_mean`, `x_scale`),
    NaN (a missing value) and +inf (a category not seen in fit) at 0, i.e. the training mean
    (a neutral value); then, for each pair (j, levels) of `onehot` (None: none), feature j's
    column replaced by one 0/1 indicator per level (a missing or unseen category: all 0),
    appended in pair order; then, for each pair (j, edges) of `bins` (None: none), feature j's
    column replaced by its `piecewise_encoding`, appended in pair order; then one missing
    indicator column (1.0 where NaN) per feature of `missing` (bool (m,); None: none), in
    column order. Shape (n, `deep_columns`)."""
    with np.errstate(invalid="ignore"):  # +inf over a monotone feature's inf scale: NaN, then 0
        z = (X - x_mean) / x_scale
    bad = ~np.isfinite(X)
    if bad.any():
        z = np.where(bad, 0.0, z)
    if onehot or bins:
        replaced = [j for j, _ in (onehot or ())] + [j for j, _ in (bins or ())]
        keep = np.setdiff1d(np.arange(X.shape[1]), replaced)
        indicators = [X[:, [j]] == np.asarray(levels)[None, :] for j, levels in onehot or ()]
        encoded = [piecewise_encoding(X[:, j], np.asarray(e)) for j, e in bins or ()]
        z = np.concatenate([z[:, keep], *indicators, *encoded], axis=1)
    if missing is not None and np.any(missing):
        z = np.concatenate([z, np.isnan(X[:, np.asarray(missing, dtype=bool)])], axis=1)
    return z


def deep_columns(m: int, missing=None, onehot=None, bins=None) -> int:
    """Columns of `deep_input` for m features: one per feature, a one-hot feature's one per
    level instead, an encoded feature's one per bin, plus one per feature with missing
    values."""
    width = m + sum(len(levels) - 1 for _, levels in onehot or ())
    width += sum(len(edges) - 2 for _, edges in bins or ())
    return width + (0 if missing is None else int(np.sum(missing)))


def _missing_of(prep: Prepared) -> np.ndarray:
    """`Prepared.missing` as one bool per feature (all False when None)."""
    if prep.missing is None:
        return np.zeros(prep.X.shape[1], dtype=bool)
    return np.asarray(prep.missing, dtype=bool)


def with_pairs(deep, preps: list[Prepared]):
    """`deep` plus the pair terms of `preps` (`pilid.nn.pairs.DeepWithPairs`; one trial per
    prepared trial, each with its own pairs and characteristic points), or `deep` unchanged when
    the trials have none (`Prepared.pairs`)."""
    if preps[0].pairs is None:
        return deep
    pieces = np.stack([p.knots.n_pieces for p in preps])
    starts = np.stack([p.knots.starts for p in preps])
    coarse = np.stack([coarse_pieces(p.knots.n_pieces, p.knots.categorical) for p in preps])
    pairs = np.stack([np.asarray(p.pairs, dtype=np.int64).reshape(-1, 2) for p in preps])
    return DeepWithPairs(deep, PairTerms(pairs, starts, pieces, coarse))


def deep_width(prep: Prepared) -> int:
    """Columns of the deep part's input (`deep_input`) for `prep` (`deep_columns`)."""
    return deep_columns(prep.X.shape[1], prep.missing, prep.onehot, prep.bins)


class Trainable:
    """What `fit_batched` asks of an estimator (`pilid.estimators.neural.NeuralEstimator` has
    it all).

    T = number of trials trained together. Besides `get_params` (scikit-learn: trials of one
    batch share their hyper-parameters but `random_state`) and ``device`` (where the ensemble
    trains, `pilid.device.resolve_device`):

    * ``_task``: "regression" or "classification"; ``_has_additive``: False drops the
      piecewise-linear component. With it, ``init`` ("lstsq" or "gaussian") and ``sigma`` (std
      of the Gaussian w, None: He) choose Algorithm 1's start; ``purify`` (optional, default
      False) moves the deep part's main effect into the additive part after training.
    * ``_prepare(X, y) -> Prepared``: the checked, encoded trial data (resets fitted state);
      ``_prepare(X, y, sample_weight=w)`` when the trial has sample weights (`Prepared`'s
      ``weight`` and ``train_weight``).
    * ``_build_deep(n_features, seeds) -> nn.Module | None``: the deep component for T trials
      (trial t's slice initialised from ``seeds[t]`` alone); ``forward(x (T, B, m)) -> (T, B)``
      (``n_features`` is `deep_width`: m, a one-hot feature's levels instead of its one
      column, plus a missing indicator per feature with NaN)
      (``forward(x, phi)`` when the module has ``uses_phi = True``).
    * ``_phases() -> list[Phase]``: the training schedule.
    * ``_train_config(n_trials) -> TrainConfig``: optimiser, penalties and the extra loss.
    * ``_finalize(prep)``, ``_after_fit()``: fitted attributes once ``module_`` (the T=1 module,
      on the CPU) is set.
    * ``_members(prep) -> list[(Trainable, Prepared)]``: what trains for this estimator (default
      itself on its own data; a bag, `pilid.models.bagging`, gives its members, each with its
      own rows and seed, and they train as trials of the same ensemble); ``_collect()`` runs
      once they are all fitted (default nothing).
    """

    _task = "regression"
    _has_additive = True

    def _prepare(self, X, y) -> Prepared:
        raise NotImplementedError

    def _build_deep(self, n_features: int, seeds: Sequence[int]):
        return None

    def _extra_loss(self, model, x):
        return None

    def _phases(self) -> list[Phase]:
        raise NotImplementedError

    def _train_config(self, n_trials: int) -> TrainConfig:
        raise NotImplementedError

    def _finalize(self, prep: Prepared) -> None:
        return None

    def _after_fit(self) -> None:
        return None

    def _members(self, prep: Prepared) -> list:
        return [(self, prep)]

    def _collect(self) -> None:
        return None


def _ensemble_data(preps: list[Prepared], device) -> EnsembleData:
    def stack(rows_of, with_phi):
        xs, ys = [], []
        for p in preps:
            idx = rows_of(p)
            x_deep = deep_input(p.X[idx], p.x_mean, p.x_scale, p.missing, p.onehot, p.bins)
            xs.append(torch.as_tensor(x_deep, dtype=torch.float32))
            ys.append(torch.as_tensor(p.target[idx], dtype=torch.float32))
        x = torch.stack(xs).to(device)
        y = torch.stack(ys).to(device)
        phi = None
        if with_phi:  # Phi in compact form (Definition 2): piece column and fraction, (T, n, m)
            parts = []  # with missing values also the indicators `miss` (T, n, m)
            lacking = any(p.missing is not None and np.any(p.missing) for p in preps)
            for p in preps:
                raw = torch.as_tensor(p.X[rows_of(p)], dtype=torch.float64, device=device)
                one = phi_compact(raw, compact_layout(p.knots, device=device))[:3]
                if lacking and len(one) == 2:  # these rows happen to have no NaN
                    one = (*one, torch.zeros_like(one[1]))
                parts.append(one)
            phi = tuple(torch.stack(part) for part in zip(*parts))
        return x, y, phi

    with_phi = preps[0].knots is not None
    x, y, phi = stack(lambda p: p.train_idx, with_phi)
    data = EnsembleData(x=x, y=y, phi=phi)
    if len(preps[0].val_idx):
        data.x_val, data.y_val, data.phi_val = stack(lambda p: p.val_idx, with_phi)
    if any(p.train_weight is not None for p in preps):  # sample weights (None: unit)
        data.w = _stack_weights([p.train_weight for p in preps], len(x[0]), device)
    if len(preps[0].val_idx) and any(p.weight is not None for p in preps):
        val_w = [None if p.weight is None else p.weight[p.val_idx] for p in preps]
        data.w_val = _stack_weights(val_w, len(preps[0].val_idx), device)
    return data


def _stack_weights(weights: list, n: int, device) -> torch.Tensor:
    """(T, n) float32 sample weights of T trials, unit weights for a trial without any."""
    rows = [np.ones(n) if w is None else w for w in weights]
    return torch.as_tensor(np.stack(rows), dtype=torch.float32, device=device)


def _column_names(est: Trainable, m: int) -> list[str]:
    """The fit data's column names (x0, x1, ... for arrays without names)."""
    names = getattr(est, "feature_names_in_", None)
    if names is not None and len(names) == m:
        return [str(c) for c in names]
    return [f"x{j}" for j in range(m)]


def _check_phi_finite(data: EnsembleData, names: list[str]) -> None:
    """Phi (Definition 2) is evaluated in float32: values beyond its range (|x| > 3.4e38) give
    NaN. Name the columns instead of letting the least squares or the training fail."""
    bad = torch.zeros(len(names), dtype=torch.bool, device=data.phi[1].device)
    for phi in (data.phi, data.phi_val):
        if phi is not None:
            bad |= (~torch.isfinite(phi[1])).flatten(0, 1).any(0)
    if bool(bad.any()):
        columns = ", ".join(repr(names[j]) for j in torch.nonzero(bad).flatten().tolist())
        raise PilidError(
            f"column(s) {columns} cannot be cut into pieces: their values are beyond float32's "
            "range (|x| > 3.4e38); rescale them (e.g. standardise them) before fit"
        )


def _piece_signs(est: Trainable, feature: torch.Tensor, mask: torch.Tensor):
    """Each Phi column's monotone constraint (T, P), the sign of its feature in the estimator's
    ``monotone_constraints_`` (+1, -1, 0: none); None when no feature is constrained."""
    constraints = getattr(est, "monotone_constraints_", None)
    if constraints is None or not np.any(constraints):
        return None
    per_feature = torch.as_tensor(np.asarray(constraints), dtype=mask.dtype, device=mask.device)
    return per_feature[feature] * mask


def resolved_smoothness(est) -> float:
    """The roughness weight a unit trains with: its ``smoothness_`` (PiLiD's ``smoothness``, or
    the one ``smoothness="auto"`` gave the candidate, `pilid.models.shape_choice`); 0 for the
    families without it."""
    return float(getattr(est, "smoothness_", 0.0))


def resolved_lam(est) -> float:
    """The penalty weight lambda (Eq. 11) a unit trains with: its ``lam_`` (``lam``, or the value
    of ``lam="rows"`` at the fit rows, `pilid.models.row_rules`); before a fit, ``lam``."""
    lam = getattr(est, "lam_", getattr(est, "lam", 0.0))
    return float(lam)


def piece_layout(preps: list[Prepared], device) -> tuple[torch.Tensor, torch.Tensor]:
    """Each trial's Phi columns, padded to the widest trial: their feature (T, P) and a mask
    (T, P), 1 for a real piece and 0 for the padding."""
    T = len(preps)
    P = max(p.knots.n_columns for p in preps)
    feature = torch.zeros(T, P, dtype=torch.long)
    mask = torch.zeros(T, P)
    for t, p in enumerate(preps):
        f, _, _ = p.knots.layout()
        feature[t, : len(f)] = torch.as_tensor(f)
        mask[t, : len(f)] = 1.0
    return feature.to(device), mask.to(device)


def _build_additive(
    est: Trainable,
    preps: list[Prepared],
    data: EnsembleData,
    layout: tuple[torch.Tensor, torch.Tensor],
    roughness: torch.Tensor | None = None,
):
    """Algorithm 1, step 2: the additive part of every trial, least squares or Gaussian, on
    `layout` (`piece_layout`); `roughness` (T, P - 1; `difference_penalty`'s band, None: no
    ``smoothness``) makes the least-squares start a penalised one (P-splines'). A Phi wider
    than `pilid.nn.least_squares.DENSE_COLUMNS` columns is solved matrix-free from compact Phi
    (`pilid.nn.least_squares.CompactPhi`), so memory stays linear in the pieces."""
    T = len(preps)
    m = preps[0].X.shape[1]
    P = max(p.knots.n_columns for p in preps)
    feature, mask = layout
    device = feature.device
    names = _column_names(est, m)
    _check_phi_finite(data, names)
    sign = _piece_signs(est, feature, mask)
    nan_value = None  # missing values: u_j(NaN) - constant_j per feature (T, m)
    if any(p.missing is not None and np.any(p.missing) for p in preps):
        nan_value = torch.zeros(T, m, device=device)
    if est.init == "lstsq":
        target = data.y if est._task == "regression" else 2.0 * data.y - 1.0
        if preps[0].class_index is not None:  # K classes: one-vs-rest coding of trial t's class
            index = torch.tensor([p.class_index for p in preps], device=data.y.device)
            target = 2.0 * (data.y == index[:, None]).to(data.y.dtype) - 1.0
        col, frac = data.phi[0], data.phi[1]
        wide = P > DENSE_COLUMNS  # solved matrix-free from compact Phi (memory linear in P)
        ws, bs = [], []
        for t in range(T):  # one trial's Phi (dense: n x P) at a time
            column_names = [names[j] for j in feature[t].tolist()]
            extra = None
            if nan_value is not None:  # missing values: one indicator column per such feature
                lacking = np.flatnonzero(_missing_of(preps[t]))
                extra = data.phi[2][t][:, lacking]
                column_names += [names[j] for j in lacking]
            if wide:  # `monotone_start` reads the means of Phi's columns alone
                design = CompactPhi(
                    col[t : t + 1],
                    frac[t : t + 1],
                    feature[t : t + 1],
                    mask[t : t + 1],
                    None if extra is None else extra[None],
                )
                dense = design
            else:
                dense = phi_dense(col[t], frac[t], feature[t])
                design = dense if extra is None else torch.cat([dense, extra], dim=1)
                dense, design = dense[None], design[None]
            start = lstsq_init(
                design,
                target[t : t + 1],
                mask[t : t + 1],
                names=column_names,
                weights=None if data.w is None else data.w[t : t + 1],
                roughness=None if roughness is None else roughness[t : t + 1],
            )
            w_t, b_t = start[0], start[1]
            if nan_value is not None:
                nan_value[t, lacking] = start[2][0]
            if sign is not None:  # monotone constraints: clamp the start's slopes
                w_t, b_t = monotone_start(dense, w_t, b_t, sign[t : t + 1], mask[t : t + 1])
            ws.append(w_t)
            bs.append(b_t)
        w, b = torch.cat(ws), torch.cat(bs)
    else:  # init="gaussian": the paper's comparison, w ~ N(0, sigma^2), b = 0
        w = torch.zeros(T, P)
        for t, p in enumerate(preps):
            g = trial_generator(p.seed, STREAM_ADDITIVE)
            Pt = p.knots.n_columns
            std = (2.0 / Pt) ** 0.5 if est.sigma is None else float(est.sigma)  # He: fan-in P
            w[t, :Pt] = torch.randn(Pt, generator=g) * std
        w, b = w.to(device), torch.zeros(T, P, device=device)
    return AdditiveEnsemble(feature, mask, m, w, b, sign=sign, nan_value=nan_value)


def neighbour_pieces(
    preps: list[Prepared], feature: torch.Tensor, mask: torch.Tensor
) -> torch.Tensor:
    """(T, P - 1) float: 1 where Phi columns k and k + 1 (`feature`, `mask`: (T, P), the
    additive part's layout) are consecutive pieces of one numeric feature of trial t, the pairs
    whose rises the ``smoothness`` penalty ties together (`pilid.nn.additive.AdditiveEnsemble.
    roughness`); 0 across features, between categories (their order is no neighbourhood) and
    in the padding."""
    mask = mask > 0
    numeric = torch.stack(
        [torch.as_tensor(~np.asarray(p.knots.categorical, dtype=bool)) for p in preps]
    ).to(feature.device)
    same = (feature[:, 1:] == feature[:, :-1]) & mask[:, 1:] & mask[:, :-1]
    return (same & torch.gather(numeric, 1, feature[:, :-1])).to(torch.float32)


def _unstack(est: Trainable, model: PiLiDEnsemble, t: int, prep: Prepared) -> PiLiDEnsemble:
    """Trial t of the trained ensemble as a T=1 module on the CPU (exact copies)."""
    m = prep.X.shape[1]
    add = None
    if model.additive is not None:
        a, Pt = model.additive, prep.knots.n_columns

        def sl(v):
            return v[t : t + 1, :Pt].detach().cpu().clone()

        sign = None if a.sign is None else sl(a.sign)
        add = AdditiveEnsemble(
            sl(a.feature),
            sl(a.mask),
            m,
            sl(a.w),
            sl(a.b),
            a.omega[t : t + 1].detach().cpu(),
            sign=sign,
            nan_value=None if a.nan_value is None else a.nan_value[t : t + 1].detach().cpu(),
        )
        with torch.no_grad():  # exact copies (the constructor multiplies by the mask)
            add.w.copy_(sl(a.w))
            add.b.copy_(sl(a.b))
    deep = None
    if model.deep is not None:
        deep = with_pairs(est._build_deep(deep_width(prep), [prep.seed]), [prep])
        own = deep.state_dict()
        state = {k: v[t : t + 1].detach().cpu().clone() for k, v in model.deep.state_dict().items()}
        # a pair grid sized for the largest of the ensemble's trials: this trial's nodes
        state = {k: v[tuple(slice(0, n) for n in own[k].shape)] for k, v in state.items()}
        deep.load_state_dict(state)
    out = PiLiDEnsemble(add, deep, 1)
    if add is not None:
        out.shift_w.copy_(model.shift_w[t : t + 1, : prep.knots.n_columns].cpu())
        out.shift_c.copy_(model.shift_c[t : t + 1].cpu())
        if out.shift_nan is not None:
            out.shift_nan.copy_(model.shift_nan[t : t + 1].cpu())
    return out.eval()


def _fit_group(
    ests: list[Trainable], preps: list[Prepared], device, piece_steps: bool = False
) -> None:
    """Train the trials ``ests`` (one hyper-parameter set) as one ensemble and keep each one's
    model. With a roughness penalty (``smoothness``), a trial whose training diverged is trained
    again with the additive part's steps scaled by its pieces (``piece_steps``,
    `pilid.train.trainer.piece_step_scales`): Adam moves every piece by about ``lr`` a step, so
    many pieces held smooth can throw the least-squares start far off in the first steps. Only
    trials that diverged train twice; the others are the ensemble's first run."""
    est0 = ests[0]
    data = _ensemble_data(preps, device)
    T = len(ests)
    seeds = [p.seed for p in preps]
    cfg = replace(est0._train_config(T), piece_steps=piece_steps)
    additive, roughness = None, None
    if est0._has_additive:
        layout = piece_layout(preps, device)
        if cfg.smoothness > 0:  # PiLiD's smoothness: the start, training and purification
            # many pieces held smooth are a resolution: steps that do not grow with it
            cfg = replace(cfg, neighbours=neighbour_pieces(preps, *layout))
            roughness = difference_penalty(cfg.neighbours, cfg.smoothness)
        additive = _build_additive(est0, preps, data, layout, roughness)
    deep = with_pairs(est0._build_deep(deep_width(preps[0]), seeds), preps)  # `deep_columns`
    model = PiLiDEnsemble(additive, deep, T).to(device)
    result = train_ensemble(model, data, est0._phases(), cfg, seeds)
    # Read-only: the trained model's loss on its training rows (eval mode, no random draws).
    final = evaluate_loss(
        model, data.x, data.phi, data.y, est0._task, classes=cfg.classes, weights=data.w
    )
    diverged = divergence_reasons(
        final, data.y, result.train_loss, result.n_epochs, est0._task, cfg.classes, data.w
    )
    retry = []  # the trials to train again with the additive part's steps scaled
    if roughness is not None and not cfg.piece_steps:
        retry = [t for t in range(T) if diverged[t] is not None]
    if getattr(est0, "purify", False) and additive is not None and deep is not None:
        # with smoothness the moved main effects are held as smooth as the shapes
        model.purify_(data.x, data.phi, weights=data.w, roughness=roughness)
    for t, (est, prep) in enumerate(zip(ests, preps)):
        if t in retry:
            continue
        est.diverged_ = diverged[t]
        ne = int(result.n_epochs[t])  # the ensemble may run on after this trial finished
        est.history_ = {
            "train_loss": result.train_loss[:ne, t].tolist(),
            "val_loss": result.val_loss[:ne, t].tolist(),
            "phase": [result.phase_names[k] for k in result.phase[:ne, t]],
            "epoch_seconds": result.epoch_seconds[:ne].tolist(),  # of the whole ensemble
        }
        est.n_epochs_ = int(result.n_epochs[t])
        est.best_epoch_ = int(result.best_epoch[t])
        est.device_ = str(device)
        if diverged[t] is not None:
            continue  # no model to keep: `diverged_` says why, `history_` shows the losses
        est.module_ = _unstack(est, model, t, prep)
        est._finalize(prep)
        est._after_fit()
    if retry:
        _fit_group([ests[t] for t in retry], [preps[t] for t in retry], device, piece_steps=True)
        rescued = sum(ests[t].diverged_ is None for t in retry)
        if rescued:  # the others diverged again: their error says what to change
            warnings.warn(
                f"{type(est0).__name__}: training diverged in {rescued} of {T} trials or bag "
                "members with Adam's step on every piece; trained them again with the "
                "additive part's steps scaled by its pieces",
                TrainingDivergedWarning,
                stacklevel=4,
            )


def _prepare_all(ests, Xs, ys, ws) -> list[Prepared]:
    """Every trial's `Trainable._prepare`; a warning several trials give alike (the same text,
    e.g. a gamma too large for the rows) is shown once for the batch, not once per trial."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        preps = [
            est._prepare(X, y) if w is None else est._prepare(X, y, sample_weight=w)
            for est, X, y, w in zip(ests, Xs, ys, ws)
        ]
    seen = set()
    for w in caught:
        key = (w.category, str(w.message))
        if key not in seen:
            seen.add(key)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return preps


def _fit_local(ests, Xs, ys, ws) -> list:
    device = resolve_device(ests[0].device)
    preps = _prepare_all(ests, Xs, ys, ws)
    m = {p.X.shape[1] for p in preps}
    if len(m) > 1:
        raise PilidError(
            f"fit_batched got data with different numbers of features {sorted(m)}; trials of "
            "one batch must share the columns"
        )
    # What trains: each estimator itself, or its bag's members (`Trainable._members`).
    units = [unit for est, p in zip(ests, preps) for unit in est._members(p)]
    # Trials stack when their training/validation row counts agree; others form own groups.
    # The K trials of a softmax group (K classes) stay together, in order.
    groups: dict[tuple, list[int]] = {}
    for i, (est, p) in enumerate(units):
        key = (len(p.train_idx), len(p.val_idx), int(getattr(est, "_softmax_classes", 1)))
        key += (tuple(np.flatnonzero(_missing_of(p)).tolist()),)  # same missing-value columns
        key += (deep_width(p),)  # as many deep inputs (a one-hot feature: one per level)
        key += (p.train_weight is not None, p.weight is not None)  # weighted with weighted
        key += (resolved_smoothness(est), resolved_lam(est))  # one weight of each per ensemble
        key += (None if p.pairs is None else len(p.pairs),)  # as many pair terms
        groups.setdefault(key, []).append(i)
    for idx in groups.values():
        _fit_group([units[i][0] for i in idx], [units[i][1] for i in idx], device)
    for est in ests:
        est._collect()
    return ests


def _fit_chunk(job):
    """One worker's share of `fit_batched`: (chunk index, its estimators fitted), one thread."""
    index, ests, Xs, ys, ws = job
    torch.set_num_threads(1)
    return index, _fit_local(ests, Xs, ys, ws)


def _canonical(value):
    """A hyper-parameter value compared by content: tuples as lists, arrays as nested lists."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    return value


def _same_params(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_canonical(a[k]) == _canonical(b[k]) for k in a)


def fit_batched(
    estimators,
    Xs,
    ys,
    n_jobs: int | None = 1,
    on_divergence: str = "raise",
    sample_weights=None,
) -> list:
    """Fit T estimators of one class and hyper-parameters (`random_state` may differ), each on
    its own (X, y), as one ensemble with a leading trial dimension; returns them, fitted in place.

    Trial t equals, within float tolerance, ``clone(estimators[t]).fit(Xs[t], ys[t])`` (with
    ``sample_weight=sample_weights[t]`` when given; weighted and unweighted trials train in
    separate ensembles).
    ``n_jobs`` > 1 splits the trials over that many one-thread worker processes (CPU), each
    training its share as an ensemble (joblib's loky workers: unlike the runner's spawn pool,
    `pilid.parallel`, they work from a script without a ``__main__`` guard and from a notebook).
    Hyper-parameters are compared by content, so ``hidden_layers=(16, 8)`` and ``[16, 8]`` are
    the same setting.

    A trial whose training diverged (`pilid.train.divergence`: a NaN/inf training loss, or a
    training loss more than 10 times a constant prediction's) keeps no model: its ``diverged_``
    says why (None for the others) and ``history_`` holds its losses. ``on_divergence="raise"``
    (default) then raises `pilid.errors.TrainingDivergedError` (one line naming the trials and
    the ``lr`` to try) once every trial has trained; ``"flag"`` returns the estimators as they
    are, the other trials fitted as usual (the runner records those and reports the others).

    Parameters
    ----------
    estimators : list of estimators
        T unfitted `Trainable` estimators of one class and hyper-parameters.
    Xs, ys : list of array-like
        Each trial's training data.
    n_jobs : int or None, default=1
        Worker processes (CPU); None or 1: in this process.
    on_divergence : {"raise", "flag"}, default="raise"
        What a diverged trial does.
    sample_weights : list of array-like or None, default=None
        Each trial's sample weights (one per row of its X, or None for an unweighted trial),
        as ``fit(X, y, sample_weight=w)`` takes them; None: every trial unweighted.

    Returns
    -------
    list of estimators
        ``estimators``, fitted in place.
    """
    if on_divergence not in ON_DIVERGENCE:
        raise PilidError(
            f"on_divergence={on_divergence!r} is unknown; use one of {', '.join(ON_DIVERGENCE)}"
        )
    estimators = list(estimators)
    Xs, ys = list(Xs), list(ys)
    ws = [None] * len(Xs) if sample_weights is None else list(sample_weights)
    if not estimators:
        return []
    if not (len(estimators) == len(Xs) == len(ys)):
        raise PilidError(
            f"fit_batched got {len(estimators)} estimators, {len(Xs)} X and {len(ys)} y; pass "
            "one X and one y per estimator"
        )
    if len(ws) != len(Xs):
        raise PilidError(
            f"fit_batched got {len(ws)} sample_weights for {len(Xs)} X; pass one (an array, "
            "or None) per estimator"
        )
    cls = type(estimators[0])
    if not isinstance(estimators[0], Trainable):
        raise PilidError(f"{cls.__name__} cannot be trained by fit_batched; use its fit method")
    ref = {k: v for k, v in estimators[0].get_params(deep=False).items() if k != "random_state"}
    for est in estimators[1:]:
        params = {k: v for k, v in est.get_params(deep=False).items() if k != "random_state"}
        if type(est) is not cls or not _same_params(params, ref):
            raise PilidError(
                "fit_batched needs estimators of one class with the same hyper-parameters "
                "(only random_state may differ); fit the others separately"
            )
    n_jobs = 1 if n_jobs is None else int(n_jobs)
    if n_jobs <= 1 or len(estimators) == 1:
        _fit_local(estimators, Xs, ys, ws)
    else:
        _fit_in_workers(estimators, Xs, ys, ws, n_jobs)
    if on_divergence == "raise":
        _raise_if_diverged(estimators)
    return estimators


def _raise_if_diverged(estimators) -> None:
    """`TrainingDivergedError` on one line when some trial's training diverged."""
    bad = [t for t, est in enumerate(estimators) if getattr(est, "diverged_", None)]
    if not bad:
        return
    est = estimators[bad[0]]
    name = type(est).__name__
    if len(estimators) == 1:
        where = f"({est.diverged_})"
    else:
        noun = "trial" if len(bad) == 1 else "trials"
        listed = ", ".join(str(t) for t in bad)
        where = f"in {noun} {listed} of {len(estimators)} (trial {bad[0]}: {est.diverged_})"
    error = TrainingDivergedError(
        f"{name}: training diverged {where}; {lr_advice(getattr(est, 'lr', None))}"
    )
    error.reason = est.diverged_  # the clause alone, for callers that word their own line
    raise error


def _fit_in_workers(estimators, Xs, ys, ws, n_jobs: int) -> None:
    """`fit_batched` over ``n_jobs`` one-thread loky workers, each fitting a share of the trials;
    every estimator takes its fitted copy's state."""
    from joblib import Parallel, delayed

    chunks = [c for c in np.array_split(np.arange(len(estimators)), n_jobs) if len(c)]
    jobs = [
        (k, [estimators[i] for i in c], [Xs[i] for i in c], [ys[i] for i in c], [ws[i] for i in c])
        for k, c in enumerate(chunks)
    ]
    for k, fitted in Parallel(n_jobs=len(chunks), backend="loky")(
        delayed(_fit_chunk)(job) for job in jobs
    ):
        for i, f in zip(chunks[k], fitted):
            estimators[i].__dict__.clear()  # no attribute of an earlier fit survives
            estimators[i].__dict__.update(f.__dict__)
