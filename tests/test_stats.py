"""rnnlib.stats: where the intervals end, and which draws each bootstrap makes."""

from __future__ import annotations

import numpy as np
import pytest

from rnnlib import stats


def test_percentile_interval_ends_at_exactly_2_5_and_97_5_percent():
    x = np.random.default_rng(0).normal(size=1001)
    low, high = stats.percentile_interval(x)
    assert low == np.percentile(x, 2.5) and high == np.percentile(x, 97.5)
    low, high = stats.percentile_interval(x, 0.9)
    assert (low, high) == tuple(np.percentile(x, [5, 95]))
    with_nan = np.append(x, np.nan)
    assert np.isnan(stats.percentile_interval(with_nan)).all()
    assert (stats.percentile_interval(with_nan, nan=True) == stats.percentile_interval(x)).all()
    with pytest.raises(ValueError, match="level"):
        stats.percentile_interval(x, 1.0)


def test_bootstrap_mean_resamples_the_values_and_shares_a_generator():
    values = np.arange(20.0)
    mean, low, high = stats.bootstrap_mean(values, 4000, 3)
    assert mean == 9.5 and low < 9.5 < high
    # the resampled mean's standard error is sd(values, ddof=0) / sqrt(20) = 1.29: the 95%
    # percentile interval is about 9.5 -/+ 1.96 of it (the values are symmetric); scipy's
    # percentile bootstrap is compared in tests/test_stats_independent.py
    se = values.std() / np.sqrt(20)
    assert (low, high) == pytest.approx((9.5 - 1.96 * se, 9.5 + 1.96 * se), abs=0.12 * se)
    # a Generator is used as it is: two calls continue one stream
    shared = np.random.default_rng(5)
    first, second = (
        stats.bootstrap_mean(values, 50, shared),
        stats.bootstrap_mean(values, 50, shared),
    )
    assert first != second
    assert first == stats.bootstrap_mean(values, 50, 5)
    constant = stats.bootstrap_mean(np.full(7, 2.0), 100, 0)
    assert constant == (2.0, 2.0, 2.0)


def test_paired_difference_is_the_mean_of_the_differences_and_needs_pairs():
    a, b = np.array([3.0, 4.0, 5.0, 6.0]), np.array([1.0, 1.0, 2.0, 2.0])
    assert stats.paired_difference(a, b, 200, 1) == stats.bootstrap_mean(a - b, 200, 1)
    assert stats.paired_difference(a, a, 200, 1) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="not paired"):
        stats.paired_difference(a, b[:3])


def test_mean_difference_resamples_each_sample_on_its_own():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])
    diff, low, high = stats.mean_difference(a, b, 4000, 4)
    assert diff == 2.0 - 15.0 and low <= diff <= high
    # worked out by enumeration: a resample of b has mean 10, 15 or 20 (chances 1/4, 1/2, 1/4),
    # one of a mean 1, 4/3, ..., 3 (chances 1, 3, 6, 7, 6, 3, 1 in 27). The lowest 2.5% of the
    # differences lie in the quarter where b's mean is 20, at a's lower tenth (a's mean 4/3):
    # -18.67; the highest where b's is 10, at a's upper tenth (8/3): -7.33
    assert low == pytest.approx(4 / 3 - 20, abs=0.34)
    assert high == pytest.approx(8 / 3 - 10, abs=0.34)
    with pytest.raises(ValueError, match="empty"):
        stats.mean_difference(a, [])


def test_seeds_difference_adds_the_two_groups_variances():
    diff, se = stats.seeds_difference([1.0, 2.0, 3.0], [0.0, 0.0, 3.0])
    assert diff == pytest.approx(1.0)
    assert se == pytest.approx(np.sqrt(1.0 / 3 + 3.0 / 3))
    with pytest.raises(ValueError, match="two runs"):
        stats.seeds_difference([1.0], [1.0, 2.0])


def test_bootstrap_rounds_draw_their_resamples_in_turn_from_one_generator():
    seen = []
    out = stats.bootstrap_rounds(
        5, lambda i, j: seen.append((i, j)) or (i.sum(), j.sum()), 3, np.random.default_rng(2), 2
    )
    assert out.shape == (3, 2)
    rng = np.random.default_rng(2)
    for i, j in seen:  # round by round: the first resample, then the second
        assert (i == rng.integers(0, 5, 5)).all() and (j == rng.integers(0, 5, 5)).all()
    assert (out == [(i.sum(), j.sum()) for i, j in seen]).all()


# -- MERT seeds with test-set resampling; a subset against its whole ------------------------------
def _outputs(rng, refs, keep):
    """Each reference with each word kept with probability ``keep`` (a noisy system)."""
    return [" ".join(w for w in r.split() if rng.random() < keep) or "x" for r in refs]


