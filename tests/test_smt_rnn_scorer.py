"""Paper A's RNN phrase scorer (rnnlib.smt.rnn_scorer): training pairs, batched scores, coverage."""

import numpy as np
import pytest
import torch

from rnnlib.corpus.vocab import Vocab
from rnnlib.presets import build_model, preset
from rnnlib.search import score
from rnnlib.batch import source_batch
from rnnlib.smt.decoder import Decoder, DecoderConfig
from rnnlib.smt.lm import NgramLM, train_arpa
from rnnlib.smt.phrases import build_phrase_table
from rnnlib.smt.rnn_scorer import (
    ScoredTable,
    decoder_pairs,
    encode_pairs,
    rnn_feature,
    score_pairs,
    table_pairs,
)
from rnnlib.train import train, train_preset

SRC = ["the house is small", "the house is big", "a small house", "the big house is old", "a house"]
TGT = [
    "la maison est petite",
    "la maison est grande",
    "une petite maison",
    "la grande maison est vieille",
    "une maison",
]


def diagonal(s, t):
    return [(i, min(i, len(t) - 1)) for i in range(len(s))]


@pytest.fixture(scope="module")
def table():
    src, tgt = [s.split() for s in SRC], [t.split() for t in TGT]
    return build_phrase_table(
        src, tgt, [diagonal(s, t) for s, t in zip(src, tgt)], max_len=3, k=None
    )


@pytest.fixture(scope="module")
def vocabs():
    from collections import Counter

    return (
        Vocab.build(Counter(w for s in SRC for w in s.split()), 100),
        Vocab.build(Counter(w for t in TGT for w in t.split()), 100),
    )


def tiny_model(vocabs, seed=0):
    torch.manual_seed(seed)
    cfg = preset("smoke-cho2014", src_vocab=len(vocabs[0]), tgt_vocab=len(vocabs[1]))
    return build_model(cfg)


def test_table_pairs_are_the_unique_rows_and_a_seeded_sample_of_them(table):
    pairs = table_pairs(table)
    assert len(pairs) == len(table) == len(set(pairs))
    a, b = table_pairs(table, sample=5, seed=3), table_pairs(table, sample=5, seed=3)
    assert a == b and len(a) == 5 and set(a) <= set(pairs)
    assert table_pairs(table, sample=5, seed=4) != a
    held = pairs[:4]
    assert not set(held) & set(table_pairs(table, exclude=held))
    with pytest.raises(ValueError, match="sample"):
        table_pairs(table, sample=0)


def test_batched_scores_equal_one_pair_at_a_time(table, vocabs):
    model = tiny_model(vocabs)
    pairs = encode_pairs(table_pairs(table), *vocabs)
    batched = score_pairs(model, pairs, batch_size=7)
    for k in range(len(pairs)):
        alone = score(model, source_batch([pairs.src[k]]), tgt=[pairs.tgt[k].tolist()])
        assert batched[k] == pytest.approx(float(alone[0]), abs=1e-5)
    assert (batched < 0).all()


def test_decoder_pairs_cover_every_option_and_the_copies_of_unknown_words(table):
    lookup = table.lookup()
    sentences = [["the", "house", "is", "purple"], ["zebra"]]
    pairs = decoder_pairs(lookup, sentences, 3)
    assert len(pairs) == len(set(pairs))
    assert (("purple",), ("purple",)) in pairs and (("zebra",), ("zebra",)) in pairs
    for t, _ in lookup[("the", "house")]:
        assert (("the", "house"), t) in pairs
    assert (("the",), ("the",)) not in pairs  # a known word is not copied


