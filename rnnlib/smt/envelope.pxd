# C types for envelope.py when rnnlib.smt.compiled compiles it with Cython (MERT's fast path).
# Cython reads this file beside the .py of the same name; Python ignores it. The floats are C
# doubles (IEEE, the same arithmetic as numpy's float64), indices are C longs. Its indexing is
# unchecked and C's division is used (no zero check: each divisor is positive), as the directives
# on the first line of envelope.py say.
import cython


@cython.locals(
    count=cython.long, s=cython.long, lo=cython.long, hi=cython.long, cur=cython.long,
    i=cython.long, r=cython.long, best=cython.long, bx=cython.double, bb=cython.double,
    ac=cython.double, bc=cython.double, bi=cython.double, x=cython.double,
)
cpdef long sweep(double[::1] a, double[::1] b, long[::1] starts, long[::1] first,
                 double[::1] xs, long[::1] prev, long[::1] new, long[::1] rounds)
