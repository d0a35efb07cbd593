"""Algorithm 1, step 2 (Guo et al., IJCAI 2020): the least-squares start of the additive part,
and the same penalised least squares for the purification (`pilid.nn.ensemble`).

`lstsq_init` fits each trial's ``w``, ``b`` (Eq. 10 with omega = 1) to the target by ridge
regression on Phi (Definition 2), with PiLiD's roughness penalty (`pilid.nn.additive.
difference_penalty`) where ``smoothness`` is on. `ridge_solve` solves through the dense P x P
normal equations up to `DENSE_COLUMNS` columns; a wider Phi is solved matrix-free from compact
Phi (`ridge_solve_compact`: conjugate gradients with a per-feature block preconditioner, or the
n x n dual system where rows are fewer than columns), in memory linear in P.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from pilid.errors import PilidError
from pilid.nn.additive import penalty_apply, penalty_matrix

# Ridge term of the least-squares initialisation, relative to the mean diagonal of the Gram
# matrix: small enough to leave a well-posed least-squares fit unchanged, large enough to make
# collinear columns (e.g. a 0/1 feature cut into many pieces) solvable.
LSTSQ_RIDGE = 1e-6
#: Phi columns up to which the least squares (the start, the purification) is solved through the
#: dense P x P normal equations (`ridge_solve`); wider Phi (many features times many pieces) is
#: solved matrix-free from compact Phi (`ridge_solve_compact`), in memory linear in P. Every cell
#: of the paper's protocol (at most 50 features x 20 pieces) stays on the dense path.
DENSE_COLUMNS = 1024
#: `ridge_solve_compact`'s conjugate gradients stop at this relative residual of the normal
#: equations (or after `CG_MAX_ITER` iterations: the iterates of conjugate gradients on the
#: normal equations are themselves regularised least-squares fits, so a capped solve is a start
#: too).
CG_TOL = 1e-8
CG_MAX_ITER = 2000
#: `ridge_solve_compact`'s preconditioner: blocks of at most this many consecutive pieces of one
#: feature.
CG_BLOCK = 64
#: `ridge_solve_compact` may solve a Phi with more columns than distinct rows, up to this many
#: rows, through its n x n dual system (`_dual_solve`, O(n^2 P)): there the normal matrix is
#: singular but for the penalty and the ridge, and conjugate gradients need many iterations
#: (with the library's penalty about 3 (P / n)^2, each O(n m)). It takes the dual without a
#: penalty, and with one where ``DUAL_SWITCH (P / n)^2 > n P / m``: the cheaper of the two by
#: those counts (a matrix product's flop against a gather's, measured on one CPU core).
DUAL_ROWS = 4096
DUAL_SWITCH = 550.0


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

    `roughness` (T, Q - 1), Q <= P (the first Q columns; None: none): the band of
    `difference_penalty`, a penalty ``w^T R w`` on the *mean* squared error, as PiLiD's
    ``smoothness`` term is on the mean loss; it enters the normal equations as n R (the total
    weight for weighted rows), so the solution is a P-spline-like penalised least squares. The
    dense matrix R (T, Q, Q) is taken too.

    `phi` may be a `CompactPhi` (Phi in compact form, for a wide Phi): then the same system is
    solved matrix-free by `ridge_solve_compact`.
    """
    if isinstance(phi, CompactPhi):
        return ridge_solve_compact(phi, target, ridge, names, weights, roughness)
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
        R = roughness if roughness.dim() == 3 else penalty_matrix(roughness)
        Q = R.shape[1]
        gram[:, :Q, :Q] += R.to(gram.device, torch.float64) * rows  # gram is our own
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
    involved = []
    if gram is not None and names is not None:
        diag = torch.diagonal(gram[failed], dim1=1, dim2=2)
        bad = (~torch.isfinite(diag)).any(0)  # Phi columns with NaN/inf entries (or overflow)
        if not bool(bad.any()):
            bad = torch.ones_like(bad)  # finite but unsolvable: every column is suspect
        columns = torch.nonzero(bad).flatten()
        for k in columns.tolist():
            if k < len(names) and names[k] not in involved:
                involved.append(names[k])
    where = f" for column(s) {', '.join(repr(n) for n in involved)}" if involved else ""
    return (
        f"the least-squares initialisation failed (singular or non-finite features){where}; "
        "rescale those columns (e.g. standardise them), drop them, or use init='gaussian'"
    )


