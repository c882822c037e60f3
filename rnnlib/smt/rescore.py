"""N-best rescoring: features of whole translations added after the search, tuned by MERT.

Paper A's log-linear model (Eq. 9) scores a translation ``e`` of ``f`` by
``sum_n w_n h_n(e, f)``. Here the features split in two: those the phrase-based search
computes (:class:`rnnlib.smt.decoder.Decoder`, weights ``w_d``) and *sentence features*
``g_m(e)`` computed on each complete candidate of an n-best list (weights ``w_r``):

    score(e) = w_d . h(e, f) + w_r . g(e)

* :class:`LMScore` -- ``g(e) = ln p(e)`` under a language model of the decoder's slot
  (:class:`rnnlib.smt.decoder.LanguageModelFeature`; paper A's CSLM,
  :class:`rnnlib.smt.cslm.CSLMFeature`), ``[BOS]`` before and ``[EOS]`` after the words:
  the value the model adds up step by step when it is inside the search;
* :class:`ShortlistWords` -- paper A's word penalty (footnote 3): the number of words of
  ``e`` outside the networks' shortlist;
* :class:`Rescorer` -- appends the sentence features to every candidate (each feature
  remembers its values per distinct candidate), :func:`rerank` -- each list sorted by the full
  score; :func:`save_nbest` / :func:`load_nbest` -- n-best lists on disk;
* :func:`tune_rescored` -- MERT (:func:`rnnlib.smt.tune.mert_loop`, Och 2003) over
  ``(w_d, w_r)``: each iteration gets n-best lists (by default: decodes the dev set with
  ``w_d``), appends ``g(e)`` to every candidate, pools them with the earlier iterations' and
  maximises corpus BLEU over all the weights. ``w_r`` only changes which candidate of a list
  wins; ``w_d`` also changes the lists when they are decoded again.

Two ways of using it (chapter ``cho2014``,
:class:`rnnlib.experiments.cho2014.rescored.RescoredSystem`):
the lists of the tuned base system, rescored once and tuned on as they are (the classic
two-pass rescoring: no further decoding, the test lists reranked), or MERT's full loop with a
decoding per iteration and a decoding of dev and test with the tuned search weights.

Deviations
----------
- Paper A uses its CSLM "to score partial translations during the decoding process"; here it
  rescores complete candidates of n-best lists. The search never sees the CSLM: a translation
  the search pruned cannot be recovered. Chapter ``cho2014`` measures the time of decoding with
  the CSLM inside the search, which is why this fallback is used at the book's sizes.
- In the two-pass use the dev and test lists are those of the base system's tuned search
  weights; MERT then tunes every weight on them, so the search weights that made the lists are
  not those of the final ranking.
- The word penalty counts target words outside the shortlist of the whole translation, after
  the search (paper A: a feature of the search). Summed over the phrases of a derivation the
  two are the same value; only what the search keeps differs.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .decoder import LanguageModelFeature, Translation
from .tune import TuneResult, mert_loop

NBestLists = list[list[Translation]]


class SentenceFeature:
    """Feature(s) ``names`` of a complete translation. :meth:`values` computes them for word
    sequences; :meth:`cached_values` remembers them per distinct word sequence in :attr:`memo`
    (they do not depend on the source sentence), so rescorers sharing a feature share its values."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self.memo: dict[tuple, np.ndarray] = {}

    def values(self, hyps: Sequence[tuple]) -> np.ndarray:
        """``(len(hyps), len(names))`` values of the candidate word sequences ``hyps``."""
        raise NotImplementedError

    def cached_values(self, hyps: Sequence[tuple]) -> np.ndarray:
        """:meth:`values` through :attr:`memo`; checks the shape of what :meth:`values` returns."""
        todo = list(dict.fromkeys(h for h in hyps if h not in self.memo))
        if todo:
            v = np.asarray(self.values(todo), dtype=np.float64)
            if v.shape != (len(todo), len(self.names)):
                raise ValueError(
                    f"sentence feature {self.names}: values of shape {v.shape} for {len(todo)} "
                    f"candidates (expected {(len(todo), len(self.names))})"
                )
            self.memo.update(zip(todo, v))
        return np.array([self.memo[h] for h in hyps]).reshape(len(hyps), len(self.names))


