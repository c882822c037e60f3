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

Those rates were read on the raw percentile interval. Widened for their few blocks
(:func:`rnnlib.stats.block_interval`, by 1.11 at 17 blocks), the percentile interval's false
"holds" by chapter fell to 5.9% at 30 lines and 4.2% at 40, but its coverage stayed near 93%
whatever the size (88.7/90.1% where the claim is false/true at 30 lines, 91.3/92.6% at 40,
93.2/92.8% at 50, 92.8/93.1% at 60; 2,000 trials a row, 575 at 30): the dependence that blocks of
lines cut at their edges stays after the widening. The intervals on line blocks are therefore
studentized (:mod:`rnnlib.bleu_t`: each resample's difference over its own delta-method standard
error), which covered 94.0/93.8% at 35 lines and 95.0/95.0% at 40 (false "holds" by chapter 2.3%,
by sentence 2.4%, power 23.9% against the widened interval's 28.3%), and 95.5/95.3% at 50 with
power 19.1%. Forty lines is where it first covers 95%: about one and a half Bible chapters or two
WMT documents. On Bible chapters the widened interval is kept: at 17 chapters the studentized one
over-covers (97.2%) with less power (12.7% against 18.1%). The measurements are in
``records/timings/2026-11-29-line-block-calibration.json``; the ledger's table measures the rule
again in every build.
"""

from __future__ import annotations

import numpy as np

#: consecutive lines per block (the book's choice; :mod:`rnnlib.calibration.lines` measures it)
LINES_PER_BLOCK = 40


class LineBlocks(np.ndarray):
    """Block ids that are blocks of consecutive lines of a file (what :func:`line_blocks`
    returns): an integer array like any other, that keeps its kind when indexed or cut (a
    subset's ids are line blocks too), so that the BLEU intervals given them
    (:func:`rnnlib.stats.paired_bootstrap`, ``subset_difference``, ``gap_change``) know to read
    the studentized interval (:mod:`rnnlib.bleu_t`) rather than the widened percentile one that
    Bible chapters get."""


def line_blocks(positions, size: int = LINES_PER_BLOCK) -> np.ndarray:
    """``(n,)`` integer block ids of the evaluated sentences at ``positions (n,)`` (0-based line
    positions in the test file): ``position // size``, so that block ``k`` holds lines ``k *
    size`` to ``(k + 1) * size - 1``. A sentence the corpus dropped leaves its block shorter; a
    block of which no line is evaluated is absent. The ids are a :class:`LineBlocks`."""
    positions = np.asarray(positions)
    if positions.ndim != 1:
        raise ValueError(f"line_blocks: positions must be 1-D, got shape {positions.shape}")
    if size < 1:
        raise ValueError(f"line_blocks: size must be at least 1, not {size}")
    if len(positions) and (positions.min() < 0 or not np.issubdtype(positions.dtype, np.integer)):
        raise ValueError("line_blocks: positions must be non-negative integers")
    return (positions.astype(np.int64) // int(size)).view(LineBlocks)


__all__ = ["LINES_PER_BLOCK", "LineBlocks", "line_blocks"]
