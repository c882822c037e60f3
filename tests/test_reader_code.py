"""Every figure and table of the book shows, collapsed, the code that made it; every chapter
page offers its executed notebook for download.

The cells that glue a figure or a table are tagged ``hide-input``: the page shows a "Show code
cell source" toggle above the item; a reader who opens it sees the call that made the item.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_book import _chrome

from rnnlib.book.execute import book_chapters

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# seconds between two looks for a toggle or its opened code: selenium's default, 0.5 s, slept at
# least 0.5 s for each of the 77 items whose code was not open at the first look (the theme
# fades each opened block in); at 0.05 s the test slept 2.5 s in all
POLL = 0.05
# mime types of a glued figure (a PNG) and of a glued table (the book's HTML table)
ITEM_MIMES = ("image/png", "text/html")


def glued_items(nb) -> dict[str, list[str]]:
    """``{glue name: tags of the cell that glued it}`` for every figure and table of a notebook."""
    items = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and any(m.endswith(ITEM_MIMES) for m in o.get("data", {})):
                items[name] = list(cell.get("metadata", {}).get("tags", []))
    return items


def items_by_page(out: Path) -> dict[str, dict[str, list[str]]]:
    pages = {}
    for path in book_chapters(ROOT).values():
        rel = path.relative_to(ROOT).with_suffix("")
        nb = nbformat.read(out / "src" / rel.with_suffix(".ipynb"), as_version=4)
        pages[str(rel.with_suffix(".html"))] = glued_items(nb)
    return pages


def test_the_cell_that_makes_each_figure_and_table_is_shown_collapsed(smoke_book):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stderr[-3000:]
    pages = items_by_page(out)
    assert sum(len(v) for v in pages.values()) > 10, "too few glued figures and tables to check"
    hidden = [
        f"{page}: {name} (tags {tags})"
        for page, items in pages.items()
        for name, tags in items.items()
        if "hide-input" not in tags
    ]
    assert not hidden, "cells that glue a figure or table without hide-input:\n" + "\n".join(hidden)


@pytest.mark.browser
def test_each_code_toggle_opens_on_the_call_that_made_its_item(smoke_book):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out, proc = smoke_book
    assert proc.returncode == 0, proc.stderr[-3000:]
    html_root = out / "_build" / "html"
    pages = {p: items for p, items in items_by_page(out).items() if items}
    assert pages, "no page glues a figure or table"
    find_cell = (
        "return [...document.querySelectorAll('div.cell.tag_hide-input')]"
        ".find(c => { const p = c.querySelector('pre');"
        " return p && p.textContent.includes(arguments[0]); }) || null"
    )
    browser = _chrome()
    try:
        for page, items in pages.items():
            browser.get((html_root / page).as_uri())
            for name in items:
                try:  # the theme's scripts wrap the cells in toggles after the page loads
                    cell = WebDriverWait(browser, 10, poll_frequency=POLL).until(
                        lambda b: b.execute_script(find_cell, f'"{name}"')
                    )
                except TimeoutException:
                    cell = None
                assert cell is not None, f"{page}: no collapsed code cell names {name!r}"
                source = cell.find_element(By.CSS_SELECTOR, "pre")
                if cell.find_element(By.CSS_SELECTOR, "details").get_attribute("open"):
                    # opened for an earlier item of the same cell
                    assert source.is_displayed() and name in source.text
                    continue
                assert not source.is_displayed(), f"{page}: the code of {name} is not collapsed"
                toggle = cell.find_element(By.CSS_SELECTOR, "summary")
                browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", toggle)
                toggle.click()
                try:  # the theme fades the opened block in
                    WebDriverWait(browser, 5, poll_frequency=POLL).until(
                        lambda _: source.is_displayed()
                    )
                except TimeoutException:
                    pytest.fail(f"{page}: the toggle of {name} does not open")
                assert name in source.text, f"{page}: the opened code does not show {name}"
    finally:
        browser.quit()


def test_each_chapter_page_offers_its_executed_notebook_for_download(smoke_book):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stderr[-3000:]
    html_root = out / "_build" / "html"
    for path in book_chapters(ROOT).values():
        rel = path.relative_to(ROOT).with_suffix("")
        html = (html_root / rel.with_suffix(".html")).read_text(encoding="utf-8")
        link = f'href="../_sources/{rel.as_posix()}.ipynb"'
        assert link in html, f"{rel}: the page has no download link to its notebook"
        nb = nbformat.read(html_root / "_sources" / rel.with_suffix(".ipynb"), as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
        assert outputs, f"{rel}: the notebook offered for download was not executed"
