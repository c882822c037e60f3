"""The recorded rebuild spread on the chapters' pages: the records of ``rnnlib spread`` in
``records/spread/`` that match the code of now (:func:`rnnlib.book.spread_records.read_records`,
each record's keys checked against those its replicate computes now with the chapter's own
parameters and cache, looking up only), beside the chapter's own value of each headline number.

* :func:`rnnsearch_spread` -- paper B's "-50" pair and RNNsearch-50⋆ (and the "-30" pair), by
  training seed;
* :func:`cho2014_spread` -- paper A's Baseline and +RNN rows and the scorer, by alignment;
* the representations chapter reads the same records of piece ``phrase`` for its own numbers
  on those alignments' scorers (:mod:`rnnlib.experiments.representations.recorded`), in two
  steps: :func:`read_pieces` before its claims, which it judges on every matching record, and
  :func:`spread_of` once its own values are measured.

Each returns a :class:`RecordedSpread`: the table of every headline number's spread and the list
of the records read (used, or stale and why), and their glue: ``<prefix>-spread-records`` and
``<prefix>-spread-list`` (the two as Markdown tables), ``<prefix>-spread-records-n`` (matching
records), ``<prefix>-spread-records-stale`` (stale ones), ``<prefix>-spread-records-text``
(their number and machines' number, in words), and, when the chapter has no further replicate of
its own, the ``<name>-spread`` and ``<name>-spread-n`` siblings of each glued headline number
(``rnnlib compare``'s noise; with further replicates of its own the chapter glues those).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..book.spread_records import (
    CHAPTER_PREFIXES,
    FOLDER,
    Records,
    current_keys,
    origin_words,
    read_records,
    spread_glue,
    spread_table,
)
from ..cache import ArtifactCache


@dataclass
class RecordedSpread:
    """The recorded spread of a chapter's headline numbers (see the module docstring)."""

    records: dict[str, Records]  # piece -> its records
    table: pd.DataFrame
    listing: pd.DataFrame
    glue: dict[str, Any] = field(default_factory=dict)


