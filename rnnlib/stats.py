"""Every statistic of the book's noise: the bootstraps and the rule for optimiser seeds.

One module, so that no chapter and no experiment carries its own copy:

* :func:`bootstrap_mean` -- a mean with its percentile bootstrap interval (a purity difference
  over labelled points, a per-sentence or per-pair NLL difference, a per-source share);
  :func:`paired_difference` is the same on the differences of two paired samples, and
  :func:`paired_ratio` the ratio of their means (seconds per update of two interleaved arms).
* :func:`mean_difference` -- two *unpaired* samples (seconds per update of two runs): each
  resampled on its own.
* :func:`bootstrap_spearman` -- Spearman's rho with its bootstrap interval over the items.
* :func:`bootstrap_rounds` -- several statistics of the same items per round, from one stream.
* :func:`percentile_interval` -- where every interval ends: the percentiles 50 -/+ 50 level;
  :func:`block_interval` widens it for resamples of few whole blocks (:func:`block_widening`:
  the few-clusters corrections of Cameron, Gelbach & Miller 2008), wherever ``blocks=`` is
  given; a mean over blocks is studentized instead (:func:`block_t_interval`).
* :func:`gap_change` -- how two systems' BLEU gap changes from the whole test set to a part of
  it (All to No UNK), one joint paired bootstrap for the four scores.
* :func:`bleu_by_length` -- corpus BLEU per source-length bucket with a bootstrap band per bucket
  (Bahdanau et al. 2015, Fig. 2).
* :func:`relative_length_slopes` -- two systems' BLEU per length bucket relative to their own
  anchor bucket (the shortest that holds enough sentences), the slope of each over length and
  the difference of the slopes, the test sentences resampled jointly for both systems (paired,
  within each bucket).
* :func:`paired_means_by_length` -- two systems' per-sentence measures (the source gain in nats)
  per source-length bucket with paired bands, and the slope of their difference over length,
  the sentences of every bucket resampled jointly for both systems.
* :func:`paired_bootstrap` -- sacreBLEU's paired bootstrap test of two systems' BLEU, with the
  interval of the difference over the very resamples sacreBLEU draws.
* :func:`seeds_difference` -- the difference of two groups of runs (MERT seeds) with its
  standard error; :func:`t_quantile` the Student t quantile for it (Welch's degrees of freedom);
  the claims' rule ``seeds_above`` judges it.
* :func:`seeds_and_sentences` -- two MERT-tuned systems, several optimiser seeds each, on the
  same test sentences: the difference of their mean BLEU with an interval that combines the
  seeds' spread and the test set's resampling (Clark et al. 2011).
* :func:`subset_difference` -- BLEU of a subset (No UNK, one length bucket) against BLEU of the
  whole it lies in, on the same resamples of the whole (paired).

Why our own and not ``scipy.stats.bootstrap`` or sacreBLEU alone: the book's intervals are
percentile intervals over a fixed number of resamples drawn from a seeded
``numpy.random.Generator``, one generator shared by a chapter's claims in a fixed order, so a
rebuild draws the same resamples and every glued number is reproducible bit for bit;
``scipy.stats.bootstrap`` draws its resamples in its own order (and defaults to BCa), so calling
it would move every published interval. For BLEU, sacreBLEU's ``PairedTest`` gives the p-value
and each system's own interval but not the interval of the *difference*, and corpus BLEU of a
resample needs sacreBLEU's sufficient statistics (:mod:`rnnlib.bleu`).

``seed`` arguments take an ``int`` or a ``numpy.random.Generator``: a generator is used as it is
(``numpy.random.default_rng`` passes it through), so several calls can share one stream.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Sequence

import numpy as np
import pandas as pd

from . import bleu
from .resampling import BlockResampler


def percentile_interval(samples, level: float = 0.95, axis=None, nan: bool = False) -> np.ndarray:
    """The percentile interval of bootstrap ``samples`` at ``level``: their percentiles
    ``50 - 50 level`` and ``50 + 50 level`` (exactly 2.5 and 97.5 at the usual 0.95), along
    ``axis``; ``nan=True`` ignores NaN samples (a resample on which a statistic is undefined).
    Every interval of the book ends where this function puts it."""
    if not 0 < level < 1:
        raise ValueError(f"percentile_interval: need 0 < level < 1, got {level}")
    ends = [50 - 50 * level, 50 + 50 * level]
    return (np.nanpercentile if nan else np.percentile)(samples, ends, axis=axis)


def block_widening(n_blocks: int | None, level: float = 0.95) -> float:
    """The factor ``c`` by which :func:`block_interval` widens a percentile interval read on
    resamples of ``n_blocks`` whole blocks (``G``)::

        c = sqrt(G / (G - 1)) * t_{(1 + level) / 2, G - 1} / z_{(1 + level) / 2}

    A bootstrap that draws ``G`` blocks with replacement has the variance of the mean of ``G``
    independent block totals with the divisor ``G``: ``(G - 1) / G`` of the unbiased one, and its
    percentile interval is read as if the statistic were normal with that variance known,
    where with ``G`` clusters the standardised statistic is closer to Student's t with ``G - 1``
    degrees of freedom. Both are the few-clusters corrections of cluster-robust inference
    (Cameron, Gelbach & Miller 2008, "Bootstrap-based improvements for inference with
    clustered errors", Rev. Econ. Stat. 90(3); Cameron & Miller 2015, "A practitioner's guide
    to cluster-robust inference", J. Human Resources 50(2), Sec. VI: the ``G / (G - 1)``
    variance factor and ``t`` critical values with ``G - 1`` degrees of freedom). ``c``
    falls to 1 as ``G`` grows (1.115 at ``G = 17``, 1.035 at 51, 1.015 at 120).
    ``n_blocks=None`` (the sentence bootstrap): 1, no correction; fewer than 2 blocks: NaN
    (one block resampled gives no spread to correct)."""
    if n_blocks is None:
        return 1.0
    if not 0 < level < 1:
        raise ValueError(f"block_widening: need 0 < level < 1, got {level}")
    if n_blocks < 2:
        return math.nan
    from scipy.stats import norm, t

    q = 0.5 + level / 2
    return math.sqrt(n_blocks / (n_blocks - 1)) * float(t.ppf(q, n_blocks - 1) / norm.ppf(q))


def block_interval(
    samples, point: float, n_blocks: int | None, level: float = 0.95, nan: bool = False
) -> tuple[float, float, float]:
    """``(low, high, c)``: the percentile interval (:func:`percentile_interval`) of bootstrap
    ``samples (R,)`` of a statistic whose estimate is ``point``, drawn by resampling
    ``n_blocks`` whole blocks, widened about ``point`` by ``c = block_widening(n_blocks,
    level)``: ``low = point - c (point - p_low)``, ``high = point + c (p_high - point)``, the
    percentile interval of ``point + c (samples - point)`` (the resamples' deviations from the
    estimate scaled by ``c``). ``n_blocks=None``: the sentence bootstrap's percentile interval
    unchanged (``c = 1``). ``nan=True`` ignores NaN samples."""
    low, high = percentile_interval(samples, level, nan=nan)
    c = block_widening(n_blocks, level)
    if n_blocks is None:
        return float(low), float(high), c
    return float(point - c * (point - low)), float(point + c * (high - point)), c


def block_t_interval(totals, sizes, picks, level: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean over the items of ``G`` blocks, ``totals (G,)`` the sum
    of each block's values and ``sizes (G,)`` its number of items, with the studentized
    (percentile-t) interval of the block bootstrap whose resample ``r`` draws block ``g``
    ``picks[r, g]`` times (``picks (R, G)``).

    Each resample's mean ``m* = picks @ totals / picks @ sizes`` is studentized by its own
    cluster-robust standard error ``se* = sqrt(G / (G - 1) sum_g picks_g (totals_g - m*
    sizes_g)^2) / picks @ sizes``, ``t* = (m* - m) / se*``, and the interval is ``m - q_hi se,
    m - q_lo se`` with ``q_lo``, ``q_hi`` the percentiles ``50 -/+ 50 level`` of the ``t*`` and
    ``se`` the sample's own. With few blocks this is the few-clusters bootstrap that Cameron,
    Gelbach & Miller (2008, Rev. Econ. Stat. 90(3); Cameron & Miller 2015, J. Human Resources
    50(2), Sec. VI) recommend: the pivot needs no ``G / (G - 1)`` or t correction (the factor
    cancels), and unlike a widening about the estimate it follows a small share's skew (a
    share near 0 whose resamples are low spreads little below and much above). Resamples with
    no spread (``se* = 0``) are left out; a sample with none gives ``(mean, mean)``; fewer
    than 2 blocks: NaN ends."""
    totals, sizes = np.asarray(totals, dtype=float), np.asarray(sizes, dtype=float)
    picks = np.asarray(picks, dtype=float)
    g = len(totals)
    mean = float(totals.sum() / sizes.sum())
    if g < 2:
        return mean, math.nan, math.nan

    def se_of(k, m):
        resid = totals - np.asarray(m)[..., None] * sizes
        return np.sqrt(g / (g - 1) * (k * resid**2).sum(-1)) / (k @ sizes)

    se = float(se_of(np.ones(g), mean))
    if not se > 0:
        return mean, mean, mean
    ms = picks @ totals / (picks @ sizes)
    ses = se_of(picks, ms)
    ok = ses > 0
    q_lo, q_hi = percentile_interval((ms[ok] - mean) / ses[ok], level)
    return mean, float(mean - q_hi * se), float(mean - q_lo * se)


