"""The repository's scripts (``benchmarks/``, ``scripts/``: tools, not modules of a package)
loaded by their path for the tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def load_script(path: str | Path, name: str | None = None) -> ModuleType:
    """The script at ``path`` (relative to the repository) as a fresh module named ``name``
    (default: the file's stem with ``_under_test``)."""
    path = REPO / path
    spec = importlib.util.spec_from_file_location(name or f"{path.stem}_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
