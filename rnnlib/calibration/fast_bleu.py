"""Corpus BLEU of many resamples at once, from sacreBLEU's per-sentence sufficient statistics.

:func:`rnnlib.bleu.resampled_scores` scores one resample at a time through sacreBLEU's own
``_compute_score_from_stats`` (a Python call per resample): right for a chapter's thousand
resamples, too slow for a simulation that repeats them thousands of times. Here the same
arithmetic runs on arrays: :func:`corpus_bleu` takes summed statistics ``(..., 10)`` (system
length, reference length, matches and totals of 1- to 4-grams) and returns BLEU ``(...)`` as
sacreBLEU's default BLEU computes it (13a tokenisation upstream, ``exp`` smoothing, order 4,
no effective order); :func:`resample_counts` gives the multiplicity of every sentence in every
bootstrap resample, so that a resample's statistics are one matrix product. The tests compare
both with sacreBLEU and with :func:`rnnlib.bleu.resampled_scores` on the same draws.
"""

from __future__ import annotations

import numpy as np

#: sacreBLEU's statistics per sentence: sys_len, ref_len, 4 matches, 4 totals
N_STATS = 10
ORDER = 4


def corpus_bleu(sums: np.ndarray) -> np.ndarray:
    """BLEU (0-100) of summed statistics ``sums (..., 10)``; ``(...)``.

    sacreBLEU's ``BLEU.compute_bleu`` with ``smooth_method="exp"``: an order with no match
    counts ``100 / (2^k total)`` (``k`` the number of such orders so far), an order with no
    n-gram at all gives 0, no match at all gives 0, and the brevity penalty
    ``exp(1 - ref/sys)`` applies when the system is shorter (0 for an empty system)."""
    sums = np.asarray(sums, dtype=np.float64)
    sys_len, ref_len = sums[..., 0], sums[..., 1]
    correct, total = sums[..., 2 : 2 + ORDER], sums[..., 2 + ORDER : 2 + 2 * ORDER]
    zero = correct == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        # log of 100 c / t, or of 100 / (2^k t) for the k-th order so far without a match
        logs = np.log(np.where(zero, 1.0, correct)) - np.log(total)
        logs -= np.log(2.0) * np.cumsum(zero, axis=-1) * zero
        brevity = np.minimum(0.0, 1 - ref_len / sys_len)
        score = np.exp(brevity + logs.mean(-1) + np.log(100.0))
    dead = (total == 0).any(-1) | zero.all(-1) | (sys_len <= 0)
    return np.where(dead, 0.0, score)


def resample_counts(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n)`` float32: how often each of ``n`` items is drawn in each of ``n_boot``
    resamples of ``n`` draws with replacement (the draws are ``rng.integers(0, n, (n_boot,
    n))``, the ordinary bootstrap's). ``counts @ stats`` sums each resample's statistics."""
    draws = rng.integers(0, n, size=(n_boot, n), dtype=np.int32)
    return counts_of(draws, n)


def counts_of(draws: np.ndarray, n: int) -> np.ndarray:
    """``(R, n)`` float32 multiplicities of the item indices ``draws (R, m)``."""
    rows = draws.shape[0]
    flat = (draws + (n * np.arange(rows, dtype=np.int64))[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float32)


def resampled_bleu(counts: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """Corpus BLEU of each resample: ``counts (R, n)`` multiplicities, ``stats (..., n, 10)``
    per-sentence statistics (several systems stacked in front); ``(..., R)``."""
    stats = np.asarray(stats, dtype=np.float32)
    lead, (n, k) = stats.shape[:-2], stats.shape[-2:]
    flat = np.moveaxis(stats.reshape(-1, n, k), 0, 1).reshape(n, -1)  # (n, systems * 10)
    sums = (counts @ flat).reshape(len(counts), -1, k)  # one BLAS product for every system
    return corpus_bleu(np.moveaxis(sums, 0, 1).astype(np.float64)).reshape(*lead, len(counts))


__all__ = ["N_STATS", "corpus_bleu", "counts_of", "resample_counts", "resampled_bleu"]
