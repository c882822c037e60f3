"""BLEU as the book reports it: sacreBLEU on detokenized text, subsets and length buckets.

* :func:`no_unk_mask` -- Bahdanau et al. 2015, Table 1's "No UNK" subset: the sentences with no
  unknown word in the source and none in the reference.
* :func:`corpus_bleu`, :func:`sentence_bleu` -- sacreBLEU (default 13a tokenization, one
  reference), with the signature the book prints under every table.
* :func:`sufficient_stats`, :func:`resampled_scores` -- sacreBLEU's per-sentence sufficient
  statistics and the corpus BLEU of resampled sentence sets, on which the bootstraps of
  :mod:`rnnlib.stats` (Fig. 2's bands, the paired BLEU difference) rest.

All scores are on detokenized output against the untokenized references.

Equations
---------
- B Table 1 caption: "No UNK" = "the sentences without any unknown word in themselves and in
  the reference translations"
- B Fig. 2: BLEU of the test-set translations "with respect to the lengths of the sentences"

Deviations
----------
- Neither paper names its BLEU script (Reading the papers, ``reading-bleu-scorer``): sacreBLEU
  here, on detokenized text.
- Fig. 2's binning is not described (Reading the papers, ``reading-bleu-by-length``): buckets of
  source length in tokens, corpus BLEU per bucket; the bands are percentile bootstrap intervals
  over the bucket's sentences (not in the paper).
- The difference interval of :func:`paired_bootstrap` is computed from the resamples of
  sacreBLEU's paired test (same seed, same indices, sacreBLEU's sufficient statistics); sacreBLEU
  itself reports only the p-value and each system's own interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .specials import UNK

#: sacreBLEU's default seed for its resampling tests (``SACREBLEU_SEED``)
SACREBLEU_SEED = 12345


def no_unk_mask(src_ids: Sequence[np.ndarray], tgt_ids: Sequence[np.ndarray]) -> np.ndarray:
    """``(n,) bool``: True for pair ``i`` when neither ``src_ids[i]`` nor ``tgt_ids[i]`` holds
    ``UNK``."""
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"no_unk_mask: {len(src_ids)} sources but {len(tgt_ids)} references")
    return np.array(
        [
            not (np.asarray(s) == UNK).any() and not (np.asarray(t) == UNK).any()
            for s, t in zip(src_ids, tgt_ids)
        ],
        dtype=bool,
    )


def _bleu():
    from sacrebleu.metrics import BLEU

    return BLEU()


def check_pairs(hyps: Sequence[str], refs: Sequence[str], where: str) -> None:
    if len(hyps) != len(refs):
        raise ValueError(f"{where}: {len(hyps)} hypotheses but {len(refs)} references")


@dataclass
class CorpusBleu:
    """``score`` (0-100), ``signature`` (sacreBLEU's), ``sentences``, ``text`` (sacreBLEU's
    summary), ``bp`` the brevity penalty (1 when the output is at least as long as the
    reference), ``ratio`` the hypothesis length over the reference length (sacreBLEU's tokens)."""

    score: float
    signature: str
    sentences: int
    text: str
    bp: float = float("nan")
    ratio: float = float("nan")


def corpus_bleu(hyps: Sequence[str], refs: Sequence[str]) -> CorpusBleu:
    """sacreBLEU of detokenized ``hyps`` against one reference each (``refs``)."""
    check_pairs(hyps, refs, "corpus_bleu")
    bleu = _bleu()
    score = bleu.corpus_score(list(hyps), [list(refs)])
    ratio = score.sys_len / score.ref_len if score.ref_len else float("nan")
    return CorpusBleu(
        score.score, str(bleu.get_signature()), len(hyps), str(score), score.bp, ratio
    )


def signature() -> str:
    """The sacreBLEU signature of :func:`corpus_bleu` (the same for every score of the book)."""
    bleu = _bleu()
    bleu.corpus_score(
        ["x"], [["x"]]
    )  # sacreBLEU fills the signature's reference count on first use
    return str(bleu.get_signature())


def sentence_bleu(hyp: str, ref: str) -> float:
    """sacreBLEU's sentence BLEU (exponential smoothing, effective order) of one hypothesis."""
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True).sentence_score(hyp, [ref]).score


def sufficient_stats(hyps: Sequence[str], refs: Sequence[str]):
    """``(scorer, stats (N, k))``: sacreBLEU's BLEU and the sufficient statistics of each
    sentence."""
    bleu = _bleu()
    return bleu, np.array(
        bleu._extract_corpus_statistics(list(hyps), [list(refs)]), dtype=np.float64
    )


def resampled_scores(bleu, stats: np.ndarray, idxs: np.ndarray) -> np.ndarray:
    """Corpus BLEU of each resample: ``idxs (R, n)`` indexes the rows of ``stats``; returns
    ``(R,)``."""
    return np.array([bleu._compute_score_from_stats(s.sum(0)).score for s in stats[idxs]])


def length_edges(width: int, last: int) -> list[int]:
    """Bucket edges ``[0, width, 2 width, ..., last]``: buckets ``[a, b)`` and a final
    ``>= last``."""
    if width < 1 or last < width:
        raise ValueError(f"length_edges: need width >= 1 and last >= width, got {width}, {last}")
    return (
        list(range(0, last + 1, width))
        if last % width == 0
        else list(range(0, last, width)) + [last]
    )


__all__ = [
    "CorpusBleu",
    "SACREBLEU_SEED",
    "corpus_bleu",
    "length_edges",
    "no_unk_mask",
    "sentence_bleu",
    "signature",
    "sufficient_stats",
    "resampled_scores",
]
