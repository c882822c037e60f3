"""The Bible chapter of each evaluated test sentence (rnnsearch.blocks): aligned with the test
references row for row, for All, No UNK and any positions; for the user's own files, its block
of consecutive lines of the test file."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from rnnlib.experiments.rnnsearch.blocks import chapter_ids, line_ids, resampled_unit
from rnnlib.line_blocks import LINES_PER_BLOCK, LineBlocks


def _ex(tmp_path, n: int, n_test: int, corpus: str = "bible", seed: int = 0):
    """A corpus folder whose test keys change chapter every 1-3 verses (an index shifted by one
    lands in another chapter about half the time), the first ``n_test`` evaluated."""
    rng = np.random.default_rng(seed)
    chapter = np.cumsum(rng.random(n) < 0.5)
    keys = np.stack([1 + chapter // 7, chapter % 7 + 1, np.arange(n) + 1], axis=1)
    np.save(tmp_path / "test.keys.npy", keys)
    known = rng.random(n_test) < 0.6
    ex = SimpleNamespace(
        corpus=SimpleNamespace(path=tmp_path, config=SimpleNamespace(corpus=corpus), test=range(n)),
        test=np.arange(n_test),
        known=known,
    )
    return ex, keys


def _same_chapter(ids: np.ndarray, keys: np.ndarray) -> None:
    """Two sentences share an id exactly when they share (book, chapter)."""
    same_id = ids[:, None] == ids[None, :]
    same_key = (keys[:, None, :2] == keys[None, :, :2]).all(-1)
    assert (same_id == same_key).all()


def test_the_ids_follow_the_test_sentences_row_for_row(tmp_path):
    ex, keys = _ex(tmp_path, 60, 45)
    ids = chapter_ids(ex)
    assert ids.shape == (45,)
    _same_chapter(ids, keys[:45])
    _same_chapter(chapter_ids(ex, "no_unk"), keys[:45][ex.known])
    picked = np.array([3, 17, 18, 40])
    _same_chapter(chapter_ids(ex, picked), keys[picked])
    with pytest.raises(AssertionError):  # the check sees an index shifted by one
        _same_chapter(ids, keys[1:46])
    assert resampled_unit(ex) == f"{len(np.unique(keys[:45, :2], axis=0))} chapters"
    from rnnlib.experiments.rnnsearch.table_3 import _unit

    assert _unit(ex, {"blocks": 7}) == "7 chapters"


def _files_ex(n: int, n_test: int, seed: int = 0):
    """A files corpus of ``n`` test pairs whose 1-based file lines skip the lines the cleaning
    dropped (about one in four), the first ``n_test`` evaluated."""
    rng = np.random.default_rng(seed)
    lines = 1 + np.flatnonzero(rng.random(4 * n) < 0.75)[:n]
    corpus = SimpleNamespace(
        path=None,
        config=SimpleNamespace(corpus="files"),
        test=range(n),
        rows=lambda split: lines if split == "test" else None,
    )
    known = rng.random(n_test) < 0.6
    return SimpleNamespace(corpus=corpus, test=np.arange(n_test), known=known), lines


def test_the_users_own_files_get_blocks_of_consecutive_lines():
    ex, lines = _files_ex(300, 240)
    want = (lines[:240] - 1) // LINES_PER_BLOCK  # the block of each sentence's line in the file
    ids = chapter_ids(ex)
    assert ids.tolist() == want.tolist()
    assert len(np.unique(ids)) < 240 / 10  # blocks, not sentences
    assert chapter_ids(ex, "no_unk").tolist() == want[ex.known].tolist()
    picked = np.array([3, 17, 18, 200])
    assert chapter_ids(ex, picked).tolist() == want[picked].tolist()
    assert line_ids(ex, 7).tolist() == ((lines[:240] - 1) // 7).tolist()
    # line blocks stay line blocks for every subset, so the intervals studentize on them
    for part in (ids, chapter_ids(ex, "no_unk"), chapter_ids(ex, picked)):
        assert isinstance(part, LineBlocks)
    assert resampled_unit(ex) == f"{len(np.unique(want))} blocks of {LINES_PER_BLOCK} lines"
    from rnnlib.experiments.rnnsearch.table_3 import _unit  # C-B-T3-1's note

    assert _unit(ex, {"blocks": 7}) == f"7 blocks of {LINES_PER_BLOCK} lines"
    assert _unit(ex, {"blocks": None}) == "sentences resampled"
    ex.corpus.test = range(301)
    with pytest.raises(ValueError, match="line numbers"):
        chapter_ids(ex)


def test_without_a_corpus_or_verse_keys_the_sentences_are_resampled(tmp_path):
    assert chapter_ids(SimpleNamespace()) is None
    ex, _ = _ex(tmp_path, 20, 20)
    (tmp_path / "test.keys.npy").unlink()
    assert chapter_ids(ex) is None and resampled_unit(ex) == "sentences"


def test_keys_that_do_not_match_the_split_are_refused(tmp_path):
    ex, _ = _ex(tmp_path, 30, 30)
    ex.corpus.test = range(31)
    with pytest.raises(ValueError, match="verse keys"):
        chapter_ids(ex)


def test_fig_3s_shares_resample_the_chapters_of_their_sentences():
    """C-B-F3-1/2/4 read shares over the No UNK sentences: with each sentence its own chapter
    they resample the sentence bootstrap's draws (the interval studentized, so close to the
    percentile one, not equal); with reorderings clustered in chapters the interval widens;
    C-B-F3-4's control (sentences of one row left out) keeps its chapters aligned."""
    from rnnlib.experiments.rnnsearch import figure_3

    rng = np.random.default_rng(0)
    trained = []
    for k in range(60):
        n = 6 + k % 3
        w = np.full((n + 1, n + 1), 0.02 / n)
        order = list(range(n))
        if k < 15:  # the reorderings all in the first three chapters
            order[2], order[3] = order[3], order[2]
        for i, j in enumerate(order):
            w[i, j] = 0.98
        w[-1, -1] = 0.98
        trained.append(w / w.sum(1, keepdims=True))
    trained.append(rng.dirichlet(np.ones(4))[None, :])  # one row only: dropped by the control
    blocks = np.r_[np.arange(61) // 5]
    plain = figure_3.AlignmentSample(trained, trained, 20.0, 1, 300)
    own = figure_3.AlignmentSample(trained, trained, 20.0, 1, 300, blocks=np.arange(61))
    chapters = figure_3.AlignmentSample(trained, trained, 20.0, 1, 300, blocks=blocks)

    def interval(s):
        e = figure_3._reordering(s.trained_stats, s.n_boot, s.seed, s.blocks).evidence
        return e["value"], e["low"], e["high"]

    (v, lo, hi), (v1, lo1, hi1) = interval(plain), interval(own)
    assert v1 == v and lo1 < v < hi1
    assert hi1 - lo1 == pytest.approx(hi - lo, rel=0.25)
    (_, lo_s, hi_s), (_, lo_b, hi_b) = interval(plain), interval(chapters)
    assert hi_b - lo_b > 1.5 * (hi_s - lo_s)
    for s in (plain, chapters):  # would raise on block ids not aligned with the sentences
        assert figure_3.claim_f3_4(s).check.rule != "not_measurable"
        assert figure_3.claim_f3_1(s).check.rule != "not_measurable"
