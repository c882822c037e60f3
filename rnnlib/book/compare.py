"""``rnnlib compare OLD NEW``: what changed between two builds of the book, claim by claim and
number by number.

**Inputs.** Each of ``OLD`` and ``NEW`` is one of

* a ``results.json`` (:func:`rnnlib.book.results.merge`: the one ``rnnlib build`` writes beside
  the HTML's ``index.html``);
* a built HTML folder holding that ``results.json``;
* a build's output folder (``_build``, holding ``results/``): its chapters' record files
  ``results/<chapter>.json`` are read;
* a results folder itself (the chapters' record files, with ``claims/``);
* the book's published reference (``records/published``, written by ``rnnlib publish``:
  :mod:`rnnlib.book.published`): its ``results/`` are read, and its manifest names its commit
  and machine.

**One profile.** Only builds of one and the same profile are compared: two builds of different
profiles (or a build whose chapters ran different profiles) differ in every number by design, so
:func:`compare` raises :class:`OtherProfile`, whose message says which profile each build is of,
rather than list false differences.

**Claims.** A claim's verdict comes from the claims records ``results/claims/<chapter>.json``
(the verdict as the chapter recorded it, that is as the build published it; evaluated with
:func:`rnnlib.verdicts.evaluate` only for a record without one) when they are there: inside
the given folder, or for a ``results.json`` in ``<out>/_build/html/``, in ``<out>/results/``.
A chapter whose records name another config hash than the chapter's results (a chapter rerun
after the HTML was built) is read from the glued texts instead, with a warning. Without records,
the verdict is read from the glued ``claim-<ID>`` texts (``**verdict** (reason)``). Every claim
ID in either build is listed as unchanged, changed (old verdict -> new verdict), or present in
one build only. From the records, the numbers of each claim's evidence (a difference with its
95% interval, a measured value against a threshold, the difference of two groups of seeds, a
yes/no observation) are compared too, each against the interval the evidence states.

**Numbers.** Every glued number (kind ``number``) and every numeric cell of a glued table (by
table, row and column) is *unchanged* (equal to 9 significant digits: float rounding is not a
change), *moved within its noise*, *moved beyond its noise*, or *moved (noise unknown)*.
A number has a noise only where a build states one for that very number:

* a glued number ``X`` with glued siblings ``X-spread`` and ``X-spread-n``: its rebuild spread
  (the standard deviation over that many rebuilds), which takes precedence (with
  two rebuilds the t quantile is 12.7: three or more make it a usable noise);
* a glued number ``X`` with glued siblings ``X-low`` and ``X-high`` (its interval);
* a number of a claim's evidence, with the interval of that evidence (for a group of seeds, the
  t interval the rule :func:`rnnlib.verdicts.seeds_above` uses);
* a noise passed to :func:`compare` as ``noise=`` (see :class:`Noise`).

The interval of OLD is used (is the new value inside it?); where only NEW states one, the
interval of NEW (is the old value inside it?). Every other number is "noise unknown": the report
says so rather than calling the change significant. Texts, tables and figures (figures: their
stable name and config hash only; the images are not compared) are reported by name when they
changed; items present in one build only are listed; per chapter, a different profile, config
hash or parameter is stated at the top (a chapter rerun with new parameters).

**Rebuild spread.** A chapter that measures a number's rebuild spread glues it as
``X-spread`` and ``X-spread-n`` (chapter ``rnnsearch`` does for its "-50" pair when
``seed_runs`` > 1). A spread measured elsewhere can be passed as the ``noise=`` argument of
:func:`compare`: ``{item id: Noise}``, for example ``Noise.around(old_value, spread, "rebuild
spread, 5 replicates")``; it takes precedence over what the builds state.

**Recorded spread.** Where ``records/spread/`` (:mod:`rnnlib.book.spread_records`, written by
``rnnlib spread``) holds at least two records of a headline number for the builds' profile whose
code is the code of now (their keys need a cache and are checked by the chapters, not here), the
number's noise is the recorded spread (:func:`record_noise`): the new value within
t(0.975, n - 1) sqrt(2) sd of the old one, sd over the records; it takes precedence over what
the builds state, and the report says how many records it read and which it left out as stale.

**Machines.** The report names the machine each build's results page ran on (its glued
``res-machine``, or the reference's manifest), and says so when they differ: networks trained
from the same seed follow other float roundings on another processor, and a number can move by
more than the noise one build states for it (its rebuild spread, where glued, accounts for that).

**Exit status**: 0 when no claim's verdict changed, 1 when one did (a claim present in one build
only counts as changed), 2 for an input that is not a build (the message names the path), 3 for
builds of different profiles (not compared).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..cache import find_book_root
from ..verdicts import RULES, Check, evaluate
from .published import MANIFEST, read_manifest
from .results import load

# statuses of an item or a claim
UNCHANGED = "unchanged"
WITHIN = "moved within its noise"
BEYOND = "moved beyond its noise"
UNKNOWN = "moved (noise unknown)"
CHANGED = "changed"  # a claim's verdict, a text, a table, a figure, parameters
ONLY_OLD = "only in old"
ONLY_NEW = "only in new"
TIMED = "measures time"  # a declared timing that differs: reported, not counted as a move

REL_TOL = 1e-9  # numbers equal to 9 significant digits are unchanged (float rounding)


class BadInput(Exception):
    """An input that is not a build; the message names the path."""


class OtherProfile(Exception):
    """Two builds that are not of one and the same profile; the message says which is of which."""


@dataclass
class Noise:
    """The noise of one number: the new value (or, ``side="new"``, the old value) inside
    ``[low, high]`` has moved within its noise. ``source`` says where the interval comes from."""

    low: float
    high: float
    source: str
    side: str = "old"  # whose interval: "old" tests the new value, "new" tests the old value

    @classmethod
    def around(cls, value: float, spread: float, source: str) -> "Noise":
        """``value ± spread`` as the old build's noise (for a rebuild spread)."""
        return cls(value - spread, value + spread, source)


