"""rnnlib.stats against computations that do not share its code: scipy's Welch test and
bootstrap, sacreBLEU's own scoring of the resampled sentences, numbers worked out by hand, and
a brute-force simulation of seeds x sentences with known variance components.

The seeds-and-sentences rule (paper A's Table 1, every seed-pooled claim) is checked where its
noise comes from: the seeds' variance (sample variances over ``n - 1``, divided by the runs), the
test set's (the paired bootstrap of the difference), and Satterthwaite's degrees of freedom of
their sum. A "linear BLEU" (the corpus score is the mean of per-sentence numbers) stands in for
sacreBLEU where the variance components must be known exactly; the rule reads BLEU only through
:mod:`rnnlib.bleu`'s sufficient statistics, so the rule itself runs unchanged."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from rnnlib import bleu, stats


# -- a linear BLEU: each "hypothesis" is a number, the corpus score their mean --------------------
@pytest.fixture
def linear_bleu(monkeypatch):
    """Make :mod:`rnnlib.bleu`'s corpus score the mean of per-sentence numbers: a hypothesis is
    the sentence's score itself."""

    def sufficient_stats(hyps, refs):
        return None, np.asarray(hyps, dtype=float)[:, None]

    def resampled_scores(scorer, sentence_stats, idxs):
        return sentence_stats[np.asarray(idxs), 0].mean(axis=-1)

    monkeypatch.setattr(bleu, "sufficient_stats", sufficient_stats)
    monkeypatch.setattr(bleu, "resampled_scores", resampled_scores)


def test_seeds_and_sentences_by_hand_with_no_test_set_noise(linear_bleu):
    """Three seeds of a, two of b, four sentences on which every seed's difference is the same
    (so no resample moves it): the seeds' variance alone, Welch's degrees of freedom by hand.
    a's seeds score 3, 6, 9 (sample variance 9, over 3 runs: 3); b's 0 and 2 (variance 2, over
    2 runs: 1). var = 3 + 1 = 4; df = 4^2 / (3^2/2 + 1^2/1) = 16 / 5.5."""
    a = [[3.0] * 4, [6.0] * 4, [9.0] * 4]
    b = [[0.0] * 4, [2.0] * 4]
    r = stats.seeds_and_sentences(a, b, ["r"] * 4, n_samples=500, seed=1)
    assert r["diff"] == 5.0
    assert r["se_seeds"] == pytest.approx(2.0, rel=1e-12) and r["se_test"] == 0
    assert r["df"] == pytest.approx(16 / 5.5, rel=1e-12)
    assert r["q"] == pytest.approx(sps.t.ppf(0.975, 16 / 5.5), rel=1e-12)
    assert (r["low"], r["high"]) == pytest.approx((5 - 2 * r["q"], 5 + 2 * r["q"]), rel=1e-12)
    # scipy's own Welch test on the seeds' scores gives the same interval and degrees of freedom
    welch = sps.ttest_ind([3.0, 6.0, 9.0], [0.0, 2.0], equal_var=False)
    assert welch.df == pytest.approx(r["df"], rel=1e-12)
    ci = welch.confidence_interval(0.95)
    assert (r["low"], r["high"]) == pytest.approx((ci.low, ci.high), rel=1e-12)


def test_seeds_and_sentences_by_hand_with_both_sources_of_noise(linear_bleu):
    """The same seeds, now with sentences that differ: a's seed i scores ``[0, 2, 4, 6] + c_i``
    (c = 0, 3, 6), b's seeds 0 and 2 everywhere. The per-sentence difference of the seed means
    is d = [2, 4, 6, 8], whose exact bootstrap variance of the mean is var(d, ddof=0)/4 = 5/4;
    the seeds' part stays 3 + 1 = 4. Satterthwaite, the test part counted as known:
    df = (4 + 5/4)^2 / (3^2/2 + 1^2/1) = 27.5625 / 5.5 = 5.011. ``n_samples`` resamples estimate
    5/4 within about 1%."""
    base = np.array([0.0, 2.0, 4.0, 6.0])
    a = [list(base + c) for c in (0.0, 3.0, 6.0)]
    b = [[0.0] * 4, [2.0] * 4]
    r = stats.seeds_and_sentences(a, b, ["r"] * 4, n_samples=40_000, seed=2)
    assert r["diff"] == pytest.approx(5.0, rel=1e-12)
    assert r["bleu_a"] == pytest.approx([3.0, 6.0, 9.0]) and r["bleu_b"] == pytest.approx([0, 2])
    assert r["se_seeds"] == pytest.approx(2.0, rel=1e-12)
    assert r["se_test"] ** 2 == pytest.approx(1.25, rel=0.02)
    assert r["df"] == pytest.approx(27.5625 / 5.5, rel=0.02)
    assert r["q"] == pytest.approx(sps.t.ppf(0.975, 27.5625 / 5.5), rel=0.005)
    half = sps.t.ppf(0.975, 27.5625 / 5.5) * math.sqrt(5.25)
    assert (r["low"], r["high"]) == pytest.approx((5 - half, 5 + half), rel=0.01)


