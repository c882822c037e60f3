"""The studentized block bootstrap of a BLEU contrast: a delta-method standard error per resample.

Corpus BLEU is a smooth function of the summed sufficient statistics of its sentences (system
and reference length, matches and totals of 1- to 4-grams: sacreBLEU's ten numbers, summed)::

    log BLEU = log 100 + min(0, 1 - r / c) + 1/4 sum_k (log m_k - log t_k)

so a contrast of BLEU scores ``D = sum_j w_j BLEU(T_j)`` (two systems' difference, a part of
the test set against the whole, the change of a gap between them) is a smooth function of the
per-block totals ``S_jg`` (``T_j = sum_g S_jg``). To first order a resample that draws block
``g`` ``k_g`` times moves ``D`` by ``sum_g (k_g - 1) psi_g``, with the block's influence
``psi_g = sum_j w_j BLEU(T_j) grad log BLEU(T_j) . S_jg`` (the gradient is homogeneous of
degree -1 in the totals, so ``sum_g psi_g = 0``). The cluster-robust variance of ``D`` over
``G`` blocks is ``G / (G - 1) sum_g psi_g^2`` (Cameron & Miller 2015, "A practitioner's guide to
cluster-robust inference", J. Human Resources 50(2), with the ``G / (G - 1)`` factor of their
Sec. VI), the delta method (linearisation) of a ratio estimator over clusters.

:func:`contrast_t_interval` studentizes each block-bootstrap resample by its own such standard
error, ``t* = (D* - D) / se*`` with ``se*`` from the resample's totals and its blocks'
multiplicities, and reads the interval as ``D - q_hi se, D - q_lo se`` (the percentile-t, or
bootstrap-t, interval: Efron & Tibshirani 1993, *An Introduction to the Bootstrap*, ch. 12;
Cameron, Gelbach & Miller 2008, Rev. Econ. Stat. 90(3), for few clusters). Unlike the
percentile interval widened for few blocks (:func:`rnnlib.stats.block_interval`) it needs no
``t_{G-1}`` correction, and it follows the skew of a resampled ratio. The book uses it where
blocks are consecutive lines of a file (:mod:`rnnlib.line_blocks`): there the widened
percentile interval covered about 93% at any block size, the studentized one 95% from 40 lines
(the calibration, the ledger's table); on Bible chapters the widened interval is kept.

:func:`log_bleu_gradient` follows sacreBLEU's default BLEU (``exp`` smoothing, order 4) piece by
piece: an order without a match scores ``1 / (2^k t_k)``, whose log has no derivative in
``m_k`` and ``-1 / t_k`` in ``t_k``; a dead score (no n-gram of an order, no match at all, an
empty system) has no gradient (NaN), and a resample with a NaN or zero standard error is left
out of the quantiles.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .calibration.fast_bleu import ORDER, corpus_bleu


def log_bleu_gradient(sums: np.ndarray) -> np.ndarray:
    """``(..., 10)``: the gradient of ``log BLEU`` (sacreBLEU's default, :func:`rnnlib.
    calibration.fast_bleu.corpus_bleu`) with respect to the summed statistics ``sums (...,
    10)`` (system length, reference length, 4 matches, 4 totals). NaN where the score is dead
    (an order with no n-gram, no match at all, no system token)."""
    sums = np.asarray(sums, dtype=np.float64)
    sys_len, ref_len = sums[..., 0], sums[..., 1]
    correct, total = sums[..., 2 : 2 + ORDER], sums[..., 2 + ORDER :]
    grad = np.zeros_like(sums)
    with np.errstate(divide="ignore", invalid="ignore"):
        short = sys_len < ref_len  # the brevity penalty exp(1 - r / c) applies
        grad[..., 0] = np.where(short, ref_len / sys_len**2, 0.0)
        grad[..., 1] = np.where(short, -1.0 / sys_len, 0.0)
        grad[..., 2 : 2 + ORDER] = np.where(correct > 0, 1.0 / (ORDER * correct), 0.0)
        grad[..., 2 + ORDER :] = -1.0 / (ORDER * total)
    dead = (total <= 0).any(-1) | (correct <= 0).all(-1) | (sys_len <= 0)
    grad[dead] = np.nan
    return grad


def block_ids(blocks: Sequence) -> tuple[np.ndarray, int]:
    """``(ids (n,), G)``: the block labels ``blocks (n,)`` (any sortable ids, a Bible chapter's
    or a block of lines') renumbered ``0 .. G - 1`` in sorted order, as
    :class:`rnnlib.resampling.BlockResampler` numbers them."""
    labels, ids = np.unique(np.asarray(blocks), return_inverse=True)
    return np.asarray(ids).reshape(-1), len(labels)


def block_sums(stats: np.ndarray, ids: np.ndarray, n_blocks: int) -> np.ndarray:
    """``(G, 10)``: the statistics ``stats (n, 10)`` summed over the sentences of each block,
    ``ids (n,)`` in ``0 .. G - 1`` (:func:`block_ids`; ``G`` = ``n_blocks``)."""
    out = np.zeros((int(n_blocks), np.shape(stats)[1]))
    np.add.at(out, np.asarray(ids, dtype=np.int64), np.asarray(stats, dtype=np.float64))
    return out


def contrast_and_se(
    parts: Sequence[np.ndarray], weights: Sequence[float], picks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The contrast ``D = sum_j weights[j] BLEU(picks @ parts[j])`` and its cluster-robust
    delta-method standard error, for each row of ``picks (R, G)`` (block multiplicities; a row
    of ones is the sample itself). ``parts``: ``(G, 10)`` block sums each (:func:`block_sums`).
    Returns ``(D (R,), se (R,))``; ``se`` is NaN where a score of the contrast is dead."""
    picks = np.asarray(picks, dtype=np.float64)
    g = picks.shape[-1]
    d = np.zeros(picks.shape[0])
    psi = np.zeros_like(picks)
    for part, w in zip(parts, weights):
        part = np.asarray(part, dtype=np.float64)
        sums = picks @ part  # (R, 10) the resample's totals
        score = corpus_bleu(sums)
        d += w * score
        psi += (w * score)[:, None] * (log_bleu_gradient(sums) @ part.T)  # (R, G)
    # centred over the drawn blocks (their sum is 0 but where smoothing scored an order
    # without a match: that term is not homogeneous)
    psi -= ((picks * psi).sum(-1) / picks.sum(-1))[:, None]
    var = g / (g - 1) * (picks * psi**2).sum(-1) if g > 1 else np.full(len(d), np.nan)
    return d, np.sqrt(var)


def contrast_t_interval(
    parts: Sequence[np.ndarray], weights: Sequence[float], picks: np.ndarray, level: float = 0.95
) -> tuple[float, float, float]:
    """``(D, low, high)``: the BLEU contrast of the block sums ``parts`` with ``weights``
    (:func:`contrast_and_se`) and its studentized block-bootstrap interval at ``level`` over
    the resamples ``picks (R, G)`` (how often each block is drawn in each). A contrast with no
    spread over the blocks (``se`` 0: a system against itself) gives ``(D, D, D)``, as the
    percentile interval does; fewer than 2 blocks, a dead score (``se`` NaN) or no finite
    studentized resample: NaN ends."""
    picks = np.asarray(picks, dtype=np.float64)
    ones = np.ones((1, picks.shape[-1]))
    d0, se0 = (float(x[0]) for x in contrast_and_se(parts, weights, ones))
    if picks.shape[-1] >= 2 and se0 == 0:
        return d0, d0, d0
    if picks.shape[-1] < 2 or not se0 > 0:
        return d0, math.nan, math.nan
    d, se = contrast_and_se(parts, weights, picks)
    ok = np.isfinite(d) & (se > 0)
    if not ok.any():
        return d0, math.nan, math.nan
    # the ends of rnnlib.stats.percentile_interval (which imports this module)
    q_lo, q_hi = np.percentile((d[ok] - d0) / se[ok], [50 - 50 * level, 50 + 50 * level])
    return d0, float(d0 - q_hi * se0), float(d0 - q_lo * se0)


def picks_of(draws: Sequence[np.ndarray], ids: np.ndarray, n_blocks: int) -> np.ndarray:
    """``(R, G)``: how often each block is drawn in each resample, from the sentence indices
    ``draws`` (one array a resample, as :func:`rnnlib.stats.resamples` returns them: every
    sentence of a drawn block, once per draw) and the sentences' block ids ``ids (n,)``
    (:func:`block_ids`): a block's sentences drawn, divided by its size."""
    ids = np.asarray(ids, dtype=np.int64)
    sizes = np.bincount(ids, minlength=n_blocks).astype(np.float64)
    drawn = np.stack([np.bincount(ids[ix], minlength=n_blocks) for ix in draws])
    return drawn / sizes


__all__ = [
    "block_ids",
    "block_sums",
    "contrast_and_se",
    "contrast_t_interval",
    "log_bleu_gradient",
    "picks_of",
]
