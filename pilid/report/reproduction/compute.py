"""Compute accounting from the records: the fit time summed over trials, the wall time the runs
took with pauses left out, when they finished, and on which device, layout and torch build.

Everything is read from the records' ``fit_seconds``, ``finished_at``, ``layout``, ``device``
and ``versions`` (`pilid.report.records.PASSTHROUGH_FIELDS`); the Markdown is
`pilid.report.reproduction.sections.compute_section`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

#: Gaps between a table's fit intervals shorter than this count as work (data generation,
#: process start-up between blocks); longer ones as a pause between runs.
BRIDGE_SECONDS = 120.0


def duration(seconds: float) -> str:
    """``45 s``, ``12.5 min`` or ``3.2 h`` as the dry run writes them
    (``pilid.experiments.planning.format_duration``); ``--`` for NaN or infinity."""
    from pilid.experiments.planning import format_duration

    return format_duration(seconds) if math.isfinite(seconds) else "--"


def _layout_text(layout) -> str:
    """A record's ``layout`` in words (``blocks of 10 trials, 2 process(es) x 1 thread``)."""
    if not isinstance(layout, dict):
        return "?"
    processes = layout.get("processes") or 1
    threads = layout.get("threads")
    threads = f"{threads} thread{'s' if threads != 1 else ''}" if threads else "default threads"
    if layout.get("mode") == "block":
        return f"blocks of {layout.get('block_size')} trials, {processes} process(es) x {threads}"
    return f"one trial at a time, {processes} process(es)"


def _trials_in_block(layout) -> int:
    """How many trials shared a record's block (its ``fit_seconds`` is the block's wall time
    divided among them); 1 for a trial fitted alone."""
    if not isinstance(layout, dict) or layout.get("mode") != "block":
        return 1
    block = layout.get("block")
    if isinstance(block, list | tuple) and len(block) == 2:
        return max(int(block[1]) - int(block[0]), 1)
    return int(layout.get("block_size") or 1)


def active_wall_seconds(records: pd.DataFrame, bridge: float = BRIDGE_SECONDS) -> float:
    """Wall time the records took, pauses left out: the union of their fit intervals
    ``[finished_at - block wall time, finished_at]`` (block wall time = ``fit_seconds`` x the
    trials of the block), with gaps shorter than ``bridge`` seconds counted in."""
    if records is None or records.empty or "finished_at" not in records:
        return math.nan
    end = pd.to_datetime(records["finished_at"], errors="coerce", utc=True)
    fit = (
        pd.to_numeric(records["fit_seconds"], errors="coerce").fillna(0.0)
        if "fit_seconds" in records
        else pd.Series(0.0, index=records.index)
    )
    layouts = records["layout"] if "layout" in records else pd.Series(None, index=records.index)
    wall = fit * layouts.map(_trials_in_block).astype(float)
    keep = end.notna().to_numpy()
    if not keep.any():
        return math.nan
    stop = (end[keep] - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(dtype=float)
    start = stop - wall[keep].to_numpy(dtype=float)
    order = np.argsort(start, kind="stable")
    start, stop = start[order], stop[order]
    reach = np.maximum.accumulate(stop)  # the latest end of any interval started so far
    first = np.flatnonzero(np.concatenate([[True], start[1:] > reach[:-1] + bridge]))
    last = np.append(first[1:] - 1, len(start) - 1)  # each run: sorted by start, so it spans
    return float((reach[last] - start[first]).sum())  # its first start to its latest end


def compute_summary(records: pd.DataFrame) -> dict:
    """Trials, summed fit time, first/last finish time, devices, layouts and torch builds of
    ``records`` (the records behind a table)."""
    if records is None or records.empty:
        return {"trials": 0}
    fit = (
        pd.to_numeric(records.get("fit_seconds"), errors="coerce")
        if "fit_seconds" in records
        else None
    )
    finished = (
        pd.to_datetime(records["finished_at"], errors="coerce", utc=True)
        if "finished_at" in records
        else pd.Series(dtype="datetime64[ns, UTC]")
    )
    finished = finished.dropna()
    versions = records["versions"] if "versions" in records else pd.Series(dtype=object)
    torch = sorted(
        {str(v.get("torch")) for v in versions if isinstance(v, dict) and v.get("torch")}
    )
    devices = sorted({str(d) for d in records.get("device", pd.Series(dtype=object)).dropna()})
    layouts = records["layout"] if "layout" in records else pd.Series(dtype=object)
    return {
        "trials": len(records),
        "fit_seconds": float(fit.sum()) if fit is not None and fit.notna().any() else math.nan,
        "active_seconds": active_wall_seconds(records),
        "first": finished.min() if len(finished) else None,
        "last": finished.max() if len(finished) else None,
        "devices": devices,
        "layouts": sorted({_layout_text(layout) for layout in layouts}),
        "torch": torch,
    }


def time_text(stamp) -> str:
    """``2026-01-01 12:00 UTC`` (``--`` for None)."""
    return "--" if stamp is None else stamp.strftime("%Y-%m-%d %H:%M UTC")
