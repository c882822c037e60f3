"""A chapter reads like a lecture: no function defined in it, short cells, and the cell that
glues each table or figure shown collapsed (``hide-input``) with the call that made it.

Measured on the MyST source, the ``parameters`` cell aside (the chapters' size targets). The
chapters listed here have been brought to the targets; add a chapter when it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
TAGS = re.compile(r"^:tags:\s*\[(.*)\]\s*$")
GLUED_ITEM = re.compile(r"ch\.(?:table|figure)\(\s*\"([^\"]+)\"")
CHAPTERS = [
    "baseline",
    "results",
    "ledger",
    "rnnsearch",
    "cho2014",
    "copy_task",
    "data",
    "representations",
]


def code_cells(chapter: str) -> list[tuple[list[str], list[str]]]:
    """``(tags, non-blank code lines)`` of each code cell of the chapter but the parameters."""
    out = []
    for body in CELL.findall((ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf-8")):
        lines = [x for x in body.splitlines() if x.strip()]
        tags = []
        if lines and TAGS.match(lines[0]):
            tags = [t.strip() for t in TAGS.match(lines[0]).group(1).split(",")]
            lines = lines[1:]
        if "parameters" not in tags:
            out.append((tags, lines))
    return out


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_defines_nothing_and_keeps_its_cells_short(chapter):
    cells = code_cells(chapter)
    assert cells, f"no code cells found in {chapter}.md"
    code = [line for _, lines in cells for line in lines]
    defined = [x for x in code if re.match(r"\s*(def|class|async def)\s", x) or "lambda" in x]
    assert not defined, f"{chapter}.md defines: {defined}"
    assert max(len(lines) for _, lines in cells) <= 25
    assert len(code) <= 150


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_table_and_figure_is_made_in_a_collapsed_cell_that_names_it(chapter):
    for tags, lines in code_cells(chapter):
        names = GLUED_ITEM.findall("\n".join(lines))
        if names or any("ch.table(" in x or "ch.figure(" in x for x in lines):
            assert names, f"{chapter}.md: a table or figure glued under a computed name"
            assert "hide-input" in tags, f"{chapter}.md: {names} glued in a cell tagged {tags}"
