"""rnnlib.stats: where the intervals end, and which draws each bootstrap makes."""

from __future__ import annotations

import numpy as np
import pytest

from rnnlib import stats


def test_percentile_interval_ends_at_exactly_2_5_and_97_5_percent():
    x = np.random.default_rng(0).normal(size=1001)
    low, high = stats.percentile_interval(x)
    assert low == np.percentile(x, 2.5) and high == np.percentile(x, 97.5)
    low, high = stats.percentile_interval(x, 0.9)
    assert (low, high) == tuple(np.percentile(x, [5, 95]))
    with_nan = np.append(x, np.nan)
    assert np.isnan(stats.percentile_interval(with_nan)).all()
    assert (stats.percentile_interval(with_nan, nan=True) == stats.percentile_interval(x)).all()
    with pytest.raises(ValueError, match="level"):
        stats.percentile_interval(x, 1.0)


def test_bootstrap_mean_resamples_the_values_and_shares_a_generator():
    values = np.arange(20.0)
    mean, low, high = stats.bootstrap_mean(values, 500, 3)
    assert mean == 9.5 and low < 9.5 < high
    rng = np.random.default_rng(3)
    means = values[rng.integers(0, 20, size=(500, 20))].mean(1)
    assert (low, high) == tuple(np.percentile(means, [2.5, 97.5]))
    # a Generator is used as it is: two calls continue one stream
    shared = np.random.default_rng(5)
    first, second = (
        stats.bootstrap_mean(values, 50, shared),
        stats.bootstrap_mean(values, 50, shared),
    )
    assert first != second
    assert first == stats.bootstrap_mean(values, 50, 5)
    constant = stats.bootstrap_mean(np.full(7, 2.0), 100, 0)
    assert constant == (2.0, 2.0, 2.0)


def test_paired_difference_is_the_mean_of_the_differences_and_needs_pairs():
    a, b = np.array([3.0, 4.0, 5.0, 6.0]), np.array([1.0, 1.0, 2.0, 2.0])
    assert stats.paired_difference(a, b, 200, 1) == stats.bootstrap_mean(a - b, 200, 1)
    assert stats.paired_difference(a, a, 200, 1) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="not paired"):
        stats.paired_difference(a, b[:3])


def test_mean_difference_resamples_each_sample_on_its_own():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])
    diff, low, high = stats.mean_difference(a, b, 300, 4)
    assert diff == 2.0 - 15.0 and low <= diff <= high
    rng = np.random.default_rng(4)
    expect = [rng.choice(a, 3).mean() - rng.choice(b, 2).mean() for _ in range(300)]
    assert (low, high) == tuple(np.percentile(expect, [2.5, 97.5]))
    with pytest.raises(ValueError, match="empty"):
        stats.mean_difference(a, [])


def test_seeds_difference_adds_the_two_groups_variances():
    diff, se = stats.seeds_difference([1.0, 2.0, 3.0], [0.0, 0.0, 3.0])
    assert diff == pytest.approx(1.0)
    assert se == pytest.approx(np.sqrt(1.0 / 3 + 3.0 / 3))
    with pytest.raises(ValueError, match="two runs"):
        stats.seeds_difference([1.0], [1.0, 2.0])


def test_bootstrap_rounds_draw_their_resamples_in_turn_from_one_generator():
    seen = []
    out = stats.bootstrap_rounds(
        5, lambda i, j: seen.append((i, j)) or (i.sum(), j.sum()), 3, np.random.default_rng(2), 2
    )
    assert out.shape == (3, 2)
    rng = np.random.default_rng(2)
    for i, j in seen:  # round by round: the first resample, then the second
        assert (i == rng.integers(0, 5, 5)).all() and (j == rng.integers(0, 5, 5)).all()
    assert (out == [(i.sum(), j.sum()) for i, j in seen]).all()
