"""The beam search of the phrase-based decoder over one sentence (Koehn 2010, Sec. 6.2-6.3):
stacks of partial translations, recombination, pruning and the expansion loop.
:mod:`rnnlib.smt.decoder` holds the model (features, weights, translation options, future
costs, n-best lists) and calls :class:`Search` for each sentence.

This module is plain Python and imports nothing from rnnlib, so that it also serves as the
decoder's fast path: :mod:`rnnlib.smt.compiled` compiles it unchanged with Cython, with the C
types of ``stack_search.pxd`` beside it (about 1.8 times as fast; BENCHMARKS.md). The compiled and
the plain search give identical translations, features and scores
(``tests/test_smt_compiled.py``).
"""

from __future__ import annotations

import heapq
import math

LN10 = math.log(10.0)


class Option:
    """A translation option of one source span: target ``words``; ``feats``, the values of
    ``PHRASE_FEATURES`` then of the extra features; ``static``, their weighted sum;
    ``lm_est``, ``ln p(words)`` with no context, one per LM; ``est = static + sum_k w_k lm_est_k``,
    the estimate used for the future cost and for early discarding."""

    __slots__ = ("words", "feats", "static", "est", "lm_est")

    def __init__(self, words, feats, static, lm_est, est):
        self.words, self.feats, self.static, self.lm_est, self.est = (
            words,
            feats,
            static,
            lm_est,
            est,
        )


class Hyp:
    """A partial translation: ``prev`` extended by option ``opt``. ``score``: model score so far;
    ``total = score + future cost``; ``cov``: bitmask of the covered source words; ``end``: end
    (exclusive) of the last translated span; ``state``: the tuple of LM states; ``lm``: this
    step's log-probability (natural log) under each LM, a tuple; ``dist``: its jump length;
    ``sig``: hash of the output words (n-best only); ``arcs``: recombined rivals, kept for n-best
    lists (or ``None``)."""

    __slots__ = (
        "score",
        "total",
        "cov",
        "end",
        "state",
        "prev",
        "opt",
        "lm",
        "dist",
        "arcs",
        "sig",
    )

    def __init__(self, score, total, cov, end, state, prev, opt, lm, dist, sig):
        self.score, self.total, self.cov, self.end, self.state = score, total, cov, end, state
        self.prev, self.opt, self.lm, self.dist, self.sig = prev, opt, lm, dist, sig
        self.arcs = None


def lm_extend(lm, cache: dict, state, words) -> tuple:
    """``(ln p(words | state), state after words)`` under the KenLM model ``lm``. ``cache``
    remembers ``(state, word) -> (log10 p(word | state), next state)``: options of different
    spans often start with the same words."""
    lp = 0.0
    for word in words:
        key = (state, word)
        hit = cache.get(key)
        if hit is None:
            nxt = type(state)()  # a kenlm.State
            hit = cache[key] = (lm.BaseScore(state, word, nxt), nxt)
        lp += hit[0]
        state = hit[1]
    return lp * LN10, state


def output_sig(sig: int, words) -> int:
    """Extend the hash ``sig`` of an output prefix by ``words``, word by word, so that equal
    strings reached by different segmentations get equal signatures."""
    for word in words:
        sig = hash((sig, word))
    return sig


def chain(h: Hyp) -> list:
    """The hypotheses from ``h`` back to the root (excluded), last step first."""
    out = []
    while h.prev is not None:
        out.append(h)
        h = h.prev
    return out


def path_features(path: list, size: int, index: tuple, dist_at: int, lm_index: tuple) -> list:
    """The feature vector (a list of ``size`` floats) of a derivation ``path`` (its hypotheses, in
    any order): each step's option features summed at ``index``, minus its jump length at
    ``dist_at``, its LM scores summed at ``lm_index``; each position sums in the order of
    ``path``."""
    f = [0.0] * size
    for h in path:
        feats = h.opt.feats
        for k in range(len(index)):
            f[index[k]] += feats[k]
        f[dist_at] -= h.dist
        lm = h.lm
        for k in range(len(lm_index)):
            f[lm_index[k]] += float(lm[k])  # (as float64, whatever float type an LM gives)
    return f


