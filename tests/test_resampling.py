"""The block bootstrap: whole blocks drawn, and its variance against the closed form."""

import numpy as np
import pytest

from rnnlib.resampling import BlockResampler, chapter_blocks


def test_chapter_blocks_number_book_chapters_in_order_of_appearance():
    keys = np.array([[8, 2, 1], [8, 2, 2], [8, 1, 5], [44, 1, 1], [8, 2, 3]])
    assert chapter_blocks(keys).tolist() == [0, 0, 1, 2, 0]
    with pytest.raises(ValueError, match="keys must be"):
        chapter_blocks(np.arange(4))


def test_each_resample_is_made_of_whole_blocks():
    blocks = np.array(["a", "a", "b", "c", "c", "c"])
    sampler = BlockResampler(blocks)
    assert sampler.n_blocks == 3
    rng = np.random.default_rng(1)
    for _ in range(50):
        idx = sampler.draw(rng)
        drawn = blocks[idx]
        for label, size in (("a", 2), ("b", 1), ("c", 3)):
            assert (drawn == label).sum() % size == 0  # a block comes whole or not at all
    with pytest.raises(ValueError, match="non-empty"):
        BlockResampler([])


def test_singleton_blocks_are_the_ordinary_bootstrap():
    sampler = BlockResampler(np.arange(7))
    sizes = {len(i) for i in sampler.draws(30, seed=3)}
    assert sizes == {7}


def test_variance_of_the_mean_matches_the_closed_form_for_equal_blocks():
    """With B blocks of equal size m, the block-bootstrap mean is the mean of B block means drawn
    with replacement: its variance is the population variance of the block means over B. A
    sentence bootstrap on the same clustered data gives a variance several times smaller."""
    rng = np.random.default_rng(0)
    n_blocks, m = 40, 10
    block_effect = rng.normal(0, 1, n_blocks).repeat(m)
    values = block_effect + rng.normal(0, 0.3, n_blocks * m)
    blocks = np.arange(n_blocks).repeat(m)
    means = [values[i].mean() for i in BlockResampler(blocks).draws(4000, seed=5)]
    expected = values.reshape(n_blocks, m).mean(1).var() / n_blocks
    assert np.var(means) == pytest.approx(expected, rel=0.1)
    iid = [values[i].mean() for i in BlockResampler(np.arange(len(values))).draws(4000, seed=5)]
    assert np.var(iid) < expected / 3
