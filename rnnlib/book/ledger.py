"""The faithfulness ledger: every module's paper equations and its deviations from the papers.

The module docstrings are the single source, in the sections :func:`parse_sections` reads
(a heading underlined with dashes, then bullets; or the inline form). The two sections the
ledger reads, ``Equations`` and ``Deviations``, are also read in the other forms a heading takes:
any case (``DEVIATIONS``), underlined with any RST adornment character (``~~~~``, ``====``, ...,
with or without an overline), in bold (``**Deviations**``), after Markdown ``#``, with a colon,
or on its own line with no underline. Every module of the package whose docstring has a
``Deviations`` section is in the ledger: :func:`module_names` finds the modules by walking the
package's folders (sub-packages without an ``__init__.py`` included), so nobody keeps a list
that a new module could miss; the wings of the page are :data:`WINGS`. :func:`ledger` imports
each module and parses its docstring, and refuses (:class:`LedgerError`, naming the module)
whatever would keep a deviation off the page: a line that reads as a heading naming deviations
(opening with the word Deviations in title or upper case, or underlined, in bold, after ``#``,
``..`` or ``:``, or a line of its own) but is not one of those forms (a longer heading such as
"Known deviations", an indented one), a section without bullets, a module with ``Equations``
but no ``Deviations``, a module that fails to import. The ledger chapter calls it, so the book
does not build while one of these stands.

The ledger page also measures the error of the optional bfloat16 fast path
(:func:`bf16_error_table`).

Docstrings cite an entry of the book's page "Reading the papers" (``chapters/reading.md``) by
the words "Reading the papers," followed by the entry's label in double backquotes (see
:data:`READING_REF`); :func:`ledger_markdown` renders such a citation as a link to the entry, and
:func:`check_readings` checks that every label cited by any docstring of the package (modules,
classes, functions) exists on the page.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "rnnlib"
# The wings of the package, in the order of the page:
# sub-package (None: the top-level modules) -> title.
WINGS = {
    None: "Models and training",
    "fast": "The fast paths",
    "corpus": "The corpus",
    "smt": "The phrase-based baseline",
    "calibration": "How often each rule is wrong",
    "experiments": "The experiments, one module per chapter",
    "book": "The book's tooling",
    "bench": "The benchmarks",
}
READING_REF = re.compile(r"Reading the papers, ``(reading-[a-z0-9-]+)``")
READING_LABEL = re.compile(r"^\((reading-[a-z0-9-]+)\)=\s*$", re.MULTILINE)
# The sections the ledger reads, by their lower-case name.
_NAMES = {"equations": "Equations", "deviations": "Deviations"}
# A line opening with the word, in title or upper case, after optional markup
# (``**``, ``#``, ``:``).
_HEADING_WORD = re.compile(r"^\s*(?:#+\s*|\*\*|__|:)?(?:Deviations?|DEVIATIONS?)(?![A-Za-z])")
_DEVIATION_WORD = re.compile(r"(?<![A-Za-z])deviations?(?![A-Za-z])", re.IGNORECASE)
# ``Deviations: text`` / ``Deviations:`` at the start of a line, in any case, optionally in bold.
_INLINE = re.compile(r"^(?:\*\*)?(equations|deviations)(?:\*\*)?:(?:\*\*)?(.*)$", re.IGNORECASE)
# Characters that underline (or overline) an RST section title, as docutils recommends them
# (without the backquote and the dot, which open Markdown fences and ellipses).
_ADORNMENT = set("=-~^\"':_*+#<>")


class LedgerError(ValueError):
    """A module's deviations would not reach the ledger page (or a cited reading does not exist)."""


@dataclass
class LedgerEntry:
    module: str
    summary: str
    equations: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)

    @property
    def wing(self) -> str | None:
        """The sub-package the module belongs to (``"smt"``), or None for a top-level module."""
        parts = self.module.split(".")
        return parts[1] if len(parts) > 2 else None


