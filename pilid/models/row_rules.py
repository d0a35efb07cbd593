"""Hyper-parameters given as rules of the training rows n (beyond the paper).

``lam="rows"`` and ``smoothness="rows"`` make a penalty's weight a fixed prior against the summed
loss rather than the mean one: the training loss of Eq. 11 is a mean over the n rows, so a weight
c / n on it is the weight c on the sum, and the prior counts for less as the rows grow.
``gamma="auto"``, the same kind of rule for the pieces, is `pilid.nn.piecewise.auto_gamma`.
The constants were chosen on the development suite of R's tables (`pilid.data.suite`; the
documentation's study pages), never on a UCI set of the paper.
"""

from __future__ import annotations

#: lam = LAM_PER_ROWS / n (1e-3 at 5,000 rows), clipped to `LAM_RANGE`.
LAM_PER_ROWS = 5.0
LAM_RANGE = (1e-6, 1e-2)
#: smoothness = SMOOTHNESS_PER_ROWS / n (0.1 at 5,000 rows), clipped to `SMOOTHNESS_RANGE`.
SMOOTHNESS_PER_ROWS = 500.0
SMOOTHNESS_RANGE = (1e-3, 10.0)
#: The value that asks for a rule of the rows.
ROWS = "rows"


def per_rows(c: float, n_rows: int, low: float, high: float) -> float:
    """c / n_rows clipped to [low, high]."""
    return float(min(max(c / n_rows, low), high))


def rows_lam(n_rows: int) -> float:
    """The MLP's (Eq. 11's) penalty weight of ``lam="rows"``: 5 / n in [1e-6, 1e-2]."""
    return per_rows(LAM_PER_ROWS, n_rows, *LAM_RANGE)


def rows_smoothness(n_rows: int) -> float:
    """The shapes' roughness weight of ``smoothness="rows"``: 500 / n in [1e-3, 10]."""
    return per_rows(SMOOTHNESS_PER_ROWS, n_rows, *SMOOTHNESS_RANGE)


def resolve_lam(lam, n_rows: int) -> float:
    """`lam` with ``"rows"`` replaced by `rows_lam(n_rows)`, as a float."""
    return rows_lam(n_rows) if lam == ROWS else float(lam)


def resolve_smoothness(smoothness, n_rows: int) -> float:
    """`smoothness` with ``"rows"`` replaced by `rows_smoothness(n_rows)`, as a float (not for
    ``"auto"``, which `pilid.models.shape_choice` resolves per candidate)."""
    return rows_smoothness(n_rows) if smoothness == ROWS else float(smoothness)