def resamples(
    n: int, n_samples: int, seed: int | np.random.Generator = 0, blocks=None
) -> tuple[np.ndarray | list[np.ndarray], int | None]:
    """``(draws, n_blocks)``: the item indices of ``n_samples`` bootstrap resamples of ``n``
    items from ``default_rng(seed)``. ``blocks=None``: the sentence bootstrap, ``(n_samples, n)``
    indices drawn with replacement (``n_blocks`` None); ``blocks (n,)`` (a block id per item,
    a Bible chapter per verse): the block bootstrap of :class:`rnnlib.resampling.BlockResampler`,
    a list of ``n_samples`` index arrays of varying length (whole blocks drawn with replacement,
    as many as there are). With every item its own block the draws are the sentence
    bootstrap's, index for index."""
    if blocks is None:
        return np.random.default_rng(seed).choice(n, size=(n_samples, n)), None
    blocks = np.asarray(blocks)
    if blocks.shape != (n,):
        raise ValueError(f"resamples: {blocks.shape} block ids for {n} items")
    resampler = BlockResampler(blocks)
    return resampler.draws(n_samples, seed), resampler.n_blocks


def _lines(blocks) -> bool:
    """Whether ``blocks`` are blocks of consecutive lines of a file
    (:class:`rnnlib.line_blocks.LineBlocks`), whose BLEU intervals are studentized
    (:func:`_t_interval`)."""
    from .line_blocks import LineBlocks

    return isinstance(blocks, LineBlocks)


def _t_interval(parts, weights, blocks, draws, level: float = 0.95) -> tuple[float, float]:
    """``(low, high)``: the studentized interval of the BLEU contrast ``sum_j weights[j]
    BLEU(parts[j])`` (``parts``: per-sentence statistics ``(n, 10)`` each, zero rows for
    sentences outside a part) over the block bootstrap's resamples ``draws`` of ``blocks``
    (:func:`rnnlib.bleu_t.contrast_t_interval`)."""
    from . import bleu_t

    ids, g = bleu_t.block_ids(blocks)
    sums = [bleu_t.block_sums(st, ids, g) for st in parts]
    _, low, high = bleu_t.contrast_t_interval(sums, weights, bleu_t.picks_of(draws, ids, g), level)
    return low, high


def _scores(scorer, st: np.ndarray, draws) -> np.ndarray:
    """Corpus BLEU of each resample ``draws`` (index arrays, equal or varying lengths) of the
    per-sentence statistics ``st (n, 10)``: ``(R,)``."""
    if isinstance(draws, np.ndarray):
        return bleu.resampled_scores(scorer, st, draws)
    return np.array([scorer._compute_score_from_stats(st[ix].sum(0)).score for ix in draws])


def bootstrap_rounds(
    n_items: int, statistic, n_boot: int, seed: int | np.random.Generator = 0, draws: int = 1
) -> np.ndarray:
    """``(n_boot, k)``: ``statistic(*indices)`` (``k`` numbers) of each of ``n_boot`` rounds, where
    a round draws ``draws`` resamples of ``n_items`` indices with replacement, one after the
    other, from one generator. For statistics of several quantities over the same items whose
    intervals must come from one stream of draws (paper A's Fig. 3: the rank correlations over
    one resample of the pairs, the share scored far apart over the next); read the intervals
    with :func:`percentile_interval` (``axis=0``)."""
    rng = np.random.default_rng(seed)
    rounds = []
    for _ in range(n_boot):
        indices = [rng.integers(0, n_items, n_items) for _ in range(draws)]
        rounds.append(statistic(*indices))
    return np.array(rounds)


