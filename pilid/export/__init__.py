"""Deploying a fitted PiLiD or PiLiB outside this package.

- :func:`to_onnx` writes one ONNX graph whose outputs equal the estimator's ``predict``,
  ``predict_proba`` and ``decision_function`` (the ``onnx`` extra: ``pip install -e ".[onnx]"``);
  :func:`onnx_inputs` makes its inputs of a DataFrame, :func:`parity` measures how far its
  outputs are from the estimator's.
- :func:`to_table` writes the additive part (Definition 1's piecewise-linear shapes, the
  missing-value contributions and the pair grids) as one JSON file (and one CSV per feature,
  `pilid.export.spreadsheets`), and :func:`score_table` evaluates such a table with NumPy
  alone; without an MLP the table is the whole model, pair terms included.

Each is imported on first use, so ``import pilid.export`` needs neither torch's ONNX exporter nor
ONNX Runtime.
"""

from __future__ import annotations

import importlib

_HOMES = {
    "to_onnx": "pilid.export.onnx",
    "onnx_inputs": "pilid.export.onnx",
    "parity": "pilid.export.onnx",
    "to_table": "pilid.export.table",
    "score_table": "pilid.export.table",
    "read_table": "pilid.export.table",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'pilid.export' has no attribute {name!r}")
