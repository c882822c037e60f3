"""The studentized interval of a BLEU contrast (rnnlib.bleu_t) against independent computations:
its gradient against finite differences of sacreBLEU's score, its contrast against sacreBLEU,
its standard error against the spread of a brute-force block bootstrap, and the chapters'
intervals on line blocks against it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from rnnlib import bleu, bleu_t, stats
from rnnlib.calibration.fast_bleu import corpus_bleu
from rnnlib.line_blocks import LineBlocks, line_blocks


def random_stats(n: int, rng, quality: float = 0.5) -> np.ndarray:
    """``(n, 10)`` plausible sentence statistics: lengths, matches below totals."""
    sys_len = rng.integers(5, 40, n)
    ref_len = np.maximum(1, sys_len + rng.integers(-6, 6, n))
    out = np.zeros((n, 10))
    out[:, 0], out[:, 1] = sys_len, ref_len
    for k in range(4):
        total = np.maximum(sys_len - k, 0)
        out[:, 6 + k] = total
        out[:, 2 + k] = rng.binomial(total, quality / (1 + k))
    return out


def texts(rng, n: int, vocab: int, lengths: tuple[int, int], keeps: tuple[float, ...]):
    """``n`` random references of ``lengths`` words from ``vocab`` words, and one system per
    share in ``keeps`` that keeps each reference word with that chance (else writes "x")."""
    words = [f"w{k}" for k in range(vocab)]
    refs = [" ".join(rng.choice(words, rng.integers(*lengths))) for _ in range(n)]
    hyps = [
        [" ".join(w if rng.random() < k else "x" for w in r.split()) for r in refs] for k in keeps
    ]
    return refs, hyps


@pytest.mark.parametrize("short", [True, False])
def test_the_gradient_is_that_of_log_bleu_by_finite_differences(short):
    rng = np.random.default_rng(1)
    sums = random_stats(200, rng).sum(0)
    sums[1] = sums[0] * (1.1 if short else 0.9)  # the brevity penalty on, then off
    grad = bleu_t.log_bleu_gradient(sums)
    for j in range(10):
        h = 1e-4 * sums[j]
        up, down = sums.copy(), sums.copy()
        up[j] += h
        down[j] -= h
        numeric = (np.log(corpus_bleu(up)) - np.log(corpus_bleu(down))) / (2 * h)
        assert grad[j] == pytest.approx(numeric, rel=1e-5, abs=1e-12)
    dead = sums.copy()
    dead[2:6] = 0  # no match at all: BLEU 0, no gradient
    assert np.isnan(bleu_t.log_bleu_gradient(dead)).all()


def test_the_contrast_is_sacrebleus_difference_and_a_system_against_itself_has_no_spread():
    rng = np.random.default_rng(2)
    refs, hyps = texts(rng, 90, 40, (5, 15), (0.8, 0.6))
    st = [bleu.sufficient_stats(h, refs)[1] for h in hyps]
    ids, g = bleu_t.block_ids(line_blocks(np.arange(90), 10))
    sums = [bleu_t.block_sums(s, ids, g) for s in st]
    want = BLEU().corpus_score(hyps[0], [refs]).score - BLEU().corpus_score(hyps[1], [refs]).score
    d, se = bleu_t.contrast_and_se(sums, [1.0, -1.0], np.ones((1, g)))
    assert d[0] == pytest.approx(want, abs=1e-9) and se[0] > 0
    picks = np.random.default_rng(3).multinomial(g, np.full(g, 1 / g), 200)
    assert bleu_t.contrast_t_interval([sums[1], sums[1]], [1.0, -1.0], picks) == (0.0, 0.0, 0.0)
    d0, lo, hi = bleu_t.contrast_t_interval(sums, [1.0, -1.0], picks)
    assert d0 == pytest.approx(want) and lo < d0 < hi


def test_the_standard_error_is_the_spread_of_a_brute_force_block_bootstrap():
    """With many blocks the block bootstrap's standard deviation of the contrast is the
    delta method's standard error times sqrt((G - 1) / G), to Monte Carlo error (4,000
    resamples: about 1.1% relative)."""
    rng = np.random.default_rng(4)
    g = 300
    ids = np.repeat(np.arange(g), rng.integers(1, 6, g))
    a, b = random_stats(len(ids), rng, 0.55), random_stats(len(ids), rng, 0.5)
    sums = [bleu_t.block_sums(x, ids, g) for x in (a, b)]
    _, se = bleu_t.contrast_and_se(sums, [1.0, -1.0], np.ones((1, g)))
    picks = rng.multinomial(g, np.full(g, 1 / g), 4000).astype(float)
    boot = corpus_bleu(picks @ sums[0]) - corpus_bleu(picks @ sums[1])
    assert boot.std(ddof=1) == pytest.approx(se[0] * math.sqrt((g - 1) / g), rel=0.05)


def test_picks_count_the_blocks_each_resample_draws():
    blocks = np.array([7, 7, 3, 9, 9, 9])
    ids, g = bleu_t.block_ids(blocks)
    assert g == 3 and ids.tolist() == [1, 1, 0, 2, 2, 2]
    draws = [np.array([2, 0, 1, 0, 1]), np.array([3, 4, 5, 3, 4, 5, 3, 4, 5])]
    assert bleu_t.picks_of(draws, ids, g).tolist() == [[1, 2, 0], [0, 0, 3]]


def test_line_blocks_keep_their_kind_and_the_chapters_intervals_studentize_on_them():
    """paired_bootstrap, subset_difference and gap_change read the studentized interval of
    their own resamples on line blocks (and say so), the widened one on other blocks."""
    rng = np.random.default_rng(5)
    refs, hyps = texts(rng, 120, 30, (4, 12), (0.8, 0.7))
    lines = line_blocks(np.arange(120), 10)
    mask = rng.random(120) < 0.5
    assert isinstance(lines, LineBlocks) and isinstance(lines[mask], LineBlocks)
    plain = np.asarray(lines).copy()
    ids, g = bleu_t.block_ids(lines)
    draws, _ = stats.resamples(120, 300, bleu.SACREBLEU_SEED, plain)
    picks = bleu_t.picks_of(draws, ids, g)
    sa, sb = (bleu.sufficient_stats(h, refs)[1] for h in hyps)

    def t_ends(parts, weights):
        return bleu_t.contrast_t_interval(
            [bleu_t.block_sums(x, ids, g) for x in parts], weights, picks
        )[1:]

    res = stats.paired_bootstrap(*hyps, refs, n_samples=300, blocks=lines)
    widened = stats.paired_bootstrap(*hyps, refs, n_samples=300, blocks=plain)
    assert res["studentized"] and res["widening"] is None and "ci:t" in res["signature"]
    assert not widened["studentized"] and widened["widening"] > 1
    assert (res["low"], res["high"]) == pytest.approx(t_ends([sa, sb], [1, -1]))
    assert (res["low"], res["high"]) != pytest.approx((widened["low"], widened["high"]))
    sub = stats.subset_difference(hyps[0], refs, mask, n_samples=300, blocks=lines)
    part = np.where(mask[:, None], sa, 0)
    assert sub["studentized"] and (sub["low"], sub["high"]) == pytest.approx(
        t_ends([part, sa], [1, -1])
    )
    gap = stats.gap_change(*hyps, refs, mask, n_samples=300, blocks=lines)
    parts = [sa, sb, part, np.where(mask[:, None], sb, 0)]
    assert gap["studentized"] and (gap["low"], gap["high"]) == pytest.approx(
        t_ends(parts, [1, -1, -1, 1])
    )
    assert not stats.gap_change(*hyps, refs, mask, n_samples=300, blocks=plain)["studentized"]
