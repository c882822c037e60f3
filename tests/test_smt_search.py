"""The stack decoder's future-cost table and its stack pruning (rnnlib.smt.decoder), against hand
computations and an independent beam search that prunes by the same rule.

The exact tests of tests/test_smt_decoder.py use stacks so large that nothing is pruned; the book
decodes with a stack of 10. Here the language model is a small bigram table (``BigramLM``) whose
scores can be added up by hand.
"""

import itertools
import math

import numpy as np
import pytest

from rnnlib.smt.decoder import Decoder, DecoderConfig, LanguageModelFeature
from rnnlib.smt.stack_search import Search as _Search
from rnnlib.smt.features import UNKNOWN_WORD_PENALTY, Feature
from test_smt_decoder import moses_allows, moses_distortion_distance

P = lambda *xs: np.array(xs, dtype=float)  # noqa: E731  phrase scores p(t|s), p(s|t), lex, lex


class BigramLM(LanguageModelFeature):
    """``ln p(w | previous word)``: ``bi[(prev, w)]``, else ``uni[w] - drop``; with no context (the
    phrase-alone estimate) the first word scores ``uni[w]``; ``ln p(</s> | w)`` is
    ``eos.get(w, 0)``. States: the previous word (``"<s>"`` at the start, ``None``: no context)."""

    def __init__(self, uni, bi=None, eos=None, drop=0.0):
        self.uni, self.bi, self.eos, self.drop = uni, bi or {}, eos or {}, drop

    def begin(self):
        return "<s>"

    def null(self):
        return None

    def extend(self, state, words):
        lp = 0.0
        for w in words:
            lp += self.uni[w] if state is None else self.bi.get((state, w), self.uni[w] - self.drop)
            state = w
        return lp, state

    def end(self, state):
        return self.eos.get(state, 0.0)


def weights(tm=(1.0, 0.0, 0.0, 0.0), phrase=0.0, word=0.0, dist=0.0, lm=1.0):
    """A weight vector laid out as ``Feature`` says (unknown-word weight 1, fixed)."""
    w = np.zeros(len(Feature))
    w[[Feature.P_T_GIVEN_S, Feature.P_S_GIVEN_T, Feature.LEX_T_GIVEN_S, Feature.LEX_S_GIVEN_T]] = tm
    w[Feature.PHRASE_PENALTY], w[Feature.WORD_PENALTY] = phrase, word
    w[Feature.DISTORTION], w[Feature.LM], w[Feature.UNKNOWN_WORD] = dist, lm, 1.0
    return w


# -- the future-cost table ---------------------------------------------------------------------


