"""The paper's reported numbers (Guo et al., IJCAI 2020, Tables 1-3 and the supplementary
tables), one row per cell, for putting them beside ours.

Columns: ``table`` (the LaTeX label in the paper's source), ``task``, ``metric``, ``N``, ``column``
(``m=<features>``, a data set, or ``gamma=<g>``), ``model`` (the paper's row label; the paper's
classification tables call PiLiD "PiWiLiD"), ``mean``, ``std`` (empty in Table 2, which reports
means only), ``note`` (``bold``: best in the paper; ``*``/``**``: significant at 10%/5% in Table 2).
Transcribed from the paper's LaTeX source into ``paper_results.csv`` beside this module.
"""

from __future__ import annotations

import io
from functools import lru_cache
from importlib import resources

import pandas as pd

#: Where each paper table sits in the paper (the labels are those of the LaTeX source).
PAPER_TABLES = {
    "tab-n20000": "Table 1",
    "tab-initial": "Table 2",
    "tab-predictive": "Table 3",
    "tab-n5000": "supplementary table (N=5000)",
    "tab-n10000": "supplementary table (N=10000)",
    "tab-15000": "supplementary table (N=15000)",
    "tab-cla5000": "supplementary table (classification, N=5000)",
    "tab-cla10000": "supplementary table (classification, N=10000)",
    "tab-clas15000": "supplementary table (classification, N=15000)",
}


#: The package data file that holds the cells (shipped with the package, see pyproject.toml).
PAPER_CSV = "paper_results.csv"


@lru_cache(maxsize=1)
def _frame() -> pd.DataFrame:
    text = resources.files("pilid.report").joinpath(PAPER_CSV).read_text(encoding="utf-8")
    return pd.read_csv(io.StringIO(text), dtype={"note": "str"})


def paper_results() -> pd.DataFrame:
    """Every cell of the paper's result tables as a DataFrame (a fresh copy)."""
    return _frame().copy()
