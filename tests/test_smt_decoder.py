"""The stack decoder (rnnlib.smt.decoder), MERT (rnnlib.smt.tune) and extra features."""

import itertools
import math

import numpy as np
import pytest

from rnnlib.smt.decoder import Decoder, DecoderConfig, LanguageModelFeature
from rnnlib.smt.stack_search import Hyp as _Hyp
from rnnlib.smt.stack_search import Search as _Search
from rnnlib.smt.features import (
    BASE_FEATURES,
    EXTRA,
    TM_FEATURES,
    UNKNOWN_WORD_PENALTY,
    Feature,
    FeatureTable,
    unknown_word_table,
)
from rnnlib.smt.lm import NgramLM, train_arpa
from rnnlib.smt.tune import bleu_from_stats, bleu_stats, tune

P = lambda *xs: np.array(xs, dtype=float)  # noqa: E731  phrase scores p(t|s), p(s|t), lex, lex


@pytest.fixture()
def toy(tmp_path):
    """French-like target order "x y z" for English-like "b a c" (a->y, b->x, c->z)."""
    lm_corpus = [s.split() for s in ["x y z", "x y z", "x y", "y z", "x z", "w y z"]] * 3
    train_arpa(lm_corpus, tmp_path / "lm.arpa", 3)
    lm = NgramLM(tmp_path / "lm.arpa").model
    table = {
        ("a",): [(("y",), P(0.6, 0.7, 0.6, 0.7)), (("w",), P(0.4, 0.5, 0.4, 0.5))],
        ("b",): [(("x",), P(0.9, 0.8, 0.9, 0.8))],
        ("c",): [(("z",), P(0.9, 0.9, 0.9, 0.9)), (("z", "z"), P(0.1, 0.1, 0.1, 0.1))],
        ("b", "a"): [(("x", "y"), P(0.5, 0.5, 0.5, 0.5))],
    }
    return table, lm


# -- Moses' distortion limit, transcribed from its source ---------------------------------------
#
# Read in github.com/moses-smt/mosesdecoder at commit 34452895 (master, 2025).
#
# moses/InputType.cpp, InputType::ComputeDistortionDistance(prev, current): the distance of a jump
# from range ``prev`` to range ``current`` (inclusive word ranges) is ``current.start`` when
# ``prev`` covers no word (the empty hypothesis), else ``|prev.end - current.start + 1|``.
# DistortionScoreProducer::CalculateDistortionScore (moses/FF/DistortionScoreProducer.cpp) scores
# minus that distance (without the early distortion cost, Moses' default).
#
# moses/SearchNormal.cpp, SearchNormal::ProcessOneHypothesis (with a distortion limit): start
# positions run from the hypothesis' first gap (``Bitmap::GetFirstGapPos``) to the end; a covered
# start is skipped; a start whose jump ``ComputeDistortionDistance(prevRange, [start, start])``
# exceeds the limit is skipped; a range overlapping the coverage is skipped; a range starting at
# the first gap may have any length ("isLeftMostEdge"); any other range is kept only if
# ``ComputeDistortionDistance(range, [firstGap, firstGap])`` (the jump from its end back to the
# first gap) is within the limit. SearchCubePruning::CheckDistortion applies the same test.


def moses_distortion_distance(prev, start):
    """``InputType::ComputeDistortionDistance(prev, [start, start])``; ``prev`` is an inclusive
    ``(start, end)`` range, or ``None`` for the empty hypothesis' range."""
    if prev is None:
        return start
    return abs(prev[1] - start + 1)


def moses_allows(covered, prev, start, end, n, dl):
    """``SearchNormal::ProcessOneHypothesis``: may a hypothesis covering the positions ``covered``
    whose last range is ``prev`` be extended by the inclusive range ``start .. end`` of an
    ``n``-word sentence, with distortion limit ``dl``?"""
    first_gap = min(set(range(n)) - set(covered))
    if start < first_gap or start in covered:
        return False
    if moses_distortion_distance(prev, start) > dl:
        return False
    if any(p in covered for p in range(start, end + 1)):
        return False
    if start == first_gap:  # isLeftMostEdge: any length
        return True
    return moses_distortion_distance((start, end), first_gap) <= dl


