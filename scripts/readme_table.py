"""The README's results table, generated from a committed CSV (never typed by hand).

The table is the paper's Table 3 rerun: per model of the paper (rows) and data set (columns), our
mean over the trials and, in brackets, the paper's, read from
``results/tables/paper_vs_ours.csv`` (which ``make tables`` builds from the committed records).
It stands in README.md between the marker comments `START` and `END`; this script rewrites what
lies between them and nothing else. ``--check`` writes nothing and fails, in one line, when the
README's block differs from what the CSV gives (``tests/test_readme_table.py`` checks the same).

    python scripts/readme_table.py           # rewrite the block in README.md
    python scripts/readme_table.py --check   # exit 1 if README.md's block is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from pilid.errors import PilidError

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "results" / "tables" / "paper_vs_ours.csv"
README = REPO / "README.md"
#: The experiment of ``paper_vs_ours.csv`` the table shows (Table 3: the paper's real data).
EXPERIMENT = "real_data"
START = "<!-- readme-table: start (python scripts/readme_table.py writes this block) -->"
END = "<!-- readme-table: end -->"


def block(frame: pd.DataFrame, experiment: str = EXPERIMENT) -> str:
    """The Markdown of the table (a caption line, then the table) for ``experiment``'s rows of
    ``paper_vs_ours.csv``: one row per model, one column per data set, both in the CSV's order;
    a cell is our mean to 4 decimals and the paper's (3, as printed) in brackets (-- where a cell is
    missing)."""
    rows = frame[frame["table"] == experiment]
    if rows.empty:
        raise PilidError(
            f"no rows of {experiment!r} in the CSV; run make tables to rebuild "
            "results/tables/paper_vs_ours.csv"
        )
    models = list(dict.fromkeys(rows["row"]))
    columns = list(dict.fromkeys(rows["column"]))
    cells = rows.set_index(["row", "column"])
    trials = sorted(set(rows["trials"].astype(int)))
    reduced = bool(rows["reduced"].astype(bool).any())
    count = f"{trials[0]}" if len(trials) == 1 else f"{trials[0]}-{trials[-1]}"
    caption = (
        f"*The paper's Table 3 rerun with the paper's protocol: our mean over {count} trials per "
        "cell and, in brackets, the paper's"
        + (" (some cells reduced: fewer trials than the paper's)" if reduced else "")
        + f"; from `{SOURCE.relative_to(REPO).as_posix()}`.*"
    )
    lines = [caption, "", "| | " + " | ".join(columns) + " |"]
    lines.append("|:---|" + "---:|" * len(columns))
    for model in models:
        shown = []
        for column in columns:
            if (model, column) not in cells.index:
                shown.append("--")
                continue
            cell = cells.loc[(model, column)]
            shown.append(f"{cell['ours_mean']:.4f} ({cell['paper_mean']:.3f})")
        lines.append(f"| {model} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def replace(text: str, new_block: str) -> str:
    """``text`` with what lies between `START` and `END` replaced by ``new_block`` (the
    markers and everything around them kept)."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise PilidError(
            f"README needs one {START} line followed by one {END} line; add them where the table "
            "goes"
        )
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{new_block}\n{END}{tail}"


def main(argv=None) -> int:
    """Rewrite README.md's block from the CSV, or with ``--check`` compare it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=SOURCE)
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    args = parser.parse_args(argv)
    for path in (args.csv, args.readme):
        if not path.is_file():
            parser.error(f"no file {path}")
    text = args.readme.read_text(encoding="utf-8")
    try:
        new = replace(text, block(pd.read_csv(args.csv)))
    except PilidError as error:
        parser.error(str(error))
    if args.check:
        if new != text:
            print(f"{args.readme}: the results table is stale; run python scripts/readme_table.py")
            return 1
        return 0
    if new != text:
        args.readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
