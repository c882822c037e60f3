"""Vocabulary shortlists: the ``N`` most frequent words of a side, plus the special tokens.

Cho et al. 2014, Sec. 4.1: "we limited the source and target vocabulary to the most frequent
15,000 words"; Bahdanau et al. 2015, Sec. 4.1: "a shortlist of 30,000 most frequent words in
each language ... Any word not included in the shortlist is mapped to a special token
([UNK])". Ids: ``[PAD]`` 0, ``[UNK]`` 1, ``[BOS]`` 2, ``[EOS]`` 3 (:mod:`rnnlib.specials`), then
the words by decreasing training count (ties: alphabetical), so ``len(vocab) == N + 4`` when
the training side has at least ``N`` word types.

Deviations: the papers do not say how ties in frequency are broken, nor list ``[PAD]`` and
``[BOS]`` (implementation tokens; ``[BOS]`` stands for their all-zero first input).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..specials import BOS, EOS, PAD, SPECIALS, UNK


class Vocab:
    """id <-> token for one side. ``encode(tokens) -> (len,) int32``; ``decode(ids) -> tokens``."""

    def __init__(self, words: Sequence[str], counts: Sequence[int] | None = None):
        self.itos: list[str] = list(SPECIALS) + list(words)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}
        if len(self.stoi) != len(self.itos):
            raise ValueError("a vocabulary word repeats, or collides with a special token")
        self.counts = list(counts) if counts is not None else None

    @classmethod
    def build(cls, counter: Counter, size: int) -> "Vocab":
        """The ``size`` most frequent words of ``counter`` (word -> training count)."""
        if size < 1:
            raise ValueError(f"vocabulary size must be at least 1, got {size}")
        ranked = sorted((w for w in counter if w not in SPECIALS), key=lambda w: (-counter[w], w))[
            :size
        ]
        return cls(ranked, [counter[w] for w in ranked])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __getitem__(self, token: str) -> int:
        return self.stoi.get(token, UNK)

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Token ids ``(len,) int32``; words outside the shortlist become ``UNK`` (1)."""
        get = self.stoi.get
        return np.fromiter((get(t, UNK) for t in tokens), dtype=np.int32)

    def decode(self, ids: Iterable[int], strip: bool = True) -> list[str]:
        """Tokens for ``ids``; with ``strip``, drop ``PAD``/``BOS`` and stop at the first
        ``EOS``."""
        out = []
        for i in ids:
            i = int(i)
            if strip and i == EOS:
                break
            if strip and i in (PAD, BOS):
                continue
            out.append(self.itos[i])
        return out

    def save(self, path: Path) -> None:
        """One ``word<TAB>count`` line per shortlisted word (specials are implied)."""
        counts = self.counts or [0] * (len(self) - len(SPECIALS))
        Path(path).write_text(
            "".join(f"{w}\t{c}\n" for w, c in zip(self.itos[len(SPECIALS) :], counts)),
            encoding="utf-8",
        )

    @classmethod
    def load(cls, path: Path) -> "Vocab":
        words, counts = [], []
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            w, c = line.rsplit("\t", 1)
            words.append(w)
            counts.append(int(c))
        return cls(words, counts)
