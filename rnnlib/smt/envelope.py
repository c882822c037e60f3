# cython: boundscheck=False, wraparound=False, cdivision=True
"""MERT's upper envelopes swept one sentence at a time (Och 2003, Sec. 6): the fast path of
:func:`rnnlib.smt.tune.envelopes`.

Along a line ``w + gamma d`` in weight space, candidate ``k`` of a sentence scores
``a_k + gamma b_k`` (``a = F w``, ``b = F d``); the sentence's 1-best, as a function of
``gamma``, follows the upper envelope of its lines. :func:`sweep` walks each envelope from
``gamma = -inf`` (the smallest slope) to ``+inf``: from the current line ``c``, the next one is,
among the lines of larger slope, the one that crosses ``c`` first, at
``x = (a_c - a_k) / (b_k - b_c)`` (the steepest on ties, then the lowest row).

:func:`rnnlib.smt.tune.envelopes` makes the same walk for every sentence at once with numpy,
one step of every envelope per round; this module is plain Python and imports nothing, so that
:mod:`rnnlib.smt.compiled` compiles it unchanged with Cython, with the C types of
``envelope.pxd`` (the floats are C doubles: the same arithmetic, in the same order, so the
breakpoints are identical; ``tests/test_smt_tune.py``). Run as plain Python it is correct but
slow, and :mod:`rnnlib.smt.tune` uses numpy instead.
"""

from __future__ import annotations


def sweep(a, b, starts, first, xs, prev, new, rounds) -> int:
    """Walk the upper envelope of every sentence.

    ``a``, ``b`` (N,) float64: each row's intercept and slope; sentence ``s`` owns rows
    ``starts[s]:starts[s + 1]`` (``starts`` (S + 1,) int64). Fills ``first`` (S,) int64 with each
    sentence's best row at ``gamma = -inf`` (the smallest slope, then the largest intercept, then
    the lowest row) and, per breakpoint, ``xs`` (where it is), ``prev`` and ``new`` (the rows best
    before and after it) and ``rounds`` (its rank on its sentence's envelope, from 0), sentence
    by sentence, each in increasing ``x``; these four have room for N entries (an envelope of
    ``n`` lines has at most ``n - 1`` breakpoints). Returns the number of breakpoints."""
    count = 0
    for s in range(len(starts) - 1):
        lo, hi = starts[s], starts[s + 1]
        cur = lo
        for i in range(lo + 1, hi):
            if b[i] < b[cur] or (b[i] == b[cur] and a[i] > a[cur]):
                cur = i
        first[s] = cur
        r = 0
        while True:
            best = -1
            bx = 0.0
            bb = 0.0
            ac, bc = a[cur], b[cur]
            for i in range(lo, hi):
                bi = b[i]
                if bi > bc:
                    x = (ac - a[i]) / (bi - bc)
                    if best < 0 or x < bx or (x == bx and bi > bb):
                        best, bx, bb = i, x, bi
            if best < 0:
                break
            xs[count], prev[count], new[count], rounds[count] = bx, cur, best, r
            count += 1
            r += 1
            cur = best
    return count