def derivations(
    finals: list, nbest: int, size: int, index: tuple, dist_at: int, lm_index: tuple
) -> list:
    """The ``nbest`` best distinct translations, best first, as ``(words, features, score)``
    (``features`` by :func:`path_features`). Best-first enumeration of derivations: a derivation
    is a final hypothesis (``finals``, best first) whose chain may be switched, at one
    hypothesis, to one of its recombined arcs (and so on further back); each switch costs
    ``h.score - arc.score``. At most ``20 * nbest`` derivations are tried."""
    # heap entries: (-score, tie, parent path list, k, head): path = parent[:k] + chain(head)
    heap = [(-h.score, t, None, 0, h) for t, h in enumerate(finals[:nbest])]
    heapq.heapify(heap)
    tie = len(heap)
    out = []
    seen = set()
    pops = 0
    while heap and len(out) < nbest and pops < 20 * nbest:
        neg, _, parent, k0, head = heapq.heappop(heap)
        pops += 1
        path = (parent[:k0] if parent else []) + chain(head)
        words = tuple([wd for h in reversed(path) for wd in h.opt.words])
        if words not in seen:
            seen.add(words)
            out.append((words, path_features(path, size, index, dist_at, lm_index), -neg))
        if nbest == 1:
            break
        for k in range(k0, len(path)):
            hk = path[k]
            if hk.arcs:
                for a in hk.arcs:
                    heapq.heappush(heap, (neg + hk.score - a.score, tie, path, k, a))
                    tie += 1
    return out


def new_arcs(h: Hyp) -> list:
    """Give ``h`` an empty list of arcs and return it."""
    h.arcs = []
    return h.arcs


