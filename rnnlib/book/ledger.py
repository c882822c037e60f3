"""The faithfulness ledger: for each model module, the paper equations it implements and its deviations.

The module docstrings are the single source: each has an ``Equations`` and a ``Deviations``
section (a heading line underlined with dashes, then ``- `` bullets, continuation lines
indented). :func:`ledger` parses them into data; :func:`ledger_markdown` renders a page.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field

MODULES = ("rnnlib.gru", "rnnlib.encoders", "rnnlib.attention", "rnnlib.decoders",
           "rnnlib.models", "rnnlib.init", "rnnlib.presets", "rnnlib.search", "rnnlib.loss",
           "rnnlib.train")
SECTIONS = ("Equations", "Deviations")


@dataclass
class LedgerEntry:
    module: str
    summary: str
    equations: list[str] = field(default_factory=list)
    deviations: list[str] = field(default_factory=list)


def parse_sections(doc: str) -> dict[str, list[str]]:
    """``{section heading: [bullet, ...]}`` for every dash-underlined section of a docstring."""
    lines = doc.splitlines()
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for i, line in enumerate(lines):
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and nxt and set(nxt) == {"-"} and len(nxt) >= 3:
            current = out.setdefault(line.strip(), [])
            continue
        if set(line.strip()) == {"-"} and len(line.strip()) >= 3:
            continue
        if current is None:
            continue
        if line.startswith("- "):
            current.append(line[2:].strip())
        elif line.startswith("  ") and line.strip() and current:
            current[-1] += " " + line.strip()
        elif line.strip():
            current = None  # prose after the bullets ends the section
    return out


def ledger(modules: tuple[str, ...] = MODULES) -> list[LedgerEntry]:
    """One :class:`LedgerEntry` per module, in ``modules`` order.

    Raises ``ValueError`` naming the module when its docstring lacks either section.
    """
    entries = []
    for name in modules:
        doc = importlib.import_module(name).__doc__ or ""
        sections = parse_sections(doc)
        missing = [s for s in SECTIONS if s not in sections]
        if missing:
            raise ValueError(f"{name}: module docstring has no {' / '.join(missing)} section")
        entries.append(LedgerEntry(name, doc.strip().splitlines()[0], sections["Equations"],
                                   sections["Deviations"]))
    return entries


def ledger_markdown(modules: tuple[str, ...] = MODULES) -> str:
    """The ledger as Markdown: one section per module with its equations and deviations."""
    parts = []
    for e in ledger(modules):
        parts.append(f"## `{e.module}`\n\n{e.summary}\n\n**Equations**\n")
        parts.extend(f"- {_md(x)}" for x in e.equations)
        parts.append("\n**Deviations**\n")
        parts.extend(f"- {_md(x)}" for x in e.deviations)
        parts.append("")
    return "\n".join(parts)



def _md(text: str) -> str:
    """Plain-text docstring bullet -> Markdown: ``code`` spans become `code`; elsewhere the
    emphasis characters the equations use (``*``, ``_``) are escaped."""
    pieces = re.split(r"``(.+?)``", text)
    return "".join(f"`{p}`" if i % 2 else p.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")
                   for i, p in enumerate(pieces))
