"""MERT (rnnlib.smt.tune): reproducible from scratch, the same with one or two decoding processes,
and returning the weights of the best dev decoding (Moses' --return-best-dev)."""

import numpy as np
import pytest

from rnnlib.smt.decoder import Decoder, DecoderConfig, Translation
from rnnlib.smt.lm import NgramLM, train_arpa
from rnnlib.smt.tune import (
    CandidatePool,
    bleu_from_stats,
    bleu_stats,
    line_search,
    mert,
    mert_loop,
    tune,
    unit_scale,
)

P = lambda *xs: np.array(xs, dtype=float)  # noqa: E731  phrase scores p(t|s), p(s|t), lex, lex


@pytest.fixture(scope="module")
def dev_task(tmp_path_factory):
    """Eight source words s_i, each with three one-word options (x_i, y_i, z_i) of random scores,
    and six two-word phrases, one with a reordered option; the references are mostly x_i (with
    some y_i and z_i), and the LM is trained on them; the starting LM weight is 0. MERT's random
    restarts and directions matter here (different seeds end at different weights).
    Returns ``(table, lm, src, refs, w0)``."""
    rng = np.random.default_rng(0)
    words = [f"s{i}" for i in range(8)]
    table = {
        (w,): [((f"{c}{i}",), rng.uniform(0.1, 0.9, 4)) for c in "xyz"] for i, w in enumerate(words)
    }
    for _ in range(6):
        a, b = rng.choice(8, 2, replace=False)
        table[(f"s{a}", f"s{b}")] = [
            ((f"x{b}", f"x{a}"), rng.uniform(0.1, 0.9, 4)),
            ((f"y{a}",), rng.uniform(0.1, 0.9, 4)),
        ]
    src = [list(rng.choice(words, size=6)) for _ in range(30)]
    refs = [[[w.replace("s", rng.choice(list("xxxyz"))) for w in s]] for s in src]
    path = tmp_path_factory.mktemp("tune") / "lm.arpa"
    train_arpa([r[0] for r in refs] * 2, path, 3)
    lm = NgramLM(path).model
    w0 = np.array([0.2, 0.2, 0.2, 0.2, 0.0, 0.0, 0.1, 0.0, 1.0])
    return table, lm, src, refs, w0


def fresh_tune(dev_task, workers=1, seed=0):
    """MERT from the starting weights with a new decoder (no option cache, no earlier pool);
    the result and its history without the timings."""
    table, lm, src, refs, w0 = dev_task
    cfg = DecoderConfig(stack_size=20, distortion_limit=2, workers=workers)
    dec = Decoder(table, lm, weights=w0, config=cfg)
    res = tune(dec, src, refs, nbest=20, max_iterations=3, seed=seed, restarts=2)
    history = [{k: v for k, v in r.items() if not k.endswith("_s")} for r in res.history]
    return res, history


def test_mert_from_scratch_twice_with_one_seed_gives_the_same_weights(dev_task):
    first, first_history = fresh_tune(dev_task)
    second, second_history = fresh_tune(dev_task)
    assert first.weights.tolist() == second.weights.tolist()
    assert first_history == second_history  # every iteration's weights, pool and dev BLEU
    assert first.best_dev_bleu == second.best_dev_bleu > first_history[0]["dev_bleu"] + 20
    # (the weights of the best dev decoding are returned)
    best = max(first_history, key=lambda r: r["dev_bleu"])
    assert first.weights.tolist() == best["weights"] and first.best_dev_bleu == best["dev_bleu"]
    # the seed matters on this task, so equal results are not a matter of course
    other, _ = fresh_tune(dev_task, seed=1)
    assert other.weights.tolist() != first.weights.tolist()


def test_two_workers_give_the_same_nbest_lists_scores_and_features(dev_task):
    table, lm, src, refs, w0 = dev_task
    w = w0 + np.r_[0.1, -0.05, 0.0, 0.05, -0.3, -0.2, 0.2, 0.4, 0.0]
    lists = {}
    for workers in (1, 2):
        cfg = DecoderConfig(stack_size=20, distortion_limit=2, workers=workers)
        lists[workers] = Decoder(table, lm, weights=w, config=cfg).translate_corpus(src, 15)
    one, two = lists[1], lists[2]
    assert len(one) == len(two) == len(src)
    assert sum(len(x) for x in one) > 5 * len(src)  # whole lists, not just 1-best
    for a, b in zip(one, two):
        assert [t.words for t in a] == [t.words for t in b]
        assert [t.score for t in a] == [t.score for t in b]
        assert np.array_equal(np.array([t.features for t in a]), np.array([t.features for t in b]))


def test_mert_with_two_workers_gives_the_weights_of_one(dev_task):
    one, one_history = fresh_tune(dev_task, workers=1)
    two, two_history = fresh_tune(dev_task, workers=2)
    assert one.weights.tolist() == two.weights.tolist()
    assert one_history == two_history


def words(*ws):
    return list(ws)


