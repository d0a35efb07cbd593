"""The additive part of a batched ensemble (Eq. 10) with Algorithm 1's step 2: each trial's Phi
columns laid out side by side (`piece_layout`), their neighbouring pieces for the roughness
penalty (`neighbour_pieces`), and the least-squares start of every trial (`pilid.nn.
least_squares.lstsq_init`, dense or matrix-free by the width of Phi).
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from pilid.errors import PilidError
from pilid.nn.additive import AdditiveEnsemble
from pilid.nn.least_squares import DENSE_COLUMNS, CompactPhi, lstsq_init, monotone_start
from pilid.nn.piecewise import phi_dense
from pilid.streams import STREAM_ADDITIVE, trial_generator
from pilid.train.ensemble_data import EnsembleData
from pilid.train.protocol import Prepared, _missing_of
from pilid.train.spec import TrainSpec


def _stack_weights(weights: list, n: int, device) -> torch.Tensor:
    """(T, n) float32 sample weights of T trials, unit weights for a trial without any."""
    rows = [np.ones(n) if w is None else w for w in weights]
    return torch.as_tensor(np.stack(rows), dtype=torch.float32, device=device)


def _check_phi_finite(data: EnsembleData, names: list[str]) -> None:
    """Phi (Definition 2) is evaluated in float32: values beyond its range (|x| > 3.4e38) give
    NaN. Name the columns instead of letting the least squares or the training fail."""
    bad = torch.zeros(len(names), dtype=torch.bool, device=data.phi[1].device)
    for phi in (data.phi, data.phi_val):
        if phi is not None:
            bad |= (~torch.isfinite(phi[1])).reshape(-1, len(names)).any(0)
    if bool(bad.any()):
        columns = ", ".join(repr(names[j]) for j in torch.nonzero(bad).flatten().tolist())
        raise PilidError(
            f"column(s) {columns} cannot be cut into pieces: their values are beyond float32's "
            "range (|x| > 3.4e38); rescale them (e.g. standardise them) before fit"
        )


def _piece_signs(spec: TrainSpec, feature: torch.Tensor, mask: torch.Tensor):
    """Each Phi column's monotone constraint (T, P), the sign of its feature in the spec's
    ``monotone`` (+1, -1, 0: none); None when no feature is constrained."""
    constraints = spec.monotone_signs()
    if constraints is None:
        return None
    per_feature = torch.as_tensor(constraints, dtype=mask.dtype, device=mask.device)
    return per_feature[feature] * mask


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
    spec: TrainSpec,
    preps: list[Prepared],
    data: EnsembleData,
    layout: tuple[torch.Tensor, torch.Tensor],
    roughness: torch.Tensor | None = None,
    matrix_free: bool = False,
    starts: dict | None = None,
):
    """Algorithm 1, step 2: the additive part of every trial, least squares or Gaussian, on
    `layout` (`piece_layout`); `roughness` (T, P - 1; `difference_penalty`'s band, None: no
    ``smoothness``) makes the least-squares start a penalised one (P-splines'). A Phi wider
    than `pilid.nn.least_squares.DENSE_COLUMNS` columns is solved matrix-free from compact Phi
    (`pilid.nn.least_squares.CompactPhi`), so memory stays linear in the pieces; so is any Phi
    with `matrix_free` (a sample of a large table: work linear in its rows, not in the pieces
    squared).

    `starts` (a dict, None: none) keeps each trial's least-squares solution under the digest
    of everything it reads (`_start_key`): a trial of another ensemble of the same fit with the
    same rows, target, weights, pieces and penalty (the same bag member in each candidate of
    ``pairs="auto"``, whose pair terms start at 0) takes the kept solution, the very numbers
    solving again would give."""
    T = len(preps)
    m = preps[0].X.shape[1]
    feature, mask = layout
    sign = _piece_signs(spec, feature, mask)
    nan_value = None  # missing values: u_j(NaN) - constant_j per feature (T, m)
    if any(p.missing is not None and np.any(p.missing) for p in preps):
        nan_value = torch.zeros(T, m, device=feature.device)
    if spec.init == "lstsq":
        P = max(p.knots.n_columns for p in preps)
        wide = P > DENSE_COLUMNS or matrix_free  # solved matrix-free from compact Phi
        target = _lstsq_target(spec, preps, data)
        ws, bs = [], []
        for t in range(T):  # one trial's Phi (dense: n x P) at a time
            w_t, b_t = _trial_start(
                spec, preps[t], data, layout, t, target, wide, nan_value, sign, roughness, starts
            )
            ws.append(w_t)
            bs.append(b_t)
        w, b = torch.cat(ws), torch.cat(bs)
    else:
        w, b = _gaussian_start(spec, preps, max(p.knots.n_columns for p in preps), feature.device)
    return AdditiveEnsemble(feature, mask, m, w, b, sign=sign, nan_value=nan_value)


def _lstsq_target(spec: TrainSpec, preps: list[Prepared], data: EnsembleData) -> torch.Tensor:
    """What the least-squares start fits, (T, n): the standardised target (regression), the
    labels as -1 / +1 (classification), one-vs-rest per trial's class with K classes."""
    target = data.y if spec.task == "regression" else 2.0 * data.y - 1.0
    if preps[0].class_index is not None:  # K classes: one-vs-rest coding of trial t's class
        index = torch.tensor([p.class_index for p in preps], device=data.y.device)
        target = 2.0 * (data.y == index[:, None]).to(data.y.dtype) - 1.0
    return target


def _trial_start(spec, prep, data, layout, t, target, wide, nan_value, sign, roughness, starts):
    """Trial t's least-squares start (w (1, P), b (1, P)), `_build_additive`'s: solved on its
    Phi (or taken from `starts` under its digest), its missing values' values written into
    `nan_value`, its slopes clamped where monotone (`sign`)."""
    feature, mask = layout
    names = spec.column_names(prep.X.shape[1])
    col, frac = data.phi[0], data.phi[1]
    column_names = [names[j] for j in feature[t].tolist()]
    extra = None
    if nan_value is not None:  # missing values: one indicator column per such feature
        lacking = np.flatnonzero(_missing_of(prep))
        extra = data.phi[2][t][:, lacking]
        column_names += [names[j] for j in lacking]
    weights = None if data.w is None else data.w[t : t + 1]
    rough = None if roughness is None else roughness[t : t + 1]
    inputs = (col[t], frac[t], feature[t], mask[t], extra, target[t], weights, rough)
    key = None if starts is None else _start_key(wide, inputs)
    start = None if key is None else starts.get(key)
    dense = None  # Phi of trial t, built only where a solve or a clamp reads it
    if start is not None:  # copies: what is kept never shares memory with a model
        start = tuple(part.clone() for part in start)
    else:
        dense, design = _design(wide, col, frac, feature, mask, extra, t)
        start = lstsq_init(
            design,
            target[t : t + 1],
            mask[t : t + 1],
            names=column_names,
            weights=weights,
            roughness=rough,
        )
        if key is not None:
            starts[key] = tuple(part.clone() for part in start)
    w_t, b_t = start[0], start[1]
    if nan_value is not None:
        nan_value[t, lacking] = start[2][0]
    if sign is not None:  # monotone constraints: clamp the start's slopes
        if dense is None:
            dense, _ = _design(wide, col, frac, feature, mask, extra, t)
        w_t, b_t = monotone_start(dense, w_t, b_t, sign[t : t + 1], mask[t : t + 1])
    return w_t, b_t


def _gaussian_start(spec: TrainSpec, preps: list[Prepared], P: int, device):
    """init="gaussian", the paper's comparison: w ~ N(0, sigma^2) (He's sigma, fan-in the
    trial's pieces, where ``sigma`` is None), b = 0; (T, P) each."""
    w = torch.zeros(len(preps), P)
    for t, p in enumerate(preps):
        g = trial_generator(p.seed, STREAM_ADDITIVE)
        Pt = p.knots.n_columns
        std = (2.0 / Pt) ** 0.5 if spec.sigma is None else float(spec.sigma)  # He: fan-in P
        w[t, :Pt] = torch.randn(Pt, generator=g) * std
    return w.to(device), torch.zeros(len(preps), P, device=device)


def _design(wide: bool, col, frac, feature, mask, extra, t: int):
    """Trial t's Phi (1, n, P) and the design its least squares solves on (Phi with the
    missing-value indicators `extra`, if any): compact (`CompactPhi`, matrix-free; the Phi that
    `monotone_start` reads is then the same object, whose column means it takes) or dense."""
    if wide:
        design = CompactPhi(
            col[t : t + 1],
            frac[t : t + 1],
            feature[t : t + 1],
            mask[t : t + 1],
            None if extra is None else extra[None],
        )
        return design, design
    dense = phi_dense(col[t], frac[t], feature[t])
    design = dense if extra is None else torch.cat([dense, extra], dim=1)
    return dense[None], design[None]


def _start_key(wide: bool, tensors) -> tuple:
    """The digest of one trial's least-squares inputs (`_build_additive`'s `starts`): the
    solver (dense or matrix-free) and every tensor's dtype, shape and bytes (None for an absent
    one)."""
    digest = hashlib.blake2b(digest_size=32)
    for tensor in tensors:
        if tensor is None:
            digest.update(b"none")
            continue
        array = tensor.detach().contiguous().cpu().numpy()
        digest.update(f"{array.dtype}{array.shape}".encode())
        digest.update(array.tobytes())
    return (bool(wide), digest.hexdigest())


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
