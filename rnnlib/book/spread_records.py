"""Records of the rebuild spread: one JSON file per replicate that ``rnnlib spread`` computed
(:mod:`rnnlib.experiments.spread_pieces`), kept in ``records/spread/``, and the book's reading
of them.

**A record** (``records/spread/<piece>-<unit>-<index>-<profile>-<time>.json``) holds: ``piece``,
``unit`` and ``index`` (``rnnsearch``, ``seed``, 2), the ``profile``, the ``commit`` (a record
is refused from a working tree with uncommitted changes unless asked, and then says
``"dirty": true``), the ``machine`` (:func:`rnnlib.machine.label`), the ``config_hash`` of
the chapter's parameters it ran with (as the chapter's page shows it), its ``headline`` numbers
(label -> value, :data:`HEADLINES`), every artifact it looked up or computed
(``artifacts``: kind, key, computed or read, seconds), the code hashes of each kind among them
(``code``: kind -> {file: hash}, :mod:`rnnlib.code_deps`), the wall seconds of each part
(``times``) and of the whole (``total_seconds``). A piece that also measures another chapter's
numbers outside the cache (piece ``phrase``: the representations chapter's, on the same
alignment's scorer) holds that chapter's stamp under ``chapters`` (:func:`chapter_stamp`: its
config hash, the code hashes of its measuring modules, :data:`MEASURED_BY`, and its claims'
checks on the replicate).

**Reading** (:func:`read_records`): a record of another profile is ignored (a profile's numbers
differ from another's by design); one of this profile is used only when it *matches the code of
now*, else it is listed as stale with why, never mixed in:

* its code hashes: a file a recorded kind depends on that has changed since (or left the
  package) makes it stale (:func:`rnnlib.code_deps.changed`);
* its keys: the keys the current code computes for that replicate (:func:`current_keys`: its
  computation run looking up only, up to the first artifact the cache lacks) must all be among
  the record's (a changed config, data or recipe gives another key);
* a record made from a dirty tree, or that does not parse, is stale too;
* for the chapter reading it (:func:`for_chapter`): a record holding none of its numbers, or,
  for a chapter of :data:`MEASURED_BY`, whose stamp of it is missing (made before the piece
  measured it), of other parameters or of other measuring code, is stale for that chapter (and
  may still be read by another).

The spread of a headline number (:func:`spread_table`) is over the matching records and the
build's own value; its standard deviation is what ``rnnlib compare`` reads as the number's noise
(:func:`spread_glue`, :func:`noise_items`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from .. import code_deps
from ..cache import ArtifactCache, NotCached

#: piece -> (the chapter whose parameters it runs with, the replicate's unit)
PIECES = {
    "rnnsearch": ("rnnsearch", "seed"),
    "rnnsearch-30": ("rnnsearch", "seed"),
    "phrase": ("cho2014", "alignment"),
}

#: piece -> headline label -> where the book shows that number: ``(chapter, glue name)`` for a
#: glued number, ``(chapter, "<table>[<row> | <column>]")`` for a table cell (the item ids of
#: :mod:`rnnlib.book.compare`)
HEADLINES: dict[str, dict[str, tuple[str, str]]] = {
    "rnnsearch": {
        "RNNsearch-50, All": ("rnnsearch", "rns-bleu-rnnsearch-50"),
        "RNNencdec-50, All": ("rnnsearch", "rns-bleu-rnnencdec-50"),
        "RNNsearch-50⋆, All": ("rnnsearch", "rns-bleu-rnnsearch-50star"),
        "RNNsearch-50, No UNK": ("rnnsearch", "rns-bleu-nounk-rnnsearch-50"),
        "RNNencdec-50, No UNK": ("rnnsearch", "rns-bleu-nounk-rnnencdec-50"),
        "RNNsearch-50⋆, No UNK": ("rnnsearch", "rns-bleu-nounk-rnnsearch-50star"),
        "RNNsearch-50, dev NLL per token": ("rnnsearch", "rns-devtok-rnnsearch-50"),
        "RNNencdec-50, dev NLL per token": ("rnnsearch", "rns-devtok-rnnencdec-50"),
        "RNNsearch-50⋆, dev NLL per token": ("rnnsearch", "rns-devtok-rnnsearch-50star"),
    },
    "rnnsearch-30": {
        "RNNsearch-30, All": ("rnnsearch", "rns-bleu-rnnsearch-30"),
        "RNNencdec-30, All": ("rnnsearch", "rns-bleu-rnnencdec-30"),
        "RNNsearch-30, No UNK": ("rnnsearch", "rns-bleu-nounk-rnnsearch-30"),
        "RNNencdec-30, No UNK": ("rnnsearch", "rns-bleu-nounk-rnnencdec-30"),
        "RNNsearch-30, dev NLL per token": ("rnnsearch", "rns-devtok-rnnsearch-30"),
        "RNNencdec-30, dev NLL per token": ("rnnsearch", "rns-devtok-rnnencdec-30"),
    },
    "phrase": {
        "Baseline, test": ("cho2014", "cho-table1[Baseline | test]"),
        "+RNN, test": ("cho2014", "cho-table1[+RNN | test]"),
        "+RNN − Baseline, test": ("cho2014", "cho-gain-test"),
        "scorer NLL per pair": ("cho2014", "cho-best-dev-nll"),
        # the representations chapter on the same alignment's scorer: its rebuilds table's row
        "scorer dev NLL per pair": ("representations", "rep-floor-network-nll"),
        "word: trained": ("representations", "rep-word-trained"),
        "word: trained − bag of words": ("representations", "rep-word-bow-gap"),
        "sem: trained": ("representations", "rep-sem-trained"),
        "sem: trained − bag of words": ("representations", "rep-sem-bow-gap"),
        "pat: trained": ("representations", "rep-pat-trained"),
        "pat: trained − bag of words": ("representations", "rep-pat-bow-gap"),
        "tanh − GRU, dev NLL per pair": ("representations", "rep-abl-gap"),
    },
}

#: chapter -> the modules (as :data:`rnnlib.code_deps.SOURCES` names them) that compute its
#: recorded numbers outside any cached artifact (in the replicate's process, as the chapter's
#: cells do), so that no kind's code hash covers them: a record holds their hashes, the
#: chapter's config hash and its claims' checks (:func:`chapter_stamp`), and is stale for that
#: chapter when one of them differs now (:func:`chapter_stale`)
MEASURED_BY: dict[str, tuple[str, ...]] = {
    "representations": (
        "experiments/representations/",
        "experiments/cho2014/controls.py",
        "smt/rnn_scorer.py",
        "stats.py",
        "verdicts.py",
    ),
}

#: the record format (a record of another format is stale)
FORMAT = 1
#: where the records live, from the book's root
FOLDER = Path("records") / "spread"

#: ``(kind, key)`` of an artifact
Key = tuple[str, str]


def record_name(piece: str, index: int, profile: str, when: datetime) -> str:
    """``<piece>-<unit>-<index>-<profile>-<YYYYmmddTHHMMSS>.json``: several machines may record
    one replicate."""
    unit = PIECES[piece][1]
    return f"{piece}-{unit}-{index}-{profile}-{when.strftime('%Y%m%dT%H%M%S')}.json"


def artifacts_of(events: Sequence[dict]) -> list[dict]:
    """The artifacts of a cache's build log ``events`` (:attr:`rnnlib.cache.ArtifactCache.
    events`), each once: kind, key, whether this run computed it, and its seconds."""
    out: dict[Key, dict] = {}
    for e in events:
        if e.get("missing"):
            continue
        k = (e["kind"], e["key"])
        seen = out.setdefault(k, {"kind": k[0], "key": k[1], "computed": False, "seconds": 0.0})
        seen["computed"] = seen["computed"] or not e.get("hit", True)
        seen["seconds"] = round(seen["seconds"] + float(e.get("seconds") or 0.0), 3)
    return list(out.values())


def from_sidecars(arts: list[dict], cache: ArtifactCache, since: datetime) -> list[dict]:
    """``arts`` (:func:`artifacts_of`) completed from their sidecars in ``cache``: ``computed``
    when the artifact was created at or after ``since`` (also those computed in worker
    processes, whose builds the calling process's log does not hold), then with the sidecar's
    wall seconds, and ``created``."""
    out = []
    for a in arts:
        try:
            meta = json.loads((cache.final_path(a["kind"], a["key"]) / "meta.json").read_text())
            created = datetime.fromisoformat(meta["created"])
        except (OSError, ValueError, KeyError):
            out.append(a)
            continue
        computed = created >= since.replace(microsecond=0)
        seconds = float(meta.get("wall_time_s") or 0.0) if computed else a["seconds"]
        out.append(
            {**a, "computed": computed, "seconds": round(seconds, 3), "created": meta["created"]}
        )
    return out


def make_record(
    piece: str,
    index: int,
    profile: str,
    headline: dict[str, float],
    events: Sequence[dict],
    times: dict[str, float],
    commit: str,
    machine: str,
    total_seconds: float,
    when: datetime | None = None,
    arts: list[dict] | None = None,
    chapters: dict[str, dict] | None = None,
) -> dict:
    """A record (see the module docstring) of replicate ``index`` of ``piece``; ``arts``: its
    artifacts (default :func:`artifacts_of` ``events``); ``chapters``: chapter -> its
    :func:`chapter_stamp`, for the chapters of :data:`MEASURED_BY` whose numbers it holds."""
    arts = artifacts_of(events) if arts is None else arts
    kinds = sorted({a["kind"] for a in arts})
    code = {k: h for k in kinds if (h := code_deps.code_hashes(k)) is not None}
    when = when or datetime.now(timezone.utc)
    dirty = commit.endswith("+dirty")
    return {
        "format": FORMAT,
        "piece": piece,
        "unit": PIECES[piece][1],
        "index": index,
        "profile": profile,
        "commit": commit.removesuffix("+dirty"),
        "dirty": dirty,
        "machine": machine,
        "created": when.isoformat(timespec="seconds"),
        "headline": headline,
        "artifacts": arts,
        "code": code,
        "code_scheme": code_deps.SCHEME,
        "times": times,
        "total_seconds": round(total_seconds, 1),
        "chapters": chapters or {},
    }


def write_record(folder: Path, record: dict) -> Path:
    """Write ``record`` into ``folder`` under :func:`record_name`; never over another."""
    when = datetime.fromisoformat(record["created"])
    path = Path(folder) / record_name(record["piece"], record["index"], record["profile"], when)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise FileExistsError(f"{path} exists: a record is never overwritten")
    text = json.dumps(record, indent=1, ensure_ascii=False, default=_plain)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def _plain(x: Any) -> Any:
    """A numpy scalar or array in a check's evidence as plain JSON."""
    if isinstance(x, (np.generic, np.ndarray)):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def chapter_stamp(chapter: str, config_hash: str, checks: dict | None = None) -> dict:
    """What a record says of ``chapter``'s numbers computed outside the cache
    (:data:`MEASURED_BY`): the chapter's ``config_hash`` (its parameters, as its page shows
    it), the code hashes of its measuring modules (``code``) and its claims' checks on the
    replicate (``checks``, as the chapter reads them back to judge each claim on it)."""
    files = code_deps.expand(MEASURED_BY[chapter])
    return {
        "config_hash": config_hash,
        "code": {f: code_deps.file_hash(f) for f in files},
        "checks": checks or {},
    }


def chapter_stale(record: dict, chapter: str, config_hash: str | None = None) -> str | None:
    """Why ``record``'s numbers of ``chapter`` (one of :data:`MEASURED_BY`) are not those the
    chapter computes now (``None`` when they are): it holds none (made before the piece
    measured them), they were measured with other parameters (``config_hash``: the chapter's
    now; ``None``: not checked) or by other code."""
    stamp = (record.get("chapters") or {}).get(chapter)
    if not isinstance(stamp, dict):
        return f"it holds no numbers of the {chapter} chapter (made before its piece measured them)"
    if config_hash is not None and stamp.get("config_hash") != config_hash:
        return (
            f"the {chapter} chapter's parameters moved (config {stamp.get('config_hash')}, "
            f"now {config_hash})"
        )
    now = {f: code_deps.file_hash(f) for f in code_deps.expand(MEASURED_BY[chapter])}
    changed = code_deps.changed(stamp.get("code") or {}, now)
    if changed:
        what = code_deps.describe(changed)
        return f"the code of the {chapter} chapter's measures changed: {what}"
    return None


# -- reading ---------------------------------------------------------------------------------------
@dataclass
class Records:
    """The records of one profile (and piece): ``matching`` (the records, each with its file
    name under ``"file"``), ``stale`` (file name -> why) and ``other_profile`` (file names)."""

    matching: list[dict] = field(default_factory=list)
    stale: dict[str, str] = field(default_factory=dict)
    other_profile: list[str] = field(default_factory=list)

    @property
    def machines(self) -> list[str]:
        return sorted({r["machine"] for r in self.matching})


def current_keys(cache: ArtifactCache, make: Callable[[], Any]) -> list[Key]:
    """The ``(kind, key)`` of every artifact ``make`` (a replicate's computation) looks up on
    ``cache`` with the code and configs of now, up to and including the first one the cache
    lacks: ``make`` is run under :meth:`~rnnlib.cache.ArtifactCache.lookup_only`, so nothing is
    computed."""
    start = len(cache.events)
    missing: list[Key] = []
    try:
        with cache.lookup_only():
            make()
    except NotCached as err:
        missing = [(err.kind, err.key)]
    hits = [(e["kind"], e["key"]) for e in cache.events[start:] if e.get("hit")]
    return list(dict.fromkeys(hits + missing))


def why_stale(record: dict, keys_now: Iterable[Key] | None = None) -> str | None:
    """Why ``record`` does not match the code of now (``None`` when it does): its format, a
    dirty tree, changed code of a kind it used, or a key of now (``keys_now``, from
    :func:`current_keys`) it lacks."""
    if record.get("format") != FORMAT:
        return f"record format {record.get('format')!r}, not {FORMAT}"
    if record.get("dirty"):
        return "made from a working tree with uncommitted changes"
    if record.get("code_scheme") != code_deps.SCHEME:
        return "its code hashes are of another scheme"
    for kind, files in sorted((record.get("code") or {}).items()):
        now = code_deps.code_hashes(kind)
        if now is None:
            return f"kind {kind} depends on no code map now"
        changed = code_deps.changed(files, now)
        if changed:
            return f"the code of {kind} changed: {code_deps.describe(changed)}"
    recorded = {(a["kind"], a["key"]) for a in record.get("artifacts", [])}
    lacking = [k for k in keys_now or () if k not in recorded]
    if lacking:
        kind, key = lacking[0]
        return f"the code of now computes {kind}/{key}, which it did not use (its config moved)"
    return None


def read_records(
    folder: Path,
    profile: str,
    piece: str | None = None,
    keys_now: Callable[[dict], Iterable[Key]] | None = None,
    chapter: str | None = None,
    config_hash: str | None = None,
) -> Records:
    """The records in ``folder`` of ``profile`` (and ``piece``), sorted by file name, sorted
    into matching and stale (:func:`why_stale`; ``keys_now(record)``: the keys of now of its
    replicate, :func:`current_keys`; without it only the code hashes are checked). With
    ``chapter`` (the chapter that reads them), a record is stale too when that chapter's
    numbers in it are not the chapter's of now (:func:`chapter_stale`, its ``config_hash``),
    or, for a chapter outside :data:`MEASURED_BY`, when it holds none of them."""
    out = Records()
    for path in sorted(Path(folder).glob("*.json")):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rec, dict) or not isinstance(rec.get("headline"), dict):
                raise ValueError("no headline")
        except (OSError, ValueError) as err:
            out.stale[path.name] = f"not a record ({err})"
            continue
        if rec.get("profile") != profile:
            out.other_profile.append(path.name)
            continue
        if piece is not None and rec.get("piece") != piece:
            continue
        why = why_stale(rec, keys_now(rec) if keys_now else None)
        if not why and chapter is not None:
            why = for_chapter(rec, chapter, config_hash)
        if why:
            out.stale[path.name] = why
        else:
            out.matching.append({**rec, "file": path.name})
    return out


def for_chapter(record: dict, chapter: str, config_hash: str | None = None) -> str | None:
    """Why ``record`` gives ``chapter`` nothing to read (``None`` when it does):
    :func:`chapter_stale` for a chapter of :data:`MEASURED_BY`, else that it holds none of the
    chapter's headline numbers."""
    if chapter in MEASURED_BY:
        return chapter_stale(record, chapter, config_hash)
    mine = chapter_labels(record.get("piece", ""), chapter)
    if not any(label in record["headline"] for label in mine):
        return f"it holds none of the {chapter} chapter's headline numbers"
    return None


def chapter_labels(piece: str, chapter: str | None = None) -> list[str]:
    """The headline labels of ``piece`` (:data:`HEADLINES`) that ``chapter`` shows (all with
    ``None``)."""
    return [k for k, (c, _) in HEADLINES.get(piece, {}).items() if chapter in (None, c)]


# -- the spread ----------------------------------------------------------------------------------
def spread_table(
    piece: str, records: Records, own: dict[str, float] | None = None, chapter: str | None = None
) -> pd.DataFrame:
    """One row per headline number of ``piece`` (:data:`HEADLINES`; with ``chapter``, those
    that chapter shows): this build's value (``own``), the number of replicates (the matching
    records and, with ``own``, this build), their mean, standard deviation (sample, NaN below
    2), min and max."""
    rows = []
    for label in chapter_labels(piece, chapter):
        values = [float(r["headline"][label]) for r in records.matching if label in r["headline"]]
        if own is not None and label in own:
            values.append(float(own[label]))
        v = np.array(values, dtype=float)
        rows.append(
            {
                "number": label,
                "this build": np.nan if own is None else own.get(label, np.nan),
                "n": len(v),
                "mean": v.mean() if len(v) else np.nan,
                "sd": v.std(ddof=1) if len(v) > 1 else np.nan,
                "min": v.min() if len(v) else np.nan,
                "max": v.max() if len(v) else np.nan,
            }
        )
    return pd.DataFrame(rows).set_index("number")


def spread_glue(piece: str, table: pd.DataFrame) -> dict[str, tuple[float, int | None]]:
    """The siblings ``<name>-spread`` (sd, 3 digits) and ``<name>-spread-n`` of each glued
    headline number of ``piece`` with at least 2 replicates in ``table`` (:func:`spread_table`),
    which ``rnnlib compare`` reads as its noise (table cells have no siblings)."""
    out: dict[str, tuple[float, int | None]] = {}
    for label, (_, name) in HEADLINES[piece].items():
        if "[" in name or label not in table.index or table.loc[label, "n"] < 2:
            continue
        out[f"{name}-spread"] = (float(table.loc[label, "sd"]), 3)
        out[f"{name}-spread-n"] = (int(table.loc[label, "n"]), None)
    return out


def origin_words(records: Records, unit: str) -> str:
    """How many replicates the records add and from how many machines, in words (Markdown, at
    most 80 characters)."""
    n, m = len(records.matching), len(records.machines)
    stale = f"; {len(records.stale)} stale, left out" if records.stale else ""
    if not n:
        return f"no recorded {unit} matches this code{stale}"
    units, machines = unit + ("s" if n > 1 else ""), "machine" + ("s" if m > 1 else "")
    return f"{n} recorded {units} from {m} {machines}{stale}"


def noise_items(
    records: Records,
    piece: str,
    old: dict[str, float],
    config_hashes: dict[str, str] | None = None,
) -> dict[str, tuple]:
    """For ``rnnlib compare``: item id -> ``(low, high, source)`` of each headline number of
    ``piece`` with at least 2 matching records, around its value ``old`` (by item id:
    ``"<chapter>:<name>"`` or a table cell ``"<table>[<row> | <column>]"``). Two rebuilds
    differ by a draw of sd times sqrt(2): the interval is ``old`` ± t(0.975, n - 1) sqrt(2) sd,
    sd over the records. A number of a chapter of :data:`MEASURED_BY` reads only the records
    whose numbers of it are the chapter's of now (:func:`chapter_stale`; ``config_hashes``:
    chapter -> its config hash in the build compared)."""
    from scipy.stats import t

    out = {}
    hashes = config_hashes or {}
    for label, (chapter, name) in HEADLINES[piece].items():
        item = name if "[" in name else f"{chapter}:{name}"
        recs = [
            r
            for r in records.matching
            if chapter not in MEASURED_BY or not chapter_stale(r, chapter, hashes.get(chapter))
        ]
        vals = [float(r["headline"][label]) for r in recs if label in r["headline"]]
        if len(vals) < 2 or item not in old or not math.isfinite(old[item]):
            continue
        sd = float(np.std(vals, ddof=1))
        if not sd > 0:
            continue
        half = float(t.ppf(0.975, len(vals) - 1)) * math.sqrt(2) * sd
        source = f"the recorded rebuild spread: sd {sd:.3g} over {len(vals)} records ({piece})"
        out[item] = (old[item] - half, old[item] + half, source)
    return out


#: the chapters that read the records, and the glue prefix of their recorded-spread items
#: (:mod:`rnnlib.experiments.spread_book`)
CHAPTER_PREFIXES = {"rnnsearch": "rns", "cho2014": "cho", "representations": "rep"}


def results_glue(entries: Iterable[dict]) -> dict[str, Any]:
    """For the results page, from the chapters' records (``entries``,
    :class:`rnnlib.book.results.Results`): per chapter of :data:`CHAPTER_PREFIXES`, its table of
    each headline number's recorded spread (``res-spread-<chapter>``, a Markdown table, or a line
    saying the chapter did not show one), and ``res-spread-n`` / ``res-spread-stale``, the records
    the chapters used and left out in all."""
    values = {(e["chapter"], e["name"]): e.get("value") for e in entries}
    out: dict[str, Any] = {}
    used = stale = 0
    for chapter, prefix in CHAPTER_PREFIXES.items():
        table = values.get((chapter, f"{prefix}-spread-records"))
        out[f"res-spread-{chapter}"] = table or f"Chapter {chapter} shows no recorded spread."
        used += int(values.get((chapter, f"{prefix}-spread-records-n")) or 0)
        stale += int(values.get((chapter, f"{prefix}-spread-records-stale")) or 0)
    out["res-spread-n"] = used
    out["res-spread-stale"] = stale
    return out
