"""The table model of the report and its writers: a ``Table`` of ``Cell``s (mean ± std over
trials, marks, the paper's value beside ours) rendered as LaTeX (booktabs) and Markdown, and
``write_tables``, which writes every table and the paper-vs-ours comparison files.

Cells show ``mean \\pm std`` over trials (sample std, ddof=1) with 4 decimals; ``--`` when nothing
was run; a dagger and the trial count when fewer trials than configured were found (for an
experiment without a config, fewer than the cell with the most: `Table.short_note`). The best
value per column is bold (lowest MSE, highest AUC/R^2); ties are judged at the displayed
precision: every cell whose mean prints the same 4 decimals as the best is bold.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pilid.atomic import replacing, write_text
from pilid.report.labels import latex_escape, latex_label
from pilid.report.paper import PAPER_TABLES

DECIMALS = 4


@dataclass(frozen=True)
class Header:
    """A header or row label in both output formats."""

    latex: str
    md: str

    @classmethod
    def plain(cls, text) -> Header:
        """A header of plain text (escaped for LaTeX)."""
        return cls(latex_escape(str(text)), str(text))

    @classmethod
    def model(cls, label: str) -> Header:
        """A model's row label (LaTeX-safe)."""
        return cls(latex_label(label), label)


# -- cells ------------------------------------------------------------------------------------
@dataclass
class Cell:
    """One table cell: mean and std over trials, trial counts, and its marks."""

    mean: float = math.nan
    std: float = math.nan
    n: int = 0
    expected: int = 0
    bold: bool = False
    stars: str = ""
    paper_mean: float = math.nan
    paper_std: float = math.nan
    #: (paper table, paper row label, paper column, N or None) of the paper's cell, if any
    paper_key: tuple | None = None

    @classmethod
    def of(cls, values, expected: int, n: int | None = None) -> Cell:
        """Cell of per-trial ``values`` (``n``: the number of records behind them)."""
        values = np.asarray(values, dtype=float)
        values = values[np.isfinite(values)]
        count = len(values) if n is None else int(n)
        if len(values) == 0:
            return cls(n=0, expected=expected)
        std = float(values.std(ddof=1)) if len(values) > 1 else math.nan
        return cls(mean=float(values.mean()), std=std, n=count, expected=expected)

    @property
    def missing(self) -> bool:
        """No trial (or no finite mean)."""
        return self.n == 0 or not math.isfinite(self.mean)

    @property
    def short(self) -> bool:
        """Fewer trials than configured."""
        return not self.missing and self.n < self.expected

    @property
    def shown(self) -> float:
        """The mean as displayed (rounded to ``DECIMALS``): ties are judged on this."""
        return float(f"{self.mean:.{DECIMALS}f}")

    def _number(self, pm: str) -> str:
        text = f"{self.mean:.{DECIMALS}f}"
        if math.isfinite(self.std):
            text += f"{pm}{self.std:.{DECIMALS}f}"
        return text

    def latex(self) -> str:
        """The cell in LaTeX: mean ± std, bold, stars, a dagger and counts when short."""
        if self.missing:
            return "--"
        text = self._number(r" $\pm$ ")
        if self.bold:
            text = rf"\textbf{{{text}}}"
        marks = self.stars + (r"\dagger" if self.short else "")
        if marks:
            text += f"$^{{{marks}}}$"
        if self.short:
            text += f" ({self.n}/{self.expected})"
        return text

    def markdown(self) -> str:
        """The cell in Markdown, marked as in `latex`."""
        if self.missing:
            return "--"
        text = self._number(" ± ")
        if self.bold:
            text = f"**{text}**"
        text += self.stars.replace("*", r"\*")
        if self.short:
            text += f"† ({self.n}/{self.expected})"
        return text


def mark_best(cells: list[Cell], lower_is_better: bool) -> None:
    """Bold the best cell(s) among ``cells``: every cell whose displayed mean equals the best
    displayed mean (ties at 4 decimals are all bold). Missing cells never compete."""
    present = [c for c in cells if not c.missing]
    if not present:
        return
    shown = [c.shown for c in present]
    best = min(shown) if lower_is_better else max(shown)
    for cell, value in zip(present, shown):
        cell.bold = value == best


