"""Sphinx configuration of pilid's documentation site (``make docs``).

Sphinx + numpydoc + sphinx-gallery, as scikit-learn's site: the API reference comes from the
numpydoc docstrings (autodoc/autosummary), the gallery runs ``examples/`` at build time and keeps
their figures, and the build is offline (no intersphinx, nothing downloaded). ``make docs`` runs
``sphinx-build -W --keep-going``: every warning (an import error of autodoc, a broken reference,
a failing example, a public name missing from the API reference) fails the build.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

from numpydoc.xref import DEFAULT_LINKS

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the checkout's pilid, also without `pip install -e .`
sys.path.insert(0, str(DOCS / "_ext"))  # our directives: tables built from the code and the CSVs

# The gallery's examples train small models on the CPU; one BLAS thread each keeps them steady on
# a busy 2-core machine, and no example may look for a GPU.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("PYTHONWARNINGS", "ignore::FutureWarning")

project = "pilid"
author = "the pilid developers"
copyright = "the pilid developers, MIT licence"
release = importlib.import_module("pilid").__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "pilid_docs",  # docs/_ext: study-table (from results/studies/*.csv), hyperparameters
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "_ext", "auto_examples/*.ipynb", "auto_examples/*.py", "**.zip"]
# `name` in a docstring or page is code, as in scikit-learn's docs (no dangling references).
default_role = "literal"
pygments_style = "sphinx"

# -- API reference: autodoc + autosummary + numpydoc -------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc's Parameters give the types; signatures stay short
autodoc_inherit_docstrings = True
# numpydoc renders the Parameters/Attributes/Examples sections; its validation is off: a missing
# section is no error, while autodoc's import errors and broken references are.
numpydoc_show_class_members = False
numpydoc_validation_checks: set[str] = set()
# Types (``ndarray of shape (n_features_in_,)``) are read word by word, as scikit-learn does: a
# word other than these becomes a code reference (so a trailing underscore is no hyperlink), and
# numpydoc's own aliases, which point into Python's site (intersphinx), name themselves instead
# (offline, no dangling reference).
numpydoc_xref_param_type = True
numpydoc_xref_ignore = {"of", "or", "and", "shape", "default", "optional", "the", "a", "an"}
numpydoc_xref_aliases = {word: word for word in DEFAULT_LINKS}
numpydoc_attributes_as_param_list = True

# -- Markdown pages (REPRODUCTION.md, included) ------------------------------------------------
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

# -- The gallery: examples/ run at build time, their figures kept ------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",  # every example runs
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "min_reported_time": 0,
    "capture_repr": ("__repr__",),
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "default_thumb_file": None,
    "show_memory": False,
    "show_signature": False,
    "plot_gallery": "True",
}

# -- The explorer's page: examples/plot_9_explorer.py writes it here, the site's root gets it ---
EXPLORER_DIR = DOCS / "_build" / "explorer"
EXPLORER_DIR.mkdir(parents=True, exist_ok=True)  # html_extra_path must exist before the gallery
os.environ["PILID_EXPLORER_DIR"] = str(EXPLORER_DIR)
html_extra_path = [str(EXPLORER_DIR)]

# -- HTML ----------------------------------------------------------------------------------------
try:
    import pydata_sphinx_theme  # noqa: F401

    html_theme = "pydata_sphinx_theme"
    html_theme_options = {
        "navigation_with_keys": False,
        "show_toc_level": 2,
        "navbar_align": "left",
        "footer_start": ["copyright"],
        "footer_end": [],
    }
except ImportError:  # without the theme: Sphinx's own
    html_theme = "alabaster"
html_title = f"pilid {release}"
# the site's stylesheet: a wide generated table scrolls instead of being cut off at the page's
# edge, and a cell's "mean ± spread" stays on one line (docs/_static/pilid.css)
html_static_path = ["_static"]
html_css_files = ["pilid.css"]
html_show_sourcelink = False
html_copy_source = False

# -- Checks of our own ---------------------------------------------------------------------------
#: The modules whose public names (``__all__``) the API reference must list, each by its name.
PUBLIC_MODULES = (
    "pilid",
    "pilid.data",
    "pilid.experiments",
    "pilid.report",
    "pilid.errors",
    "pilid.estimators",
    "pilid.baselines",
    "pilid.export",
)


def public_names(module_name: str) -> list[str]:
    """The public names of ``module_name``: its ``__all__``, else its own classes and
    functions."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == module_name
        ]
    return [name for name in names if not name.startswith("__")]


def missing_from_api(api_text: str) -> list[str]:
    """Public names of `PUBLIC_MODULES` that ``api_text`` (the API page) does not list."""
    listed = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", api_text))
    return [
        f"{module}.{name}"
        for module in PUBLIC_MODULES
        for name in public_names(module)
        if name not in listed
    ]


def write_cli_help(out: Path) -> None:
    """``python -m pilid.report <command> --help`` of every command, for the API page (kept in
    step with the parser: written at each build)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    for command in ("", "tables", "figures", "reproduction", "artifacts"):
        args = [sys.executable, "-m", "pilid.report", *([command] if command else []), "--help"]
        text = subprocess.run(
            args, cwd=ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout
        (out / f"report-{command or 'main'}.txt").write_text(text, encoding="utf-8")


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out the members our classes inherit from scikit-learn or torch (``get_params``,
    ``set_score_request``, ...): their docstrings are theirs, with references into their sites."""
    module = getattr(obj, "__module__", None) or ""
    if not module and hasattr(obj, "fget"):  # a property
        module = getattr(obj.fget, "__module__", "") or ""
    if module.split(".")[0] in ("sklearn", "torch", "builtins"):
        return True
    return None


def _check_api(app) -> None:
    from sphinx.util import logging

    logger = logging.getLogger("pilid.docs")
    text = (DOCS / "api.rst").read_text(encoding="utf-8")
    for name in missing_from_api(text):
        logger.warning(f"public name {name} is not in docs/api.rst; add it there")


def setup(app):
    """Register the checks and write the CLI's help before the build reads the pages."""
    write_cli_help(DOCS / "api" / "generated")
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("builder-inited", _check_api)
