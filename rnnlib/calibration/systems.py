"""Two simulated systems on a drawn test set, of equal quality or one ahead by a known amount.

On a :class:`~rnnlib.calibration.pool.Draw`, system ``a`` and system ``b`` share the pool's two
translations ``x`` and ``y`` unit by unit (a drawn chapter, or a sentence): on each unit a fair
coin gives ``x`` to one and ``y`` to the other (:func:`pair`). The two are then identical in
expectation -- the population BLEU of each is that of ``(x + y) / 2`` over the pool -- while on
any test set they differ as two real systems do, sentence by sentence, and (by chapter) as
much within a chapter as two versions of the Bible differ there. A known effect is made by
*thinning* a system's n-gram matches (:func:`thin`): each match is kept with probability
``1 - delta``, so every precision, and the population BLEU, scales by ``1 - delta`` exactly
(the lengths, and so the brevity penalty, are untouched).
"""

from __future__ import annotations

import numpy as np

from .fast_bleu import ORDER, corpus_bleu
from .pool import Draw, Pool

MATCHES = slice(2, 2 + ORDER)


def pair(pool: Pool, draw: Draw, rng: np.random.Generator, seeds: int = 1, apart=False):
    """``(a, b)``, each ``(seeds, n, 10)``: per seed a fair coin per unit of ``draw`` gives
    ``x`` to ``a`` and ``y`` to ``b``, or the other way round (a paired comparison: the two
    always differ). ``apart``: each run of each system its own coins (independent runs, as
    two systems' MERT or training seeds: equal outputs where the coins agree)."""
    units = int(draw.unit.max()) + 1
    xs, ys = pool.x[draw.idx][None], pool.y[draw.idx][None]
    c = (rng.random((seeds, units)) < 0.5)[:, draw.unit][..., None]
    if not apart:
        return np.where(c, xs, ys), np.where(c, ys, xs)
    other = (rng.random((seeds, units)) < 0.5)[:, draw.unit][..., None]
    return np.where(c, xs, ys), np.where(other, xs, ys)


def thin(stats: np.ndarray, delta, rng: np.random.Generator) -> np.ndarray:
    """``stats (..., n, 10)`` with each n-gram match kept with probability ``1 - delta``
    (``delta``: a number, or ``(n,)`` one per sentence)."""
    out = stats.copy()
    keep = 1 - np.broadcast_to(np.asarray(delta, dtype=float)[..., None], stats[..., MATCHES].shape)
    out[..., MATCHES] = rng.binomial(stats[..., MATCHES].astype(np.int64), keep)
    return out


def expected_thinned(stats: np.ndarray, delta) -> np.ndarray:
    """The expectation of :func:`thin`: the matches times ``1 - delta``."""
    out = np.array(stats, dtype=float)
    out[..., MATCHES] *= 1 - np.asarray(delta, dtype=float)[..., None]
    return out


def base(pool: Pool) -> np.ndarray:
    """``(N, 10)``: each sentence's expected statistics of a system of :func:`pair`."""
    return (pool.x + pool.y) / 2


def population_bleu(pool: Pool) -> float:
    """The population BLEU of either system of :func:`pair` (the pool's ``(x + y) / 2``)."""
    return float(corpus_bleu((pool.x.sum(0) + pool.y.sum(0)) / 2))


def delta_for_gain(gain: float) -> float:
    """The thinning that puts ``a`` ahead of ``b`` by ``gain`` of ``b``'s BLEU (``0.017``: 1.7%):
    ``1 / (1 - delta) - 1 = gain``."""
    return gain / (1 + gain)


def scores(stats: np.ndarray) -> np.ndarray:
    """Corpus BLEU of ``stats (..., n, 10)`` over its sentences: ``(...)``."""
    return corpus_bleu(stats.sum(-2))


def bisect(f, target: float, lo: float = 0.0, hi: float = 0.95, steps: int = 50) -> float:
    """``x`` in ``[lo, hi]`` where the increasing ``f`` reaches ``target``."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


__all__ = [
    "base",
    "bisect",
    "delta_for_gain",
    "expected_thinned",
    "pair",
    "population_bleu",
    "scores",
    "thin",
]
