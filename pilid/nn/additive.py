"""The additive (piecewise-linear) component of PiLiD for T trials at once (Eq. 10, Algorithm 1).

Guo et al., IJCAI 2020, Section 3.2: the first layer of the piecewise-linear component has one
unit per Phi column, ``w_k phi_k + b_k`` with no activation; the next layer sums the units of
each feature, weighted by the group weight omega_j. Feature j's marginal value function is

    u_j(x) = omega_j * sum_{k in pieces(j)} (w_k phi_k(x) + b_k),

and the component's output is sum_j u_j(x). Parameters carry a leading trial dimension T:
``w`` and ``b`` are (T, P), ``omega`` is (T, m). Trials with fewer Phi columns than P are padded
with masked columns (mask 0, weight 0) that never receive a gradient.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from pilid.errors import PilidError

# Ridge term of the least-squares initialisation, relative to the mean diagonal of the Gram
# matrix: small enough to leave a well-posed least-squares fit unchanged, large enough to make
# collinear columns (e.g. a 0/1 feature cut into many pieces) solvable.
LSTSQ_RIDGE = 1e-6
#: A monotone-constrained piece starts at least this far from a zero slope (`monotone_slopes`):
#: |w| has no gradient at exactly 0, so a piece started there would never move.
MONOTONE_START_FLOOR = 1e-3


def piecewise_terms(
    v: torch.Tensor, starts: torch.Tensor, col: torch.Tensor, frac: torch.Tensor, *_missing
) -> torch.Tensor:
    """Per feature sum_k v_k phi_k(x) (T, B, m) from compact Phi (`pilid.nn.piecewise.phi_compact`).

    With cs the cumulative sum of the piece weights v (T, P), feature j's sum for a row whose
    value lies on column g with fraction f is cs[g] - (1 - f) v[g] - cs[start_j - 1]: all pieces
    before g count fully, g by f (Definition 2). A missing (or unseen) cell, column start_j
    and fraction 0, gives 0; the indicators that may follow ``frac`` in compact Phi
    (`pilid.nn.piecewise.phi_compact`) are accepted and ignored here.
    """
    T, B, m = col.shape
    cs = torch.cumsum(v, 1)
    before = torch.gather(F.pad(cs, (1, 0)), 1, starts)  # cs[start_j - 1], 0 for start 0
    g = col.reshape(T, B * m)
    at = torch.gather(cs, 1, g) - torch.gather(v, 1, g) * (1.0 - frac.reshape(T, B * m))
    return at.view(T, B, m) - before.unsqueeze(1)


class AdditiveEnsemble(nn.Module):
    """Eq. (10): u_j(x) = omega_j sum_k (w_k phi_k + b_k), for T trials; forward -> (T, B).

    Inputs are Phi in compact form, ``phi = (col, frac)``, each (T, B, m)
    (`pilid.nn.piecewise.phi_compact`); the result equals ``Phi @ (omega w) + sum omega b``.
    With missing values Phi has a third part ``miss`` (T, B, m) (and at prediction possibly a
    fourth, ``unseen``) and `nan_value` (T, m) adds feature j's learned value where x_j is NaN
    (`missing_terms`); its piecewise part is 0 there.

    Monotone constraints (beyond the paper): `sign` (T, P), one of -1, 0, +1 per piece (its
    feature's constraint, 0: none), makes u_j monotone by construction, not by a penalty. A
    constrained piece's weight enters Eq. 10 as ``sign_k * |w_k|`` and its feature's omega as
    ``|omega_j|`` (`slopes`, `effective`), so every piece's slope omega_j w_k has the sign of the
    constraint whatever the parameters are; each phi_k is non-decreasing in x (Definition 2),
    hence u_j is monotone in that direction. The `w` given for such a piece is its starting
    slope: one of the wrong sign (e.g. from the least squares) starts at
    `MONOTONE_START_FLOOR` in the right direction. Without `sign` (None) nothing changes.
    """

    def __init__(
        self,
        feature: torch.Tensor,
        mask: torch.Tensor,
        n_features: int,
        w: torch.Tensor,
        b: torch.Tensor | None = None,
        omega: torch.Tensor | None = None,
        starts: torch.Tensor | None = None,
        sign: torch.Tensor | None = None,
        nan_value: torch.Tensor | None = None,
    ):
        super().__init__()
        T, P = feature.shape
        self.n_features = int(n_features)
        self.register_buffer("feature", feature.to(torch.long))
        self.register_buffer("mask", mask.to(w.dtype))
        if starts is None:  # first column of every feature (columns are grouped by feature)
            starts = torch.stack(
                [
                    torch.searchsorted(
                        torch.where(self.mask[t] > 0, self.feature[t], self.n_features),
                        torch.arange(self.n_features, device=feature.device),
                    )
                    for t in range(T)
                ]
            )
        self.register_buffer("starts", starts.to(torch.long))
        # Monotone constraints (beyond the paper): see `monotone_slopes`; None (no constraint)
        # leaves every computation as it was.
        self.register_buffer("sign", None if sign is None else sign.to(w.dtype) * self.mask)
        self.register_buffer("omega_abs", None)
        if self.sign is not None:
            signed = torch.zeros(T, self.n_features, dtype=w.dtype, device=w.device)
            signed = signed.scatter_add(1, self.feature, self.sign.abs()) > 0
            self.omega_abs = signed  # features whose omega enters as |omega|
            w = torch.where(self.sign != 0, (self.sign * w).clamp_min(MONOTONE_START_FLOOR), w)
        self.w = nn.Parameter(w * self.mask)
        self.b = nn.Parameter(torch.zeros(T, P, dtype=w.dtype) if b is None else b * self.mask)
        self.omega = nn.Parameter(
            torch.ones(T, self.n_features, dtype=w.dtype) if omega is None else omega
        )
        # Missing values (beyond the paper): u_j(NaN) = constant_j + nan_value_j, learned; None
        # when no feature had missing values (then nothing changes). See `missing_terms`.
        self.register_parameter(
            "nan_value", None if nan_value is None else nn.Parameter(nan_value.to(w.dtype))
        )
        # u_j of a value not seen in fit (NaN in a feature without missing values, a new
        # category): constant_j + unseen_value_j; set by the estimators after training so that
        # it is u_j's training mean (`pilid.models.neural`); None: the constant alone.
        self.register_buffer("unseen_value", None)

    def _omega(self) -> torch.Tensor:
        """omega (T, m) as it enters Eq. 10: |omega_j| for a monotone-constrained feature."""
        if self.sign is None:
            return self.omega
        return torch.where(self.omega_abs, self.omega.abs(), self.omega)

    def slopes(self) -> torch.Tensor:
        """The per-piece weights w_k (T, P) as they enter Eq. 10 (`monotone_slopes`)."""
        if self.sign is None:
            return self.w
        return torch.where(self.sign != 0, self.sign * self.w.abs(), self.w)

    def roughness(self, neighbours: torch.Tensor) -> torch.Tensor:
        """The second-difference roughness of the shapes per trial, (T,) (beyond the paper).

        With v_k = omega_j w_k the rise of u_j over piece k (`effective`), u_j's values at the
        characteristic points are the cumulative sums of v, so v_{k+1} - v_k is their second
        difference: ``sum_k neighbours_k (v_{k+1} - v_k)^2``, with ``neighbours`` (T, P - 1)
        1 where columns k and k + 1 are consecutive pieces of one numeric feature (0 between
        features, for categorical features and padding). It is the difference penalty of
        P-splines (Eilers & Marx 1996) on the hat-function coefficients of u_j, in the index
        of the pieces (with quantile knots: equal shares of the training rows).
        """
        v, _ = self.effective()
        return (neighbours * torch.diff(v, dim=1).square()).sum(1)

    def effective(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-piece weight omega_j w_k (T, P) and per-trial constant sum_k omega_j b_k (T,)."""
        if self.sign is None:
            om = torch.gather(self.omega, 1, self.feature)
            return self.w * om, (self.b * self.mask * om).sum(1)
        om = torch.gather(self._omega(), 1, self.feature)
        return self.slopes() * om, (self.b * self.mask * om).sum(1)

    def missing_terms(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor | None:
        """Each feature's contribution of missing / unseen cells (T, B, m), or None for none.

        ``miss * nan_value + unseen * unseen_value`` from the indicators of compact Phi
        (`pilid.nn.piecewise.phi_compact`): such a cell's piecewise part is 0, so u_j(NaN) is
        feature j's constant plus its `nan_value` (missing values: EBM's ``missing='separate'``).
        """
        out = None
        nan_value = getattr(self, "nan_value", None)
        if len(phi) > 2 and nan_value is not None:
            out = phi[2] * nan_value.unsqueeze(1)
        unseen_value = getattr(self, "unseen_value", None)
        if len(phi) > 3 and unseen_value is not None:
            extra = phi[3] * unseen_value.unsqueeze(1)
            out = extra if out is None else out + extra
        return out

    def forward(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """The additive output sum_j u_j(x_j) + constant (Eq. 10), (T, B), from Phi's parts."""
        v, c = self.effective()
        out = piecewise_terms(v, self.starts, *phi).sum(2) + c.unsqueeze(1)
        missing = self.missing_terms(phi)
        return out if missing is None else out + missing.sum(2)

    def constants(self) -> torch.Tensor:
        """Each feature's constant omega_j sum_k b_k (T, m)."""
        om = torch.gather(self._omega(), 1, self.feature)
        const = torch.zeros(self.omega.shape, dtype=self.w.dtype, device=self.w.device)
        return const.scatter_add(1, self.feature, self.b * self.mask * om)

    def terms(self, phi: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """Each feature's marginal value u_j(x) (T, B, m); sums to `forward` over features."""
        v, _ = self.effective()
        out = piecewise_terms(v, self.starts, *phi) + self.constants().unsqueeze(1)
        missing = self.missing_terms(phi)
        return out if missing is None else out + missing


def ridge_solve(
    phi: torch.Tensor,
    target: torch.Tensor,
    ridge: float = LSTSQ_RIDGE,
    names: Sequence[str] | None = None,
    weights: torch.Tensor | None = None,
    roughness: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Least squares of `target` (T, n) on `phi` (T, n, P) with an intercept, for T trials.

    Algorithm 1, step 2 (w <- (Phi^T Phi)^-1 Phi^T y), solved through the centred normal
    equations (Phi_c^T Phi_c + r I) w = Phi_c^T y_c with a Cholesky factorisation; r is
    `ridge` times the mean diagonal of the Gram matrix. The Gram matrix is formed in the input
    precision, the factorisation in float64. Returns the weights (T, P) and the intercept (T,)
    so that predictions are ``phi @ w + intercept``. `names` (one per Phi column: its feature's
    name) lets a failure name the columns involved.

    `weights` (T, n), non-negative sample weights (None: unweighted, the computation above):
    weighted least squares, with weighted means and the Gram matrix Phi_c^T W Phi_c (and
    Phi_c^T W y_c); the ridge stays relative to its mean diagonal, so scaling every weight
    changes nothing and integer weights equal repeated rows.

    `roughness` (T, Q, Q), Q <= P (the first Q columns; None: none): a penalty ``w^T R w`` on
    the *mean* squared error, as PiLiD's ``smoothness`` term is on the mean loss (`difference_
    penalty`); it enters the normal equations as n R (the total weight for weighted rows), so
    the solution is a P-spline-like penalised least squares.
    """
    if weights is None:
        mean_phi = phi.mean(1, keepdim=True)
        mean_y = target.mean(1, keepdim=True)
        phi_c = phi - mean_phi
        phi_w = phi_c
    else:
        weights = weights.to(phi.dtype)
        total = weights.sum(1, keepdim=True)
        mean_phi = torch.bmm(weights.unsqueeze(1), phi) / total.unsqueeze(-1)
        mean_y = (weights * target).sum(1, keepdim=True) / total
        phi_c = phi - mean_phi
        phi_w = phi_c * weights.unsqueeze(-1)
    gram = torch.bmm(phi_w.transpose(1, 2), phi_c).double()
    rhs = torch.bmm(phi_w.transpose(1, 2), (target - mean_y).unsqueeze(-1)).double()
    P = phi.shape[2]
    diag = torch.diagonal(gram, dim1=1, dim2=2)
    r = ridge * diag.mean(1).clamp_min(1e-12) + 1e-12
    if roughness is not None:  # on the mean loss: times the rows (or the total weight)
        rows = phi.shape[1] if weights is None else weights.sum(1)
        rows = torch.as_tensor(rows, dtype=torch.float64, device=gram.device).reshape(-1, 1, 1)
        Q = roughness.shape[1]
        gram[:, :Q, :Q] += roughness.to(gram.device, torch.float64) * rows  # gram is our own
    eye = torch.eye(P, dtype=gram.dtype, device=gram.device)
    # Collinear columns (one-hot groups, constant pieces) leave the float32 Gram matrix a little
    # indefinite; a trial whose factorisation fails retries with a ten times larger ridge.
    for _ in range(8):
        chol, info = torch.linalg.cholesky_ex(gram + r[:, None, None] * eye)
        failed = info > 0
        if not bool(failed.any()):
            break
        r = torch.where(failed, r * 10.0, r)
    else:
        raise PilidError(_failure_message(gram, target, failed, names))
    w = torch.cholesky_solve(rhs, chol).squeeze(-1)
    intercept = mean_y.squeeze(1).double() - (mean_phi.squeeze(1).double() * w).sum(1)
    return w.to(phi.dtype), intercept.to(phi.dtype)


def _failure_message(gram, target, failed, names) -> str:
    """One line for a least-squares fit that no ridge made solvable, naming the columns."""
    if not bool(torch.isfinite(target).all()):
        return (
            "the least-squares fit on Phi failed: its target has NaN or inf values (training "
            "diverged?); lower lr or raise lam"
        )
    diag = torch.diagonal(gram[failed], dim1=1, dim2=2)
    bad = (~torch.isfinite(diag)).any(0)  # Phi columns with NaN/inf entries (or overflow)
    if not bool(bad.any()):
        bad = torch.ones_like(bad)  # finite but unsolvable: every column is suspect
    columns = torch.nonzero(bad).flatten()
    involved = []
    if names is not None:
        for k in columns.tolist():
            if k < len(names) and names[k] not in involved:
                involved.append(names[k])
    where = f" for column(s) {', '.join(repr(n) for n in involved)}" if involved else ""
    return (
        f"the least-squares initialisation failed (singular or non-finite features){where}; "
        "rescale those columns (e.g. standardise them), drop them, or use init='gaussian'"
    )


def difference_penalty(neighbours: torch.Tensor, smoothness: float) -> torch.Tensor:
    """``smoothness * D^T D`` (T, P, P) for neighbours (T, P - 1): the quadratic form of
    `AdditiveEnsemble.roughness` at omega = 1, ``w^T (D^T D) w = sum_k nb_k (w_{k+1} - w_k)^2``
    (D: the first differences of the neighbouring pieces; a tridiagonal matrix)."""
    T, P1 = neighbours.shape
    nb = neighbours.double() * float(smoothness)
    diag = torch.zeros(T, P1 + 1, dtype=nb.dtype, device=nb.device)
    diag[:, :-1] += nb
    diag[:, 1:] += nb
    return torch.diag_embed(diag) - torch.diag_embed(nb, 1) - torch.diag_embed(nb, -1)


def lstsq_init(
    phi: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor,
    names: Sequence[str] | None = None,
    weights: torch.Tensor | None = None,
    roughness: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Algorithm 1's least-squares start: w from `ridge_solve`, the intercept spread over b.

    Algorithm 1 sets b = 0 and regresses without an intercept; here the least squares has an
    intercept, which is spread evenly over the per-piece biases b (the paper's footnote splits
    w_0 into constant terms of the marginal value functions). With omega = 1 the component's
    output is then exactly the least-squares prediction. Returns (w (T, P), b (T, P)).
    Missing values: `phi` (T, n, P + k) may end with k indicator columns (1.0 where a feature
    with missing values is NaN), P being ``mask.shape[1]``; they enter the least squares with
    the Phi columns and their weights come back third, (w, b, nan_w (T, k)): the start of
    `AdditiveEnsemble`'s ``nan_value`` (the prediction is again exactly the least squares').
    `names` (one per Phi column) is handed to `ridge_solve` for its error message, `weights`
    (T, n; sample weights, None: unweighted) for a weighted least squares, `roughness` (T, P, P;
    `difference_penalty`) for PiLiD's ``smoothness`` term (a penalised least squares).
    """
    P = mask.shape[1]
    w, intercept = ridge_solve(phi, target, names=names, weights=weights, roughness=roughness)
    n_real = mask.sum(1, keepdim=True).clamp_min(1.0)
    b = mask * (intercept.unsqueeze(1) / n_real)
    if phi.shape[2] > P:  # missing-value indicator columns after Phi's P: their weights too
        return w[:, :P] * mask, b, w[:, P:]
    return w * mask, b


def monotone_start(
    phi: torch.Tensor, w: torch.Tensor, b: torch.Tensor, sign: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """`lstsq_init`'s start (w, b), each (T, P), made to respect monotone constraints.

    The slope of a piece with ``sign`` (T, P) +1/-1 whose least-squares value has the other sign
    is set to 0 (`AdditiveEnsemble` then starts it at `MONOTONE_START_FLOOR`); the change of the
    mean prediction over the rows of `phi` (T, n, P) is taken out of the biases b, so the start
    still predicts the target's mean.
    """
    clamped = torch.where(sign != 0, sign * (sign * w).clamp_min(0.0), w)
    shift = (phi.mean(1) * (clamped - w)).sum(1, keepdim=True)  # (T, 1)
    n_real = mask.sum(1, keepdim=True).clamp_min(1.0)
    return clamped * mask, b - mask * shift / n_real
