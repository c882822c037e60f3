"""Blocks of consecutive lines: the block bootstrap of a test set that knows no chapters.

A test set of the user's own files (``corpus="files"``) comes in documents, as the Bible's test
split comes in chapters (51 whole chapters in file order on the book's Bible, 27 verses the
median chapter; a WMT test set's documents run to about 20 sentences). The sentences of a
document share its topic, names and vocabulary, so a system that does well on one does well on
its neighbours, and the sentence bootstrap, which draws every sentence on its own, understates
the noise (the ledger's table: 20.5% false "holds" where two systems differ chapter by chapter,
against 4.0% with whole chapters resampled). The file does not say where its documents begin,
but it keeps them in order: consecutive lines are blocks that hold most of each document's
dependence. This is the non-overlapping block bootstrap of Carlstein (1986) and Künsch (1989)
for a dependent sequence: cut the sequence into blocks of ``size`` consecutive items, draw as
many blocks as there are with replacement (:class:`rnnlib.resampling.BlockResampler`, the same
scheme as the chapters').

:data:`LINES_PER_BLOCK` is the book's choice of ``size``, measured by the calibration
(:mod:`rnnlib.calibration.lines`, the ledger's table) at the book's sizes (test sets of about
500 sentences, 1,000 resamples) on the Bible's test verses read as a file, chapter after
chapter: where two systems of equal quality differ chapter by chapter, the share of false
"holds" falls as the blocks grow, from 12.8% at 10 lines to 8.6% at 20, 7.7% at 25, 7.0% at 30
and 6.6% at 40 (2,000 trials each, 600 at 10 and 50 lines; a block that straddles two chapters
loses part of their dependence), while where they differ sentence by sentence it rises, from
3.4% at 20 lines to 4.5% at 30 and 6.2% at 50 (fewer blocks to resample: 17 in 500 sentences at
30 lines, 10 at 50), and the power falls (46% at 20 lines, 41% at 30). Thirty lines is where the
first stops falling much and the second is still under 5%: a little over a Bible chapter (median
27 verses) or a WMT document (about 20 sentences), so most pairs of sentences of one document
share a block.

Those rates were read on the raw percentile interval. The block intervals are now widened for
their few blocks (:func:`rnnlib.stats.block_interval`, by 1.11 at 17 blocks). Measured again
with the widening (575 trials at 30 lines, 500 at 40 to 60), the false "holds" by chapter are
5.9% at 30 lines, 4.2% at 40, 3.8% at 50 and 4.0% at 60, by sentence 3.2% at 30 lines and 2.8%
at 60 (400 trials); the coverage by chapter (claim false / true) rises from 85.0/86.1% to
88.7/90.1% at 30 lines, and is 91.6/91.4% at 40, 93.2/91.8% at 50, 93.0/93.0% at 60, while the
power falls from 35% at 30 lines to 24% at 60. The dependence that blocks of lines cut at their
edges stays after the widening; longer blocks recover it only in part, at the price of power.
"""

from __future__ import annotations

import numpy as np

#: consecutive lines per block (the book's choice; :mod:`rnnlib.calibration.lines` measures it)
LINES_PER_BLOCK = 30


def line_blocks(positions, size: int = LINES_PER_BLOCK) -> np.ndarray:
    """``(n,)`` integer block ids of the evaluated sentences at ``positions (n,)`` (0-based line
    positions in the test file): ``position // size``, so that block ``k`` holds lines ``k *
    size`` to ``(k + 1) * size - 1``. A sentence the corpus dropped leaves its block shorter; a
    block of which no line is evaluated is absent."""
    positions = np.asarray(positions)
    if positions.ndim != 1:
        raise ValueError(f"line_blocks: positions must be 1-D, got shape {positions.shape}")
    if size < 1:
        raise ValueError(f"line_blocks: size must be at least 1, not {size}")
    if len(positions) and (positions.min() < 0 or not np.issubdtype(positions.dtype, np.integer)):
        raise ValueError("line_blocks: positions must be non-negative integers")
    return positions.astype(np.int64) // int(size)


__all__ = ["LINES_PER_BLOCK", "line_blocks"]