def _is_adornment(text: str) -> bool:
    """``text`` (a stripped line) is an RST title underline or overline: one adornment
    character, 3+ times."""
    return len(text) >= 3 and text[0] in _ADORNMENT and set(text) == {text[0]}


def _section_name(text: str) -> str | None:
    """``"Equations"`` or ``"Deviations"`` if ``text`` (a stripped line) is that word in any case,
    optionally in bold (``**Deviations**``, ``__Deviations__``), after Markdown ``#``, with a
    trailing colon (inside or outside the bold); otherwise None."""
    t = re.sub(r"^#+\s*", "", text).rstrip(":").strip()
    for mark in ("**", "__"):
        if len(t) > 4 and t.startswith(mark) and t.endswith(mark):
            t = t[2:-2].strip().rstrip(":").strip()
    return _NAMES.get(t.lower())


def _parse(doc: str) -> tuple[dict[str, list[str]], set[int]]:
    """:func:`parse_sections`, and the indices of the lines read as the heading of a
    ``Deviations`` section."""
    lines = doc.splitlines()
    out: dict[str, list[str]] = {}
    deviation_headings: set[int] = set()
    current: list[str] | None = None
    paragraph = False  # an inline "Deviations: text" paragraph is running

    def start(heading: str, i: int) -> list[str]:
        if heading == "Deviations":
            deviation_headings.add(i)
        return out.setdefault(heading, [])

    for i, line in enumerate(lines):
        text = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if text and not _is_adornment(text) and _is_adornment(nxt):
            current, paragraph = (
                start(_section_name(text) or text, i),
                False,
            )  # an underlined heading
            continue
        if _is_adornment(text):
            continue  # an underline, an overline, or (after a blank line) a stray one
        inline = _INLINE.match(line)
        if inline:
            current = start(_NAMES[inline.group(1).lower()], i)
            paragraph = bool(inline.group(2).strip())
            if paragraph:
                current.append(inline.group(2).strip())
            continue
        name = _section_name(text)
        if name and not line[:1].isspace():
            current, paragraph = start(name, i), False  # a heading on its own line, not underlined
            continue
        if current is None:
            continue
        if paragraph:
            if text:
                current[-1] += " " + text
            else:
                current, paragraph = None, False
        elif line.startswith(("- ", "* ")):
            current.append(text[2:].strip())
        elif line.startswith("  ") and text and current:
            current[-1] += " " + text
        elif text:
            current = None  # prose after the bullets ends the section
    return out, deviation_headings


def parse_sections(doc: str) -> dict[str, list[str]]:
    """``{section heading: [bullet, ...]}`` for every section of a docstring.

    A section is a heading line underlined with dashes (or any RST adornment character, with an
    optional overline), then ``- `` or ``* `` bullets whose continuation lines are indented
    (blank lines between bullets allowed; other prose ends it).
    ``Equations`` and ``Deviations`` are keyed by those names whatever the case and markup of
    their heading (``DEVIATIONS``, ``**Deviations**``, ``## Deviations``, ``Deviations:``), and may
    also be written without an underline, on their own line, or inline at the start of a line:
    ``Deviations:`` alone, then the bullets, or ``Deviations: text`` (the paragraph, up to a blank
    line, is then the section's one bullet).
    """
    return _parse(doc)[0]


def _looks_like_deviations_heading(lines: list[str], i: int) -> bool:
    """Line ``i`` of ``lines`` reads as a heading that names deviations, in any form: it opens with
    the word (title or upper case, after ``**``, ``#`` or ``:``), or names deviations and is
    underlined, in bold, after ``#``, ``..`` or ``:``, or a line of its own (a blank line before it;
    after it a blank line, an underline or a bullet) that does not end a sentence."""
    line, text = lines[i], lines[i].strip()
    prev = lines[i - 1].strip() if i > 0 else ""
    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
    if _HEADING_WORD.match(line) or _section_name(text) == "Deviations":
        return True
    if not _DEVIATION_WORD.search(text):
        return False
    bold = any(
        len(text) > 4 and text.startswith(m) and text.rstrip(":").endswith(m) for m in ("**", "__")
    )
    alone = (
        not prev
        and (not nxt or _is_adornment(nxt) or nxt.startswith(("- ", "* ")))
        and not text.endswith((".", "!", "?"))
    )
    return _is_adornment(nxt) or bold or text.startswith(("#", "..", ":")) or alone


