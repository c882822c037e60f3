"""A phrase-based stack decoder with a log-linear model (Koehn 2010, Ch. 6; Koehn et al. 2003).

The translation ``e`` of a source sentence ``f`` maximises ``sum_n w_n h_n(e, f)`` (paper A,
Eq. 9). The features ``h_n`` (``BASE_FEATURES``, natural logs, at the positions named by
:class:`rnnlib.smt.features.Feature`) are summed over the phrases of a derivation:

* the four phrase-table scores ``log p(t|s), log p(s|t), log lex(t|s), log lex(s|t)``;
* the phrase penalty (+1 per phrase) and the word penalty (-1 per target word, as in Moses);
* the distance-based distortion ``-|start_k - end_{k-1}|`` (``end`` exclusive, 0 at the start);
* Moses' unknown-word penalty: -100 per copied unknown source word, weight 1, not tuned;
* the n-gram LM ``log p(e)`` with ``<s>`` and ``</s>`` (KenLM);
* any extra phrase-pair features (:mod:`rnnlib.smt.features`);
* any further language models (e.g. paper A's CSLM, :mod:`rnnlib.smt.cslm`), each its own
  feature ``log p(e)`` with its own weight.

Language models are *stateful features* (:class:`LanguageModelFeature`): the KenLM model is
the first, at ``Feature.LM``; further ones follow the extra phrase features. Each keeps its
own state in the hypothesis and in the recombination key, enters the future cost with its
phrase-alone estimate, and is weighted on its own. A model that is cheaper queried in
batches (``batched = True``) gets, before a hypothesis is expanded, one
:meth:`~LanguageModelFeature.prefetch` call with every option that may still enter a stack.

Search (Koehn 2010, Sec. 6.2-6.3): hypotheses covering ``m`` source words live in stack
``m``; a hypothesis is expanded by every untranslated span of at most ``max_phrase_len``
words that respects the distortion limit (the jump to it, and, as in Moses, the jump from its
end back to the first untranslated word) and by the ``ttable_limit`` best options of that
span. Hypotheses with equal coverage, end position and LM states are recombined (the loser
is kept as an arc for n-best lists). Stacks are pruned to ``stack_size`` and to
``beam_threshold`` (log) below their best, on ``score + future cost``; the future cost of
the uncovered spans is precomputed for every span by dynamic programming over the best
options' scores (phrase features + each LM of the phrase alone). What an option's estimate
needs besides the weights (its phrase features and phrase-alone LM scores) is computed once per
source phrase and kept for every later sentence and weight vector; the ``ttable_limit`` best
options of a phrase are kept until the weights change. Options are tried best-first
and the loop stops at the first one that cannot enter the target stack (early discarding).
N-best lists follow the recombination arcs (Moses' trellis-path method), distinct strings
only, popping at most ``20 * nbest`` derivations (Moses' ``n-best-factor``); arcs that yield
the same string as their winner are not kept.

Unknown source words (a single word the table lacks) are copied to the output by an option
whose phrase-table scores are 0 and whose unknown-word feature is -100, as in Moses
(:data:`rnnlib.smt.features.UNKNOWN_WORD_PENALTY`); the language model scores the copy.

Deviations
----------
* No lexicalised reordering model (Moses' default adds one; paper A does not say).
* The future cost does not include an estimate of future distortion.
* Early discarding uses the option's phrase-alone LM estimate before the real LM score.
* A batched LM is queried once per expanded hypothesis (all its surviving options at once);
  paper A's decoder buffered n-grams across hypotheses until the buffer was full or a stack
  was about to be pruned.
"""

from __future__ import annotations

import gc
import heapq
import math
import multiprocessing as mp
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .features import (
    BASE_FEATURES,
    EXTRA,
    FIXED_WEIGHTS,
    PHRASE_FEATURES,
    TM_FEATURES,
    UNKNOWN_WORD_PENALTY,
    Feature,
)

LN10 = math.log(10.0)