def test_no_decoder_option_has_a_score_the_model_did_not_compute(table, vocabs, tmp_path):
    model = tiny_model(vocabs)
    sentences = [["the", "house", "is", "purple"], ["a", "big", "house"]]
    lookup = table.lookup(
        sources={
            tuple(s[i:j])
            for s in sentences
            for i in range(len(s))
            for j in range(i + 1, min(len(s), i + 3) + 1)
        }
    )
    feature = rnn_feature(model, decoder_pairs(lookup, sentences, 3), *vocabs)
    train_arpa([t.split() for t in TGT], tmp_path / "lm.arpa", 3)
    dec = Decoder(
        lookup,
        NgramLM(tmp_path / "lm.arpa").model,
        config=DecoderConfig(max_phrase_len=3, workers=1),
        extra=[feature],
    )
    seen = []
    original = feature.lookup
    feature.lookup = lambda s, t: seen.append((tuple(s), tuple(t))) or original(s, t)
    for s in sentences:
        best = dec.translate(s)[0]
        assert np.isfinite(best.features).all()
    assert seen and all(p in feature.table for p in seen)
    # every value is the model's own log-probability of that pair
    for s, t in seen[:5]:
        direct = score_pairs(model, encode_pairs([(s, t)], *vocabs))[0]
        assert feature.table[(s, t)][0] == pytest.approx(direct, abs=1e-5)
    with pytest.raises(KeyError, match="not scored"):
        feature.lookup(("the",), ("nowhere",))
    # a decoder given a table the scorer did not cover fails loudly instead of inventing 0.0
    partial = ScoredTable(["rnn"], {p: v for p, v in list(feature.table.items())[:3]})
    dec2 = Decoder(
        lookup,
        NgramLM(tmp_path / "lm.arpa").model,
        config=DecoderConfig(max_phrase_len=3, workers=1),
        extra=[partial],
    )
    with pytest.raises(KeyError):
        dec2.translate(sentences[0])


def test_saved_table_loads_strict(table, vocabs, tmp_path):
    feature = rnn_feature(tiny_model(vocabs), table_pairs(table)[:4], *vocabs)
    feature.save(tmp_path / "rnn.jsonl")
    back = ScoredTable.load(tmp_path / "rnn.jsonl")
    assert back.table == feature.table and back.default is None


@pytest.mark.slow  # trains: about 7 s
def test_training_on_the_pairs_makes_them_likelier_than_mismatched_ones(table, vocabs, tmp_path):
    torch.set_num_threads(1)
    pairs = table_pairs(table)
    data = encode_pairs(pairs, *vocabs)
    model = tiny_model(vocabs, seed=1)
    before = score_pairs(model, data).mean()
    cfg = train_preset("paper-a", max_updates=600, checkpoint_every=None, seed=1)
    train(model, data, None, cfg, tmp_path / "run", progress=False)
    after = score_pairs(model, data)
    shuffled = [(pairs[k][0], pairs[(k + 7) % len(pairs)][1]) for k in range(len(pairs))]
    mismatched = score_pairs(model, encode_pairs(shuffled, *vocabs))
    assert after.mean() > before + 1.0
    assert after.mean() > mismatched.mean() + 1.0  # it reads the source, not only the target side


def test_the_table_frame_reads_the_decoders_scores_equal_to_scoring_again(table, vocabs):
    from rnnlib.experiments.cho2014.scorer import table_frame
    from rnnlib.smt.phrases import source_phrases

    model = tiny_model(vocabs).eval()
    sentences = [s.split() for s in SRC[:2]]
    phrases = source_phrases(sentences, 3)
    usable = decoder_pairs(table.lookup(sources=phrases), sentences, 3)
    scored = rnn_feature(model, usable, *vocabs, batch_size=3)
    again = table_frame(table, model, *vocabs, sources=phrases)
    read = table_frame(table, model, *vocabs, sources=phrases, scored=scored)
    pairs = table.lookup(sources=phrases)  # one row per pair of the table on those sources
    assert len(read) == len(again) == sum(len(options) for options in pairs.values()) > 0
    assert (read["src"] == again["src"]).all() and (read["tgt"] == again["tgt"]).all()
    np.testing.assert_allclose(read["rnn"], again["rnn"], rtol=1e-5)
    # a pair the feature lacks is an error, not a silent default
    with pytest.raises(KeyError, match="was not scored"):
        table_frame(table, model, *vocabs, sources=None, scored=scored)
