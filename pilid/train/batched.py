"""`fit_ensemble`: the engine as a function, T trials trained as one ensemble (every parameter
with a leading trial dimension) from one `TrainSpec` and the trials' encoded data.

Algorithm 1 of Guo et al., IJCAI 2020 for T trials at once: the trials' data (`Prepared`, each
prepared by its estimator) are stacked, the additive part is initialised (step 2: least squares
of y on Phi, or Gaussian), the deep part is built from the trial seeds, `train_ensemble` runs
step 3, and each trial's slice is copied into a T=1 module, its `TrainedTrial`. It reads the
`TrainSpec` and the data alone: no estimator (their side, `fit_batched`, is
`pilid.models.fitting`).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import torch

from pilid.errors import TrainingDivergedWarning
from pilid.nn.additive import AdditiveEnsemble, difference_penalty
from pilid.nn.ensemble import PiLiDEnsemble
from pilid.nn.pairs import DeepWithPairs, PairTerms, coarse_pieces
from pilid.nn.piecewise import compact_layout, phi_compact
from pilid.streams import STREAM_FIT_SAMPLE, trial_rng
from pilid.train.additive_start import (
    _build_additive,
    _check_phi_finite,
    _stack_weights,
    neighbour_pieces,
    piece_layout,
)
from pilid.train.divergence import divergence_reasons
from pilid.train.encoding import deep_columns, deep_input
from pilid.train.ensemble_data import EnsembleData
from pilid.train.protocol import Prepared
from pilid.train.spec import TrainedTrial, TrainSpec
from pilid.train.trainer import evaluate_loss, train_ensemble


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


#: Rows per trial beyond which the work done once per fit stops growing with the table (beyond
#: the paper): on a larger table it (the least-squares start of Algorithm 1, step 2, solved
#: matrix-free, purification, the divergence check) reads a sample of this many rows per
#: trial (`EnsembleData.stacked`), and early stopping's validation loss a sample of this many
#: validation rows (`EnsembleData.sample_validation`). Up to it, every row is read as before.
SAMPLE_ROWS = 32_768


def sample_rows(rows, seed: int) -> np.ndarray:
    """`rows` (indices, or a count n for ``arange(n)``), or `SAMPLE_ROWS` of them in their
    order, drawn from `seed`'s stream `pilid.streams.STREAM_FIT_SAMPLE` (NumPy) when there are
    more: the rows of a large table that the estimators' once-per-fit work reads (FAST's
    ranking, the centring of the shapes, the candidates' validation loss)."""
    rows = np.arange(rows) if isinstance(rows, int | np.integer) else np.asarray(rows)
    if len(rows) <= SAMPLE_ROWS:
        return rows
    draw = trial_rng(seed, STREAM_FIT_SAMPLE).permutation(len(rows))
    return rows[np.sort(draw[:SAMPLE_ROWS])]


#: Rows of an epoch on a table larger than this (beyond the paper; `TrainConfig.epoch_rows`):
#: the next this many rows of the current pass, so early stopping reads the validation loss as
#: often in rows on any table and can end training before a full pass of a large one. Twice
#: `SAMPLE_ROWS`: shorter epochs let early stopping end a table of a few tens of thousands of
#: rows too soon.
EPOCH_ROWS = 65_536


def _shares_table(preps: list[Prepared]) -> bool:
    """Do the trials read one table the same way (a bag's members, K classes' logits): the
    same rows, target, scaling, encodings and characteristic points, only their row indices
    differing? Then `EnsembleData` holds the table once (its shared layout)."""
    p0 = preps[0]
    same = ("X", "target", "x_mean", "x_scale", "knots", "missing", "onehot", "bins")
    return len(preps) > 1 and all(
        getattr(p, name) is getattr(p0, name) for p in preps[1:] for name in same
    )


