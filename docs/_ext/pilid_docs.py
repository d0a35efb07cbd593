"""Sphinx directives of pilid's documentation: tables built from the code and the data at build
time, so that no number on a page is typed twice.

``study-table``: a table of a committed study CSV (``results/studies/``), computed by
`study_tables` with the study script's own functions::

    ```{study-table} results/studies/dev_suite.csv
    :view: suite-summary
    :caption: PiLiD, EBM and LightGBM per table, five splits
    ```

Views and their options: ``pivot`` (``:index:``, ``:columns:``, ``:values:``, ``:aggregate:``,
``:query:``, ``:size:``, ``:digits:``), ``suite-summary``, ``suite-criterion``, ``suite-verdict``,
``suite-shares``,
``drift`` and ``drift-verdict`` (``:against:`` a rerun, ``:names:`` ``first; second``),
``lever-variants``, ``lever-knobs`` (the levers of ``studies._levers.LEVERS`` and the variants
that set them), ``lever-counts``, ``lever-ranks``, ``lever-means``, ``defaults-change``
(``:suite:`` the peers' CSV; ``:splits:``, ``:variants:``), ``lever-seed`` (``:splits:``,
``:variants:``, ``:baseline:`` a variant and its refit with the seed + 1000 instead of the
baseline defaults, ``lever_study.BASELINE_VARIANT``). A lever view takes ``:with:`` another
lever CSV and ``:with-variants:`` the variants whose rows it adds (the defaults' fits committed
with another study), and ``:tables:`` the tables to show (a lever measured on some tables only).
A suite view's ``:defaults-then:`` reads PiLiD's rows as the defaults before
``deep_input="auto"`` (``dev_suite.as_fitted_before_auto``): what a candidate was measured
against.

``hyperparameters``: one row per constructor parameter of an estimator, its default read from
the signature and the paper's value from ``PAPER_PROTOCOL`` and the paper's config
(`parameter_table`), beside the page's words (``name | when to change it`` lines). A parameter
without a line, or a line for no parameter, is a warning (``make docs`` fails on it)::

    ```{hyperparameters} pilid.PiLiDRegressor
    :config: pilid
    :same-as: pilid.PiLiDClassifier

    gamma | More pieces follow sharper bends ...
    ```
"""

from __future__ import annotations

import parameter_table
import study_tables
from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.util import logging

logger = logging.getLogger("pilid.docs")


def table_node(header: list[str], rows: list[list], caption: str = "", inline=None) -> nodes.table:
    """A docutils table: ``header`` and ``rows`` (cells: text, `study_tables.Bold` text, or
    a list of nodes); ``caption`` its title."""
    table = nodes.table(classes=["pilid-generated"])
    if caption:
        table += nodes.title(text=caption)
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    line = nodes.row()
    for label in header:
        line += nodes.entry("", nodes.paragraph(text=str(label)))
    head += line
    body = nodes.tbody()
    group += body
    for cells in rows:
        line = nodes.row()
        for cell in cells:
            paragraph = nodes.paragraph()
            if isinstance(cell, list):
                paragraph.extend(cell)
            elif isinstance(cell, study_tables.Bold):
                paragraph += nodes.strong(text=str(cell))
            else:
                paragraph += nodes.Text(str(cell))
            line += nodes.entry("", paragraph)
        body += line
    return table


class StudyTable(Directive):
    """``study-table``: a table computed from a committed CSV when the site is built."""

    required_arguments = 1
    has_content = False
    option_spec = {
        "view": directives.unchanged,
        "caption": directives.unchanged,
        "against": directives.unchanged,
        "suite": directives.unchanged,
        "with": directives.unchanged,
        "with-variants": directives.unchanged,
        "also": directives.unchanged,
        "base": directives.unchanged,
        "defaults-then": directives.flag,
        "models": directives.unchanged,
        "names": directives.unchanged,
        "splits": directives.unchanged,
        "variants": directives.unchanged,
        "tables": directives.unchanged,
        "baseline": directives.unchanged,
        "index": directives.unchanged,
        "columns": directives.unchanged,
        "values": directives.unchanged,
        "aggregate": directives.unchanged,
        "query": directives.unchanged,
        "size": directives.unchanged,
        "digits": directives.nonnegative_int,
    }

    def run(self):
        """Compute the table of the CSV of the argument; a bad option or CSV is a warning."""
        path = self.arguments[0]
        env = self.state.document.settings.env
        for key in ("", "against", "suite", "with", "also"):
            csvs = path if not key else self.options.get(key)
            for csv in study_tables._list(csvs) if key == "also" else [csvs] if csvs else []:
                env.note_dependency(str(study_tables.ROOT / csv))
        options = {k: v for k, v in self.options.items() if k not in ("view", "caption")}
        try:
            table = study_tables.build(self.options.get("view", "pivot"), path, options)
        except (ValueError, KeyError) as error:
            logger.warning(f"study-table {path}: {error}", location=(env.docname, self.lineno))
            return []
        out = [table_node(table.header, table.rows, self.options.get("caption", ""))]
        if table.note:
            out.append(nodes.paragraph(text=table.note))
        return out


class Hyperparameters(Directive):
    """``hyperparameters``: an estimator's constructor parameters, their defaults (from the
    signature), the paper's values and when to change them (the directive's content)."""

    required_arguments = 1
    has_content = True
    option_spec = {"config": directives.unchanged, "same-as": directives.unchanged}

    def run(self):
        """One row per parameter; a parameter without words, or words for no parameter, and a
        ``same-as`` estimator whose parameters differ, are warnings."""
        env = self.state.document.settings.env
        where = (env.docname, self.lineno)
        cls = parameter_table.estimator(self.arguments[0])
        try:
            words = parameter_table.parse_words(list(self.content))
        except ValueError as error:
            logger.warning(f"hyperparameters {self.arguments[0]}: {error}", location=where)
            return []
        config = self.options.get("config", "pilid")
        env.note_dependency(str(parameter_table.ROOT / "conf" / "model" / f"{config}.yaml"))
        rows, problems = parameter_table.rows(cls, config, words)
        if self.options.get("same-as"):
            other = parameter_table.estimator(self.options["same-as"])
            differ = parameter_table.differences(cls, other)
            if differ:
                problems.append(
                    f"{other.__name__} differs from {cls.__name__} in {', '.join(differ)}"
                )
        for problem in problems:
            logger.warning(f"hyperparameters: {problem}; edit this page", location=where)
        shown = []
        for name, default, paper, text in rows:
            said, messages = self.state.inline_text(text, self.lineno)
            shown.append(
                [
                    [nodes.literal(text=name)],
                    [nodes.literal(text=default)],
                    [nodes.literal(text=paper)] if paper != "--" else "--",
                    [*said, *messages],
                ]
            )
        header = ["parameter", "default", f"the paper's runs (conf/model/{config}.yaml)"]
        return [table_node([*header, "when to change it"], shown)]


def setup(app):
    """Register the two directives."""
    app.add_directive("study-table", StudyTable)
    app.add_directive("hyperparameters", Hyperparameters)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
