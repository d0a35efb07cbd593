"""The scripts of ``scripts/`` as modules, for the tests of the studies they run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load_script(name: str):
    """``scripts/<name>.py`` as a fresh module (its folder on the path: the scripts import one
    another, e.g. ``lever_study`` imports ``dev_suite``)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