def default_weights(extra: int = 0) -> np.ndarray:
    """Moses' starting weights: 0.2 per phrase-table score and the phrase penalty, -1 for the
    word penalty (whose value is ``-count``, so this is a bonus per word), 0.3 distortion,
    0.5 LM, 1 (fixed) for the unknown-word penalty; extra features start at 0.1.
    Shape ``(len(BASE_FEATURES) + extra,)``."""
    w = np.full(EXTRA + extra, 0.1, dtype=np.float64)
    w[list(TM_FEATURES)] = 0.2
    w[Feature.PHRASE_PENALTY] = 0.2
    w[Feature.WORD_PENALTY] = -1.0
    w[Feature.DISTORTION] = 0.3
    w[Feature.LM] = 0.5
    for f, v in FIXED_WEIGHTS.items():
        w[f] = v
    return w


@dataclass
class DecoderConfig:
    """Search settings (Moses names in brackets)."""

    stack_size: int = 50  # [-s] hypotheses kept per stack
    ttable_limit: int = 10  # [ttable-limit] options per source span
    distortion_limit: int = 6  # [distortion-limit]
    beam_threshold: float = 1e-5  # [b] prune hypotheses below this fraction of the best
    max_phrase_len: int = 7  # longest source phrase: looked up here, extracted by rnnlib.smt.system
    nbest: int = 1  # distinct translations returned per sentence
    workers: int = 2  # processes (sentences are independent)

    def __post_init__(self) -> None:
        for name in ("stack_size", "ttable_limit", "max_phrase_len", "nbest", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"DecoderConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.distortion_limit < 0:
            raise ValueError(
                f"DecoderConfig.distortion_limit must be >= 0, got {self.distortion_limit}"
            )
        if not 0 < self.beam_threshold <= 1:
            raise ValueError(
                f"DecoderConfig.beam_threshold must be in (0, 1], got {self.beam_threshold}"
            )


@dataclass
class Translation:
    """One decoded candidate: ``words`` (target tokens), ``features (F,)`` and ``score``."""

    words: list[str]
    features: np.ndarray
    score: float


class _Option:
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


class _Hyp:
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


def _lm_extend(lm, state, words, cache: dict) -> tuple:
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


class LanguageModelFeature:
    """A language model as a stateful feature of the decoder: ``log p(e)`` of the output,
    ``<s>`` and ``</s>`` included, summed step by step. States must be hashable; two
    hypotheses are recombined only if every LM's states are equal.

    ``name``: the feature's name (in ``Decoder.feature_names`` and ``weights.json``).
    ``batched``: ``True`` if :meth:`prefetch` is worth calling before the search asks.
    """

    name = "lm"
    batched = False

    def reset(self) -> None:
        """Forget the caches of the previous sentence (called before each sentence)."""

    def begin(self):
        """The state at the start of the sentence (after ``<s>``)."""
        raise NotImplementedError

    def null(self):
        """The state with no context (for the phrase-alone estimate of the future cost)."""
        raise NotImplementedError

    def extend(self, state, words) -> tuple:
        """``(ln p(words | state), state after words)``."""
        raise NotImplementedError

    def end(self, state) -> float:
        """``ln p(</s> | state)``."""
        raise NotImplementedError

    def prefetch(self, requests) -> None:
        """Score ``requests``, a list of ``(state, words)``, ahead of :meth:`extend` (batched
        LMs)."""


class KenLMFeature(LanguageModelFeature):
    """A ``kenlm.Model`` in the slot (the baseline's n-gram LM): states are ``kenlm.State``;
    ``(state, word)`` scores and end-of-sentence scores are cached per sentence."""

    def __init__(self, model, name: str = "lm"):
        self.model, self.name = model, name
        self.words: dict = {}
        self.eos: dict = {}

    def reset(self) -> None:
        self.words, self.eos = {}, {}

    def begin(self):
        import kenlm

        state = kenlm.State()
        self.model.BeginSentenceWrite(state)
        return state

    def null(self):
        import kenlm

        state = kenlm.State()
        self.model.NullContextWrite(state)
        return state

    def extend(self, state, words) -> tuple:
        return _lm_extend(self.model, state, words, self.words)

    def end(self, state) -> float:
        e = self.eos.get(state)
        if e is None:
            import kenlm

            e = self.eos[state] = self.model.BaseScore(state, "</s>", kenlm.State()) * LN10
        return e


def _output_sig(sig: int, words) -> int:
    """Extend the hash ``sig`` of an output prefix by ``words``, word by word, so that equal
    strings reached by different segmentations get equal signatures."""
    for word in words:
        sig = hash((sig, word))
    return sig


def _chain(h: _Hyp) -> list:
    """The hypotheses from ``h`` back to the root (excluded), last step first."""
    out = []
    while h.prev is not None:
        out.append(h)
        h = h.prev
    return out


def _new_arcs(h: _Hyp) -> list:
    """Give ``h`` an empty list of arcs and return it."""
    h.arcs = []
    return h.arcs


class Decoder:
    """Decode sentences with a phrase table, a KenLM model and a weight vector.

    ``table``: ``{source words tuple: [(target words tuple, scores (4,) probabilities), ...]}``
    (e.g. :meth:`rnnlib.smt.phrases.PhraseTable.lookup`); ``lm``: a ``kenlm.Model``;
    ``extra``: feature tables (:class:`rnnlib.smt.features.FeatureTable`) whose values are
    appended to the phrase features; ``lms``: further language models
    (:class:`LanguageModelFeature`), appended after them; ``weights``:
    ``(len(feature_names),)``, laid out as :class:`rnnlib.smt.features.Feature` says, then
    the extra features, then the further LMs.
    """

    def __init__(
        self,
        table: dict,
        lm,
        weights: Sequence[float] | None = None,
        config: DecoderConfig | None = None,
        extra: Sequence = (),
        lms: Sequence = (),
    ):
        self.table = table
        self.lm = lm
        self.config = config or DecoderConfig()
        self.extra = list(extra)
        self.lms = [lm if isinstance(lm, LanguageModelFeature) else KenLMFeature(lm)] + list(lms)
        self.feature_names = list(BASE_FEATURES) + [n for t in self.extra for n in t.names]
        # positions of the LM features: the first at Feature.LM, the others at the end
        self.lm_index = [int(Feature.LM)] + list(
            range(len(self.feature_names), len(self.feature_names) + len(lms))
        )
        self.feature_names += [m.name for m in self.lms[1:]]
        if len(set(self.feature_names)) != len(self.feature_names):
            raise ValueError(f"Decoder: feature names must be distinct, got {self.feature_names}")
        # where the values of an option's ``feats`` go in the full vector; the remaining
        # features (distortion, LM) depend on the search, not on the phrase pair alone
        self._phrase_index = np.array(
            list(PHRASE_FEATURES)
            + list(range(EXTRA, self.lm_index[1] if len(lms) else len(self.feature_names)))
        )
        # features whose weight MERT leaves alone (rnnlib.smt.tune), as Moses' tuneable=false
        self.fixed = np.zeros(len(self.feature_names), dtype=bool)
        self.fixed[list(FIXED_WEIGHTS)] = True
        # source phrase -> (targets, phrase features (K, P), phrase-alone LM estimates (K, L)): what
        # does not depend on the weights, computed once per phrase (sentences and MERT iterations
        # share it)
        self._entries: dict = {}
        self.set_weights(
            default_weights(len(self.feature_names) - EXTRA) if weights is None else weights
        )

    def set_weights(self, weights: Sequence[float]) -> None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(self.feature_names),):
            raise ValueError(
                f"weights: expected {len(self.feature_names)} values for {self.feature_names}, "
                f"got shape {w.shape}"
            )
        self.weights = w
        self._option_cache = {}  # source phrase -> its best options under these weights

    # -- translation options and future costs ----------------------------------------------
    def _options(self, src: Sequence[str]) -> dict:
        """``{(i, j): options}`` for every span ``src[i:j]`` of at most ``max_phrase_len`` words in
        the table (an unknown single word is copied): the ``ttable_limit`` best by ``est``, best
        first."""
        n, max_len = len(src), self.config.max_phrase_len
        spans = {
            (i, j): tuple(src[i:j]) for i in range(n) for j in range(i + 1, min(n, i + max_len) + 1)
        }
        spans = {
            span: s for span, s in spans.items() if span[1] == span[0] + 1 or self.table.get(s)
        }
        self._warm(spans.values())
        return {span: self._span_options(s) for span, s in spans.items()}

    def _entries_of(self, s: tuple):
        """The targets of source phrase ``s`` (its copy if the table lacks it) with their scores."""
        entries = self.table.get(s)
        return entries if entries else [((s[0],), None)]

    def _warm(self, sources) -> None:
        """Fill the weight-independent cache ``_entries`` for the source phrases ``sources``:
        per phrase, its targets, the matrix ``(K, len(_phrase_index))`` of their phrase features
        (:meth:`_phrase_feats`) and ``(K, len(lms))`` of their phrase-alone LM estimates
        ``ln p(target)``. Batched LMs are prefetched once for all of them."""
        todo = [s for s in dict.fromkeys(sources) if s not in self._entries]
        if not todo:
            return
        nulls = [m.null() for m in self.lms]
        for m, null in zip(self.lms, nulls):
            if m.batched:
                m.prefetch([(null, tuple(tgt)) for s in todo for tgt, _ in self._entries_of(s)])
        for s in todo:
            entries = self._entries_of(s)
            targets = [tuple(tgt) for tgt, _ in entries]
            feats = np.array(
                [self._phrase_feats(s, tgt, scores) for tgt, scores in entries], dtype=np.float64
            )
            lm_est = np.array(
                [[m.extend(null, tgt)[0] for m, null in zip(self.lms, nulls)] for tgt in targets],
                dtype=np.float64,
            )
            self._entries[s] = (targets, feats, lm_est)

    def _phrase_feats(self, src: tuple, tgt: tuple, scores) -> list:
        """The values of ``PHRASE_FEATURES`` then of the extra features for ``src -> tgt``:
        phrase-table ``scores (4,)`` as natural logs (``None``: a copied unknown word, all 0 and
        the unknown-word penalty), +1 phrase, -1 per target word, then each extra table's values."""
        if scores is None:
            tm, unknown = [0.0] * len(TM_FEATURES), UNKNOWN_WORD_PENALTY
        else:
            tm, unknown = [math.log(max(float(x), 1e-30)) for x in scores], 0.0
        feats = tm + [1.0, -float(len(tgt)), unknown]  # the order of PHRASE_FEATURES
        for t in self.extra:
            feats.extend(t.lookup(src, tuple(tgt)))
        return feats

    def _span_options(self, s: tuple) -> list:
        """The ``ttable_limit`` best options of source phrase ``s`` by ``est`` under the current
        weights, best first (cached until the weights change; :meth:`_warm` first)."""
        opts = self._option_cache.get(s)
        if opts is None:
            targets, feats, lm_est = self._entries[s]
            w_phrase, w_lms = self.weights[self._phrase_index], self.weights[self.lm_index]
            est = feats @ w_phrase + lm_est @ w_lms  # (K,): every target's estimate at once
            keep = np.argsort(-est, kind="stable")[: self.config.ttable_limit]
            opts = [
                self._option(targets[k], feats[k], w_phrase, w_lms, tuple(lm_est[k].tolist()))
                for k in keep
            ]
            opts.sort(key=lambda o: -o.est)  # (the same order, each est as _Option computes it)
            self._option_cache[s] = opts
        return opts

    @staticmethod
    def _option(
        tgt: tuple, feats: np.ndarray, w_phrase: np.ndarray, w_lms, lm_est: tuple
    ) -> _Option:
        """The option ``-> tgt`` with phrase features ``feats``, weighted by ``w_phrase``;
        ``lm_est``: ``ln p(tgt)`` with no context under each LM, weighted by ``w_lms``."""
        static = float(np.dot(w_phrase, feats))
        est = static
        for w, e in zip(w_lms, lm_est):
            est = est + w * e
        return _Option(tgt, tuple(feats.tolist()), static, lm_est, est)

    @staticmethod
    def _future_cost_table(opts: dict, n: int) -> list:
        """``fc[i][j]``: the best estimated score of span ``i:j`` split into options in any way
        (Koehn 2010, Fig. 6.11); ``-inf`` if it cannot be covered."""
        best = {span: cand[0].est for span, cand in opts.items()}
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
        return fc

    # -- search ----------------------------------------------------------------------------
    def translate(self, src: Sequence[str], nbest: int | None = None) -> list[Translation]:
        """The ``nbest`` (default ``config.nbest``) best distinct translations of ``src``, best
        first."""
        enabled = gc.isenabled()
        gc.disable()  # the search makes ~1e5 short-lived objects per sentence; no cycles
        try:
            return self._translate(src, nbest)
        finally:
            if enabled:
                gc.enable()

    def _translate(self, src: Sequence[str], nbest: int | None) -> list[Translation]:
        nbest = self.config.nbest if nbest is None else nbest
        n = len(src)
        if n == 0:
            return [Translation([], np.zeros(len(self.weights)), 0.0)]
        finals = _Search(self, src, keep_arcs=nbest > 1).run()
        if not finals:
            raise RuntimeError(
                f"no complete translation for a {n}-word sentence (distortion limit too small?)"
            )
        return self._nbest(finals, nbest)

    # -- back-tracing ----------------------------------------------------------------------
    def _features(self, hyps: list) -> np.ndarray:
        """Feature vector ``(len(feature_names),)``: the step features summed along ``hyps``
        (a derivation, any order)."""
        f = np.zeros(len(self.feature_names))
        index = self._phrase_index
        for h in hyps:
            f[index] += h.opt.feats
            f[Feature.DISTORTION] -= h.dist
            f[self.lm_index] += h.lm
        return f

    def _nbest(self, finals: list, nbest: int) -> list[Translation]:
        """Best-first enumeration of derivations: a derivation is a final hypothesis whose
        chain may be switched, at one hypothesis, to one of its recombined arcs (and so on
        further back); each switch costs ``h.score - arc.score``."""
        # heap entries: (-score, tie, parent path list, k, head): path = parent[:k] + _chain(head)
        heap = [(-h.score, t, None, 0, h) for t, h in enumerate(finals[:nbest])]
        heapq.heapify(heap)
        tie = len(heap)
        out: list[Translation] = []
        seen = set()
        pops = 0
        while heap and len(out) < nbest and pops < 20 * nbest:
            neg, _, parent, k0, head = heapq.heappop(heap)
            pops += 1
            path = (parent[:k0] if parent else []) + _chain(head)
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
    def translate_corpus(
        self, sentences: Sequence[Sequence[str]], nbest: int | None = None
    ) -> list[list[Translation]]:
        """Translate every sentence (``config.workers`` processes); one n-best list each."""
        workers = min(self.config.workers, max(1, len(sentences)))
        if workers == 1:
            return [self.translate(s, nbest) for s in sentences]
        # the weight-independent option cache is filled here, once, so that every worker inherits it
        n = self.config.max_phrase_len
        self._warm(s for src in sentences for s in _sources(src, n, self.table))
        global _WORKER_DECODER
        _WORKER_DECODER = self
        try:
            ctx = mp.get_context("fork")
            with ctx.Pool(workers) as pool:
                chunk = max(1, min(16, len(sentences) // (8 * workers)))
                return pool.map(
                    _worker_translate, [(list(s), nbest) for s in sentences], chunksize=chunk
                )
        finally:
            _WORKER_DECODER = None


class _Search:
    """The beam search over one sentence (Koehn 2010, Sec. 6.2-6.3).

    ``stacks[m]`` maps a recombination key ``(coverage, end, LM states)`` to the best hypothesis
    covering ``m`` source words; ``thresholds[m]``: the lowest ``total`` still admitted (raised
    when the stack is pruned full); ``bests[m]``: the best ``total`` seen (for the beam threshold).
    The LMs enter through the start states, :meth:`extend`, :meth:`finish`, :meth:`prefetch`
    and ``_Hyp.lm`` only.
    """

    def __init__(self, dec: Decoder, src: Sequence[str], keep_arcs: bool):
        cfg, w = dec.config, dec.weights
        self.n = n = len(src)
        self.lms = dec.lms
        for m in self.lms:
            m.reset()
        self.batched = [k for k, m in enumerate(self.lms) if m.batched]
        if len(self.lms) == 1:  # the baseline: skip the loops over LMs (same arithmetic)
            self.extend, self.finish = self._extend_one, self._finish_one
        self.keep_arcs = keep_arcs  # keep recombined rivals (n-best lists)
        self.stack_size = cfg.stack_size
        self.dl = cfg.distortion_limit
        self.beam = math.log(cfg.beam_threshold)
        self.w_dist, self.w_lms = w[Feature.DISTORTION], w[dec.lm_index]
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
        self.stacks[0][None] = _Hyp(
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

    def prefetch(self, h: _Hyp, lm_cache: dict) -> None:
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

    def expand(self, h: _Hyp) -> None:
        """Try every option that may follow ``h``: untranslated spans within the distortion
        limit (from which the first gap stays reachable), options best first until one cannot
        enter its stack (early discarding); the survivors go to :meth:`add`."""
        cov, end, state, score = h.cov, h.end, h.state, h.score
        n, dl, full, beam = self.n, self.dl, self.full, self.beam
        w_dist = self.w_dist
        thresholds, bests = self.thresholds, self.bests
        future, add = self.future, self.add
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
                fut = future(new_cov)
                t = new_cov.bit_count()
                for o in olist:
                    if base + o.est + fut < thresholds[t]:
                        break
                    hit = lm_cache.get(o)
                    if hit is None:
                        hit = lm_cache[o] = self.extend(state, o.words)
                    wlp, lp, new_state = hit
                    if new_cov == full:
                        wlp, lp = self.finish(lp, new_state)
                    new_score = base + o.static + wlp
                    total = new_score + fut
                    if total < thresholds[t] or total < bests[t] + beam:
                        continue
                    add(h, o, new_cov, t, j, new_state, new_score, total, lp, dist)

    def add(
        self,
        prev: _Hyp,
        o: _Option,
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
        sig = _output_sig(prev.sig, o.words) if keep_arcs else 0
        if old is not None and old.total >= total:
            if keep_arcs and sig != old.sig:
                hyp = _Hyp(score, total, cov, end, state, prev, o, lp, dist, sig)
                (old.arcs if old.arcs is not None else _new_arcs(old)).append(hyp)
            return
        hyp = _Hyp(score, total, cov, end, state, prev, o, lp, dist, sig)
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


def _sources(src: Sequence[str], max_len: int, table: dict):
    """The source phrases of ``src`` the decoder builds options for: those of at most ``max_len``
    words in ``table``, and every single word (copied if the table lacks it)."""
    n = len(src)
    for i in range(n):
        for j in range(i + 1, min(n, i + max_len) + 1):
            s = tuple(src[i:j])
            if j == i + 1 or table.get(s):
                yield s


_WORKER_DECODER: Decoder | None = None


def _worker_translate(args):
    src, nbest = args
    return _WORKER_DECODER.translate(src, nbest)


__all__ = ["BASE_FEATURES", "Decoder", "DecoderConfig", "Translation", "default_weights"]
