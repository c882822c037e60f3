"""The Bible chapter of every evaluated test sentence: the blocks the chapter's BLEU rules
resample (:func:`rnnlib.stats.paired_bootstrap`, ``subset_difference``, ``gap_change`` with
``blocks=``), so that the verses of a chapter, which share names, style and vocabulary, are
drawn together and the intervals carry the dependence between them.

The evaluated test sentences are the first ``n_test`` of the prepared corpus's test split
(:attr:`RNNsearchExperiment.test`); the corpus keeps each split's verse keys
(``test.keys.npy``, ``(n, 3)`` book, chapter, verse, row for row with the split's arrays), and
:func:`rnnlib.resampling.chapter_blocks` turns them into one id per chapter. The user's own
files (``corpus="files"``) have no chapters: ``None``, the sentence bootstrap.

Deviations
----------
- B resamples nothing (its Table 1 gives BLEU without intervals); the book's intervals resample
  whole chapters where the corpus knows them, the sentences otherwise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...resampling import chapter_blocks
from .setting import RNNsearchExperiment


def chapter_ids(ex: RNNsearchExperiment, subset: str = "all") -> np.ndarray | None:
    """``(n,)`` chapter ids of the evaluated test sentences of ``subset``: ``"all"`` (``n =
    n_test``, aligned with ``Translations.refs["all"]``), ``"no_unk"`` (the No UNK sentences,
    aligned with ``refs["no_unk"]``), or an index array of positions in All (aligned with
    ``[refs["all"][i] for i in subset]``); ``None`` when the corpus has no verse keys."""
    corpus = getattr(ex, "corpus", None)  # None: no corpus at hand (hand-made inputs)
    path = None if corpus is None else Path(corpus.path) / "test.keys.npy"
    if path is None or corpus.config.corpus != "bible" or not path.exists():
        return None
    keys = np.load(path)
    if len(keys) != len(ex.corpus.test):
        raise ValueError(
            f"chapter_ids: {len(keys)} verse keys for {len(ex.corpus.test)} test sentences"
        )
    blocks = chapter_blocks(keys[ex.test])
    if isinstance(subset, str):
        if subset not in ("all", "no_unk"):
            raise ValueError(f"chapter_ids: subset 'all', 'no_unk' or positions, not {subset!r}")
        return blocks if subset == "all" else blocks[np.asarray(ex.known, dtype=bool)]
    return blocks[np.asarray(subset, dtype=int)]


def resampled_unit(ex: RNNsearchExperiment) -> str:
    """What the chapter's BLEU bootstraps resample, in two words: ``"<B> chapters"`` (the
    number of Bible chapters the evaluated test sentences come from) or ``"sentences"``."""
    blocks = chapter_ids(ex)
    return "sentences" if blocks is None else f"{len(np.unique(blocks))} chapters"


__all__ = ["resampled_unit", "chapter_ids"]
