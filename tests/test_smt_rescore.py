"""N-best rescoring (rnnlib.smt.rescore) and the CSLM rows' artifacts
(rnnlib.experiments.cho2014.rescored)."""

import dataclasses
import functools
import json
from collections import Counter

import numpy as np
import pytest
import torch

from rnnlib.cache import ArtifactCache
from rnnlib.experiments.cho2014.rescored import RescoredSystem
from rnnlib.experiments.cho2014.cslm import cslm_run, load_cslm
from rnnlib.corpus.vocab import Vocab
from rnnlib.smt.cslm import CSLM, CSLMConfig, CSLMFeature
from rnnlib.smt.decoder import DecoderConfig, Translation
from rnnlib.smt.system import SMTConfig, SMTData, build_tuned, run, system_decoder
from rnnlib.smt.rescore import (
    LMScore,
    Rescorer,
    SentenceFeature,
    ShortlistWords,
    rerank,
    tune_rescored,
)
from rnnlib.smt.tune import mert_loop
from test_smt_pipeline import synthetic


class Marked(SentenceFeature):
    """1 for a candidate holding the word "good", else 0."""

    def __init__(self):
        super().__init__(["marked"])
        self.calls = 0

    def values(self, hyps):
        self.calls += 1
        return np.array([[float("good" in h)] for h in hyps])


def words(mark, i):
    return ["the", mark, "cat", "sat", "on", str(i)]


class HandBuilt:
    """A stand-in decoder with one feature whose n-best lists are given: the reference
    ``words("good", i)`` and a wrong ``words("bad", i)``; the decoder's feature prefers the wrong
    one in even sentences and the right one in odd ones, so no weight of its own picks the
    reference everywhere."""

    feature_names = ["d"]
    fixed = np.zeros(1, dtype=bool)

    def __init__(self, n):
        self.weights = np.array([1.0])
        self.lists = [
            [
                Translation(words("bad", i), np.array([float(i % 2 == 0)]), 0.0),
                Translation(words("good", i), np.array([float(i % 2 == 1)]), 0.0),
            ]
            for i in range(n)
        ]

    def set_weights(self, w):
        self.weights = np.asarray(w, dtype=np.float64)

    def translate_corpus(self, src, nbest):
        return [
            sorted(lst, key=lambda c: -float(c.features @ self.weights))[:nbest]
            for lst in self.lists
        ]


def test_the_rescoring_feature_flips_the_winner_after_tuning():
    n = 8
    dec = HandBuilt(n)
    refs = [[words("good", i)] for i in range(n)]
    src = [["s", str(i)] for i in range(n)]
    feature = Marked()
    res = tune_rescored(
        dec, src, refs, Rescorer([feature]), nbest=2, max_iterations=3, seed=1, start=0.0
    )
    assert (
        res.history[0]["dev_bleu"] < 80
    )  # rescoring weight 0: the decoder's winner is wrong in half the sentences
    assert res.best_dev_bleu == pytest.approx(100.0)
    assert res.feature_names == ["d", "marked"]
    # the reference wins an even sentence only if w_marked > w_d, an odd one if w_marked + w_d > 0
    assert res.weights[1] > abs(res.weights[0])
    best = rerank(Rescorer([feature]).extend(dec.translate_corpus(src, 2)), res.weights)
    assert [lst[0].words[1] for lst in best] == ["good"] * n
    assert (
        feature.calls == 1
    )  # each distinct candidate is scored once (remembered across iterations)
    # without the feature no weight of the decoder's own makes the reference win everywhere
    alone = tune_rescored(HandBuilt(n), src, refs, Rescorer([]), nbest=2, max_iterations=3, seed=1)
    assert alone.best_dev_bleu < 80


def test_feature_vectors_of_the_wrong_length_fail_with_a_clear_error():
    lists = [[Translation(["a"], np.array([1.0, 2.0]), 0.0)]]
    with pytest.raises(ValueError, match="2 feature values for 3 weights"):
        rerank(lists, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"has 2 feature values for 3 weights \['x', 'y', 'z'\]"):
        mert_loop(
            lambda w: lists, np.ones(3), [[["a"]]], feature_names=["x", "y", "z"], max_iterations=1
        )

    class Broken(SentenceFeature):
        def values(self, hyps):
            return np.zeros((len(hyps), 2))

    with pytest.raises(
        ValueError, match=r"sentence feature \['broken'\]: values of shape \(1, 2\)"
    ):
        Rescorer([Broken(["broken"])]).extend(lists)
    with pytest.raises(ValueError, match="start has 2 values"):
        tune_rescored(
            HandBuilt(2),
            [["s"]] * 2,
            [[words("good", 0)]] * 2,
            Rescorer([Marked()]),
            start=[0.1, 0.2],
        )


TEXT = ["x y z", "x y z", "x y", "y z", "x z", "w y z", "z z x y", "w x y z"]


