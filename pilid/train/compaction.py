"""Trials that have finished leave the ensemble's computation (`pilid.train.trainer`).

Every trial of an ensemble trains on its own loss and steps, so once some have finished (early
stopping), the others can train on without them: every parameter, buffer and optimiser state
keeps the rows of the trials still training (`keep_members`), and the trainer puts the
finished trials' final weights back at the end. The trials still training take the same steps
as in the whole ensemble up to float rounding: a batched matrix product or a vectorised exp or
log over fewer trials may round a last bit differently, and a trial whose validation loss then
compares otherwise may stop at another epoch (a rerun of a committed result moves as on another
processor).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn


def all_trials(values: np.ndarray, alive, T_all: int, fill) -> np.ndarray:
    """Per-trial `values` of the trials still training, spread over all `T_all` trials
    (`fill` for those that have left)."""
    if alive is None:
        return np.array(values, copy=True)
    out = np.full(T_all, fill, dtype=np.result_type(values, type(fill)))
    out[alive.cpu().numpy()] = values
    return out


def members_separable(model: nn.Module, phases: Sequence, cfg, T: int):
    """Can finished trials leave the computation (`keep_members`)? When each trial's loss and
    step are its own (one output per trial: no softmax groups, no per-phase penalty, no
    frozen parameters, no schedule read from the model, no learning-rate scale) and every
    parameter and buffer of `model` has the trials as its first dimension."""
    if cfg.classes != 1:
        return False
    if any(p.penalty or p.frozen or p.until is not None or p.lr_scale != 1.0 for p in phases):
        return False
    tensors = [*model.parameters(), *(b for b in model.buffers() if b is not None)]
    return all(t.dim() >= 1 and t.shape[0] == T for t in tensors)


def keep_members(model: nn.Module, opt, keep, T: int, restore=None):
    """Keep trials `keep` (indices) of every parameter, buffer and optimiser state of `model`
    (the parameters stay the same objects, so the optimiser and the trainer's lists still hold
    them) and its modules' ``n_trials``. ``keep=None`` with ``restore=None`` returns what is
    needed to undo it (the buffers and trial counts as they are); with `restore`, puts them
    back (the caller sets the parameters to their final weights)."""
    if keep is None and restore is None:
        buffers = {
            (id(mod), name): b
            for mod in model.modules()
            for name, b in mod._buffers.items()
            if b is not None
        }
        counts = {id(mod): mod.n_trials for mod in model.modules() if hasattr(mod, "n_trials")}
        return buffers, counts
    if restore is not None:
        buffers, counts = restore
        for mod in model.modules():
            for name in list(mod._buffers):
                if (id(mod), name) in buffers:
                    mod._buffers[name] = buffers[(id(mod), name)]
            if id(mod) in counts:
                mod.n_trials = counts[id(mod)]
        return None
    for mod in model.modules():
        for name, b in mod._buffers.items():
            if b is not None:
                mod._buffers[name] = b[keep]
        if hasattr(mod, "n_trials"):
            mod.n_trials = int(len(keep))
    for p in model.parameters():
        p.data = p.data[keep]
        p.grad = None
        state = opt.state.get(p, {})
        for key, value in state.items():
            if torch.is_tensor(value) and value.dim() >= 1 and value.shape[0] == T:
                state[key] = value[keep]
    return None
