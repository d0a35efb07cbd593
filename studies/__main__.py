"""``python -m studies <study> [args...]``: run one study, or list them all.

Without a study (or with ``-h`` / ``--help``) it prints every study of this folder with the first
line of its docstring; with one it hands the remaining arguments to that study's
``main(argv)``. An unknown study stops with one line naming it and the studies there are.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROG = "python -m studies"


def studies() -> dict[str, str]:
    """Every study of this folder (a module whose name does not start with ``_``) and the first
    line of its docstring, read from the source without importing it (a study imports torch)."""
    found = {}
    for module in sorted(pkgutil.iter_modules([str(HERE)]), key=lambda m: m.name):
        if not module.name.startswith("_"):
            tree = ast.parse((HERE / f"{module.name}.py").read_text(encoding="utf-8"))
            found[module.name] = ((ast.get_docstring(tree) or "").splitlines() or [""])[0]
    return found


def listing() -> str:
    """The text ``python -m studies`` prints: how to call it, then one line per study."""
    known = studies()
    width = max(map(len, known))
    lines = [f"usage: {PROG} <study> [args...]   ({PROG} <study> --help: the study's own)", ""]
    lines += [f"  {name:<{width}}  {doc}" for name, doc in known.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """List the studies, or run ``argv[0]`` with ``argv[1:]``; the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(listing())
        return 0
    name, rest = argv[0], argv[1:]
    known = studies()
    if name not in known:
        print(
            f"{PROG}: error: no study {name!r}; run one of {', '.join(known)} "
            f"(`{PROG}` lists them)",
            file=sys.stderr,
        )
        return 2
    sys.argv = [f"{PROG} {name}", *rest]  # the study's argparse names itself by sys.argv[0]
    code = importlib.import_module(f"studies.{name}").main(rest)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