def _refs(n=60):
    rng = np.random.default_rng(0)
    words = [f"w{k}" for k in range(40)]
    return [" ".join(rng.choice(words, size=8)) for _ in range(n)]


def test_seeds_and_sentences_adds_the_seeds_variance_to_the_test_sets():
    from scipy.stats import t

    from rnnlib import bleu

    refs = _refs()
    rng = np.random.default_rng(1)
    a = [_outputs(rng, refs, 0.9) for _ in range(3)]
    b = [_outputs(rng, refs, 0.6) for _ in range(3)]
    r = stats.seeds_and_sentences(a, b, refs, n_samples=200, seed=3)
    ba = [bleu.corpus_bleu(h, refs).score for h in a]
    bb = [bleu.corpus_bleu(h, refs).score for h in b]
    assert r["bleu_a"] == pytest.approx(ba) and r["bleu_b"] == pytest.approx(bb)
    assert r["diff"] == pytest.approx(np.mean(ba) - np.mean(bb))
    var_seeds = np.var(ba, ddof=1) / 3 + np.var(bb, ddof=1) / 3
    assert r["se_seeds"] == pytest.approx(np.sqrt(var_seeds))
    assert r["se_test"] > 0
    half = r["q"] * np.sqrt(r["se_seeds"] ** 2 + r["se_test"] ** 2)
    assert r["low"] == pytest.approx(r["diff"] - half) and r["high"] == pytest.approx(
        r["diff"] + half
    )
    # Satterthwaite's degrees of freedom from the seeds' own scores, the test part counted as known
    va, vb = np.var(ba, ddof=1) / 3, np.var(bb, ddof=1) / 3
    df = (va + vb + r["se_test"] ** 2) ** 2 / (va**2 / 2 + vb**2 / 2)
    assert r["df"] == pytest.approx(df) and r["q"] == pytest.approx(t.ppf(0.975, df))
    # wider than the test set's noise alone and than the seeds' alone
    assert half > 1.96 * r["se_test"] and half > 1.96 * r["se_seeds"]
    # a system against the very same outputs: difference 0, the test set's noise 0, the seeds'
    # spread (counted for each side, as for two systems tuned apart) remains
    same = stats.seeds_and_sentences(a, a, refs, n_samples=50, seed=3)
    assert same["diff"] == 0 and same["se_test"] == 0 and same["low"] < 0 < same["high"]
    # one seed each: the test set's noise only, with the normal quantile
    one = stats.seeds_and_sentences(a[:1], b[:1], refs, n_samples=200, seed=3)
    assert one["se_seeds"] == 0 and one["q"] == pytest.approx(1.959964, abs=1e-5)
    with pytest.raises(ValueError, match="output 1"):
        stats.seeds_and_sentences([a[0], a[1][:-1]], b, refs)


def test_rebuilds_and_sentences_takes_the_rebuild_as_the_independent_unit():
    from scipy.stats import t

    refs = _refs()
    rng = np.random.default_rng(2)
    good = [[_outputs(rng, refs, 0.9) for _ in range(3)] for _ in range(2)]
    bad = [[_outputs(rng, refs, 0.6) for _ in range(3)] for _ in range(2)]
    # rebuild 1: a better than b; rebuild 2: the other way round
    a, b = [good[0], bad[1]], [bad[0], good[1]]
    r = stats.rebuilds_and_sentences(a, b, refs, n_samples=100, seed=3)
    gains = [stats.seeds_and_sentences(x, y, refs, n_samples=1)["diff"] for x, y in zip(a, b)]
    assert r["gains"] == pytest.approx(gains)
    assert gains[0] > 0 > gains[1]
    assert r["diff"] == pytest.approx(np.mean(gains))
    assert r["se_rebuilds"] == pytest.approx(np.std(gains, ddof=1) / np.sqrt(2))
    half = r["q"] * np.sqrt(r["se_rebuilds"] ** 2 + r["se_test"] ** 2)
    assert r["high"] - r["diff"] == pytest.approx(half)
    var_rebuilds = np.var(gains, ddof=1) / 2  # two rebuilds: 1 degree of freedom
    df = (var_rebuilds + r["se_test"] ** 2) ** 2 / (var_rebuilds**2 / 1)
    assert r["df"] == pytest.approx(df) and r["q"] == pytest.approx(t.ppf(0.975, df))
    assert r["low"] < 0 < r["high"]
    # every run counted as independent (Welch over 6 runs a side) would be narrower: the
    # rebuild's shared alignment would count as six observations
    flat = stats.seeds_and_sentences(
        [h for g in a for h in g], [h for g in b for h in g], refs, n_samples=100, seed=3
    )
    assert flat["high"] - flat["low"] < r["high"] - r["low"]
    # two identical rebuilds: no spread between them, the test set's noise at the normal
    # quantile of the requested level
    twice = stats.rebuilds_and_sentences([a[0], a[0]], [b[0], b[0]], refs, 100, 3, level=0.9)
    assert twice["se_rebuilds"] == 0 and twice["q"] == pytest.approx(1.644854, abs=1e-5)
    # one rebuild: the seeds' interval
    one = stats.rebuilds_and_sentences(a[:1], b[:1], refs, n_samples=100, seed=3)
    same = stats.seeds_and_sentences(a[0], b[0], refs, n_samples=100, seed=3)
    assert (one["low"], one["high"]) == pytest.approx((same["low"], same["high"]))
    with pytest.raises(ValueError, match="same rebuilds"):
        stats.rebuilds_and_sentences(a, b[:1], refs)


