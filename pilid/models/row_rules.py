"""Hyper-parameters given as rules of the training rows n (beyond the paper).

``lam="rows"`` and ``smoothness="rows"`` make a penalty's weight a fixed prior against the summed
loss rather than the mean one: the training loss of Eq. 11 is a mean over the n rows, so a weight
c / n on it is the weight c on the sum, and the prior counts for less as the rows grow.
``lam="rows_steep"`` is ``"rows"`` up to `LAM_KNEE_ROWS` rows and falls as 1 / n^2 beyond: on
many rows the MLP is held back less, so that it can carry the interactions a large table shows.
``gamma="auto"``, the same kind of rule for the pieces, is `pilid.nn.piecewise.auto_gamma`.
The constants were chosen on the development suite of R's tables (`pilid.data.suite`; the
documentation's study pages), never on a UCI set of the paper.
"""

from __future__ import annotations

#: lam = LAM_PER_ROWS / n (1e-3 at 5,000 rows), clipped to `LAM_RANGE`.
LAM_PER_ROWS = 5.0
LAM_RANGE = (1e-6, 1e-2)
#: ``lam="rows_steep"``: lam = LAM_PER_ROWS / n up to this many rows, LAM_PER_ROWS / n * knee / n
#: beyond (clipped to `LAM_RANGE` as well).
LAM_KNEE_ROWS = 5_000
#: smoothness = SMOOTHNESS_PER_ROWS / n (0.1 at 5,000 rows), clipped to `SMOOTHNESS_RANGE`.
SMOOTHNESS_PER_ROWS = 500.0
SMOOTHNESS_RANGE = (1e-3, 10.0)
#: The value that asks for a rule of the rows.
ROWS = "rows"
#: The value that asks for the rule of the rows that falls faster beyond `LAM_KNEE_ROWS` (lam only).
ROWS_STEEP = "rows_steep"
#: The rules of the rows ``lam`` takes.
LAM_RULES = (ROWS, ROWS_STEEP)


def per_rows(c: float, n_rows: int, low: float, high: float) -> float:
    """c / n_rows clipped to [low, high]."""
    return float(min(max(c / n_rows, low), high))


def rows_lam(n_rows: int) -> float:
    """The MLP's (Eq. 11's) penalty weight of ``lam="rows"``: 5 / n in [1e-6, 1e-2]."""
    return per_rows(LAM_PER_ROWS, n_rows, *LAM_RANGE)


def rows_steep_lam(n_rows: int) -> float:
    """The MLP's (Eq. 11's) penalty weight of ``lam="rows_steep"``: 5 / n up to `LAM_KNEE_ROWS`
    rows and 5 / n * knee / n beyond, in [1e-6, 1e-2]."""
    return per_rows(LAM_PER_ROWS * min(1.0, LAM_KNEE_ROWS / n_rows), n_rows, *LAM_RANGE)


def rows_smoothness(n_rows: int) -> float:
    """The shapes' roughness weight of ``smoothness="rows"``: 500 / n in [1e-3, 10]."""
    return per_rows(SMOOTHNESS_PER_ROWS, n_rows, *SMOOTHNESS_RANGE)


def resolve_lam(lam, n_rows: int) -> float:
    """`lam` with ``"rows"`` replaced by `rows_lam(n_rows)` and ``"rows_steep"`` by
    `rows_steep_lam(n_rows)`, as a float."""
    if lam == ROWS:
        return rows_lam(n_rows)
    return rows_steep_lam(n_rows) if lam == ROWS_STEEP else float(lam)


def resolve_smoothness(smoothness, n_rows: int) -> float:
    """`smoothness` with ``"rows"`` replaced by `rows_smoothness(n_rows)`, as a float (not for
    ``"auto"``, which `pilid.models.shape_choice` resolves per candidate)."""
    return rows_smoothness(n_rows) if smoothness == ROWS else float(smoothness)
