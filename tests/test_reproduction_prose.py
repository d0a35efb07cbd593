"""The prose template of REPRODUCTION.md (`pilid/report/reproduction_text.md`): its blocks are
parsed as documented, and the code and the template name the same blocks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pilid.errors import PilidError
from pilid.report.reproduction import prose

CODE = Path(prose.__file__).parent


def test_a_block_is_reflowed_unless_verbatim_and_paragraphs_stay_apart():
    text = (
        "a preamble, ignored\n\n"
        "<!-- block one -->\nfirst line\nsecond {x}\n\nnext paragraph\n\n"
        "<!-- block two verbatim -->\nkept\nlines\n"
    )
    blocks = prose.parse_blocks(text)
    assert blocks == {"one": ["first line second {x}", "next paragraph"], "two": ["kept\nlines"]}


def test_every_block_the_code_asks_for_is_in_the_template_and_every_block_is_used():
    source = "\n".join(path.read_text() for path in sorted(CODE.glob("*.py")))
    asked = set(re.findall(r"""(?:prose|paragraphs)\(\s*"([\w-]+)\"""", source))
    blocks = set(prose.parse_blocks(prose.TEXT_FILE.read_text(encoding="utf-8")))
    assert asked == blocks


def test_placeholders_are_filled_and_an_unknown_block_is_refused():
    text = prose.prose("figure-not-drawn")
    assert text.startswith("The paper-vs-ours figure is not drawn") and "\n" not in text
    note = prose.prose("table2-note", paper_trials=20, m_values=5, records=100)
    assert "holds 20 trials x 5 values of m = 100 records" in note
    with pytest.raises(PilidError, match="no block 'nosuch'"):
        prose.paragraphs("nosuch")
