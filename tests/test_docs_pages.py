"""The documentation reads for its reader and says what the code does: no page cites the
project's issue numbers, the table example loads its file as the harness does, and the README's
script leaves the committed figures alone unless asked."""

from __future__ import annotations

import ast
import re

import yaml
from _scripts import REPO, load_script  # tests/_scripts.py

#: A citation of the project's issue tracker ("issue 31", "issues 51 and 52", "Issue 31's").
ISSUE = re.compile(r"\bissues? \d+", re.IGNORECASE)


def test_no_page_cites_an_issue_number():
    pages = [*REPO.glob("docs/*.md"), *REPO.glob("docs/studies/*.md"), *REPO.glob("examples/*.py")]
    assert pages
    cited = {
        f"{p.relative_to(REPO)}:{n}": line.strip()
        for p in pages
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if ISSUE.search(line)
    }
    assert not cited, cited


def _keyword_calls(path, function):
    tree = ast.parse(path.read_text())
    return [
        {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function
    ]


def test_the_table_example_loads_its_file_with_the_harness_missing_rule():
    table = yaml.safe_load((REPO / "conf" / "data" / "table.yaml").read_text())
    calls = _keyword_calls(REPO / "examples" / "plot_5_table_data.py", "load_dataset")
    assert calls and all(call.get("missing") == table["missing"] for call in calls)


def test_the_readme_script_writes_to_a_new_folder_unless_told(tmp_path):
    script = load_script("scripts/readme_dataframe.py")
    default = script.output_dir([])
    committed = (REPO / "results" / "examples").resolve()
    assert default.is_dir() and not any(default.iterdir())
    assert committed not in (default.resolve(), *default.resolve().parents)
    assert script.output_dir(["--out", str(tmp_path / "x")]) == tmp_path / "x"
    assert (tmp_path / "x").is_dir()
