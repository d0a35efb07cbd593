"""Imports point one way: down the layers, never up, never in a cycle (CONTRIBUTING.md, "Layers").

Every import statement of pilid/ (and of the Hydra plugin) counts, those inside functions too,
and so does `importlib.import_module("pilid....")` with a literal name. `LAYERS` is the one list
of the layers; CONTRIBUTING.md's table shows it and is checked against it here.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Lowest first. A module may import modules of its own layer and of the layers above it in
#: this list; a package entry covers its sub-modules. `pilid` itself (pilid/__init__.py) is the
#: public facade: it imports nothing from pilid when imported (its names resolve on first use),
#: so every layer may import it (for `__version__`).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "pilid",
            "pilid.errors",
            "pilid.device",
            "pilid.tasks",
            "pilid.streams",
            "pilid.hyperparameters",
            "pilid.schema",
            "pilid.parallel",
            "pilid.atomic",
        ),
    ),
    ("data", ("pilid.data",)),
    ("nn", ("pilid.nn",)),
    ("train", ("pilid.train",)),
    ("models", ("pilid.models",)),
    ("inspection", ("pilid.inspection",)),
    ("estimators", ("pilid.estimators",)),
    ("baselines", ("pilid.baselines",)),
    ("export", ("pilid.export",)),
    (
        "experiments",
        ("pilid.experiments", "pilid.run", "hydra_plugins"),
    ),
    ("report", ("pilid.report",)),
)
PACKAGES = ("pilid", "hydra_plugins")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    """Index in `LAYERS` of the layer that holds `module` (the longest matching entry)."""
    best, length = None, -1
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            covers = module == entry or (entry != "pilid" and module.startswith(entry + "."))
            if covers and len(entry) > length:
                best, length = index, len(entry)
    if best is None:
        raise AssertionError(f"{module} is in no layer; add it to LAYERS and CONTRIBUTING.md")
    return best


def _target(name: str) -> str | None:
    """The module of ours that importing `name` loads (None for a third-party module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, module of ours) for every import in `path`, at any depth of the code."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        for name in names:
            target = _target(name)
            if target is not None and target != module:
                found.append((node.lineno, target))
    return found


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)
    names = [name for name, _ in LAYERS]
    assert len(set(names)) == len(names)


def test_no_import_points_up_a_layer():
    upward = []
    for module, imports in GRAPH.items():
        here = layer_of(module)
        for line, target in imports:
            if layer_of(target) > here:
                upward.append(
                    f"{MODULES[module].relative_to(ROOT)}:{line}: {module} ({LAYERS[here][0]}) "
                    f"imports {target} ({LAYERS[layer_of(target)][0]})"
                )
    assert not upward, "imports that point up a layer:\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_cycle_between_modules():
    graph = {module: {target for _, target in imports} for module, imports in GRAPH.items()}
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def test_the_engine_imports_nothing_of_the_estimators():
    """The torch blocks and the training engine (``pilid.nn``, ``pilid.train``) import nothing
    of the estimators or of what they build on (``pilid.models``, ``pilid.inspection``), eagerly
    or lazily."""
    above = ("pilid.models", "pilid.inspection", "pilid.estimators", "pilid.baselines")
    found = [
        f"{MODULES[module].relative_to(ROOT)}:{line}: {target}"
        for module, imports in GRAPH.items()
        if module.startswith(("pilid.nn", "pilid.train"))
        for line, target in imports
        if target.startswith(above)
    ]
    assert not found, "the engine imports the estimators' layers:\n" + "\n".join(found)
    assert any(m.startswith("pilid.train.") for m in GRAPH)  # the walk saw the engine


def test_the_checker_sees_lazy_imports_cycles_and_upward_imports(tmp_path):
    source = "def f():\n    from pilid.estimators.pilid import PiLiDRegressor\n"
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert imports_of("pilid.nn.probe", path) == [(2, "pilid.estimators.pilid")]
    assert layer_of("pilid.estimators.pilid") > layer_of("pilid.nn.mlp")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


