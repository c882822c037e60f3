"""The block bootstrap of rnnlib.stats' BLEU rules (``blocks=``): with every sentence its own
block it is the sentence bootstrap, resample for resample; on sentences whose quality moves
chapter by chapter its intervals are wider."""

from __future__ import annotations

import numpy as np
import pytest

from rnnlib import stats

WORDS = [f"w{k}" for k in range(30)]


def _texts(n_chapters: int, size: int, seed: int, spread: float):
    """``(refs, hyps_a, hyps_b, blocks)``: ``n_chapters`` chapters of ``size`` sentences; in
    each chapter system a keeps a share of the reference's words drawn around 0.7 with
    ``spread`` (the chapter effect), system b a share 0.7."""
    rng = np.random.default_rng(seed)
    refs, a, b, blocks = [], [], [], []
    for c in range(n_chapters):
        keep_a = float(np.clip(0.7 + spread * rng.standard_normal(), 0.2, 0.98))
        for _ in range(size):
            ref = list(rng.choice(WORDS, rng.integers(6, 14)))
            refs.append(" ".join(ref))
            for out, keep in ((a, keep_a), (b, 0.7)):
                out.append(" ".join(w if rng.random() < keep else "zz" for w in ref))
            blocks.append(c)
    return refs, a, b, np.array(blocks)


@pytest.fixture(scope="module")
def texts():
    return _texts(12, 10, 0, 0.0)


def test_singleton_blocks_give_the_sentence_bootstrap_exactly(texts):
    refs, a, b, _ = texts
    own = np.arange(len(refs))
    want = stats.paired_bootstrap(a, b, refs, n_samples=200)
    got = stats.paired_bootstrap(a, b, refs, n_samples=200, blocks=own)
    for k in ("bleu_a", "bleu_b", "diff", "low", "high", "p_value"):
        assert got[k] == pytest.approx(want[k], abs=1e-9), k
    assert want["blocks"] is None and got["blocks"] == len(refs)
    assert "blocks:120" in got["signature"] and "bs:200" in got["signature"]
    mask = np.arange(len(refs)) % 3 == 0
    for fn, args in (
        (stats.subset_difference, (a, refs, mask)),
        (stats.gap_change, (a, b, refs, mask)),
    ):
        want, got = fn(*args, n_samples=200), fn(*args, n_samples=200, blocks=own)
        ends = ("diff", "low", "high")
        assert [got[k] for k in ends] == [want[k] for k in ends]
        assert want["blocks"] is None and got["blocks"] == len(refs)
    values = np.random.default_rng(1).random(50)
    assert stats.bootstrap_mean(values, 300, 4, blocks=np.arange(50)) == pytest.approx(
        stats.bootstrap_mean(values, 300, 4)
    )


def test_the_block_interval_is_wider_where_chapters_differ():
    refs, a, b, blocks = _texts(12, 10, 1, 0.25)
    sent = stats.paired_bootstrap(a, b, refs, n_samples=300)
    block = stats.paired_bootstrap(a, b, refs, n_samples=300, blocks=blocks)
    assert block["diff"] == pytest.approx(sent["diff"])
    assert block["high"] - block["low"] > 1.5 * (sent["high"] - sent["low"])
    assert block["blocks"] == 12
    mask = np.arange(len(refs)) % 2 == 0
    s = stats.gap_change(a, b, refs, mask, n_samples=300)
    k = stats.gap_change(a, b, refs, mask, n_samples=300, blocks=blocks)
    assert k["diff"] == s["diff"]
    values = np.repeat(np.random.default_rng(2).random(12), 10)  # one value per chapter
    m, lo, hi = stats.bootstrap_mean(values, 400, 0)
    mb, lob, hib = stats.bootstrap_mean(values, 400, 0, blocks=blocks)
    assert m == mb and hib - lob > 2 * (hi - lo)


def test_blocks_must_align_with_the_sentences(texts):
    refs, a, b, blocks = texts
    with pytest.raises(ValueError, match="block ids"):
        stats.paired_bootstrap(a, b, refs, n_samples=10, blocks=blocks[1:])
    with pytest.raises(ValueError, match="block ids"):
        stats.subset_difference(a, refs, np.ones(len(refs), bool), 10, blocks=blocks[:-1])