def derivations(table, lm, src, dl, extra=()):
    """``(words, features)`` of every segmentation, order and option (distortion limit ``dl``)."""
    n = len(src)
    spans = [
        (i, j)
        for i in range(n)
        for j in range(i + 1, n + 1)
        if tuple(src[i:j]) in table or j == i + 1
    ]
    for k in range(1, n + 1):
        for combo in itertools.permutations(spans, k):
            covered = sorted(p for i, j in combo for p in range(i, j))
            if covered != list(range(n)):
                continue
            done, prev, dist, ok = set(), None, 0, True
            for i, j in combo:  # Moses' ranges are inclusive: words i .. j - 1
                if not moses_allows(done, prev, i, j - 1, n, dl):
                    ok = False
                    break
                dist += moses_distortion_distance(prev, i)
                done.update(range(i, j))
                prev = (i, j - 1)
            if not ok:
                continue
            choices = [table.get(tuple(src[i:j]), [((src[i],), None)]) for i, j in combo]
            for pick in itertools.product(*choices):
                words = [w for t, _ in pick for w in t]
                f = np.zeros(EXTRA + sum(len(x.names) for x in extra))
                for (i, j), (t, sc) in zip(combo, pick):
                    if sc is not None:
                        f[list(TM_FEATURES)] += np.log(sc)
                    else:
                        f[Feature.UNKNOWN_WORD] += UNKNOWN_WORD_PENALTY  # a copied unknown word
                    f[Feature.PHRASE_PENALTY] += 1
                    f[Feature.WORD_PENALTY] -= len(t)
                    f[EXTRA:] += [v for x in extra for v in x.lookup(src[i:j], t)]
                f[Feature.DISTORTION] = -dist
                f[Feature.LM] = lm.score(" ".join(words), bos=True, eos=True) * math.log(10)
                yield words, f


def brute_force(table, lm, src, weights, dl):
    """Best model score over every segmentation, order and option, and its words."""
    best = (-math.inf, None)
    for words, f in derivations(table, lm, src, dl):
        s = float(weights @ f)
        if s > best[0]:
            best = (s, words)
    return best


def brute_force_nbest(table, lm, src, weights, dl, extra=()):
    """Every distinct output string with its best derivation's score and features, best first."""
    best = {}
    for words, f in derivations(table, lm, src, dl, extra):
        s = float(weights @ f)
        if tuple(words) not in best or s > best[tuple(words)][0]:
            best[tuple(words)] = (s, f)
    return sorted(((list(w), s, f) for w, (s, f) in best.items()), key=lambda x: -x[1])


class FlatLM(LanguageModelFeature):
    """A language model that scores every word 0 (so every expansion reaches the stacks)."""

    def begin(self):
        return ()

    def null(self):
        return ()

    def extend(self, state, words):
        return 0.0, ()

    def end(self, state):
        return 0.0


def decoder_expansions(n, dl, covered, prev):
    """``{(start, end): jump}`` (inclusive ranges) of the spans the decoder's search extends a
    hypothesis of an ``n``-word sentence by, when it covers ``covered`` and its last range was
    ``prev`` (``None``: the empty hypothesis); every span has a translation option."""
    src = [f"s{k}" for k in range(n)]
    table = {
        tuple(src[i:j]): [(("t",), P(0.5, 0.5, 0.5, 0.5))]
        for i in range(n)
        for j in range(i + 1, n + 1)
    }
    cfg = DecoderConfig(distortion_limit=dl, max_phrase_len=n, stack_size=10**6, workers=1)
    search = _Search(Decoder(table, FlatLM(), config=cfg), src, keep_arcs=False)
    got = {}

    def record(h, o, cov, t, end, state, score, total, lp, dist):
        span = cov & ~h.cov
        got[((span & -span).bit_length() - 1, end - 1)] = dist

    search.add = record
    root = search.stacks[0][None]
    cov = sum(1 << p for p in covered)
    end = 0 if prev is None else prev[1] + 1
    search.expand(_Hyp(0.0, 0.0, cov, end, root.state, None, None, root.lm, 0, 0))
    return got


