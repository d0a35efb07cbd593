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
from dataclasses import replace

import numpy as np
import torch

from pilid.device import cpu_threads, resolve_device
from pilid.errors import PilidError, TrainingDivergedError, TrainingDivergedWarning
from pilid.nn.additive import AdditiveEnsemble, difference_penalty
from pilid.nn.ensemble import PiLiDEnsemble
from pilid.nn.pairs import DeepWithPairs, PairTerms, coarse_pieces
from pilid.nn.piecewise import compact_layout, phi_compact
from pilid.parallel import torch_threads
from pilid.streams import STREAM_FIT_SAMPLE, trial_rng
from pilid.train.additive_start import (
    _build_additive,
    _check_phi_finite,
    _column_names,
    _stack_weights,
    neighbour_pieces,
    piece_layout,
)
from pilid.train.divergence import divergence_reasons, lr_advice
from pilid.train.encoding import deep_columns, deep_input
from pilid.train.ensemble_data import EnsembleData
from pilid.train.protocol import Prepared, Trainable, _missing_of
from pilid.train.trainer import evaluate_loss, train_ensemble

#: What `fit_batched` does with a trial whose training diverged (`pilid.train.divergence`).
ON_DIVERGENCE = ("raise", "flag")


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
    ests: list[Trainable],
    preps: list[Prepared],
    device,
    piece_steps: bool = False,
    starts: dict | None = None,
) -> None:
    """Train the trials ``ests`` (one hyper-parameter set) as one ensemble and keep each one's
    model. With a roughness penalty (``smoothness``), a trial whose training diverged is trained
    again with the additive part's steps scaled by its pieces (``piece_steps``,
    `pilid.train.trainer.piece_step_scales`): Adam moves every piece by about ``lr`` a step, so
    many pieces held smooth can throw the least-squares start far off in the first steps. Only
    trials that diverged train twice; the others are the ensemble's first run. `starts`: the
    least-squares starts solved so far in this fit (`additive_start._build_additive`)."""
    est0 = ests[0]
    data = _ensemble_data(preps, device)
    T = len(ests)
    seeds = [p.seed for p in preps]
    cfg = replace(est0._train_config(T), piece_steps=piece_steps, epoch_rows=EPOCH_ROWS)
    data = data.sample_validation(SAMPLE_ROWS, seeds)
    sample = data.stacked(SAMPLE_ROWS, seeds)  # what the once-per-fit work reads
    large = data.shape[1] > SAMPLE_ROWS  # its least squares then matrix-free: linear in rows
    additive, roughness = None, None
    if est0._has_additive:
        _check_phi_finite(data, _column_names(est0, preps[0].X.shape[1]))
        layout = piece_layout(preps, device)
        if cfg.smoothness > 0:  # PiLiD's smoothness: the start, training and purification
            # many pieces held smooth are a resolution: steps that do not grow with it
            cfg = replace(cfg, neighbours=neighbour_pieces(preps, *layout))
            roughness = difference_penalty(cfg.neighbours, cfg.smoothness)
        additive = _build_additive(est0, preps, sample, layout, roughness, large, starts)
    deep = with_pairs(est0._build_deep(deep_width(preps[0]), seeds), preps)  # `deep_columns`
    model = PiLiDEnsemble(additive, deep, T).to(device)
    result = train_ensemble(model, data, est0._phases(), cfg, seeds)
    # Read-only: the trained model's loss on its training rows (eval mode, no random draws).
    final = evaluate_loss(
        model, sample.x, sample.phi, sample.y, est0._task, classes=cfg.classes, weights=sample.w
    )
    diverged = divergence_reasons(
        final, sample.y, result.train_loss, result.n_epochs, est0._task, cfg.classes, sample.w
    )
    retry = []  # the trials to train again with the additive part's steps scaled
    if roughness is not None and not cfg.piece_steps:
        retry = [t for t in range(T) if diverged[t] is not None]
    if getattr(est0, "purify", False) and additive is not None and deep is not None:
        # with smoothness the moved main effects are held as smooth as the shapes
        model.purify_(
            sample.x, sample.phi, weights=sample.w, roughness=roughness, matrix_free=large
        )
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
        _fit_group([ests[t] for t in retry], [preps[t] for t in retry], device, True, starts)
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
    if device.type != "cpu":
        return _fit_on(device, ests, Xs, ys, ws)
    with torch_threads(cpu_threads()):  # the cores free now, not those others keep busy
        return _fit_on(device, ests, Xs, ys, ws)


def _fit_on(device, ests, Xs, ys, ws) -> list:
    preps = _prepare_all(ests, Xs, ys, ws)
    m = {p.X.shape[1] for p in preps}
    if len(m) > 1:
        raise PilidError(
            f"fit_batched got data with different numbers of features {sorted(m)}; trials of "
            "one batch must share the columns"
        )
    # What trains: each estimator itself, or its bag's members (`Trainable._members`); then
    # what the estimators ask to train next (`Trainable._more_members`), if anything.
    units = [unit for est, p in zip(ests, preps) for unit in est._members(p)]
    starts: dict = {}  # least-squares starts, solved once per fit (`_build_additive`)
    while units:
        _fit_units(units, device, starts)
        units = []
        for est in ests:
            est._collect()
            units += est._more_members()
    return ests


def _fit_units(units: list, device, starts: dict | None = None) -> None:
    """Train `units` ((Trainable, Prepared) pairs) as ensembles: trials stack when their
    training/validation row counts agree; others form their own groups. The K trials of a
    softmax group (K classes) stay together, in order."""
    groups: dict[tuple, list[int]] = {}
    for i, (est, p) in enumerate(units):
        key = (len(p.train_idx), len(p.val_idx), int(getattr(est, "_softmax_classes", 1)))
        key += (tuple(np.flatnonzero(_missing_of(p)).tolist()),)  # same missing-value columns
        key += (deep_width(p),)  # as many deep inputs (a one-hot feature: one per level)
        key += (p.train_weight is not None, p.weight is not None)  # weighted with weighted
        cfg = est._train_config(1)  # what the unit trains with, as the estimator says it
        key += (cfg.smoothness, cfg.lam)  # one weight of each per ensemble
        key += (None if p.pairs is None else len(p.pairs),)  # as many pair terms
        groups.setdefault(key, []).append(i)
    for idx in groups.values():
        _fit_group([units[i][0] for i in idx], [units[i][1] for i in idx], device, False, starts)


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
