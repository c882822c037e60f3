"""Train/dev/test by whole books, leak removal, and the near-duplicate overlap of test with train.

The papers' test set (news-test-2014) has "3003 sentences not present in the training data"
(Bahdanau et al. 2015, Sec. 4.1). For the Bible we split by whole books, chosen to avoid the
big parallel passages (Samuel/Kings vs Chronicles, the synoptic Gospels, ...):

* dev: Judges, Lamentations, Jonah, 1 Corinthians, Titus;
* test: Ruth, Esther, Acts, Philippians, James;
* train: the other 56 books.

The split is a function of the verse key alone, so every English x French version pair of a
verse lands in the same split. Two further checks:

* :func:`normalize` + :class:`LeakFilter`: a training pair whose normalized source or target
  equals a normalized dev/test side (any reference) is dropped (formulaic verses such as
  "And the LORD spake unto Moses, saying," recur across books);
* :class:`NearDuplicates`: a dev/test sentence is a near-duplicate when at least half of its
  word 4-grams occur in one single training sentence. It is measured, reported, and
  available as a mask so BLEU can also be reported without those sentences.

Deviations: the papers' split is WMT's (news-test-2012+2013 dev, news-test-2014 test); the
book split, the leak filter and the near-duplicate measure are this book's, for the Bible.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

import numpy as np

SPLITS = ("train", "dev", "test")
DEV_BOOKS = (7, 25, 32, 46, 56)  # Judges, Lamentations, Jonah, 1 Corinthians, Titus
TEST_BOOKS = (8, 17, 44, 50, 59)  # Ruth, Esther, Acts, Philippians, James

_WORDS = re.compile(r"\w+")


def assign_splits(keys: np.ndarray) -> np.ndarray:
    """``(n,)`` array of split names for verse keys ``(n, 3)`` (book, chapter, verse)."""
    books = np.asarray(keys)[:, 0]
    out = np.full(len(books), "train", dtype=object)
    out[np.isin(books, DEV_BOOKS)] = "dev"
    out[np.isin(books, TEST_BOOKS)] = "test"
    return out


def normalize(text: str) -> str:
    """Lowercased words only: ``"Thus saith the LORD:"`` -> ``"thus saith the lord"``."""
    return " ".join(_WORDS.findall(text.lower()))


class LeakFilter:
    """Remembers normalized dev/test sides; ``leaks(src, tgt)`` is true for a training pair to
    drop."""

    def __init__(self) -> None:
        self.src: set[str] = set()
        self.tgt: set[str] = set()

    def add_heldout(self, src: str, tgt_refs: Iterable[str]) -> None:
        self.src.add(normalize(src))
        self.tgt.update(normalize(t) for t in tgt_refs)

    def leaks(self, src: str, tgt: str) -> bool:
        return normalize(src) in self.src or normalize(tgt) in self.tgt


def _ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


class NearDuplicates:
    """Streamed measure of how much of each held-out sentence one training sentence covers.

    ``add_train(text)`` for every training sentence (any order, any number), then
    :meth:`mask`. A held-out sentence shorter than ``n`` words has no n-gram and is never a
    near-duplicate (an exact copy of it is removed from train by :class:`LeakFilter`).
    Memory holds only the held-out n-grams, so it scales to millions of training pairs.
    """

    def __init__(self, heldout: Sequence[str], n: int = 4, threshold: float = 0.5):
        self.n, self.threshold = n, threshold
        self.index: dict[tuple[str, ...], list[int]] = {}
        self.sizes = np.zeros(len(heldout), dtype=np.int64)
        for i, text in enumerate(heldout):
            grams = _ngrams(normalize(text).split(), n)
            self.sizes[i] = len(grams)
            for g in grams:
                self.index.setdefault(g, []).append(i)
        self.best = np.zeros(len(heldout), dtype=np.float64)

    def add_train(self, text: str) -> None:
        grams = _ngrams(normalize(text).split(), self.n)
        hits: Counter = Counter()
        index = self.index
        for g in grams:
            ids = index.get(g)
            if ids:
                hits.update(ids)
        for i, h in hits.items():
            share = h / self.sizes[i]
            if share > self.best[i]:
                self.best[i] = share

    def mask(self) -> np.ndarray:
        """``(n_heldout,) bool``: true for a near-duplicate of some training sentence."""
        return self.best >= self.threshold
