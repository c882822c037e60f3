# C types for stack_search.py when rnnlib.smt.compiled compiles it with Cython (the decoder's
# fast path). Cython reads this file beside the .py of the same name; Python ignores it. The
# types are those the plain module's values already have: floats are C doubles (IEEE, the same
# arithmetic as Python's floats), positions and counts are C longs; coverages stay Python ints
# (a sentence may be longer than 64 words).
import cython


cdef class Option:
    cdef public object words, feats, lm_est
    cdef public double static, est


cdef class Hyp:
    cdef public double score, total
    cdef public object cov, state, lm, arcs, sig
    cdef public Hyp prev
    cdef public Option opt
    cdef public long end, dist


@cython.locals(lp=cython.double)
cpdef tuple lm_extend(object lm, dict cache, object state, object words)

cpdef object output_sig(object sig, object words)

@cython.locals(f=list, h=Hyp, k=cython.long, feats=tuple, lm=tuple)
cpdef list path_features(list path, long size, tuple index, long dist_at, tuple lm_index)

@cython.locals(
    heap=list, tie=cython.long, out=list, seen=set, pops=cython.long, neg=cython.double,
    k0=cython.long, head=Hyp, path=list, words=tuple, k=cython.long, hk=Hyp, a=Hyp,
)
cpdef list derivations(list finals, long nbest, long size, tuple index, long dist_at,
                       tuple lm_index)


cdef class Search:
    cdef public long n, stack_size, dl
    cdef public double beam, w_dist
    cdef public bint one
    cdef public object lms, batched, keep_arcs, w_lms, fc, span_opts, full, fc_cache, lm_cache
    cdef public object stacks, thresholds, bests

    @cython.locals(i=cython.long, j=cython.long, n=cython.long)
    cpdef future(self, object cov)

    cpdef tuple _extend_one(self, tuple states, object words)

    cpdef tuple _finish_one(self, tuple lps, tuple states)

    @cython.locals(
        end=cython.long, score=cython.double, n=cython.long, dl=cython.long,
        beam=cython.double, w_dist=cython.double, gap=cython.long, i=cython.long,
        dist=cython.long, base=cython.double, j=cython.long, fut=cython.double, t=cython.long,
        o=Option, wlp=cython.double, new_score=cython.double, total=cython.double,
        thresholds=list, bests=list, lm_cache=dict, hit=tuple, olist=list,
    )
    cpdef expand(self, Hyp h)

    @cython.locals(old=Hyp, hyp=Hyp, stack=dict)
    cpdef add(self, Hyp prev, Option o, object cov, long t, long end, object state,
              double score, double total, object lp, long dist)