def markdown_table(table: pd.DataFrame, digits: int = 3) -> str:
    """``table`` (its index as the first column) as a Markdown table, numbers to ``digits``
    decimals, a missing one as an em dash."""

    def cell(x: Any) -> str:
        if isinstance(x, (float, np.floating)):
            return "—" if np.isnan(x) else f"{x:.{digits}f}"
        return str(x).replace("|", "/")

    head = [table.index.name or ""] + [str(c) for c in table.columns]
    rows = [
        [cell(i)] + [cell(x) for x in row[1:]] for i, row in zip(table.index, table.itertuples())
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def listing(records: Records, own: Sequence[dict] = ()) -> pd.DataFrame:
    """One row per record read: its file, replicate, commit, machine, and whether it is used
    (``used``), the build's own replicate (``own``, not counted again) or stale and why."""
    rows = [
        {
            "record": r["file"],
            "replicate": f"{r['unit']} {r['index']}",
            "commit": str(r.get("commit", ""))[:10],
            "machine": r["machine"],
            "used": "used" if k < len(records.matching) else "this build's own: not counted again",
        }
        for k, r in enumerate(list(records.matching) + list(own))
    ]
    rows += [
        {"record": name, "replicate": "", "commit": "", "machine": "", "used": f"stale: {why}"}
        for name, why in records.stale.items()
    ]
    cols = ["record", "replicate", "commit", "machine", "used"]
    return pd.DataFrame(rows, columns=cols).set_index("record")


def same_replicate(record: dict, own: dict[str, float]) -> bool:
    """Whether ``record`` is this build's own replicate read back (every headline number it
    shares with ``own`` equal to 9 significant digits): it adds no rebuild."""
    shared = [k for k in record["headline"] if k in own]
    return bool(shared) and all(
        abs(record["headline"][k] - own[k]) <= 1e-9 * max(1.0, abs(own[k])) for k in shared
    )


@dataclass
class Read:
    """The records a chapter read (:func:`read_pieces`): piece -> its :class:`Records` (the
    chapter's own replicates read back taken out of ``matching``) and those own replicates
    (``skipped``: listed, not counted again)."""

    records: dict[str, Records]
    skipped: list[dict] = field(default_factory=list)

    @property
    def matching(self) -> list[dict]:
        return [r for x in self.records.values() for r in x.matching]


#: glue prefix -> the chapter that reads the records (:data:`CHAPTER_PREFIXES` reversed)
CHAPTER_OF = {prefix: chapter for chapter, prefix in CHAPTER_PREFIXES.items()}


def read_pieces(
    chapter: str,
    pieces: Sequence[str],
    folder: Path,
    profile: str,
    probe,
    own: dict[str, float],
    own_indices: Sequence[int],
    config_hash: str | None = None,
) -> Read:
    """The records of ``pieces`` in ``folder`` that ``chapter`` reads
    (:func:`rnnlib.book.spread_records.read_records` with its ``config_hash``):
    ``probe(record)`` gives the keys of now of a record's replicate, ``own`` the chapter's
    value of each headline number it has (at least one), ``own_indices`` the seeds or
    alignments the chapter has itself (built or read from its cache), its own first: a record of
    a further one, or one equal to the chapter's values (its first read back), is the chapter's
    own replicate and is not counted again (a record of the first made elsewhere, with other
    values, is a rebuild: another machine rounds otherwise)."""
    out: dict[str, Records] = {}
    skipped: list[dict] = []
    further = list(own_indices[1:])  # the first: another machine's record of it is a rebuild

    def keys_now(rec: dict):  # a further replicate of the chapter's own is not counted: no probe
        return [] if rec.get("index") in further or probe is None else probe(rec)

    for piece in pieces:
        recs = read_records(folder, profile, piece, keys_now, chapter, config_hash)
        dups = [r for r in recs.matching if same_replicate(r, own) or r["index"] in further]
        skipped += dups
        recs.matching = [r for r in recs.matching if r not in dups]
        out[piece] = recs
    return Read(out, skipped)


def spread_of(
    prefix: str, read: Read, own: dict[str, float], siblings: bool = True
) -> RecordedSpread:
    """The :class:`RecordedSpread` of the records ``read`` beside the chapter's value of each
    headline number (``own``); ``siblings``: glue the ``-spread`` siblings (not when the chapter
    glues its own, having further replicates of its own)."""
    chapter = CHAPTER_OF[prefix]
    tables, glue = [], {}
    for piece, recs in read.records.items():
        table = spread_table(piece, recs, own, chapter)
        tables.append(table)
        if siblings:
            glue.update(spread_glue(piece, table))
    stale = {k: v for x in read.records.values() for k, v in x.stale.items()}
    every = Records(read.matching, stale)
    unit = "seed" if prefix == "rns" else "alignment"
    table, listed = pd.concat(tables), listing(every, read.skipped)
    glue[f"{prefix}-spread-records"] = markdown_table(table)
    glue[f"{prefix}-spread-list"] = markdown_table(listed) if len(listed) else "No record."
    glue[f"{prefix}-spread-records-n"] = len(every.matching)
    glue[f"{prefix}-spread-records-stale"] = len(every.stale)
    glue[f"{prefix}-spread-records-text"] = origin_words(every, unit)
    return RecordedSpread(read.records, table, listed, glue)


def recorded(
    prefix: str,
    pieces: Sequence[str],
    folder: Path,
    profile: str,
    probe,
    own: dict[str, float],
    own_indices: Sequence[int],
) -> RecordedSpread:
    """The :class:`RecordedSpread` of ``pieces`` from ``folder`` (:func:`read_pieces` by the
    chapter of ``prefix``, then :func:`spread_of`); with more than one own replicate no
    ``-spread`` sibling is glued here (the chapter glues its own)."""
    read = read_pieces(CHAPTER_OF[prefix], pieces, folder, profile, probe, own, own_indices)
    return spread_of(prefix, read, own, siblings=len(own_indices) < 2)


def cho2014_spread(
    cache: ArtifactCache, P, root: Path, replicates, folder: Path | None = None
) -> RecordedSpread:
    """The recorded alignments of piece ``phrase`` beside the chapter's first alignment (the
    first of ``replicates``, :func:`rnnlib.experiments.cho2014.rebuilds.alignment_replicates`),
    whose further ones (built, or read from its cache) are its own spread."""
    from .cho2014.rows import bleu_of
    from .spread_pieces import phrase_replicate

    first = replicates[0]
    b, r = bleu_of(first.base.runs, "test").mean(), bleu_of(first.rnn.runs, "test").mean()
    own = {
        "Baseline, test": float(b),
        "+RNN, test": float(r),
        "+RNN − Baseline, test": float(r - b),
        "scorer NLL per pair": float(first.rnn.scorer.artifact.extra["dev_nll"]),
    }

    def probe(rec: dict):
        return current_keys(cache, lambda: phrase_replicate(cache, P, rec["index"]))

    where = folder or Path(root) / FOLDER
    indices = [rep.alignment for rep in replicates]
    from .recorded_claims import rebuilds_read

    out = recorded("cho", ("phrase",), where, P.profile, probe, own, indices)
    values = alignment_values(replicates, out)  # C-A-T1-1's alignments, 0 without a record
    out.glue["cho-t1-rebuilds"] = rebuilds_read(values, CHO2014_REBUILT["C-A-T1-1"])
    return out


#: paper A's claims judged over the recorded alignments too: claim -> the comparisons (a, b) of
#: headline numbers it reads (:mod:`rnnlib.experiments.recorded_claims`): C-A-T1-1 reads +RNN
#: against the Baseline tuned on as long (equal tuning effort), on test in a record
CHO2014_REBUILT = {"C-A-T1-1": [("+RNN, test", "Baseline, tuned on, test")]}


def alignment_values(replicates, spread: RecordedSpread) -> list[tuple[str, dict[str, float]]]:
    """Every word alignment's test BLEU of the Baseline, +RNN and Baseline tuned on rows
    (means over the MERT seeds; the last where it was built) as ``(label, {"Baseline, test":
    ..., "+RNN, test": ..., "Baseline, tuned on, test": ...})``: the chapter's ``replicates``
    (:func:`rnnlib.experiments.cho2014.rebuilds.alignment_replicates`, its own first) and the
    records of piece ``phrase`` in ``spread`` that match this code. Each alignment is its own
    replicate: eflomal takes no seed, so two records of one index are two alignments."""
    from .cho2014.rows import TUNED_ON_ROW, bleu_of
    from .recorded_claims import RECORDED

    out = []
    for k, rep in enumerate(replicates):
        values = {
            "Baseline, test": float(bleu_of(rep.base.runs, "test").mean()),
            "+RNN, test": float(bleu_of(rep.rnn.runs, "test").mean()),
        }
        if rep.rnn.runs_tuned_on:
            values[f"{TUNED_ON_ROW}, test"] = float(bleu_of(rep.rnn.runs_tuned_on, "test").mean())
        out.append((f"alignment {rep.alignment}" + (" (this build)" if k == 0 else ""), values))
    for rec in spread.records.get("phrase", Records()).matching:
        label = f"alignment {rec['index']}{RECORDED}{str(rec.get('created', ''))[:16]}"
        out.append((label, {k: float(v) for k, v in rec["headline"].items()}))
    return out


def cho2014_with_rebuilds(checks: dict, replicates, spread: RecordedSpread) -> list:
    """Table 1's checks (``claim -> check``, :func:`rnnlib.experiments.cho2014.table_1.
    claims_to_record`: each verdict glued under its name) with the claims of
    :data:`CHO2014_REBUILT` judged over every alignment too
    (:func:`rnnlib.experiments.recorded_claims.with_rebuilds` on :func:`alignment_values`),
    floored at :data:`rnnlib.verdicts.BLEU_FLOOR`, where a record holds both rows (the
    chapter's own further alignments are judged on their runs by the chapter); the others as
    they are."""
    from .. import verdicts
    from .cho2014.table_1 import claims_to_record
    from .recorded_claims import recorded_labels, with_rebuilds

    values = alignment_values(replicates, spread)
    recorded = recorded_labels(values)
    return [
        with_rebuilds(c, values, CHO2014_REBUILT[c.claim], verdicts.BLEU_FLOOR, recorded=recorded)
        if c.claim in CHO2014_REBUILT
        else c
        for c in claims_to_record(checks)
    ]
