"""BLEU as the book reports it: sacreBLEU on detokenized text, subsets, length buckets, bootstrap.

* :func:`no_unk_mask` -- Bahdanau et al. 2015, Table 1's "No UNK" subset: the sentences with no
  unknown word in the source and none in the reference.
* :func:`corpus_bleu`, :func:`sentence_bleu` -- sacreBLEU (default 13a tokenization, one
  reference), with the signature the book prints under every table.
* :func:`bleu_by_length` -- Fig. 2: corpus BLEU per source-length bucket, the bucket sizes and
  a bootstrap band per bucket.
* :func:`paired_bootstrap` -- sacreBLEU's paired bootstrap test between two systems (its
  p-value), with the 95% interval of the BLEU difference over the same resamples.

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

import contextlib
import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..specials import UNK

#: sacreBLEU's default seed for its resampling tests (``SACREBLEU_SEED``)
SACREBLEU_SEED = 12345


def no_unk_mask(src_ids: Sequence[np.ndarray], tgt_ids: Sequence[np.ndarray]) -> np.ndarray:
    """``(n,) bool``: True for pair ``i`` when neither ``src_ids[i]`` nor ``tgt_ids[i]`` holds ``UNK``."""
    if len(src_ids) != len(tgt_ids):
        raise ValueError(f"no_unk_mask: {len(src_ids)} sources but {len(tgt_ids)} references")
    return np.array([not (np.asarray(s) == UNK).any() and not (np.asarray(t) == UNK).any()
                     for s, t in zip(src_ids, tgt_ids)], dtype=bool)


def _bleu():
    from sacrebleu.metrics import BLEU
    return BLEU()


def _check(hyps: Sequence[str], refs: Sequence[str], where: str) -> None:
    if len(hyps) != len(refs):
        raise ValueError(f"{where}: {len(hyps)} hypotheses but {len(refs)} references")


@dataclass
class CorpusBleu:
    """``score`` (0-100), ``signature`` (sacreBLEU's), ``sentences``, ``text`` (sacreBLEU's summary)."""

    score: float
    signature: str
    sentences: int
    text: str


def corpus_bleu(hyps: Sequence[str], refs: Sequence[str]) -> CorpusBleu:
    """sacreBLEU of detokenized ``hyps`` against one reference each (``refs``)."""
    _check(hyps, refs, "corpus_bleu")
    bleu = _bleu()
    score = bleu.corpus_score(list(hyps), [list(refs)])
    return CorpusBleu(score.score, str(bleu.get_signature()), len(hyps), str(score))


def signature() -> str:
    """The sacreBLEU signature of :func:`corpus_bleu` (the same for every score of the book)."""
    bleu = _bleu()
    bleu.corpus_score(["x"], [["x"]])  # sacreBLEU fills the signature's reference count on first use
    return str(bleu.get_signature())


def sentence_bleu(hyp: str, ref: str) -> float:
    """sacreBLEU's sentence BLEU (exponential smoothing, effective order) of one hypothesis."""
    from sacrebleu.metrics import BLEU
    return BLEU(effective_order=True).sentence_score(hyp, [ref]).score


def _stats(hyps: Sequence[str], refs: Sequence[str]):
    bleu = _bleu()
    return bleu, np.array(bleu._extract_corpus_statistics(list(hyps), [list(refs)]), dtype=np.float64)


def _resampled(bleu, stats: np.ndarray, idxs: np.ndarray) -> np.ndarray:
    return np.array([bleu._compute_score_from_stats(s.sum(0)).score for s in stats[idxs]])


def length_edges(width: int, last: int) -> list[int]:
    """Bucket edges ``[0, width, 2 width, ..., last]``: buckets ``[a, b)`` and a final ``>= last``."""
    if width < 1 or last < width:
        raise ValueError(f"length_edges: need width >= 1 and last >= width, got {width}, {last}")
    return list(range(0, last + 1, width)) if last % width == 0 else list(range(0, last, width)) + [last]