def module_names(package: str = PACKAGE) -> list[str]:
    """Every module of ``package`` and of its sub-packages (with or without ``__init__.py``),
    sorted."""
    pkg = importlib.import_module(package)
    names = set()
    for root in map(Path, pkg.__path__):
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__main__" or not all(p.isidentifier() for p in parts):
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.add(".".join((package, *parts)))
    return sorted(names)


def entry_of(name: str, doc: str) -> tuple[LedgerEntry | None, list[str]]:
    """The ledger entry of module ``name`` with docstring ``doc`` (None: it has no Deviations),
    and the problems that keep its deviations off the page."""
    sections, headings = _parse(doc)
    problems = []
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if i not in headings and _looks_like_deviations_heading(lines, i):
            problems.append(
                f"{name}: {line.strip()[:60]!r} is not a section heading; write 'Deviations' on "
                "its own line, underlined with dashes, then '- ' bullets"
            )
    if "Deviations" in sections and not sections["Deviations"]:
        problems.append(f"{name}: its Deviations section has no '- ' or '* ' bullets")
    if "Equations" in sections and "Deviations" not in sections:
        problems.append(
            f"{name}: module docstring has Equations but no Deviations section "
            "(write '- none: ...' if it has none)"
        )
    if "Deviations" not in sections:
        return None, problems
    summary = doc.strip().splitlines()[0]
    return LedgerEntry(
        name, summary, sections.get("Equations", []), sections["Deviations"]
    ), problems


def ledger(package: str = PACKAGE) -> list[LedgerEntry]:
    """One :class:`LedgerEntry` per module with a Deviations section, by wing, then by name.

    Raises :class:`LedgerError` listing every module whose docstring the ledger cannot read.
    """
    entries, problems = [], []
    for name in module_names(package):
        try:
            module = importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 -- a module the ledger cannot read is a build error
            problems.append(f"{name}: cannot be imported ({type(e).__name__}: {e})")
            continue
        entry, found = entry_of(name, module.__doc__ or "")
        problems += found
        if entry is not None:
            entries.append(entry)
    if problems:
        raise LedgerError(
            "the faithfulness ledger would miss deviations:\n  " + "\n  ".join(problems)
        )
    order = list(WINGS)
    return sorted(
        entries, key=lambda e: (order.index(e.wing) if e.wing in order else len(order), e.module)
    )


def wing_title(wing: str | None, package: str = PACKAGE) -> str:
    where = package if wing is None else f"{package}.{wing}"
    return f"{WINGS[wing]} (`{where}`)" if wing in WINGS else f"`{where}`"


def ledger_markdown(package: str = PACKAGE, readings: Path | None = None) -> str:
    """The ledger as MyST Markdown: a ``##`` section per wing, a ``###`` section per module with
    its equations (if any) and deviations; citations of "Reading the papers" become ``{ref}`` links.

    With ``readings`` (the path of ``chapters/reading.md``), every label cited by a docstring of
    the package must exist there (:func:`check_readings`).
    """
    if readings is not None:
        check_readings(readings, package)
    parts, wing = [], object()
    for e in ledger(package):
        if e.wing != wing:
            wing = e.wing
            parts.append(f"## {wing_title(wing, package)}\n")
        parts.append(f"### `{e.module}`\n\n{_md(e.summary)}\n")
        if e.equations:
            parts.append("**Equations**\n")
            parts.extend(f"- {_md(x)}" for x in e.equations)
            parts.append("")
        parts.append("**Deviations**\n")
        parts.extend(f"- {_md(x)}" for x in e.deviations)
        parts.append("")
    return "\n".join(parts)