def test_rebuilds_and_sentences_by_hand(linear_bleu):
    """Three rebuilds of one seed each: gains 1, 2 and 6 (sample variance 7, over 3 rebuilds:
    7/3); the pooled runs' per-sentence difference [-3, -1, 1, 3] + 3 has bootstrap variance 5/4.
    df = (7/3 + 5/4)^2 / ((7/3)^2 / 2) = 4.717; with the test set's noise taken out (every
    sentence alike), df = R - 1 = 2."""
    base = np.array([0.0, 2.0, 4.0, 6.0])
    gains = (1.0, 2.0, 6.0)
    a = [[list(base - 3 + g)] for g in gains]  # base - 3 has mean 0: rebuild r gains g_r
    b = [[[0.0] * 4] for _ in gains]
    r = stats.rebuilds_and_sentences(a, b, ["r"] * 4, n_samples=40_000, seed=4)
    assert r["gains"] == pytest.approx(gains) and r["diff"] == pytest.approx(3.0)
    assert r["se_rebuilds"] ** 2 == pytest.approx(7 / 3, rel=1e-12)
    assert r["se_test"] ** 2 == pytest.approx(1.25, rel=0.02)
    df = (7 / 3 + 1.25) ** 2 / ((7 / 3) ** 2 / 2)
    assert r["df"] == pytest.approx(df, rel=0.02)
    half = sps.t.ppf(0.975, df) * math.sqrt(7 / 3 + 1.25)
    assert (r["low"], r["high"]) == pytest.approx((3 - half, 3 + half), rel=0.01)
    flat = stats.rebuilds_and_sentences(
        [[[3.0 + g] * 4] for g in gains], b, ["r"] * 4, n_samples=500, seed=4
    )
    assert flat["se_test"] == 0 and flat["df"] == pytest.approx(2.0, rel=1e-12)
    assert flat["q"] == pytest.approx(4.302653, abs=1e-6)  # the t table: 97.5%, 2 df
    # a rebuild's seeds are averaged first: two seeds 0 and 2 on rebuild 1 count as one gain of 1
    two = stats.rebuilds_and_sentences(
        [[[1.0] * 4, [1.0] * 4], [[2.0] * 4], [[6.0] * 4]],
        [[[0.0] * 4, [0.0] * 4], [[0.0] * 4], [[0.0] * 4]],
        ["r"] * 4,
        n_samples=50,
        seed=4,
    )
    assert two["gains"] == pytest.approx(gains) and two["df"] == pytest.approx(2.0)


def _simulate(rng, n_sent, na, nb, tau, sigma_v, sigma_e, mu_diff):
    """One replication: a fresh test set of ``n_sent`` sentences and fresh optimiser seeds.
    A sentence's score for system x, seed i: ``mu_x + u_s + v_xs + delta_xi + e_xis`` (u_s the
    sentence's difficulty shared by both systems, v_xs the system's own per-sentence noise,
    delta_xi the seed's effect, e the seed x sentence noise)."""
    u = rng.normal(0, 3.0, n_sent)
    out = []
    for mu, n in ((mu_diff, na), (0.0, nb)):
        v = rng.normal(0, sigma_v, n_sent)
        seeds = [mu + u + v + rng.normal(0, tau) + rng.normal(0, sigma_e, n_sent) for _ in range(n)]
        out.append([list(s) for s in seeds])
    return out


