"""Paper A's CSLM (rnnlib.smt.cslm): the network, its training, and its use inside the decoder."""

import math
from collections import Counter

import numpy as np
import pytest
import torch

from rnnlib.corpus.vocab import Vocab
from rnnlib.smt import stack_search
from rnnlib.smt.cslm import CSLM, CSLMConfig, CSLMFeature, ngrams, perplexity, train_cslm
from rnnlib.smt.decoder import Decoder, DecoderConfig
from rnnlib.smt.lm import NgramLM, train_arpa
from rnnlib.specials import BOS, EOS
from test_smt_decoder import derivations, toy  # noqa: F401  (toy is a fixture)

TEXT = ["x y z", "x y z", "x y", "y z", "x z", "w y z", "z z x y", "w x y z"]


def tiny(order=4, seed=0):
    torch.manual_seed(seed)
    vocab = Vocab.build(Counter(w for s in TEXT for w in s.split()), 100)
    return CSLM(
        CSLMConfig(vocab=len(vocab), order=order, emb=6, hidden=(12, 8), init_scale=0.3)
    ), vocab


def test_ngrams_pad_with_bos_and_end_with_eos():
    model, vocab = tiny(order=3)
    g = ngrams([["x", "y"], ["rare"]], vocab, 3)
    x, y, unk = vocab["x"], vocab["y"], vocab["rare"]
    assert g.tolist() == [[BOS, BOS, x], [BOS, x, y], [x, y, EOS], [BOS, BOS, unk], [BOS, unk, EOS]]
    out = model(torch.from_numpy(g[:, :-1]))
    assert out.shape == (5, len(vocab))
    np.testing.assert_allclose(out.exp().sum(-1).detach().numpy(), 1.0, atol=1e-5)


def test_training_lowers_the_dev_perplexity():
    torch.set_num_threads(1)
    model, vocab = tiny()
    grams = ngrams([s.split() for s in TEXT] * 5, vocab, 4)
    before = perplexity(model, grams)
    res = train_cslm(
        model, grams, grams, updates=300, batch_size=16, lr=1e-2, eval_every=100, seed=0
    )
    assert res["best_dev_ppl"] == pytest.approx(
        perplexity(model, grams)
    )  # the best parameters are kept
    assert res["best_dev_ppl"] < before / 2


def test_cslm_scores_are_batched_and_cached():
    model, vocab = tiny()
    f = CSLMFeature(model, vocab)
    f.prefetch([(f.begin(), ("x", "y", "z")), (f.begin(), ("x", "w"))])
    assert f.forwards == 1 and f.queries == 4  # x|[s] (shared), y|[s] x, w|[s] x, z|[s] x y
    lp, state = f.extend(f.begin(), ("x", "y", "z"))
    assert f.forwards == 1  # everything was cached
    g = torch.tensor([[BOS, BOS, BOS], [BOS, BOS, vocab["x"]], [BOS, vocab["x"], vocab["y"]]])
    direct = (
        model(g).gather(1, torch.tensor([[vocab["x"]], [vocab["y"]], [vocab["z"]]])).sum().item()
    )
    assert lp == pytest.approx(direct, abs=1e-5)
    assert state == (vocab["x"], vocab["y"], vocab["z"])


def _decoder(table_and_lm, model, vocab, stack=1000):
    table, lm = table_and_lm
    cslm = CSLMFeature(model, vocab)
    dec = Decoder(
        table, lm, config=DecoderConfig(stack_size=stack, distortion_limit=3, workers=1), lms=[cslm]
    )
    dec.set_weights(np.r_[dec.weights[:-1], 0.6])
    return dec, cslm


@pytest.mark.parametrize("src", [["b", "a", "c"], ["a", "q", "b", "c"]])
def test_cslm_in_the_search_equals_rescoring_every_derivation(toy, src):  # noqa: F811 (fixture)
    # exhaustive search: the decoder's best translation and model score are those of rescoring
    # every derivation with the same weights, the CSLM's log p(e) computed on the whole sentence
    model, vocab = tiny(seed=1)
    dec, cslm = _decoder(toy, model, vocab)
    best = (-math.inf, None, None)
    for words, f in derivations(*toy, src, 3):
        full = np.r_[f, cslm.sentence_logprob(words)]
        s = float(dec.weights @ full)
        if s > best[0]:
            best = (s, words, full)
    out = dec.translate(src)[0]
    assert out.words == best[1]
    assert out.score == pytest.approx(best[0], abs=1e-6)
    np.testing.assert_allclose(out.features, best[2], atol=1e-6)
    assert (
        out.features[-1] == pytest.approx(cslm.sentence_logprob(out.words), abs=1e-6)
        and out.features[-1] < 0
    )


def test_recombination_never_merges_hypotheses_with_different_cslm_histories(
    toy,  # noqa: F811 (the fixture imported above)
    tmp_path,
    monkeypatch,
):
    # a bigram KenLM only remembers the last word; the 4-gram CSLM remembers three
    table, _ = toy
    train_arpa([s.split() for s in TEXT], tmp_path / "lm2.arpa", 2)
    lm = NgramLM(tmp_path / "lm2.arpa").model
    model, vocab = tiny(seed=2)
    dec, _ = _decoder((table, lm), model, vocab, stack=100)
    dec.use_search(stack_search)  # the plain search, whose method this test wraps
    seen = {}
    merged_kenlm_only = 0
    original = stack_search.Search.add

    def history(prev, o):
        words = [w for h in reversed(stack_search.chain(prev)) for w in h.opt.words] + list(o.words)
        return tuple(([BOS] * 3 + [vocab[w] for w in words])[-3:])

    def add(self, prev, o, cov, t, end, state, *rest):
        nonlocal merged_kenlm_only
        hist = history(prev, o)
        old = self.stacks[t].get((cov, end, state))
        if old is not None:  # a recombination: the CSLM must see the same history
            assert history(old.prev, old.opt) == hist
        key = (cov, end, state[0])  # what a KenLM-only key would merge
        if key in seen and seen[key] != hist:
            merged_kenlm_only += 1
        seen[key] = hist
        return original(self, prev, o, cov, t, end, state, *rest)

    monkeypatch.setattr(stack_search.Search, "add", add)
    for src in (["b", "a", "c"], ["a", "b", "c", "a"], ["c", "a", "b"]):
        dec.translate(src, nbest=5)
    assert merged_kenlm_only > 0  # cases where the n-gram state alone would have merged them


def test_a_partly_cached_sentence_scores_as_a_fresh_one():
    # "x z" after the other sentences: its first n-gram is cached, its second is not
    model, vocab = tiny()
    fresh = CSLMFeature(model, vocab).sentence_logprob(["x", "z"])
    f = CSLMFeature(model, vocab)
    for s in TEXT[:4]:
        f.sentence_logprob(s.split())
    assert f.sentence_logprob(["x", "z"]) == pytest.approx(fresh, abs=1e-6)