@dataclass
class Build:
    """One side of a comparison, as :func:`load_build` reads it."""

    path: str
    results_from: str  # the file or folder the results were read from
    claims_from: str  # where the verdicts were read from, in words
    commit: str
    entries: dict[tuple[str, str], dict]  # (chapter, name) -> the entry (the last one recorded)
    chapters: dict[str, dict]  # chapter -> {"profile", "config_hash", "params"}
    claims: dict[str, dict]  # claim -> {"chapter", "verdict", "reason", "check", "from"}
    warnings: list[str] = field(default_factory=list)
    machine: str = ""  # the machine the results page ran on (its glued res-machine), if built
    reference: dict | None = None  # the manifest of a published reference (rnnlib publish)

    def profiles(self) -> dict[str, list[str]]:
        """profile -> the chapters built with it (chapters recording none left out)."""
        out: dict[str, list[str]] = {}
        for chapter, c in self.chapters.items():
            if c.get("profile"):
                out.setdefault(c["profile"], []).append(chapter)
        return out

    def describe(self) -> str:
        """``the published reference records/published`` or ``the build _build``."""
        return f"the {'published reference' if self.reference else 'build'} {self.path}"


@dataclass
class Item:
    """One compared item: a number, a table cell, an evidence number, a text, table or figure."""

    chapter: str
    id: str  # the glued name; "<table>[<row> | <column>]" for a cell; "<claim>: <label>"
    kind: str  # number, cell, evidence, text, table, figure
    status: str
    old: Any = None
    new: Any = None
    noise: Noise | None = None
    note: str = ""


@dataclass
class ClaimChange:
    claim: str
    chapter: str
    status: str  # UNCHANGED, CHANGED, ONLY_OLD, ONLY_NEW
    old: str | None  # the verdict
    new: str | None
    old_reason: str = ""
    new_reason: str = ""
    evidence: list[Item] = field(default_factory=list)  # the evidence's numbers, compared
    note: str = ""


@dataclass
class ChapterChange:
    chapter: str
    status: str  # UNCHANGED, CHANGED, ONLY_OLD, ONLY_NEW
    old_profile: str | None = None
    new_profile: str | None = None
    old_config_hash: str | None = None
    new_config_hash: str | None = None
    params: list[tuple[str, Any, Any]] = field(default_factory=list)  # (name, old, new)


@dataclass
class Comparison:
    old: Build
    new: Build
    chapters: list[ChapterChange]
    claims: list[ClaimChange]
    items: list[Item]

    @property
    def verdicts_changed(self) -> bool:
        """Whether a verdict differs, or a claim is in one build only (a claim on a declared
        live timing that changed, :data:`TIMED`, is reported apart and not counted)."""
        return any(c.status not in (UNCHANGED, TIMED) for c in self.claims)

    def summary(self) -> dict:
        numbers = [i for i in self.items if i.kind in ("number", "cell")]
        evidence = [i for c in self.claims for i in c.evidence]
        return {
            "claims": dict(Counter(c.status for c in self.claims)),
            "numbers": dict(Counter(i.status for i in numbers)),
            "evidence": dict(Counter(i.status for i in evidence)),
            "others": dict(
                Counter(
                    f"{i.kind} {i.status}"
                    for i in self.items
                    if i.kind not in ("number", "cell") and i.status != UNCHANGED
                )
            ),
            "chapters with other parameters": [
                c.chapter for c in self.chapters if c.status == CHANGED
            ],
        }

    def as_json(self) -> dict:
        return {
            "old": asdict(self.old) | {"entries": len(self.old.entries)},
            "new": asdict(self.new) | {"entries": len(self.new.entries)},
            "summary": self.summary(),
            "chapters": [asdict(c) for c in self.chapters],
            "claims": [asdict(c) for c in self.claims],
            "items": [asdict(i) for i in self.items if i.status != UNCHANGED],
            "exit_status": 1 if self.verdicts_changed else 0,
        }


# -- reading a build ------------------------------------------------------------------------------
def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(f"{path}: cannot be read ({err})") from None
    except json.JSONDecodeError as err:
        raise BadInput(f"{path}: not valid JSON ({err})") from None


def _locate(path: Path) -> tuple[Path, Path | None]:
    """(what :func:`rnnlib.book.results.load` reads, the folder holding ``claims/`` or None)."""
    if not path.exists():
        raise BadInput(f"{path}: no such file or folder")
    if path.is_file():
        data = _read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise BadInput(f"{path}: not a results.json (no 'results' list)")
        # <out>/_build/html/results.json -> <out>/results/claims
        records = path.resolve().parent.parent.parent / "results"
        return path, records if (records / "claims").is_dir() else None
    merged = path / "results.json"
    if merged.is_file() and isinstance(_read_json(merged), dict):  # an HTML folder
        return _locate(merged)

    if (path / "results").is_dir():  # a build's output folder
        records = path / "results"
        return records, records if (records / "claims").is_dir() else None
    if (path / "claims").is_dir() or any(path.glob("*.json")):  # a results folder
        return path, path if (path / "claims").is_dir() else None
    if (path / "README.md").is_file():  # the reference folder before anything was published
        raise BadInput(
            f"{path}: no published reference yet (no {MANIFEST}; `rnnlib publish BUILD_OUT` "
            "writes one from a finished build)"
        )
    raise BadInput(f"{path}: not a build (no results.json, no results/ folder, no chapter records)")