@pytest.mark.parametrize("na,nb", [(3, 3), (2, 4)])
def test_seeds_and_sentences_variance_and_coverage_match_a_brute_force_simulation(
    linear_bleu, na, nb
):
    """400 replications (fresh sentences, fresh seeds) with known variance components and no
    seed x sentence interaction: the true variance of the difference is
    ``tau^2 (1/na + 1/nb) + 2 sigma_v^2 / n``. The mean of the rule's seeds part and of its test
    part are each that component within 3 Monte Carlo standard errors (the bootstrap's factor
    (n - 1)/n aside), the empirical variance of the difference matches it, and the 95% intervals
    cover the true difference 95% of the time (within 3 standard errors). Dropping either part,
    forgetting to divide the seeds' variance by the runs, a population variance or the normal
    quantile in place of the t quantile each moves one of these beyond its tolerance."""
    rng = np.random.default_rng([na, nb, 55])
    n_sent, tau, sigma_v, mu = 40, 1.0, 2.0, 1.5
    true_seeds = tau**2 * (1 / na + 1 / nb)
    true_test = 2 * sigma_v**2 / n_sent
    trials = 400
    diffs, v_seeds, v_test, cover = [], [], [], 0
    for _ in range(trials):
        a, b = _simulate(rng, n_sent, na, nb, tau, sigma_v, 0.0, mu)
        r = stats.seeds_and_sentences(a, b, ["r"] * n_sent, n_samples=200, seed=rng)
        diffs.append(r["diff"])
        v_seeds.append(r["se_seeds"] ** 2)
        v_test.append(r["se_test"] ** 2)
        cover += r["low"] <= mu <= r["high"]
    v_seeds, v_test = np.array(v_seeds), np.array(v_test)
    mc = lambda x: 3 * x.std(ddof=1) / math.sqrt(trials)  # noqa: E731
    assert abs(v_seeds.mean() - true_seeds) < mc(v_seeds)
    assert abs(v_test.mean() - true_test * (n_sent - 1) / n_sent) < mc(v_test) + 0.01 * true_test
    # the empirical variance of the difference over replications (its sd: var * sqrt(2/(T-1)))
    total = true_seeds + true_test
    assert abs(np.var(diffs, ddof=1) - total) < 3 * total * math.sqrt(2 / (trials - 1))
    rate = cover / trials
    assert abs(rate - 0.95) < 3 * math.sqrt(0.95 * 0.05 / trials), rate


def test_seeds_and_sentences_counts_a_seed_by_sentence_interaction_twice(linear_bleu):
    """Where each seed translates each sentence its own way (a seed x sentence noise of sd 3),
    that noise enters both parts of the rule: the seeds' sample variance holds it once
    (sigma_e^2 / n per seed) and the bootstrap of the seeds' mean once more. The rule's variance
    is then, within 3 Monte Carlo standard errors, the true variance plus
    ``sigma_e^2 / n (1/na + 1/nb)``: conservative (here 35% too large, the intervals covering
    98%, not 95%). Pinned so that a change of the rule shows here."""
    rng = np.random.default_rng(5)
    n, na, nb, tau, sigma_v, sigma_e, mu = 40, 3, 3, 0.5, 1.0, 3.0, 1.0
    runs = 1 / na + 1 / nb
    true = tau**2 * runs + 2 * sigma_v**2 / n + sigma_e**2 / n * runs
    expected = (tau**2 + sigma_e**2 / n) * runs + (n - 1) / n * (
        2 * sigma_v**2 + sigma_e**2 * runs
    ) / n
    trials, est, cover = 400, [], 0
    for _ in range(trials):
        a, b = _simulate(rng, n, na, nb, tau, sigma_v, sigma_e, mu)
        r = stats.seeds_and_sentences(a, b, ["r"] * n, n_samples=200, seed=rng)
        est.append(r["se_seeds"] ** 2 + r["se_test"] ** 2)
        cover += r["low"] <= mu <= r["high"]
    est = np.array(est)
    assert abs(est.mean() - expected) < 3 * est.std(ddof=1) / math.sqrt(trials)
    assert abs(est.mean() - true) > 3 * est.std(ddof=1) / math.sqrt(trials)
    assert cover / trials > 0.95 + 3 * math.sqrt(0.95 * 0.05 / trials) / 2