# Worked out by hand from SearchNormal::ProcessOneHypothesis (see moses_allows): sentence length,
# distortion limit, covered positions, last range (inclusive; None: nothing translated yet), and
# every allowed extension (inclusive range) with its jump (ComputeDistortionDistance).
MOSES_EXPANSIONS = [
    # empty hypothesis: the jump to start s is s, so s <= 2; start 0 is the first gap (any
    # length); start 1 must end where the way back to the gap, |end + 1 - 0|, is <= 2: end 1;
    # start 2 could only end at 2, and |2 + 1 - 0| = 3 > 2
    (5, 2, set(), None, {(0, 0): 0, (0, 1): 0, (0, 2): 0, (0, 3): 0, (0, 4): 0, (1, 1): 1}),
    # 0-1 done, gap 2: starts 2, 3, 4 are within the jump limit |1 + 1 - s| <= 2; 2 is the gap
    # (any length), 3 must end at 3 (|3 + 1 - 2| = 2), 4 cannot end early enough
    (6, 2, {0, 1}, (0, 1), {(2, 2): 0, (2, 3): 0, (2, 4): 0, (2, 5): 0, (3, 3): 1}),
    # 1-2 done first, gap 0: the jump back to 0 is |2 + 1 - 0| = 3, allowed; 0-1 overlaps; to the
    # right every range ends at >= 3, and |3 + 1 - 0| = 4 > 3: a dead end but for word 0
    (6, 3, {1, 2}, (1, 2), {(0, 0): 3}),
    # 1 done, gap 0, limit 4: back to 0 (jump 2); on the right, ranges ending at <= 3
    # (|3 + 1 - 0| = 4), i.e. 2-2, 2-3 and 3-3
    (7, 4, {1}, (1, 1), {(0, 0): 2, (2, 2): 0, (2, 3): 0, (3, 3): 1}),
    # 0-4 done, the last range was 2-2 (after 0-1 and 3-4), gap 5, limit 3: starts within
    # |2 + 1 - s| <= 3 are 5 and 6; 5 is the gap (any length), 6 must end by 7 (|7 + 1 - 5| = 3);
    # 7-7 would come back to the gap in 3 but the jump to it is |2 + 1 - 7| = 4
    (
        9,
        3,
        {0, 1, 2, 3, 4},
        (2, 2),
        {(5, 5): 2, (5, 6): 2, (5, 7): 2, (5, 8): 2, (6, 6): 3, (6, 7): 3},
    ),
    # monotone (limit 0): only ranges starting at the gap
    (4, 0, {0}, (0, 0), {(1, 1): 0, (1, 2): 0, (1, 3): 0}),
]


@pytest.mark.parametrize("n, dl, covered, prev, expected", MOSES_EXPANSIONS)
def test_distortion_limit_allows_what_moses_allows(n, dl, covered, prev, expected):
    """The expansions of a hypothesis under the distortion limit are those of Moses, read in
    mosesdecoder (commit 34452895): ``SearchNormal::ProcessOneHypothesis`` in
    moses/SearchNormal.cpp (the jump to a start and, for a range not at the first gap, the jump
    from its end back to the first gap, both by ``InputType::ComputeDistortionDistance`` in
    moses/InputType.cpp, may not exceed the limit) and the distance
    ``DistortionScoreProducer::CalculateDistortionScore`` scores. Expected values by hand."""
    # the transcription of Moses' rule (used by the brute force below) agrees with the hand table
    assert {
        (i, j): moses_distortion_distance(prev, i)
        for i in range(n)
        for j in range(i, n)
        if moses_allows(covered, prev, i, j, n, dl)
    } == expected
    assert decoder_expansions(n, dl, covered, prev) == expected