def _read_records(folder: Path) -> dict[str, list[dict]]:
    """chapter -> its claims records (``claims/<chapter>.json``). Read here rather than with
    :func:`rnnlib.book.claims.load_checks`, which rejects a claim ID the current code no longer
    has: an older build must still compare."""
    out = {}
    for path in sorted((folder / "claims").glob("*.json")):
        data = _read_json(path)
        if not isinstance(data, list) or any(
            not isinstance(e, dict) or "claim" not in e or "check" not in e for e in data
        ):
            raise BadInput(f"{path}: not a claims record (a list of entries with 'claim')")
        out[path.stem] = data
    return out


_GLUED = re.compile(r"\*\*(.+?)\*\*\s*\((.*)\)\s*$", re.DOTALL)


def _glued_claim(text: Any) -> tuple[str | None, str]:
    m = _GLUED.match(str(text or "").strip())
    return (m.group(1), m.group(2)) if m else (None, str(text))


def _record_verdict(rec: dict) -> tuple[str | None, str]:
    v = rec.get("verdict")
    if isinstance(v, dict) and v.get("verdict"):
        return v["verdict"], v.get("reason", "")
    check = rec["check"]
    if check.get("rule") in RULES:
        verdict = evaluate(Check.from_dict(check))
        return verdict.verdict, verdict.reason
    return None, f"no verdict recorded, and rule {check.get('rule')!r} is unknown here"


def load_build(path: str | Path) -> Build:
    """Read one side of a comparison (see the module docstring); :class:`BadInput` if it is not
    a build."""
    path = Path(path)
    source, records_dir = _locate(path)
    try:
        results = load(source)
    except (OSError, ValueError, KeyError) as err:
        raise BadInput(f"{path}: {err}") from None
    entries, chapters = {}, {}
    for e in results.entries:
        if not isinstance(e, dict) or not {"name", "kind", "chapter"} <= set(e):
            raise BadInput(f"{source}: an entry without name, kind and chapter: {e!r:.120}")
        entries[(e["chapter"], e["name"])] = e
        ch = chapters.setdefault(
            e["chapter"],
            {"profile": e.get("profile"), "config_hash": e.get("config_hash"), "params": None},
        )
        if e["kind"] == "params" and isinstance(e.get("value"), dict):
            ch.update(profile=e.get("profile"), config_hash=e.get("config_hash"))
            ch["params"] = e["value"]
    commits = Counter(e.get("commit") for e in entries.values() if e.get("commit"))
    commit = (results.book or {}).get("commit") or (commits.most_common(1)[0][0] if commits else "")

    build = Build(str(path), str(source), "", commit or "unknown", entries, chapters, {})
    machine = entries.get(("results", "res-machine"), {}).get("value")
    build.machine = str(machine) if machine else ""
    if path.is_dir() and (path / MANIFEST).is_file():
        try:
            build.reference = read_manifest(path)
        except (ValueError, OSError) as err:
            raise BadInput(f"{path / MANIFEST}: {err}") from None
        build.commit = build.reference.get("commit") or build.commit
        build.machine = build.machine or str(build.reference.get("machine") or "")
    records = _read_records(records_dir) if records_dir else {}
    from_records = []
    for chapter, recs in records.items():
        hashes = {r.get("config_hash") for r in recs}
        ours = chapters.get(chapter, {}).get("config_hash")
        if ours is not None and hashes != {ours}:
            build.warnings.append(
                f"the claims records of chapter {chapter} are of config "
                f"{', '.join(sorted(map(str, hashes)))}, its results of {ours}: "
                "its verdicts are read from the glued claim texts"
            )
            continue
        from_records.append(chapter)
        for rec in recs:  # a claim recorded twice: the last record counts, as in the ledger
            seen = build.claims.get(rec["claim"])
            if seen and seen["chapter"] != rec.get("chapter", chapter):
                build.warnings.append(  # the ledger refuses this build: say which chapters
                    f"claim {rec['claim']} is recorded by the chapters {seen['chapter']} and "
                    f"{rec.get('chapter', chapter)}: the latter's record is compared"
                )
            verdict, reason = _record_verdict(rec)
            build.claims[rec["claim"]] = {
                "chapter": rec.get("chapter", chapter),
                "verdict": verdict,
                "reason": reason,
                "check": rec["check"],
                "from": "record",
            }
    for (chapter, name), e in entries.items():
        if e["kind"] != "text" or not name.startswith("claim-") or chapter in from_records:
            continue
        claim = name[len("claim-") :]
        if claim in build.claims and build.claims[claim]["from"] == "record":
            continue
        verdict, reason = _glued_claim(e.get("value"))
        build.claims[claim] = {
            "chapter": chapter,
            "verdict": verdict,
            "reason": reason,
            "check": None,
            "from": "glued text",
        }
    where = f"records in {records_dir / 'claims'}" if from_records else ""
    glued = sorted({c["chapter"] for c in build.claims.values() if c["from"] == "glued text"})
    build.claims_from = (
        "; ".join(
            x for x in (where, f"glued claim texts ({', '.join(glued)})" if glued else "") if x
        )
        or "no claims"
    )
    return build