def test_rebuilds_and_sentences_coverage_matches_a_brute_force_simulation(linear_bleu):
    """400 replications of 3 rebuilds x 2 seeds per system on a fresh test set: each rebuild
    shifts the gain by its own amount (sd 1.5, shared by its seeds), the seeds add sd 0.7 each,
    the sentences sd 2 per system. The rule's variance is unbiased for the true
    ``(1.5^2 + 0.7^2 (1/2 + 1/2)) / 3 + 2 * 2^2 / n`` and its intervals cover 95% (3 standard
    errors); counting every run as independent (6 against 6) covers far less."""
    rng = np.random.default_rng(7)
    n_sent, rebuilds, seeds, mu = 40, 3, 2, 1.0
    sd_rebuild, tau, sigma_v = 1.5, 0.7, 2.0
    true = (sd_rebuild**2 + tau**2 * (2 / seeds)) / rebuilds + 2 * sigma_v**2 / n_sent
    trials, cover, flat_cover, var = 400, 0, 0, []
    for _ in range(trials):
        u = rng.normal(0, 3.0, n_sent)
        va, vb = rng.normal(0, sigma_v, n_sent), rng.normal(0, sigma_v, n_sent)
        ga, gb = [], []
        for _ in range(rebuilds):
            shift = rng.normal(0, sd_rebuild)
            ga.append([list(mu + shift + u + va + rng.normal(0, tau)) for _ in range(seeds)])
            gb.append([list(u + vb + rng.normal(0, tau)) for _ in range(seeds)])
        r = stats.rebuilds_and_sentences(ga, gb, ["r"] * n_sent, n_samples=100, seed=rng)
        var.append(r["se_rebuilds"] ** 2 + r["se_test"] ** 2)
        cover += r["low"] <= mu <= r["high"]
        flat = stats.seeds_and_sentences(
            [h for g in ga for h in g], [h for g in gb for h in g], ["r"] * n_sent, 100, rng
        )
        flat_cover += flat["low"] <= mu <= flat["high"]
    var = np.array(var)
    assert abs(var.mean() - true) < 3 * var.std(ddof=1) / math.sqrt(trials) + 0.01 * true
    se = 3 * math.sqrt(0.95 * 0.05 / trials)
    assert abs(cover / trials - 0.95) < se, cover / trials
    assert flat_cover / trials < 0.95 - se  # the shared rebuild counted as six observations


# -- real BLEU: sacreBLEU's own scores of the resampled sentences ----------------------------------
def _refs(n, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(30)]
    return [" ".join(rng.choice(words, size=int(rng.integers(5, 10)))) for _ in range(n)]


def _noisy(rng, refs, keep):
    return [" ".join(w if rng.random() < keep else "zz" for w in r.split()) for r in refs]


def _corpus(hyps, refs, rows) -> float:
    """sacreBLEU's corpus BLEU (its public API, on the text) of the sentences ``rows``."""
    return bleu.corpus_bleu([hyps[i] for i in rows], [refs[i] for i in rows]).score


