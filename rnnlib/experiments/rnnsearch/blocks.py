"""The Bible chapter of every evaluated test sentence, or its block of consecutive lines of the
user's own test file: the blocks the chapter's BLEU rules resample
(:func:`rnnlib.stats.paired_bootstrap`, ``subset_difference``, ``gap_change`` with
``blocks=``), so that the verses of a chapter (the sentences of a document), which share names,
style and vocabulary, are drawn together and the intervals carry the dependence between them.

The evaluated test sentences are the first ``n_test`` of the prepared corpus's test split
(:attr:`RNNsearchExperiment.test`); the corpus keeps each split's verse keys
(``test.keys.npy``, ``(n, 3)`` book, chapter, verse, row for row with the split's arrays), and
:func:`rnnlib.resampling.chapter_blocks` turns them into one id per chapter. The user's own
files (``corpus="files"``) have no chapters, but their test file keeps its documents in order:
each evaluated sentence's line in it (the corpus's ``test.rows.npy``, 1-based) gives its block
of :data:`rnnlib.line_blocks.LINES_PER_BLOCK` consecutive lines
(:func:`rnnlib.line_blocks.line_blocks`), the non-overlapping block bootstrap of a sequence.

Deviations
----------
- B resamples nothing (its Table 1 gives BLEU without intervals); the book's intervals resample
  whole chapters where the corpus knows them, blocks of consecutive lines of the test file
  otherwise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...line_blocks import LINES_PER_BLOCK, line_blocks
from ...resampling import chapter_blocks
from .setting import RNNsearchExperiment


def chapter_ids(ex: RNNsearchExperiment, subset: str = "all") -> np.ndarray | None:
    """``(n,)`` block ids of the evaluated test sentences of ``subset``: ``"all"`` (``n =
    n_test``, aligned with ``Translations.refs["all"]``), ``"no_unk"`` (the No UNK sentences,
    aligned with ``refs["no_unk"]``), or an index array of positions in All (aligned with
    ``[refs["all"][i] for i in subset]``). A block is a Bible chapter where the corpus has verse
    keys, else :data:`~rnnlib.line_blocks.LINES_PER_BLOCK` consecutive lines of the test file
    (:func:`line_ids`); ``None`` without a corpus (hand-made inputs)."""
    corpus = getattr(ex, "corpus", None)
    if corpus is None:
        return None
    blocks = _verse_chapters(ex) if corpus.config.corpus == "bible" else line_ids(ex)
    if blocks is None:
        return None
    if isinstance(subset, str):
        if subset not in ("all", "no_unk"):
            raise ValueError(f"chapter_ids: subset 'all', 'no_unk' or positions, not {subset!r}")
        return blocks if subset == "all" else blocks[np.asarray(ex.known, dtype=bool)]
    return blocks[np.asarray(subset, dtype=int)]


def _verse_chapters(ex: RNNsearchExperiment) -> np.ndarray | None:
    """``(n_test,)`` chapter ids of the evaluated test verses; ``None`` without verse keys."""
    path = Path(ex.corpus.path) / "test.keys.npy"
    if not path.exists():
        return None
    keys = np.load(path)
    if len(keys) != len(ex.corpus.test):
        raise ValueError(
            f"chapter_ids: {len(keys)} verse keys for {len(ex.corpus.test)} test sentences"
        )
    return chapter_blocks(keys[ex.test])


def line_ids(ex: RNNsearchExperiment, size: int = LINES_PER_BLOCK) -> np.ndarray:
    """``(n_test,)`` ids of the blocks of ``size`` consecutive lines of the test file that the
    evaluated test sentences sit on (the corpus's 1-based line of each test pair,
    ``corpus.rows("test")``; a pair the cleaning dropped leaves its block shorter)."""
    lines = np.asarray(ex.corpus.rows("test"))
    if len(lines) != len(ex.corpus.test):
        raise ValueError(
            f"chapter_ids: {len(lines)} line numbers for {len(ex.corpus.test)} test sentences"
        )
    return line_blocks(lines[ex.test] - 1, size)


def resampled_unit(ex: RNNsearchExperiment) -> str:
    """What the chapter's BLEU bootstraps resample, in a few words: ``"<B> chapters"`` (the
    number of Bible chapters the evaluated test sentences come from), ``"<B> blocks of <L>
    lines"`` (the user's own files) or ``"sentences"``."""
    blocks = chapter_ids(ex)
    return "sentences" if blocks is None else blocks_in_words(ex, len(np.unique(blocks)))


def blocks_in_words(ex: RNNsearchExperiment, n: int) -> str:
    """``n`` blocks of :func:`chapter_ids` in words: ``"<n> chapters"`` on the Bible, ``"<n>
    blocks of <L> lines"`` on the user's own files."""
    if ex.corpus.config.corpus == "bible":
        return f"{n} chapters"
    return f"{n} block{'' if n == 1 else 's'} of {LINES_PER_BLOCK} lines"


__all__ = ["blocks_in_words", "chapter_ids", "line_ids", "resampled_unit"]
