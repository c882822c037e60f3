"""A phrase-based stack decoder with a log-linear model (Koehn 2010, Ch. 6; Koehn et al. 2003).

The translation ``e`` of a source sentence ``f`` maximises ``sum_n w_n h_n(e, f)`` (paper A,
Eq. 9). The features ``h_n`` (``BASE_FEATURES``, natural logs) are summed over the phrases of
a derivation:

* the four phrase-table scores ``log p(t|s), log p(s|t), log lex(t|s), log lex(s|t)``;
* the phrase penalty (+1 per phrase) and the word penalty (-1 per target word, as in Moses);
* the distance-based distortion ``-|start_k - end_{k-1}|`` (``end`` exclusive, 0 at the start);
* the n-gram LM ``log p(e)`` with ``<s>`` and ``</s>`` (KenLM);
* any extra phrase-pair features (:mod:`rnnlib.smt.features`).

Search (Koehn 2010, Sec. 6.2-6.3): hypotheses covering ``m`` source words live in stack
``m``; a hypothesis is expanded by every untranslated span of at most ``max_phrase_len``
words that respects the distortion limit (the jump to it, and, as in Moses, the jump from its
end back to the first untranslated word) and by the ``ttable_limit`` best options of that
span. Hypotheses with equal coverage, end position and LM state are recombined (the loser
is kept as an arc for n-best lists). Stacks are pruned to ``stack_size`` and to
``beam_threshold`` (log) below their best, on ``score + future cost``; the future cost of
the uncovered spans is precomputed for every span by dynamic programming over the best
options' scores (phrase features + LM of the phrase alone). Options are tried best-first
and the loop stops at the first one that cannot enter the target stack (early discarding).
N-best lists follow the recombination arcs (Moses' trellis-path method), distinct strings
only, popping at most ``20 * nbest`` derivations (Moses' ``n-best-factor``); arcs that yield
the same string as their winner are not kept.

Unknown source words are copied to the output with all phrase features 0.

Deviations
----------
* No lexicalised reordering model (Moses' default adds one; paper A does not say).
* The future cost does not include an estimate of future distortion.
* Early discarding uses the option's phrase-alone LM estimate before the real LM score.
"""
from __future__ import annotations

import gc
import heapq
import math
import multiprocessing as mp
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .phrases import FEATURES as TM_FEATURES

BASE_FEATURES = ("log " + TM_FEATURES[0], "log " + TM_FEATURES[1], "log " + TM_FEATURES[2],
                 "log " + TM_FEATURES[3], "phrase_penalty", "word_penalty", "distortion", "lm")
LN10 = math.log(10.0)


def default_weights(extra: int = 0) -> np.ndarray:
    """Moses' starting weights: 0.2 per phrase-table score and the phrase penalty, -1 for the
    word penalty (whose value is ``-count``, so this is a bonus per word), 0.3 distortion,
    0.5 LM; extra features start at 0.1."""
    return np.array([0.2, 0.2, 0.2, 0.2, 0.2, -1.0, 0.3, 0.5] + [0.1] * extra, dtype=np.float64)