def test_seeds_and_sentences_with_sacrebleu_equals_welchs_test_when_sentences_are_alike():
    """Every sentence is the same pair, so no resample of the sentences moves a seed's BLEU and
    the interval is the seeds' alone: scipy's Welch t interval on the seeds' sacreBLEU scores."""
    ref = "the cat sat on the red mat today"
    outs_a = ["the cat sat on the red mat", "the cat sat on a red mat today", "a cat sat on mat"]
    outs_b = ["the dog sat on a mat", "a dog lay on the mat today"]
    refs = [ref] * 12
    a = [[h] * 12 for h in outs_a]
    b = [[h] * 12 for h in outs_b]
    r = stats.seeds_and_sentences(a, b, refs, n_samples=100, seed=5)
    ba = [_corpus(h, refs, range(12)) for h in a]
    bb = [_corpus(h, refs, range(12)) for h in b]
    assert r["bleu_a"] == pytest.approx(ba) and r["bleu_b"] == pytest.approx(bb)
    assert r["se_test"] == pytest.approx(0, abs=1e-9)
    welch = sps.ttest_ind(ba, bb, equal_var=False)
    assert r["df"] == pytest.approx(welch.df, rel=1e-9)
    ci = welch.confidence_interval(0.95)
    assert (r["low"], r["high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)


def test_seeds_and_sentences_test_part_is_sacrebleus_scores_of_the_documented_resamples():
    """The test set's variance is the variance, over the resamples ``default_rng(seed).choice(n,
    (n_samples, n))`` (sacreBLEU's own draws), of the difference of the seeds' mean sacreBLEU
    scores, each score computed here by sacreBLEU on the resampled text; df, q and the interval
    then follow by hand from those and the seeds' own scores (scipy's t quantile)."""
    refs = _refs(25)
    rng = np.random.default_rng(3)
    a = [_noisy(rng, refs, 0.8) for _ in range(3)]
    b = [_noisy(rng, refs, 0.6) for _ in range(2)]
    n_samples, seed = 40, 9
    r = stats.seeds_and_sentences(a, b, refs, n_samples=n_samples, seed=seed)
    idxs = np.random.default_rng(seed).choice(len(refs), size=(n_samples, len(refs)))
    gap = [
        np.mean([_corpus(h, refs, ix) for h in a]) - np.mean([_corpus(h, refs, ix) for h in b])
        for ix in idxs
    ]
    var_test = np.var(gap, ddof=1)
    assert r["se_test"] ** 2 == pytest.approx(var_test, rel=1e-6)
    ba = [_corpus(h, refs, range(25)) for h in a]
    bb = [_corpus(h, refs, range(25)) for h in b]
    va, vb = np.var(ba, ddof=1) / 3, np.var(bb, ddof=1) / 2
    df = (va + vb + var_test) ** 2 / (va**2 / 2 + vb**2 / 1)
    assert r["df"] == pytest.approx(df, rel=1e-6)
    half = sps.t.ppf(0.975, df) * math.sqrt(va + vb + var_test)
    diff = np.mean(ba) - np.mean(bb)
    assert (r["low"], r["high"]) == pytest.approx((diff - half, diff + half), rel=1e-6)


def test_subset_difference_is_sacrebleus_scores_of_the_documented_resamples():
    """Each resample's BLEU(subset) - BLEU(whole), recomputed by sacreBLEU on the text of the
    drawn sentences (the subset's own translations where given), has its 2.5 and 97.5
    percentiles where subset_difference puts the interval."""
    refs = _refs(30, 1)
    rng = np.random.default_rng(4)
    hyps = _noisy(rng, refs, 0.7)
    mask = np.arange(30) % 3 == 0
    own = _noisy(rng, [r for r, m in zip(refs, mask) if m], 0.9)
    n_samples, seed = 60, 13
    idxs = np.random.default_rng(seed).choice(30, size=(n_samples, 30))
    for sub_hyps in (None, own):
        in_sub = list(hyps)
        if sub_hyps is not None:
            for k, i in enumerate(np.flatnonzero(mask)):
                in_sub[i] = sub_hyps[k]
        r = stats.subset_difference(
            hyps, refs, mask, n_samples=n_samples, seed=seed, subset_hyps=sub_hyps
        )
        picked = np.flatnonzero(mask)
        assert r["diff"] == pytest.approx(
            _corpus(in_sub, refs, picked) - _corpus(hyps, refs, range(30)), rel=1e-9
        )
        diffs = [_corpus(in_sub, refs, ix[mask[ix]]) - _corpus(hyps, refs, ix) for ix in idxs]
        low, high = np.percentile(diffs, [2.5, 97.5])
        assert (r["low"], r["high"]) == pytest.approx((low, high), rel=1e-9, abs=1e-9)


def test_paired_bootstrap_difference_interval_is_sacrebleus_scores_of_its_own_draws():
    """The interval of BLEU(a) - BLEU(b) is the 2.5/97.5 percentiles of the differences of
    sacreBLEU's corpus scores on the resamples sacreBLEU's paired test draws (its seed), each
    recomputed here from the text; the p-value is sacreBLEU's PairedTest's."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    refs = _refs(30, 2)
    rng = np.random.default_rng(6)
    a, b = _noisy(rng, refs, 0.8), _noisy(rng, refs, 0.7)
    res = stats.paired_bootstrap(a, b, refs, n_samples=80, seed=21)
    idxs = np.random.default_rng(21).choice(30, size=(80, 30), replace=True)
    diffs = [_corpus(a, refs, ix) - _corpus(b, refs, ix) for ix in idxs]
    assert (res["low"], res["high"]) == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])))
    with stats._sacrebleu_seed(21):
        _, out = PairedTest(
            [("b", b), ("a", a)], {"BLEU": BLEU()}, [refs], test_type="bs", n_samples=80
        )()
    assert res["p_value"] == out["BLEU"][1].p_value
    # sacreBLEU's own bootstrap mean of system a over those draws: the same resamples
    assert np.mean([_corpus(a, refs, ix) for ix in idxs]) == pytest.approx(
        out["BLEU"][1].mean, abs=1e-3
    )


# -- the bootstraps of plain numbers against scipy.stats.bootstrap (percentile method) -------------
def _scipy_interval(data, statistic, paired, n=20_000, seed=0):
    """scipy's percentile bootstrap interval; ``statistic(*samples, axis)`` vectorised."""
    res = sps.bootstrap(
        data,
        statistic,
        n_resamples=n,
        method="percentile",
        paired=paired,
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


def _close(ours, theirs, scale, tol=0.12):
    """Two percentile intervals from independent draws agree within ``tol`` bootstrap standard
    errors ``scale`` at each end (the Monte Carlo error of a 2.5% percentile of 20,000 draws
    is about 0.02 of them, of 5,000 0.04, of 1,000 0.09: ``tol`` is about 3 of those)."""
    assert abs(ours[0] - theirs[0]) < tol * scale and abs(ours[1] - theirs[1]) < tol * scale, (
        ours,
        theirs,
        scale,
    )


def test_bootstrap_mean_agrees_with_scipy_on_a_skewed_sample():
    """A skewed sample (exponential), where the percentile interval is not symmetric: the
    percentile interval, not the basic (reflected) one nor a normal one."""
    x = np.random.default_rng(1).exponential(size=40) ** 2
    mean, low, high = stats.bootstrap_mean(x, n_boot=20_000, seed=3)
    assert mean == pytest.approx(x.mean())
    scale = x.std() / math.sqrt(len(x))
    _close((low, high), _scipy_interval((x,), np.mean, False), scale)
    assert (high - mean) > 1.2 * (mean - low)  # skewed as the resampled means are


def test_paired_and_unpaired_differences_agree_with_scipy():
    rng = np.random.default_rng(2)
    common = rng.normal(0, 5, 50)
    a, b = common + rng.normal(0.5, 1, 50), common + rng.normal(0, 1, 50)
    d, low, high = stats.paired_difference(a, b, n_boot=20_000, seed=4)
    scale = np.std(a - b) / math.sqrt(50)
    theirs = _scipy_interval((a, b), lambda x, y, axis: np.mean(x - y, axis), True)
    _close((low, high), theirs, scale)
    # unpaired: each sample resampled on its own (here much wider: the common part stays)
    x, y = rng.exponential(2.0, 30), rng.normal(1.0, 1.0, 20)
    m, low2, high2 = stats.mean_difference(x, y, n_boot=5000, seed=5)
    assert m == pytest.approx(x.mean() - y.mean())
    scale2 = math.sqrt(x.var() / 30 + y.var() / 20)
    theirs = _scipy_interval((x, y), lambda p, q, axis: p.mean(axis) - q.mean(axis), False)
    _close((low2, high2), theirs, scale2, tol=0.15)


def _spearman(x, y, axis=-1):
    """Spearman's rho along ``axis``: Pearson's correlation of the ranks (ties averaged)."""
    rx, ry = sps.rankdata(x, axis=axis), sps.rankdata(y, axis=axis)
    rx = rx - rx.mean(axis, keepdims=True)
    ry = ry - ry.mean(axis, keepdims=True)
    return (rx * ry).sum(axis) / np.sqrt((rx**2).sum(axis) * (ry**2).sum(axis))


def test_bootstrap_spearman_agrees_with_scipy():
    """Against scipy's percentile bootstrap of the rank correlation over the same units, resampled
    in pairs (resampling x and y apart would centre the interval on 0)."""
    rng = np.random.default_rng(3)
    x = rng.exponential(size=50)
    y = np.exp(x) + rng.normal(0, 2.0, 50)
    rho, low, high = stats.bootstrap_spearman(x, y, n_boot=1000, seed=6)
    assert rho == pytest.approx(sps.spearmanr(x, y).statistic) == _spearman(x, y)
    theirs = _scipy_interval((x, y), _spearman, True)
    _close((low, high), theirs, (theirs[1] - theirs[0]) / 3.92, tol=0.3)


def test_percentile_interval_is_scipys_percentile_method_on_the_same_draws():
    """scipy's percentile bootstrap ends at the 2.5 and 97.5 percentiles of its resampled
    statistics (``bootstrap_distribution``): percentile_interval of those is scipy's interval."""
    x = np.random.default_rng(4).normal(size=30)
    res = sps.bootstrap(
        (x,), np.mean, n_resamples=999, method="percentile", rng=np.random.default_rng(0)
    )
    low, high = stats.percentile_interval(res.bootstrap_distribution)
    ci = res.confidence_interval
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    res90 = sps.bootstrap(
        (x,),
        np.mean,
        n_resamples=999,
        method="percentile",
        confidence_level=0.9,
        rng=np.random.default_rng(0),
    )
    ci90 = res90.confidence_interval
    assert tuple(stats.percentile_interval(res90.bootstrap_distribution, 0.9)) == pytest.approx(
        (ci90.low, ci90.high), rel=1e-12
    )


def test_paired_ratio_agrees_with_scipy_and_resamples_the_pairs_together():
    """The ratio of two paired samples' means (seconds per update of two interleaved arms)
    against scipy's percentile bootstrap over the pairs; with the pairs' common load kept
    together the interval is far narrower than resampling each arm alone would give."""
    rng = np.random.default_rng(8)
    load = np.exp(rng.normal(0, 0.5, 40))  # shared by the two arms' updates of a round
    a, b = 1.4 * load * rng.lognormal(0, 0.05, 40), load * rng.lognormal(0, 0.05, 40)
    ratio, low, high = stats.paired_ratio(a, b, n_boot=20_000, seed=1)
    assert ratio == pytest.approx(a.mean() / b.mean())
    theirs = _scipy_interval((a, b), lambda x, y, axis: x.mean(axis) / y.mean(axis), True)
    _close((low, high), theirs, (theirs[1] - theirs[0]) / 3.92)
    apart = _scipy_interval((a, b), lambda x, y, axis: x.mean(axis) / y.mean(axis), False)
    assert (apart[1] - apart[0]) > 4 * (high - low)
    with pytest.raises(ValueError, match="paired"):
        stats.paired_ratio(a, b[:-1])


def test_each_resample_draws_as_many_values_as_its_sample_worked_by_enumeration():
    """Exact small cases. The mean of 4 draws from [0, 0, 0, 1] is 0 with chance (3/4)^4 = 0.32
    and 1/4 with chance 0.42: its 40th and 60th percentiles are both 1/4 (with 3 draws they
    would be 0 and 1/3). Two unpaired samples: [0, 0, 0, 0] minus 2 draws of [0, 1] is -1,
    -1/2 or 0 with chances 1/4, 1/2, 1/4, so its 20th and 80th percentiles are -1 and 0 (with
    4 draws of b, as many as a has, they would be -3/4 and -1/4)."""
    mean, low, high = stats.bootstrap_mean([0.0, 0.0, 0.0, 1.0], n_boot=4000, seed=1, level=0.2)
    assert (mean, low, high) == (0.25, 0.25, 0.25)
    diff, low, high = stats.mean_difference([0.0] * 4, [0.0, 1.0], n_boot=4000, seed=2, level=0.6)
    assert (diff, low, high) == (-0.5, -1.0, 0.0)
    ratio, low, high = stats.paired_ratio([1.0, 1.0, 1.0, 2.0], [1.0] * 4, 4000, 3, level=0.2)
    assert (ratio, low, high) == (1.25, 1.25, 1.25)  # the same enumeration, plus 1
