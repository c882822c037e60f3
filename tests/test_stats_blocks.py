"""The block bootstrap of rnnlib.stats' BLEU rules (``blocks=``): with every sentence its own
block it is the sentence bootstrap, resample for resample; on sentences whose quality moves
chapter by chapter its intervals are wider."""

from __future__ import annotations

import numpy as np
import pytest

from rnnlib import bleu, stats

WORDS = [f"w{k}" for k in range(30)]


def _texts(n_chapters: int, size: int, seed: int, spread: float):
    """``(refs, hyps_a, hyps_b, blocks)``: ``n_chapters`` chapters of ``size`` sentences; in
    each chapter system a keeps a share of the reference's words drawn around 0.7 with
    ``spread`` (the chapter effect), system b a share 0.7."""
    rng = np.random.default_rng(seed)
    refs, a, b, blocks = [], [], [], []
    for c in range(n_chapters):
        keep_a = float(np.clip(0.7 + spread * rng.standard_normal(), 0.2, 0.98))
        for _ in range(size):
            ref = list(rng.choice(WORDS, rng.integers(6, 14)))
            refs.append(" ".join(ref))
            for out, keep in ((a, keep_a), (b, 0.7)):
                out.append(" ".join(w if rng.random() < keep else "zz" for w in ref))
            blocks.append(c)
    return refs, a, b, np.array(blocks)


@pytest.fixture(scope="module")
def texts():
    return _texts(12, 10, 0, 0.0)


def _widened(want: dict, c: float) -> list[float]:
    """The sentence bootstrap's interval in ``want`` widened about its ``diff`` by ``c``."""
    d = want["diff"]
    return [d - c * (d - want["low"]), d + c * (want["high"] - d)]


def test_singleton_blocks_give_the_sentence_bootstraps_resamples_widened_by_c_of_n(texts):
    """With every sentence its own block the resamples are the sentence bootstrap's, draw for
    draw: the same p-value, and the same percentile interval widened about the difference by
    the few-blocks factor of ``n`` blocks (1.015 at 120: almost nothing)."""
    refs, a, b, _ = texts
    own = np.arange(len(refs))
    c = stats.block_widening(len(refs))
    assert c == pytest.approx(1.0146, abs=1e-4)
    want = stats.paired_bootstrap(a, b, refs, n_samples=200)
    got = stats.paired_bootstrap(a, b, refs, n_samples=200, blocks=own)
    for k in ("bleu_a", "bleu_b", "diff", "p_value"):
        assert got[k] == pytest.approx(want[k], abs=1e-9), k
    assert [got["low"], got["high"]] == pytest.approx(_widened(want, c), abs=1e-9)
    assert want["blocks"] is None and got["blocks"] == len(refs)
    assert want["widening"] is None and got["widening"] == c
    assert "blocks:120" in got["signature"] and "bs:200" in got["signature"]
    mask = np.arange(len(refs)) % 3 == 0
    for fn, args in (
        (stats.subset_difference, (a, refs, mask)),
        (stats.gap_change, (a, b, refs, mask)),
    ):
        want, got = fn(*args, n_samples=200), fn(*args, n_samples=200, blocks=own)
        assert got["diff"] == want["diff"]
        assert [got["low"], got["high"]] == pytest.approx(_widened(want, c), abs=1e-9)
        assert want["blocks"] is None and got["blocks"] == len(refs)
        assert want["widening"] is None and got["widening"] == c


def test_the_widening_factor_on_hand_worked_numbers():
    """``c = sqrt(G / (G - 1)) t_{0.975, G-1} / z_{0.975}`` with the printed tables' quantiles:
    t_{0.975, 16} = 2.120, t_{0.975, 1} = 12.706, t_{0.95, 9} = 1.833, z_{0.975} = 1.960,
    z_{0.95} = 1.645."""
    assert stats.block_widening(17) == pytest.approx((17 / 16) ** 0.5 * 2.120 / 1.960, abs=1e-3)
    assert stats.block_widening(17) == pytest.approx(1.115, abs=1e-3)
    assert stats.block_widening(2) == pytest.approx(2**0.5 * 12.706 / 1.960, abs=1e-2)
    assert stats.block_widening(10, 0.90) == pytest.approx(
        (10 / 9) ** 0.5 * 1.833 / 1.645, abs=1e-3
    )
    assert stats.block_widening(None) == 1.0  # the sentence bootstrap: no correction
    assert np.isnan(stats.block_widening(1))  # one block: no spread to correct
    widths = [stats.block_widening(g) for g in (3, 5, 17, 51, 1000)]
    assert widths == sorted(widths, reverse=True) and 1 < widths[-1] < 1.002