def test_decoder_finds_the_best_translation(toy):
    table, lm = toy
    dec = Decoder(table, lm, config=DecoderConfig(stack_size=1000, distortion_limit=3, workers=1))
    out = dec.translate(["b", "a", "c"])[0]
    assert out.words == ["x", "y", "z"]
    score, words = brute_force(table, lm, ["b", "a", "c"], dec.weights, 3)
    assert out.score == pytest.approx(score, abs=1e-6)
    assert out.words == words
    assert float(out.features @ dec.weights) == pytest.approx(out.score, abs=1e-6)


@pytest.mark.parametrize("src", [["a", "b", "c"], ["c", "a", "b"], ["a", "q", "b", "c"]])
def test_decoder_matches_brute_force_search(toy, src):
    table, lm = toy
    w = np.array([0.3, 0.1, 0.2, 0.1, -0.5, -0.3, 0.4, 0.8, 1.0])
    dec = Decoder(
        table, lm, weights=w, config=DecoderConfig(stack_size=1000, distortion_limit=2, workers=1)
    )
    out = dec.translate(src)[0]
    score, words = brute_force(table, lm, src, w, 2)
    assert out.score == pytest.approx(score, abs=1e-6)
    assert out.words == words
    assert out.words.count("q") == src.count("q")  # an unknown word is copied, once


def test_nbest_lists_are_distinct_sorted_and_scored(toy):
    table, lm = toy
    dec = Decoder(table, lm, config=DecoderConfig(stack_size=100, distortion_limit=3, workers=1))
    lst = dec.translate(["b", "a", "c"], nbest=10)
    assert len(lst) >= 3
    assert len({tuple(t.words) for t in lst}) == len(lst)
    scores = [t.score for t in lst]
    assert scores == sorted(scores, reverse=True)
    for t in lst:
        assert float(t.features @ dec.weights) == pytest.approx(t.score, abs=1e-6)


@pytest.mark.parametrize("src", [["b", "a", "c"], ["a", "q", "b", "c"]])
@pytest.mark.parametrize("with_extra", [False, True])
def test_nbest_lists_match_brute_force_search(toy, src, with_extra):
    # with a wide beam the n-best list is the exact list of the best distinct strings
    table, lm = toy
    extra = (
        [
            FeatureTable(
                ["likes_w", "two"],
                {(("a",), ("w",)): [1.5, -1.0], (("c",), ("z", "z")): [0.0, 2.0]},
                default=[0.0, 0.5],
            )
        ]
        if with_extra
        else []
    )
    dec = Decoder(
        table, lm, config=DecoderConfig(stack_size=100, distortion_limit=3, workers=1), extra=extra
    )
    if with_extra:
        dec.set_weights(np.r_[dec.weights[:EXTRA], 0.4, -0.3])
    lst = dec.translate(src, nbest=12)
    exact = brute_force_nbest(table, lm, src, dec.weights, 3, extra)[:12]
    assert len(lst) == len(exact) == 12
    for got, (words, score, feats) in zip(lst, exact):
        assert got.words == words
        assert got.score == pytest.approx(score, abs=1e-6)
        np.testing.assert_allclose(got.features, feats, atol=1e-6)


def test_nbest_golden(toy):
    # pinned: the ten best distinct translations of the toy sentence with Moses' start weights
    table, lm = toy
    dec = Decoder(table, lm, config=DecoderConfig(stack_size=100, distortion_limit=3, workers=1))
    got = [" ".join(t.words) for t in dec.translate(["b", "a", "c"], nbest=10)]
    assert got == [
        "x y z",
        "x y z z",
        "x w z",
        "x z y",
        "y x z",
        "w x z",
        "x z w",
        "z x y",
        "y z x",
        "x w z z",
    ]


