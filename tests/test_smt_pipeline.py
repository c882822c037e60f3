"""The whole baseline (rnnlib.smt.system) on a synthetic corpus, through the artifact cache."""

import json

import numpy as np
import pytest

from rnnlib.cache import ArtifactCache
from rnnlib.smt.decoder import DecoderConfig
from rnnlib.smt.features import unknown_word_table
from rnnlib.smt.system import (
    SMTConfig,
    SMTData,
    build_alignment,
    decoding_pairs,
    link_agreement,
    run,
)


def synthetic(n, rng):
    """A toy language pair: word-for-word lexicon, and "ADJ NOUN" becomes "NOUN ADJ"."""
    nouns, adjs, verbs = (
        [f"n{i}" for i in range(12)],
        [f"a{i}" for i in range(6)],
        [f"v{i}" for i in range(6)],
    )
    src, tgt = [], []
    for _ in range(n):
        s, t = [], []
        for _ in range(rng.integers(1, 3)):
            noun = str(rng.choice(nouns))
            if rng.random() < 0.5:
                adj = str(rng.choice(adjs))
                s += ["the", adj, noun]
                t += ["le", noun.upper(), adj.upper()]
            else:
                s += ["the", noun]
                t += ["le", noun.upper()]
            verb = str(rng.choice(verbs))
            s.append(verb)
            t.append(verb.upper())
        src.append(s)
        tgt.append(t)
    return src, tgt


def test_pipeline_end_to_end_and_cached(tmp_path):
    rng = np.random.default_rng(0)
    train = synthetic(400, rng)
    dev = synthetic(30, rng)
    test = synthetic(30, rng)
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
        tune_nbest=20,
        mert_iterations=3,
        mert_restarts=1,
        decoder=DecoderConfig(stack_size=20, workers=1),
        eflomal_rel_iterations=0.5,
    )
    cache = ArtifactCache(tmp_path / "cache")
    res = run(data, cfg, cache, detokenize=" ".join, log=lambda msg: None)
    bleu = res.bleu
    assert bleu["test"]["single"]["bleu"] > 60
    assert "nrefs:1" in bleu["test"]["single"]["signature"]
    assert set(res.weights) >= {"lm", "distortion", "word_penalty"}
    assert res.speed["test"]["sentences"] == 30
    assert len(res.evaluation.file("test.txt").read_text().splitlines()) == 30
    assert res.lm.extra["dev_perplexity"] < 20
    # a second run reads every stage from the cache
    cache.events.clear()
    again = run(data, cfg, cache, detokenize=" ".join, log=lambda msg: None)
    assert all(e["hit"] for e in cache.events) and len(cache.events) == 5
    assert json.loads(again.evaluation.file("bleu.json").read_text()) == bleu

    # an extra phrase-pair feature reuses alignment, table and LM, and is tuned
    pairs = decoding_pairs(
        res.phrase_table.file("phrase_table.npz"), dev[0] + test[0], cfg.decoder.max_phrase_len
    )
    assert (("the",), ("le",)) in pairs
    extra = unknown_word_table(pairs, shortlist={"le"})
    cache.events.clear()
    with_extra = run(data, cfg, cache, extra=[extra], detokenize=" ".join, log=lambda msg: None)
    assert [e["hit"] for e in cache.events] == [True, True, True, False, False]
    assert "unk_words" in with_extra.weights


def test_link_agreement_counts_common_links_and_identical_pairs(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("0-0 1-1\n0-0\n0-1 1-0 2-2\n", encoding="utf-8")
    b.write_text("0-0 1-1\n0-1\n0-1 1-0\n", encoding="utf-8")
    got = link_agreement(a, b)
    # 6 and 5 links, 4 in common: F1 = 8 / 11; only the first pair is aligned identically
    assert got == {
        "links_a": 6,
        "links_b": 5,
        "common": 4,
        "f1": 8 / 11,
        "identical_pairs": 1,
        "pairs": 3,
    }
    b.write_text("0-0 1-1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 3 lines"):
        link_agreement(a, b)


def test_a_second_alignment_run_is_its_own_artifact(tmp_path):
    rng = np.random.default_rng(1)
    train = synthetic(200, rng)
    data = SMTData(
        train_src=train[0],
        train_tgt=train[1],
        dev_src=train[0][:5],
        dev_tgt=train[1][:5],
        test_src=train[0][:5],
        dev_refs=[[" ".join(t) for t in train[1][:5]]],
        test_refs=[[" ".join(t) for t in train[1][:5]]],
    )
    cfg, cache = SMTConfig(eflomal_rel_iterations=0.5), ArtifactCache(tmp_path / "cache")
    first, second = build_alignment(data, cfg, cache), build_alignment(data, cfg, cache, run=2)
    assert first.key != second.key and build_alignment(data, cfg, cache).key == first.key
    agree = link_agreement(first.file("links.txt"), second.file("links.txt"))
    assert agree["pairs"] == 200 and 0.5 < agree["f1"] <= 1.0
