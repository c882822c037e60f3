"""Block bootstrap: resample whole blocks of items (Bible chapters of verses), not items.

The book's held-out sentences are verses that come in runs from a few books: verses of one
chapter share names, style and vocabulary, so a system that does well on one verse tends to do
well on its neighbours. The sentence bootstrap (each verse drawn independently) then treats
correlated verses as independent and understates the noise. The block bootstrap (Künsch 1989;
for clustered data, Davison & Hinkley 1997, Sec. 3.8) draws whole blocks with replacement, as
many as there are, and keeps every verse of each drawn block: the dependence inside a block
stays in every resample, and a resample's size varies around ``n``.

A block id is any hashable label per item; for verses, :func:`chapter_blocks` makes one id per
(book, chapter) from the split's verse keys (``<split>.keys.npy``, ``(n, 3)``).
"""

from __future__ import annotations

import numpy as np


def chapter_blocks(keys: np.ndarray) -> np.ndarray:
    """``(n,)`` integer block ids, one per (book, chapter) of verse ``keys (n, 3)`` (book,
    chapter, verse), numbered 0, 1, ... in order of first appearance."""
    keys = np.asarray(keys)
    if keys.ndim != 2 or keys.shape[1] < 2:
        raise ValueError(f"chapter_blocks: keys must be (n, 3) book, chapter, verse: {keys.shape}")
    _, first, ids = np.unique(keys[:, :2], axis=0, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))  # renumber by first appearance
    return order[np.asarray(ids).reshape(-1)]


class BlockResampler:
    """Draws block-bootstrap resamples of ``n`` items labelled by ``blocks (n,)``.

    ``draw(rng)`` returns the item indices ``(n',)`` of one resample: ``B`` block labels drawn
    with replacement out of the ``B`` distinct ones, each drawn block contributing all its items
    (in their order). With every item its own block this is the ordinary bootstrap.
    """

    def __init__(self, blocks) -> None:
        blocks = np.asarray(blocks)
        if blocks.ndim != 1 or len(blocks) == 0:
            raise ValueError(
                f"BlockResampler: blocks must be a non-empty 1-D array, got shape {blocks.shape}"
            )
        _, ids = np.unique(blocks, return_inverse=True)
        ids = np.asarray(ids).reshape(-1)
        order = np.argsort(ids, kind="stable")
        counts = np.bincount(ids)
        self.n = len(blocks)
        self.members = np.split(order, np.cumsum(counts)[:-1])  # items of each block
        self.sizes = counts

    @property
    def n_blocks(self) -> int:
        return len(self.members)

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        picked = rng.integers(0, self.n_blocks, self.n_blocks)
        return np.concatenate([self.members[b] for b in picked])

    def draws(self, n_boot: int, seed: int | np.random.Generator = 0) -> list[np.ndarray]:
        """``n_boot`` resamples' item indices, from one seeded generator."""
        rng = np.random.default_rng(seed)
        return [self.draw(rng) for _ in range(n_boot)]


__all__ = ["BlockResampler", "chapter_blocks"]
