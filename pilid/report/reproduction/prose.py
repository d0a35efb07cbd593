"""The prose of REPRODUCTION.md's generated sections, from the packaged template
``pilid/report/reproduction_text.md`` (beside the hand-written ``reproduction_notes.md``).

The template is a Markdown file of named blocks (its opening comment says how it is written);
`paragraphs` and `prose` fill a block's ``{placeholders}`` with the values the sections compute.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pilid.errors import PilidError

#: The template of the generated prose.
TEXT_FILE = Path(__file__).resolve().parents[1] / "reproduction_text.md"
_MARKER = re.compile(r"^<!-- block ([\w-]+)( verbatim)? -->$", re.M)


def parse_blocks(text: str) -> dict[str, list[str]]:
    """The blocks of a template: ``{name: [paragraph, ...]}``.

    Parameters
    ----------
    text : str
        The template (see ``reproduction_text.md``): ``<!-- block NAME -->`` lines, each
        followed by its paragraphs; text before the first marker is ignored.

    Returns
    -------
    dict of str to list of str
        Per block, its paragraphs with their lines joined by one space (a ``verbatim``
        block's lines kept, joined by newlines).
    """
    found = list(_MARKER.finditer(text))
    blocks = {}
    for marker, following in zip(found, [*found[1:], None]):
        body = text[marker.end() : following.start() if following else len(text)].strip("\n")
        join = "\n" if marker[2] else " "
        blocks[marker[1]] = [join.join(p.splitlines()) for p in re.split(r"\n\s*\n", body)]
    return blocks


@lru_cache(maxsize=1)
def _template() -> dict[str, list[str]]:
    return parse_blocks(TEXT_FILE.read_text(encoding="utf-8"))


def paragraphs(name: str, **values) -> list[str]:
    """The paragraphs of block ``name`` with its placeholders filled from ``values``.

    Parameters
    ----------
    name : str
        The block's name in the template.
    **values
        One value per ``{placeholder}`` of the block.

    Returns
    -------
    list of str
        One string per paragraph.
    """
    blocks = _template()
    if name not in blocks:
        raise PilidError(f"{TEXT_FILE} has no block {name!r}; add `<!-- block {name} -->` to it")
    return [paragraph.format(**values) for paragraph in blocks[name]]


def prose(name: str, **values) -> str:
    """Block ``name`` (one paragraph) with its placeholders filled, see `paragraphs`."""
    return "\n\n".join(paragraphs(name, **values))