# -- tables -----------------------------------------------------------------------------------
@dataclass
class Table:
    """A rendered-ready table: headers, cells and the caption's parts."""

    name: str
    title_tex: str
    title_md: str
    corner: Header
    columns: list[Header]
    rows: list[Header]
    cells: list[list[Cell]]
    trials_note: str
    best_rule: str
    groups: list[tuple[Header, int]] = field(default_factory=list)
    paper_table: str | None = None
    stars: bool = False
    row_keys: list = field(default_factory=list)
    column_keys: list = field(default_factory=list)
    #: trials configured per setting (the experiment's ``trials``)
    trials: int = 0
    #: the records behind the cells (one row per trial; ``value`` is the cell's metric)
    records: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    #: what the dagger of a short cell means (None: fewer trials than configured)
    short_note: str | None = None

    def __post_init__(self) -> None:
        """Forget the paper table when no cell has a paper value (e.g. a smoke run)."""
        has_paper = any(math.isfinite(c.paper_mean) for row in self.cells for c in row)
        if not has_paper:  # e.g. a smoke run: no cell of the paper's table matches
            self.paper_table = None

    @property
    def n_columns(self) -> int:
        """Columns including the row labels."""
        return 1 + len(self.columns)

    def _any(self, predicate) -> bool:
        return any(predicate(c) for row in self.cells for c in row)

    def _notes(self, tex: bool) -> list[str]:
        pm = r"$\pm$" if tex else "±"
        notes = [f"Mean {pm} std over {self.trials_note}."]
        rule = self.best_rule.replace("R^2", "$R^2$" if tex else "R²")
        notes.append(f"{rule} in bold (ties at the {DECIMALS} decimals shown all bold).")
        if self.stars:
            star = r"$^{*}$, $^{**}$" if tex else r"\*, \*\*"
            percent = r"\%" if tex else "%"
            notes.append(
                f"{star}: paired t-test by trial seed significant at 10{percent}, 5{percent}."
            )
        if self._any(lambda c: c.short):
            dagger = r"$^\dagger$" if tex else "†"
            meaning = self.short_note or (
                "reduced run, fewer trials than configured (run/configured in brackets)"
            )
            notes.append(f"{dagger}: {meaning}.")
        if self._any(lambda c: c.missing):
            notes.append("--: not run yet.")
        if self.paper_table:
            notes.append(f"Paper: {PAPER_TABLES.get(self.paper_table, self.paper_table)}.")
        return notes

    def caption(self, tex: bool = True) -> str:
        """The title and the notes (LaTeX when ``tex``, else Markdown)."""
        title = self.title_tex if tex else self.title_md
        return " ".join([title, *self._notes(tex)])

    def to_latex(self) -> str:
        """The table as a LaTeX ``table`` environment (needs ``\\usepackage{booktabs}``)."""
        spec = "l" + "r" * len(self.columns)
        lines = [
            "% Generated by `python -m pilid.report tables`; edits are overwritten.",
            r"\begin{table}[htbp]",
            r"  \centering",
            rf"  \caption{{{self.caption(tex=True)}}}",
            rf"  \label{{tab:{file_stem(self.name)}}}",
            rf"  \begin{{tabular}}{{{spec}}}",
            r"    \toprule",
        ]
        if self.groups:
            heads = [rf"\multicolumn{{{span}}}{{c}}{{{h.latex}}}" for h, span in self.groups]
            lines.append("    " + " & ".join(["", *heads]) + r" \\")
            rules, start = [], 2
            for _, span in self.groups:
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
                start += span
            lines.append("    " + " ".join(rules))
        header = [self.corner.latex, *(h.latex for h in self.columns)]
        lines.append("    " + " & ".join(header) + r" \\")
        lines.append(r"    \midrule")
        for label, row in zip(self.rows, self.cells):
            lines.append("    " + " & ".join([label.latex, *(c.latex() for c in row)]) + r" \\")
        lines += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}", ""]
        return "\n".join(lines)

    def _md_columns(self) -> list[str]:
        if not self.groups:
            return [h.md for h in self.columns]
        names, position = [], 0
        for group, span in self.groups:
            for h in self.columns[position : position + span]:
                names.append(f"{group.md} {h.md}")
            position += span
        return names

    def to_markdown(self) -> str:
        """The table as GitHub Markdown, caption first."""
        lines = [f"**{self.caption(tex=False)}**", ""]
        lines.append("| " + " | ".join([self.corner.md, *self._md_columns()]) + " |")
        lines.append("|" + "|".join([":---", *["---:"] * len(self.columns)]) + "|")
        for label, row in zip(self.rows, self.cells):
            lines.append("| " + " | ".join([label.md, *(c.markdown() for c in row)]) + " |")
        return "\n".join(lines) + "\n"

    def comparison(self) -> pd.DataFrame:
        """Ours beside the paper, one row per cell with a paper value."""
        rows = []
        for r, row in enumerate(self.cells):
            for c, cell in enumerate(row):
                if not math.isfinite(cell.paper_mean):
                    continue
                rows.append(
                    {
                        "table": self.name,
                        "paper_table": self.paper_table,
                        "row": self.rows[r].md,
                        "column": self._md_columns()[c],
                        "ours_mean": cell.mean,
                        "ours_std": cell.std,
                        "trials": cell.n,
                        "expected": cell.expected,
                        "reduced": cell.short,
                        "paper_mean": cell.paper_mean,
                        "paper_std": cell.paper_std,
                        "difference": cell.mean - cell.paper_mean,
                    }
                )
        return pd.DataFrame(rows)

    def comparison_markdown(self) -> str:
        """Markdown view with every cell as ``ours (paper)`` (means only)."""
        reduced = self._any(lambda c: c.short and math.isfinite(c.paper_mean))
        note = " †: reduced run, fewer trials than configured." if reduced else ""
        lines = [f"**{self.title_md} Ours (paper), means.{note}**", ""]
        lines.append("| " + " | ".join([self.corner.md, *self._md_columns()]) + " |")
        lines.append("|" + "|".join([":---", *["---:"] * len(self.columns)]) + "|")
        for label, row in zip(self.rows, self.cells):
            texts = []
            for cell in row:
                ours = "--" if cell.missing else f"{cell.mean:.{DECIMALS}f}"
                if cell.short:
                    ours += f"† ({cell.n}/{cell.expected})"
                known = math.isfinite(cell.paper_mean)
                paper = f"{cell.paper_mean:.{DECIMALS}f}" if known else "--"
                texts.append(f"{ours} ({paper})")
            lines.append("| " + " | ".join([label.md, *texts]) + " |")
        return "\n".join(lines) + "\n"