def bleu_by_length(hyps: Sequence[str], refs: Sequence[str], lengths: Sequence[int], edges: Sequence[int],
                   n_boot: int = 1000, seed: int = SACREBLEU_SEED, level: float = 0.95) -> pd.DataFrame:
    """Corpus BLEU per source-length bucket, one row per bucket.

    Buckets are ``[edges[k], edges[k+1])`` and a last one ``>= edges[-1]``; every sentence
    falls in exactly one (``lengths`` must be >= ``edges[0]``). Columns: ``bucket`` (label),
    ``low_len``, ``high_len`` (exclusive; ``inf`` for the last), ``mid`` (x position for a plot),
    ``sentences``, ``bleu``, ``band_low``, ``band_high`` (the ``level`` percentile bootstrap
    interval of the bucket's BLEU, ``n_boot`` resamples of its sentences; NaN with ``n_boot=0``
    or an empty bucket). Empty buckets are kept with ``sentences = 0`` and BLEU NaN.
    """
    _check(hyps, refs, "bleu_by_length")
    lengths = np.asarray(lengths)
    if len(lengths) != len(hyps):
        raise ValueError(f"bleu_by_length: {len(lengths)} lengths for {len(hyps)} hypotheses")
    edges = [int(e) for e in edges]
    if not edges or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"bleu_by_length: edges {edges} must be increasing")
    if len(lengths) and lengths.min() < edges[0]:
        raise ValueError(f"bleu_by_length: a sentence of length {lengths.min()} is below the first edge {edges[0]}")
    bucket = np.searchsorted(edges, lengths, side="right") - 1
    bleu, stats = _stats(hyps, refs) if len(hyps) else (None, None)
    rng = np.random.default_rng(seed)
    rows = []
    for k, low in enumerate(edges):
        high = edges[k + 1] if k + 1 < len(edges) else np.inf
        members = np.flatnonzero(bucket == k)
        row = {"bucket": f"{low}-{int(high) - 1}" if np.isfinite(high) else f">={low}", "low_len": low,
               "high_len": high, "mid": (low + high - 1) / 2 if np.isfinite(high) else low + (edges[1] - edges[0]) / 2,
               "sentences": len(members), "bleu": np.nan, "band_low": np.nan, "band_high": np.nan}
        if len(members):
            part = stats[members]
            row["bleu"] = bleu._compute_score_from_stats(part.sum(0)).score
            if n_boot > 0:
                scores = _resampled(bleu, part, rng.integers(0, len(members), size=(n_boot, len(members))))
                alpha = (1 - level) / 2
                row["band_low"], row["band_high"] = np.quantile(scores, [alpha, 1 - alpha])
        rows.append(row)
    return pd.DataFrame(rows)


@contextlib.contextmanager
def _sacrebleu_seed(seed: int):
    old = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(int(seed))
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SACREBLEU_SEED", None)
        else:
            os.environ["SACREBLEU_SEED"] = old


def paired_bootstrap(hyps_a: Sequence[str], hyps_b: Sequence[str], refs: Sequence[str],
                     n_samples: int = 1000, seed: int = SACREBLEU_SEED) -> dict:
    """Paired bootstrap of BLEU(a) - BLEU(b) over the sentences (sacreBLEU's ``PairedTest``, ``bs``).

    Returns ``{"bleu_a", "bleu_b", "diff", "low", "high", "p_value", "sentences", "samples",
    "seed", "signature"}``: ``low``/``high`` bound the 95% interval of the difference over the
    ``n_samples`` resamples sacreBLEU draws with ``seed``; ``p_value`` is sacreBLEU's (the
    chance of a difference at least this large if the systems were equal; sacreBLEU counts
    only resamples that exceed the observed difference, so two identical systems get
    ``1 / (n_samples + 1)``, not 1: read the interval).
    """
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest
    _check(hyps_a, refs, "paired_bootstrap (system a)")
    _check(hyps_b, refs, "paired_bootstrap (system b)")
    if not refs:
        raise ValueError("paired_bootstrap: no sentences")
    if n_samples < 1 or seed <= 0:
        raise ValueError(f"paired_bootstrap: need n_samples >= 1 and seed > 0 (sacreBLEU treats 0 as no seed), "
                         f"got {n_samples}, {seed}")
    with _sacrebleu_seed(seed):
        test = PairedTest([("b", list(hyps_b)), ("a", list(hyps_a))], {"BLEU": BLEU()}, [list(refs)],
                          test_type="bs", n_samples=n_samples)
        signatures, results = test()
    result_a = results["BLEU"][1]
    # the resamples of sacreBLEU's _paired_bs_test: default_rng(seed).choice(n, (n_samples, n))
    idxs = np.random.default_rng(seed).choice(len(refs), size=(n_samples, len(refs)), replace=True)
    bleu_a, stats_a = _stats(hyps_a, refs)
    _, stats_b = _stats(hyps_b, refs)
    diffs = _resampled(bleu_a, stats_a, idxs) - _resampled(bleu_a, stats_b, idxs)
    low, high = np.quantile(diffs, [0.025, 0.975])
    score_b = results["BLEU"][0].score
    return {"bleu_a": result_a.score, "bleu_b": score_b, "diff": result_a.score - score_b,
            "low": float(low), "high": float(high), "p_value": float(result_a.p_value),
            "sentences": len(refs), "samples": n_samples, "seed": seed,
            "signature": str(signatures["BLEU"])}


__all__ = ["CorpusBleu", "SACREBLEU_SEED", "bleu_by_length", "corpus_bleu", "length_edges", "no_unk_mask",
           "paired_bootstrap", "sentence_bleu", "signature"]
