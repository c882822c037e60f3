"""Blocks of consecutive lines (rnnlib.line_blocks): the block bootstrap of the user's own test
file, which knows no chapters but keeps its documents in order."""

import numpy as np
import pytest

from rnnlib.line_blocks import LINES_PER_BLOCK, line_blocks
from rnnlib.resampling import BlockResampler


def test_a_block_is_size_consecutive_lines_of_the_file():
    assert line_blocks(np.arange(7), 3).tolist() == [0, 0, 0, 1, 1, 1, 2]
    # the positions of the evaluated lines: dropped lines leave their block shorter, an
    # evaluated line keeps the block of its place in the file, not of its rank
    assert line_blocks(np.array([0, 2, 3, 9, 10, 31]), 10).tolist() == [0, 0, 0, 0, 1, 3]
    size = LINES_PER_BLOCK
    assert np.bincount(line_blocks(np.arange(3 * size + 1))).tolist() == [size, size, size, 1]
    assert line_blocks(np.arange(5), 1).tolist() == list(range(5))  # the sentence bootstrap
    assert line_blocks(np.array([], dtype=int), 4).shape == (0,)


@pytest.mark.parametrize(
    "positions, size, match",
    [
        (np.arange(4).reshape(2, 2), 2, "1-D"),
        (np.arange(4), 0, "at least 1"),
        (np.array([-1, 0]), 2, "non-negative"),
        (np.array([0.5, 1.0]), 2, "integers"),
    ],
)
def test_bad_positions_or_sizes_are_refused(positions, size, match):
    with pytest.raises(ValueError, match=match):
        line_blocks(positions, size)


def test_a_resample_draws_runs_of_consecutive_lines_whole():
    """With the chapters' resampler, every drawn block is a run of consecutive lines: a document
    of the file that falls inside a block is drawn whole or not at all."""
    ids = line_blocks(np.arange(53), 10)
    rng = np.random.default_rng(0)
    sampler = BlockResampler(ids)
    assert sampler.n_blocks == 6
    for _ in range(20):
        idx = sampler.draw(rng)
        runs = np.split(idx, np.flatnonzero(np.diff(idx) != 1) + 1)
        for run in runs:  # each run is one or more whole blocks
            assert run[0] % 10 == 0 and (run[-1] % 10 == 9 or run[-1] == 52)
