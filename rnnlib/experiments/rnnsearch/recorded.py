"""The seeds of the "-50" and "-30" pairs that ``rnnlib spread`` recorded apart
(``records/spread/``), read against this code beside the chapter's own seed
(:mod:`rnnlib.experiments.spread_book`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...book.spread_records import FOLDER, Records, current_keys
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
    out = recorded("rns", pieces, where, ex.P.profile, probe, own, sr.seeds)
    from ..recorded_claims import rebuilds_read

    reps = seed_replicates(tr, sr, out)  # Table 1's seeds, 0 without a record
    tests = [t for ts in table_1_tests(tr).values() for t in ts]
    out.glue["rns-t1-rebuilds"] = rebuilds_read(reps, tests)
    return out


def seed_replicates(tr, sr, spread: RecordedSpread) -> list[tuple[str, dict[str, float]]]:
    """Every training seed's Table 1 BLEU as ``(label, {"<model>, <All|No UNK>": BLEU})``
    (:mod:`rnnlib.experiments.recorded_claims`), one replicate per seed: the chapter's seeds
    (``sr``, its own first; a further seed's "-30" pair only where it has its own) and the
    records of ``spread`` that match this code. The seed is the independent unit: the numbers
    of one seed (a record of piece ``rnnsearch`` and one of ``rnnsearch-30``, two records of one
    piece, or a record of the chapter's own seed made on another machine) are averaged, number
    by number, into one replicate; a label names the records it read ("recorded ...")."""
    from ...bleu import corpus_bleu
    from ..recorded_claims import RECORDED
    from .seeds import SEED_MODELS, SEED_SHORT
    from .setting import SUBSETS, shown

    seeds: dict[int, dict] = {}
    for k, seed in enumerate(sr.seeds):
        names = SEED_MODELS + (SEED_SHORT if k == 0 or sr.short_own[k] else ())
        values = {}
        for n in names:
            for s, label in SUBSETS.items():
                hyps = tr.of(n, s) if k == 0 else sr.hyps[(n, s)][k]
                values[f"{shown(n)}, {label}"] = float(corpus_bleu(hyps, tr.refs[s]).score)
        seeds[seed] = {"own": k == 0, "created": [], "values": [values]}
    for piece in ("rnnsearch", "rnnsearch-30"):
        for rec in spread.records.get(piece, Records()).matching:
            entry = seeds.setdefault(rec["index"], {"own": False, "created": [], "values": []})
            entry["created"].append(str(rec.get("created", ""))[:16])
            entry["values"].append({k: float(v) for k, v in rec["headline"].items()})
    out = []
    for seed, entry in seeds.items():
        keys = dict.fromkeys(k for v in entry["values"] for k in v)
        mean = {k: float(np.mean([v[k] for v in entry["values"] if k in v])) for k in keys}
        label = f"seed {seed}" + (" (this build)" if entry["own"] else "")
        if entry["created"]:
            label += f"{RECORDED}{' and '.join(entry['created'])}"
        out.append((label, mean))
    return out


def table_1_claims(ex, tr, sr, tests: dict, spread: RecordedSpread) -> list:
    """Table 1's claims as the chapter records them: each on the chapter's seed
    (:func:`~.table_1.claims` with its ``tests``, :func:`~.table_1.paired_tests`), judged on
    every further seed of ``sr`` (:func:`~.seeds.across_seeds` on :func:`~.table_1.by_seed`),
    and those that compare two models (:func:`~.table_1.comparisons`) judged over every seed
    too, the records' included (:func:`with_rebuilds`)."""
    from . import table_1
    from .seeds import across_seeds

    by_seed = table_1.by_seed(ex, tr, sr, tests)  # every claim but C-B-T1-1 on every seed
    judged = across_seeds(table_1.claims(ex, tr, tests), by_seed, ex.P.seed)
    return with_rebuilds(judged, tr, sr, spread)


def table_1_tests(tr) -> dict[str, list[tuple[str, str]]]:
    """``claim -> [(a, b), ...]``: the comparisons of two models of Table 1's claims
    (:func:`~.table_1.comparisons`) as headline numbers, on All and No UNK."""
    from .setting import SUBSETS, shown
    from .table_1 import comparisons

    tests: dict[str, list[tuple[str, str]]] = {}
    for claim, a, b in comparisons(tr):
        for label in SUBSETS.values():
            tests.setdefault(claim, []).append((f"{shown(a)}, {label}", f"{shown(b)}, {label}"))
    return tests


def with_rebuilds(checks, tr, sr, spread: RecordedSpread) -> list:
    """Table 1's claims (``checks``: :class:`rnnlib.book.claims.ClaimCheck`) that compare two
    models (:func:`table_1_tests`) judged over every seed too
    (:func:`rnnlib.experiments.recorded_claims.with_rebuilds` on :func:`seed_replicates`), on
    All and No UNK, floored at :data:`rnnlib.verdicts.BLEU_FLOOR`: a comparison that no record
    holds (the chapter judges its own seeds on their translations) or with fewer than two seeds
    holding both models (the phrase-based system has one) is left out."""
    from ... import verdicts
    from ..recorded_claims import recorded_labels
    from ..recorded_claims import with_rebuilds as judged

    replicates = seed_replicates(tr, sr, spread)
    recorded, tests = recorded_labels(replicates), table_1_tests(tr)
    return [
        judged(c, replicates, tests[c.claim], verdicts.BLEU_FLOOR, recorded=recorded)
        if c.claim in tests
        else c
        for c in checks
    ]