def test_future_cost_table_by_hand():
    """Koehn (2010, Sec. 6.3.2, Fig. 6.11): the future cost of a span is the best estimate of any
    segmentation of it into phrases with options; an option's estimate is its weighted phrase
    features plus the weighted LM score of its words alone. Values added up by hand."""
    table = {
        ("a",): [(("x",), P(0.3, 1, 1, 1)), (("y",), P(0.25, 1, 1, 1))],
        ("b",): [(("z",), P(0.8, 1, 1, 1))],
        ("c",): [(("u",), P(0.1, 1, 1, 1)), (("v",), P(0.4, 1, 1, 1))],
        ("a", "b"): [(("x", "z"), P(0.9, 1, 1, 1))],
        ("b", "c"): [(("w",), P(0.05, 1, 1, 1))],
    }
    uni = {"x": -2.0, "y": -0.5, "z": -1.0, "u": -2.0, "v": -1.5, "w": -3.0, "q": -4.0}
    lm = BigramLM(uni, bi={("x", "z"): -0.2}, drop=1.0)
    # per phrase -0.5, per word -0.25 (feature -1 per word, weight 0.25), LM weight 0.5
    w = weights(phrase=-0.5, word=0.25, dist=0.3, lm=0.5)
    dec = Decoder(table, lm, weights=w, config=DecoderConfig(workers=1))
    search = _Search(dec, ["a", "b", "c", "q"], keep_arcs=False)
    # each option's estimate: ln p(t|s) - 0.5 - 0.25 * words + 0.5 * LM of its words alone
    est = {
        "a>x": math.log(0.3) - 0.5 - 0.25 + 0.5 * -2.0,  # -2.954
        "a>y": math.log(0.25) - 0.5 - 0.25 + 0.5 * -0.5,  # -2.386: best for "a", not by p(t|s)
        "b>z": math.log(0.8) - 0.5 - 0.25 + 0.5 * -1.0,  # -1.473
        "c>u": math.log(0.1) - 0.5 - 0.25 + 0.5 * -2.0,  # -4.053
        "c>v": math.log(0.4) - 0.5 - 0.25 + 0.5 * -1.5,  # -2.416
        "ab>xz": math.log(0.9) - 0.5 - 0.5 + 0.5 * (-2.0 - 0.2),  # -2.205 (bigram x z inside)
        "bc>w": math.log(0.05) - 0.5 - 0.25 + 0.5 * -3.0,  # -5.246
        "q>q": UNKNOWN_WORD_PENALTY - 0.5 - 0.25 + 0.5 * -4.0,  # the copy: -102.75
    }
    a, b, c, q = est["a>y"], est["b>z"], est["c>v"], est["q>q"]
    ab, bc = est["ab>xz"], est["bc>w"]
    expected = {  # every segmentation of every span, written out
        (0, 1): a,
        (1, 2): b,
        (2, 3): c,
        (3, 4): q,
        (0, 2): max(ab, a + b),  # = ab: the phrase beats the words
        (1, 3): max(bc, b + c),  # = b + c: the words beat the phrase
        (2, 4): c + q,
        (0, 3): max(a + b + c, ab + c, a + bc),  # = ab + c
        (1, 4): max(b + c + q, bc + q),
        (0, 4): max(a + b + c + q, ab + c + q, a + bc + q),
    }
    got = {(i, j): search.fc[i][j] for i in range(4) for j in range(i + 1, 5)}
    assert got == pytest.approx(expected, abs=1e-12)
    assert got[(0, 1)] == pytest.approx(-2.3863, abs=1e-4)
    assert got[(0, 2)] == pytest.approx(ab) and got[(1, 3)] == pytest.approx(b + c)
    assert got[(0, 3)] == pytest.approx(-4.6217, abs=1e-4)  # "a b" then "c"
    # the future cost of a coverage: the sum over its maximal uncovered spans
    assert search.future(0b0010) == pytest.approx(expected[(0, 1)] + expected[(2, 4)])
    assert search.future(0b0101) == pytest.approx(b + q)
    assert search.future(0b1000) == pytest.approx(expected[(0, 3)])
    assert search.future(0b1111) == 0.0


# -- stack pruning -----------------------------------------------------------------------------


def test_a_stack_of_one_loses_the_translation_a_larger_stack_finds():
    """A garden path (monotone, 2 words): "a" -> x looks better alone, but only "y z" reads well.

    By hand (weights: 1 on ln p(t|s), 1 on the LM, 0 elsewhere):
    stack 1 holds a->x: ln 0.3 - 1 = -2.204 (+ future -1 of "b" = -3.204) and a->y: ln 0.2 - 1 =
    -2.609 (total -3.609). A stack of one keeps only x, so the output is "x z":
    -2.204 + ln 1 - 5 = -7.204; with a stack of two, "y z": -2.609 - 1 = -3.609 wins.
    """
    table = {
        ("a",): [(("x",), P(0.3, 1, 1, 1)), (("y",), P(0.2, 1, 1, 1))],
        ("b",): [(("z",), P(1, 1, 1, 1))],
    }
    lm = BigramLM({"x": -1.0, "y": -1.0, "z": -1.0}, bi={("x", "z"): -5.0, ("y", "z"): -1.0})
    w = weights()

    def best(stack):
        cfg = DecoderConfig(stack_size=stack, distortion_limit=0, workers=1)
        return Decoder(table, lm, weights=w, config=cfg).translate(["a", "b"])[0]

    small, large = best(1), best(2)
    assert small.words == ["x", "z"] and small.score == pytest.approx(math.log(0.3) - 1 - 5)
    assert large.words == ["y", "z"] and large.score == pytest.approx(math.log(0.2) - 1 - 1)


