"""The book's rules that read lengths, ranks and shares, one simulated trial at a time (see
:mod:`rnnlib.calibration.rules` for the signature and the :class:`Outcome`).

* :func:`relative_length_slopes` -- B Fig. 2 (C-B-F2-2): RNNsearch-50's relative slope of BLEU
  over length minus RNNencdec-50's above 0, the buckets resampled jointly
  (:func:`rnnlib.stats.relative_length_slopes`), the lengths shuffled as control, both models'
  BLEU in the anchor bucket as floor. True: b loses :data:`SLOPE_LOSS` of its anchor BLEU more
  per 10 tokens than a (the paper gives no number; the figure's RNNencdec-50 loses more than
  half its BLEU over 50 tokens).
* :func:`bootstrap_spearman` -- A §2.3's gates (C-A-GRU-2): Spearman's rho over hidden units
  above 0 by :func:`rnnlib.stats.bootstrap_spearman`, the untrained network (no relation) as
  control. The items are hidden units, not sentences, and drawn independently (the rule's own
  assumption); true: a rank correlation of :data:`SPEARMAN_EFFECT` (stated here).
* :func:`share_at_least` -- B Fig. 3 (C-B-F3-2): the % of sentences with a local reordering at
  least :data:`REORDER_SHARE` (:func:`rnnlib.verdicts.at_least` with the interval of
  :func:`rnnlib.stats.bootstrap_mean` over the sentences, whole chapters resampled as the
  chapter resamples them, ``blocks=``: the studentized block interval,
  :func:`rnnlib.stats.block_t_interval`). The flags are drawn with a share
  per chapter (logit-normal, sd 1) when systems differ by chapter, else one share. False: the
  population share exactly at the threshold; true: twice it. Its control (shuffled rows) is left
  out: the rates are upper bounds.
"""

from __future__ import annotations

import math

import numpy as np

from .. import stats, verdicts
from ..bleu import length_edges
from ..verdicts import BLEU_FLOOR, UNMEASURABLE
from .fast_bleu import corpus_bleu, resample_counts, resampled_bleu
from .pool import Draw, Pool
from .rules import Outcome
from .systems import base, bisect, expected_thinned, pair, thin

#: B Fig. 2 as the rnnsearch chapter reads it (``figure_2``): 10-token buckets up to 60, the
#: open last one left out, buckets of at least 20 sentences, the anchor the shortest of 100
EDGES = length_edges(10, 60)
MIN_BUCKET, ANCHOR_MIN = 20, 100
SLOPE_LOSS = 0.10
UNITS = 256  # hidden units of the cpu profile's phrase scorer (``cpu-cho2014``)
SPEARMAN_EFFECT = 0.3
REORDER_SHARE = 5.0  # rnnsearch.figure_3.REORDER_SHARE, in %


def _buckets(lengths: np.ndarray):
    """``(members, mids, anchor)`` of the kept buckets of ``lengths`` (anchor ``None``: none
    holds :data:`ANCHOR_MIN`)."""
    bucket = np.searchsorted(EDGES, lengths, side="right") - 1
    members, mids = [], []
    for k in range(len(EDGES) - 1):  # the open last bucket is never kept
        m = np.flatnonzero(bucket == k)
        if len(m) >= MIN_BUCKET:
            members.append(m)
            mids.append((EDGES[k] + EDGES[k + 1] - 1) / 2)
    big = [i for i, m in enumerate(members) if len(m) >= ANCHOR_MIN]
    return members, np.array(mids), (big[0] if big else None)