class LMScore(SentenceFeature):
    """``ln p(e)`` of each candidate under ``lm``, a :class:`LanguageModelFeature` (the begin
    state, every word, then the end of sentence). A batched model (the CSLM) is given the
    candidates ``chunk`` at a time through :meth:`LanguageModelFeature.prefetch`; its n-gram
    cache (``lm.cache``, if it has one) is emptied after each chunk, so memory stays bounded."""

    def __init__(self, lm: LanguageModelFeature, name: str | None = None, chunk: int = 2000):
        if chunk < 1:
            raise ValueError(f"LMScore: chunk must be >= 1, got {chunk}")
        super().__init__([name or lm.name])
        self.lm, self.chunk = lm, chunk

    def values(self, hyps):
        lm = self.lm
        out = np.zeros((len(hyps), 1))
        for k in range(0, len(hyps), self.chunk):
            part = [tuple(h) for h in hyps[k : k + self.chunk]]
            if lm.batched:
                lm.prefetch([(lm.begin(), h) for h in part])
            for i, h in enumerate(part):
                lp, state = lm.extend(lm.begin(), h)
                out[k + i, 0] = lp + lm.end(state)
            lm.reset()
            if isinstance(getattr(lm, "cache", None), dict):
                lm.cache.clear()
        return out


class ShortlistWords(SentenceFeature):
    """Paper A's word penalty (footnote 3): how many words of the candidate are outside
    ``shortlist`` (a set of words, or a vocabulary supporting ``in``)."""

    def __init__(self, shortlist, name: str = "wp"):
        super().__init__([name])
        self.shortlist = shortlist

    def values(self, hyps):
        return np.array([[sum(w not in self.shortlist for w in h)] for h in hyps], dtype=np.float64)


class Rescorer:
    """Appends the values of ``features`` (:class:`SentenceFeature`) to the feature vector of
    every candidate, in the order given."""

    def __init__(self, features: Sequence[SentenceFeature]):
        self.features = list(features)
        self.names = [n for f in self.features for n in f.names]
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"Rescorer: feature names must be distinct, got {self.names}")

    def values(self, hyps: Sequence[Sequence[str]]) -> np.ndarray:
        """``(len(hyps), len(names))``."""
        keys = [tuple(h) for h in hyps]
        cols = [f.cached_values(keys) for f in self.features]
        return np.hstack(cols) if cols else np.zeros((len(keys), 0))

    def extend(self, lists: NBestLists) -> NBestLists:
        """The same lists, each candidate's ``features`` followed by the sentence features
        (``score`` is the decoder's; :func:`rerank` orders by the full weights)."""
        flat = [c.words for lst in lists for c in lst]
        vals = self.values(flat)
        out, k = [], 0
        for lst in lists:
            row = []
            for c in lst:
                row.append(
                    Translation(list(c.words), np.concatenate([c.features, vals[k]]), c.score)
                )
                k += 1
            out.append(row)
        return out


def save_nbest(lists: NBestLists, path: Path) -> None:
    """N-best lists as gzipped JSON: per sentence ``[[words joined by spaces, features], ...]``,
    in the lists' order (the decoder's: best first)."""
    rows = [[[" ".join(c.words), [float(x) for x in c.features]] for c in lst] for lst in lists]
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(rows, f, ensure_ascii=False)