class SearchErrors:
    """A stand-in decoder over fixed candidates (one feature pair per candidate), returned best
    first under the weights: at the starting weights ``w0`` the ``trap`` candidate is missed (a
    search error), so MERT tunes on a pool without it; at any other weights it ties with
    ``good`` and is returned first, so the second decoding is worse than the first."""

    feature_names = ["f", "g"]
    fixed = np.zeros(2, dtype=bool)

    def __init__(self, w0):
        self.w0 = np.asarray(w0, dtype=np.float64) / np.abs(w0).sum()
        self.weights = self.w0.copy()
        self.calls = []

    def set_weights(self, w):
        self.weights = np.asarray(w, dtype=np.float64)

    def translate_corpus(self, src, nbest):
        self.calls.append(self.weights.copy())
        out = []
        for (tag,) in src:
            cands = [
                Translation(words("the", "cat", "sat", "on", "a", tag), np.array([0.0, 1.0]), 0.0),
                Translation(words("the", "cat", "sat", "on", "the", tag), np.array([1.0, 0.0]), 0),
            ]
            if not np.allclose(self.weights, self.w0):
                cands.insert(0, Translation(words("dog", "dog", tag), np.array([1.0, 0.0]), 0.0))
            for c in cands:
                c.score = float(c.features @ self.weights)
            out.append(sorted(cands, key=lambda c: -c.score)[:nbest])  # stable: trap first
        return out


def test_mert_keeps_the_best_dev_weights_when_a_later_iteration_scores_worse():
    src = [[f"n{i}"] for i in range(4)]
    refs = [[words("the", "cat", "sat", "on", "the", f"n{i}")] for i in range(4)]
    dec = SearchErrors([0.0, 1.0])  # "... on a ..." wins at the start
    res = tune(dec, src, refs, nbest=5, max_iterations=2, seed=0)
    first, second = res.history
    # MERT moved the weights towards "... on the ...", but the decoder then found the trap
    assert first["pool_bleu"] == pytest.approx(100.0)
    assert second["weights"] != first["weights"] and not np.allclose(dec.calls[1], dec.w0)
    again = SearchErrors([0.0, 1.0])
    again.set_weights(second["weights"])
    assert [lst[0].words[0] for lst in again.translate_corpus(src, 1)] == ["dog"] * 4
    assert second["dev_bleu"] < first["dev_bleu"]
    expected = bleu_from_stats(
        sum(bleu_stats(words("the", "cat", "sat", "on", "a", s[0]), r) for s, r in zip(src, refs))
    )
    assert res.best_dev_bleu == pytest.approx(expected) == first["dev_bleu"]
    # the first (best-dev) weights are returned and left in the decoder, not the last ones
    assert res.weights.tolist() == first["weights"] == dec.w0.tolist()
    assert dec.weights.tolist() == dec.w0.tolist()


def random_pool(rng, sentences: int, sizes: tuple[int, int], features: int, decimals=None):
    """A :class:`CandidatePool` of ``sentences`` sentences with ``sizes[0]`` to ``sizes[1] - 1``
    candidates each: normal features (rounded to ``decimals``, for ties) and consistent BLEU
    statistics (matches at most the n-gram totals, which fall by one per order)."""
    feats = [rng.normal(size=(int(rng.integers(*sizes)), features)) for _ in range(sentences)]
    if decimals is not None:
        feats = [f.round(decimals) for f in feats]
    stats = []
    for f in feats:
        t = rng.integers(4, 12, size=(len(f), 1)) + np.array([[0, -1, -2, -3]])
        m = np.minimum(rng.integers(0, 8, size=(len(f), 4)), t)
        stats.append(np.hstack([m, t, rng.integers(4, 12, size=(len(f), 1))]))
    return CandidatePool(feats, stats)


def test_line_search_finds_the_best_step():
    rng = np.random.default_rng(3)
    pool = random_pool(rng, 25, (1, 9), 3)
    w, d = rng.normal(size=3), rng.normal(size=3)
    gamma, score = line_search(pool, w, d)
    assert pool.bleu(w + gamma * d) == pytest.approx(score)
    grid = max(pool.bleu(w + g * d) for g in np.linspace(-20, 20, 4001))
    assert score >= grid - 1e-9


def _lines(rng, sentences=40):
    """Candidate lines of ``sentences`` sentences (1 to 30 each) with many ties: duplicated
    lines, equal slopes, several lines through one point (the halves and small integers)."""
    a, b, starts = [], [], [0]
    for _ in range(sentences):
        k = int(rng.integers(1, 31))
        sa = rng.integers(-4, 5, size=k).astype(float) / 2  # (halves: many equal values)
        sb = rng.integers(-3, 4, size=k).astype(float)
        if k > 3:
            sa[1], sb[1] = sa[0], sb[0]  # a duplicated line
            sa[2:4], sb[2:4] = [0.0, -1.0], [1.0, 2.0]  # two lines crossing at gamma = 1
        a.extend(sa)
        b.extend(sb)
        starts.append(starts[-1] + k)
    a, b = np.array(a), np.array(b)
    a[-5:] += rng.normal(size=5)  # and some general-position lines
    starts = np.array(starts)
    seg = np.repeat(np.arange(sentences), np.diff(starts))
    return a, b, seg, starts


