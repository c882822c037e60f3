"""The real book, built with the smoke profile, as a reader sees it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest

from rnnlib.book.execute import book_chapters

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def glued(nb) -> dict[str, set[str]]:
    """Glue key -> the mime types glued, for every glue call in an executed notebook."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            key = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if key:
                out[key] = set(o.get("data", {}))
    return out


def figures_by_page(out) -> dict[str, list[str]]:
    """``{page.html: glue names of its figures}`` from the executed notebooks of the build
    ``out``."""
    pages = {}
    for path in book_chapters(ROOT).values():
        rel = path.relative_to(ROOT).with_suffix("")
        nb = nbformat.read(out / "src" / rel.with_suffix(".ipynb"), as_version=4)
        pages[rel.name + ".html"] = [
            k for k, mimes in glued(nb).items() if any(m.endswith("image/png") for m in mimes)
        ]
    return pages


def test_smoke_build_executes_every_chapter_and_shows_every_figure(smoke_book):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    html_root = out / "_build" / "html"
    chapters = book_chapters(ROOT)
    assert chapters, "the book has no chapters"
    for stem, path in chapters.items():
        rel = path.relative_to(ROOT).with_suffix("")
        nb = nbformat.read(out / "src" / rel.with_suffix(".ipynb"), as_version=4)
        errors = [
            o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
        ]
        assert not errors, f"{stem}: {errors[0]['ename']}: {errors[0]['evalue']}"
        html = (html_root / rel.with_suffix(".html")).read_text(encoding="utf-8")
        assert "Ran with profile <code" in html, f"{stem}: no parameter header"
        # the parameters table is collapsed (a toggled admonition), not a page-long dump
        header = html[html.index("Ran with profile <code") :]
        assert "Parameters: " in header and "dropdown" in header[: header.index("Parameters: ")]
        figures = [
            k for k, mimes in glued(nb).items() if any(m.endswith("image/png") for m in mimes)
        ]
        for key in figures:
            assert f'id="{key}"' in html, f"{stem}: glued figure {key!r} is not in the HTML"
        assert html.count("<img") >= len(figures)
        assert html.count("How to cite this") >= len(figures)
        assert stem in proc.stdout  # the build summary has a line per chapter
    assert "jupyter-book" in proc.stdout and "cached" in proc.stdout


def _chrome():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        found = {"chromium": binary, "chromedriver": driver}
        lacking = " and ".join(name for name, path in found.items() if not path)
        message = (
            f"headless Chromium is missing ({lacking} not on PATH): install it, on Debian/Ubuntu "
            "with `apt-get install chromium chromium-driver` (as root), to run the reader's-view "
            "tests"
        )
        if os.environ.get("RNNLIB_REQUIRE_BROWSER", "") not in ("", "0"):
            pytest.fail(f"{message}; RNNLIB_REQUIRE_BROWSER is set (as .ci/run sets it)")
        pytest.skip(message)
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,2000",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=opts)


@pytest.mark.browser
def test_reader_sees_rendered_pages_with_every_image_loaded(smoke_book, tmp_path):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stderr[-3000:]
    html_root = out / "_build" / "html"
    chapters = book_chapters(ROOT).values()
    pages = [html_root / "index.html"] + [
        html_root / p.relative_to(ROOT).with_suffix(".html") for p in chapters
    ]
    # pages whose chapter saves a figure must show at least one image
    with_figures = {
        p.with_suffix(".html").name for p in chapters if ".figure(" in p.read_text(encoding="utf-8")
    }
    assert with_figures, "no chapter saves a figure: the image check would check nothing"
    with_tables = {
        p.with_suffix(".html").name for p in chapters if ".table(" in p.read_text(encoding="utf-8")
    }
    assert with_tables, "no chapter glues a table: the table check would check nothing"
    figures = figures_by_page(
        out
    )  # every glued figure of every chapter: the reader must see each one, drawn
    assert any(figures.values()), (
        "no glued figure in the book: the per-figure check would check nothing"
    )
    browser = _chrome()
    math_pages = 0
    try:
        for page in pages:
            browser.get(page.as_uri())
            browser.execute_script("return document.readyState")
            title = browser.title
            heading = browser.execute_script(
                "var h = document.querySelector('main h1, article h1'); return h ? h.innerText : ''"
            )
            assert title and heading, f"{page.name}: no title or heading rendered"
            images = browser.execute_script(
                "return Array.from(document.images)"
                ".map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])"
            )
            broken = [src for src, complete, width in images if not complete or width == 0]
            assert not broken, f"{page.name}: images that did not load: {broken}"
            if 'class="math notranslate' in page.read_text(
                encoding="utf-8"
            ):  # MathJax typesets it, offline
                math_pages += 1
                typeset = browser.execute_script(
                    "return new Promise(done => { let t = 0; const poll = () => {"
                    " const n = document.querySelectorAll('mjx-container').length;"
                    " if (n || t++ > 100) done(n); else setTimeout(poll, 100); }; poll(); })"
                )
                assert typeset, (
                    f"{page.name}: its math was not typeset (MathJax did not load from the folder)"
                )
            if page.name in with_figures:
                assert images, f"{page.name}: its chapter saves figures but the page shows no image"
            for key in figures.get(
                page.name, []
            ):  # the figure by its name, its image loaded and on screen
                shown = browser.execute_script(
                    "const f = document.getElementById(arguments[0]); if (!f) return 'missing';"
                    " const i = f.querySelector('img'); if (!i) return 'no image';"
                    " if (!i.complete || i.naturalWidth == 0) return 'not loaded';"
                    " const r = i.getBoundingClientRect();"
                    " return r.width > 50 && r.height > 50 ? 'shown' : 'not visible';",
                    key,
                )
                assert shown == "shown", f"{page.name}: figure {key!r} {shown}"
            if (
                page.name in with_tables
            ):  # glued tables are styled by _static/book.css, gaps shown as dashes
                cells = browser.execute_script(
                    "return Array.from(document.querySelectorAll('table.book-table td')).map("
                    "c => [c.innerText, parseFloat(getComputedStyle(c).paddingLeft)])"
                )
                assert cells, f"{page.name}: its chapter glues tables but the page shows none"
                assert all(pad >= 4 for _, pad in cells), (
                    f"{page.name}: table cells with the browser default padding "
                    "(book.css not loaded)"
                )
                assert not [t for t, _ in cells if t.strip() == "NaN"], (
                    f"{page.name}: a table shows NaN"
                )
            browser.save_screenshot(str(tmp_path / f"{page.stem}.png"))
    finally:
        browser.quit()
    assert math_pages, "no page has math: the MathJax check would check nothing"