def test_a_block_interval_is_the_percentile_interval_widened_by_exactly_c_about_the_point():
    samples = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, np.nan])
    lo, hi = stats.percentile_interval(samples, nan=True)  # 1.225 and 9.775
    low, high, c = stats.block_interval(samples, 4.0, 17, nan=True)
    assert c == stats.block_widening(17)
    assert (4.0 - low, high - 4.0) == pytest.approx((c * (4.0 - lo), c * (hi - 4.0)))
    assert stats.block_interval(samples, 4.0, None, nan=True) == (lo, hi, 1.0)  # unchanged


def test_the_sentence_bootstrap_is_unchanged(texts):
    """``blocks=None``: every interval is the plain percentile interval of the resamples drawn
    from the seed, not widened."""
    refs, a, b, _ = texts
    scorer, sa = bleu.sufficient_stats(a, refs)
    _, sb = bleu.sufficient_stats(b, refs)
    idxs = np.random.default_rng(bleu.SACREBLEU_SEED).choice(len(refs), size=(200, len(refs)))
    raw = bleu.resampled_scores(scorer, sa, idxs) - bleu.resampled_scores(scorer, sb, idxs)
    got = stats.paired_bootstrap(a, b, refs, n_samples=200)
    assert [got["low"], got["high"]] == list(stats.percentile_interval(raw))
    values = np.random.default_rng(1).random(50)
    draws = np.random.default_rng(4).integers(0, 50, size=(300, 50))
    lo, hi = stats.percentile_interval(values[draws].mean(1))
    assert stats.bootstrap_mean(values, 300, 4) == (values.mean(), lo, hi)


def test_a_block_interval_is_wider_by_exactly_c_than_the_raw_percentile_interval(texts):
    """On the block bootstrap's own resamples (:func:`rnnlib.stats.resamples`), the paired BLEU
    interval, the subset's and the mean's are their percentile intervals widened about the
    estimate by ``c`` of the number of blocks (12 chapters: 1.173)."""
    refs, a, b, blocks = texts
    draws, g = stats.resamples(len(refs), 200, bleu.SACREBLEU_SEED, blocks)
    c = stats.block_widening(g)
    assert g == 12 and c == pytest.approx(1.173, abs=1e-3)
    scorer, sa = bleu.sufficient_stats(a, refs)
    _, sb = bleu.sufficient_stats(b, refs)
    raw = stats._scores(scorer, sa, draws) - stats._scores(scorer, sb, draws)
    got = stats.paired_bootstrap(a, b, refs, n_samples=200, blocks=blocks)
    lo, hi = stats.percentile_interval(raw)
    d = got["diff"]
    assert (d - got["low"], got["high"] - d) == pytest.approx((c * (d - lo), c * (hi - d)))
    assert got["widening"] == c and got["high"] - got["low"] > hi - lo
    mask = np.arange(len(refs)) % 3 == 0
    sub = stats.subset_difference(a, refs, mask, n_samples=200, blocks=blocks)
    raw = [scorer._compute_score_from_stats(sa[ix][mask[ix]].sum(0)).score for ix in draws]
    raw = np.array(raw) - stats._scores(scorer, sa, draws)
    lo, hi = stats.percentile_interval(raw)
    d = sub["diff"]
    assert (d - sub["low"], sub["high"] - d) == pytest.approx((c * (d - lo), c * (hi - d)))


def test_one_block_gives_no_interval():
    refs, a, b, _ = _texts(1, 6, 4, 0.0)
    got = stats.paired_bootstrap(a, b, refs, n_samples=20, blocks=np.zeros(6, int))
    assert got["blocks"] == 1 and np.isnan([got["low"], got["high"], got["widening"]]).all()