# -- comparing numbers ----------------------------------------------------------------------------
def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def same(a: Any, b: Any) -> bool:
    """Equal, numbers to :data:`REL_TOL` (a NaN or missing value equals only another)."""
    if _is_num(a) and _is_num(b):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)
    return a == b


def classify(old: Any, new: Any, noise: Noise | None) -> str:
    """The status of a number that went from ``old`` to ``new`` (``None``: no value)."""
    if same(old, new):
        return UNCHANGED
    if noise is None or not (_is_num(old) and _is_num(new)):
        return UNKNOWN
    tested = new if noise.side == "old" else old
    return WITHIN if noise.low <= tested <= noise.high else BEYOND


def _interval(build: Build, chapter: str, name: str, side: str) -> Noise | None:
    lo = build.entries.get((chapter, name + "-low"), {}).get("value")
    hi = build.entries.get((chapter, name + "-high"), {}).get("value")
    if _is_num(lo) and _is_num(hi):
        return Noise(
            min(lo, hi),
            max(lo, hi),
            f"the {side} build's interval {name}-low/-high [{lo}, {hi}]",
            side,
        )
    return None


def _spread(build: Build, chapter: str, name: str, side: str) -> Noise | None:
    """The rebuild spread a build states for number ``name``: glued siblings ``name-spread``
    (the standard deviation over ``name-spread-n`` rebuilds, n >= 2). Two rebuilds differ by
    a draw of sd times sqrt(2); the noise is the other value within the t quantile (n - 1
    degrees of freedom, 95%) of that, around this build's value."""
    from scipy.stats import t

    value = build.entries.get((chapter, name), {}).get("value")
    sd = build.entries.get((chapter, name + "-spread"), {}).get("value")
    n = build.entries.get((chapter, name + "-spread-n"), {}).get("value")
    if not (_is_num(value) and _is_num(sd) and _is_num(n)) or n < 2 or not sd > 0:
        return None  # no spread measured (sd 0 from a few rebuilds is no evidence of none)
    half = float(t.ppf(0.975, n - 1)) * math.sqrt(2) * sd
    return Noise(
        value - half,
        value + half,
        f"the {side} build's rebuild spread {name}-spread: sd {sd:.3g} over {n:g} rebuilds",
        side,
    )


def _number_noise(old: Build, new: Build, chapter: str, name: str) -> Noise | None:
    return (
        _spread(old, chapter, name, "old")
        or _spread(new, chapter, name, "new")
        or _interval(old, chapter, name, "old")
        or _interval(new, chapter, name, "new")
    )


def _note(old: Any, new: Any) -> str:
    if not (_is_num(old) and _is_num(new)):
        return "no value before" if old is None else "no value now" if new is None else ""
    delta = new - old
    rel = f", {100 * delta / abs(old):+.1f}%" if old else ""
    return f"{delta:+.4g}{rel}"


def _labels(labels: list) -> list[str]:
    out, seen = [], Counter()
    for label in labels:
        text = " / ".join(map(str, label)) if isinstance(label, list) else str(label)
        seen[text] += 1
        out.append(text if seen[text] == 1 else f"{text} #{seen[text]}")
    return out


def _cells(value: Any) -> dict[tuple[str, str], Any]:
    if not isinstance(value, dict):
        return {}
    rows, cols = _labels(value.get("index") or []), _labels(value.get("columns") or [])
    return {
        (r, c): cell for r, row in zip(rows, value.get("data") or []) for c, cell in zip(cols, row)
    }


def _table(chapter: str, name: str, old: dict, new: dict, noise: Mapping) -> list[Item]:
    a, b = _cells(old.get("value")), _cells(new.get("value"))
    cells, texts = [], 0
    for key in [k for k in a if k in b]:
        x, y = a[key], b[key]
        if (_is_num(x) or x is None) and (_is_num(y) or y is None) and (x, y) != (None, None):
            cid = f"{name}[{key[0]} | {key[1]}]"
            n = noise.get(cid)
            cells.append(Item(chapter, cid, "cell", classify(x, y, n), x, y, n, _note(x, y)))
        elif not same(x, y):
            texts += 1
    # the labels themselves, not those of the cells: a table with no rows has columns too
    rows_a, rows_b = (set(_labels(t["value"].get("index") or [])) for t in (old, new))
    cols_a, cols_b = (set(_labels(t["value"].get("columns") or [])) for t in (old, new))
    parts = []
    moved = sum(x.status != UNCHANGED for x in cells)
    if moved:
        parts.append(f"{moved} numbers moved")
    if texts:
        parts.append(f"{texts} text cells changed")
    for what, only in (
        ("rows only in old", [r for r in _labels(old["value"]["index"]) if r not in rows_b]),
        ("rows only in new", [r for r in _labels(new["value"]["index"]) if r not in rows_a]),
        ("columns only in old", [c for c in _labels(old["value"]["columns"]) if c not in cols_b]),
        ("columns only in new", [c for c in _labels(new["value"]["columns"]) if c not in cols_a]),
    ):
        if only:
            parts.append(f"{what}: {', '.join(only)}")
    changed = bool(parts) or old.get("value") != new.get("value")
    status = CHANGED if changed else UNCHANGED
    note = "; ".join(parts) or ("labels changed" if changed else "")
    return [Item(chapter, name, "table", status, note=note)] + cells


def _text_note(a: Any, b: Any) -> str:
    a, b = str(a), str(b)
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, i - 20)

    def cut(s):
        return (
            ("…" if start else "")
            + s[start : i + 40].replace("\n", "⏎")
            + ("…" if len(s) > i + 40 else "")
        )

    return f"{cut(a)!r} -> {cut(b)!r}"


