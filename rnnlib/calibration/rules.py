"""The book's rules on BLEU, one simulated trial at a time, judged by :func:`rnnlib.verdicts.
evaluate` with the control and the floor each chapter gives them.

Every function here takes ``(pool, draw, rng, true)``: ``draw`` a simulated test set
(:func:`rnnlib.calibration.pool.draw_test`, with the counts of its sentence bootstrap), ``true``
whether the claim is true by the rule's stated effect (else false: two systems of equal
quality, or for a null claim a difference exactly at its margin), and returns an
:class:`Outcome`: the verdict word, the 95% interval the rule read and the population value it
should cover. The intervals are computed as :mod:`rnnlib.stats` computes them, on arrays
(:mod:`rnnlib.calibration.fast_bleu`); the tests compare each with the function it mirrors on
the same resamples. Where the chapters resample whole Bible chapters (``blocks=``: B Table 1's
comparisons, its No UNK rules and its margin, Fig. 2's buckets, Table 3), so do the rules here
(:attr:`rnnlib.calibration.pool.Draw.block_counts`); :func:`paired_bleu` keeps the sentence
bootstrap, the contrast that shows what the blocks change (the user's own files, which know no
chapters, resample blocks of consecutive lines: :mod:`rnnlib.calibration.lines`).

Effects (Cho et al. 2014 = A, Bahdanau et al. 2015 = B), each relative to the worse system's
BLEU and so scaled to the pool's: :data:`B_STAR_GAIN` (B Table 1, RNNsearch-50* over
RNNsearch-50 on All: 28.45 / 26.75), :data:`A_RNN_GAIN` (A Table 1, +RNN over the Baseline on
test: 33.87 / 33.30), :data:`B_NO_UNK_GAIN` (B Table 1, RNNsearch-50 on No UNK over All:
34.16 / 26.75), :data:`B_GAP_CHANGE` (B Table 1, Moses − RNNsearch-50* on All minus on No UNK,
(4.85 + 0.52) / 33.30 of Moses' All).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
import numpy as np

from .. import stats, verdicts
from ..verdicts import BLEU_FLOOR
from .fast_bleu import corpus_bleu, resampled_bleu
from .pool import Draw, Pool
from .systems import (
    base,
    bisect,
    delta_for_gain,
    expected_thinned,
    pair,
    population_bleu,
    scores,
    thin,
)

B_STAR_GAIN = 28.45 / 26.75 - 1
A_RNN_GAIN = 33.87 / 33.30 - 1
B_NO_UNK_GAIN = 34.16 / 26.75 - 1
B_GAP_CHANGE = (4.85 + 0.52) / 33.30
#: C-B-T1-6's "comes close" (rnnsearch.table_1.CLOSE_MARGIN): 5% of the leader's BLEU
CLOSE_MARGIN = 0.05
#: the share of a test set in the subset (No UNK) and its spread over chapters: Beta(2, 3)
SUBSET_SHARE = 0.4
SEEDS = 3  # MERT seeds per row (A Table 1), training seeds per model (the seeds spread)
SAME = "each system against itself (two identical systems)"


@dataclass
class Outcome:
    verdict: str
    low: float = math.nan
    high: float = math.nan
    truth: float = math.nan


def _floor(check, **bleu) -> verdicts.Check:
    return verdicts.floored(check, list(bleu.items()), BLEU_FLOOR, "BLEU", "every system read")


def _judge(check, truth: float) -> Outcome:
    """The verdict of ``check`` and the interval of its (first) test."""
    _, _, lo, hi = check.evidence["tests"][0]
    return Outcome(verdicts.evaluate(check).verdict, lo, hi, truth)


def _interval(diffs: np.ndarray, point: float, n_blocks: int | None) -> tuple[float, float]:
    """The 95% interval of ``stats``' rules from resampled ``diffs (R,)`` of the estimate
    ``point``: their percentile interval, widened about ``point`` where ``n_blocks`` whole
    blocks were resampled (:func:`rnnlib.stats.block_interval`; None: the sentence bootstrap)."""
    lo, hi, _ = stats.block_interval(diffs, point, n_blocks, 0.95, nan=True)
    return lo, hi


def _paired_check(
    a: np.ndarray, b: np.ndarray, counts: np.ndarray, n_blocks: int | None = None
) -> verdicts.Check:
    """B Table 1's comparison (``rnnsearch.table_1._intervals``): ``a − b`` above 0 by the paired
    bootstrap of ``counts`` (resamples of ``n_blocks`` whole blocks, None: of the sentences),
    controlled by ``b`` against itself, floored on both."""
    d = float(scores(a) - scores(b))
    lo, hi = _interval(resampled_bleu(counts, a) - resampled_bleu(counts, b), d, n_blocks)
    check = verdicts.controlled(
        verdicts.intervals_above([("a − b", d, lo, hi)]),
        SAME,
        verdicts.intervals_above([("b − b", 0.0, 0.0, 0.0)]),  # paired_bootstrap(b, b)
    )
    return _floor(check, a=float(scores(a)), b=float(scores(b)))


def paired_bleu(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """The paired bootstrap of a BLEU difference over the sentences (the chapters' rule before
    they resampled Bible chapters, and blocks of lines on ``corpus="files"``: the contrast)."""
    a, b = pair(pool, draw, rng)
    delta = delta_for_gain(B_STAR_GAIN) if true else 0.0
    b = thin(b, delta, rng) if true else b
    return _judge(_paired_check(a[0], b[0], draw.counts), delta * population_bleu(pool))


def paired_bleu_blocks(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """The same rule with the block bootstrap (whole drawn chapters resampled,
    :class:`rnnlib.resampling.BlockResampler`'s scheme): B Table 1, Fig. 2's buckets and Table 3
    on the Bible (``stats.paired_bootstrap(..., blocks=...)``)."""
    counts = draw.block_counts
    a, b = pair(pool, draw, rng)
    delta = delta_for_gain(B_STAR_GAIN) if true else 0.0
    b = thin(b, delta, rng) if true else b
    check = _paired_check(a[0], b[0], counts, draw.n_blocks)
    return _judge(check, delta * population_bleu(pool))


def _seeds(pool, draw, rng, true, gain, apart=True):
    a, b = pair(pool, draw, rng, SEEDS, apart)
    delta = delta_for_gain(gain) if true else 0.0
    return a, (thin(b, delta, rng) if true else b), delta * population_bleu(pool)


def _clark(ba, bb, ra, rb) -> tuple[float, float, float]:
    """``stats.seeds_and_sentences`` on the seeds' BLEU ``ba``, ``bb`` and their resampled BLEU
    ``ra``, ``rb`` ``(seeds, R)``: ``(diff, low, high)``."""
    diff = float(ba.mean() - bb.mean())
    var_test = float(np.var(ra.mean(0) - rb.mean(0), ddof=1))
    va, vb = np.var(ba, ddof=1) / len(ba), np.var(bb, ddof=1) / len(bb)
    terms = va**2 / (len(ba) - 1) + vb**2 / (len(bb) - 1)
    low, high, _, _ = stats._satterthwaite(diff, float(va + vb), terms, var_test, 0.95)
    return diff, low, high


def seeds_and_sentences(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """A Table 1 (``cho2014.table_1.Gains.compared``): 3 MERT seeds a row, the interval of
    Clark et al. over seeds and sentences, each row against itself as control, floored."""
    a, b, truth = _seeds(pool, draw, rng, true, A_RNN_GAIN)
    ba, bb = scores(a), scores(b)
    ra, rb = resampled_bleu(draw.counts, a), resampled_bleu(draw.counts, b)
    test = ("a − b", *_clark(ba, bb, ra, rb))
    ctrl = ("b − b", *_clark(bb, bb, rb, rb))
    check = verdicts.controlled(
        verdicts.intervals_above([test]), SAME, verdicts.intervals_above([ctrl])
    )
    return _judge(_floor(check, a=float(ba.mean()), b=float(bb.mean())), truth)


def seeds_above(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """Welch's rule on 3 seeds' BLEU against 3 (:func:`rnnlib.verdicts.seeds_above`; no chapter
    applies it today), each row against itself as control, floored as A Table 1's."""
    a, b, truth = _seeds(pool, draw, rng, true, A_RNN_GAIN)
    ba, bb = [float(v) for v in scores(a)], [float(v) for v in scores(b)]
    check = verdicts.controlled(
        verdicts.seeds_above(ba, bb, "a − b"), SAME, verdicts.seeds_above(bb, bb, "b − b")
    )
    check = _floor(check, a=float(np.mean(ba)), b=float(np.mean(bb)))
    diff, se = stats.seeds_difference(ba, bb)
    half = stats.t_quantile(ba, bb) * se
    return Outcome(verdicts.evaluate(check).verdict, diff - half, diff + half, truth)


def across_rebuilds(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """The seeds spread (``spread.across``): B Table 1's paired check on each of 3 training
    seeds' pair, the verdict each one's when all agree, else inside the noise."""
    a, b, _ = _seeds(pool, draw, rng, true, B_STAR_GAIN, apart=False)
    items = [(f"seed {k}", _paired_check(a[k], b[k], draw.counts)) for k in range(SEEDS)]
    return Outcome(verdicts.evaluate(verdicts.across_rebuilds(items)).verdict)


def _subset(draw: Draw, rng) -> np.ndarray:
    """``(n,) bool``: a No UNK-like subset, each drawn chapter with its own share (Beta(2, 3))
    when systems differ by chapter, else every sentence with :data:`SUBSET_SHARE`."""
    by_chapter = draw.by == "chapter"
    share = (
        rng.beta(2, 3, int(draw.chapter.max()) + 1)[draw.chapter] if by_chapter else SUBSET_SHARE
    )
    return rng.random(len(draw.idx)) < share


def _random_like(mask: np.ndarray, rng) -> np.ndarray:
    out = np.zeros(len(mask), dtype=bool)
    out[rng.choice(len(mask), int(mask.sum()), replace=False)] = True
    return out


_MEMO: dict = {}


def _thinning(pool: Pool, target: float, of_whole: bool) -> tuple[float, float]:
    """``(delta, truth)``: the thinning of a system outside the subset (at its expected share
    :data:`SUBSET_SHARE`) that puts its population BLEU on the subset above that on the whole by
    ``target`` of the whole's (``of_whole``), or of the subset's (a lead over the thinned
    system that shrinks by ``target`` of the leader's BLEU); ``truth``: that change in BLEU."""
    key = (id(pool), target, of_whole)
    if key not in _MEMO:
        tot = base(pool).sum(0)
        full = float(corpus_bleu(tot))

        def whole(d):
            return float(
                corpus_bleu(SUBSET_SHARE * tot + (1 - SUBSET_SHARE) * expected_thinned(tot, d))
            )

        change = (lambda d: full / whole(d) - 1) if of_whole else (lambda d: 1 - whole(d) / full)
        delta = bisect(change, target)
        _MEMO[key] = (delta, full - whole(delta))
    return _MEMO[key]


def _empty_nan(r: np.ndarray, counts: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``r (..., R)`` with NaN on the resamples that draw no sentence of ``mask`` (possible
    when whole chapters are drawn: ``stats`` scores such a subset NaN)."""
    return np.where(counts @ mask.astype(counts.dtype) > 0, r, np.nan)


def _subset_check(sys: np.ndarray, mask: np.ndarray, counts: np.ndarray, n_blocks=None):
    """``stats.subset_difference``: ``(BLEU(subset) − BLEU(all), low, high, BLEU subset, BLEU
    all)``, the subset scored inside each resample of the whole (``counts``: of ``n_blocks``
    whole blocks, None: of the sentences)."""
    sub, whole = float(scores(sys[mask])), float(scores(sys))
    r = resampled_bleu(counts, sys * mask[:, None]) - resampled_bleu(counts, sys)
    return (sub - whole, *_interval(_empty_nan(r, counts, mask), sub - whole, n_blocks), sub, whole)


def subset_difference(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """B Table 1's C-B-T1-4 (``rnnsearch.table_1.claim_t1_4``): BLEU(No UNK) − BLEU(All) of one
    system above 0, paired inside All, whole chapters resampled; control: a random subset of
    the same size; floor: the system's BLEU on both. True: the system thinned outside the subset
    (B's No UNK gain)."""
    a, _ = pair(pool, draw, rng)
    mask = _subset(draw, rng)
    delta, truth = _thinning(pool, B_NO_UNK_GAIN, True) if true else (0.0, 0.0)
    sys = thin(a[0], np.where(mask, 0.0, delta), rng) if true else a[0]
    counts, g = draw.block_counts, draw.n_blocks
    d, lo, hi, sub, whole = _subset_check(sys, mask, counts, g)
    ctrl = _subset_check(sys, _random_like(mask, rng), counts, g)[:3]
    check = verdicts.controlled(
        verdicts.intervals_above([("No UNK − All", d, lo, hi)]),
        "a random subset of All of the same size",
        verdicts.intervals_above([("random − All", *ctrl)]),
    )
    return _judge(_floor(check, all=whole, subset=sub), truth)


def _gap_check(a, b, mask, counts, n_blocks=None) -> tuple[float, float, float]:
    """``stats.gap_change``: (a − b on all) − (a − b on the subset), the four scores on the same
    resamples (``counts``: of ``n_blocks`` whole blocks, None: of the sentences)."""
    m = mask[:, None]
    d = float(scores(a) - scores(b) - scores(a[mask]) + scores(b[mask]))
    r = resampled_bleu(counts, np.stack([a, b, a * m, b * m]))
    return (d, *_interval(_empty_nan(r[0] - r[1] - r[2] + r[3], counts, mask), d, n_blocks))


def gap_change(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """B Table 1's C-B-T1-6, second part (``rnnsearch.table_1._shrink_part``): the lead of a
    over b shrinks from All to No UNK, whole chapters resampled; control: a random subset of the
    same size; floor: both on the subset. True: b thinned outside the subset (B's change of
    Moses' lead)."""
    a, b = pair(pool, draw, rng)
    mask = _subset(draw, rng)
    delta, truth = _thinning(pool, B_GAP_CHANGE, False) if true else (0.0, 0.0)
    b = thin(b[0], np.where(mask, 0.0, delta), rng) if true else b[0]
    counts, g = draw.block_counts, draw.n_blocks
    test = _gap_check(a[0], b, mask, counts, g)
    ctrl = _gap_check(a[0], b, _random_like(mask, rng), counts, g)
    check = verdicts.controlled(
        verdicts.intervals_above([("(a − b) on All − on No UNK", *test)]),
        "a random subset of All of No UNK's size in place of No UNK",
        verdicts.intervals_above([("(a − b) on All − on random", *ctrl)]),
    )
    return _judge(_floor(check, a=float(scores(a[0][mask])), b=float(scores(b[mask]))), truth)


def within_margin(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """B Table 1's C-B-T1-6, third part (``rnnsearch.table_1._close_part``), a null claim: a − b
    at most :data:`CLOSE_MARGIN` of a's BLEU (``side="above"``), by the paired bootstrap of whole
    chapters; floor:
    both. False: b behind by exactly the margin (thinned by 5%); true: two equal systems. Its
    control (b's translations cut in half, far outside the margin) is left out: a control only
    turns a verdict into "not measurable", so without it the rates are upper bounds."""
    a, b = pair(pool, draw, rng)
    b = b if true else thin(b, CLOSE_MARGIN, rng)
    a, b = a[0], b[0]
    d, margin = float(scores(a) - scores(b)), CLOSE_MARGIN * float(scores(a))
    counts = draw.block_counts
    lo, hi = _interval(resampled_bleu(counts, a) - resampled_bleu(counts, b), d, draw.n_blocks)
    check = verdicts.within_margin([("a − b", d, lo, hi)], margin, "above")
    truth = 0.0 if true else CLOSE_MARGIN * population_bleu(pool)
    return _judge(_floor(check, a=float(scores(a)), b=float(scores(b))), truth)
