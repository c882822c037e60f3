"""Independent MERT seeds: each seed's own starting point around the decoder's defaults and each
of its optimisations' own random stream, for systems whose rows are read over several MERT seeds
(paper A's Table 1: the seeds' spread is the noise its claims are judged against, so the seeds
must be independent draws of it).

:func:`rnnlib.smt.tune.mert_loop` seeds optimisation ``k`` of a run with ``seed + k``. With an
integer seed, seed ``s`` at optimisation ``k`` then draws what seed ``s + 1`` drew at ``k - 1``,
and every seed starts from the same defaults. Here

* :class:`OwnStreams` is a seed for which ``seed + k`` is the stream :func:`mert_stream`
  ``(s, k)`` = ``[s, k + 1]`` (entropy for ``np.random.default_rng``): no two pairs
  (seed, optimisation) share one. It keys its system (``smt/tuned``'s ``seed``) as
  ``{"seed": s, "streams": ...}``, never as an integer seed's key;
* :func:`drawn_start` draws seed ``s``'s starting point from the stream ``[s, 0]``: every
  tuneable default weight times a log-normal factor ``exp(spread * z)``, ``z ~ N(0, 1)``;
  :func:`drawn_weights` gives it by feature name, as ``SMTConfig.start_weights`` takes it.

The same seed reproduces its start and its streams.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .decoder import default_weights
from .features import BASE_FEATURES, FIXED_WEIGHTS


def mert_stream(seed: int, k: int) -> list[int]:
    """The entropy of the random stream of MERT optimisation ``k`` (0, 1, ...) of seed
    ``seed``: ``[seed, k + 1]`` (``[seed, 0]`` draws the seed's start: :func:`drawn_start`)."""
    if seed < 0 or k < 0:
        raise ValueError(f"mert_stream: seed and k must be >= 0, got {seed}, {k}")
    return [int(seed), int(k) + 1]


@dataclass(frozen=True)
class OwnStreams:
    """MERT seed ``seed`` whose optimisation ``k`` draws from its own stream: ``self + k`` is
    :func:`mert_stream` ``(seed, k)``, where :func:`rnnlib.smt.tune.mert_loop` adds ``k`` to
    its seed. Pass it as ``SMTConfig.seed``; it keys the system as :meth:`to_dict`."""

    seed: int

    def __add__(self, k: int) -> list[int]:
        return mert_stream(self.seed, k)

    def to_dict(self) -> dict:
        return {"seed": int(self.seed), "streams": "own: optimisation k draws from [seed, k + 1]"}


def drawn_start(
    w0: np.ndarray, seed: int, spread: float, fixed: np.ndarray | None = None
) -> np.ndarray:
    """``(F,)``: the starting weights ``w0 (F,)`` with every free weight (``fixed (F,) bool``
    marks those MERT keeps) times ``exp(spread * z)``, ``z ~ N(0, 1)`` drawn per weight from
    seed ``seed``'s stream ``[seed, 0]``: a factor with median 1 that keeps each weight's sign
    (``spread`` 0.5: between 0.38 and 2.7 times the default with 95% probability)."""
    w0 = np.asarray(w0, dtype=np.float64)
    if spread < 0:
        raise ValueError(f"drawn_start: spread must be >= 0, got {spread}")
    z = np.random.default_rng([int(seed), 0]).standard_normal(len(w0))
    free = np.ones(len(w0), dtype=bool) if fixed is None else ~np.asarray(fixed, dtype=bool)
    return np.where(free, w0 * np.exp(spread * z), w0)


def drawn_weights(extra: Sequence[str], seed: int, spread: float) -> dict[str, float]:
    """:func:`drawn_start` of the decoder's defaults (:func:`rnnlib.smt.decoder.default_weights`)
    by feature name: Moses' features (``BASE_FEATURES``, the unknown-word penalty kept fixed),
    then the extra features named ``extra`` (each at its default 0.1 before the draw)."""
    names = list(BASE_FEATURES) + list(extra)
    fixed = np.zeros(len(names), dtype=bool)
    fixed[list(FIXED_WEIGHTS)] = True
    w = drawn_start(default_weights(len(extra)), seed, spread, fixed)
    return {n: float(v) for n, v in zip(names, w)}


__all__ = ["OwnStreams", "drawn_start", "drawn_weights", "mert_stream"]
