"""Docstrings: every public class, function and method of pilid/ has one (ruff's D1 rules, as
numpydoc's convention reads them), and every public estimator documents each of its
hyper-parameters and its fitted attributes in numpydoc sections (the API reference's source)."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

import pilid

ROOT = Path(__file__).resolve().parents[1]
ESTIMATORS = [
    name
    for name, module in pilid._LAZY.items()
    if module.startswith(("pilid.estimators", "pilid.baselines"))
]
BASELINES = {
    "pilid.baselines.gam": ("GAMRegressor", "GAMClassifier"),
    "pilid.baselines.ga2m": ("GA2MRegressor", "GA2MClassifier"),
    "pilid.baselines.ga": ("GARegressor", "GAClassifier"),
}


def _has_doc(node: ast.ClassDef | ast.FunctionDef) -> bool:
    """A docstring, or (a class) ``__doc__ = ...`` assigned in its body."""
    if ast.get_docstring(node) is not None:
        return True
    return isinstance(node, ast.ClassDef) and any(
        isinstance(item, ast.Assign)
        and any(getattr(t, "id", "") == "__doc__" for t in item.targets)
        for item in node.body
    )


def undocumented(path: Path) -> list[str]:
    """The public names of a module without a docstring: its classes and functions (those of
    ``__all__`` when it has one, else those without a leading underscore) and their methods
    (magic methods too, ``__init__`` aside: the class documents its parameters)."""
    tree = ast.parse(path.read_text())
    listed = None
    for node in tree.body:
        targets = getattr(node, "targets", [])
        if any(getattr(t, "id", "") == "__all__" for t in targets) and hasattr(node.value, "elts"):
            listed = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
    missing = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        public = node.name in listed if listed is not None else not node.name.startswith("_")
        if not public:
            continue
        if not _has_doc(node):
            missing.append(f"{node.name} (line {node.lineno})")
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                magic = item.name.startswith("__") and item.name.endswith("__")
                if item.name == "__init__" or (item.name.startswith("_") and not magic):
                    continue
                if not _has_doc(item):
                    missing.append(f"{node.name}.{item.name} (line {item.lineno})")
    return missing


def _modules() -> list[Path]:
    paths = [
        *sorted((ROOT / "pilid").rglob("*.py")),
        *sorted((ROOT / "hydra_plugins").rglob("*.py")),
    ]
    private = [
        p for p in paths if any(part.startswith("_") for part in p.relative_to(ROOT).parts[:-1])
    ]
    return [
        p
        for p in paths
        if p not in private
        and not (p.name.startswith("_") and p.stem not in ("__init__", "__main__"))
    ]


def test_every_public_name_has_a_docstring():
    missing = {str(p.relative_to(ROOT)): undocumented(p) for p in _modules()}
    missing = {path: names for path, names in missing.items() if names}
    assert not missing, f"public names without a docstring: {missing}"


def test_the_check_sees_a_missing_docstring(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        '__all__ = ["A", "f"]\n'
        'class A:\n    """Doc."""\n    def method(self):\n        pass\n'
        "    def __repr__(self):\n        return ''\n"
        "def f():\n    pass\n"
        "def g():\n    pass\n"  # not in __all__: private
        'class B:\n    __doc__ = "assigned"\n'
    )
    assert undocumented(probe) == ["A.method (line 4)", "A.__repr__ (line 6)", "f (line 8)"]


def _section(doc: str, title: str) -> list[str]:
    """The names a numpydoc section lists (``a, b : type`` -> a, b; ``\\`` continues a line)."""
    match = re.search(rf"^{title}\n-+\n(.*?)(?=^\w[\w ]*\n-+\n|\Z)", doc, flags=re.M | re.S)
    if match is None:
        return []
    body = match.group(1).replace("\\\n", "")
    names = []
    for line in body.splitlines():
        if line and not line[0].isspace():
            names += [n.strip().lstrip("*") for n in line.split(" : ")[0].split(",")]
    return names


def _estimator_classes():
    classes = [getattr(pilid, name) for name in ESTIMATORS]
    for module, names in BASELINES.items():
        classes += [getattr(importlib.import_module(module), name) for name in names]
    return classes


@pytest.mark.parametrize("cls", _estimator_classes(), ids=lambda c: c.__name__)
def test_every_hyper_parameter_and_fitted_attribute_section_is_documented(cls):
    doc = inspect.getdoc(cls)
    documented = set(_section(doc, "Parameters"))
    missing = set(cls._get_param_names()) - documented
    assert not missing, f"{cls.__name__}: hyper-parameters missing from Parameters: {missing}"
    assert not documented - set(cls._get_param_names()), "a documented parameter it does not take"
    attributes = _section(doc, "Attributes")
    assert attributes and all(a.endswith("_") for a in attributes), attributes
    if "Classifier" in cls.__name__:
        assert "classes_" in attributes


def test_the_docstring_examples_run():
    """The Examples of the estimators (tiny data, a few epochs) give what they show."""
    module = importlib.import_module("pilid.estimators.pilid")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
