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

Search (Koehn 2010, Sec. 6.2-6.3; :mod:`rnnlib.smt.stack_search`, which
:mod:`rnnlib.smt.compiled` also compiles with Cython as the fast path): hypotheses covering
``m`` source words live in stack ``m``; a hypothesis is expanded by every untranslated span of
at most ``max_phrase_len`` words that respects the distortion limit (the jump to it, and, as in
Moses, the jump from its end back to the first untranslated word) and by the ``ttable_limit``
best options of that span. Hypotheses with equal coverage, end position and LM states are
recombined (the loser is kept as an arc for n-best lists). Stacks are pruned to ``stack_size``
and to ``beam_threshold`` (log) below their best, on ``score + future cost``; the future cost
of the uncovered spans is precomputed for every span by dynamic programming over the best
options' scores (phrase features + each LM of the phrase alone). What an option's estimate
needs besides the weights (its phrase features and phrase-alone LM scores) is computed once per
source phrase and kept for every later sentence and weight vector; the ``ttable_limit`` best
options of a phrase are kept until the weights change. Options are tried best-first and the
loop stops at the first one that cannot enter the target stack (early discarding). N-best lists
follow the recombination arcs (Moses' trellis-path method), distinct strings only, popping at
most ``20 * nbest`` derivations (Moses' ``n-best-factor``); arcs that yield the same string as
their winner are not kept.

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

import functools
import gc
import math
import multiprocessing as mp
from dataclasses import dataclass
from typing import Callable, Sequence

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
from .compiled import search_module
from .stack_search import LN10


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
        # extend(state, words): one call of the search module's lm_extend (compiled where it can
        # be, rnnlib.smt.compiled) with this model and cache; the search makes ~1e4 a sentence
        self.use_search(search_module())

    def use_search(self, module) -> None:
        """Take ``lm_extend`` from ``module`` (:meth:`Decoder.use_search`)."""
        self.extend = functools.partial(module.lm_extend, self.model, self.words)

    def reset(self) -> None:
        self.words.clear()
        self.eos.clear()

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

    def end(self, state) -> float:
        e = self.eos.get(state)
        if e is None:
            import kenlm

            e = self.eos[state] = self.model.BaseScore(state, "</s>", kenlm.State()) * LN10
        return e


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
        self.last_processes: int | None = None  # of the last corpus decoding (translate_corpus)
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
        # the beam search (rnnlib.smt.stack_search), compiled where it can be
        # (rnnlib.smt.compiled): its Search runs each sentence, its Option holds each option
        self.search = search_module()
        self.set_weights(
            default_weights(len(self.feature_names) - EXTRA) if weights is None else weights
        )

    def use_search(self, module) -> None:
        """Search with ``module`` from now on: :mod:`rnnlib.smt.stack_search` or its compiled
        build (:func:`rnnlib.smt.compiled.search_module`, the default). Both give the same
        output; ``rnnlib smt-bench --against-python`` compares their speed."""
        self.search = module
        self._option_cache = {}  # (options are instances of the module's Option)
        for m in self.lms:
            if isinstance(m, KenLMFeature):
                m.use_search(module)

    @property
    def distortion_weight(self) -> float:
        """The weight of the distortion feature (the search prices each jump with it)."""
        return float(self.weights[Feature.DISTORTION])

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
            opts.sort(key=lambda o: -o.est)  # (the same order, each est as _option computes it)
            self._option_cache[s] = opts
        return opts

    def _option(self, tgt: tuple, feats: np.ndarray, w_phrase: np.ndarray, w_lms, lm_est: tuple):
        """The option ``-> tgt`` with phrase features ``feats``, weighted by ``w_phrase``;
        ``lm_est``: ``ln p(tgt)`` with no context under each LM, weighted by ``w_lms``."""
        static = float(np.dot(w_phrase, feats))
        est = static
        for w, e in zip(w_lms, lm_est):
            est = est + w * e
        return self.search.Option(tgt, tuple(feats.tolist()), static, lm_est, est)

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
        finals = self.search.Search(self, src, keep_arcs=nbest > 1).run()
        if not finals:
            raise RuntimeError(
                f"no complete translation for a {n}-word sentence (distortion limit too small?)"
            )
        return self._nbest(finals, nbest)

    # -- back-tracing ----------------------------------------------------------------------
    def _nbest(self, finals: list, nbest: int) -> list[Translation]:
        """The ``nbest`` best distinct translations of the final hypotheses ``finals`` (best
        first), back-traced by the search module (:func:`rnnlib.smt.stack_search.derivations`)."""
        found = self.search.derivations(
            finals,
            nbest,
            len(self.feature_names),
            tuple(int(k) for k in self._phrase_index),
            int(Feature.DISTORTION),
            tuple(self.lm_index),
        )
        return [Translation(list(words), np.array(f), score) for words, f, score in found]

    # -- corpora ---------------------------------------------------------------------------
    def translate_corpus(
        self, sentences: Sequence[Sequence[str]], nbest: int | None = None
    ) -> list[list[Translation]]:
        """Translate every sentence (``config.workers`` processes, or fewer when this process
        shares the cores: :func:`share_cores`; ``last_processes`` records how many); one n-best
        list each. The lists do not depend on the number of processes.

        The garbage collector is off meanwhile, here and in the workers (forked with it off):
        the search makes no reference cycles (each sentence's is freed by reference counting;
        ``tests/test_smt_compiled.py`` checks it), and each collection of the oldest generation
        would walk the phrase table and option caches (about a million objects) again."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._translate_corpus(sentences, nbest)
        finally:
            if enabled:
                gc.enable()

    def _translate_corpus(self, sentences, nbest):
        workers = min(processes(self.config.workers), max(1, len(sentences)))
        self.last_processes = workers
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


#: the processes a corpus decoding of this process may use at most, asked at each decoding
#: (``None``: every one ``DecoderConfig.workers`` asks for); see :func:`share_cores`
_SHARE: Callable[[], int] | None = None
#: the most jobs built side by side with this process's (1: none); see :func:`share_cores`
_AT_ONCE: int = 1


def share_cores(share: Callable[[], int] | None, at_once: int = 1) -> None:
    """Cap the processes of every later corpus decoding in this process at ``share()``, asked
    anew at each decoding (``None``: no cap).
    :func:`rnnlib.experiments.run_pool.build_side_by_side` sets it in its workers, so that
    systems tuned side by side split the cores between them, and one left alone takes them all
    again at its next decoding. Sentences are decoded independently, so the output is the same
    whatever the number of processes. ``at_once``: how many jobs the pool builds at a time,
    which :func:`systems_at_once` reports to the records of what this process builds."""
    global _SHARE, _AT_ONCE
    _SHARE, _AT_ONCE = share, int(at_once)


def systems_at_once() -> int:
    """How many jobs are built side by side with this process's at most (1: it is alone)."""
    return _AT_ONCE


def processes(asked: int) -> int:
    """How many processes a corpus decoding that asks for ``asked`` uses here (at least 1)."""
    return asked if _SHARE is None else max(1, min(asked, int(_SHARE())))


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


__all__ = [
    "BASE_FEATURES",
    "Decoder",
    "DecoderConfig",
    "Translation",
    "default_weights",
    "processes",
    "share_cores",
    "systems_at_once",
]
