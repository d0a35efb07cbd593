"""The reduced run and what changed since: each claim's verdict on the simulation cells first
run at ``REDUCED_RUN_TRIALS`` trials (a reduced run, marked † n/20 until topped up), against
its verdict on today's records.

The reduced run is read back from the records, not remembered: trial k of a setting has seed
``seed + k`` whatever the trial count asked for, so the first ``REDUCED_RUN_TRIALS`` trials of a
topped-up cell are the trials the reduced run had. Every other cell (Tables 1-3, Table 2's runs,
and the MLP, linear and PiLiD-5 cells that claim (a) compares, all run at 20 trials from the
start) is taken as it is.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pilid.report.reproduction.claims import Claim, Part

#: Trials per cell of the reduced run (``REDUCED_TRIALS`` of the simulation's reproduction script).
REDUCED_RUN_TRIALS = 5
#: The reduced run's cells (the script's step 3): these baselines at these N in both simulation
#: experiments, and PiLiD at these gammas in the classification one.
REDUCED_RUN_N = (5000, 10000, 15000)
REDUCED_RUN_BASELINES = ("svm", "rf", "gam")
REDUCED_RUN_PILID_GAMMAS = (1, 10, 15, 20)
SIMULATION_EXPERIMENTS = ("sim_regression", "sim_classification")


def in_reduced_run(records: pd.DataFrame) -> np.ndarray:
    """Which ``records`` (normalised, `pilid.report.records.normalise_records`) belong to a cell
    of the reduced run (any trial)."""
    if records.empty:
        return np.zeros(0, dtype=bool)
    experiment = records["experiment"].astype(object)
    N = pd.to_numeric(records["N"], errors="coerce")
    simulation = experiment.isin(SIMULATION_EXPERIMENTS) & N.isin(REDUCED_RUN_N)
    baseline = records["model"].isin(REDUCED_RUN_BASELINES)
    gamma = pd.to_numeric(records["gamma"], errors="coerce")
    pilid = (
        (experiment == "sim_classification")
        & (records["model"] == "pilid")
        & gamma.isin(REDUCED_RUN_PILID_GAMMAS)
    )
    return (simulation & (baseline | pilid)).fillna(False).to_numpy(dtype=bool)


def topped_up(records: pd.DataFrame) -> np.ndarray:
    """Which ``records`` the reduced run did not have: trials from ``REDUCED_RUN_TRIALS`` on of
    its cells."""
    trial = pd.to_numeric(records["trial"], errors="coerce").to_numpy(dtype=float)
    return in_reduced_run(records) & (trial >= REDUCED_RUN_TRIALS)


def reduced_run_records(records: pd.DataFrame) -> pd.DataFrame:
    """``records`` as the reduced run had them (`topped_up` records left out)."""
    return records[~topped_up(records)]


def _counts(part: Part) -> str:
    return f"holds in {part.holds} of {len(part.units)}" if part.units else "not compared"


def _plain(verdict: str) -> str:
    return verdict.removesuffix(" — reduced run")


def changes_since_reduced_run(now: list[Claim], then: list[Claim]) -> dict[str, str]:
    """Claim key -> one sentence: what changed from ``then`` (the claims on
    `reduced_run_records`) to ``now``: the verdict and each part's count, or "unchanged"."""
    earlier = {claim.key: claim for claim in then}
    out = {}
    for claim in now:
        before = earlier.get(claim.key)
        if before is None:
            continue
        changed = [
            f"{part.title}: {_counts(old)} then, {_counts(part)} now"
            for part, old in zip(claim.parts, before.parts)
            if (part.holds, len(part.units), part.grade) != (old.holds, len(old.units), old.grade)
        ]
        verdict, old_verdict = _plain(claim.verdict()), _plain(before.verdict())
        if not changed and verdict == old_verdict:
            out[claim.key] = "unchanged (same verdict, same counts)."
            continue
        head = (
            f"the verdict was *{old_verdict}*, now *{verdict}*"
            if verdict != old_verdict
            else f"the same verdict (*{verdict}*)"
        )
        out[claim.key] = f"{head}; " + "; ".join(changed) + "." if changed else f"{head}."
    return out
