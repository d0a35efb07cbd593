"""`fit_batched`: T estimators trained as one ensemble, the estimators' side of the engine.

Algorithm 1 of Guo et al., IJCAI 2020 for T trials at once. Each estimator prepares its own data
(`Trainable._prepare`: checks, encoding, scaling, the characteristic points of Definition 1 and
its validation rows) and says what trains for it (`Trainable._members`: itself, a bag's members,
``pairs="auto"``'s candidates, K classes' logits); the units that can train together are
grouped, each group's `TrainSpec` (`Trainable._train_spec`) and data go to the engine
(`pilid.train.batched.fit_ensemble`, which reads nothing else), and each `TrainedTrial` becomes
its estimator's fitted attributes (`keep_trial`); then each estimator gathers its members
(`Trainable._collect`) and may ask for more (`Trainable._more_members`).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import torch

from pilid.device import cpu_threads, resolve_device
from pilid.errors import PilidError, TrainingDivergedError
from pilid.models.description import describe
from pilid.parallel import torch_threads
from pilid.train.batched import deep_width, fit_ensemble
from pilid.train.divergence import lr_advice
from pilid.train.protocol import Prepared, Trainable, _missing_of
from pilid.train.spec import TrainedTrial, TrainSpec

__all__ = ["ON_DIVERGENCE", "fit_batched", "keep_trial"]

#: What `fit_batched` does with a trial whose training diverged (`pilid.train.divergence`).
ON_DIVERGENCE = ("raise", "flag")


def keep_trial(est: Trainable, trial: TrainedTrial, prep: Prepared) -> None:
    """`est`'s fitted attributes from its `TrainedTrial`: ``diverged_`` (None after a good fit;
    else why, and no model is kept), ``history_``, ``n_epochs_``, ``best_epoch_``, ``device_``
    and ``module_`` (the T=1 module on the CPU), then its own (`Trainable._finalize`,
    `Trainable._after_fit`)."""
    est.diverged_ = trial.diverged
    est.history_ = trial.history
    est.n_epochs_ = trial.n_epochs
    est.best_epoch_ = trial.best_epoch
    est.device_ = trial.device
    if trial.module is None:
        return  # no model to keep: `diverged_` says why, `history_` shows the losses
    est.module_ = trial.module
    est._finalize(prep)
    est._after_fit()


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
    for est in ests:  # a refit's description goes with the model it describes
        est.__dict__.pop("fitted_", None)
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
    for est in ests:  # the fitted model's one description (`pilid.models.description`)
        if "module_" in vars(est) and not getattr(est, "diverged_", None):
            est.fitted_ = describe(est)
    return ests


def _fit_units(units: list, device, starts: dict | None = None) -> None:
    """Train `units` ((Trainable, Prepared) pairs) as ensembles (`fit_ensemble`), each trial's
    result kept by its estimator (`keep_trial`): trials stack when their
    training/validation row counts, missing-value columns, deep inputs, weighting and pair
    terms agree and they build their deep part alike and regularise the same parameters, each
    with its own roughness and Omega weights (`_group_spec`: the candidates of
    ``smoothness="auto"`` train together); others form their own groups. The K trials of a
    softmax group (K classes) stay together, in order."""
    specs = [est._train_spec() for est, _ in units]
    groups: dict[tuple, list[int]] = {}
    for i, ((est, p), spec) in enumerate(zip(units, specs)):
        key = (type(spec.build_deep).__qualname__, spec.config.regularized)
        key += (len(p.train_idx), len(p.val_idx), int(getattr(est, "_softmax_classes", 1)))
        key += (tuple(np.flatnonzero(_missing_of(p)).tolist()),)  # same missing-value columns
        key += (deep_width(p),)  # as many deep inputs (a one-hot feature: one per level)
        key += (p.train_weight is not None, p.weight is not None)  # weighted with weighted
        key += (None if p.pairs is None else len(p.pairs),)  # as many pair terms
        groups.setdefault(key, []).append(i)
    for idx in groups.values():
        ests = [units[i][0] for i in idx]
        preps = [units[i][1] for i in idx]
        group_spec = _group_spec([specs[i] for i in idx])  # the first unit's, with weights
        trials = fit_ensemble(group_spec, preps, device, starts=starts)
        for est, prep, trial in zip(ests, preps, trials):
            keep_trial(est, trial, prep)


def _group_spec(specs: list[TrainSpec]) -> TrainSpec:
    """The `TrainSpec` of a group of units (their `specs`): the first one's, with each unit's
    own roughness and Omega weights (``smoothness``, ``lam``) where they differ (candidates of
    ``smoothness="auto"`` trained as one ensemble: a weight per trial)."""
    spec = specs[0]
    weights = {}
    for key in ("smoothness", "lam"):
        values = [getattr(s.config, key) for s in specs]
        if any(v != values[0] for v in values):
            weights[key] = tuple(float(v) for v in values)
    return replace(spec, config=replace(spec.config, **weights)) if weights else spec


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