def test_feature_vector_is_laid_out_by_name(toy):
    table, lm = toy
    pairs = [(s, t) for s, opts in table.items() for t, _ in opts]
    dec = Decoder(
        table,
        lm,
        config=DecoderConfig(workers=1),
        extra=[unknown_word_table(pairs, shortlist={"x", "y"})],
    )
    assert dec.feature_names == list(BASE_FEATURES) + ["unk_words"]
    assert [
        dec.feature_names[f]
        for f in (Feature.P_T_GIVEN_S, Feature.PHRASE_PENALTY, Feature.DISTORTION, Feature.LM)
    ] == ["log p(t|s)", "phrase_penalty", "distortion", "lm"]
    out = dec.translate(["b", "a", "c"])[0]
    assert out.words == ["x", "y", "z"]  # b -> x, a -> y, c -> z, in order
    f = dict(zip(dec.feature_names, out.features))
    assert f["log p(t|s)"] == pytest.approx(math.log(0.9 * 0.6 * 0.9))
    assert f["log p(s|t)"] == pytest.approx(math.log(0.8 * 0.7 * 0.9))
    assert (f["phrase_penalty"], f["word_penalty"], f["distortion"], f["unk_words"]) == (
        3,
        -3,
        0,
        1,
    )
    assert f["lm"] == pytest.approx(lm.score("x y z", bos=True, eos=True) * math.log(10))


def test_two_workers_give_the_same_output(toy):
    table, lm = toy
    sents = [["b", "a", "c"], ["a", "c"], ["c", "b", "a"], ["a"]] * 3
    one = Decoder(table, lm, config=DecoderConfig(workers=1)).translate_corpus(sents)
    two = Decoder(table, lm, config=DecoderConfig(workers=2)).translate_corpus(sents)
    assert [x[0].words for x in one] == [x[0].words for x in two]