#: The lazy facades: a package whose names resolve on first use (its ``_LAZY`` table), so that
#: importing it (or one of its modules) loads nothing else of pilid.
FACADES = ("pilid", "pilid.estimators", "pilid.baselines")


def _eager_pilid_imports(module: str) -> list[str]:
    """The pilid modules that `module`'s own top level imports (not those inside functions)."""
    tree = ast.parse(MODULES[module].read_text())
    eager = []
    for node in tree.body:  # module level only: the lazy import in __getattr__ runs on use
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] + [getattr(node, "module", "") or ""]
            eager += [name for name in names if name.split(".")[0] == "pilid"]
    return eager


@pytest.mark.parametrize("facade", FACADES)
def test_the_facades_import_nothing_from_pilid_when_imported(facade):
    assert not _eager_pilid_imports(facade)
    package = importlib.import_module(facade)
    assert set(package.__all__) - {"__version__"} == set(package._LAZY)
    for name, module in package._LAZY.items():
        assert _target(module) == module, f"{facade}.{name} points to a missing module {module}"
        assert getattr(package, name) is getattr(importlib.import_module(module), name)
        if facade != "pilid":  # the base facade names every layer's; a subpackage's stay at home
            assert layer_of(module) <= layer_of(facade), f"{facade}.{name} points up to {module}"
    with pytest.raises(AttributeError, match=f"module '{facade}' has no attribute 'Nope'"):
        _ = package.Nope


def test_the_facade_check_sees_an_eager_import(tmp_path, monkeypatch):
    path = tmp_path / "__init__.py"
    path.write_text('"""A facade."""\n\nfrom pilid.estimators.pilid import PiLiDRegressor\n')
    monkeypatch.setitem(MODULES, "pilid.probe", path)
    assert _eager_pilid_imports("pilid.probe") == ["pilid.estimators.pilid"]


def test_the_subpackages_keep_their_rooms():
    """The paper's estimators and the harness's baselines are each defined in their own package
    (the public facade's names included); `pilid.models` keeps the building blocks."""
    import pilid

    for facade in ("pilid.estimators", "pilid.baselines"):
        package = importlib.import_module(facade)
        classes = [name for name in package._LAZY if name != "categorical_mask"]
        assert all(getattr(package, n).__module__.startswith(facade + ".") for n in classes)
    for name in pilid._LAZY:
        if name.endswith(("Regressor", "Classifier", "RegressorCV", "ClassifierCV")):
            home = "pilid.baselines." if name.startswith("NIT") else "pilid.estimators."
            assert getattr(pilid, name).__module__.startswith(home), name


def test_contributing_shows_the_same_layers():
    """CONTRIBUTING.md's table (`| n | layer | modules | ... |`) lists LAYERS in order."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*(\w+)\s*\|([^|]*)\|", text, flags=re.M)
    shown = [(name, tuple(re.findall(r"`([\w.]+)`", modules))) for _, name, modules in rows]
    assert [int(n) for n, _, _ in rows] == list(range(len(LAYERS)))
    assert shown == [(name, entries) for name, entries in LAYERS]


@pytest.mark.parametrize("module", ["pilid.estimators.pilid", "pilid.train.batched"])
def test_known_edges_are_seen(module):
    """A sanity check that the walk finds the imports it must (the estimators train)."""
    targets = {target for _, target in GRAPH[module]}
    assert targets & {"pilid.estimators.neural", "pilid.nn.ensemble"}


#: The longest a module of the package may grow: past it, it holds more than one concept.
MAX_MODULE_LINES = 600
#: What names a study in the lab beside the package (product and lab apart).
STUDY_CITATION = re.compile(r"scripts/|studies/|lever_study|dev_suite\.py|issue [0-9]")


def test_no_module_of_the_package_is_over_600_lines():
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text().splitlines())
        for path in (ROOT / "pilid").rglob("*.py")
    }
    assert len(sizes) > 50  # the package was found
    assert {p: n for p, n in sizes.items() if n > MAX_MODULE_LINES} == {}


def test_the_library_cites_no_study():
    cited = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "pilid").rglob("*"))
        if path.suffix in (".py", ".md") and path.is_file()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if STUDY_CITATION.search(line)
    ]
    assert cited == []