def test_the_block_interval_is_wider_where_chapters_differ():
    refs, a, b, blocks = _texts(12, 10, 1, 0.25)
    sent = stats.paired_bootstrap(a, b, refs, n_samples=300)
    block = stats.paired_bootstrap(a, b, refs, n_samples=300, blocks=blocks)
    assert block["diff"] == pytest.approx(sent["diff"])
    assert block["high"] - block["low"] > 1.5 * (sent["high"] - sent["low"])
    assert block["blocks"] == 12
    mask = np.arange(len(refs)) % 2 == 0
    s = stats.gap_change(a, b, refs, mask, n_samples=300)
    k = stats.gap_change(a, b, refs, mask, n_samples=300, blocks=blocks)
    assert k["diff"] == s["diff"]
    values = np.repeat(np.random.default_rng(2).random(12), 10)  # one value per chapter
    m, lo, hi = stats.bootstrap_mean(values, 400, 0)
    mb, lob, hib = stats.bootstrap_mean(values, 400, 0, blocks=blocks)
    assert m == mb and hib - lob > 2 * (hi - lo)


def test_blocks_must_align_with_the_sentences(texts):
    refs, a, b, blocks = texts
    with pytest.raises(ValueError, match="block ids"):
        stats.paired_bootstrap(a, b, refs, n_samples=10, blocks=blocks[1:])
    with pytest.raises(ValueError, match="block ids"):
        stats.subset_difference(a, refs, np.ones(len(refs), bool), 10, blocks=blocks[:-1])


def _t_by_hand(values, blocks, draws, size, level=0.95):
    """The studentized block bootstrap of a mean over blocks of ``size`` items, written out
    resample by resample: the drawn blocks' values, their mean, and its cluster-robust standard
    error from the drawn blocks' residual totals."""
    ids = sorted(set(blocks.tolist()))
    g = len(ids)

    def mean_se(parts):
        pooled = np.concatenate(parts)
        m = pooled.mean()
        resid = sum(((p - m).sum()) ** 2 for p in parts)
        return m, np.sqrt(g / (g - 1) * resid) / len(pooled)

    m, se = mean_se([values[blocks == b] for b in ids])
    ts = []
    for ix in draws:
        drawn = blocks[ix][::size]  # blocks of ``size`` items: each drawn block once
        ms, ses = mean_se([values[blocks == b] for b in drawn])
        ts.append((ms - m) / ses)
    q_lo, q_hi = np.percentile(ts, [50 - 50 * level, 50 + 50 * level])
    return m, m - q_hi * se, m - q_lo * se


def test_a_mean_over_blocks_gets_the_studentized_block_interval():
    """``bootstrap_mean(blocks=)`` against the percentile-t interval written out by hand on the
    same resamples (12 chapters of 10 items, values clustered by chapter)."""
    rng = np.random.default_rng(3)
    blocks = np.repeat(np.arange(12), 10)
    values = rng.random(120) + np.repeat(rng.normal(0, 0.5, 12), 10)
    got = stats.bootstrap_mean(values, 300, 5, blocks=blocks)
    draws, g = stats.resamples(len(values), 300, 5, blocks)
    assert g == 12
    assert got == pytest.approx(_t_by_hand(values, blocks, draws, 10))


def test_a_small_share_over_few_chapters_gets_an_interval_that_reaches_further_up():
    """A share of about 5% over 17 chapters, concentrated in a few of them: the studentized
    interval follows the skew (further above the share than below it), where a percentile
    interval, widened or not, sits nearer the share's upper side."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(20, 40, 17)
    rates = np.where(np.arange(17) < 3, 0.2, 0.01)
    flags = np.concatenate([rng.random(s) < r for s, r in zip(sizes, rates)]).astype(float)
    blocks = np.repeat(np.arange(17), sizes)
    m, lo, hi = stats.bootstrap_mean(flags, 1000, 1, blocks=blocks)
    assert hi - m > 1.3 * (m - lo)
    draws, _ = stats.resamples(len(flags), 1000, 1, blocks)
    raw = stats.percentile_interval([flags[ix].mean() for ix in draws])
    assert hi > raw[1] and (hi - m) / (m - lo) > (raw[1] - m) / (m - raw[0])
    assert stats.block_t_interval([1.0], [5], np.ones((3, 1)))[1:] == pytest.approx(
        (np.nan, np.nan), nan_ok=True
    )
    assert stats.block_t_interval([2.0, 4.0], [4, 8], np.ones((3, 2))) == (0.5, 0.5, 0.5)
