"""The word alignments that ``rnnlib spread phrase`` measured apart (``records/spread/``), read
against this code beside the chapter's own (:mod:`rnnlib.experiments.spread_book`).

A record of piece ``phrase`` holds, beside paper A's Table 1 rows, this chapter's measures on
that alignment's phrase scorer: its row of the rebuilds table (:func:`.rebuilds.row_of`) and
its claims' checks (:func:`.rebuilds.recorded_checks`), with the chapter's config hash and the
code hashes of its measuring modules (:func:`rnnlib.book.spread_records.chapter_stamp`). A
record is read when its keys match those the chapter's :func:`.rebuilds.rebuild` of that
alignment looks up now (:func:`.rebuilds.rebuild_runs`: its scorer's chain, then the gating
ablation's tanh network and GRU; looking up only, without the measures) and its
stamp matches the chapter's parameters and code of now; else it is listed as stale with why.
Each matching record is a further alignment (:class:`.rebuilds.RecordedRebuild`): a row of the
rebuilds table, and one more rebuild on which every claim is judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ...book.spread_records import FOLDER, current_keys
from ..spread_book import Read, read_pieces, spread_of
from .floor import LearnedFloor
from .rebuilds import Rebuild, RecordedRebuild, from_record, rebuild_runs
from .setting import Params

CHAPTER = "representations"


@dataclass
class Apart:
    """The records the chapter read (``read``) and its matching ones as further alignments
    (``rebuilds``)."""

    read: Read
    rebuilds: list[RecordedRebuild] = field(default_factory=list)


def alignments_apart(
    cache,
    corpus,
    cho: dict[str, Any],
    P: Params,
    config_hash: str,
    floor: LearnedFloor,
    others: Sequence[Rebuild],
    root: Path,
    folder: Path | None = None,
) -> Apart:
    """The records of piece ``phrase`` in ``folder`` (default the book's ``records/spread``)
    whose keys, code and this chapter's stamp (``config_hash``: the chapter's, as its page shows
    it) are this code's, as :class:`~.rebuilds.RecordedRebuild`; ``cho``, ``P``: the cho2014
    chapter's parameters and this chapter's; ``floor``: the chapter's first alignment's, whose
    scorer NLL tells its own replicate read back (not counted again); ``others``: the further
    alignments the chapter built or read from its cache (a record of one is not counted
    again)."""

    def probe(rec: dict):
        return current_keys(cache, lambda: rebuild_runs(cache, corpus, cho, P, rec["index"]))

    own = {"scorer dev NLL per pair": floor.network_nll}
    indices = [1] + [r.alignment for r in others]
    where = folder or Path(root) / FOLDER
    read = read_pieces(CHAPTER, ("phrase",), where, P.profile, probe, own, indices, config_hash)
    reps = [from_record(r, r["chapters"][CHAPTER]["checks"]) for r in read.matching]
    return Apart(read, reps)


def spread(apart: Apart, own: dict[str, float]) -> dict[str, Any]:
    """The glue of the recorded spread (:func:`rnnlib.experiments.spread_book.spread_of`,
    prefix ``rep``): each headline number's spread over the matching records and the chapter's
    first alignment (``own``: its row, :func:`.rebuilds.row_of`), and the records read. No
    ``-spread`` sibling: the chapter glues those over every alignment
    (:func:`.rebuilds.numbers`)."""
    return spread_of("rep", apart.read, own, siblings=False).glue