def _shared_data(preps: list[Prepared], device) -> EnsembleData:
    """`EnsembleData` in its shared layout: the table's deep input, target and compact Phi
    once, each trial's training and validation rows as indices into them."""
    p0 = preps[0]
    x_deep = deep_input(p0.X, p0.x_mean, p0.x_scale, p0.missing, p0.onehot, p0.bins)
    x = torch.as_tensor(x_deep, dtype=torch.float32).to(device)
    y = torch.as_tensor(p0.target, dtype=torch.float32).to(device)
    phi = None
    if p0.knots is not None:
        raw = torch.as_tensor(
            np.require(p0.X, requirements="W"), dtype=torch.float64, device=device
        )
        phi = phi_compact(raw, compact_layout(p0.knots, device=device))[:3]
        del raw
        if p0.missing is not None and np.any(p0.missing) and len(phi) == 2:
            phi = (*phi, torch.zeros_like(phi[1]))
    rows = torch.as_tensor(np.stack([p.train_idx for p in preps]), dtype=torch.long)
    data = EnsembleData(x=x, y=y, phi=phi, rows=rows.to(device))
    if len(p0.val_idx):
        val = torch.as_tensor(np.stack([p.val_idx for p in preps]), dtype=torch.long)
        data.val_rows = val.to(device)
    if any(p.train_weight is not None for p in preps):  # sample weights (None: unit)
        data.w = _stack_weights([p.train_weight for p in preps], len(p0.train_idx), device)
    if len(p0.val_idx) and any(p.weight is not None for p in preps):
        val_w = [None if p.weight is None else p.weight[p.val_idx] for p in preps]
        data.w_val = _stack_weights(val_w, len(p0.val_idx), device)
    return data


def _ensemble_data(preps: list[Prepared], device) -> EnsembleData:
    if _shares_table(preps):
        return _shared_data(preps, device)

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


def _unstack(spec: TrainSpec, model: PiLiDEnsemble, t: int, prep: Prepared) -> PiLiDEnsemble:
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
        deep = with_pairs(spec.build_deep(deep_width(prep), [prep.seed]), [prep])
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


def trial_weights(value, T: int) -> np.ndarray:
    """A penalty's weight of ``TrainConfig`` (one, or a tuple of one per trial) as (T,)."""
    weights = np.asarray(value, dtype=np.float64).reshape(-1)
    if len(weights) not in (1, T):
        raise ValueError(f"{len(weights)} penalty weights for {T} trials")
    return np.broadcast_to(weights, (T,)).copy()


def _one_or_each(weights: np.ndarray) -> float | tuple[float, ...]:
    """One float where every trial has the same weight (the ensemble's one weight), else the
    tuple of the trials' weights."""
    if np.all(weights == weights[0]):
        return float(weights[0])
    return tuple(float(w) for w in weights)


