"""The smoke build's HTML folder as it is published: every glued number in results.json, and the
folder self-contained (copied elsewhere, every link and image of every page still resolves, and no
page loads a script or style sheet from the network)."""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from rnnlib.book.execute import book_chapters

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

INLINE_GLUE = re.compile(
    r'<span class="output text_plain">(.*?)</span>', re.S
)  # {glue:}`name` in prose
LINK = re.compile(r"""\s(?:href|src)\s*=\s*(["'])(.*?)\1""", re.S)
FETCHED = re.compile(
    r"""<(?:script|link)\b[^>]*\s(?:src|href)\s*=\s*(["'])((?:https?:)?//.*?)\1""", re.S
)  # loaded, not linked


def shown(value) -> str:
    """How a recorded number reads in the page: the repr of the glued value (NaN recorded as
    null)."""
    return "nan" if value is None else repr(value)


def built(smoke_book):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, out / "_build" / "html"


def test_results_json_holds_every_number_glued_in_the_html(smoke_book):
    out, html_root = built(smoke_book)
    published = json.loads((html_root / "results.json").read_text(encoding="utf-8"))
    assert (
        published["book"]["title"] and published["book"]["version"] and published["book"]["commit"]
    )
    entries = published["results"]
    by_chapter: dict[str, dict[str, dict]] = {}
    for e in entries:
        assert e["name"] not in by_chapter.setdefault(e["chapter"], {}), (
            f"{e['name']} recorded twice"
        )
        by_chapter[e["chapter"]][e["name"]] = e
    pasted = 0
    for stem, path in book_chapters(ROOT).items():
        rel = path.relative_to(ROOT).with_suffix("")
        recorded = by_chapter.get(stem, {})
        nb = nbformat.read(out / "src" / rel.with_suffix(".ipynb"), as_version=4)
        for cell in nb.cells:  # every glue call of the executed chapter is a recorded result
            for o in cell.get("outputs", []):
                name = o.get("metadata", {}).get("scrapbook", {}).get("name")
                if not name:
                    continue
                assert name in recorded, f"{stem}: glued {name!r} is not in results.json"
                if set(o.get("data", {})) == {"text/plain"}:  # a number
                    assert recorded[name]["kind"] == "number"
                    assert o["data"]["text/plain"] == shown(recorded[name]["value"]), name
        numbers = {shown(e["value"]) for e in recorded.values() if e["kind"] == "number"}
        page = (html_root / rel.with_suffix(".html")).read_text(encoding="utf-8")
        for text in INLINE_GLUE.findall(page):  # every number the reader sees in the prose
            assert html_lib.unescape(text) in numbers, (
                f"{stem}: the page shows {text!r}, which no number entry has"
            )
            pasted += 1
        for e in recorded.values():  # and the record says where its files and artifacts are
            assert all((html_root / "figures" / f).is_file() for f in e["files"]), e["name"]
            assert all(set(a) == {"kind", "key"} for a in e["artifacts"]), e["name"]
    assert pasted, "no page pastes a glued number: the check would check nothing"


def test_the_html_folder_copied_elsewhere_has_no_broken_link_or_image(smoke_book, tmp_path):
    _, html_root = built(smoke_book)
    copy = tmp_path / "published" / "some" / "sub-path"
    shutil.copytree(html_root, copy)
    pages = [
        p for p in copy.rglob("*.html") if "_static" not in p.relative_to(copy).parts
    ]  # _static: templates
    assert (copy / "index.html") in pages and (copy / "results.json").is_file()
    broken, to_figures = [], 0
    for page in pages:
        for _, url in LINK.findall(page.read_text(encoding="utf-8")):
            url = html_lib.unescape(url)
            parts = urlsplit(url)
            if parts.scheme in ("http", "https", "mailto", "data", "javascript"):
                continue
            if parts.scheme or parts.netloc or url.startswith("/"):
                broken.append(f"{page.relative_to(copy)}: {url} (not relative)")
                continue
            if not parts.path:  # a link within the page
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if copy.resolve() not in target.parents or not target.is_file():
                broken.append(f"{page.relative_to(copy)}: {url}")
            elif target.relative_to(copy.resolve()).parts[0] == "figures":
                to_figures += 1
    assert not broken, f"{len(broken)} broken links, for example: {broken[:10]}"
    remote = sorted(
        {url for page in pages for _, url in FETCHED.findall(page.read_text(encoding="utf-8"))}
    )
    assert not remote, (
        "pages load scripts or styles from the network (the folder is not self-contained): "
        f"{remote}"
    )
    assert to_figures, "no page links a file of figures/: the cite blocks lost their links"