class CompactPhi:
    """Phi (T, n, P) of Definition 2 held in compact form, with k dense columns after it: the
    design of a wide least squares as a linear operator (`ridge_solve_compact`).

    `col`, `frac` (T, n, m): compact Phi (`pilid.nn.piecewise.phi_compact`); `feature`, `mask`
    (T, P): each column's feature and 1 for a real piece (0: padding, a zero column), the
    columns grouped by feature; `extra` (T, n, k) or None: dense columns after Phi's P (the
    missing-value indicators of `lstsq_init`). Holds n x m numbers per trial where the dense
    Phi holds n x P.
    """

    def __init__(self, col, frac, feature, mask, extra=None):
        self.col = col.to(torch.long)
        self.dtype = frac.dtype
        self.frac = frac.to(torch.float64)
        self.feature = feature.to(torch.long)
        self.mask = mask.to(torch.float64)
        self.extra = None if extra is None or extra.shape[-1] == 0 else extra.to(torch.float64)
        T, n, m = self.col.shape
        counts = torch.zeros(T, m, dtype=torch.float64, device=self.col.device)
        counts = counts.scatter_add(1, self.feature, self.mask).to(torch.long)  # pieces of j
        self.starts = torch.cumsum(counts, 1) - counts
        self.counts = counts
        k = 0 if self.extra is None else self.extra.shape[2]
        self.shape = (T, n, self.feature.shape[1] + k)

    def trial(self, t: int) -> _TrialPhi:
        """Trial t's operator (`_TrialPhi`)."""
        extra = None if self.extra is None else self.extra[t]
        parts = (self.col, self.frac, self.feature, self.mask, self.starts, self.counts)
        return _TrialPhi(*(part[t] for part in parts), extra)

    def column_means(self) -> torch.Tensor:
        """Each column's mean over the rows (T, P + k), in the input precision."""
        n = self.shape[1]
        ones = torch.ones(n, dtype=torch.float64, device=self.col.device)
        means = [self.trial(t).rmatvec(ones) / max(n, 1) for t in range(self.shape[0])]
        return torch.stack(means).to(self.dtype)


