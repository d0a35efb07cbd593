"""A table of `pilid.export.table` as spreadsheets: one CSV per feature and the intercept's."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["write_csv"]


def write_csv(table: dict, folder) -> list[Path]:
    """One CSV per feature of `table` (``<position>_<name>.csv``: its knots or levels and
    values, then a ``(missing)`` row and, for a categorical feature, an ``(unseen)`` row) and
    ``intercept.csv`` into `folder` (made if needed); returns the files written.

    Parameters
    ----------
    table : dict
        A table from `to_table`.
    folder : str or Path
        Where the files go.

    Returns
    -------
    list of Path
        The files, ``intercept.csv`` first.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    outputs = table["outputs"]
    heads = ["value"] if len(outputs) == 1 else [f"value ({o})" for o in outputs]

    def rows(values) -> np.ndarray:
        return np.asarray(values, dtype=np.float64).reshape(-1, len(heads))

    intercept = pd.DataFrame(rows([table["intercept"]]), columns=heads)
    written = [folder / "intercept.csv"]
    intercept.to_csv(written[0], index=False)
    for j, feature in enumerate(table["features"]):
        numeric = feature["kind"] == "numeric"
        first = "x" if numeric else "level"
        labels = list(feature["knots"] if numeric else feature["levels"]) + ["(missing)"]
        values = [feature["values"], [feature["missing"]]]
        if not numeric:
            labels.append("(unseen)")
            values.append([feature["unseen"]])
        frame = pd.DataFrame(np.vstack([rows(v) for v in values]), columns=heads)
        frame.insert(0, first, pd.Series(labels, dtype=object))
        safe = re.sub(r"[^\w.-]+", "_", str(feature["name"])).strip("_") or "feature"
        path = folder / f"{j:02d}_{safe}.csv"
        frame.to_csv(path, index=False)
        written.append(path)
    return written
