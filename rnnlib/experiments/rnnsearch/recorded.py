"""The seeds of the "-50" and "-30" pairs that ``rnnlib spread`` recorded apart
(``records/spread/``), read against this code beside the chapter's own seed
(:mod:`rnnlib.experiments.spread_book`)."""

from __future__ import annotations

from pathlib import Path

from ...book.spread_records import FOLDER, current_keys
from ..spread_book import RecordedSpread, recorded


def rnnsearch_spread(ex, tr, sr, runs=None, folder: Path | None = None) -> RecordedSpread:
    """The recorded seeds of pieces ``rnnsearch`` and ``rnnsearch-30`` beside the chapter's
    translations ``tr`` (of its seed) and, with ``runs`` (:class:`rnnlib.experiments.rnnsearch.
    training.Runs`), its models' dev NLL per token; ``sr``: its further seeds
    (:class:`rnnlib.experiments.rnnsearch.seeds.SeedRuns`: built, or read from its cache), with
    which it glues its own spread; a record of one of those seeds is not counted again."""
    from ...bleu import corpus_bleu
    from .choices import best_nll
    from .setting import SUBSETS, shown
    from ..spread_pieces import MODELS, network_replicate

    names = ("RNNsearch-50*",) + MODELS["rnnsearch"] + MODELS["rnnsearch-30"]
    own = {
        f"{shown(n)}, {label}": float(corpus_bleu(tr.of(n, s), tr.refs[s]).score)
        for n in names
        for s, label in SUBSETS.items()
    }
    for n in names if runs is not None else ():
        own[f"{shown(n)}, dev NLL per token"] = best_nll(runs.runs[n])

    def probe(rec: dict):
        return current_keys(ex.cache, lambda: network_replicate(ex, rec["piece"], rec["index"]))

    where = folder or Path(ex.root) / FOLDER
    pieces = ("rnnsearch", "rnnsearch-30")
    return recorded("rns", pieces, where, ex.P.profile, probe, own, sr.seeds)
