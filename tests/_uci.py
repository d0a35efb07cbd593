"""The UCI files of the paper for the tests that need them (``@pytest.mark.uci``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def uci_dir() -> Path:
    """``$PILID_DATA_DIR`` when it holds the UCI files (skill's among them); else the test is
    skipped with the line that says how to run it."""
    root = os.environ.get("PILID_DATA_DIR")
    if not root or not (Path(root).expanduser() / "skillcraft").is_dir():
        pytest.skip("set PILID_DATA_DIR to the UCI files (../shared/data/uci) for data=skill")
    return Path(root).expanduser()