#: words of a table column that names a duration (its cells measure time)
DURATION_WORDS = ("hours", "seconds", "minutes")


def timed_prefixes(build: Build, chapter: str) -> tuple[str, ...]:
    """The names a chapter of ``build`` declares as measures of time: the comma-separated
    prefixes of every text it glues under a name ending in ``-timed`` (e.g. ``rns-timed``:
    ``"rns-live-, claim-C-B-T2-3"``). Two builds of one commit differ in these alone."""
    out: list[str] = []
    for (ch, name), entry in build.entries.items():
        if ch == chapter and name.endswith("-timed") and isinstance(entry.get("value"), str):
            out += [x.strip() for x in entry["value"].split(",") if x.strip()]
    return tuple(out)


def measures_time(name: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the glued ``name`` (a number's, a claim's ``claim-<id>``, or a table cell's
    ``<table>[<row> | <column>]``) measures time: a declared prefix (:func:`timed_prefixes`), a
    name ending in ``-minutes`` or ``-seconds``, or a cell of a column naming a duration."""
    if name.startswith(prefixes) or name.endswith(("-minutes", "-seconds")):
        return True
    column = name.rpartition(" | ")[2].rstrip("]") if name.endswith("]") else ""
    return any(word in column.split() for word in DURATION_WORDS)


def _timed(item: Item, prefixes: tuple[str, ...]) -> Item:
    """``item`` with the status :data:`TIMED` where it moved and measures time."""
    if item.status not in (UNCHANGED, ONLY_OLD, ONLY_NEW) and measures_time(item.id, prefixes):
        item.status = TIMED
    return item


def _entry_items(old: Build, new: Build, noise: Mapping) -> list[Item]:
    """Every glued item of the two builds compared (:func:`_compared_entries`), those that
    measure time and differ marked :data:`TIMED` (a table whose differing cells all measure
    time too)."""
    items, prefixes = [], {}
    for item in _compared_entries(old, new, noise):
        if item.chapter not in prefixes:  # read once per chapter, not once per item
            prefixes[item.chapter] = timed_prefixes(old, item.chapter) + timed_prefixes(
                new, item.chapter
            )
        items.append(_timed(item, prefixes[item.chapter]))
    for table in [x for x in items if x.kind == "table" and x.status == CHANGED]:
        cells = [x for x in items if x.kind == "cell" and x.id.startswith(table.id + "[")]
        moved = [x for x in cells if x.status != UNCHANGED]
        # only cells moved (no text cell, no label: _table's note says that alone), all timings
        if (
            moved
            and all(x.status == TIMED for x in moved)
            and table.note == f"{len(moved)} numbers moved"
        ):
            table.status = TIMED
    return items


def _compared_entries(old: Build, new: Build, noise: Mapping) -> list[Item]:
    items = []
    for key in list(old.entries) + [k for k in new.entries if k not in old.entries]:
        chapter, name = key
        a, b = old.entries.get(key), new.entries.get(key)
        kind = (a or b)["kind"]
        if kind == "params" or kind == "text" and name.startswith("claim-"):
            continue  # parameters: per chapter; claims: in their own section
        if a is None or b is None:
            items.append(Item(chapter, name, kind, ONLY_NEW if a is None else ONLY_OLD))
            continue
        if a["kind"] != b["kind"]:
            items.append(
                Item(chapter, name, b["kind"], CHANGED, note=f"a {a['kind']}, now a {b['kind']}")
            )
            continue
        x, y = a.get("value"), b.get("value")
        if kind == "number":
            n = noise.get(f"{chapter}:{name}") or _number_noise(old, new, chapter, name)
            note = _note(x, y)
            base, _, end = name.rpartition("-")
            if end in ("low", "high") and (
                (chapter, base) in old.entries or (chapter, base) in new.entries
            ):
                note += f"; an end of {base}'s interval"
            items.append(Item(chapter, name, kind, classify(x, y, n), x, y, n, note))
        elif kind == "table":
            items += _table(chapter, name, a, b, noise)
        elif kind == "figure":
            fields = ("stable_name", "config_hash")
            moved = [f for f in fields if a.get(f) != b.get(f)]
            items.append(
                Item(
                    chapter,
                    name,
                    kind,
                    CHANGED if moved else UNCHANGED,
                    a.get("stable_name"),
                    b.get("stable_name"),
                    note="; ".join(f"{f} {a.get(f)} -> {b.get(f)}" for f in moved),
                )
            )
        else:  # text
            status = UNCHANGED if x == y else CHANGED
            note = _text_note(x, y) if status == CHANGED else ""
            items.append(Item(chapter, name, kind, status, note=note))
    return items


# -- comparing claims -----------------------------------------------------------------------------
def evidence_numbers(check: dict | None) -> dict[str, tuple[Any, tuple[float, float, str] | None]]:
    """label -> (value, (low, high, what the interval is) or None) of a recorded check's
    evidence; a yes/no observation as its bool."""
    if not check:
        return {}
    ev, rule = check.get("evidence") or {}, check.get("rule")
    out: dict[str, tuple[Any, tuple[float, float, str] | None]] = {}
    try:
        if rule in ("intervals_above", "within_margin"):
            for label, d, lo, hi in ev.get("tests", []):
                out[str(label)] = (d, (lo, hi, "95% interval"))
        elif rule in ("at_least", "at_most"):
            lo, hi = ev.get("low"), ev.get("high")
            bounds = (lo, hi, "interval") if _is_num(lo) and _is_num(hi) else None
            out[str(ev.get("label"))] = (ev.get("value"), bounds)
        elif rule == "seeds_above":
            from ..stats import seeds_difference, t_quantile

            a, b = ev.get("a") or [], ev.get("b") or []
            if a and b:
                diff, se = seeds_difference(a, b) if len(a) > 1 and len(b) > 1 else (None, None)
                if diff is None:
                    diff = sum(a) / len(a) - sum(b) / len(b)
                bounds = None
                if se is not None:
                    q = t_quantile(a, b)
                    bounds = (diff - q * se, diff + q * se, "95% t interval of the seeds")
                out[str(ev.get("label"))] = (diff, bounds)
        elif rule == "all_true":
            for label, ok in ev.get("observations", []):
                out[str(label)] = (ok, None)
        elif rule in ("across_rebuilds", "all_parts"):  # each part's evidence, named by it
            for rebuild, inner in ev.get("checks", []):
                for label, value in evidence_numbers(inner).items():
                    out[f"{rebuild}: {label}"] = value
    except (TypeError, ValueError):  # evidence of another shape: not compared number by number
        return {}
    return out


def _evidence(claim: str, chapter: str, a: dict | None, b: dict | None) -> tuple[list, str]:
    if not a or not b:
        return [], ""
    if a.get("rule") != b.get("rule"):
        return [], f"rule {a.get('rule')} -> {b.get('rule')}: evidence not compared"
    ea, eb = evidence_numbers(a), evidence_numbers(b)
    items = []
    for label in list(ea) + [k for k in eb if k not in ea]:
        iid = f"{claim}: {label}"
        if label not in eb or label not in ea:
            items.append(Item(chapter, iid, "evidence", ONLY_OLD if label in ea else ONLY_NEW))
            continue
        (x, bx), (y, by) = ea[label], eb[label]
        noise = None
        if bx:
            noise = Noise(
                min(bx[:2]), max(bx[:2]), f"the old build's {bx[2]} [{bx[0]:.4g}, {bx[1]:.4g}]"
            )
        elif by:
            noise = Noise(
                min(by[:2]),
                max(by[:2]),
                f"the new build's {by[2]} [{by[0]:.4g}, {by[1]:.4g}]",
                "new",
            )
        if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None:
            status = UNCHANGED if x == y else CHANGED
            items.append(Item(chapter, iid, "evidence", status, x, y))
        else:
            items.append(
                Item(chapter, iid, "evidence", classify(x, y, noise), x, y, noise, _note(x, y))
            )
    return items, ""


def _claims(old: Build, new: Build) -> list[ClaimChange]:
    out = []
    for claim in sorted(set(old.claims) | set(new.claims)):
        a, b = old.claims.get(claim), new.claims.get(claim)
        chapter = (b or a)["chapter"]
        if a is None or b is None:
            status = ONLY_NEW if a is None else ONLY_OLD
        else:
            status = UNCHANGED if a["verdict"] == b["verdict"] else CHANGED
        evidence, note = _evidence(claim, chapter, (a or {}).get("check"), (b or {}).get("check"))
        prefixes = timed_prefixes(old, chapter) + timed_prefixes(new, chapter)
        if prefixes and f"claim-{claim}".startswith(prefixes):  # a claim on a live timing
            status = TIMED if status == CHANGED else status
            for e in evidence:
                e.status = TIMED if e.status not in (UNCHANGED, ONLY_OLD, ONLY_NEW) else e.status
        out.append(
            ClaimChange(
                claim,
                chapter,
                status,
                a and a["verdict"],
                b and b["verdict"],
                a["reason"] if a else "",
                b["reason"] if b else "",
                evidence,
                note,
            )
        )
    return out


def _chapters(old: Build, new: Build) -> list[ChapterChange]:
    out = []
    for chapter in list(old.chapters) + [c for c in new.chapters if c not in old.chapters]:
        a, b = old.chapters.get(chapter), new.chapters.get(chapter)
        if a is None or b is None:
            c = a or b
            out.append(
                ChapterChange(
                    chapter,
                    ONLY_NEW if a is None else ONLY_OLD,
                    **{
                        ("new_" if a is None else "old_") + k: c[k]
                        for k in ("profile", "config_hash")
                    },
                )
            )
            continue
        pa, pb = a["params"] or {}, b["params"] or {}
        params = [
            (k, pa.get(k), pb.get(k))
            for k in list(pa) + [k for k in pb if k not in pa]
            if pa.get(k) != pb.get(k)
        ]
        differs = params or a["profile"] != b["profile"] or a["config_hash"] != b["config_hash"]
        out.append(
            ChapterChange(
                chapter,
                CHANGED if differs else UNCHANGED,
                a["profile"],
                b["profile"],
                a["config_hash"],
                b["config_hash"],
                params,
            )
        )
    return out


def same_profile(old: Build, new: Build) -> None:
    """Raise :class:`OtherProfile` unless both builds are of one and the same profile (a build
    recording no profile, made before records named one, is taken as it is)."""
    a, b = old.profiles(), new.profiles()
    for build, profiles in ((old, a), (new, b)):
        if len(profiles) > 1:
            mixed = "; ".join(f"{p} ({', '.join(chs)})" for p, chs in profiles.items())
            raise OtherProfile(
                f"not compared: {build.describe()} mixes profiles ({mixed}); only builds of one "
                "profile are compared"
            )
    if a and b and set(a) != set(b):
        raise OtherProfile(
            f"not compared: {old.describe()} is of profile {', '.join(a)}, {new.describe()} of "
            f"profile {', '.join(b)}; builds of different profiles differ in every number by "
            "design, so only builds of one profile are compared"
        )


def record_noise(old: Build, folder: Path | None) -> tuple[dict[str, Noise], list[str]]:
    """``({item id: Noise}, notes)``: the noise of each headline number that the rebuild
    spread's records in ``folder`` (:func:`rnnlib.book.spread_records.read_records`, the builds'
    profile, their code checked against the code of now) measure, around ``old``'s value
    (:func:`rnnlib.book.spread_records.noise_items`); ``notes`` say what was read and what left
    out. Nothing without a folder, a profile or records."""
    from .spread_records import HEADLINES, noise_items, read_records

    profiles = list(old.profiles())
    if folder is None or not Path(folder).is_dir() or len(profiles) != 1:
        return {}, []
    values: dict[str, float] = {}
    for (chapter, name), e in old.entries.items():
        if e["kind"] == "number" and _is_num(e.get("value")):
            values[f"{chapter}:{name}"] = float(e["value"])
        elif e["kind"] == "table":
            for (row, col), x in _cells(e.get("value")).items():
                if _is_num(x):
                    values[f"{name}[{row} | {col}]"] = float(x)
    hashes = {chapter: c.get("config_hash") for chapter, c in old.chapters.items()}
    noise, notes = {}, []
    for piece in HEADLINES:
        recs = read_records(Path(folder), profiles[0], piece)
        for item, (low, high, source) in noise_items(recs, piece, values, hashes).items():
            noise[item] = Noise(low, high, source)
        if recs.matching or recs.stale:
            notes.append(
                f"rebuild spread records of {piece}: {len(recs.matching)} read"
                + "".join(f"; {name} left out, {why}" for name, why in recs.stale.items())
            )
    return noise, notes


def compare(old: str | Path | Build, new: str | Path | Build, noise: Mapping | None = None):
    """The :class:`Comparison` of two builds of one profile (:class:`OtherProfile` otherwise).
    ``noise``: ``{item id: Noise}`` for numbers whose noise the builds do not state (a rebuild
    spread measured elsewhere); an item id is ``"<chapter>:<name>"`` for a glued number and
    ``"<table>[<row> | <column>]"`` for a cell."""
    old = old if isinstance(old, Build) else load_build(old)
    new = new if isinstance(new, Build) else load_build(new)
    same_profile(old, new)
    noise = dict(noise or {})
    return Comparison(
        old, new, _chapters(old, new), _claims(old, new), _entry_items(old, new, noise)
    )


# -- the report -----------------------------------------------------------------------------------
def _v(x: Any) -> str:
    if x is None:
        return "no value"
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _count(counter: Mapping[str, int], order: tuple[str, ...]) -> str:
    return ", ".join(f"{counter[k]} {k}" for k in order if counter.get(k)) or "none"


NUMBER_ORDER = (BEYOND, UNKNOWN, WITHIN, ONLY_OLD, ONLY_NEW, TIMED, UNCHANGED)


def _header(c: Comparison) -> list[str]:
    """Each build: where it was read from, its commit and machine, its warnings."""
    lines = []
    for side, b in (("old", c.old), ("new", c.new)):
        lines.append(f"{side}: {b.path}  (commit {b.commit})")
        if b.reference:
            built = b.reference.get("build") or {}
            empty = "from empty" if b.reference.get("from_empty") else "reusing artifacts"
            lines.append(
                f"     the published reference: profile {b.reference.get('profile')}, built "
                f"{built.get('finished') or 'at an unknown date'} ({empty})"
            )
        lines.append(f"     results from {b.results_from}; verdicts from {b.claims_from}")
        lines.append(f"     machine: {b.machine or 'not recorded (no results page)'}")
        lines += [f"     warning: {w}" for w in b.warnings]
    if c.old.machine and c.new.machine and c.old.machine != c.new.machine:
        lines.append(
            "The builds ran on different machines: networks trained from the same seed follow "
            "other float roundings there, so a number may move by more than the noise one build "
            "states for it (its rebuild spread, where glued, accounts for that)."
        )
    return lines + [""]


def _built_differently(c: Comparison) -> list[str]:
    """The chapters built with another profile, config hash or parameters, or in one build."""
    rerun = [ch for ch in c.chapters if ch.status != UNCHANGED]
    if not rerun:
        return ["Every chapter was built with the same profile and parameters (config hash)."]
    lines = ["Chapters built differently:"]
    for ch in rerun:
        if ch.status != CHANGED:
            lines.append(f"  {ch.chapter}: {ch.status}")
            continue
        what = []
        if ch.old_profile != ch.new_profile:
            what.append(f"profile {ch.old_profile} -> {ch.new_profile}")
        if ch.old_config_hash != ch.new_config_hash:
            what.append(f"config hash {ch.old_config_hash} -> {ch.new_config_hash}")
        lines.append(f"  {ch.chapter}: " + "; ".join(what or ["parameters differ"]))
        lines += [f"      {k}: {_v(x)} -> {_v(y)}" for k, x, y in ch.params]
    return lines


def _totals(c: Comparison) -> list[str]:
    """The counts of claims, numbers, evidence and other items, by status."""
    s = c.summary()
    lines = [
        f"Claims: {_count(s['claims'], (CHANGED, ONLY_OLD, ONLY_NEW, TIMED, UNCHANGED))} "
        f"(verdicts {'CHANGED' if c.verdicts_changed else 'all unchanged'})",
        f"Numbers (glued numbers and numeric table cells): {_count(s['numbers'], NUMBER_ORDER)}",
        f"Numbers of the claims' evidence: {_count(s['evidence'], NUMBER_ORDER)}",
    ]
    if s["others"]:
        lines.append(
            "Texts, tables, figures: " + ", ".join(f"{n} {k}" for k, n in s["others"].items())
        )
    if s["numbers"].get(UNKNOWN):
        lines.append(
            "  (noise unknown: the builds state no interval for that number, so whether it "
            "moved beyond its noise cannot be said)"
        )
    if any(x.status == TIMED for x in [*c.items, *c.claims]):
        lines.append(
            "  (measures time: what the chapters declare a timing (their `-timed` glue, names "
            "ending in -minutes or -seconds, columns naming a duration) differs with the "
            "machine's load; it is listed, not counted as a move)"
        )
    return lines


def _numbers(title: str, group: list[Item], statuses: tuple[str, ...]) -> list[str]:
    """The items of ``group`` with one of ``statuses``, by status, each old -> new."""
    group = [x for x in group if x.status in statuses]
    if not group:
        return []
    lines = [f"{title}:"]
    for status in statuses:
        sel = [x for x in group if x.status == status]
        if sel:
            lines.append(f"  {status} ({len(sel)}):")
        for x in sel:
            if status in (ONLY_OLD, ONLY_NEW):
                lines.append(f"    {x.id}")
                continue
            text = f"    {x.id}: {_v(x.old)} -> {_v(x.new)}"
            text += f"  ({x.note})" if x.note else ""
            text += f"  noise: {x.noise.source}" if x.noise else ""
            lines.append(text)
    return lines


def _chapter(c: Comparison, chapter: str, brief: bool) -> list[str]:
    """What differs in one chapter (nothing when nothing does); ``brief``: the changed verdicts
    and the numbers beyond their noise only."""
    claims = [x for x in c.claims if x.chapter == chapter]
    items = [x for x in c.items if x.chapter == chapter and x.status != UNCHANGED]
    changed = [x for x in claims if x.status != UNCHANGED and not (brief and x.status == TIMED)]
    evidence = [e for x in claims for e in x.evidence if e.status != UNCHANGED]
    statuses = (BEYOND,) if brief else NUMBER_ORDER + (CHANGED,)
    changed_head = (CHANGED, ONLY_OLD, ONLY_NEW, TIMED, UNCHANGED)
    numbers = [x for x in items if x.kind in ("number", "cell")]
    others = [] if brief else [x for x in items if x.kind not in ("number", "cell")]
    body = []
    for x in changed:
        body.append(f"  {x.claim}: {x.old or '—'} -> {x.new or '—'}  [{x.status}]")
        body += [f"      old: {x.old_reason}"] if x.old_reason else []
        body += [f"      new: {x.new_reason}"] if x.new_reason else []
    body += [f"  {x.claim}: {x.note}" for x in claims if x.note and not brief]
    body += _numbers("claims' evidence", evidence, statuses)
    body += _numbers("numbers", numbers, statuses)
    body += [f"  {x.kind} {x.id} {x.status}" + (f": {x.note}" if x.note else "") for x in others]
    if not body:
        return []
    counts = Counter(x.status for x in claims)
    head = [f"claims: {_count(counts, changed_head)}"] if claims else []
    return ["", f"== {chapter} =="] + head + body


def report(c: Comparison, brief: bool = False) -> str:
    """The comparison as plain text, grouped by chapter; ``brief``: of each chapter only the
    claims whose verdict changed and the numbers that moved beyond their noise."""
    lines = _header(c) + _built_differently(c) + _totals(c)
    chapters = dict.fromkeys([ch.chapter for ch in c.chapters] + [x.chapter for x in c.claims])
    for chapter in chapters:
        lines += _chapter(c, chapter, brief)
    return "\n".join(lines)


# -- the command ----------------------------------------------------------------------------------
def add_arguments(parser) -> None:
    parser.description = (
        "Compare two builds: the claims whose verdict changed, the numbers that moved (beyond "
        "their noise where a build states one), and the texts, tables and figures that changed."
        " Exit status 0: no verdict changed; 1: some did; 2: an input is not a build."
    )
    for name in ("old", "new"):
        parser.add_argument(
            name,
            type=Path,
            help=f"the {name} build: a results.json, a built HTML folder holding one, a "
            "build's output folder (holding results/) or the published reference "
            "(records/published)",
        )
    parser.add_argument(
        "--spread",
        type=Path,
        default=None,
        help="the rebuild spread's records, the headline numbers' noise (default: records/spread "
        "of the book holding the current folder; see rnnlib spread)",
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--brief",
        action="store_true",
        help="of each chapter, only the changed verdicts and the numbers beyond their noise",
    )


def main(args) -> int:
    try:
        old = load_build(args.old)
        spread = getattr(args, "spread", None)
        if spread is None and (root := find_book_root()) is not None:
            spread = root / "records" / "spread"
        noise, notes = record_noise(old, spread)
        result = compare(old, args.new, noise=noise)
        result.old.warnings.extend(notes)
    except BadInput as err:
        print(f"rnnlib compare: {err}", file=sys.stderr)
        return 2
    except OtherProfile as err:
        print(f"rnnlib compare: {err}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps(result.as_json(), ensure_ascii=False, indent=1, default=str))
    else:
        print(report(result, brief=args.brief))
    return 1 if result.verdicts_changed else 0