class Search:
    """The beam search over one sentence (Koehn 2010, Sec. 6.2-6.3).

    ``stacks[m]`` maps a recombination key ``(coverage, end, LM states)`` to the best hypothesis
    covering ``m`` source words; ``thresholds[m]``: the lowest ``total`` still admitted (raised
    when the stack is pruned full); ``bests[m]``: the best ``total`` seen (for the beam threshold).
    The LMs enter through the start states, :meth:`extend`, :meth:`finish`, :meth:`prefetch`
    and ``Hyp.lm`` only. ``dec``: the :class:`rnnlib.smt.decoder.Decoder` whose weights, LMs,
    translation options and future costs the search uses; ``src``: the source words.
    """

    def __init__(self, dec, src, keep_arcs: bool):
        cfg, w = dec.config, dec.weights
        self.n = n = len(src)
        self.lms = dec.lms
        for m in self.lms:
            m.reset()
        self.batched = [k for k, m in enumerate(self.lms) if m.batched]
        # one LM (the baseline): the same arithmetic without the loops over LMs (a flag, not
        # bound methods kept on self, which would make every search a reference cycle)
        self.one = len(self.lms) == 1
        self.keep_arcs = keep_arcs  # keep recombined rivals (n-best lists)
        self.stack_size = cfg.stack_size
        self.dl = cfg.distortion_limit
        self.beam = math.log(cfg.beam_threshold)
        self.w_dist, self.w_lms = dec.distortion_weight, w[dec.lm_index]
        opts = dec._options(src)
        self.fc = dec._future_cost_table(opts, n)
        # per start i: (end j, coverage mask of i:j, options or None), by increasing j
        self.span_opts = [
            [
                (j, ((1 << j) - 1) ^ ((1 << i) - 1), opts.get((i, j)))
                for j in range(i + 1, min(n, i + cfg.max_phrase_len) + 1)
            ]
            for i in range(n)
        ]
        self.full = (1 << n) - 1
        self.fc_cache: dict = {}
        self.lm_cache: dict = {}  # LM states -> {option: extend(states, option's words)}
        self.stacks = [dict() for _ in range(n + 1)]
        self.thresholds = [-math.inf] * (n + 1)
        self.bests = [-math.inf] * (n + 1)
        start = tuple(m.begin() for m in self.lms)
        self.stacks[0][None] = Hyp(
            0.0, self.future(0), 0, 0, start, None, None, (0.0,) * len(self.lms), 0, 0
        )

    def run(self) -> list:
        """Expand the pruned stacks ``0 .. n-1`` in turn; the complete hypotheses, best first."""
        for m in range(self.n):
            if self.stacks[m]:
                for h in self.prune(m):
                    self.expand(h)
        return sorted(self.stacks[self.n].values(), key=lambda h: -h.total)

    def future(self, cov: int) -> float:
        """Future cost of coverage ``cov``: the sum of ``fc`` over its maximal uncovered spans."""
        v = self.fc_cache.get(cov)
        if v is None:
            n, fc = self.n, self.fc
            v = 0.0
            i = 0
            while i < n:
                if cov >> i & 1:
                    i += 1
                    continue
                j = i
                while j < n and not cov >> j & 1:
                    j += 1
                v += fc[i][j]
                i = j
            self.fc_cache[cov] = v
        return v

    def prune(self, m: int) -> list:
        """Cut stack ``m`` to its ``stack_size`` best and to ``beam`` below its best, on ``total``;
        raise its admission threshold if it is full. Returns the survivors, best first."""
        hyps = sorted(self.stacks[m].values(), key=lambda h: -h.total)
        cut = hyps[0].total + self.beam
        hyps = [h for h in hyps[: self.stack_size] if h.total >= cut]
        self.stacks[m] = {(h.cov, h.end, h.state): h for h in hyps}
        if len(hyps) >= self.stack_size:
            self.thresholds[m] = max(self.thresholds[m], hyps[-1].total)
        return hyps

    def extend(self, states: tuple, words) -> tuple:
        """``(weighted LM score, per-LM ln p(words | state), next states)``."""
        lps, nxt = [], []
        for m, st in zip(self.lms, states):
            lp, new = m.extend(st, words)
            lps.append(lp)
            nxt.append(new)
        return self._weighted(lps), tuple(lps), tuple(nxt)

    def finish(self, lps: tuple, states: tuple) -> tuple:
        """``(weighted LM score, per-LM scores)`` of a step that completes the sentence: each
        LM's ``lps`` plus its ``ln p(</s> | state)``."""
        lps = [lp + m.end(st) for m, lp, st in zip(self.lms, lps, states)]
        return self._weighted(lps), tuple(lps)

    def _extend_one(self, states: tuple, words) -> tuple:
        lp, new = self.lms[0].extend(states[0], words)
        return self.w_lms[0] * lp, (lp,), (new,)

    def _finish_one(self, lps: tuple, states: tuple) -> tuple:
        lp = lps[0] + self.lms[0].end(states[0])
        return self.w_lms[0] * lp, (lp,)

    def _weighted(self, lps) -> float:
        w = self.w_lms
        v = w[0] * lps[0]
        for k in range(1, len(lps)):
            v = v + w[k] * lps[k]
        return v

    def prefetch(self, h: Hyp, lm_cache: dict) -> None:
        """Give each batched LM, in one call, the words of every option of ``h`` that could
        enter a stack now (thresholds only rise, so the search asks for no other) and whose
        score is not cached."""
        cov, end, score = h.cov, h.end, h.score
        n, dl, w_dist = self.n, self.dl, self.w_dist
        gap = ((cov + 1) & ~cov).bit_length() - 1
        words = []
        for i in range(max(gap, end - dl), min(n - 1, end + dl) + 1):
            if cov >> i & 1:
                continue
            base = score - w_dist * abs(i - end)
            for j, mask, olist in self.span_opts[i]:
                if cov & mask:
                    break
                if olist is None:
                    continue
                if gap < i and j - gap > dl:
                    break
                new_cov = cov | mask
                fut, floor = self.future(new_cov), self.thresholds[new_cov.bit_count()]
                for o in olist:
                    if base + o.est + fut < floor:
                        break
                    if o not in lm_cache:
                        words.append(o.words)
        if words:
            for k in self.batched:
                self.lms[k].prefetch([(h.state[k], ws) for ws in words])

    def expand(self, h: Hyp) -> None:
        """Try every option that may follow ``h``: untranslated spans within the distortion
        limit (from which the first gap stays reachable), options best first until one cannot
        enter its stack (early discarding); the survivors go to :meth:`add`."""
        cov, end, state, score = h.cov, h.end, h.state, h.score
        n, dl, full, beam = self.n, self.dl, self.full, self.beam
        w_dist = self.w_dist
        thresholds, bests = self.thresholds, self.bests
        lm_cache = self.lm_cache.get(
            state
        )  # hypotheses of other coverages often end in these states
        if lm_cache is None:
            lm_cache = self.lm_cache[state] = {}
        if self.batched:
            self.prefetch(h, lm_cache)
        gap = ((cov + 1) & ~cov).bit_length() - 1  # first uncovered position
        for i in range(max(gap, end - dl), min(n - 1, end + dl) + 1):
            if cov >> i & 1:
                continue
            dist = abs(i - end)
            base = score - w_dist * dist
            for j, mask, olist in self.span_opts[i]:
                if cov & mask:
                    break
                if olist is None:
                    continue
                if gap < i and j - gap > dl:
                    break  # could not jump back to the first gap any more
                new_cov = cov | mask
                fut = self.future(new_cov)
                t = new_cov.bit_count()
                for o in olist:
                    if base + o.est + fut < thresholds[t]:
                        break
                    hit = lm_cache.get(o)
                    if hit is None:
                        hit = lm_cache[o] = (
                            self._extend_one(state, o.words)
                            if self.one
                            else self.extend(state, o.words)
                        )
                    wlp, lp, new_state = hit
                    if new_cov == full:
                        wlp, lp = (
                            self._finish_one(lp, new_state)
                            if self.one
                            else self.finish(lp, new_state)
                        )
                    new_score = base + o.static + wlp
                    total = new_score + fut
                    if total < thresholds[t] or total < bests[t] + beam:
                        continue
                    self.add(h, o, new_cov, t, j, new_state, new_score, total, lp, dist)

    def add(
        self,
        prev: Hyp,
        o: Option,
        cov: int,
        t: int,
        end: int,
        state,
        score: float,
        total: float,
        lp: float,
        dist: int,
    ) -> None:
        """Put ``prev`` extended by ``o`` into stack ``t``, recombining it with the hypothesis of
        equal ``(cov, end, state)``: the better one stays, the other becomes one of its arcs
        (n-best only, and only if it outputs a different string). A stack grown past twice its
        size is pruned."""
        stack = self.stacks[t]
        key = (cov, end, state)
        old = stack.get(key)
        keep_arcs = self.keep_arcs
        sig = output_sig(prev.sig, o.words) if keep_arcs else 0
        if old is not None and old.total >= total:
            if keep_arcs and sig != old.sig:
                hyp = Hyp(score, total, cov, end, state, prev, o, lp, dist, sig)
                (old.arcs if old.arcs is not None else new_arcs(old)).append(hyp)
            return
        hyp = Hyp(score, total, cov, end, state, prev, o, lp, dist, sig)
        if old is not None and keep_arcs:
            hyp.arcs = old.arcs or []
            old.arcs = None  # its alternatives now hang on the winner only
            if sig != old.sig:
                hyp.arcs.append(old)
        stack[key] = hyp
        if total > self.bests[t]:
            self.bests[t] = total
        if len(stack) > 2 * self.stack_size:
            self.prune(t)