def _relative(bleus: np.ndarray, mids: np.ndarray, at: int) -> np.ndarray:
    """1000 x the least-squares slope of ``bleus (..., B)`` over its anchor's, per token."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = bleus / bleus[..., at : at + 1]
    return 1000 * stats._slope(np.where(bleus[..., at : at + 1] > 0, rel, np.nan), mids)


def _slopes_test(a, b, lengths, draw: Draw):
    """``(diff, low, high, anchor BLEU a, anchor BLEU b)`` of the relative slopes in the rule's
    units (per 10 tokens, points of the anchor's BLEU x 100), or ``None`` when not measurable."""
    members, mids, at = _buckets(lengths)
    if at is None or len(members) < 2:
        return None
    point = np.array([[corpus_bleu(s[m].sum(0)) for m in members] for s in (a, b)])
    n_boot, draws = draw.counts.shape[0], []
    for m, c in zip(members, draw.stratum_counts(tuple(len(m) for m in members))):
        draws.append(resampled_bleu(c, np.stack([a[m], b[m]])))  # (2, R)
    boot = np.stack(draws, axis=-1)  # (2, R, B)
    diffs = _relative(boot[0], mids, at) - _relative(boot[1], mids, at)
    d = float(_relative(point[0], mids, at) - _relative(point[1], mids, at))
    ok = np.isfinite(diffs)
    lo = hi = math.nan
    if math.isfinite(d) and ok.sum() >= 0.95 * n_boot:
        lo, hi = (float(v) for v in stats.percentile_interval(diffs[ok]))
    return d, lo, hi, float(point[0, at]), float(point[1, at])


def _slope_delta(lengths: np.ndarray, members, mids, at) -> np.ndarray:
    """Per sentence, the thinning that makes b lose :data:`SLOPE_LOSS` of its anchor BLEU per 10
    tokens past the anchor's middle (0 before it; sentences outside kept buckets: 0)."""
    delta = np.zeros(len(lengths))
    for m, mid in zip(members, mids):
        delta[m] = np.clip(SLOPE_LOSS * (mid - mids[at]) / 10, 0, 0.9)
    return delta


def _slopes_truth(pool: Pool, lengths, mids, at, true: bool) -> float:
    """The relative slopes' difference of the population (the pool's expected statistics per
    kept bucket of the trial)."""
    if not true:
        return 0.0
    tot = base(pool)
    bucket = np.searchsorted(EDGES, pool.lengths, side="right") - 1
    ks = np.searchsorted(EDGES, mids, side="right") - 1
    a = np.array([corpus_bleu(tot[bucket == k].sum(0)) for k in ks])
    loss = np.clip(SLOPE_LOSS * (mids - mids[at]) / 10, 0, 0.9)
    b = np.array(
        [corpus_bleu(expected_thinned(tot[bucket == k].sum(0), d)) for k, d in zip(ks, loss)]
    )
    return float(_relative(a, mids, at) - _relative(b, mids, at))


def relative_length_slopes(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """C-B-F2-2 (``rnnsearch.figure_2.claim_f2_2``), see the module's docstring."""
    lengths = pool.lengths[draw.idx]
    a, b = pair(pool, draw, rng)
    members, mids, at = _buckets(lengths)
    if at is None or len(members) < 2:
        return Outcome(UNMEASURABLE)
    b = thin(b[0], _slope_delta(lengths, members, mids, at), rng) if true else b[0]
    d, lo, hi, fa, fb = _slopes_test(a[0], b, lengths, draw)
    ctrl = _slopes_test(a[0], b, rng.permutation(lengths), draw)
    label = "relative slope a − b (per 10 tokens)"
    check = verdicts.controlled(
        verdicts.intervals_above([(label, d, lo, hi)]),
        "the same buckets with the lengths shuffled",
        verdicts.intervals_above([(label, *(ctrl[:3] if ctrl else (math.nan,) * 3))]),
    )
    check = verdicts.floored(check, [("a", fa), ("b", fb)], BLEU_FLOOR, "BLEU", "the anchor")
    truth = _slopes_truth(pool, lengths, mids, at, true)
    return Outcome(verdicts.evaluate(check).verdict, lo, hi, truth)


def _ranks(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(R, n)``: the average rank, inside each resample, of item ``j`` of ``values (n,)``
    drawn ``counts[r, j]`` times (ties only between copies of an item: continuous values)."""
    order = np.argsort(values)
    c = counts[:, order]
    ranks = np.empty_like(c)
    ranks[:, order] = np.cumsum(c, axis=1) - c + (c + 1) / 2
    return ranks


def _spearman(x: np.ndarray, y: np.ndarray, rng, n_boot: int) -> tuple[float, float, float]:
    """``stats.bootstrap_spearman`` on arrays: ``(rho, low, high)`` over ``n_boot`` resamples
    of the items, each resample's rho the Pearson correlation of its average ranks."""
    n = len(x)
    ones = np.ones((1, n), dtype=np.float32)
    counts = resample_counts(n, n_boot, rng)

    def rho(c):
        mid = (c.sum(1, keepdims=True) + 1) / 2
        rx, ry = _ranks(x, c) - mid, _ranks(y, c) - mid
        return (c * rx * ry).sum(1) / np.sqrt((c * rx * rx).sum(1) * (c * ry * ry).sum(1))

    lo, hi = stats.percentile_interval(rho(counts))
    return float(rho(ones)[0]), float(lo), float(hi)


def _units(rng, rho_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Gate activity (a share in [0, 1]) and memory (positive, skewed) of :data:`UNITS` units
    with Spearman correlation ``rho_s`` (a Gaussian copula)."""
    r = 2 * math.sin(math.pi * rho_s / 6)
    z = rng.standard_normal((2, UNITS))
    z[1] = r * z[0] + math.sqrt(1 - r * r) * z[1]
    from scipy.stats import norm

    return norm.cdf(z[0]) ** 2, np.exp(z[1])


def bootstrap_spearman(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """C-A-GRU-2 (``representations.gates.claim_gru_2``), one gate: see the module's docstring."""
    n_boot = draw.counts.shape[0]
    rho_s = SPEARMAN_EFFECT if true else 0.0
    test = _spearman(*_units(rng, rho_s), rng, n_boot)
    ctrl = _spearman(*_units(rng, 0.0), rng, n_boot)
    check = verdicts.controlled(
        verdicts.intervals_above([("rho(update activity, memory)", *test)]),
        "the untrained network's gates and memory",
        verdicts.intervals_above([("rho(update activity, memory)", *ctrl)]),
    )
    return Outcome(verdicts.evaluate(check).verdict, test[1], test[2], rho_s)


def _logit_mean(share: float, sd: float) -> float:
    """The logit-scale centre whose logit-normal (``sd``) has mean ``share``."""
    z, w = np.polynomial.hermite_e.hermegauss(40)
    w = w / w.sum()
    return bisect(lambda mu: float((w / (1 + np.exp(-(mu + sd * z)))).sum()), share, -12, 12)


def share_at_least(pool: Pool, draw: Draw, rng, true: bool) -> Outcome:
    """C-B-F3-2 (``rnnsearch.figure_3._reordering``): see the module's docstring."""
    share = REORDER_SHARE / 100 * (2 if true else 1)
    sd = 1.0 if draw.by == "chapter" else 0.0
    mu = _logit_mean(share, sd)
    per = mu + sd * rng.standard_normal(int(draw.chapter.max()) + 1)[draw.chapter]
    flags = (rng.random(len(draw.idx)) < 1 / (1 + np.exp(-per))).astype(float)
    # each drawn chapter's multiplicity in each resample: its first sentence's
    picks = draw.block_counts[:, np.unique(draw.chapter, return_index=True)[1]]
    totals, sizes = np.bincount(draw.chapter, flags), np.bincount(draw.chapter)
    lo, hi = (100 * v for v in stats.block_t_interval(totals, sizes, picks)[1:])
    check = verdicts.at_least(100 * flags.mean(), REORDER_SHARE, "% reordering", lo, hi)
    return Outcome(verdicts.evaluate(check).verdict, lo, hi, 100 * share)


__all__ = ["bootstrap_spearman", "relative_length_slopes", "share_at_least"]
