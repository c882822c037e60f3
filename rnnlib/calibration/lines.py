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

from .. import bleu_t, verdicts  # bleu_t reads fast_bleu: attributes at call time
from ..line_blocks import LINES_PER_BLOCK, line_blocks
from .fast_bleu import corpus_bleu, counts_of
from .pool import Draw, Pool
from .rules import B_STAR_GAIN, SAME, Outcome, _floor, _judge
from .systems import delta_for_gain, pair, population_bleu, thin


def line_picks(draw: Draw, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(picks (R, B), ids (n,))``: how often each of the ``B = ceil(n / size)`` blocks of
    ``size`` consecutive lines is drawn in each of ``R`` block-bootstrap resamples of the test
    set ``draw`` read as a file in the order drawn (``B`` blocks drawn with replacement per
    resample; drawn once per test set and size, from the test set's seed), and each line's
    block."""
    key = ("lines", int(size))
    if key not in draw.memo:
        ids = np.asarray(line_blocks(np.arange(len(draw.idx)), size))
        m, r = int(ids.max()) + 1, draw.counts.shape[0]
        rng = np.random.default_rng([*draw.key, 103, int(size)])
        drawn = rng.integers(0, m, (r, m), dtype=np.int32)
        draw.memo[key] = counts_of(drawn, m), ids
    return draw.memo[key]


def line_counts(draw: Draw, size: int) -> np.ndarray:
    """``(R, n)``: the multiplicity of each line in each resample of :func:`line_picks` (its
    block's)."""
    picks, ids = line_picks(draw, size)
    return picks[:, ids]


def _paired_t_check(a: np.ndarray, b: np.ndarray, picks: np.ndarray, ids: np.ndarray):
    """B Table 1's comparison as the chapters make it on the user's files
    (:func:`rnnlib.stats.paired_bootstrap` with line blocks): ``a − b`` above 0 by the
    studentized interval of the block resamples ``picks`` (:mod:`rnnlib.bleu_t`), controlled by
    ``b`` against itself, floored on both."""
    g = picks.shape[1]
    sums = [bleu_t.block_sums(x, ids, g) for x in (a, b)]
    d, lo, hi = bleu_t.contrast_t_interval(sums, [1.0, -1.0], picks)
    check = verdicts.controlled(
        verdicts.intervals_above([("a − b", d, lo, hi)]),
        SAME,
        verdicts.intervals_above([("b − b", 0.0, 0.0, 0.0)]),  # paired_bootstrap(b, b)
    )
    bleu_a, bleu_b = (float(corpus_bleu(x.sum(0))) for x in (a, b))
    return _floor(check, a=bleu_a, b=bleu_b)


def n_line_blocks(draw: Draw, size: int) -> int:
    """The number of blocks of ``size`` lines :func:`line_counts` resamples: ``ceil(n / size)``."""
    return -(-len(draw.idx) // int(size))


def paired_bleu_lines(
    pool: Pool, draw: Draw, rng, true: bool, size: int = LINES_PER_BLOCK
) -> Outcome:
    """B Table 1's comparison (``rnnsearch.table_1._intervals``) on the user's own files: ``a −
    b`` above 0 by the paired bootstrap of blocks of ``size`` consecutive lines, its interval
    studentized (:func:`_paired_t_check`), controlled by ``b`` against itself, floored on both;
    true: ``b`` thinned to RNNsearch-50*'s gain over RNNsearch-50 (B Table 1: 28.45 / 26.75)."""
    a, b = pair(pool, draw, rng)
    delta = delta_for_gain(B_STAR_GAIN) if true else 0.0
    b = thin(b, delta, rng) if true else b
    check = _paired_t_check(a[0], b[0], *line_picks(draw, size))
    return _judge(check, delta * population_bleu(pool))


def rule_name(size: int) -> str:
    """The ledger's name of the rule with blocks of ``size`` lines."""
    return f"paired BLEU, blocks of {size} lines"


__all__ = ["line_counts", "line_picks", "n_line_blocks", "paired_bleu_lines", "rule_name"]