def test_lm_score_is_the_search_sum_and_the_word_penalty_counts_words_outside_the_shortlist():
    torch.manual_seed(0)
    vocab = Vocab.build(Counter(w for s in TEXT for w in s.split()), 100)
    model = CSLM(CSLMConfig(vocab=len(vocab), order=3, emb=4, hidden=(8,), init_scale=0.3))
    hyps = [s.split() for s in TEXT] + [["x", "rare", "y"]]
    f = CSLMFeature(model, vocab)
    expected = [f.sentence_logprob(h) for h in hyps]
    chunked = LMScore(CSLMFeature(model, vocab), chunk=3).values(hyps)[:, 0]
    np.testing.assert_allclose(chunked, expected, rtol=1e-6)
    wp = ShortlistWords(vocab).values([["x", "rare", "y"], ["rare", "rarer"], ["x"]])
    assert wp[:, 0].tolist() == [1.0, 2.0, 0.0]


def test_cslm_artifact_is_trained_once_and_keyed_by_its_settings(tmp_path):
    torch.set_num_threads(1)
    sents = [s.split() for s in TEXT] * 20
    vocab = Vocab.build(Counter(w for s in sents for w in s), 100)
    cache = ArtifactCache(tmp_path / "cache")
    cfg = CSLMConfig(vocab=len(vocab), order=4, emb=6, hidden=(12, 8), init_scale=0.3)
    kw = dict(
        updates=150, batch_size=16, lr=1e-2, eval_every=50, dev_share=0.1, seed=0, data="tiny"
    )
    art = cslm_run(cache, cfg, sents, sents[:8], vocab, **kw)
    assert not art.from_cache and art.extra["best_dev_ppl"] < len(vocab) / 2  # it learned something
    assert art.extra["train_ngrams"] + art.extra["dev_ngrams"] == sum(len(s) + 1 for s in sents)
    model = load_cslm(art)
    assert model.config == cfg
    again = cslm_run(cache, cfg, sents, sents[:8], vocab, **kw)
    assert again.from_cache and again.key == art.key
    assert cslm_run(cache, cfg, sents, sents[:8], vocab, **{**kw, "updates": 100}).key != art.key


@pytest.fixture(scope="module")
def toy_system(tmp_path_factory):
    """A synthetic phrase-based system whose evaluation keeps 10-best lists."""
    rng = np.random.default_rng(0)
    train, dev, test = synthetic(300, rng), synthetic(20, rng), synthetic(20, rng)
    data = SMTData(
        train_src=train[0],
        train_tgt=train[1],
        dev_src=dev[0],
        dev_tgt=dev[1],
        test_src=test[0],
        dev_refs=[[" ".join(t) for t in dev[1]]],
        test_refs=[[" ".join(t) for t in test[1]]],
    )
    cfg = SMTConfig(
        lm_order=3,
        tune_nbest=10,
        mert_iterations=2,
        mert_restarts=1,
        eval_nbest=10,
        decoder=DecoderConfig(stack_size=10, workers=1),
        eflomal_rel_iterations=0.5,
    )
    cache = ArtifactCache(tmp_path_factory.mktemp("rescore") / "cache")
    base = run(data, cfg, cache, detokenize=" ".join, log=lambda msg: None)
    vocab = Vocab.build(
        Counter(w for s in train[1][:50] for w in s), 100
    )  # a small shortlist: some words outside
    return data, cfg, cache, base, vocab


def test_base_evaluation_keeps_the_nbest_lists_whose_first_candidates_are_the_output(toy_system):
    from rnnlib.smt.rescore import load_nbest

    data, cfg, cache, base, vocab = toy_system
    lists = load_nbest(base.evaluation.file("test.nbest.json.gz"))
    assert len(lists) == 20 and max(len(x) for x in lists) == 10
    assert [" ".join(x[0].words) for x in lists] == base.evaluation.file(
        "test.tok.txt"
    ).read_text().splitlines()
    w = np.array([base.weights[n] for n in base.weights])
    assert all(x[0].features @ w >= c.features @ w - 1e-9 for x in lists for c in x)


def test_rescored_rows_from_the_base_lists_decode_nothing_and_share_feature_values(toy_system):
    data, cfg, cache, base, vocab = toy_system
    wp = (ShortlistWords(vocab), {"shortlist": len(vocab)})
    marked = (Marked(), {"marked": 1})
    cache.events.clear()
    first = RescoredSystem(cache, data, cfg, [wp], detokenize=" ".join).run(
        base, seed=1, mode="lists"
    )
    assert set(first.weights) == set(base.weights) | {"wp"}
    assert len(first.evaluation.file("test.txt").read_text().splitlines()) == 20
    assert (
        first.bleu["dev"]["single"]["bleu"] >= base.bleu["dev"]["single"]["bleu"] - 1e-9
    )  # tuned on dev lists
    kinds = {e["kind"] for e in cache.events}
    assert "cho2014/nbest" not in kinds and "smt/eval" not in kinds  # no decoding
    cache.events.clear()
    both = RescoredSystem(cache, data, cfg, [wp, marked], detokenize=" ".join).run(
        base, seed=1, mode="lists"
    )
    assert set(both.weights) == set(base.weights) | {"wp", "marked"}
    rescoring = [e for e in cache.events if e["kind"] == "cho2014/rescoring"]
    # (tuning reads the dev values, the evaluation dev and test): only the new feature's dev
    # and test are computed
    assert len(rescoring) == 6 and sum(not e["hit"] for e in rescoring) == 2
    cache.events.clear()
    again = RescoredSystem(cache, data, cfg, [wp], detokenize=" ".join).run(
        base, seed=1, mode="lists"
    )
    assert all(e["hit"] for e in cache.events) and again.bleu == first.bleu
    with pytest.raises(ValueError, match="mode must be one of"):
        RescoredSystem(cache, data, cfg, [wp]).tune(base, seed=1, mode="inside")
    with pytest.raises(ValueError, match="needs iterations >= 2"):
        RescoredSystem(cache, data, cfg, [wp]).tune(base, seed=1, mode="lists", iterations=1)