def test_the_compiled_envelopes_are_numpys_breakpoint_for_breakpoint():
    """The fast path (rnnlib.smt.envelope compiled) gives exactly the arrays of the numpy sweep,
    in its order, ties included; run as plain Python, the sweep walks the same envelopes."""
    from rnnlib.smt import envelope
    from rnnlib.smt.compiled import envelope_module
    from rnnlib.smt.tune import _envelopes, envelopes

    assert envelope_module() is not None  # (the README's set-up has a C compiler)
    rng = np.random.default_rng(5)
    for _ in range(20):
        a, b, seg, starts = _lines(rng)
        want = _envelopes(a, b, seg, starts)
        got = envelopes(a, b, seg, starts)
        assert len(want[1]) > 40
        for x, y in zip(want, got):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        n, s = len(a), len(starts) - 1
        out = [np.empty(s, dtype=np.int64)] + [np.zeros(n, dtype=t) for t in (float, int, int, int)]
        k = envelope.sweep(a, b, starts, *out)  # the plain module, sentence by sentence
        order = np.argsort(out[4][:k], kind="stable")
        assert np.array_equal(out[0], want[0])
        for x, y in zip(want[1:], out[1:4]):
            assert np.array_equal(x, y[:k][order])


def test_mert_with_the_compiled_envelopes_tunes_the_weights_of_numpys(monkeypatch):
    from rnnlib.smt import tune as tune_module
    from rnnlib.smt.compiled import envelope_module

    assert envelope_module() is not None  # (the README's set-up has a C compiler)
    pool = random_pool(np.random.default_rng(11), 60, (2, 20), 5, decimals=1)
    fast = mert(pool, np.full(5, 0.2), seed=3, restarts=2)
    monkeypatch.setattr(tune_module, "envelopes", tune_module._envelopes)
    slow = mert(pool, np.full(5, 0.2), seed=3, restarts=2)
    assert np.array_equal(fast[0], slow[0]) and fast[1] == slow[1]


def test_mert_with_a_fixed_weight_returns_unit_scaled_weights_and_keeps_the_fixed_one():
    """A long line search can leave the weights far from unit norm (the cpu build's tuned
    weights reached 10^2 to 10^16); with a fixed weight, MERT still returns the tuned ones scaled
    to unit L1 norm, the fixed one at its value (as Moses' MERT), so the decoder's beam threshold
    prunes the same for every system, and returns the pool's BLEU at those weights."""
    rng = np.random.default_rng(3)
    pool = random_pool(rng, sentences=30, sizes=(5, 12), features=4, decimals=1)
    fixed = np.array([False, False, False, True])
    w0 = np.array([0.2, -0.5, 0.3, 1.0])
    for seed in range(5):
        w, score = mert(pool, w0, seed=seed, restarts=3, fixed=fixed)
        assert np.abs(w[~fixed]).sum() == pytest.approx(1.0) and w[3] == 1.0
        assert pool.bleu(w) == pytest.approx(score)
    big = np.array([0.2, -0.5, 0.3, 1.0]) * [1e6, 1e6, 1e6, 1.0]
    assert unit_scale(big, ~fixed) == pytest.approx([0.2, -0.5, 0.3, 1.0])
    # where the fixed feature is the same for every candidate of a sentence, no ranking changes
    parts = [(pool.feats[a:b], pool.stats[a:b]) for a, b in pool.bounds]
    flat = CandidatePool(
        [np.hstack([f[:, :3], np.full((len(f), 1), float(k))]) for k, (f, _) in enumerate(parts)],
        [st for _, st in parts],
    )
    assert flat.bleu(unit_scale(big, ~fixed)) == pytest.approx(flat.bleu(big))


def test_every_decoding_of_the_mert_loop_uses_unit_scaled_weights():
    """The loop's starting weights and those MERT hands back have their tuned weights scaled to
    unit L1 norm, the fixed weight at its value."""
    rng = np.random.default_rng(0)
    n = 12
    cand = [rng.normal(size=(8, 3)).round(1) for _ in range(n)]
    refs = [[words("a", "b", "c", f"s{i}")] for i in range(n)]
    seen = []

    def decode(w):
        seen.append(np.array(w))
        out = []
        for i, f in enumerate(cand):
            order = np.argsort(-(f @ w), kind="stable")
            out.append(
                [
                    Translation(words("a", "b", "c", f"s{i}")[: 1 + (k % 4)] + [f"x{k}"], f[k], 0.0)
                    for k in order
                ]
            )
        return out

    fixed = np.array([False, False, True])
    start = np.array([4.0, -4.0, 1.0])
    mert_loop(decode, start, refs, feature_names=["f", "g", "u"], fixed=fixed, max_iterations=4)
    assert len(seen) >= 2
    for w in seen:
        assert np.abs(w[:2]).sum() == pytest.approx(1.0)
    assert all(w[2] == 1.0 for w in seen)  # the fixed weight as it was