def bootstrap_mean(
    values: np.ndarray,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    blocks=None,
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of ``values (L,)`` and its percentile bootstrap interval
    at ``level`` (``n_boot`` resamples of the ``L`` values with replacement, seeded). For a
    purity difference the values are per-point differences of
    :func:`rnnlib.experiments.representations.purity.knn_same` (or ``chance_same``) over the same
    labelled points: the points are resampled, their neighbour lists stay as computed.
    ``blocks (L,)``: a block id per value (the Bible chapter of a test verse): whole blocks are
    resampled (:func:`resamples`), each resample's mean over its varying number of values, and
    the interval is the studentized one of those resamples (:func:`block_t_interval`: the mean
    has a closed-form cluster-robust standard error, so the pivot replaces the percentiles)."""
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or len(values) == 0:
        raise ValueError(
            f"bootstrap_mean: values must be a non-empty 1-D array, got shape {values.shape}"
        )
    if n_boot < 1 or not 0 < level < 1:
        raise ValueError(
            f"bootstrap_mean: need n_boot >= 1 and 0 < level < 1, got {n_boot}, {level}"
        )
    if blocks is not None:
        draws, _ = resamples(len(values), n_boot, seed, blocks)
        _, ids = np.unique(np.asarray(blocks), return_inverse=True)
        ids = np.asarray(ids).reshape(-1)
        sizes = np.bincount(ids)
        picks = np.stack([np.bincount(ids[ix], minlength=len(sizes)) for ix in draws]) / sizes
        _, lo, hi = block_t_interval(np.bincount(ids, values), sizes, picks, level)
        return float(values.mean()), lo, hi
    rng = np.random.default_rng(seed)  # a Generator passes through unchanged
    means = values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(1)
    lo, hi = percentile_interval(means, level)
    return float(values.mean()), float(lo), float(hi)


def bootstrap_spearman(
    x: np.ndarray,
    y: np.ndarray,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(rho, low, high)``: Spearman's rank correlation of ``x`` and ``y`` (one value per hidden
    unit, ``(n,)``) and its percentile bootstrap interval over the units (``n_boot`` resamples
    of the units with replacement, seeded; a resample without spread in ``x`` or ``y`` is
    skipped)."""
    from scipy.stats import spearmanr

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 3:
        raise ValueError(
            "bootstrap_spearman: need two 1-D arrays of the same length >= 3, "
            f"got {x.shape}, {y.shape}"
        )
    rho = float(spearmanr(x, y)[0])
    rng = np.random.default_rng(seed)
    rhos = []
    for _ in range(n_boot):
        i = rng.integers(0, len(x), size=len(x))
        if np.ptp(x[i]) > 0 and np.ptp(y[i]) > 0:
            rhos.append(spearmanr(x[i], y[i])[0])
    if not rhos:
        return rho, float("nan"), float("nan")
    lo, hi = percentile_interval(rhos, level)
    return rho, float(lo), float(hi)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    blocks=None,
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``a - b`` over paired items (the same sentences, pairs or points),
    the items resampled together: :func:`bootstrap_mean` of the differences (``blocks``: its
    block ids)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(
            f"paired_difference: the samples are not paired: shapes {a.shape} and {b.shape}"
        )
    return bootstrap_mean(a - b, n_boot, seed, level, blocks)


def paired_ratio(
    a: Sequence[float],
    b: Sequence[float],
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(mean(a) / mean(b), low, high)`` over paired items ``a (L,)``, ``b (L,)`` (two arms'
    updates timed on the same minibatch in the same round): each of ``n_boot`` resamples draws
    ``L`` items with replacement, the same for both, and takes the ratio of their means; the
    percentile interval at ``level``. The draws are :func:`bootstrap_mean`'s."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1 or len(a) == 0:
        raise ValueError(
            f"paired_ratio: need two paired, non-empty 1-D samples, got {a.shape} and {b.shape}"
        )
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(n_boot, len(a)))
    low, high = percentile_interval(a[idx].mean(1) / b[idx].mean(1), level)
    return float(a.mean() / b.mean()), float(low), float(high)


def mean_difference(
    a: Sequence[float],
    b: Sequence[float],
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(mean(a) - mean(b), low, high)`` for two unpaired samples: each resample draws ``len(a)``
    values of ``a`` and then ``len(b)`` values of ``b`` with replacement; the percentile interval
    of the difference of their means."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) == 0 or len(b) == 0:
        raise ValueError(f"mean_difference: empty sample ({len(a)} and {len(b)} values)")
    rng = np.random.default_rng(seed)
    diffs = [rng.choice(a, len(a)).mean() - rng.choice(b, len(b)).mean() for _ in range(n_boot)]
    low, high = percentile_interval(diffs, level)
    return float(a.mean() - b.mean()), float(low), float(high)


def seeds_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """``(mean(a) - mean(b), standard error)`` of two groups of runs that differ by their optimiser
    seed (MERT's random restarts): the sample variances (``n - 1``) of each group, added.
    Needs at least two runs per group."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"seeds_difference: need two runs per group, got {len(a)} and {len(b)}")
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    return ma - mb, math.sqrt(va / len(a) + vb / len(b))


def t_quantile(a: Sequence[float], b: Sequence[float], level: float = 0.95) -> float:
    """The two-sided Student t quantile at ``level`` for the difference of the means of ``a`` and
    ``b`` (runs of two systems), with Welch--Satterthwaite's degrees of freedom; where both
    groups have no spread, those of a pooled test (``len(a) + len(b) - 2``)."""
    from scipy.stats import t

    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        raise ValueError(f"t_quantile: need two runs per group, got {na} and {nb}")
    va, vb = np.var(a, ddof=1) / na, np.var(b, ddof=1) / nb
    if va + vb > 0:
        df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    else:
        df = na + nb - 2
    return float(t.ppf(0.5 + level / 2, df))


def seeds_and_sentences(
    hyps_a: Sequence[Sequence[str]],
    hyps_b: Sequence[Sequence[str]],
    refs: Sequence[str],
    n_samples: int = 1000,
    seed=bleu.SACREBLEU_SEED,
    level: float = 0.95,
) -> dict:
    """Two MERT-tuned systems, each tuned with several optimiser seeds (``hyps_a[i]`` the test
    output of system a's ``i``-th seed), scored on the same test sentences ``refs``.

    The difference is ``mean_i BLEU(a_i) - mean_j BLEU(b_j)``. Its noise has two sources (Clark
    et al. 2011, "Better hypothesis testing for statistical machine translation"): the
    optimiser's seeds, whose variance is ``var_seeds = s_a^2/n_a + s_b^2/n_b`` (sample variances
    of the seeds' BLEU), and the test set, whose variance ``var_test`` is that of the difference
    over ``n_samples`` paired resamples of the sentences (every seed of both systems scored on
    the same resample). The interval is ``diff -/+ q sqrt(var_seeds + var_test)`` with ``q`` the
    t quantile of Welch's degrees of freedom for the seeds' part, the test part counted as known
    (Satterthwaite: its degrees of freedom are those of the resamples, effectively infinite).
    With one seed per system only the test set's part is known and ``q`` is the normal quantile.

    Returns ``{"diff", "low", "high", "se_seeds", "se_test", "df", "q", "bleu_a", "bleu_b"}``
    (``bleu_a``/``bleu_b``: each seed's corpus BLEU)."""

    if not hyps_a or not hyps_b:
        raise ValueError("seeds_and_sentences: each system needs at least one seed's output")
    for k, hyps in enumerate([*hyps_a, *hyps_b]):
        bleu.check_pairs(hyps, refs, f"seeds_and_sentences (output {k})")
    if not refs:
        raise ValueError("seeds_and_sentences: no sentences")
    stats_a, stats_b = [], []
    scorer = None
    for hyps in hyps_a:
        scorer, st = bleu.sufficient_stats(hyps, refs)
        stats_a.append(st)
    for hyps in hyps_b:
        _, st = bleu.sufficient_stats(hyps, refs)
        stats_b.append(st)
    whole = np.arange(len(refs))[None, :]
    ba = np.array([bleu.resampled_scores(scorer, st, whole)[0] for st in stats_a])
    bb = np.array([bleu.resampled_scores(scorer, st, whole)[0] for st in stats_b])
    diff = float(ba.mean() - bb.mean())
    idxs = np.random.default_rng(seed).choice(len(refs), size=(n_samples, len(refs)))
    ra = np.mean([bleu.resampled_scores(scorer, st, idxs) for st in stats_a], axis=0)
    rb = np.mean([bleu.resampled_scores(scorer, st, idxs) for st in stats_b], axis=0)
    var_test = float(np.var(ra - rb, ddof=1)) if n_samples > 1 else 0.0
    na, nb = len(ba), len(bb)
    va = float(np.var(ba, ddof=1)) / na if na > 1 else 0.0
    vb = float(np.var(bb, ddof=1)) / nb if nb > 1 else 0.0
    var_seeds = va + vb
    terms = (va**2 / (na - 1)) + (vb**2 / (nb - 1)) if na > 1 and nb > 1 else 0.0
    low, high, df, q = _satterthwaite(diff, var_seeds, terms, var_test, level)
    return {
        "diff": diff,
        "low": low,
        "high": high,
        "se_seeds": math.sqrt(var_seeds),
        "se_test": math.sqrt(var_test),
        "df": df,
        "q": q,
        "bleu_a": ba.tolist(),
        "bleu_b": bb.tolist(),
    }


def _satterthwaite(
    diff: float, var_runs: float, terms: float, var_test: float, level: float
) -> tuple[float, float, float, float]:
    """``(low, high, df, q)``: ``diff -/+ q sqrt(var_runs + var_test)``, ``q`` the t quantile of
    Satterthwaite's degrees of freedom ``(var_runs + var_test)^2 / terms`` (``terms``: the sum of
    each run variance's square over its degrees of freedom; the test part's own taken as
    infinite), the normal quantile when the runs' part is unknown or 0."""
    from scipy.stats import norm, t

    if var_runs > 0 and terms > 0:
        df = (var_runs + var_test) ** 2 / terms
        q = float(t.ppf(0.5 + level / 2, df))
    else:
        df = math.inf
        q = float(norm.ppf(0.5 + level / 2))
    half = q * math.sqrt(var_runs + var_test)
    return diff - half, diff + half, float(df), q


def rebuilds_and_sentences(
    groups_a: Sequence[Sequence[Sequence[str]]],
    groups_b: Sequence[Sequence[Sequence[str]]],
    refs: Sequence[str],
    n_samples: int = 1000,
    seed=bleu.SACREBLEU_SEED,
    level: float = 0.95,
) -> dict:
    """Two MERT-tuned systems built again on several rebuilds (the rebuild spread: independent
    word alignments, each with its own phrase table and network), each rebuild tuned with several
    optimiser seeds: ``groups_a[r][i]`` is system a's test output on rebuild ``r``, seed ``i``.
    Both systems of a rebuild share it, so the rebuild is the independent unit (its seeds are
    not: treating every run as independent would count a rebuild's shared alignment as several
    observations).

    The difference is the mean over rebuilds of ``g_r = mean_i BLEU(a_ri) - mean_j BLEU(b_rj)``.
    Its noise: the spread of the ``g_r`` (their sample variance over ``R`` rebuilds, divided by
    ``R``; it contains the seeds' noise, averaged within each rebuild), and the test set's,
    the variance of the difference over ``n_samples`` paired resamples of the sentences (every
    run of both systems scored on the same resample), as in :func:`seeds_and_sentences`. The
    interval is ``diff -/+ q sqrt(var_rebuilds + var_test)`` with ``q`` the t quantile of
    Satterthwaite's degrees of freedom (``R - 1`` for the rebuilds' part, the test part counted
    as known). With one rebuild this is :func:`seeds_and_sentences`.

    Returns ``{"diff", "low", "high", "se_rebuilds", "se_test", "df", "q", "gains"}`` (``gains``:
    each rebuild's ``g_r``)."""

    if len(groups_a) != len(groups_b) or not groups_a:
        raise ValueError(
            f"rebuilds_and_sentences: {len(groups_a)} rebuilds of a, {len(groups_b)} of b; "
            "both systems need the same rebuilds, at least one"
        )
    if len(groups_a) == 1:
        r = seeds_and_sentences(groups_a[0], groups_b[0], refs, n_samples, seed, level)
        keep = ("diff", "low", "high", "se_test", "df", "q")
        return {**{k: r[k] for k in keep}, "se_rebuilds": r["se_seeds"], "gains": [r["diff"]]}
    gains = [
        seeds_and_sentences(a, b, refs, n_samples=1, seed=seed)["diff"]
        for a, b in zip(groups_a, groups_b)
    ]
    n = len(gains)
    # the test set's part: every run of a against every run of b on the same resamples (with as
    # many seeds in every rebuild, the mean over rebuilds of their seeds' means, as the difference)
    pooled = seeds_and_sentences(
        [h for g in groups_a for h in g], [h for g in groups_b for h in g], refs, n_samples, seed
    )
    var_test = pooled["se_test"] ** 2
    var_rebuilds = float(np.var(gains, ddof=1)) / n
    diff = float(np.mean(gains))
    low, high, df, q = _satterthwaite(
        diff, var_rebuilds, var_rebuilds**2 / (n - 1), var_test, level
    )
    return {
        "diff": diff,
        "low": low,
        "high": high,
        "se_rebuilds": math.sqrt(var_rebuilds),
        "se_test": math.sqrt(var_test),
        "df": df,
        "q": q,
        "gains": gains,
    }


def subset_difference(
    hyps: Sequence[str],
    refs: Sequence[str],
    subset: Sequence[bool],
    n_samples: int = 1000,
    seed=bleu.SACREBLEU_SEED,
    level: float = 0.95,
    subset_hyps: Sequence[str] | None = None,
    blocks=None,
) -> dict:
    """``BLEU(subset) - BLEU(all)`` for one system, where ``subset`` (``(n,) bool``) marks the
    sentences of a part of the test set (No UNK within All; one length bucket within the whole).
    The two are not independent, so they are resampled together: each of the ``n_samples``
    rounds draws ``n`` sentences of the whole with replacement and scores the whole draw and the
    part of it that lies in the subset. ``subset_hyps`` (one per marked sentence, in order): the
    subset's own translations where they come from another search than ``hyps`` (B Table 1's
    No UNK column forbids [UNK] while searching); by default the subset's sentences of ``hyps``.
    ``blocks (n,)``: a block id per sentence (its Bible chapter): each round draws whole blocks
    of the whole instead (:func:`resamples`), the subset's sentences with them.
    Returns ``{"diff", "low", "high", "bleu_subset", "bleu_all", "n_subset", "blocks",
    "widening"}`` (``blocks``: the number of blocks resampled, None for the sentence bootstrap);
    the interval is the percentile interval at ``level``, with blocks widened about ``diff`` by
    ``widening`` (:func:`block_interval`; None for the sentence bootstrap). Blocks of lines of a
    file (:class:`rnnlib.line_blocks.LineBlocks`) get the studentized interval of the same
    resamples instead (:mod:`rnnlib.bleu_t`; ``widening`` None, ``studentized`` True)."""
    bleu.check_pairs(hyps, refs, "subset_difference")
    mask = np.asarray(subset, dtype=bool)
    if mask.shape != (len(refs),):
        raise ValueError(
            f"subset_difference: the subset marks {mask.shape[0]} sentences, the test set has "
            f"{len(refs)}"
        )
    if not mask.any():
        raise ValueError("subset_difference: the subset is empty")
    scorer, st = bleu.sufficient_stats(hyps, refs)
    st_sub = st
    if subset_hyps is not None:
        picked = [r for r, m in zip(refs, mask) if m]
        bleu.check_pairs(subset_hyps, picked, "subset_difference (the subset's translations)")
        st_sub = st.copy()
        st_sub[mask] = bleu.sufficient_stats(subset_hyps, picked)[1]
    b_all = float(scorer._compute_score_from_stats(st.sum(0)).score)
    b_sub = float(scorer._compute_score_from_stats(st_sub[mask].sum(0)).score)
    idxs, n_blocks = resamples(len(refs), n_samples, seed, blocks)
    if _lines(blocks):
        part = np.where(mask[:, None], st_sub, 0.0)
        low, high, c = *_t_interval([part, st], [1.0, -1.0], blocks, idxs, level), None
    else:
        diffs = np.empty(n_samples)
        for r, ix in enumerate(idxs):
            whole = st[ix]
            part = st_sub[ix][mask[ix]]
            s_all = scorer._compute_score_from_stats(whole.sum(0)).score
            s_sub = scorer._compute_score_from_stats(part.sum(0)).score if len(part) else np.nan
            diffs[r] = s_sub - s_all
        low, high, c = block_interval(diffs, b_sub - b_all, n_blocks, level, nan=True)
    return {
        "diff": b_sub - b_all,
        "low": low,
        "high": high,
        "bleu_subset": b_sub,
        "bleu_all": b_all,
        "n_subset": int(mask.sum()),
        "blocks": n_blocks,
        "widening": None if n_blocks is None else c,
        "studentized": _lines(blocks),
    }


def gap_change(
    hyps_a: Sequence[str],
    hyps_b: Sequence[str],
    refs: Sequence[str],
    subset: Sequence[bool],
    subset_hyps_a: Sequence[str] | None = None,
    subset_hyps_b: Sequence[str] | None = None,
    n_samples: int = 1000,
    seed=bleu.SACREBLEU_SEED,
    level: float = 0.95,
    blocks=None,
) -> dict:
    """How the gap between two systems changes from the whole test set to a part of it:
    ``(BLEU_a(all) - BLEU_b(all)) - (BLEU_a(subset) - BLEU_b(subset))`` (B Table 1: a lead on All
    that shrinks on No UNK). One joint paired bootstrap: each of the ``n_samples`` rounds draws
    ``n`` sentences of the whole with replacement and scores both systems on the draw and on the
    part of it inside ``subset`` (``(n,) bool``), so the four scores share their sentences.
    ``subset_hyps_a``/``_b`` (one per marked sentence, in order): the part's own translations
    (No UNK's search forbids [UNK]; default: the marked sentences of ``hyps_a``/``_b``).
    ``blocks (n,)``: a block id per sentence: each round draws whole blocks (:func:`resamples`).
    Returns ``{"diff", "low", "high", "gap_all", "gap_subset", "n_subset", "blocks",
    "widening"}`` (``blocks``: the number of blocks, None for the sentence bootstrap); the
    interval is the percentile interval at ``level``, with blocks widened about ``diff`` by
    ``widening`` (:func:`block_interval`; None for the sentence bootstrap). Blocks of lines of a
    file (:class:`rnnlib.line_blocks.LineBlocks`) get the studentized interval of the same
    resamples instead (:mod:`rnnlib.bleu_t`; ``widening`` None, ``studentized`` True)."""
    mask = np.asarray(subset, dtype=bool)
    if mask.shape != (len(refs),) or not mask.any():
        raise ValueError(
            f"gap_change: the subset must mark some of the {len(refs)} sentences, it marks "
            f"{int(mask.sum())} of {mask.shape[0]}"
        )
    picked = [r for r, m in zip(refs, mask) if m]

    def stats_of(hyps, sub_hyps, who):
        bleu.check_pairs(hyps, refs, f"gap_change (system {who})")
        scorer, st = bleu.sufficient_stats(hyps, refs)
        st_sub = st.copy()
        if sub_hyps is not None:
            bleu.check_pairs(sub_hyps, picked, f"gap_change (system {who}, the subset)")
            st_sub[mask] = bleu.sufficient_stats(sub_hyps, picked)[1]
        return scorer, st, st_sub

    scorer, st_a, sub_a = stats_of(hyps_a, subset_hyps_a, "a")
    _, st_b, sub_b = stats_of(hyps_b, subset_hyps_b, "b")

    def score(st):
        return scorer._compute_score_from_stats(st.sum(0)).score if len(st) else np.nan

    def change(ix):
        part = ix[mask[ix]]
        gap_all = score(st_a[ix]) - score(st_b[ix])
        return gap_all, score(sub_a[part]) - score(sub_b[part])

    whole = np.arange(len(refs))
    gap_all, gap_sub = change(whole)
    idxs, n_blocks = resamples(len(refs), n_samples, seed, blocks)
    if _lines(blocks):
        parts = [st_a, st_b] + [np.where(mask[:, None], sub, 0.0) for sub in (sub_a, sub_b)]
        low, high, c = *_t_interval(parts, [1.0, -1.0, -1.0, 1.0], blocks, idxs, level), None
    else:
        diffs = np.array([np.subtract(*change(ix)) for ix in idxs])
        low, high, c = block_interval(diffs, float(gap_all - gap_sub), n_blocks, level, nan=True)
    return {
        "diff": float(gap_all - gap_sub),
        "low": low,
        "high": high,
        "gap_all": float(gap_all),
        "gap_subset": float(gap_sub),
        "n_subset": int(mask.sum()),
        "blocks": n_blocks,
        "widening": None if n_blocks is None else c,
        "studentized": _lines(blocks),
    }


def bleu_by_length(
    hyps: Sequence[str],
    refs: Sequence[str],
    lengths: Sequence[int],
    edges: Sequence[int],
    n_boot: int = 1000,
    seed: int = bleu.SACREBLEU_SEED,
    level: float = 0.95,
) -> pd.DataFrame:
    """Corpus BLEU per source-length bucket, one row per bucket.

    Buckets are ``[edges[k], edges[k+1])`` and a last one ``>= edges[-1]``; every sentence
    falls in exactly one (``lengths`` must be >= ``edges[0]``). Columns: ``bucket`` (label),
    ``low_len``, ``high_len`` (exclusive; ``inf`` for the last), ``mid`` (x position for a plot),
    ``sentences``, ``bleu``, ``band_low``, ``band_high`` (the ``level`` percentile bootstrap
    interval of the bucket's BLEU, ``n_boot`` resamples of its sentences; NaN with ``n_boot=0``
    or an empty bucket). Empty buckets are kept with ``sentences = 0`` and BLEU NaN.
    """
    bleu.check_pairs(hyps, refs, "bleu_by_length")
    lengths = np.asarray(lengths)
    if len(lengths) != len(hyps):
        raise ValueError(f"bleu_by_length: {len(lengths)} lengths for {len(hyps)} hypotheses")
    edges = [int(e) for e in edges]
    if not edges or any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"bleu_by_length: edges {edges} must be increasing")
    if len(lengths) and lengths.min() < edges[0]:
        raise ValueError(
            f"bleu_by_length: a sentence of length {lengths.min()} is below the first edge "
            f"{edges[0]}"
        )
    bucket = np.searchsorted(edges, lengths, side="right") - 1
    scorer, stats = bleu.sufficient_stats(hyps, refs) if len(hyps) else (None, None)
    rng = np.random.default_rng(seed)
    rows = []
    for k, low in enumerate(edges):
        high = edges[k + 1] if k + 1 < len(edges) else np.inf
        members = np.flatnonzero(bucket == k)
        row = {
            "bucket": f"{low}-{int(high) - 1}" if np.isfinite(high) else f">={low}",
            "low_len": low,
            "high_len": high,
            "mid": (low + high - 1) / 2 if np.isfinite(high) else low + (edges[1] - edges[0]) / 2,
            "sentences": len(members),
            "bleu": np.nan,
            "band_low": np.nan,
            "band_high": np.nan,
        }
        if len(members):
            part = stats[members]
            row["bleu"] = scorer._compute_score_from_stats(part.sum(0)).score
            if n_boot > 0:
                scores = bleu.resampled_scores(
                    scorer, part, rng.integers(0, len(members), size=(n_boot, len(members)))
                )
                row["band_low"], row["band_high"] = percentile_interval(scores, level)
        rows.append(row)
    return pd.DataFrame(rows)


def _relative_slope(bucket_bleu: np.ndarray, mids: np.ndarray, anchor: int = 0) -> float:
    """Least-squares slope of ``bucket_bleu / bucket_bleu[anchor]`` over ``mids`` (per token),
    NaN when the anchor bucket scores 0."""
    if not bucket_bleu[anchor] > 0:
        return math.nan
    return float(np.polyfit(mids, bucket_bleu / bucket_bleu[anchor], 1)[0])


def relative_length_slopes(
    hyps_a: Sequence[str],
    hyps_b: Sequence[str],
    refs: Sequence[str],
    lengths: Sequence[int],
    edges: Sequence[int],
    min_bucket: int,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    anchor_min: int | None = None,
    open_bucket: bool = True,
) -> dict:
    """How two systems' BLEU falls with source length, each relative to its own anchor bucket.

    The buckets are :func:`bleu_by_length`'s, those with at least ``min_bucket`` sentences kept
    (and without the open last bucket ``>= edges[-1]`` when ``open_bucket`` is false). The anchor
    is the shortest kept bucket with at least ``anchor_min`` sentences (default ``min_bucket``:
    the shortest kept one). For each system: corpus BLEU per kept bucket over its BLEU in the
    anchor (1 there), and the least-squares slope of that ratio against the bucket's middle
    length, per token (a slope of -0.01: a tenth of the anchor's BLEU lost every 10 tokens). The
    difference ``a - b`` of the slopes gets a percentile interval from ``n_boot`` paired
    resamples: each draws the sentences of every kept bucket with replacement (a bucket keeps its
    size), the same sentences for both systems (a resample on which a slope is undefined is left
    out and counted, ``nan_resamples``; above a twentieth of them the interval is NaN). The fit
    weighs the buckets alike; the open last bucket sits at its lower edge plus half a bucket.
    Returns ``{"buckets": DataFrame (bucket, mid, sentences, bleu_a, bleu_b, relative_a,
    relative_b), "anchor": the anchor's label or None, "slope_a", "slope_b", "diff", "low",
    "high", "n_boot", "nan_resamples"}``; NaN slopes (and interval) when fewer than 2 buckets are
    kept, no kept bucket holds ``anchor_min`` sentences, or a system scores 0 on its anchor."""
    bleu.check_pairs(hyps_a, refs, "relative_length_slopes")
    bleu.check_pairs(hyps_b, refs, "relative_length_slopes")
    lengths = np.asarray(lengths)
    base = bleu_by_length(hyps_a, refs, lengths, edges, n_boot=0)
    keep = base["sentences"] >= min_bucket
    if not open_bucket:
        keep &= np.isfinite(base["high_len"].to_numpy(dtype=float))
    kept = base[keep].reset_index(drop=True)
    members = [
        np.flatnonzero((lengths >= r.low_len) & (lengths < r.high_len)) for r in kept.itertuples()
    ]
    mids = kept["mid"].to_numpy(dtype=float)
    big = np.flatnonzero(kept["sentences"].to_numpy() >= (anchor_min or min_bucket))
    at = int(big[0]) if len(big) else None
    scorer, stats_a = bleu.sufficient_stats(hyps_a, refs)
    _, stats_b = bleu.sufficient_stats(hyps_b, refs)

    def bucket_scores(stats: np.ndarray, picks: list[np.ndarray]) -> np.ndarray:
        return np.array([scorer._compute_score_from_stats(stats[m].sum(0)).score for m in picks])

    a, b = bucket_scores(stats_a, members), bucket_scores(stats_b, members)
    table = kept[["bucket", "mid", "sentences"]].assign(
        bleu_a=a,
        bleu_b=b,
        relative_a=a / a[at] if at is not None and a[at] > 0 else np.nan,
        relative_b=b / b[at] if at is not None and b[at] > 0 else np.nan,
    )
    out = {"buckets": table, "n_boot": n_boot, "anchor": None if at is None else kept["bucket"][at]}
    nan = {"slope_a": math.nan, "slope_b": math.nan, "diff": math.nan}
    if len(kept) < 2 or at is None:
        return {**out, **nan, "low": math.nan, "high": math.nan, "nan_resamples": 0}
    slope_a, slope_b = _relative_slope(a, mids, at), _relative_slope(b, mids, at)
    out.update(slope_a=slope_a, slope_b=slope_b, diff=slope_a - slope_b)
    rng = np.random.default_rng(seed)
    diffs = np.empty(n_boot)
    for r in range(n_boot):
        picks = [m[rng.integers(0, len(m), size=len(m))] for m in members]
        diffs[r] = _relative_slope(bucket_scores(stats_a, picks), mids, at) - _relative_slope(
            bucket_scores(stats_b, picks), mids, at
        )
    finite = np.isfinite(diffs)
    out["nan_resamples"] = int((~finite).sum())
    # a resample whose anchor bucket scores 0 has no relative slope: it is left out, and
    # counted; with more than a twentieth of them left out, no interval is claimed
    if n_boot and np.isfinite(out["diff"]) and finite.sum() >= 0.95 * n_boot:
        out["low"], out["high"] = (float(x) for x in percentile_interval(diffs[finite], level))
    else:
        out["low"] = out["high"] = math.nan
    return out


def _slope(values: np.ndarray, mids: np.ndarray) -> np.ndarray:
    """Least-squares slope over ``mids (B,)`` of each row of ``values (..., B)``: ``(...,)``."""
    x = mids - mids.mean()
    return (values - values.mean(-1, keepdims=True)) @ x / (x @ x)


def paired_means_by_length(
    a: Sequence[float],
    b: Sequence[float],
    lengths: Sequence[int],
    edges: Sequence[int],
    min_bucket: int,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    level: float = 0.95,
    open_bucket: bool = True,
) -> dict:
    """Two paired per-sentence measures by source-length bucket, and how their difference
    changes with length.

    ``a``, ``b``: ``(n,)`` one value per sentence for each system (NaN: the sentence has no value
    and is left out of both); ``lengths (n,)``; the buckets are :func:`bleu_by_length`'s
    (``[edges[k], edges[k+1])`` and a last ``>= edges[-1]``). Per bucket: the mean of ``a``, of
    ``b`` and of ``a - b`` over its sentences, each with a percentile interval from ``n_boot``
    resamples of the bucket's sentences, the same resamples for all three (paired). Over the
    buckets of at least ``min_bucket`` sentences (``solid``; the open last bucket never is with
    ``open_bucket`` false): the least-squares slope of the
    mean difference against the bucket's middle length (per token; the fit weighs the buckets
    alike, the open last bucket sits at its lower edge plus half a bucket), with the percentile
    interval of the slopes of the same resamples, each of which draws every bucket's sentences
    with replacement, both systems at once. Returns ``{"buckets": DataFrame (bucket, low_len,
    high_len, mid, sentences, solid, a, a_low, a_high, b, b_low, b_high, diff, low, high),
    "slope", "low", "high", "n_boot"}``; NaN slope and interval with fewer than two solid
    buckets, NaN bucket intervals below two sentences."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    lengths = np.asarray(lengths)
    if not a.shape == b.shape == lengths.shape or a.ndim != 1:
        raise ValueError(
            f"paired_means_by_length: shapes {a.shape}, {b.shape} and {lengths.shape} differ"
        )
    edges = [int(e) for e in edges]
    bucket = np.searchsorted(edges, lengths, side="right") - 1
    ok = np.isfinite(a) & np.isfinite(b)
    rng = np.random.default_rng(seed)
    rows, draws = [], []
    for k, low in enumerate(edges):
        high = edges[k + 1] if k + 1 < len(edges) else np.inf
        members = np.flatnonzero((bucket == k) & ok)
        picks = members[rng.integers(0, len(members), size=(n_boot, len(members)))]
        row = {
            "bucket": f"{low}-{int(high) - 1}" if np.isfinite(high) else f">={low}",
            "low_len": low,
            "high_len": high,
            "mid": (low + high - 1) / 2 if np.isfinite(high) else low + (edges[1] - edges[0]) / 2,
            "sentences": len(members),
            "solid": len(members) >= max(min_bucket, 1) and (open_bucket or np.isfinite(high)),
        }
        for name, v in (("a", a), ("b", b), ("diff", a - b)):
            lo, hi = (np.nan, np.nan)
            if len(members) >= 2 and n_boot:
                lo, hi = percentile_interval(v[picks].mean(1), level)
            head = v[members].mean() if len(members) else np.nan
            ends = ("low", "high") if name == "diff" else (f"{name}_low", f"{name}_high")
            row.update({name: float(head), ends[0]: float(lo), ends[1]: float(hi)})
        rows.append(row)
        draws.append(picks)
    table = pd.DataFrame(rows)
    out = {"buckets": table, "n_boot": n_boot, "slope": math.nan, "low": math.nan}
    out["high"] = math.nan
    solid = np.flatnonzero(table["solid"].to_numpy())
    if len(solid) < 2:
        return out
    mids = table["mid"].to_numpy(dtype=float)[solid]
    out["slope"] = float(_slope(table["diff"].to_numpy(dtype=float)[solid], mids))
    if n_boot:
        d = a - b
        resampled = np.stack([d[draws[k]].mean(1) for k in solid], axis=1)  # (n_boot, B)
        slopes = _slope(resampled, mids)
        out["low"], out["high"] = (float(x) for x in percentile_interval(slopes, level))
    return out


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


def paired_bootstrap(
    hyps_a: Sequence[str],
    hyps_b: Sequence[str],
    refs: Sequence[str],
    n_samples: int = 1000,
    seed: int = bleu.SACREBLEU_SEED,
    blocks=None,
) -> dict:
    """Paired bootstrap of BLEU(a) - BLEU(b) over the sentences (sacreBLEU's ``PairedTest``,
    ``bs``).

    Returns ``{"bleu_a", "bleu_b", "diff", "low", "high", "p_value", "sentences", "samples",
    "seed", "signature", "blocks", "widening"}``: ``low``/``high`` bound the 95% interval of the
    difference over the ``n_samples`` resamples sacreBLEU draws with ``seed``; ``p_value`` is
    sacreBLEU's (the chance of a difference at least this large if the systems were equal;
    sacreBLEU counts only resamples that exceed the observed difference, so two identical
    systems get ``1 / (n_samples + 1)``, not 1: read the interval).

    ``blocks (n,)``: a block id per sentence (its Bible chapter). The resamples are then the
    block bootstrap's (:func:`resamples`: whole blocks drawn with replacement, from ``seed``),
    the interval and ``p_value`` (sacreBLEU's formula) read on them, and the signature says
    ``blocks:<number>``; ``blocks`` in the result is that number (None: the sentence bootstrap).
    The interval is then the percentile interval widened about ``diff`` for the few blocks
    (:func:`block_interval`), by ``widening`` in the result (None: the sentence bootstrap);
    ``p_value`` stays sacreBLEU's formula on the raw resamples. Blocks of lines of a file
    (:class:`rnnlib.line_blocks.LineBlocks`, the user's own files) get the studentized interval
    of the same resamples instead (:mod:`rnnlib.bleu_t`: each resample's difference over its own
    delta-method standard error; ``widening`` None, ``studentized`` True, ``ci:t`` in the
    signature), which the calibration found to cover 95% where the widened one covered 93%.
    """
    bleu.check_pairs(hyps_a, refs, "paired_bootstrap (system a)")
    bleu.check_pairs(hyps_b, refs, "paired_bootstrap (system b)")
    if not refs:
        raise ValueError("paired_bootstrap: no sentences")
    if n_samples < 1 or seed <= 0:
        raise ValueError(
            f"paired_bootstrap: need n_samples >= 1 and seed > 0 (sacreBLEU treats 0 as no seed), "
            f"got {n_samples}, {seed}"
        )
    if blocks is not None:
        return _block_paired_bootstrap(hyps_a, hyps_b, refs, n_samples, seed, blocks)
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    with _sacrebleu_seed(seed):
        test = PairedTest(
            [("b", list(hyps_b)), ("a", list(hyps_a))],
            {"BLEU": BLEU()},
            [list(refs)],
            test_type="bs",
            n_samples=n_samples,
        )
        signatures, results = test()
    result_a = results["BLEU"][1]
    # the resamples of sacreBLEU's _paired_bs_test: default_rng(seed).choice(n, (n_samples, n))
    idxs = np.random.default_rng(seed).choice(len(refs), size=(n_samples, len(refs)), replace=True)
    scorer, stats_a = bleu.sufficient_stats(hyps_a, refs)
    _, stats_b = bleu.sufficient_stats(hyps_b, refs)
    diffs = bleu.resampled_scores(scorer, stats_a, idxs) - bleu.resampled_scores(
        scorer, stats_b, idxs
    )
    low, high = percentile_interval(diffs, 0.95)
    score_b = results["BLEU"][0].score
    return {
        "bleu_a": result_a.score,
        "bleu_b": score_b,
        "diff": result_a.score - score_b,
        "low": float(low),
        "high": float(high),
        "p_value": float(result_a.p_value),
        "sentences": len(refs),
        "samples": n_samples,
        "seed": seed,
        "signature": str(signatures["BLEU"]),
        "blocks": None,
        "widening": None,
        "studentized": False,
    }


def _block_paired_bootstrap(hyps_a, hyps_b, refs, n_samples: int, seed: int, blocks) -> dict:
    """:func:`paired_bootstrap` with whole blocks resampled: the same arithmetic as sacreBLEU's
    ``_paired_bs_test`` (corpus BLEU of each resample from the sentences' statistics; the
    p-value of the centred absolute differences against the observed one) on the block
    bootstrap's resamples; the interval widened about the difference (:func:`block_interval`)."""
    from sacrebleu.significance import _compute_p_value

    scorer, stats_a = bleu.sufficient_stats(hyps_a, refs)
    _, stats_b = bleu.sufficient_stats(hyps_b, refs)
    score_a = float(scorer._compute_score_from_stats(stats_a.sum(0)).score)
    score_b = float(scorer._compute_score_from_stats(stats_b.sum(0)).score)
    draws, n_blocks = resamples(len(refs), n_samples, seed, blocks)
    ra, rb = _scores(scorer, stats_a, draws), _scores(scorer, stats_b, draws)
    if _lines(blocks):
        low, high, c = *_t_interval([stats_a, stats_b], [1.0, -1.0], blocks, draws), None
    else:
        low, high, c = block_interval(ra - rb, score_a - score_b, n_blocks, 0.95)
    spread = np.abs(ra - rb)
    p_value = _compute_p_value(spread - spread.mean(), abs(score_a - score_b))
    fields = bleu.signature().split("|")
    fields[1:1] = [f"bs:{n_samples}", f"blocks:{n_blocks}", f"seed:{seed}"]
    if _lines(blocks):
        fields.insert(3, "ci:t")
    return {
        "bleu_a": score_a,
        "bleu_b": score_b,
        "diff": score_a - score_b,
        "low": low,
        "high": high,
        "p_value": float(p_value),
        "sentences": len(refs),
        "samples": n_samples,
        "seed": seed,
        "signature": "|".join(fields),
        "blocks": n_blocks,
        "widening": c,
        "studentized": _lines(blocks),
    }


__all__ = [
    "bleu_by_length",
    "block_interval",
    "block_t_interval",
    "block_widening",
    "bootstrap_mean",
    "bootstrap_rounds",
    "bootstrap_spearman",
    "mean_difference",
    "paired_bootstrap",
    "paired_difference",
    "paired_means_by_length",
    "paired_ratio",
    "percentile_interval",
    "relative_length_slopes",
    "resamples",
    "gap_change",
    "rebuilds_and_sentences",
    "seeds_and_sentences",
    "seeds_difference",
    "subset_difference",
    "t_quantile",
]