@dataclass
class DecoderConfig:
    """Search settings (Moses names in brackets)."""

    stack_size: int = 50            # [-s] hypotheses kept per stack
    ttable_limit: int = 10          # [ttable-limit] options per source span
    distortion_limit: int = 6       # [distortion-limit]
    beam_threshold: float = 1e-5    # [b] prune hypotheses below this fraction of the best
    max_phrase_len: int = 7         # longest source phrase: looked up here, extracted by rnnlib.smt.pipeline
    nbest: int = 1                  # distinct translations returned per sentence
    workers: int = 2                # processes (sentences are independent)

    def __post_init__(self) -> None:
        for name in ("stack_size", "ttable_limit", "max_phrase_len", "nbest", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"DecoderConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.distortion_limit < 0:
            raise ValueError(f"DecoderConfig.distortion_limit must be >= 0, got {self.distortion_limit}")
        if not 0 < self.beam_threshold <= 1:
            raise ValueError(f"DecoderConfig.beam_threshold must be in (0, 1], got {self.beam_threshold}")


@dataclass
class Translation:
    """One decoded candidate: ``words`` (target tokens), ``features (F,)`` and ``score``."""

    words: list[str]
    features: np.ndarray
    score: float


class _Option:
    __slots__ = ("words", "feats", "static", "est", "lm_est")

    def __init__(self, words, feats, static, lm_est, est):
        self.words, self.feats, self.static, self.lm_est, self.est = words, feats, static, lm_est, est


class _Hyp:
    __slots__ = ("score", "total", "cov", "end", "state", "prev", "opt", "lm", "dist", "arcs", "sig")

    def __init__(self, score, total, cov, end, state, prev, opt, lm, dist, sig):
        self.score, self.total, self.cov, self.end, self.state = score, total, cov, end, state
        self.prev, self.opt, self.lm, self.dist, self.sig = prev, opt, lm, dist, sig
        self.arcs = None


class Decoder:
    """Decode sentences with a phrase table, a KenLM model and a weight vector.

    ``table``: ``{source words tuple: [(target words tuple, scores (4,) probabilities), ...]}``
    (e.g. :meth:`rnnlib.smt.phrases.PhraseTable.lookup`); ``lm``: a ``kenlm.Model``;
    ``extra``: feature tables (:class:`rnnlib.smt.features.FeatureTable`) whose values are
    appended to the phrase features; ``weights``: ``(len(feature_names),)``.
    """

    def __init__(self, table: dict, lm, weights: Sequence[float] | None = None,
                 config: DecoderConfig | None = None, extra: Sequence = ()):
        self.table = table
        self.lm = lm
        self.config = config or DecoderConfig()
        self.extra = list(extra)
        self.feature_names = list(BASE_FEATURES) + [n for t in self.extra for n in t.names]
        self.set_weights(default_weights(len(self.feature_names) - len(BASE_FEATURES))
                         if weights is None else weights)

    def set_weights(self, weights: Sequence[float]) -> None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(self.feature_names),):
            raise ValueError(f"weights: expected {len(self.feature_names)} values for {self.feature_names}, "
                             f"got shape {w.shape}")
        self.weights = w

    # -- translation options ---------------------------------------------------------------
    def _options(self, src: Sequence[str]):
        """Per span ``(i, j)``: options sorted by estimated score; and the future-cost table."""
        import kenlm
        cfg, w, lm = self.config, self.weights, self.lm
        n = len(src)
        w_static = np.r_[w[:6], w[8:]]  # weights of the per-phrase features
        w_lm = w[7]
        null = kenlm.State()
        lm.NullContextWrite(null)
        tmp_a, tmp_b = kenlm.State(), kenlm.State()
        opts: dict = {}
        best = {}
        for i in range(n):
            for j in range(i + 1, min(n, i + cfg.max_phrase_len) + 1):
                s = tuple(src[i:j])
                entries = self.table.get(s)
                if not entries:
                    if j == i + 1:
                        entries = [((src[i],), None)]  # unknown word: copy it
                    else:
                        continue
                cand = []
                for tgt, scores in entries:
                    if scores is None:
                        tm = [0.0, 0.0, 0.0, 0.0]
                    else:
                        tm = [math.log(max(float(x), 1e-30)) for x in scores]
                    feats = tm + [1.0, -float(len(tgt))]
                    for t in self.extra:
                        feats.extend(t.lookup(s, tgt))
                    static = float(np.dot(w_static, feats))
                    lm_est = 0.0
                    a, b = null, tmp_a
                    for word in tgt:
                        lm_est += lm.BaseScore(a, word, b)
                        a, b = b, (tmp_b if b is tmp_a else tmp_a)
                    lm_est *= LN10
                    cand.append(_Option(tgt, tuple(feats), static, lm_est, static + w_lm * lm_est))
                cand.sort(key=lambda o: -o.est)
                cand = cand[:cfg.ttable_limit]
                opts[i, j] = cand
                best[i, j] = cand[0].est
        # future cost: best split of every span (Koehn 2010, Fig. 6.11)
        fc = [[-math.inf] * (n + 1) for _ in range(n + 1)]
        for length in range(1, n + 1):
            for i in range(0, n - length + 1):
                j = i + length
                v = best.get((i, j), -math.inf)
                for k in range(i + 1, j):
                    c = fc[i][k] + fc[k][j]
                    if c > v:
                        v = c
                fc[i][j] = v
        return opts, fc

    # -- search ----------------------------------------------------------------------------
    def translate(self, src: Sequence[str], nbest: int | None = None) -> list[Translation]:
        """The ``nbest`` (default ``config.nbest``) best distinct translations of ``src``, best first."""
        enabled = gc.isenabled()
        gc.disable()  # the search makes ~1e5 short-lived objects per sentence; no cycles
        try:
            return self._translate(src, nbest)
        finally:
            if enabled:
                gc.enable()

    def _translate(self, src: Sequence[str], nbest: int | None) -> list[Translation]:
        import kenlm
        cfg, lm = self.config, self.lm
        nbest = cfg.nbest if nbest is None else nbest
        n = len(src)
        w = self.weights
        w_dist, w_lm = w[6], w[7]
        if n == 0:
            return [Translation([], np.zeros(len(w)), 0.0)]
        opts, fc = self._options(src)
        full = (1 << n) - 1
        dl = cfg.distortion_limit
        beam = math.log(cfg.beam_threshold)
        keep_arcs = nbest > 1
        span_opts = [[(j, ((1 << j) - 1) ^ ((1 << i) - 1), opts.get((i, j)))
                      for j in range(i + 1, min(n, i + cfg.max_phrase_len) + 1)] for i in range(n)]
        fc_cache: dict = {}

        def future(cov):
            v = fc_cache.get(cov)
            if v is None:
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
                fc_cache[cov] = v
            return v

        lm_cache: dict = {}
        eos_cache: dict = {}
        start = kenlm.State()
        lm.BeginSentenceWrite(start)
        root = _Hyp(0.0, future(0), 0, 0, start, None, None, 0.0, 0, 0)
        stacks = [dict() for _ in range(n + 1)]
        thresholds = [-math.inf] * (n + 1)
        bests = [-math.inf] * (n + 1)
        stacks[0][None] = root

        def prune(m):
            stack = stacks[m]
            hyps = sorted(stack.values(), key=lambda h: -h.total)
            cut = hyps[0].total + beam
            hyps = [h for h in hyps[:cfg.stack_size] if h.total >= cut]
            stacks[m] = {(h.cov, h.end, h.state): h for h in hyps}
            if len(hyps) >= cfg.stack_size:
                thresholds[m] = max(thresholds[m], hyps[-1].total)
            return hyps

        for m in range(n):
            if not stacks[m]:
                continue
            for h in prune(m):
                cov, end, state, score = h.cov, h.end, h.state, h.score
                gap = ((cov + 1) & ~cov).bit_length() - 1  # first uncovered position
                lo = max(gap, end - dl)
                hi = min(n - 1, end + dl)
                for i in range(lo, hi + 1):
                    if cov >> i & 1:
                        continue
                    dist = abs(i - end)
                    dist_score = -w_dist * dist
                    for j, mask, olist in span_opts[i]:
                        if cov & mask:
                            break
                        if olist is None:
                            continue
                        if gap < i and j - gap > dl:
                            break  # could not jump back to the first gap any more
                        new_cov = cov | mask
                        fut = future(new_cov)
                        t = new_cov.bit_count()
                        stack = stacks[t]
                        base = score + dist_score
                        for o in olist:
                            if base + o.est + fut < thresholds[t]:
                                break
                            key = (state, o)
                            hit = lm_cache.get(key)
                            if hit is None:
                                a = state
                                lp = 0.0
                                for word in o.words:
                                    b = kenlm.State()
                                    lp += lm.BaseScore(a, word, b)
                                    a = b
                                hit = lm_cache[key] = (lp * LN10, a)
                            lp, new_state = hit
                            if new_cov == full:
                                e = eos_cache.get(new_state)
                                if e is None:
                                    e = eos_cache[new_state] = lm.BaseScore(new_state, "</s>", kenlm.State()) * LN10
                                lp += e
                            new_score = base + o.static + w_lm * lp
                            total = new_score + fut
                            if total < thresholds[t] or total < bests[t] + beam:
                                continue
                            rkey = (new_cov, j, new_state)
                            old = stack.get(rkey)
                            # sig: hash of the output so far; equal sigs are the same string
                            # reached by another segmentation, useless for distinct n-best lists
                            sig = 0
                            if keep_arcs:
                                sig = h.sig
                                for word in o.words:  # word by word: independent of segmentation
                                    sig = hash((sig, word))
                            if old is not None and old.total >= total:
                                if keep_arcs and sig != old.sig:
                                    hyp = _Hyp(new_score, total, new_cov, j, new_state, h, o, lp, dist, sig)
                                    (old.arcs if old.arcs is not None else _new_arcs(old)).append(hyp)
                                continue
                            hyp = _Hyp(new_score, total, new_cov, j, new_state, h, o, lp, dist, sig)
                            if old is not None and keep_arcs:
                                hyp.arcs = old.arcs or []
                                old.arcs = None  # its alternatives now hang on the winner only
                                if sig != old.sig:
                                    hyp.arcs.append(old)
                            stack[rkey] = hyp
                            if total > bests[t]:
                                bests[t] = total
                            if len(stack) > 2 * cfg.stack_size:
                                prune(t)
                                stack = stacks[t]
        finals = sorted(stacks[n].values(), key=lambda h: -h.total)
        if not finals:
            raise RuntimeError(f"no complete translation for a {n}-word sentence (distortion limit too small?)")
        return self._nbest(finals, nbest)

    def _features(self, hyps: list) -> np.ndarray:
        """Sum of the step features along ``hyps`` (a derivation, any order)."""
        f = np.zeros(len(self.feature_names))
        for h in hyps:
            feats = h.opt.feats
            f[:6] += feats[:6]
            f[8:] += feats[6:]
            f[6] -= h.dist
            f[7] += h.lm
        return f

    def _nbest(self, finals: list, nbest: int) -> list[Translation]:
        """Best-first enumeration of derivations: a derivation is a final hypothesis whose
        chain may be switched, at one hypothesis, to one of its recombined arcs (and so on
        further back); each switch costs ``h.score - arc.score``."""
        def chain(h):
            out = []
            while h.prev is not None:
                out.append(h)
                h = h.prev
            return out

        # heap entries: (-score, tie, parent path list, k, head): path = parent[:k] + chain(head)
        heap = [(-h.score, t, None, 0, h) for t, h in enumerate(finals[:nbest])]
        heapq.heapify(heap)
        tie = len(heap)
        out: list[Translation] = []
        seen = set()
        pops = 0
        while heap and len(out) < nbest and pops < 20 * nbest:
            neg, _, parent, k0, head = heapq.heappop(heap)
            pops += 1
            path = (parent[:k0] if parent else []) + chain(head)
            words = tuple(wd for h in reversed(path) for wd in h.opt.words)
            if words not in seen:
                seen.add(words)
                out.append(Translation(list(words), self._features(path), -neg))
            if nbest == 1:
                break
            for k in range(k0, len(path)):
                hk = path[k]
                if hk.arcs:
                    for a in hk.arcs:
                        heapq.heappush(heap, (neg + hk.score - a.score, tie, path, k, a))
                        tie += 1
        return out

    # -- corpora ---------------------------------------------------------------------------
    def translate_corpus(self, sentences: Sequence[Sequence[str]], nbest: int | None = None
                         ) -> list[list[Translation]]:
        """Translate every sentence (``config.workers`` processes); one n-best list each."""
        workers = min(self.config.workers, max(1, len(sentences)))
        if workers == 1:
            return [self.translate(s, nbest) for s in sentences]
        global _WORKER_DECODER
        _WORKER_DECODER = self
        try:
            ctx = mp.get_context("fork")
            with ctx.Pool(workers) as pool:
                chunk = max(1, min(16, len(sentences) // (8 * workers)))
                return pool.map(_worker_translate, [(list(s), nbest) for s in sentences], chunksize=chunk)
        finally:
            _WORKER_DECODER = None


def _new_arcs(h: _Hyp) -> list:
    h.arcs = []
    return h.arcs


_WORKER_DECODER: Decoder | None = None


def _worker_translate(args):
    src, nbest = args
    return _WORKER_DECODER.translate(src, nbest)


__all__ = ["BASE_FEATURES", "Decoder", "DecoderConfig", "Translation", "default_weights"]