def test_subset_difference_resamples_the_whole_and_scores_its_part_on_each_draw():
    from rnnlib import bleu

    refs = _refs(80)
    rng = np.random.default_rng(2)
    hyps = _outputs(rng, refs, 0.8)
    mask = np.arange(80) % 2 == 0
    hyps = [h if m else _outputs(rng, [r], 0.3)[0] for h, r, m in zip(hyps, refs, mask)]
    r = stats.subset_difference(hyps, refs, mask, n_samples=300, seed=4)
    sub = bleu.corpus_bleu(
        [h for h, m in zip(hyps, mask) if m], [x for x, m in zip(refs, mask) if m]
    )
    assert r["bleu_subset"] == pytest.approx(sub.score)
    assert r["bleu_all"] == pytest.approx(bleu.corpus_bleu(hyps, refs).score)
    assert r["diff"] > 0 and r["low"] > 0 and r["low"] < r["diff"] < r["high"]
    assert r["n_subset"] == 40
    # the subset that is the whole: the difference is 0 on every resample
    whole = stats.subset_difference(hyps, refs, np.ones(80, bool), n_samples=50, seed=4)
    assert whole["diff"] == 0 and whole["low"] == 0 and whole["high"] == 0
    with pytest.raises(ValueError, match="marks 79"):
        stats.subset_difference(hyps, refs, mask[:-1])
    # the subset's own translations (another search): scored in place of the whole's
    own = [r for r, m in zip(refs, mask) if m]  # perfect translations of the subset
    r2 = stats.subset_difference(hyps, refs, mask, n_samples=300, seed=4, subset_hyps=own)
    assert r2["bleu_subset"] == pytest.approx(100.0) and r2["bleu_all"] == r["bleu_all"]
    assert r2["low"] > r["high"]
    with pytest.raises(ValueError, match="the subset's translations"):
        stats.subset_difference(hyps, refs, mask, subset_hyps=own[:-1])
    with pytest.raises(ValueError, match="empty"):
        stats.subset_difference(hyps, refs, np.zeros(80, bool))


def test_t_quantile_uses_welchs_degrees_of_freedom():
    from scipy.stats import t

    assert stats.t_quantile([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(t.ppf(0.975, 4))
    # no spread in either group: the pooled degrees of freedom
    assert stats.t_quantile([1.0, 1.0], [0.0, 0.0, 0.0]) == pytest.approx(t.ppf(0.975, 3))
    # all the spread in a group of two: one degree of freedom
    assert stats.t_quantile([1.0, 3.0], [0.0, 0.0, 0.0]) == pytest.approx(t.ppf(0.975, 1))
    with pytest.raises(ValueError, match="two runs"):
        stats.t_quantile([1.0], [1.0, 2.0])


def test_gap_change_sees_a_lead_that_shrinks_on_the_part_and_none_between_equal_systems():
    rng = np.random.default_rng(0)
    refs = [" ".join(f"w{rng.integers(0, 40)}" for _ in range(10)) for _ in range(90)]
    part = np.arange(90) % 3 != 0
    weak = [" ".join(w if rng.random() < 0.5 else "zz" for w in r.split()) for r in refs]
    strong = [r if not m else h for r, h, m in zip(refs, weak, part)]  # ahead off the part only
    res = stats.gap_change(strong, weak, refs, part, n_samples=200)
    assert res["gap_subset"] == 0 and res["gap_all"] > 0 and res["low"] > 0
    assert res["diff"] == pytest.approx(res["gap_all"] - res["gap_subset"])
    same = stats.gap_change(weak, weak, refs, part, n_samples=50)
    assert (same["diff"], same["low"], same["high"]) == (0, 0, 0)
    with pytest.raises(ValueError, match="subset must mark"):
        stats.gap_change(weak, weak, refs, np.zeros(90, bool))