class _TrialPhi:
    """One trial's `CompactPhi`: products with Phi (n, P + k) and its transpose in O(n m + P)."""

    def __init__(self, col, frac, feature, mask, starts, counts, extra):
        self.mask, self.extra = mask, extra
        self.starts, self.counts = starts, counts
        self.col2d, self.frac2d, self.feature = col, frac, feature
        self.n, self.m = col.shape
        self.P = feature.shape[0]
        ends = starts + counts  # one past each feature's last column
        # padding columns (mask 0) take an end at themselves, so their sums below are 0
        own = torch.arange(self.P, device=col.device)
        self.end_of = torch.where(mask > 0, ends[feature], own + 1)
        self.flat = col.reshape(-1)
        self.frac = frac.reshape(-1)
        self.rest = 1.0 - self.frac  # the share of the row's own piece it has not reached
        self.before = (starts - 1).clamp_min(0)  # each feature's column before its first
        self.first = starts == 0
        self._position = None  # `dense_columns`' piece + fraction per feature, (m, n)

    def matvec(self, v: torch.Tensor) -> torch.Tensor:
        """``Phi v`` (n,) for `v` (P + k,): per row and feature, the cumulative sum of v up to
        the row's piece less the part of that piece not reached, from the feature's start
        (`piecewise_terms`), summed over the features."""
        w = v[: self.P]
        cs = torch.cumsum(w, 0)
        at = cs.index_select(0, self.flat) - w.index_select(0, self.flat) * self.rest
        start = torch.where(self.first, 0.0, cs.index_select(0, self.before)).sum()
        out = at.view(self.n, self.m).sum(1) - start
        if self.extra is not None:
            out = out + self.extra @ v[self.P :]
        return out

    def rmatvec(self, u: torch.Tensor, square: bool = False) -> torch.Tensor:
        """``Phi^T u`` (P + k,) for `u` (n,); ``square``: with every entry of Phi squared.

        Column k of Phi is 1 for a row whose value lies on a later piece of its feature, the
        fraction on piece k itself, 0 before (Definition 2): its sum is the suffix sum, within
        the feature, of the rows' weights by piece, plus the fractions' share on piece k.
        """
        frac = self.frac.square() if square else self.frac
        spread = u[:, None].expand(self.n, self.m).reshape(-1)
        on = torch.zeros(self.P + 1, dtype=u.dtype, device=u.device)
        on = on.index_add(0, self.flat, spread)
        part = torch.zeros(self.P, dtype=u.dtype, device=u.device)
        part = part.index_add(0, self.flat, spread * frac)
        suffix = torch.flip(torch.cumsum(torch.flip(on, (0,)), 0), (0,))  # sum of on[l >= k]
        out = (suffix[1:] - suffix.index_select(0, self.end_of) + part) * self.mask
        if self.extra is not None:
            extra = self.extra.square() if square else self.extra
            out = torch.cat([out, extra.T @ u])
        return out

    def unique_rows(self, y: torch.Tensor, weights: torch.Tensor):
        """The same least squares on fewer rows: rows alike in Phi and target (a bootstrap
        sample's repeats) merged into one whose weight is their sum (integer weights equal
        repeated rows), rows of weight 0 dropped. Returns (operator, y, weights).

        With unit weights, runs of equal neighbouring rows (a bootstrap sample's sorted rows
        repeat next to each other) are merged first, into their counts: the sort then sees
        fewer rows, and the sums of ones are the same integers, so the result is the same."""
        parts = [self.col2d.to(y.dtype), self.frac2d, y[:, None]]
        if self.extra is not None:
            parts.append(self.extra)
        keep = weights > 0
        table, kept = torch.cat(parts, 1)[keep], weights[keep]
        if len(table) > 1 and bool((kept == 1).all()):
            first = torch.ones(len(table), dtype=torch.bool, device=table.device)
            first[1:] = (table[1:] != table[:-1]).any(1)
            if not bool(first.all()):
                start = torch.nonzero(first).flatten()
                end = torch.cat([start[1:], start.new_tensor([len(table)])])
                table, kept = table[start], (end - start).to(kept.dtype)
        rows, inverse = torch.unique(table, dim=0, return_inverse=True)
        if len(rows) == self.n:
            return self, y, weights
        merged = torch.zeros(len(rows), dtype=weights.dtype, device=weights.device)
        merged = merged.index_add(0, inverse, kept)
        m = self.m
        col = rows[:, :m].to(torch.long)
        extra = None if self.extra is None else rows[:, 2 * m + 1 :]
        op = _TrialPhi(
            col, rows[:, m : 2 * m], self.feature, self.mask, self.starts, self.counts, extra
        )
        return op, rows[:, 2 * m], merged

    def dense_columns(self, columns: torch.Tensor) -> torch.Tensor:
        """Phi's entries (R, L, n) at `columns` (R, L): each row of `columns` consecutive pieces
        of one feature. With p = g + f the row's piece g and fraction f of that feature,
        ``clamp(p - k, 0, 1)`` is column k's entry of Definition 2 (1 before the row's piece,
        its fraction on it, 0 after)."""
        if self._position is None:
            self._position = (self.col2d.to(self.frac2d.dtype) + self.frac2d).T.contiguous()
        owner = self.feature[columns[:, 0]]  # (R,)
        at = columns.to(self.frac2d.dtype).unsqueeze(-1)
        return (self._position[owner].unsqueeze(1) - at).clamp_(0.0, 1.0)

    def blocks(self, size: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Consecutive pieces of one feature in blocks of at most `size` columns: their column
        indices (B, G) (a short block repeats its last column) and which are real (B, G)."""
        counts, starts = self.counts, self.starts
        per = (counts + size - 1) // size  # blocks per feature
        feat = torch.repeat_interleave(torch.arange(len(counts), device=counts.device), per)
        first = torch.cumsum(per, 0) - per
        q = torch.arange(len(feat), device=counts.device) - first[feat]  # block within feature
        begin = starts[feat] + q * size
        length = torch.minimum(counts[feat] - q * size, torch.full_like(begin, size))
        G = int(length.max()) if len(length) else 1
        offset = torch.arange(G, device=counts.device)
        real = offset[None, :] < length[:, None]
        index = begin[:, None] + torch.minimum(offset[None, :], (length - 1)[:, None])
        return index, real


def ridge_solve_compact(
    phi: CompactPhi,
    target: torch.Tensor,
    ridge: float = LSTSQ_RIDGE,
    names: Sequence[str] | None = None,
    weights: torch.Tensor | None = None,
    roughness: torch.Tensor | None = None,
    free: torch.Tensor | None = None,
    tol: float = CG_TOL,
    max_iter: int = CG_MAX_ITER,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`ridge_solve`'s penalised least squares for a wide Phi, matrix-free, trial by trial.

    The same centred normal equations ``(Phi_c^T W Phi_c + n R + r I) w = Phi_c^T W y_c``
    (Algorithm 1, step 2, with `ridge_solve`'s ridge r relative to the mean diagonal and its
    `roughness` band R) solved by preconditioned conjugate gradients (in float64, to relative
    residual `tol` or `max_iter` iterations): every product with Phi comes from compact Phi
    (`CompactPhi`), the penalty from its band (`penalty_apply`), and the preconditioner is the
    normal matrix's blocks of consecutive pieces of one feature (at most `CG_BLOCK` columns),
    whose Gram entries are sums over the rows per piece: memory linear in P, never P x P.
    `free` (T, P + k) bool (None: all): the columns that may move; the others are held at 0
    (a monotone feature in `pilid.nn.ensemble.PiLiDEnsemble.purify_`), and the ridge is
    relative to the free columns' diagonal, as `ridge_solve` on those columns alone. Rows alike
    (a bootstrap sample's repeats) are merged first (`_TrialPhi.unique_rows`); with more free
    columns than rows the system is solved exactly through its n x n dual (`_dual_solve`) where
    that is the cheaper (`DUAL_ROWS`, `DUAL_SWITCH`). Returns the weights (T, P + k) and the
    intercept (T,) in Phi's precision.
    """
    ws, cs = [], []
    for t in range(phi.shape[0]):
        w, c = _solve_trial(
            phi.trial(t),
            target[t].double(),
            None if weights is None else weights[t].double(),
            None if roughness is None else roughness[t].double(),
            None if free is None else free[t],
            ridge,
            tol,
            max_iter,
            names,
        )
        ws.append(w)
        cs.append(c)
    return torch.stack(ws).to(phi.dtype), torch.stack(cs).to(phi.dtype)


def _solve_trial(op, y, weights, band, free, ridge, tol, max_iter, names):
    """One trial of `ridge_solve_compact`: (w (P + k,), intercept ())."""
    if not bool(torch.isfinite(y).all()):
        raise PilidError(_failure_message(None, y[None], None, names))
    n = y.shape[0]
    wt = torch.ones(n, dtype=torch.float64, device=y.device) if weights is None else weights
    op, y, wt = op.unique_rows(y, wt)
    total = wt.sum()
    mean = op.rmatvec(wt) / total  # weighted column means
    mean_y = (wt * y).sum() / total
    yc = y - mean_y
    diag = op.rmatvec(wt, square=True) - total * mean.square()  # Gram's diagonal, centred
    keep = torch.ones_like(diag) if free is None else free.to(diag.dtype)
    r = ridge * ((diag * keep).sum() / keep.sum().clamp_min(1.0)).clamp_min(1e-12) + 1e-12
    pen = None
    if band is not None:  # on the mean loss: times the total weight; 0 past its Q columns
        pen = F.pad(band, (0, diag.shape[0] - 1 - band.shape[0])) * total

    def normal(v):  # (Phi_c^T W Phi_c + n R + r I) v
        v = v * keep
        z = wt * (op.matvec(v) - mean @ v)
        out = op.rmatvec(z) - mean * z.sum() + r * v
        if pen is not None:
            out = out + penalty_apply(pen, v)
        return out * keep + (1.0 - keep) * v

    rows, cols = len(y), float(keep.sum())
    wide = rows <= DUAL_ROWS and rows < cols  # more columns than rows
    if wide and (pen is None or DUAL_SWITCH * (cols / rows) ** 2 > rows * cols / op.m):
        w = _dual_solve(op, wt, mean, yc, r, pen, keep)
    else:
        rhs = (op.rmatvec(wt * yc) - mean * (wt * yc).sum()) * keep
        precondition = _block_preconditioner(op, wt, total, mean, diag, r, pen, keep)
        w = _conjugate_gradients(normal, rhs, precondition, tol, max_iter)
    if not bool(torch.isfinite(w).all()):
        raise PilidError(_failure_message(None, y[None], None, names))
    return w, mean_y - mean @ w


def _dual_solve(op, wt, mean, yc, r, pen, keep, chunk: int = 1 << 23):
    """The penalised least squares of `_solve_trial` through its n x n dual system.

    With Z = W^1/2 Phi_c (the free columns) and S = n R + r I (the penalty and the ridge, block
    diagonal: each run of linked pieces of a feature one tridiagonal block, every other column
    its own), the normal equations' solution is ``S^-1 Z^T (I + Z S^-1 Z^T)^-1 W^1/2 y_c``
    (the push-through identity): one n x n Cholesky factorisation, with
    ``Z S^-1 Z^T = sum_blocks (L^-1 Z_b^T)^T (L^-1 Z_b^T)`` (S_b = L L^T) accumulated over
    blocks of columns, at most `chunk` entries of Z at a time. O(n^2 P) time, O(n^2 + chunk)
    memory.
    """
    N, n = keep.shape[0], len(yc)
    dtype, device = yc.dtype, yc.device
    root = wt.sqrt()
    full = torch.zeros(N + 1, dtype=dtype, device=device)  # full[k] = penalty link k-1 -> k
    linked = torch.zeros(N, dtype=torch.bool, device=device)  # column k linked to k - 1
    if pen is not None:
        full = F.pad(pen, (1, 1))
        linked[1:] = pen > 0
    start = torch.nonzero(~linked).flatten()  # the first column of every run
    length = torch.diff(start, append=torch.tensor([N], device=device))
    free = keep[start] > 0  # a run lies within one feature: held or free as a whole
    start, length = start[free], length[free]
    kernel = torch.zeros(n, n, dtype=dtype, device=device)
    factors = []
    for size in torch.unique(length).tolist():  # runs of one length at a time
        cols = start[length == size][:, None] + torch.arange(size, device=device)  # (R, L)
        block = torch.diag_embed(r + full[cols] + full[cols + 1])
        if size > 1:
            link = -full[cols[:, 1:]]
            block = block + torch.diag_embed(link, 1) + torch.diag_embed(link, -1)
        chol = torch.linalg.cholesky(block)
        factors.append((cols, chol))
        step = max(1, chunk // max(n * size, 1))
        for s in range(0, len(cols), step):
            part, low = cols[s : s + step], chol[s : s + step]
            z = (_dense_block(op, part) - mean[part].unsqueeze(-1)) * root  # (R, L, n)
            half = torch.linalg.solve_triangular(low, z, upper=False).reshape(-1, n)
            kernel.addmm_(half.T, half)
    kernel.diagonal().add_(1.0)
    alpha = torch.cholesky_solve((root * yc)[:, None], torch.linalg.cholesky(kernel))[:, 0]
    spread = root * alpha
    v = op.rmatvec(spread) - mean * spread.sum()  # Z^T alpha
    w = torch.zeros(N, dtype=dtype, device=device)
    for cols, chol in factors:  # S^-1 Z^T alpha, block by block
        w[cols] = torch.cholesky_solve(v[cols].unsqueeze(-1), chol).squeeze(-1)
    return w * keep


def _dense_block(op, cols: torch.Tensor) -> torch.Tensor:
    """The columns `cols` (R, L) of Phi (with `_TrialPhi`'s extra columns after its P) as
    (R, L, n): a run of pieces of one feature (`_TrialPhi.dense_columns`) or one extra column."""
    phi = cols[:, 0] < op.P
    if bool(phi.all()):
        return op.dense_columns(cols)
    out = torch.zeros(*cols.shape, op.n, dtype=op.frac.dtype, device=cols.device)
    if bool(phi.any()):
        out[phi] = op.dense_columns(cols[phi])
    out[~phi, 0] = op.extra[:, cols[~phi, 0] - op.P].T  # extra columns: runs of one
    return out


def _block_preconditioner(op, wt, total, mean, diag, r, pen, keep):
    """z -> M^-1 z for M the normal matrix's diagonal blocks: the consecutive pieces of one
    feature (`_TrialPhi.blocks`), their centred Gram entries from per-piece sums (pieces k < l
    of one feature: a row's two entries are both 1 where its value lies beyond piece l, the
    fraction on l, so the entry is column l's sum), the penalty and the ridge; the columns in
    no block (the padding, the dense extra columns) by their diagonal, the held ones by 1."""
    index, real = op.blocks(CG_BLOCK)
    col_sum = op.rmatvec(wt)  # sum_i w_i phi_l(x_i): the Gram entry of pieces k < l
    G = index.shape[1]
    later = torch.maximum(index[:, :, None], index[:, None, :])
    gram = col_sum[later] - total * mean[index][:, :, None] * mean[index][:, None, :]
    eye = torch.eye(G, dtype=gram.dtype, device=gram.device)
    block = gram * (1.0 - eye) + torch.diag_embed(diag[index] + r)
    if pen is not None:
        full = F.pad(pen, (1, 1))  # full[k] = band_{k-1}, full[k + 1] = band_k
        block = block + torch.diag_embed(full[index] + full[index + 1])
        link = -full[index[:, :-1] + 1] * (index[:, 1:] == index[:, :-1] + 1)
        block = block + torch.diag_embed(link, 1) + torch.diag_embed(link, -1)
    inside = real & (keep[index] > 0)
    both = inside[:, :, None] & inside[:, None, :]
    block = torch.where(both, block, eye.expand_as(block))
    chol, info = torch.linalg.cholesky_ex(block)
    ok = info == 0  # a principal block of a positive definite matrix: always, but for rounding
    inverse = torch.cholesky_inverse(chol[ok])  # G x G each: applied by one batched product
    index_ok, inside_ok = index[ok], inside[ok]
    covered = index_ok[inside_ok]
    scale = diag + r  # the diagonal of the columns in no block
    if pen is not None:
        scale = scale + full[:-1] + full[1:]
    scale = torch.where(keep > 0, scale, torch.ones_like(scale))

    def apply(z):
        out = z / scale
        if len(covered):
            part = z[index_ok] * inside_ok
            solved = torch.bmm(inverse, part.unsqueeze(-1)).squeeze(-1)
            out[covered] = solved[inside_ok]
        return out * keep + (1.0 - keep) * z

    return apply


def _conjugate_gradients(normal, rhs, precondition, tol, max_iter):
    """Preconditioned conjugate gradients for ``normal(x) = rhs`` (a symmetric positive
    definite operator), from 0, to relative residual `tol` or `max_iter` iterations."""
    x = torch.zeros_like(rhs)
    size = float(rhs.norm())
    if size == 0.0 or not math.isfinite(size):
        return x if size == 0.0 else x + math.nan
    res = rhs.clone()
    z = precondition(res)
    p = z.clone()
    rz = res @ z
    for _ in range(max_iter):
        Ap = normal(p)
        curv = p @ Ap
        if not bool(curv > 0):
            break
        alpha = rz / curv
        x = x + alpha * p
        res = res - alpha * Ap
        if float(res.norm()) <= tol * size:
            break
        z = precondition(res)
        rz_next = res @ z
        p = z + (rz_next / rz) * p
        rz = rz_next
    return x


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
    (T, n; sample weights, None: unweighted) for a weighted least squares, `roughness` (T, P - 1;
    `difference_penalty`'s band) for PiLiD's ``smoothness`` term (a penalised least squares).
    `phi` may be a `CompactPhi` (a wide Phi, solved matrix-free by `ridge_solve_compact`).
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
    mean prediction over the rows of `phi` (T, n, P), or a `CompactPhi`, is taken out of the
    biases b, so the start still predicts the target's mean.
    """
    clamped = torch.where(sign != 0, sign * (sign * w).clamp_min(0.0), w)
    if isinstance(phi, CompactPhi):  # a wide Phi: its column means from compact Phi
        means = phi.column_means()[:, : w.shape[1]]
    else:
        means = phi.mean(1)
    shift = (means * (clamped - w)).sum(1, keepdim=True)  # (T, 1)
    n_real = mask.sum(1, keepdim=True).clamp_min(1.0)
    return clamped * mask, b - mask * shift / n_real