def test_options_cached_across_sentences_and_weights_equal_a_fresh_decoders(toy):
    """The decoder keeps each source phrase's features across sentences and its best options until
    the weights change: after new weights it decodes as a decoder built with them does."""
    table, lm = toy
    sents = [["b", "a", "c"], ["a", "c"], ["c", "b", "a"], ["a", "q"]]
    cfg = DecoderConfig(
        workers=1, ttable_limit=1
    )  # only the best option per span: the ranking matters
    reused = Decoder(table, lm, config=cfg)
    reused.translate_corpus(sents, 3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        w = reused.weights + rng.normal(0, 0.5, len(reused.weights))
        reused.set_weights(w)
        fresh = Decoder(table, lm, weights=w, config=cfg)
        got = [
            [(t.words, t.features.tolist(), t.score) for t in lst]
            for lst in reused.translate_corpus(sents, 3)
        ]
        want = [
            [(t.words, t.features.tolist(), t.score) for t in lst]
            for lst in fresh.translate_corpus(sents, 3)
        ]
        assert got == want


def test_extra_feature_changes_the_choice_when_weighted(toy):
    table, lm = toy
    extra = FeatureTable(["likes_w"], {(("a",), ("w",)): [5.0]}, default=[0.0])
    dec = Decoder(table, lm, config=DecoderConfig(workers=1), extra=[extra])
    assert dec.feature_names[-1] == "likes_w"
    w = dec.weights.copy()
    w[-1] = 0.0
    dec.set_weights(w)
    assert dec.translate(["b", "a", "c"])[0].words == ["x", "y", "z"]
    w[-1] = 2.0
    dec.set_weights(w)
    out = dec.translate(["b", "a", "c"])[0]
    assert "w" in out.words
    assert out.features[-1] == 5.0


def test_options_are_pruned_by_the_full_weighted_score_not_by_p_t_given_s(toy):
    """The table is not pruned before the extra score can act (A Sec. 4.1, as Moses prunes at
    decoding time): the target a new feature favours is kept even when p(t|s) ranks it below the
    ttable_limit best."""
    table, lm = toy
    ranked = [("y",), ("w",), ("x",), ("z",)]  # by p(t|s), best first: z is fourth
    table = {("a",): [(t, P(p, 0.5, 0.5, 0.5)) for t, p in zip(ranked, (0.5, 0.3, 0.15, 0.05))]}
    extra = FeatureTable(["likes_z"], {(("a",), t): [3.0 if t == ("z",) else 0.0] for t in ranked})
    dec = Decoder(table, lm, config=DecoderConfig(workers=1, ttable_limit=2), extra=[extra])
    w = dec.weights.copy()
    w[-1] = 0.0
    dec.set_weights(w)
    assert dec.translate(["a"], nbest=5)[0].words == ["y"]
    assert {tuple(t.words) for t in dec.translate(["a"], nbest=5)} <= {("y",), ("w",), ("x",)}
    w[-1] = 2.0
    dec.set_weights(w)
    out = dec.translate(["a"])[0]
    assert out.words == ["z"] and out.features[-1] == 3.0
    # a table pruned when built (the top 2 by p(t|s)) could never have produced it
    pruned = {("a",): table[("a",)][:2]}
    dec = Decoder(
        pruned, lm, config=DecoderConfig(workers=1, ttable_limit=2), extra=[extra], weights=w
    )
    assert dec.translate(["a"])[0].words != ["z"]


def test_unknown_word_table_counts_words_outside_the_shortlist(tmp_path):
    t = unknown_word_table([(("a",), ("x", "rare")), (("b",), ("x",)), (("q",), ("q",))], {"x"})
    assert t.lookup(("a",), ("x", "rare")) == (1.0,)
    assert t.lookup(("b",), ("x",)) == (0.0,)
    assert t.lookup(("q",), ("q",)) == (1.0,)  # a copied unknown word is counted from its own pair
    t.save(tmp_path / "f.jsonl")
    back = FeatureTable.load(tmp_path / "f.jsonl")
    assert back.table == t.table and back.default is None
    with pytest.raises(KeyError, match="no value"):
        back.lookup(("c",), ("c",))  # no made-up value for a pair nobody counted


def test_a_feature_table_without_the_pair_fails_loudly_in_the_decoder(toy):
    table, lm = toy
    partial = FeatureTable(
        ["f"], {(("b",), ("x",)): [1.0], (("a",), ("y",)): [1.0], (("c",), ("z",)): [1.0]}
    )
    dec = Decoder(table, lm, config=DecoderConfig(workers=1), extra=[partial])
    with pytest.raises(KeyError, match="no value"):
        dec.translate(["b", "a", "c"])


def test_copied_unknown_word_gets_moses_penalty_and_a_phrase_is_preferred(toy):
    table, lm = toy
    dec = Decoder(table, lm, config=DecoderConfig(stack_size=100, distortion_limit=3, workers=1))
    out = dec.translate(["a", "q"])[0]
    assert out.words[-1] == "q" and out.features[Feature.UNKNOWN_WORD] == UNKNOWN_WORD_PENALTY
    assert (
        dec.feature_names[Feature.UNKNOWN_WORD] == "unknown_word"
        and dec.fixed[Feature.UNKNOWN_WORD]
    )
    # a rare phrase covering the unknown word beats the copy (which a 0.0 score would have
    # preferred)
    table = {**table, ("a", "q"): [(("y", "w"), P(0.01, 0.01, 0.01, 0.01))]}
    out = Decoder(
        table, lm, config=DecoderConfig(stack_size=100, distortion_limit=3, workers=1)
    ).translate(["a", "q"])[0]
    assert out.words == ["y", "w"] and out.features[Feature.UNKNOWN_WORD] == 0.0


def test_bleu_stats():
    s = bleu_stats("a b c d".split(), ["a b c d".split()])
    assert bleu_from_stats(s) == pytest.approx(100.0)
    s = bleu_stats("a b".split(), ["a b c d".split()])
    assert s[-1] == 4 and bleu_from_stats(s) == 0.0  # no 3-grams


def test_mert_raises_dev_bleu(tmp_path):
    # each source word s_i has a frequent wrong translation z_i (high TM scores) and the right
    # one x_i, which only the LM (trained on references) prefers. Start with LM weight 0.
    rng = np.random.default_rng(0)
    words = [f"s{i}" for i in range(6)]
    table = {
        (w,): [((f"z{i}",), P(0.7, 0.7, 0.7, 0.7)), ((f"x{i}",), P(0.3, 0.3, 0.3, 0.3))]
        for i, w in enumerate(words)
    }
    src = [list(rng.choice(words, size=5)) for _ in range(30)]
    refs = [[[w.replace("s", "x") for w in s]] for s in src]
    train_arpa([r[0] for r in refs] * 2, tmp_path / "lm.arpa", 3)
    lm = NgramLM(tmp_path / "lm.arpa").model
    w0 = np.array([0.2, 0.2, 0.2, 0.2, 0.0, 0.0, 0.1, 0.0, 1.0])
    dec = Decoder(
        table, lm, weights=w0, config=DecoderConfig(stack_size=40, distortion_limit=0, workers=1)
    )
    res = tune(dec, src, refs, nbest=40, max_iterations=4, seed=1, restarts=2)
    before = res.history[0]["dev_bleu"]
    after = sum(bleu_stats(dec.translate(s)[0].words, r) for s, r in zip(src, refs))
    assert before < 5.0
    assert bleu_from_stats(after) > before + 50
    assert res.converged and len(res.history) <= 4
    assert dec.weights[Feature.UNKNOWN_WORD] == 1.0  # Moses' unknown-word penalty is not tuned


def test_bleu_stats_by_hand_and_against_sacrebleu():
    import sacrebleu

    hyp = "the cat sat on the mat today".split()
    refs = ["the cat sat on a mat".split(), "a cat is on the mat".split()]
    # clipped matches 5/5/3/1 of 7/6/5/4 n-grams; closest reference length 6
    assert bleu_stats(hyp, refs).tolist() == [5, 5, 3, 1, 7, 6, 5, 4, 6]
    hyps = ["the cat sat on the mat today", "a dog ran in the park", "it is raining hard now"]
    r1 = ["the cat sat on a mat", "the dog ran in a park", "it is raining now"]
    r2 = ["a cat is on the mat", "a dog runs in the park", "it rains hard now"]
    ours = bleu_from_stats(
        sum(bleu_stats(h.split(), [a.split(), b.split()]) for h, a, b in zip(hyps, r1, r2))
    )
    theirs = sacrebleu.corpus_bleu(hyps, [r1, r2], tokenize="none", smooth_method="none").score
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_a_second_language_model_is_its_own_stateful_feature(toy, tmp_path):
    # a bigram LM on other text as a second LM: exact against brute force with both LM features
    from rnnlib.smt.decoder import KenLMFeature

    table, lm = toy
    train_arpa([s.split() for s in ["z y x", "y x", "x z z", "w z"]] * 2, tmp_path / "lm2.arpa", 2)
    lm2 = NgramLM(tmp_path / "lm2.arpa").model
    dec = Decoder(
        table,
        lm,
        config=DecoderConfig(stack_size=100, distortion_limit=3, workers=1),
        lms=[KenLMFeature(lm2, name="lm2")],
    )
    assert dec.feature_names == list(BASE_FEATURES) + ["lm2"] and dec.lm_index == [
        Feature.LM,
        EXTRA,
    ]
    dec.set_weights(np.r_[dec.weights[:EXTRA], 0.7])
    for src in (["b", "a", "c"], ["a", "q", "b", "c"]):
        best = {}
        for words, f in derivations(table, lm, src, 3):
            f = np.r_[f, lm2.score(" ".join(words), bos=True, eos=True) * math.log(10)]
            s = float(dec.weights @ f)
            if tuple(words) not in best or s > best[tuple(words)][0]:
                best[tuple(words)] = (s, f)
        exact = sorted(((list(w), s, f) for w, (s, f) in best.items()), key=lambda x: -x[1])[:8]
        got = dec.translate(src, nbest=8)
        assert [g.words for g in got] == [w for w, _, _ in exact]
        for g, (_, score, feats) in zip(got, exact):
            assert g.score == pytest.approx(score, abs=1e-6)
            np.testing.assert_allclose(g.features, feats, atol=1e-6)
    with pytest.raises(ValueError, match="distinct"):
        Decoder(table, lm, lms=[KenLMFeature(lm2, name="lm")])
