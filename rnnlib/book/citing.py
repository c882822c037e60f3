"""How to cite a figure or table of the book: a BibTeX entry for it, and the paper it reproduces.

The book's title, version, authors and year come from ``CITATION.cff``; the papers' BibTeX
entries from ``references.bib`` (both at the book root), parsed by pybtex. A figure or table gets

* an ``@misc`` entry keyed by its stable name (:meth:`rnnlib.book.chapter.Chapter.stable_name`),
  giving the book's title and version, the rnnlib commit and, in ``howpublished``, the figure or
  table, its chapter, profile and config hash (:func:`item_bibtex`);
* the entry of the original paper it reproduces: paper A (Cho et al. 2014, key :data:`PAPERS`
  ``["A"]``) or paper B (Bahdanau et al. 2015).

Which paper: the ``paper=`` argument of ``Chapter.figure``/``Chapter.table`` (``"A"``, ``"B"``,
``"AB"`` or ``""`` for none). Without it, the chapter's part in ``_toc.yml`` decides: a part whose
caption names a paper's first author and year ("Cho et al. 2014") cites that paper, a chapter of
any other part (the foundations, the library) cites both (:func:`chapter_papers`).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pybtex.bibtex.utils import split_name_list
from pybtex.database import Person
from pybtex.database.input.bibtex import Parser
from pybtex.exceptions import PybtexError
from pybtex.richtext import Text

# The papers the book replicates: letter -> key in references.bib.
PAPERS = {"A": "cho2014", "B": "bahdanau2015"}


def book_metadata(root: Path) -> dict:
    """``title``, ``version``, ``year`` and ``authors`` (a list of names) from ``CITATION.cff``;
    placeholders where the file or a field is missing."""
    try:
        cff = yaml.safe_load((Path(root) / "CITATION.cff").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        cff = {}
    if not isinstance(cff, dict):
        cff = {}
    authors = []
    for a in cff.get("authors") or []:
        if isinstance(a, dict):
            name = a.get("name") or " ".join(
                str(a[k]) for k in ("given-names", "family-names") if a.get(k)
            )
            if name:
                authors.append(str(name))
    released = str(cff.get("date-released") or "")
    return {
        "title": str(cff.get("title") or "the replication book"),
        "version": str(cff.get("version") or "unversioned"),
        "year": released[:4] if released[:4].isdigit() else None,
        "authors": authors,
    }


def _bibliography(root: Path) -> dict:
    """The entries of ``references.bib`` parsed by pybtex, by key (``{}`` without the file); a
    syntax error or a repeated key is a :class:`ValueError` naming the file. Names stay as
    written (``person_fields=()``: ``author`` is a field like the others, in its place)."""
    path = Path(root) / "references.bib"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    try:
        return dict(Parser(person_fields=()).parse_string(text).entries)
    except PybtexError as e:
        raise ValueError(f"{path}: {e}") from None


def _entry_text(key: str, entry) -> str:
    """One entry as BibTeX, as ``references.bib`` writes them: ``@type{key,``, then a field a
    line, indented by two spaces, names padded to the longest, values in braces."""
    width = max((len(name) for name in entry.fields), default=0)
    fields = [f"  {name:<{width}} = {{{value}}}" for name, value in entry.fields.items()]
    return f"@{entry.original_type}{{{key},\n" + ",\n".join(fields) + "\n}"


def bib_entries(root: Path) -> dict[str, str]:
    """The entries of ``references.bib`` by key, each as BibTeX text (``{}`` without the file),
    parsed by pybtex (``@string`` macros expanded, ``@comment`` and ``@preamble`` left out)."""
    return {key: _entry_text(key, entry) for key, entry in _bibliography(root).items()}


def _plain(latex: str) -> str:
    """LaTeX text as plain text (``Merri{\\"e}nboer`` -> ``Merriënboer``)."""
    return Text.from_latex(latex).render_as("text")


def _first_author(entry) -> str:
    """The surname (with its "von" part) of the entry's first author, as plain text."""
    names = entry.fields.get("author", "") if entry is not None else ""
    if not names.strip():
        return ""
    first = Person(split_name_list(names)[0])
    return _plain(" ".join(first.prelast_names + first.last_names)).strip()


def _words(text: str) -> str:
    """``text`` as its words (letters and digits) between single spaces, with one space at
    both ends, so that ``f" {w} " in _words(text)`` matches whole words only."""
    kept = "".join(c if c.isalnum() else " " for c in text)
    return " " + " ".join(kept.split()) + " "


def chapter_papers(root: Path, chapter: str) -> str:
    """The papers (letters of :data:`PAPERS`) the chapter ``chapters/<chapter>`` reproduces, from
    the caption of its part in ``_toc.yml``: every paper whose first author's surname and year
    the caption names, or all papers when it names none (or the chapter is in no part)."""
    try:
        toc = yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        toc = {}
    caption = next(
        (
            part.get("caption") or ""
            for part in toc.get("parts") or []
            if f"chapters/{chapter}" in _files(part)
        ),
        "",
    )
    entries = _bibliography(root)
    words = _words(caption)
    named = ""
    for letter, key in PAPERS.items():
        entry = entries.get(key)
        author = _first_author(entry)
        year = _plain(entry.fields.get("year", "")).strip() if entry is not None else ""
        if author and year and _words(author) in words and _words(year) in words:
            named += letter
    return named or "".join(PAPERS)


def _files(node) -> set[str]:
    if isinstance(node, dict):
        return ({node["file"]} if "file" in node else set()) | {
            f for v in node.values() for f in _files(v)
        }
    if isinstance(node, list):
        return {f for v in node for f in _files(v)}
    return set()


def check_paper(paper: str, where: str) -> str:
    """``paper`` (letters of :data:`PAPERS`, e.g. ``"A"``, ``"AB"``, ``""``) checked, without
    repeats."""
    if not isinstance(paper, str) or any(c not in PAPERS for c in paper):
        raise ValueError(
            f"{where}: paper={paper!r}: give the letters of the papers it reproduces, "
            f"from {', '.join(PAPERS)} (e.g. 'A', 'AB'), or '' for none"
        )
    return "".join(dict.fromkeys(paper))


_LATEX_SPECIALS = str.maketrans({c: "\\" + c for c in "_&%#$"})


def _latex(text: str) -> str:
    """``text`` with LaTeX's special characters ``_ & % # $`` escaped."""
    return text.translate(_LATEX_SPECIALS)


def item_bibtex(
    root: Path,
    stable_name: str,
    what: str,
    chapter: str,
    profile: str,
    config_hash: str,
    commit: str,
) -> str:
    """The ``@misc`` BibTeX entry of one figure or table (``what``: "Figure" or "Table")."""
    meta = book_metadata(root)
    lines = [
        f"@misc{{{stable_name},",
        f"  author       = {{"
        f"{' and '.join('{' + a + '}' for a in meta['authors']) or '{anonymous}'}}},",
        f"  title        = {{{{{_latex(meta['title'])}}}}},",
        f"  version      = {{{meta['version']}}},",
    ]
    if meta["year"]:
        lines.append(f"  year         = {{{meta['year']}}},")
    lines += [
        f"  howpublished = {{{what} \\texttt{{{_latex(stable_name)}}}, chapter {_latex(chapter)}, "
        f"profile {_latex(profile)}, config hash {config_hash}}},",
        f"  note         = {{rnnlib commit {_latex(commit)}}}",
        "}",
    ]
    return "\n".join(lines)


def paper_bibtex(root: Path, paper: str) -> list[str]:
    """The ``references.bib`` entries of the papers ``paper`` names (a missing entry is an
    error)."""
    entries = bib_entries(root)
    missing = [PAPERS[p] for p in paper if PAPERS[p] not in entries]
    if missing:
        raise ValueError(
            f"{Path(root) / 'references.bib'} has no entry {', '.join(missing)} "
            f"(the keys of the replicated papers are {PAPERS})"
        )
    return [entries[PAPERS[p]] for p in paper]


__all__ = [
    "PAPERS",
    "bib_entries",
    "book_metadata",
    "chapter_papers",
    "check_paper",
    "item_bibtex",
    "paper_bibtex",
]
