"""Minibatch streams: length-sorted pools (paper B) and random minibatches (paper A).

Bahdanau et al. 2015, Appendix B.2: "The training data was shuffled once before training and
was traversed sequentially [...] before every 20-th update, we retrieved 1600 sentence pairs,
sorted them according to the lengths and split them into 20 minibatches."
:class:`PoolBatcher` does exactly that for any ``batch_size`` and ``pool`` (minibatches per
pool): one permutation drawn from the seed serves every epoch; the pairs are read in that
order, ``pool * batch_size`` at a time; each pool is sorted by target length (ties by source
length, then by position, so the order is fully determined) and cut into consecutive
minibatches, used shortest first.

Cho et al. 2014, §4.1: each update uses "64 randomly selected phrase pairs" of the unique
pairs of the phrase table. :class:`RandomBatcher` draws them without replacement: every epoch
is a fresh permutation of all pairs (drawn from the seed and the epoch number), cut into
consecutive minibatches, so every pair is used once per epoch and nothing is sorted.

A *position* ``(epoch, pool_start, batch)`` names the next minibatch to use: minibatch
``batch`` of the pool that starts at ``pool_start`` in the epoch's order (for
:class:`RandomBatcher` the whole epoch is one pool, ``pool_start = 0``). It is all a
checkpoint needs to resume either stream exactly.

Equations
---------
- B B.2: pools of ``pool * batch_size`` pairs (20 x 80 = 1600) from one shuffle, sorted by
  length and cut into ``pool`` minibatches
- A §4.1: minibatches of ``batch_size`` (64) pairs drawn at random from the unique pairs

Deviations
----------
- B does not say which length the pools are sorted by; we sort by target length
  (the decoder dominates the cost), breaking ties by source length.
- The last pool of an epoch holds what is left (fewer pairs), and its last minibatch may be
  smaller than ``batch_size``; the next epoch starts a new pool at the start of the same
  permutation (B shuffles only once).
- A does not say whether its random minibatches are drawn with or without replacement; we
  draw without replacement (a new permutation per epoch), so an epoch is one pass over the
  pairs as in B. The last minibatch of an epoch may be smaller than ``batch_size``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np


@dataclass(frozen=True)
class Position:
    """The next minibatch: number ``batch`` of the pool starting at ``pool_start`` of ``epoch``."""

    epoch: int = 0
    pool_start: int = 0
    batch: int = 0

    def as_list(self) -> list[int]:
        return [self.epoch, self.pool_start, self.batch]

    @classmethod
    def from_list(cls, values) -> "Position":
        epoch, pool_start, batch = (int(v) for v in values)
        return cls(epoch, pool_start, batch)


class PoolBatcher:
    """Minibatch index arrays from length-sorted pools.

    ``src_lengths``, ``tgt_lengths``: ``(n,)`` sentence lengths. ``batch_size`` pairs per
    minibatch, ``pool`` minibatches per pool, ``seed`` for the single shuffle.
    """

    def __init__(
        self,
        src_lengths: np.ndarray,
        tgt_lengths: np.ndarray,
        batch_size: int,
        pool: int,
        seed: int,
        shuffle: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if pool < 1:
            raise ValueError(f"pool must be >= 1, got {pool}")
        self.src_lengths = np.asarray(src_lengths, dtype=np.int64)
        self.tgt_lengths = np.asarray(tgt_lengths, dtype=np.int64)
        self.n = len(self.src_lengths)
        if self.n == 0:
            raise ValueError("the training data is empty")
        self.batch_size = batch_size
        self.pool = pool
        rng = np.random.default_rng(seed)
        self.order = rng.permutation(self.n) if shuffle else np.arange(self.n)

    def pool_batches(self, pool_start: int) -> list[np.ndarray]:
        """The minibatches (arrays of pair indices) of the pool starting at ``pool_start``."""
        members = self.order[pool_start : pool_start + self.pool * self.batch_size]
        # lexsort: last key is primary -> target length, then source length, then position
        ranks = np.lexsort(
            (np.arange(len(members)), self.src_lengths[members], self.tgt_lengths[members])
        )
        members = members[ranks]
        return [members[i : i + self.batch_size] for i in range(0, len(members), self.batch_size)]

    def stream(self, start: Position = Position()) -> Iterator[tuple[np.ndarray, Position, float]]:
        """Yield ``(indices, next_position, epochs_done)`` forever from ``start``.

        ``epochs_done`` counts the pairs consumed so far, in epochs (a float).
        """
        epoch, pool_start, batch = start.epoch, start.pool_start, start.batch
        while True:
            batches = self.pool_batches(pool_start)
            consumed = pool_start + sum(len(b) for b in batches[:batch])
            for k in range(batch, len(batches)):
                consumed += len(batches[k])
                if k + 1 < len(batches):
                    nxt = Position(epoch, pool_start, k + 1)
                elif pool_start + self.pool * self.batch_size < self.n:
                    nxt = Position(epoch, pool_start + self.pool * self.batch_size, 0)
                else:
                    nxt = Position(epoch + 1, 0, 0)
                yield batches[k], nxt, epoch + consumed / self.n
            epoch, pool_start, batch = nxt.epoch, nxt.pool_start, 0


class RandomBatcher:
    """Minibatch index arrays drawn at random, every pair once per epoch.

    ``n``: the number of pairs; ``batch_size`` pairs per minibatch; epoch ``e`` uses the
    permutation drawn from ``(seed, e)``, so any epoch can be rebuilt without the ones before.
    """

    def __init__(self, n: int, batch_size: int, seed: int) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if n < 1:
            raise ValueError("the training data is empty")
        self.n, self.batch_size, self.seed = int(n), batch_size, seed

    def epoch_order(self, epoch: int) -> np.ndarray:
        """The ``(n,)`` permutation of the pairs used in ``epoch``."""
        return np.random.default_rng([self.seed, epoch]).permutation(self.n)

    def stream(self, start: Position = Position()) -> Iterator[tuple[np.ndarray, Position, float]]:
        """Yield ``(indices, next_position, epochs_done)`` forever from ``start`` (as
        :meth:`PoolBatcher.stream`)."""
        if start.pool_start != 0:
            raise ValueError(f"RandomBatcher positions have pool_start 0, got {start}")
        epoch, batch = start.epoch, start.batch
        n_batches = -(-self.n // self.batch_size)
        while True:
            order = self.epoch_order(epoch)
            for k in range(batch, n_batches):
                end = min((k + 1) * self.batch_size, self.n)
                nxt = Position(epoch, 0, k + 1) if k + 1 < n_batches else Position(epoch + 1, 0, 0)
                yield order[k * self.batch_size : end], nxt, epoch + end / self.n
            epoch, batch = epoch + 1, 0


def eval_batches(
    src_lengths: np.ndarray, tgt_lengths: np.ndarray, batch_size: int
) -> list[np.ndarray]:
    """All pairs once, sorted by (target, source) length, in minibatches of ``batch_size``."""
    order = np.lexsort(
        (np.arange(len(src_lengths)), np.asarray(src_lengths), np.asarray(tgt_lengths))
    )
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
