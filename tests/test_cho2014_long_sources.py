"""The long sources of paper A's Tables 2-3 drawn from the whole phrase table
(rnnlib.experiments.cho2014.long_sources), the best-target reading of Table 2's claims and
Table 3's expected table hits, on a synthetic phrase table and a tiny network."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from rnnlib.cache import ArtifactCache
from rnnlib.experiments.cho2014 import long_sources, table_2, table_3
from rnnlib.experiments.cho2014.setting import Params
from rnnlib.models import build_model
from rnnlib.presets import preset
from rnnlib.smt.phrases import PhraseTable
from rnnlib.corpus.vocab import Vocab

WORDS = [f"w{i}" for i in range(10)]


def _table(sources) -> PhraseTable:
    """``sources``: ``(source words, times seen, number of targets)``; each target one word."""
    src_ids, src_off, tgt_ids, tgt_off = [], [0], [], [0]
    pair_src, pair_tgt, count, src_count = [], [], [], []
    for k, (words, seen, n) in enumerate(sources):
        src_ids += [WORDS.index(w) for w in words]
        src_off.append(len(src_ids))
        for j in range(n):
            tgt_ids.append(j % len(WORDS))
            tgt_off.append(len(tgt_ids))
            pair_src.append(k)
            pair_tgt.append(len(tgt_off) - 2)
            count.append(1)
            src_count.append(seen)
    m = len(pair_src)
    scores = np.tile([0.5, 0.5, 0.25, 0.5], (m, 1))
    return PhraseTable(
        WORDS, WORDS,
        np.array(src_ids, np.int32), np.array(src_off, np.int64),
        np.array(tgt_ids, np.int32), np.array(tgt_off, np.int64),
        np.array(pair_src, np.int32), np.array(pair_tgt, np.int32),
        np.array(count, np.int64), np.array(src_count, np.int64), np.ones(m, np.int64), scores,
    )  # fmt: skip


SOURCES = [
    (("w1", "w2", "w3", "w4"), 30, 3),  # long, frequent
    (("w2", "w3", "w4", "w5"), 25, 2),  # long, frequent
    (("w3", "w4", "w5", "w6"), 40, 1),  # long, frequent, one target: not drawn
    (("w1", "w2"), 50, 4),  # short
    (("w4", "w5", "w6", "w7"), 1, 2),  # long, rare
    (("w5", "w6", "w7", "w8"), 5, 3),  # long, rare (at most 5)
    (("w6", "w7", "w8", "w9"), 10, 2),  # long, neither
]


def test_source_groups_keep_long_sources_with_two_targets_by_how_often_seen():
    table = _table(SOURCES)
    groups = long_sources.source_groups(table, 4, 20, 5)
    src = table.pair_src
    assert [int(src[r]) for r in groups["frequent"]] == [0, 1]
    assert [int(src[r]) for r in groups["rare"]] == [4, 5]
    with pytest.raises(ValueError):
        long_sources.source_groups(table, 4, 5, 5)  # groups would overlap
    rows = long_sources.drawn_rows(table, groups, 1, seed=1)
    assert {g for g, _ in rows} == {"frequent", "rare"}
    drawn = {(g, int(src[k])) for g, k in rows}
    assert len([d for d in drawn if d[0] == "frequent"]) == 1  # one source per group
    # every target of a drawn source
    for g, s in drawn:
        assert sum(1 for gg, k in rows if gg == g and int(src[k]) == s) == SOURCES[s][2]
    assert long_sources.drawn_rows(table, groups, 1, seed=1) == rows


def _network():
    vocab = Vocab(WORDS)
    torch.manual_seed(0)
    cfg = preset("smoke-cho2014", src_vocab=len(vocab), tgt_vocab=len(vocab))
    trained, untrained = build_model(cfg).eval(), build_model(cfg).eval()
    with torch.no_grad():  # the paper's initialisation is uniform over the words: move it
        for p in trained.parameters():
            p.add_(torch.randn_like(p))
    return trained, untrained, vocab


def test_long_sources_scores_every_target_with_both_networks_and_is_cached(tmp_path):
    model, untrained, vocab = _network()
    table = _table(SOURCES)
    scorer = SimpleNamespace(table=table, artifact=SimpleNamespace(key="abc"))
    corpus = SimpleNamespace(src_vocab=vocab, tgt_vocab=vocab)
    P = Params(min_source_words=4, frequent_count=20, rare_count=5, long_sources=5)
    cache = ArtifactCache(tmp_path / "cache")
    frame, art = long_sources.long_sources(cache, scorer, model, untrained, corpus, P)
    assert len(frame) == 3 + 2 + 2 + 3 and frame.attrs["population"] == {"frequent": 2, "rare": 2}
    assert (frame["rnn"] < 0).all() and not np.allclose(frame["rnn"], frame["rnn0"])
    assert set(frame["group"]) == {"frequent", "rare"} and (frame["src_len"] == 4).all()
    again, art2 = long_sources.long_sources(cache, scorer, model, untrained, corpus, P)
    assert art2.key == art.key and art.kind == "cho2014/long_sources"
    pd.testing.assert_frame_equal(frame, again)
    phrases = table_2.long_phrases(frame, P)
    assert phrases.population == {"frequent": 2, "rare": 2}
    assert table_2.numbers(phrases, P)["cho-n-rare"] == 2
    control = table_2.untrained_long(phrases)
    assert np.allclose(control.long["rnn"], frame["rnn0"])
    read = table_2.read_numbers(phrases)
    assert read["cho-t2-read-frequent"] == 2 and read["cho-t2-read-rare"] == 2
    assert read["cho-chance-rare"][0] == pytest.approx((1 / 2 + 1 / 3) / 2)


def test_expected_hits_sum_the_probability_of_the_targets_the_network_can_write():
    cand = pd.DataFrame({"tgt": [("w1",), ("w2", "w3"), ("zz",)], "rnn": np.log([0.1, 0.2, 0.5])})
    got = table_3.expected_hits(cand, Vocab(WORDS), 50)
    assert got == pytest.approx(50 * 0.3)  # "zz" is outside the shortlist
