"""The source phrases of A Tables 2-3, drawn from the whole phrase table as the paper's were:
long sources (at least ``min_source_words`` words) seen often (``frequent_count`` times or more)
or rarely (``rare_count`` times or fewer) in training, each with at least two targets in the
table (with one, every model ranks it first), ``long_sources`` of each group drawn with the
chapter's seed; every target of each scored by the trained network and by the untrained one
(the controls' network), as the ``cho2014/long_sources`` artifact (``pairs.json``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ...cache import Artifact, ArtifactCache
from ...smt.rnn_scorer import encode_pairs, score_pairs
from .setting import Params

#: sources with fewer targets than this are not drawn: with one, the network and the
#: translation model rank the same target first by construction
MIN_CANDIDATES = 2


def source_groups(
    table, min_words: int, frequent_count: int, rare_count: int
) -> dict[str, np.ndarray]:
    """``"frequent"``/``"rare"`` -> the first table row of every source phrase of ``table``
    (:class:`~rnnlib.smt.phrases.PhraseTable`, rows sorted by source) with at least
    ``min_words`` words and :data:`MIN_CANDIDATES` targets, seen at least ``frequent_count`` /
    at most ``rare_count`` times: ``(n,) int64`` each, in table order. The groups must not
    overlap (``rare_count < frequent_count``)."""
    if rare_count >= frequent_count:
        raise ValueError(
            f"source_groups: rare_count {rare_count} must be below frequent_count {frequent_count}"
        )
    src = np.asarray(table.pair_src)
    if not len(src):
        return {"frequent": np.zeros(0, np.int64), "rare": np.zeros(0, np.int64)}
    starts = np.flatnonzero(np.r_[True, src[1:] != src[:-1]])
    n_cand = np.diff(np.r_[starts, len(src)])
    words = np.diff(np.asarray(table.src_offsets))[src[starts]]
    seen = np.asarray(table.src_count)[starts]
    ok = (words >= min_words) & (n_cand >= MIN_CANDIDATES)
    return {
        "frequent": starts[ok & (seen >= frequent_count)].astype(np.int64),
        "rare": starts[ok & (seen <= rare_count)].astype(np.int64),
    }


def drawn_rows(table, groups: dict[str, np.ndarray], n: int, seed: int) -> list[tuple[str, int]]:
    """``(group, table row)`` of every target of ``n`` sources drawn without replacement from
    each group of :func:`source_groups` (``numpy.random.default_rng(seed)``, the frequent group
    first; all of a smaller group), in table order within each group."""
    src = np.asarray(table.pair_src)
    rng = np.random.default_rng(seed)
    out = []
    for g in ("frequent", "rare"):
        firsts = groups[g]
        pick = np.sort(rng.choice(len(firsts), size=min(n, len(firsts)), replace=False))
        for r in firsts[pick].tolist():
            end = r
            while end < len(src) and src[end] == src[r]:
                end += 1
            out += [(g, k) for k in range(r, end)]
    return out


def long_sources(
    cache: ArtifactCache,
    scorer,
    model: torch.nn.Module,
    untrained: torch.nn.Module,
    corpus,
    P: Params,
    batch_size: int = 512,
) -> tuple[pd.DataFrame, Artifact]:
    """``(frame, artifact)``: the drawn sources' pairs (:func:`drawn_rows` of
    ``scorer.table``, ``P.long_sources`` per group) as the columns of
    :func:`rnnlib.experiments.cho2014.scorer.table_frame` (``src``, ``tgt`` word tuples, ``tm``,
    ``rnn``, ``lex``, ``count``, ``src_count``, ``src_len``) with ``group`` and ``rnn0``, the
    untrained network's ``log p(t|s)``; ``attrs["population"]``: how many sources each group
    has in the whole table. Cached as ``cho2014/long_sources`` (keyed by the scorer's run,
    which names its phrase table, and the draw's parameters); seconds at ``cpu``."""
    table = scorer.table
    config = {
        "scorer": scorer.artifact.key,
        "min_words": P.min_source_words,
        "frequent_count": P.frequent_count,
        "rare_count": P.rare_count,
        "min_candidates": MIN_CANDIDATES,
        "per_group": P.long_sources,
        "seed": P.seed,
    }

    def make(out: Path, work: Path) -> dict:
        t = time.perf_counter()
        groups = source_groups(table, P.min_source_words, P.frequent_count, P.rare_count)
        rows = drawn_rows(table, groups, P.long_sources, P.seed)
        index = np.array([k for _, k in rows], dtype=np.int64)
        pairs = [
            (table.src_phrase(int(table.pair_src[k])), table.tgt_phrase(int(table.pair_tgt[k])))
            for k in index.tolist()
        ]
        enc = encode_pairs(pairs, corpus.src_vocab, corpus.tgt_vocab)
        scores = [score_pairs(m, enc, batch_size) if pairs else [] for m in (model, untrained)]
        saved = {
            "group": [g for g, _ in rows],
            "src": [" ".join(s) for s, _ in pairs],
            "tgt": [" ".join(t) for _, t in pairs],
            "tm": np.log(table.scores[index, 0]).tolist(),
            "lex": np.log(np.maximum(table.scores[index, 2], 1e-300)).tolist(),
            "count": table.count[index].tolist(),
            "src_count": table.src_count[index].tolist(),
            "rnn": list(map(float, scores[0])),
            "rnn0": list(map(float, scores[1])),
        }
        (out / "pairs.json").write_text(json.dumps(saved), encoding="utf-8")
        population = {g: int(len(v)) for g, v in groups.items()}
        return {"pairs": len(pairs), "population": population, "seconds": time.perf_counter() - t}

    art = cache.build("cho2014/long_sources", config, make, data=scorer.artifact.key)
    saved = json.loads(art.file("pairs.json").read_text(encoding="utf-8"))
    frame = pd.DataFrame(saved)
    frame["src"] = [tuple(s.split(" ")) for s in frame["src"]]
    frame["tgt"] = [tuple(t.split(" ")) if t else () for t in frame["tgt"]]
    frame["src_len"] = frame["src"].map(len)
    frame.attrs["population"] = art.extra["population"]
    return frame, art