#: The characters a table's file name keeps from its experiment's name; any other becomes ``_``.
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")


def file_stem(name: str) -> str:
    """The file name (without suffix) a table named `name` is written under, inside the report's
    folder whatever the name holds: a plain name (letters, digits, ``_ . + -``, not starting
    with a dot) is kept as it is; any other (a path such as ``../../x`` or ``/tmp/x``, a
    separator, a hidden name) has each other character replaced by ``_``, leading dots dropped,
    and the first 8 hex digits of the name's SHA-1 appended, so two names never share a file."""
    name = str(name)
    if name and not _UNSAFE.search(name) and not name.startswith("."):
        return name
    plain = _UNSAFE.sub("_", name).lstrip(".") or "table"
    return f"{plain}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def write_tables(tables: list[Table], out_dir: str | os.PathLike) -> list[Path]:
    """Write ``<name>.tex`` and ``<name>.md`` per table, ``tables.md`` (all Markdown),
    ``tables.tex`` (a standalone document inputting every table) and, where the paper has the
    table, ``paper_vs_ours.csv`` / ``paper_vs_ours.md``. Returns the written paths. Every
    file lies directly in `out_dir`: a table's file name is `file_stem` of its name (the
    records' experiment, which a records file from elsewhere may set to any text).

    Each file is replaced atomically (`pilid.atomic`): a report killed while it writes leaves
    every file whole, old or new."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:
        for suffix, text in ((".tex", table.to_latex()), (".md", table.to_markdown())):
            path = out / f"{file_stem(table.name)}{suffix}"
            write_text(path, text)
            written.append(path)
    index = out / "tables.md"
    write_text(index, "\n".join(t.to_markdown() for t in tables))
    document = out / "tables.tex"
    body = "\n".join(rf"\input{{{file_stem(t.name)}.tex}}" for t in tables)
    write_text(
        document,
        "% Standalone preview of every table: pdflatex tables.tex\n"
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage[margin=1cm,landscape]"
        "{geometry}\n\\begin{document}\n" + body + "\n\\end{document}\n",
    )
    written += [index, document]
    compared = [t for t in tables if t.paper_table]
    if compared:
        frames = [t.comparison() for t in compared]
        frames = [f for f in frames if not f.empty]
        csv = out / "paper_vs_ours.csv"
        with replacing(csv) as temporary:
            (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()).to_csv(
                temporary, index=False
            )
        md = out / "paper_vs_ours.md"
        write_text(md, "\n".join(t.comparison_markdown() for t in compared))
        written += [csv, md]
    return written
