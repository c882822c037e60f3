"""BLEU as the book reports it: the No-UNK subset, length buckets, paired bootstrap
(rnnlib.bleu)."""

from __future__ import annotations

import numpy as np
import pytest

from rnnlib import bleu as B
from rnnlib import stats
from rnnlib.specials import UNK

REFS = [
    "le chat est sur le tapis rouge .",
    "il fait très beau aujourd' hui à Paris .",
    "je suis ici depuis longtemps , mon ami .",
    "nous allons à la plage demain matin .",
    "elle lit un livre dans le jardin .",
    "le train part à huit heures précises .",
]


def corpus(n_copies: int = 8):
    refs = REFS * n_copies
    good = [r if i % 4 else " ".join(r.split()[:3]) for i, r in enumerate(refs)]
    bad = [" ".join(r.split()[:2]) + " ." for r in refs]
    return refs, good, bad


def test_no_unk_mask_keeps_only_pairs_without_unknown_words_on_either_side():
    src = [np.array([5, 6, 7]), np.array([5, UNK]), np.array([8]), np.array([9, 9])]
    tgt = [np.array([5, 6]), np.array([6]), np.array([UNK, 4]), np.array([4])]
    assert B.no_unk_mask(src, tgt).tolist() == [True, False, False, True]
    with pytest.raises(ValueError, match="3 sources but 4 references"):
        B.no_unk_mask(src[:3], tgt)


def test_bucket_counts_add_up_and_each_bucket_is_the_corpus_bleu_of_its_sentences():
    refs, good, _ = corpus()
    lengths = np.array([len(r.split()) for r in refs])
    edges = B.length_edges(3, 9)
    table = stats.bleu_by_length(good, refs, lengths, edges, n_boot=200, seed=3)
    assert table["sentences"].sum() == len(refs)
    assert list(table["low_len"]) == edges and np.isinf(table["high_len"].iloc[-1])
    for _, row in table.iterrows():
        members = [i for i, n in enumerate(lengths) if row.low_len <= n < row.high_len]
        assert row.sentences == len(members)
        if members:
            expected = B.corpus_bleu([good[i] for i in members], [refs[i] for i in members]).score
            assert row.bleu == pytest.approx(expected)
            assert row.band_low <= row.bleu + 1e-9 and row.bleu - 1e-9 <= row.band_high
        else:
            assert np.isnan(row.bleu)
    with pytest.raises(ValueError, match="below the first edge"):
        stats.bleu_by_length(good, refs, lengths, [9, 12], n_boot=0)


def test_length_edges_end_in_an_open_bucket():
    assert B.length_edges(10, 60) == [0, 10, 20, 30, 40, 50, 60]
    assert B.length_edges(10, 55) == [0, 10, 20, 30, 40, 50, 55]
    with pytest.raises(ValueError):
        B.length_edges(0, 10)


def test_paired_bootstrap_interval_brackets_the_difference_and_separates_a_clearly_better_system():
    refs, good, bad = corpus()
    res = stats.paired_bootstrap(good, bad, refs, n_samples=300, seed=7)
    assert res["diff"] == pytest.approx(
        B.corpus_bleu(good, refs).score - B.corpus_bleu(bad, refs).score
    )
    assert 0 < res["low"] <= res["diff"] <= res["high"]
    assert res["p_value"] < 0.05
    assert "bs:300" in res["signature"] and "seed:7" in res["signature"]
    same = stats.paired_bootstrap(good, good, refs, n_samples=100, seed=7)
    assert same["diff"] == 0 and same["low"] == 0 and same["high"] == 0


def test_paired_bootstrap_resamples_are_the_draws_of_sacrebleus_own_paired_test(monkeypatch):
    """Every BLEU interval rests on paired_bootstrap's resamples: each system's bootstrap mean and
    95% half-width from them are the ones sacreBLEU's paired bootstrap (``PairedTest``, ``bs``)
    reports (``Result.mean``, ``Result.ci``) on the same systems: the baseline b's (its own
    resampling) and a's (the paired test's), so the resamples are sacreBLEU's draws."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    refs, good, bad = corpus(3)
    mixed = [g if i % 2 else b for i, (g, b) in enumerate(zip(good, bad))]
    resampled = []  # the scores of each resample, system a's then system b's

    def spy(scorer, sentence_stats, idxs):
        resampled.append(real(scorer, sentence_stats, idxs))
        return resampled[-1]

    real = B.resampled_scores
    monkeypatch.setattr(B, "resampled_scores", spy)
    res = stats.paired_bootstrap(good, mixed, refs, n_samples=200, seed=11)
    assert len(resampled) == 2 and all(r.shape == (200,) for r in resampled)
    monkeypatch.setenv("SACREBLEU_SEED", "11")
    _, out = PairedTest(
        [("mixed", mixed), ("good", good)], {"BLEU": BLEU()}, [refs], test_type="bs", n_samples=200
    )()
    sacre_b, sacre_a = out["BLEU"]
    for ours, theirs in ((resampled[0], sacre_a), (resampled[1], sacre_b)):
        low, high = np.sort(ours)[[200 // 40, 200 - 200 // 40 - 1]]  # sacreBLEU's estimate_ci
        assert ours.mean() == pytest.approx(theirs.mean, abs=1e-6)  # sacreBLEU: float32 stats
        assert (high - low) / 2 == pytest.approx(theirs.ci, abs=1e-6)
    assert res["bleu_a"] == sacre_a.score and res["bleu_b"] == sacre_b.score
    assert res["p_value"] == sacre_a.p_value
    # the interval of the difference is read off the same resamples
    diffs = resampled[0] - resampled[1]
    assert diffs.min() <= res["low"] <= res["diff"] <= res["high"] <= diffs.max()
    assert np.mean((diffs >= res["low"]) & (diffs <= res["high"])) >= 0.95


def test_sentence_bleu_and_signature():
    assert B.sentence_bleu(REFS[0], REFS[0]) == pytest.approx(100)
    assert B.sentence_bleu("rien", REFS[0]) < 10
    assert B.signature().startswith("nrefs:1|") and "tok:13a" in B.signature()