def test_rescored_rows_with_decoding_share_their_first_decoding(toy_system):
    data, cfg, cache, base, vocab = toy_system
    system = RescoredSystem(
        cache, data, cfg, [(ShortlistWords(vocab), {"shortlist": len(vocab)})], detokenize=" ".join
    )
    cache.events.clear()
    first = system.run(base, seed=1, mode="search", iterations=2, nbest=5)
    assert first.bleu["test"]["single"]["bleu"] > 50
    history = json.loads(first.tuned.file("weights.json").read_text())["history"]
    assert 1 <= len(history) <= 2 and history[0]["pool"] > 0
    assert not [e for e in cache.events if e["kind"] == "cho2014/nbest"][0]["hit"]
    cache.events.clear()
    system.run(base, seed=2, mode="search", iterations=2, nbest=5)
    assert [e for e in cache.events if e["kind"] == "cho2014/nbest"][0][
        "hit"
    ]  # both start from the base weights


def without_timings(weights_json: dict) -> dict:
    """A ``weights.json`` without the seconds its history records."""
    history = [
        {k: v for k, v in r.items() if not k.endswith("_s")} for r in weights_json["history"]
    ]
    return {**weights_json, "history": history}


def noisy(sentences, rng):
    """References that no weights reproduce exactly: each word dropped (1 in 5) or swapped with
    its successor (1 in 5)."""
    out = []
    for s in sentences:
        s = [w for w in s if rng.random() > 0.2]
        for i in range(len(s) - 1):
            if rng.random() < 0.2:
                s[i], s[i + 1] = s[i + 1], s[i]
        out.append(s)
    return out


def test_mert_from_scratch_in_two_fresh_caches_gives_the_same_weights(toy_system, tmp_path):
    """The base system's MERT (``smt/tuned``) and the rescored rows' MERT
    (``cho2014/rescored_tuned``), each computed in two empty caches with one seed, give the same
    weights and iteration history. The dev references are noisy, so MERT has work to do and its
    seed matters (another seed gives other weights). The inputs are the toy system's phrase
    table, LM and n-best lists (eflomal takes no seed, so a rebuilt alignment could differ)."""
    data, cfg, cache, base, vocab = toy_system
    data = dataclasses.replace(data, dev_tgt=noisy(data.dev_tgt, np.random.default_rng(1)))
    cfg = dataclasses.replace(cfg, mert_iterations=3, mert_restarts=2)
    wp = (ShortlistWords(vocab), {"shortlist": len(vocab)})

    def from_scratch(name, config):
        fresh = ArtifactCache(tmp_path / name)
        # (a new decoder too: tuning leaves its weights at the tuned values)
        decoder = functools.cache(
            lambda: system_decoder(data, config, base.phrase_table, base.lm, ())
        )
        art = build_tuned(
            data, config, fresh, base.phrase_table, base.lm, (), decoder, log=lambda msg: None
        )
        resc = RescoredSystem(fresh, data, config, [wp], detokenize=" ".join).tune(
            base, seed=config.seed
        )
        assert not art.from_cache and not resc.from_cache
        return [
            without_timings(json.loads(a.file("weights.json").read_text())) for a in (art, resc)
        ]

    one, two = from_scratch("one", cfg), from_scratch("two", cfg)
    assert one == two
    # (another seed takes MERT elsewhere: in some iteration of each stage, other weights. On
    # some toy inputs one other seed lands on the same weights in a stage — its restarts and
    # random directions all lose to the first start's coordinate ascent — so several are tried:
    # eflomal is not seeded, so the toy system differs from run to run, and on one of them
    # eight seeds all left the base stage's path as it was.)
    moved = [False, False]
    for seed in range(1, 25):
        other = from_scratch(f"seed{seed}", dataclasses.replace(cfg, seed=seed))
        moved = [m or o["history"] != h["history"] for m, o, h in zip(moved, other, one)]
        if all(moved):
            break
    assert moved[0], "no other seed changes the base MERT's path: the seed is not tested"
    assert len(one[0]["history"]) >= 2 and one[0]["best_dev_bleu"] < 90
    if not moved[1]:  # (seen once in about 30 full runs, 2026-11-30: 24 seeds, one path)
        pytest.skip(
            "on this run's toy alignment no seed changed the rescored stage's MERT path, so its "
            "equality in two caches (checked above) does not show that the seed is kept"
        )