def docstrings(package: str = PACKAGE) -> list[tuple[str, str]]:
    """``(where, docstring)`` for every module, class and function docstring of the package's
    sources (read with :mod:`ast`, nothing imported); ``where`` is ``module`` or ``module:name``."""
    pkg = importlib.import_module(package)
    out = []
    for name in module_names(package):
        parts = name.split(".")[1:]
        candidates = [Path(root, *parts[:-1], parts[-1] + ".py") for root in pkg.__path__ if parts]
        candidates += [Path(root, *parts, "__init__.py") for root in pkg.__path__]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    out.append(
                        (name if isinstance(node, ast.Module) else f"{name}:{node.name}", doc)
                    )
    return out


def reading_labels(readings: Path) -> set[str]:
    """The entry labels ``(reading-...)=`` defined on the page "Reading the papers"."""
    return set(READING_LABEL.findall(Path(readings).read_text(encoding="utf-8")))


def cited_readings(package: str = PACKAGE) -> dict[str, list[str]]:
    """Label -> the docstrings (``where``) that cite it, over the whole package."""
    out: dict[str, list[str]] = {}
    for where, doc in docstrings(package):
        for label in READING_REF.findall(" ".join(doc.split())):
            out.setdefault(label, []).append(where)
    return out


def check_readings(readings: Path, package: str = PACKAGE) -> None:
    """Raise :class:`LedgerError` if a docstring cites a reading that ``readings`` does not
    define."""
    known = reading_labels(readings)
    unknown = {
        label: where for label, where in cited_readings(package).items() if label not in known
    }
    if unknown:
        raise LedgerError(
            f"docstrings cite readings that {Path(readings).name} does not define: "
            + "; ".join(
                f"{label} (in {', '.join(where)})" for label, where in sorted(unknown.items())
            )
        )


def _md(text: str) -> str:
    """Plain-text docstring bullet -> MyST Markdown: citations of "Reading the papers" become links,
    ``code`` spans (and Sphinx roles) become `code`; elsewhere the characters Markdown would read
    as emphasis or HTML (``*``, ``_``, ``<``, as in ``h<t>`` and ``<end>``) are escaped."""
    pieces = READING_REF.split(text)
    return "".join(
        f"Reading the papers, {{ref}}`{p}`" if i % 2 else _md_plain(p) for i, p in enumerate(pieces)
    )


def _md_plain(text: str) -> str:
    text = re.sub(
        r":(?:mod|class|func|meth|attr|data|exc):`~?([^`]+)`", r"``\1``", text
    )  # Sphinx roles
    pieces = re.split(r"``(.+?)``", text)
    return "".join(
        f"`{p}`" if i % 2 else re.sub(r"([\\*_<])", r"\\\1", p) for i, p in enumerate(pieces)
    )


def _significant(x: float | None, digits: int = 2) -> float | None:
    """``x`` rounded to ``digits`` significant digits (None stays None)."""
    return None if x is None else float(f"{x:.{digits}g}")


def bf16_error_table(profile: str, archs: tuple[str, ...] = ("rnnsearch", "rnnencdec")):
    """The error of bf16 against fp32 on a seeded model of each ``<profile>-<arch>`` preset
    (:func:`rnnlib.fast.precision.bf16_error`), one row per model: the largest absolute
    difference of any log-probability and of any attention weight (none for RNNencdec), beside
    the spread of the fp32 log-probabilities for scale and the target positions compared."""
    import pandas as pd

    from ..fast.precision import bf16_error

    rows = []
    for arch in archs:
        err = bf16_error(f"{profile}-{arch}")
        rows.append(
            {
                "model": err["preset"],
                "max |log p bf16 - log p fp32|": _significant(err["logprob"]),
                "spread of the fp32 log p": _significant(err["logprob_range"], 3),
                "max |alpha bf16 - alpha fp32|": _significant(err["attention"]),
                "target positions": err["tokens"],
            }
        )
    return pd.DataFrame(rows).set_index("model")