def fit_ensemble(
    spec: TrainSpec,
    preps: list[Prepared],
    device,
    piece_steps: bool = False,
    starts: dict | None = None,
) -> list[TrainedTrial]:
    """Train the trials `preps` (one `TrainSpec`) as one ensemble: each trial's `TrainedTrial`,
    in order. With a roughness penalty (``smoothness``), a trial whose training diverged is
    trained again with the additive part's steps scaled by its pieces (``piece_steps``,
    `pilid.train.trainer.piece_step_scales`): Adam moves every piece by about ``lr`` a step, so
    many pieces held smooth can throw the least-squares start far off in the first steps. Only
    trials that diverged train twice; the others are the ensemble's first run. `starts`: the
    least-squares starts solved so far in this fit (`additive_start._build_additive`)."""
    data = _ensemble_data(preps, device)
    T = len(preps)
    seeds = [p.seed for p in preps]
    cfg = replace(
        spec.config, desc=f"{spec.name} x{T}", piece_steps=piece_steps, epoch_rows=EPOCH_ROWS
    )
    smoothness = trial_weights(cfg.smoothness, T)  # (T,): the trials' roughness weights
    lam = _one_or_each(trial_weights(cfg.lam, T))
    cfg = replace(cfg, lam=lam, smoothness=0.0)  # the roughness's weight: set below where on
    data = data.sample_validation(SAMPLE_ROWS, seeds)
    sample = data.stacked(SAMPLE_ROWS, seeds)  # what the once-per-fit work reads
    large = data.shape[1] > SAMPLE_ROWS  # its least squares then matrix-free: linear in rows
    additive, roughness = None, None
    if spec.has_additive:
        _check_phi_finite(data, spec.column_names(preps[0].X.shape[1]))
        layout = piece_layout(preps, device)
        if smoothness.max() > 0:  # PiLiD's smoothness: the start, training and purification
            # many pieces held smooth are a resolution: steps that do not grow with it
            neighbours, weight = neighbour_pieces(preps, *layout), _one_or_each(smoothness)
            if isinstance(weight, tuple):  # a weight per trial: folded into its neighbours
                scale = torch.as_tensor(smoothness, dtype=neighbours.dtype).to(neighbours.device)
                neighbours, weight = neighbours * scale[:, None], 1.0
            cfg = replace(cfg, neighbours=neighbours, smoothness=weight)
            roughness = difference_penalty(cfg.neighbours, cfg.smoothness)
        additive = _build_additive(spec, preps, sample, layout, roughness, large, starts)
    deep = with_pairs(spec.build_deep(deep_width(preps[0]), seeds), preps)  # `deep_columns`
    model = PiLiDEnsemble(additive, deep, T).to(device)
    result = train_ensemble(model, data, list(spec.phases), cfg, seeds)
    # Read-only: the trained model's loss on its training rows (eval mode, no random draws).
    final = evaluate_loss(
        model, sample.x, sample.phi, sample.y, spec.task, classes=cfg.classes, weights=sample.w
    )
    diverged = divergence_reasons(
        final, sample.y, result.train_loss, result.n_epochs, spec.task, cfg.classes, sample.w
    )
    retry = []  # the trials to train again with the additive part's steps scaled
    if roughness is not None and not cfg.piece_steps:  # those held smooth
        retry = [t for t in range(T) if diverged[t] is not None and smoothness[t] > 0]
    if spec.purify and additive is not None and deep is not None:
        # with smoothness the moved main effects are held as smooth as the shapes
        model.purify_(
            sample.x, sample.phi, weights=sample.w, roughness=roughness, matrix_free=large
        )
    trials = [
        _trained_trial(spec, model, result, t, prep, diverged[t], device)
        for t, prep in enumerate(preps)
    ]
    if retry:
        _train_again(spec, preps, retry, trials, device, starts)
    return trials


def _trained_trial(spec, model, result, t: int, prep, diverged, device) -> TrainedTrial:
    """Trial t's `TrainedTrial` from the trained ensemble `model` and the loop's `result`: its
    own T=1 module (None where it diverged) and its loss history up to its last epoch."""
    ne = int(result.n_epochs[t])  # the ensemble may run on after this trial finished
    history = {
        "train_loss": result.train_loss[:ne, t].tolist(),
        "val_loss": result.val_loss[:ne, t].tolist(),
        "phase": [result.phase_names[k] for k in result.phase[:ne, t]],
        "epoch_seconds": result.epoch_seconds[:ne].tolist(),  # of the whole ensemble
    }
    module = None if diverged is not None else _unstack(spec, model, t, prep)
    return TrainedTrial(module, history, ne, int(result.best_epoch[t]), str(device), diverged)


def _train_again(spec, preps, retry: list[int], trials: list, device, starts) -> None:
    """The trials `retry` (diverged under a roughness penalty) trained again with the additive
    part's steps scaled by its pieces, in place in `trials`; one warning where that rescued
    some (the others keep their divergence's reason)."""
    config = spec.config
    weights = {
        key: _one_or_each(trial_weights(getattr(config, key), len(preps))[retry])
        for key in ("smoothness", "lam")
    }
    spec = replace(spec, config=replace(config, **weights))  # the retried trials' own weights
    again = fit_ensemble(spec, [preps[t] for t in retry], device, True, starts)
    for t, trial in zip(retry, again):
        trials[t] = trial
    rescued = sum(trial.diverged is None for trial in again)
    if rescued:  # the others diverged again: their error says what to change
        warnings.warn(
            f"{spec.name}: training diverged in {rescued} of {len(preps)} trials or bag "
            "members with Adam's step on every piece; trained them again with the "
            "additive part's steps scaled by its pieces",
            TrainingDivergedWarning,
            stacklevel=5,
        )
