"""Ragged token arrays: many variable-length sentences in two flat numpy arrays.

A corpus of ``n`` sentences is stored as

* ``ids``: ``(total_tokens,)`` ``int32`` -- every sentence's token ids, one after another;
* ``offsets``: ``(n + 1,)`` ``int64`` -- sentence ``i`` is ``ids[offsets[i]:offsets[i + 1]]``.

Both arrays can be memory-mapped from the artifact cache (``np.load(..., mmap_mode="r")``),
so paper-scale corpora (millions of pairs) never become lists of Python objects.
Token ids never include ``[BOS]``/``[EOS]``; models add them (see :mod:`rnnlib.specials`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np


@dataclass(frozen=True)
class Ragged:
    """``n`` variable-length int sequences. ``ids: (T,) int32``, ``offsets: (n+1,) int64``."""

    ids: np.ndarray
    offsets: np.ndarray

    def __post_init__(self) -> None:
        if self.offsets.ndim != 1 or len(self.offsets) == 0 or self.offsets[0] != 0:
            raise ValueError("offsets must be 1-D and start at 0")
        if int(self.offsets[-1]) != len(self.ids):
            raise ValueError(
                f"offsets end at {int(self.offsets[-1])} but there are {len(self.ids)} ids"
            )

    @classmethod
    def from_lists(cls, seqs: Iterable[Sequence[int]]) -> "Ragged":
        seqs = [np.asarray(s, dtype=np.int32) for s in seqs]
        lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
        offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int32)
        return cls(ids.astype(np.int32, copy=False), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return self.ids[self.offsets[i] : self.offsets[i + 1]]

    @property
    def lengths(self) -> np.ndarray:
        """``(n,) int64`` sentence lengths."""
        return np.diff(self.offsets)

    def select(self, index: np.ndarray) -> "Ragged":
        """The sentences at ``index`` (an int array or boolean mask), in that order."""
        index = np.asarray(index)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return Ragged.from_lists(self[int(i)] for i in index)

    def save(self, path: Path, name: str) -> None:
        """Write ``<name>.ids.npy`` and ``<name>.offsets.npy`` into the folder ``path``."""
        np.save(Path(path) / f"{name}.ids.npy", self.ids)
        np.save(Path(path) / f"{name}.offsets.npy", self.offsets)

    @classmethod
    def load(cls, path: Path, name: str, mmap: bool = True) -> "Ragged":
        mode = "r" if mmap else None
        return cls(
            np.load(Path(path) / f"{name}.ids.npy", mmap_mode=mode),
            np.load(Path(path) / f"{name}.offsets.npy", mmap_mode=mode),
        )


@dataclass(frozen=True)
class ParallelArrays:
    """Aligned source/target sentences: ``src[i]`` translates to ``tgt[i]``."""

    src: Ragged
    tgt: Ragged

    def __post_init__(self) -> None:
        if len(self.src) != len(self.tgt):
            raise ValueError(
                f"{len(self.src)} source sentences but {len(self.tgt)} target sentences"
            )

    def __len__(self) -> int:
        return len(self.src)

    def select(self, index: np.ndarray) -> "ParallelArrays":
        return ParallelArrays(self.src.select(index), self.tgt.select(index))
