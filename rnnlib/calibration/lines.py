"""The paired BLEU bootstrap of the user's own files: blocks of consecutive lines resampled.

On a corpus without Bible chapters (``corpus="files"``) the chapters' BLEU intervals resample
blocks of :data:`rnnlib.line_blocks.LINES_PER_BLOCK` consecutive lines of the test file
(:func:`rnnlib.line_blocks.line_blocks`), not sentences. The file does not say where its
documents begin, so the blocks cut across them. The rule here is that bootstrap on the
simulated test sets of :mod:`rnnlib.calibration.run`: their drawn chapters, concatenated in the
order drawn, are the lines of a file, and the blocks are cut from it by position alone, across
the chapters' boundaries as in a file.

It is a rule of :data:`rnnlib.calibration.run.RULES` (its name: :func:`rule_name`), which
draws, in every trial, the same simulated test set and the same two systems as the row "paired
BLEU" (:data:`rnnlib.calibration.run.SAME_SYSTEMS`), so the two rows differ only in what their
bootstrap resamples.

Deviations
----------
- Neither paper resamples anything for its BLEU; the blocks, their size and this check are the
  book's.
"""

from __future__ import annotations

import numpy as np

from ..line_blocks import LINES_PER_BLOCK, line_blocks
from .fast_bleu import counts_of
from .pool import Draw, Pool
from .rules import B_STAR_GAIN, Outcome, _judge, _paired_check
from .systems import delta_for_gain, pair, population_bleu, thin


def line_counts(draw: Draw, size: int) -> np.ndarray:
    """``(R, n)``: the multiplicities of ``R`` block-bootstrap resamples of the test set ``draw``
    read as a file in the order drawn, cut into blocks of ``size`` consecutive lines (``B =
    ceil(n / size)`` blocks drawn with replacement, ``B`` per resample; drawn once per test set
    and size, from the test set's seed)."""
    key = ("lines", int(size))
    if key not in draw.memo:
        ids = line_blocks(np.arange(len(draw.idx)), size)
        m, r = int(ids.max()) + 1, draw.counts.shape[0]
        rng = np.random.default_rng([*draw.key, 103, int(size)])
        picks = rng.integers(0, m, (r, m), dtype=np.int32)
        draw.memo[key] = counts_of(picks, m)[:, ids]
    return draw.memo[key]


def n_line_blocks(draw: Draw, size: int) -> int:
    """The number of blocks of ``size`` lines :func:`line_counts` resamples: ``ceil(n / size)``."""
    return -(-len(draw.idx) // int(size))


def paired_bleu_lines(
    pool: Pool, draw: Draw, rng, true: bool, size: int = LINES_PER_BLOCK
) -> Outcome:
    """B Table 1's comparison (``rnnsearch.table_1._intervals``) on the user's own files: ``a −
    b`` above 0 by the paired bootstrap of blocks of ``size`` consecutive lines, controlled by
    ``b`` against itself, floored on both; true: ``b`` thinned to RNNsearch-50*'s gain over
    RNNsearch-50 (B Table 1: 28.45 / 26.75)."""
    a, b = pair(pool, draw, rng)
    delta = delta_for_gain(B_STAR_GAIN) if true else 0.0
    b = thin(b, delta, rng) if true else b
    check = _paired_check(a[0], b[0], line_counts(draw, size), n_line_blocks(draw, size))
    return _judge(check, delta * population_bleu(pool))


def rule_name(size: int) -> str:
    """The ledger's name of the rule with blocks of ``size`` lines."""
    return f"paired BLEU, blocks of {size} lines"


__all__ = ["line_counts", "n_line_blocks", "paired_bleu_lines", "rule_name"]