def segmentation_future(spans_est, i, j):
    """Best estimate of the words ``i .. j-1`` over every segmentation (enumerated, no DP)."""
    best = -math.inf
    for cuts in itertools.product([False, True], repeat=j - i - 1):
        bounds = [i] + [i + 1 + k for k, c in enumerate(cuts) if c] + [j]
        parts = list(zip(bounds, bounds[1:]))
        if all(p in spans_est for p in parts):
            best = max(best, sum(spans_est[p] for p in parts))
    return best


def reference_beam(table, lm, w, src, dl, stack_size, beam_threshold):
    """The best translation found by a plain stack decoder (Koehn 2010, Fig. 6.6) with histogram
    and threshold pruning, written without the decoder's shortcuts (no early discarding, no
    admission thresholds, no pruning mid-stack): hypotheses covering ``m`` words gather in stack
    ``m``; hypotheses with equal coverage, last position and LM state are recombined (the best
    kept); before stack ``m`` is expanded it keeps its ``stack_size`` best by score + future cost,
    and only those within ``ln beam_threshold`` of its best; extensions follow Moses' distortion
    rule (``moses_allows``). Returns ``(score, words)`` of the best and, per stack ``m < n``, the
    survivors of its pruning as ``{(coverage bitmask, end, LM state): score}``."""
    n = len(src)
    opts = {}
    for i in range(n):
        for j in range(i + 1, n + 1):
            for tgt, sc in table.get(tuple(src[i:j]), []):
                feats = np.zeros(len(w))
                feats[[0, 1, 2, 3]] = np.log(sc)
                feats[Feature.PHRASE_PENALTY], feats[Feature.WORD_PENALTY] = 1, -len(tgt)
                alone = lm.extend(None, tgt)[0]
                est = float(w @ feats) + w[Feature.LM] * alone
                opts.setdefault((i, j), []).append((tgt, float(w @ feats), est))
    spans_est = {span: max(o[2] for o in lst) for span, lst in opts.items()}

    def future(covered):
        total, i = 0.0, 0
        while i < n:
            if i in covered:
                i += 1
                continue
            j = i
            while j < n and j not in covered:
                j += 1
            total += segmentation_future(spans_est, i, j)
            i = j
        return total

    # a hypothesis: (score, covered frozenset, last range (inclusive) or None, LM state, words)
    stacks = [dict() for _ in range(n + 1)]
    stacks[0][None] = (0.0, frozenset(), None, lm.begin(), ())
    survivors = []
    for m in range(n):
        hyps = sorted(stacks[m].values(), key=lambda h: -(h[0] + future(h[1])))
        if hyps:
            cut = hyps[0][0] + future(hyps[0][1]) + math.log(beam_threshold)
            hyps = [h for h in hyps[:stack_size] if h[0] + future(h[1]) >= cut]
        survivors.append(
            {
                (sum(1 << p for p in h[1]), 0 if h[2] is None else h[2][1] + 1, h[3]): h[0]
                for h in hyps
            }
        )
        for score, cov, prev, state, words in hyps:
            for (i, j), lst in opts.items():
                if not moses_allows(cov, prev, i, j - 1, n, dl):
                    continue
                jump = moses_distortion_distance(prev, i)
                new_cov = cov | set(range(i, j))
                for tgt, static, _ in lst:
                    lp, new_state = lm.extend(state, tgt)
                    if len(new_cov) == n:
                        lp += lm.end(new_state)
                    s = score + static - w[Feature.DISTORTION] * jump + w[Feature.LM] * lp
                    key = (new_cov, j, new_state)
                    old = stacks[len(new_cov)].get(key)
                    if old is None or s > old[0]:
                        stacks[len(new_cov)][key] = (s, new_cov, (i, j - 1), new_state, words + tgt)
    return max((h[0], list(h[4])) for h in stacks[n].values()), survivors


