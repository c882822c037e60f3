"""Two MERT-tuned systems' BLEU difference with the noise of their seeds and of the sentences,
the sentences' part from any resamples: every sentence alone, or whole Bible chapters.

:func:`rnnlib.stats.seeds_and_sentences` (Clark et al. 2011) adds the optimiser seeds' variance
to that of the difference over paired resamples of the test sentences, each sentence drawn on
its own, against one reference. Here the same rule takes the resamples as given (item indices,
of any length: :class:`rnnlib.resampling.BlockResampler`'s draws keep every verse of a drawn
chapter, :func:`sentence_resamples` draws the verses one by one) and scores against every
reference stream (:mod:`rnnlib.multi_reference`): the intervals of A Table 1 on the primary
held-out set (:mod:`.primary`). With one stream and
:func:`sentence_resamples` it is :func:`~rnnlib.stats.seeds_and_sentences`, number for number.

With several rebuilds (independent word alignments, each with its seeds) the rebuild is the
independent unit, as in :func:`rnnlib.stats.rebuilds_and_sentences`: the spread of the
rebuilds' differences replaces the seeds', and the sentences' part comes from the pooled runs.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ... import multi_reference
from ...bleu import SACREBLEU_SEED
from ...stats import _satterthwaite


def sentence_resamples(n: int, n_boot: int, seed=SACREBLEU_SEED) -> list[np.ndarray]:
    """``n_boot`` resamples of ``n`` items each drawn on its own (the draws of
    :func:`rnnlib.stats.seeds_and_sentences`: one ``(n_boot, n)`` choice from ``seed``)."""
    return list(np.random.default_rng(seed).choice(n, size=(n_boot, n)))


def _counts(resamples: Sequence[np.ndarray], n: int) -> np.ndarray:
    """``(R, n)``: how often each item is in each resample."""
    out = np.zeros((len(resamples), n), dtype=np.float64)
    for r, idx in enumerate(resamples):
        out[r] = np.bincount(np.asarray(idx), minlength=n)
    return out


def run_stats(
    groups: Sequence[Sequence[Sequence[str]]], streams: Sequence[Sequence[str]], scorer=None
) -> tuple[object, list[list[np.ndarray]]]:
    """``(scorer, stats)``: sacreBLEU's BLEU and, for ``groups[r][i]`` (rebuild ``r``, MERT seed
    ``i``: ``n`` lines), its per-sentence statistics ``(n, k)`` against ``streams`` ``(S, n)``
    (:func:`rnnlib.multi_reference.sufficient_stats`; ``scorer``: the references read once,
    :func:`rnnlib.multi_reference.scorer_for`, else read here once); a sentence's row depends
    on it alone, so the rows of a part of the sentences are that part's statistics."""
    bleu, out = scorer or multi_reference.scorer_for(streams), []
    for group in groups:
        row = []
        for hyps in group:
            bleu, st = multi_reference.sufficient_stats(hyps, streams, bleu)
            row.append(st)
        out.append(row)
    return bleu, out


def _scores(bleu, stats, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(whole (runs,), resampled (runs, R))``: each run's BLEU on every sentence and on each
    resample (``counts``, :func:`_counts`)."""
    whole = np.array([multi_reference.score_of(bleu, st.sum(0)[None])[0] for st in stats])
    resampled = np.array([multi_reference.score_of(bleu, counts @ st) for st in stats])
    return whole, resampled.reshape(len(stats), len(counts))


def groups_and_resamples(
    groups_a: Sequence[Sequence[Sequence[str]]],
    groups_b: Sequence[Sequence[Sequence[str]]],
    streams: Sequence[Sequence[str]],
    resamples: Sequence[np.ndarray],
    level: float = 0.95,
) -> dict:
    """``groups_a[r][i]``: system a's output (``n`` lines) on rebuild ``r``, MERT seed ``i``;
    ``streams`` ``(S, n)``: the references; ``resamples``: item indices, one array each.
    :func:`stats_and_resamples` on their statistics (:func:`run_stats`)."""
    if len(groups_a) != len(groups_b) or not groups_a or not all(groups_a) or not all(groups_b):
        raise ValueError("groups_and_resamples: both systems need the same rebuilds, one run each")
    bleu, stats_a = run_stats(groups_a, streams)
    _, stats_b = run_stats(groups_b, streams, bleu)
    return stats_and_resamples(bleu, stats_a, stats_b, resamples, level)


def stats_and_resamples(
    bleu,
    stats_a: Sequence[Sequence[np.ndarray]],
    stats_b: Sequence[Sequence[np.ndarray]],
    resamples: Sequence[np.ndarray],
    level: float = 0.95,
) -> dict:
    """``stats_a[r][i]`` ``(n, k)``: the per-sentence statistics of system a's run on rebuild
    ``r``, MERT seed ``i`` (:func:`run_stats`, ``bleu`` its scorer); ``resamples``: item
    indices, one array each.

    The difference is the mean over rebuilds of ``mean_i BLEU(a_ri) - mean_j BLEU(b_rj)``. With
    one rebuild its noise is the seeds' (``s_a^2/n_a + s_b^2/n_b``, Welch's degrees of
    freedom), with several the rebuilds' differences' (their variance over ``R``, ``R - 1``
    degrees of freedom); either way plus the variance of the difference of the runs' mean BLEU
    over the paired ``resamples`` (every run of both systems on the same resample), counted as
    known; interval ``diff -/+ q sqrt(var_runs + var_sentences)`` (``q``: t quantile of
    Satterthwaite's degrees of freedom, normal with no runs' part).

    Returns ``{"diff", "low", "high", "se_runs", "se_sentences", "df", "q", "sentences"}``."""
    if len(stats_a) != len(stats_b) or not stats_a or not all(stats_a) or not all(stats_b):
        raise ValueError("stats_and_resamples: both systems need the same rebuilds, one run each")
    n = len(stats_a[0][0])
    counts = _counts(resamples, n)
    gains, ra, rb = [], [], []
    for ga, gb in zip(stats_a, stats_b):
        wa, sa = _scores(bleu, ga, counts)
        wb, sb = _scores(bleu, gb, counts)
        gains.append((wa, wb))
        ra.append(sa)
        rb.append(sb)
    diffs = np.array([wa.mean() - wb.mean() for wa, wb in gains])
    diff = float(diffs.mean())
    pooled = np.concatenate(ra).mean(0) - np.concatenate(rb).mean(0)
    var_sent = float(np.var(pooled, ddof=1)) if len(resamples) > 1 else 0.0
    if len(gains) == 1:
        (wa, wb), na, nb = gains[0], len(gains[0][0]), len(gains[0][1])
        va = float(np.var(wa, ddof=1)) / na if na > 1 else 0.0
        vb = float(np.var(wb, ddof=1)) / nb if nb > 1 else 0.0
        var_runs = va + vb
        terms = va**2 / (na - 1) + vb**2 / (nb - 1) if na > 1 and nb > 1 else 0.0
    else:
        var_runs = float(np.var(diffs, ddof=1)) / len(diffs)
        terms = var_runs**2 / (len(diffs) - 1)
    low, high, df, q = _satterthwaite(diff, var_runs, terms, var_sent, level)
    return {
        "diff": diff,
        "low": low,
        "high": high,
        "se_runs": math.sqrt(var_runs),
        "se_sentences": math.sqrt(var_sent),
        "df": df,
        "q": q,
        "sentences": n,
    }


__all__ = ["groups_and_resamples", "run_stats", "sentence_resamples", "stats_and_resamples"]
