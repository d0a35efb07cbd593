"""The README's results table is generated (scripts/readme_table.py): README.md holds exactly what
the script writes from the committed CSV, a cell is the CSV's numbers, and the script rewrites
only the block between its markers."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _scripts import load_script  # tests/_scripts.py

from pilid.errors import PilidError

REPO = Path(__file__).resolve().parent.parent


def load_repository_script(name: str):
    """``scripts/<name>.py`` as a fresh module."""
    return load_script(f"scripts/{name}.py", name)


def _frame() -> pd.DataFrame:
    rows = [
        ("real_data", "B", "bike (MSE)", 0.12344, 0.2, 20, False),
        ("real_data", "A", "bike (MSE)", 0.5, 0.4567, 20, False),
        ("real_data", "A", "skill (AUC)", 0.87, 0.877, 20, False),
        ("other", "A", "bike (MSE)", 9.0, 9.0, 3, True),
    ]
    columns = ["table", "row", "column", "ours_mean", "paper_mean", "trials", "reduced"]
    return pd.DataFrame(rows, columns=columns)


def test_the_readme_block_is_what_the_script_writes_from_the_committed_csv():
    script = load_repository_script("readme_table")
    text = (REPO / "README.md").read_text(encoding="utf-8")
    expected = script.replace(text, script.block(pd.read_csv(script.SOURCE)))
    assert text == expected, "README's table is stale; run python scripts/readme_table.py"


def test_cells_are_the_csvs_means_in_its_row_and_column_order():
    script = load_repository_script("readme_table")
    lines = script.block(_frame()).splitlines()
    assert "our mean over 20 trials" in lines[0] and "reduced" not in lines[0]
    assert lines[2] == "| | bike (MSE) | skill (AUC) |"
    assert lines[3] == "|:---|---:|---:|"
    # rows in the CSV's order (B first), our mean to 4 decimals, the paper's to 3; a cell the
    # CSV lacks is --; the other experiment's rows stay out
    assert lines[4:] == ["| B | 0.1234 (0.200) | -- |", "| A | 0.5000 (0.457) | 0.8700 (0.877) |"]


def test_a_reduced_cell_is_named_in_the_caption():
    script = load_repository_script("readme_table")
    caption = script.block(_frame(), experiment="other").splitlines()[0]
    assert "over 3 trials" in caption and "some cells reduced" in caption


def test_only_the_block_between_the_markers_is_rewritten():
    script = load_repository_script("readme_table")
    text = f"intro\n{script.START}\nold table\n{script.END}\nrest\n"
    assert script.replace(text, "new") == f"intro\n{script.START}\nnew\n{script.END}\nrest\n"


@pytest.mark.parametrize(
    "text",
    ["no markers\n", "<!-- readme-table: end -->\n<!-- readme-table: start (python"],
    ids=["none", "swapped"],
)
def test_missing_or_misplaced_markers_are_one_line(text):
    script = load_repository_script("readme_table")
    text = text.replace("<!-- readme-table: start (python", script.START)
    with pytest.raises(PilidError, match="README needs one .* line followed by one .* line") as e:
        script.replace(text, "x")
    assert "\n" not in str(e.value)


def test_an_experiment_without_rows_is_one_line():
    script = load_repository_script("readme_table")
    with pytest.raises(PilidError, match="no rows of 'nosuch' in the CSV; run make tables"):
        script.block(_frame(), experiment="nosuch")


def test_check_fails_on_a_stale_readme_and_writing_fixes_it(tmp_path, capsys):
    script = load_repository_script("readme_table")
    csv = tmp_path / "t.csv"
    _frame().to_csv(csv, index=False)
    readme = tmp_path / "README.md"
    readme.write_text(f"top\n{script.START}\nstale\n{script.END}\n", encoding="utf-8")
    args = ["--csv", str(csv), "--readme", str(readme)]
    assert script.main([*args, "--check"]) == 1
    assert "the results table is stale" in capsys.readouterr().out
    assert script.main(args) == 0
    assert script.main([*args, "--check"]) == 0
    assert "| B | 0.1234 (0.200) | -- |" in readme.read_text(encoding="utf-8")
