"""The calibration of the book's rules (rnnlib.calibration): the array arithmetic against
sacreBLEU and rnnlib.stats on the same resamples, and every rule's false-hold rate, power and
interval coverage on simulated test sets of whole chapters, within 3 Monte Carlo standard errors
of what they must be.

The rates run 400 trials per rule and design on the deterministic synthetic pool with
:data:`N_BOOT` bootstrap resamples per interval, not the book's 1,000 (the file must stay under
a minute on one core); :func:`test_fewer_resamples_do_not_move_the_rates` checks on one rule
that 250 resamples give the rates of 1,000 within their Monte Carlo error. The ledger's table
(chapters/ledger.md) runs the book's sizes on the book's own Bible.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rnnlib import bleu, stats
from rnnlib.calibration import more_rules, rules, systems
from rnnlib.calibration.fast_bleu import corpus_bleu, counts_of, resampled_bleu
from rnnlib.calibration.pool import Draw, draw_test, pool_from_prepared, synthetic_pool
from rnnlib.calibration.run import RULES, calibrate, plan_of, table

TRIALS = 400
N_BOOT = 250
SEED = 7


# -- sentences for the comparisons with rnnlib.stats -----------------------------------------------
def _sentences(n: int, seed: int, base=None, keep: float = 0.7) -> list[str]:
    """``n`` random sentences, or ``base`` with each word kept with probability ``keep`` and the
    others replaced (a hypothesis that shares some of its n-grams with a reference)."""
    rng = np.random.default_rng(seed)
    words = [f"w{k}" for k in range(40)]
    if base is None:
        return [" ".join(rng.choice(words, rng.integers(3, 15))) for _ in range(n)]
    return [
        " ".join(w if rng.random() < keep else str(rng.choice(words)) for w in s.split())
        for s in base
    ]


@pytest.fixture(scope="module")
def texts():
    refs = _sentences(60, 0)
    return refs, [_sentences(60, 10 + k, refs, 0.6 + 0.05 * k) for k in range(6)]


def test_fast_bleu_is_sacrebleus_on_every_kind_of_sum():
    scorer, st = bleu.sufficient_stats(*reversed(_pair_texts()))
    rng = np.random.default_rng(0)
    sums = [st.sum(0), st[:3].sum(0), *st[:40]]
    odd = st[:5].sum(0).copy()
    odd[3] = 0  # no matching bigram: exp smoothing
    sums += [
        odd,
        np.zeros(10),
        np.r_[5, 9, 0, 0, 0, 0, 5, 4, 3, 2],
        np.r_[2, 9, 2, 1, 0, 0, 2, 1, 0, 0],
    ]
    sums += [rng.integers(0, 30, 10) for _ in range(20)]
    ours = corpus_bleu(np.array(sums, dtype=float))
    theirs = [scorer._compute_score_from_stats(np.asarray(s)).score for s in sums]
    assert np.allclose(ours, theirs, atol=1e-9)


def _pair_texts():
    refs = _sentences(60, 0)
    return _sentences(60, 1, refs), refs


def test_resampled_bleu_is_rnnlib_bleus_on_the_same_draws():
    scorer, st = bleu.sufficient_stats(*_pair_texts())
    draws = np.random.default_rng(3).integers(0, len(st), (30, len(st)))
    ours = resampled_bleu(counts_of(draws, len(st)), np.stack([st, st[::-1]]))
    assert np.allclose(ours[0], bleu.resampled_scores(scorer, st, draws))
    assert np.allclose(ours[1], bleu.resampled_scores(scorer, st[::-1], draws))


def _draws(n: int, n_boot: int, seed=bleu.SACREBLEU_SEED) -> np.ndarray:
    """The resamples of rnnlib.stats' sentence bootstraps (sacreBLEU's seed)."""
    return np.random.default_rng(seed).choice(n, size=(n_boot, n))


def test_the_paired_interval_is_paired_bootstraps(texts):
    refs, hyps = texts
    want = stats.paired_bootstrap(hyps[0], hyps[1], refs, n_samples=200)
    st = [bleu.sufficient_stats(h, refs)[1] for h in hyps[:2]]
    check = rules._paired_check(st[0], st[1], counts_of(_draws(len(refs), 200), len(refs)))
    _, d, lo, hi = check.evidence["tests"][0]
    assert np.allclose([d, lo, hi], [want["diff"], want["low"], want["high"]])
    assert check.control.check.evidence["tests"][0][1:] == [0.0, 0.0, 0.0]
    same = stats.paired_bootstrap(hyps[1], hyps[1], refs, n_samples=200)
    assert (same["diff"], same["low"], same["high"]) == (0.0, 0.0, 0.0)  # the control's numbers


def test_clarks_interval_is_seeds_and_sentences(texts):
    refs, hyps = texts
    a, b = hyps[:3], hyps[3:]
    want = stats.seeds_and_sentences(a, b, refs, n_samples=200)
    sa = np.stack([bleu.sufficient_stats(h, refs)[1] for h in a])
    sb = np.stack([bleu.sufficient_stats(h, refs)[1] for h in b])
    counts = counts_of(_draws(len(refs), 200), len(refs))
    got = rules._clark(
        systems.scores(sa),
        systems.scores(sb),
        resampled_bleu(counts, sa),
        resampled_bleu(counts, sb),
    )
    assert np.allclose(got, [want["diff"], want["low"], want["high"]])


def test_the_subset_and_gap_intervals_are_rnnlib_stats(texts):
    refs, hyps = texts
    mask = np.arange(len(refs)) % 3 == 0
    sa, sb = (bleu.sufficient_stats(h, refs)[1] for h in hyps[:2])
    counts = counts_of(_draws(len(refs), 200), len(refs))
    want = stats.subset_difference(hyps[0], refs, mask, n_samples=200)
    got = rules._subset_check(sa, mask, counts)
    assert np.allclose(got, [want[k] for k in ("diff", "low", "high", "bleu_subset", "bleu_all")])
    want = stats.gap_change(hyps[0], hyps[1], refs, mask, n_samples=200)
    assert np.allclose(
        rules._gap_check(sa, sb, mask, counts), [want[k] for k in ("diff", "low", "high")]
    )


def test_the_block_rules_are_rnnlib_stats_with_blocks(texts):
    """The rules the chapters apply with ``blocks=`` against rnnlib.stats on the same block
    resamples (variable-length draws of whole chapters), the intervals widened alike for the
    few blocks (12 chapters: by 1.173), and each wider than the raw percentile interval."""
    from rnnlib.resampling import BlockResampler

    refs, hyps = texts
    blocks = np.arange(len(refs)) // 5  # chapters of 5 sentences
    g = len(np.unique(blocks))
    draws = BlockResampler(blocks).draws(200, bleu.SACREBLEU_SEED)
    counts = np.stack([np.bincount(d, minlength=len(refs)) for d in draws]).astype(np.float32)
    sa, sb = (bleu.sufficient_stats(h, refs)[1] for h in hyps[:2])
    want = stats.paired_bootstrap(hyps[0], hyps[1], refs, n_samples=200, blocks=blocks)
    assert want["widening"] == pytest.approx(1.173, abs=1e-3)
    _, d, lo, hi = rules._paired_check(sa, sb, counts, g).evidence["tests"][0]
    assert np.allclose([d, lo, hi], [want["diff"], want["low"], want["high"]])
    _, _, raw_lo, raw_hi = rules._paired_check(sa, sb, counts).evidence["tests"][0]
    assert lo < raw_lo and hi > raw_hi  # the same resamples, not widened
    mask = np.arange(len(refs)) % 3 == 0
    want = stats.subset_difference(hyps[0], refs, mask, n_samples=200, blocks=blocks)
    got = rules._subset_check(sa, mask, counts, g)
    assert np.allclose(got, [want[k] for k in ("diff", "low", "high", "bleu_subset", "bleu_all")])
    want = stats.gap_change(hyps[0], hyps[1], refs, mask, n_samples=200, blocks=blocks)
    assert np.allclose(
        rules._gap_check(sa, sb, mask, counts, g), [want[k] for k in ("diff", "low", "high")]
    )
    flags = (np.arange(len(refs)) % 4 == 0).astype(float)
    _, lo, hi = stats.bootstrap_mean(flags, 200, 3, blocks=blocks)
    c = np.stack(
        [np.bincount(d, minlength=len(refs)) for d in BlockResampler(blocks).draws(200, 3)]
    )
    picks = c[:, ::5]  # each chapter's multiplicity: its first sentence's
    want = stats.block_t_interval(np.bincount(blocks, flags), np.bincount(blocks), picks)
    assert np.allclose([lo, hi], want[1:])


def test_the_share_rule_reads_stats_studentized_block_interval(pool):
    """The share rule reads the block bootstrap's resamples of its drawn chapters
    (:attr:`Draw.block_counts`) as ``bootstrap_mean(blocks=)`` reads its own: the studentized
    interval of the share over the chapters."""
    draw = draw_test(pool, 500, 200, [9])
    assert draw.n_blocks == int(draw.chapter.max()) + 1 == len(np.unique(draw.chapter))
    out = more_rules.share_at_least(pool, draw, np.random.default_rng(2), True)
    rng = np.random.default_rng(2)  # the rule's draws again, to read its flags
    mu = more_rules._logit_mean(more_rules.REORDER_SHARE / 100 * 2, 1.0)
    per = mu + rng.standard_normal(draw.n_blocks)[draw.chapter]
    flags = (rng.random(len(draw.idx)) < 1 / (1 + np.exp(-per))).astype(float)
    first = [int(np.flatnonzero(draw.chapter == k)[0]) for k in range(draw.n_blocks)]
    got = stats.block_t_interval(
        np.bincount(draw.chapter, flags), np.bincount(draw.chapter), draw.block_counts[:, first]
    )
    assert (out.low, out.high) == pytest.approx((100 * got[1], 100 * got[2]))


def test_the_resampled_rank_correlation_is_scipys():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(1)
    x, y = more_rules._units(rng, 0.3)
    draws = rng.integers(0, len(x), (5, len(x)))
    c = counts_of(draws, len(x))
    mid = (c.sum(1, keepdims=True) + 1) / 2
    rx, ry = more_rules._ranks(x, c) - mid, more_rules._ranks(y, c) - mid
    ours = (c * rx * ry).sum(1) / np.sqrt((c * rx * rx).sum(1) * (c * ry * ry).sum(1))
    assert np.allclose(ours, [spearmanr(x[d], y[d])[0] for d in draws])


def test_the_relative_slope_is_rnnlib_stats():
    rng = np.random.default_rng(2)
    bleus, mids = rng.uniform(5, 30, (4, 5)), np.array([4.5, 14.5, 24.5, 34.5, 44.5])
    ours = more_rules._relative(bleus, mids, 1)
    assert np.allclose(ours, [1000 * stats._relative_slope(b, mids, 1) for b in bleus])


# -- the simulated systems -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pool():
    return synthetic_pool()


def test_a_test_set_is_whole_chapters_and_the_block_bootstrap_keeps_them(pool):
    draw = draw_test(pool, 500, 50, [0])
    assert 350 < len(draw.idx) < 650
    for k in range(int(draw.chapter.max()) + 1):  # each drawn chapter is one of the pool's, whole
        rows = draw.idx[draw.chapter == k]
        assert len(np.unique(pool.blocks[rows])) == 1
        assert len(rows) == (pool.blocks == pool.blocks[rows[0]]).sum()
    bc = draw.block_counts
    for k in range(int(draw.chapter.max()) + 1):  # every verse of a chapter drawn as often
        assert (bc[:, draw.chapter == k] == bc[:, draw.chapter == k][:, :1]).all()
    assert np.allclose(bc.sum(1).mean(), len(draw.idx), rtol=0.1)


def test_equal_systems_are_equal_in_expectation_and_thinning_scales_bleu(pool):
    rng = np.random.default_rng(1)
    draw = Draw(np.arange(len(pool.blocks)), pool.blocks, pool.blocks, np.ones((1, 1)))
    a, b = systems.pair(pool, draw, rng, seeds=400)
    assert np.allclose(a.mean(0).sum(0), systems.base(pool).sum(0), rtol=0.01)
    assert np.allclose(b.mean(0).sum(0), systems.base(pool).sum(0), rtol=0.01)
    thinned = systems.expected_thinned(systems.base(pool).sum(0), 0.1)
    assert math.isclose(corpus_bleu(thinned), 0.9 * systems.population_bleu(pool), rel_tol=1e-9)
    assert math.isclose(1 / (1 - systems.delta_for_gain(0.25)) - 1, 0.25)


# -- the rates -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rates(pool):
    """Every rule by chapter, claim false and true; the paired BLEU rule also by sentence (the
    contrast), claim false: :data:`TRIALS` trials each."""
    chapters = calibrate(pool, {"chapter": (TRIALS, (False, True))}, n_boot=N_BOOT, seed=SEED)
    sentences = calibrate(
        pool, {"sentence": (TRIALS, (False,))}, n_boot=N_BOOT, seed=SEED, names=["paired BLEU"]
    )
    return pd.concat([chapters, sentences]).set_index(["rule", "design", "claim"])


#: rules whose false-hold rate is above 5% + 3 SE under a design: the measured rate (a finding
#: the ledger page shows; the rule's interval assumes the sentences independent, the chapters'
#: verses are not)
MISCALIBRATED: dict[tuple[str, str], str] = {}

WITH_INTERVALS = [n for n in RULES if n != "across rebuilds"]


def _rate(rates, name, design, claim, what="holds") -> tuple[float, float]:
    row = rates.loc[(name, design, claim)]
    return float(row[what]), float(row[f"{what}_se"])


@pytest.mark.slow  # the rates fixture: 400 trials of every rule, minutes of CPU
@pytest.mark.parametrize(
    "name, design", [(n, "chapter") for n in RULES] + [("paired BLEU", "sentence")]
)
def test_a_rule_holds_at_most_5_percent_of_the_time_where_its_claim_is_false(
    rates, name, design, request
):
    if (name, design) in MISCALIBRATED:
        request.applymarker(pytest.mark.xfail(strict=True, reason=MISCALIBRATED[(name, design)]))
    p, _ = _rate(rates, name, design, "false")
    se = math.sqrt(0.05 * 0.95 / TRIALS)
    assert p <= 0.05 + 3 * se, f"{name}, by {design}: false holds {p:.3f}"


@pytest.mark.slow  # the rates fixture
@pytest.mark.parametrize("name", list(RULES))
def test_a_rule_holds_more_often_where_its_claim_is_true(rates, name):
    power, se = _rate(rates, name, "chapter", "true")
    false, se0 = _rate(rates, name, "chapter", "false")
    assert power > false + 3 * math.hypot(se, se0), f"{name}: power {power:.3f}, false {false:.3f}"


#: (rule, claim) whose coverage under the chapter design is outside 95% ± 3 SE (91.7-98.3%):
#: the measured coverage (SE about 1-2%). Narrow: the sentence bootstrap by chapter; wide: the
#: seeds' t interval, which counts the test set's chapters twice (in the seeds' spread and in the
#: resamples). The rules that resample whole blocks are in range (block bootstrap 94.0/94.8%,
#: blocks of lines 92.0/92.8%, subset 94.5/93.8%, gap change 96.0/93.2%, margin 94.8/92.8%,
#: share 94.2/92.0%) since their intervals are widened for the few blocks
#: (``stats.block_interval``) or studentized (``stats.block_t_interval``); before, the block
#: bootstrap's claim-false coverage was 90.8%, the lines' 88.0/89.0%, the share's 88.8/85.2%
COVERAGE_OFF: dict[tuple[str, str], str] = {
    ("paired BLEU", "false"): "measured 86.8%",
    ("paired BLEU", "true"): "measured 89.5%",
    ("seeds and sentences", "false"): "measured 99.2%: too wide",
}


@pytest.mark.slow  # the rates fixture
@pytest.mark.parametrize("claim", ["false", "true"])
@pytest.mark.parametrize("name", WITH_INTERVALS)
def test_a_rules_95_percent_intervals_cover_the_truth_95_percent_of_the_time(
    rates, name, claim, request
):
    if (name, claim) in COVERAGE_OFF:
        request.applymarker(pytest.mark.xfail(strict=True, reason=COVERAGE_OFF[(name, claim)]))
    p, _ = _rate(rates, name, "chapter", claim, "covered")
    se = math.sqrt(0.95 * 0.05 / TRIALS)
    assert abs(p - 0.95) <= 3 * se, f"{name}, claim {claim}: coverage {p:.3f}"


@pytest.mark.slow  # the rates fixture
def test_the_table_has_a_row_per_rule_and_every_rate_in_it(rates):
    t = table(rates.reset_index())
    assert list(t.index) == list(RULES)
    assert (t["trials"] == TRIALS).all()
    assert t.loc["rank correlation", "false holds, by sentence (%)"] == "—"
    assert t.loc["paired BLEU", "false holds, by sentence (%)"] != "—"


def test_the_benchmark_runs_the_ledgers_sizes():
    from rnnlib.bench import calibration as bench
    from rnnlib.experiments import ledger

    assert (bench.SENTENCES, bench.N_BOOT, bench.SEED) == (
        ledger.SENTENCES,
        ledger.N_BOOT,
        ledger.SEED,
    )


def test_the_result_does_not_depend_on_the_workers_or_their_blas_threads(pool):
    plan, names = plan_of(6, 3), ["paired BLEU", "gap change", "share at least"]
    one = calibrate(pool, plan, n_boot=50, seed=1, names=names)
    two = calibrate(pool, plan, n_boot=50, seed=1, names=names, workers=2)
    default = calibrate(pool, plan, n_boot=50, seed=1, names=names, blas_threads=None)
    assert one.equals(two)
    assert one.equals(default)


@pytest.mark.slow  # 200 trials at 1,000 resamples, about 8 s of CPU
def test_fewer_resamples_do_not_move_the_rates(pool):
    """The tests' 250 resamples against the book's 1,000 on the paired BLEU rule (the same test
    sets: the trial's generator draws the test set before the resamples)."""
    plan = {"chapter": (100, (False, True))}
    few = calibrate(pool, plan, n_boot=N_BOOT, seed=3, names=["paired BLEU"])
    many = calibrate(pool, plan, n_boot=1000, seed=3, names=["paired BLEU"])
    for what in ("holds", "covered"):
        d = np.abs(few[what].to_numpy() - many[what].to_numpy())
        se = np.hypot(few[f"{what}_se"], many[f"{what}_se"]).to_numpy()
        assert (d <= 3 * np.maximum(se, 0.02)).all(), (
            what,
            few[what].tolist(),
            many[what].tolist(),
        )


# -- on the book's own Bible, prepared once per session in the shared cache ------------------------
def test_on_the_bibles_chapters_the_sentence_bootstrap_is_too_narrow_and_the_block_one_less(
    bible_cache,
):
    from rnnlib.corpus.dataset import CorpusConfig, prepare_corpus

    folder = prepare_corpus(CorpusConfig(), bible_cache).path
    bible = pool_from_prepared(folder)
    plan = {"chapter": (100, (False,))}
    names = ["paired BLEU", "paired BLEU, block bootstrap"]
    r = calibrate(bible, plan, n_boot=N_BOOT, seed=5, names=names).set_index("rule")
    sentences, blocks = (
        r.loc["paired BLEU", "holds"],
        r.loc["paired BLEU, block bootstrap", "holds"],
    )
    assert sentences > 0.10  # the finding the ledger shows
    assert blocks < sentences - 3 * math.hypot(*r["holds_se"])
