"""BLEU against several references per sentence: sacreBLEU's corpus BLEU and its per-sentence
sufficient statistics, on which the resampled intervals of :mod:`rnnlib.block_intervals` rest.

BLEU's clipped n-gram counts take, for each n-gram, the largest count over the references, and
its brevity penalty the reference length closest to the hypothesis's (Papineni et al. 2002,
§2.1 and §2.2.2); sacreBLEU does both when given several reference streams. A sentence's
statistics ``(k,)`` (hypothesis and reference lengths, matched and total n-grams per order)
add up over any set of sentences to that set's corpus statistics, so a resample's BLEU is the
score of the summed rows.

Deviations
----------
- Paper A scores one reference per sentence (WMT'14's one); the Bible has three French
  versions aligned verse by verse, and the book's evaluation reads all three where it says
  so (MERT still tunes on the first).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _scorer():
    from sacrebleu.metrics import BLEU

    return BLEU()


def check_streams(hyps: Sequence[str], streams: Sequence[Sequence[str]], where: str) -> None:
    """Every reference stream has one line per hypothesis; at least one stream."""
    if not streams:
        raise ValueError(f"{where}: no reference stream")
    for k, refs in enumerate(streams):
        if len(refs) != len(hyps):
            raise ValueError(f"{where}: {len(hyps)} hypotheses but {len(refs)} in stream {k}")


def corpus_bleu(hyps: Sequence[str], streams: Sequence[Sequence[str]]) -> float:
    """sacreBLEU (0-100, default 13a tokenization) of ``hyps`` against every stream of
    ``streams`` (``(S, n)``: S references per sentence)."""
    check_streams(hyps, streams, "corpus_bleu")
    return float(_scorer().corpus_score(list(hyps), [list(s) for s in streams]).score)


def signature(references: int) -> str:
    """sacreBLEU's signature of :func:`corpus_bleu` with ``references`` streams."""
    bleu = _scorer()
    bleu.corpus_score(["x"], [["x"]] * references)
    return str(bleu.get_signature())


def scorer_for(streams: Sequence[Sequence[str]]):
    """sacreBLEU's BLEU with the n-grams of ``streams`` (``(S, n)``) read once, for the
    statistics of many outputs against the same references (:func:`sufficient_stats`)."""
    from sacrebleu.metrics import BLEU

    return BLEU(references=[list(s) for s in streams])


def sufficient_stats(hyps: Sequence[str], streams: Sequence[Sequence[str]], scorer=None):
    """``(scorer, stats (n, k))``: sacreBLEU's BLEU and each sentence's sufficient statistics
    against its ``S`` references (``streams``, ``(S, n)``); ``scorer``: :func:`scorer_for` of
    the same ``streams`` (the same statistics, sooner), or ``None``."""
    check_streams(hyps, streams, "sufficient_stats")
    if scorer is None:
        bleu = _scorer()
        stats = bleu._extract_corpus_statistics(list(hyps), [list(s) for s in streams])
    else:
        bleu, stats = scorer, scorer._extract_corpus_statistics(list(hyps), None)
    return bleu, np.array(stats, dtype=np.float64)


def score_of(bleu, summed: np.ndarray) -> np.ndarray:
    """``(R,)``: the corpus BLEU of each row of ``summed (R, k)`` (statistics summed over a
    set of sentences)."""
    return np.array([bleu._compute_score_from_stats(list(row)).score for row in summed])


__all__ = [
    "check_streams",
    "corpus_bleu",
    "score_of",
    "scorer_for",
    "signature",
    "sufficient_stats",
]
