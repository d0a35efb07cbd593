"""The lever ``keep="glass"``: train the hybrid, keep its glass part (a glass mode, screened).

PiLiD trains Eq. (9)'s additive part and its deep part jointly (Guo et al., IJCAI 2020,
Algorithm 1), and purification (`pilid.nn.ensemble.PiLiDEnsemble.purify_`) then moves the deep
part's main effects into the shapes. `keep_glass_part_` drops what is left of the MLP: its pure
interactions. The fitted model is the shapes (with the main effects the MLP learnt) and the pair
terms (`pilid.nn.pairs`), so its prediction is its table, as ``hidden_layers=None``'s is; the
MLP served only in training, where it takes up interactions the shapes would otherwise bend to.

How, on a member's T=1 module after training. The MLP's main effect is the purified shift
where there are no pair terms, else the MLP's own projection onto Phi (`PiLiDEnsemble.purify_`
of a module whose deep part is the MLP alone, on the member's training rows). It enters the
additive part's weights, Eq. (10) rewritten with omega_j = 1: the per-piece weights omega_j w_k
plus that main effect, the constants omega_j b_k plus the main effect's constant shared evenly
over the features (as purification shares it), the missing values' on ``nan_value``. It leaves
the purified shift, which keeps the pair terms' share, and the deep part keeps the pair terms
alone. The shapes, the additive part plus its shift, are the hybrid's; the output loses the
MLP's pure interaction: the purified deep part without pair terms, the MLP minus its projection
with them.
"""

from __future__ import annotations

import numpy as np
import torch

from pilid.nn.ensemble import PiLiDEnsemble
from pilid.nn.mlp import EnsembleMLP
from pilid.nn.pairs import DeepWithPairs
from pilid.nn.piecewise import compact_layout, phi_compact
from pilid.train.batched import sample_rows
from pilid.train.encoding import deep_input
from pilid.train.protocol import Prepared

__all__ = ["keep_glass_part_"]


def _rows(prep: Prepared, dtype) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    """The deep input (1, n, m') and compact Phi (1, n, m) of the member's training rows (a
    sample of a large table's), Phi with missing-value indicators where features had them."""
    rows = np.unique(prep.train_idx)
    rows = rows[sample_rows(len(rows), prep.seed)]
    X = prep.X[rows]
    x = deep_input(X, prep.x_mean, prep.x_scale, prep.missing, prep.onehot, prep.bins)
    raw = torch.as_tensor(np.require(X, requirements="W"), dtype=torch.float64)
    phi = phi_compact(raw, compact_layout(prep.knots))[:3]
    if prep.missing is not None and np.any(prep.missing) and len(phi) == 2:
        phi = (*phi, torch.zeros_like(phi[1]))
    phi = tuple(p.to(dtype if p.is_floating_point() else p.dtype)[None] for p in phi)
    return torch.as_tensor(x, dtype=dtype)[None], phi


@torch.no_grad()
def keep_glass_part_(module: PiLiDEnsemble, prep: Prepared) -> None:
    """Drop `module`'s MLP, its main effect kept in the additive part (module docstring)."""
    deep, additive = module.deep, module.additive
    if additive is None or deep is None or additive.sign is not None:
        return
    pairs = deep.pairs if isinstance(deep, DeepWithPairs) else None
    mlp = deep.deep if isinstance(deep, DeepWithPairs) else deep
    if not isinstance(mlp, EnsembleMLP):
        return
    probe = PiLiDEnsemble(additive, mlp, 1)  # the MLP's main effect
    if pairs is None:  # the purified shift is the MLP's alone
        probe.shift_w.copy_(module.shift_w)
        probe.shift_c.copy_(module.shift_c)
        if probe.shift_nan is not None:
            probe.shift_nan.copy_(module.shift_nan)
    else:  # its own projection; the rest of the shift is the pair terms'
        probe.purify_(*_rows(prep, additive.w.dtype), matrix_free=True)
    v, _ = additive.effective()
    om = torch.gather(additive.omega, 1, additive.feature)
    b = additive.b * om  # each feature keeps its constant, and gains 1/m of the shift's
    b[0, additive.starts[0]] += probe.shift_c[0] / additive.starts.shape[1]
    additive.omega.fill_(1.0)
    additive.w.copy_((v + probe.shift_w) * additive.mask)
    additive.b.copy_(b * additive.mask)
    module.shift_w.sub_(probe.shift_w)
    module.shift_c.sub_(probe.shift_c)
    if probe.shift_nan is not None:
        additive.nan_value.add_(probe.shift_nan)
        module.shift_nan.sub_(probe.shift_nan)
    module.deep = DeepWithPairs(None, pairs) if pairs is not None else None