def random_system(rng, n):
    """A random ``n``-word sentence of distinct words, a phrase table (every word, some 2- and
    3-word phrases, 1-3 options each), a bigram LM whose in-context scores never beat the
    phrase-alone ones (so the decoder's early discarding on the estimate drops nothing that the
    plain rule would keep) and weights."""
    src = [f"s{k}" for k in range(n)]
    tgt_vocab = [f"t{k}" for k in range(6)]
    table = {}
    spans = [(i, i + 1) for i in range(n)]
    spans += [(i, i + L) for L in (2, 3) for i in range(n - L + 1) if rng.random() < 0.5]
    for i, j in spans:
        table[tuple(src[i:j])] = [
            (
                tuple(rng.choice(tgt_vocab, size=int(rng.integers(1, 3)))),
                rng.uniform(0.05, 1.0, size=4),
            )
            for _ in range(int(rng.integers(2, 5)))
        ]
    uni = {t: float(rng.uniform(-4, -0.5)) for t in tgt_vocab}
    bi = {(c, t): uni[t] - float(rng.uniform(0, 5)) for c in tgt_vocab + ["<s>"] for t in tgt_vocab}
    eos = {t: float(rng.uniform(-2, 0)) for t in tgt_vocab}
    lm = BigramLM(uni, bi, eos)
    w = weights(
        tm=tuple(rng.uniform(0.05, 1.0, size=4)),
        phrase=float(rng.uniform(-1, 1)),
        word=float(rng.uniform(-1, 1)),
        dist=float(rng.uniform(0.05, 0.5)),
        lm=float(rng.uniform(0.2, 1.0)),
    )
    return src, table, lm, w


@pytest.mark.parametrize("beam_threshold", [1e-300, 0.05])
def test_small_stacks_give_the_best_of_what_survives_the_pruning(beam_threshold):
    """With stacks of 1-3 (pruning on every sentence) the decoder's 1-best is the one of a plain
    beam search that prunes by the same rule, and pruning does lose the best translation in
    some sentences (the exact search: the same reference with stacks nothing fills)."""
    rng = np.random.default_rng(7)
    lost = {1: 0, 2: 0, 3: 0, 10: 0}  # sentences where a stack of this size lost the best
    for trial in range(30):
        n = int(rng.integers(5, 8))
        dl = int(rng.integers(1, 4))
        src, table, lm, w = random_system(rng, n)
        exact = reference_beam(table, lm, w, src, dl, 10**9, 1e-300)[0]
        for stack in (1, 2, 3, 10):
            cfg = DecoderConfig(
                stack_size=stack,
                distortion_limit=dl,
                beam_threshold=beam_threshold,
                ttable_limit=10,
                max_phrase_len=3,
                workers=1,
            )
            dec = Decoder(table, lm, weights=w, config=cfg)
            got = dec.translate(src)[0]
            (score, words), survivors = reference_beam(table, lm, w, src, dl, stack, beam_threshold)
            assert (got.words, got.score) == (words, pytest.approx(score, abs=1e-9)), (trial, stack)
            assert float(got.features @ w) == pytest.approx(got.score, abs=1e-9)
            assert got.score <= exact[0] + 1e-9
            lost[stack] += got.score < exact[0] - 1e-9
            # every stack kept the hypotheses the plain rule keeps
            search = _Search(dec, src, keep_arcs=False)
            search.run()
            for m in range(n):
                kept = {(h.cov, h.end, h.state[0]): h.score for h in search.stacks[m].values()}
                assert kept == pytest.approx(survivors[m], abs=1e-9), (trial, stack, m)
        cfg = DecoderConfig(
            stack_size=10**6, distortion_limit=dl, beam_threshold=1e-300, ttable_limit=10, workers=1
        )
        assert Decoder(table, lm, weights=w, config=cfg).translate(src)[0].score == pytest.approx(
            exact[0], abs=1e-9
        )
    assert lost[1] >= 5 and lost[2] + lost[3] >= 1  # the pruning did matter
