"""C-A-F3-3's counterfactual: paper A's scorer trained as the paper says it did *not* train it,
on phrase pairs drawn by how often they were extracted.

A §3.1: the network is trained on the unique pairs, "mostly ignoring the (normalized)
frequencies of each phrase pair in the original corpora", so that it does not "simply learn to
rank the phrase pairs according to their numbers of occurrences". The ``cho2014/scorer_counts``
artifact (``model.pt``, ``train_log.csv``, ``eval_log.csv``) is the chapter's network (the same
model, optimiser, seed and held-out pairs) trained for ``rnn_check_updates`` updates on as many
pairs as the unique-pair network saw, drawn with replacement from those same pairs, each with
probability proportional to its count in the phrase table."""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from ...cache import ArtifactCache
from ...device import resolve_device
from ...models import build_model
from ...smt.features import Pair
from ...smt.rnn_scorer import encode_pairs
from ...train import train
from .scorer import PhraseScorer, train_key
from .setting import Params

KIND = "cho2014/scorer_counts"
#: how the training pairs were drawn, as the artifact's key names it
DRAWN = "by phrase-table count, with replacement"


def count_weighted(pairs: Sequence[Pair], counts: Sequence[float], n: int, seed: int) -> list:
    """``n`` pairs drawn with replacement from ``pairs`` (``(P,)``), pair ``i`` with probability
    ``counts[i] / sum(counts)`` (``numpy.random.default_rng(seed)``), in draw order."""
    w = np.asarray(counts, dtype=np.float64)
    if len(w) != len(pairs) or not len(w) or (w < 0).any() or w.sum() <= 0:
        raise ValueError("count_weighted: one non-negative count per pair, not all 0")
    rng = np.random.default_rng(seed)
    return [pairs[int(i)] for i in rng.choice(len(pairs), size=n, replace=True, p=w / w.sum())]


def pair_counts(scorer: PhraseScorer, pairs: Sequence[Pair]) -> np.ndarray:
    """``(len(pairs),)``: each pair's count in the scorer's phrase table (how many times it was
    extracted)."""
    count = {(s, t): int(c) for (s, t, _), c in zip(scorer.table.pairs(), scorer.table.count)}
    return np.array([count[p] for p in pairs], dtype=np.float64)


def drawn_pairs(scorer: PhraseScorer, seed: int) -> list:
    """As many pairs as ``scorer.train_pairs``, drawn from them by their counts
    (:func:`count_weighted`, :func:`pair_counts`) with ``seed``."""
    pool = scorer.train_pairs
    return count_weighted(pool, pair_counts(scorer, pool), len(pool), seed)


def counts_scorer(
    cache: ArtifactCache, corpus, scorer: PhraseScorer, P: Params
) -> PhraseScorer | None:
    """``scorer``'s network (or its plan, :func:`.scorer.scorer_plan`) trained again on pairs
    drawn by their counts (:func:`count_weighted`, seed ``seed + 2``, as many as ``scorer``
    trained on) for ``rnn_check_updates`` updates (``None``: as many as ``scorer``), with the
    same model, optimiser, seed and held-out pairs; ``None`` when ``rnn_check_optimiser`` (the
    chapter's switch for its second network) is off. ``corpus``: the corpus ``scorer`` was
    made from. The pairs are drawn only when the cache lacks the network; the returned
    scorer's ``train_pairs`` are those it drew from (``scorer``'s)."""
    if not P.rnn_check_optimiser:
        return None
    train_config = dataclasses.replace(
        scorer.train_config, max_updates=P.rnn_check_updates or scorer.train_config.max_updates
    )
    seed = P.seed + 2
    config = {**scorer.run_config, "drawn": DRAWN, "draw_seed": seed}
    config.update(model=scorer.model_config.to_dict(), train=train_key(train_config))

    def make(out: Path, work: Path) -> dict:
        drawn = drawn_pairs(scorer, seed)
        pairs = encode_pairs(drawn, corpus.src_vocab, corpus.tgt_vocab)
        held = encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab)
        torch.manual_seed(train_config.seed)
        model = build_model(scorer.model_config)
        result = train(model, pairs, held, train_config, work, progress=False)
        torch.save(model.state_dict(), out / "model.pt")
        for name in ("train_log.csv", "eval_log.csv"):
            shutil.copy2(work / name, out / name)
        return {
            "updates": result.updates,
            "epochs": result.epochs,
            "seconds": result.seconds,
            "train_pairs": len(drawn),
            "distinct_pairs": len(set(drawn)),
            "dev_pairs": len(held),
            "dev_nll": result.best["dev_nll_sentence"] if result.best else None,
            "threads": torch.get_num_threads(),
            "device": resolve_device(train_config.device).type,
        }

    t0 = time.perf_counter()
    art = cache.build(KIND, config, make, data=corpus.checksum)
    return dataclasses.replace(
        scorer, artifact=art, train_config=train_config, seconds=time.perf_counter() - t0
    )