def load_nbest(path: Path) -> NBestLists:
    """The lists :func:`save_nbest` wrote (``score`` 0: :func:`rerank` sets it)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = json.load(f)
    return [
        [Translation(w.split(), np.asarray(x, dtype=np.float64), 0.0) for w, x in lst]
        for lst in rows
    ]


def rerank(lists: NBestLists, weights: Sequence[float]) -> NBestLists:
    """Each list sorted by ``features . weights``, best first (ties keep the decoder's order);
    ``score`` becomes that value. Every candidate must have ``len(weights)`` features."""
    w = np.asarray(weights, dtype=np.float64)
    out = []
    for s, lst in enumerate(lists):
        for c in lst:
            if len(c.features) != len(w):
                raise ValueError(
                    f"rerank: a candidate of sentence {s} has {len(c.features)} feature values "
                    f"for {len(w)} weights (decoder features followed by the rescoring features?)"
                )
        scores = [float(np.dot(c.features, w)) for c in lst]
        order = sorted(range(len(lst)), key=lambda i: -scores[i])
        out.append([Translation(lst[i].words, lst[i].features, scores[i]) for i in order])
    return out


def tune_rescored(
    decoder,
    src: Sequence[Sequence[str]],
    refs: Sequence[Sequence[Sequence[str]]],
    rescorer: Rescorer,
    *,
    nbest: int = 100,
    max_iterations: int = 6,
    seed: int = 0,
    restarts: int = 2,
    random_directions: int = 2,
    tol: float = 1e-4,
    start: float | Sequence[float] = 0.1,
    decode: Callable[[np.ndarray], NBestLists] | None = None,
    rescore: Callable[[NBestLists], NBestLists] | None = None,
    log=None,
) -> TuneResult:
    """MERT over the decoder's weights and ``rescorer``'s (see the module notes).

    The starting weights are the decoder's, then ``start`` for the rescoring features (one value
    for all, as the decoder starts an extra feature at 0.1, or one per feature).
    ``decode(w_d (len(decoder.feature_names),))`` returns the ``nbest`` lists of ``src`` under the
    search weights ``w_d`` (default: the decoder; the book passes cached decodings, or fixed
    lists); ``rescore(lists)`` appends the sentence features to every candidate (default:
    ``rescorer.extend``). The decoder is left with the tuned search weights; the result's
    ``weights`` are ``(w_d, w_r)`` under ``decoder.feature_names + rescorer.names``.
    """
    if len(src) != len(refs):
        raise ValueError(f"tune_rescored: {len(src)} dev sentences but {len(refs)} reference lists")
    k = len(decoder.feature_names)
    names = list(decoder.feature_names) + rescorer.names
    if len(set(names)) != len(names):
        raise ValueError(f"tune_rescored: feature names must be distinct, got {names}")
    fixed = np.r_[
        getattr(decoder, "fixed", np.zeros(k, dtype=bool)),
        np.zeros(len(rescorer.names), dtype=bool),
    ]
    start = np.atleast_1d(np.asarray(start, dtype=np.float64))
    if start.shape not in ((1,), (len(rescorer.names),)):
        raise ValueError(
            f"tune_rescored: start has {len(start)} values for the rescoring features "
            f"{rescorer.names}"
        )
    w0 = np.r_[decoder.weights, np.broadcast_to(start, (len(rescorer.names),))]

    def search(w_d: np.ndarray) -> NBestLists:
        decoder.set_weights(w_d)
        return decoder.translate_corpus(src, nbest)

    def decode_and_rescore(w: np.ndarray) -> NBestLists:
        return rerank((rescore or rescorer.extend)((decode or search)(w[:k])), w)

    res = mert_loop(
        decode_and_rescore,
        w0,
        refs,
        feature_names=names,
        fixed=fixed,
        max_iterations=max_iterations,
        seed=seed,
        restarts=restarts,
        random_directions=random_directions,
        tol=tol,
        log=log,
    )
    decoder.set_weights(res.weights[:k])
    return res


__all__ = [
    "LMScore",
    "Rescorer",
    "SentenceFeature",
    "ShortlistWords",
    "load_nbest",
    "rerank",
    "save_nbest",
    "tune_rescored",
]
