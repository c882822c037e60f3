"""Phrase-pair extraction and Moses-style phrase scores (the translation model of the baseline).

Extraction follows Koehn (2010, Sec. 5.2.3, Fig. 5.5; Och & Ney 2004): a source span of at
most ``max_len`` words and a target span form a phrase pair when at least one link joins
them and no word inside either span is linked to a word outside the other. The minimal
target span is widened over unaligned target words at both edges, each widening giving
another pair (still at most ``max_len`` words).

Scores of a pair (s, t) (Koehn et al. 2003; Koehn 2010, Sec. 5.3.1 and 5.3.3), all as
probabilities in ``scores[:, k]`` in this order (``FEATURES``):

* ``p(t|s) = c(s, t) / c(s)`` -- the "direct" translation probability (paper A, Table 2's
  "TM" column is this one for English s and French t);
* ``p(s|t) = c(s, t) / c(t)`` -- the inverse one;
* ``lex(t|s) = prod_j 1/|{i: (i,j) in a}| sum_{(i,j) in a} w(t_j|s_i)`` with ``w(t|NULL)`` for
  unaligned ``t_j``; ``lex(s|t)`` symmetrically. ``w`` is the relative frequency of word links.
  When a pair occurs with several internal alignments the highest weight is kept (Koehn
  et al. 2003, Eq. 7 and the sentence after it).

The phrase penalty (a constant ``exp(1)`` per pair in Moses) is added by the decoder.
The table is pruned to the ``k`` best targets of each source phrase by ``p(t|s)`` (ties by
``lex(t|s)``), after the scores were computed on all extracted pairs.

Storage (:meth:`PhraseTable.save`): one ``.npz`` file, no pickle: word lists as unicode
arrays, phrases as ragged int arrays (``*_ids``, ``*_offsets``), one row per pair.

Deviations
----------
* Moses keeps the most frequent internal alignment for the lexical weights; we keep the one
  with the highest weight (the rule of Koehn et al. 2003).
* Moses prunes the table with the decoder's weighted feature sum (``ttable-limit``); ``k``
  prunes by ``p(t|s)`` when the table is built. With ``k=None`` every extracted pair is kept
  and only the decoder prunes, by the full weighted score as Moses does
  (:class:`rnnlib.smt.decoder.DecoderConfig.ttable_limit`); chapter ``cho2014`` does so, so
  that paper A's RNN score can promote a target that ``p(t|s)`` ranks low.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

FEATURES = ("p(t|s)", "p(s|t)", "lex(t|s)", "lex(s|t)")
NULL = "<NULL>"


def extract_spans(
    links: Sequence[tuple[int, int]], src_len: int, tgt_len: int, max_len: int = 7
) -> list[tuple[int, int, int, int]]:
    """All consistent phrase pairs of one sentence pair as ``(s1, s2, t1, t2)`` (inclusive ends).

    ``links`` are ``(i, j)`` source/target positions. Spans are at most ``max_len`` words
    on each side; spans without any link are not pairs.
    """
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    smin = [tgt_len] * src_len
    smax = [-1] * src_len
    tmin = [src_len] * tgt_len
    tmax = [-1] * tgt_len
    for i, j in links:
        if smin[i] > j:
            smin[i] = j
        if smax[i] < j:
            smax[i] = j
        if tmin[j] > i:
            tmin[j] = i
        if tmax[j] < i:
            tmax[j] = i
    out = []
    for s1 in range(src_len):
        t1, t2 = tgt_len, -1
        for s2 in range(s1, min(src_len, s1 + max_len)):
            if smin[s2] < t1:
                t1 = smin[s2]
            if smax[s2] > t2:
                t2 = smax[s2]
            if t2 < 0:
                continue
            if t2 - t1 >= max_len:
                break  # more source words can only widen the target span
            ok = True
            for j in range(t1, t2 + 1):
                if tmax[j] >= 0 and (tmin[j] < s1 or tmax[j] > s2):
                    ok = False
                    break
            if not ok:
                continue
            ts = t1
            while True:
                te = t2
                while te - ts < max_len:
                    out.append((s1, s2, ts, te))
                    te += 1
                    if te >= tgt_len or tmax[te] >= 0:
                        break
                ts -= 1
                if ts < 0 or tmax[ts] >= 0 or t2 - ts >= max_len:
                    break
    return out


def word_translation_tables(
    src: Sequence[Sequence[int]],
    tgt: Sequence[Sequence[int]],
    links: Sequence[Sequence[tuple[int, int]]],
    null_src: int,
    null_tgt: int,
) -> tuple[dict, dict]:
    """``w(t|s)`` and ``w(s|t)`` as dicts ``{(s, t): prob}`` / ``{(t, s): prob}`` from the links.

    Unaligned words are counted as linked to the NULL word (``null_src`` / ``null_tgt`` ids).
    """
    pair = Counter()
    for s, t, a in zip(src, tgt, links):
        s_al = [False] * len(s)
        t_al = [False] * len(t)
        for i, j in a:
            pair[(s[i], t[j])] += 1
            s_al[i] = t_al[j] = True
        for i, done in enumerate(s_al):
            if not done:
                pair[(s[i], null_tgt)] += 1
        for j, done in enumerate(t_al):
            if not done:
                pair[(null_src, t[j])] += 1
    s_tot, t_tot = Counter(), Counter()
    for (a, b), c in pair.items():
        s_tot[a] += c
        t_tot[b] += c
    t_given_s = {(a, b): c / s_tot[a] for (a, b), c in pair.items()}
    s_given_t = {(b, a): c / t_tot[b] for (a, b), c in pair.items()}
    return t_given_s, s_given_t


def _position_lex(s, t, a, t_given_s, s_given_t, null_src, null_tgt):
    """Per-position log lexical factors: ``(log_t (len t,), log_s (len s,))``."""
    t_links = [[] for _ in t]
    s_links = [[] for _ in s]
    for i, j in a:
        t_links[j].append(i)
        s_links[i].append(j)
    log_t = []
    for j, srcs in enumerate(t_links):
        if srcs:
            v = sum(t_given_s[(s[i], t[j])] for i in srcs) / len(srcs)
        else:
            v = t_given_s[(null_src, t[j])]
        log_t.append(math.log(v))
    log_s = []
    for i, tgts in enumerate(s_links):
        if tgts:
            v = sum(s_given_t[(t[j], s[i])] for j in tgts) / len(tgts)
        else:
            v = s_given_t[(null_tgt, s[i])]
        log_s.append(math.log(v))
    return log_t, log_s


def _prefix(xs):
    out = [0.0]
    for x in xs:
        out.append(out[-1] + x)
    return out


def _phrases(vocab: list[str], ids: np.ndarray, offsets: np.ndarray) -> list[tuple[str, ...]]:
    """Every phrase of a ragged id array as a tuple of words (the lists of Python ints first:
    indexing numpy arrays element by element is slow over millions of phrases)."""
    words = [vocab[w] for w in ids.tolist()]
    bounds = offsets.tolist()
    return [tuple(words[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


@dataclass
class PhraseTable:
    """A scored, pruned phrase table.

    ``src_vocab``/``tgt_vocab``: word lists; ``src_ids, src_offsets``: the unique source
    phrases (ragged, ``(total,) int32`` and ``(n_src + 1,) int64``), same for ``tgt_*``.
    One row per pair: ``pair_src, pair_tgt (n,) int32`` phrase indices, ``count (n,) int64``
    = c(s, t), ``src_count``/``tgt_count (n,) int64`` = c(s)/c(t), ``scores (n, 4) float64``
    the probabilities of ``FEATURES``. Rows are sorted by source phrase, then by ``p(t|s)``
    descending.
    """

    src_vocab: list[str]
    tgt_vocab: list[str]
    src_ids: np.ndarray
    src_offsets: np.ndarray
    tgt_ids: np.ndarray
    tgt_offsets: np.ndarray
    pair_src: np.ndarray
    pair_tgt: np.ndarray
    count: np.ndarray
    src_count: np.ndarray
    tgt_count: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.pair_src)

    def src_phrase(self, k: int) -> tuple[str, ...]:
        """Words of source phrase ``k``."""
        return tuple(
            self.src_vocab[w] for w in self.src_ids[self.src_offsets[k] : self.src_offsets[k + 1]]
        )

    def tgt_phrase(self, k: int) -> tuple[str, ...]:
        return tuple(
            self.tgt_vocab[w] for w in self.tgt_ids[self.tgt_offsets[k] : self.tgt_offsets[k + 1]]
        )

    def pairs(self) -> Iterator[tuple[tuple[str, ...], tuple[str, ...], np.ndarray]]:
        """``(source words, target words, scores (4,))`` for every row, in table order."""
        src = _phrases(self.src_vocab, self.src_ids, self.src_offsets)
        tgt = _phrases(self.tgt_vocab, self.tgt_ids, self.tgt_offsets)
        for s, t, scores in zip(self.pair_src.tolist(), self.pair_tgt.tolist(), self.scores):
            yield src[s], tgt[t], scores

    def to_frame(self):
        """A pandas DataFrame: ``src``, ``tgt`` (space-joined), the four scores and counts."""
        import pandas as pd

        rows = list(self.pairs())
        frame = pd.DataFrame(
            {"src": [" ".join(s) for s, _, _ in rows], "tgt": [" ".join(t) for _, t, _ in rows]}
        )
        for k, name in enumerate(FEATURES):
            frame[name] = self.scores[:, k]
        frame["count"] = self.count
        frame["src_count"] = self.src_count
        frame["tgt_count"] = self.tgt_count
        return frame

    def lookup(self, limit: int | None = None, sources: set | None = None) -> dict:
        """``{source words tuple: [(target words tuple, scores (4,)), ...]}``, best first.

        ``limit`` keeps the first ``limit`` targets per source phrase; ``sources`` keeps only
        those source phrases (filtering the table to a test set, as Moses does).
        """
        out: dict = {}
        starts = np.flatnonzero(np.r_[True, self.pair_src[1:] != self.pair_src[:-1]])
        ends = np.r_[starts[1:], len(self)]
        tgt_cache: dict = {}
        for a, b in zip(starts.tolist(), ends.tolist()):
            s = self.src_phrase(int(self.pair_src[a]))
            if sources is not None and s not in sources:
                continue
            if limit is not None:
                b = min(b, a + limit)
            opts = []
            for r in range(a, b):
                k = int(self.pair_tgt[r])
                t = tgt_cache.get(k)
                if t is None:
                    t = tgt_cache[k] = self.tgt_phrase(k)
                opts.append((t, self.scores[r]))
            out[s] = opts
        return out

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            src_vocab=np.array(self.src_vocab, dtype=str),
            tgt_vocab=np.array(self.tgt_vocab, dtype=str),
            **{
                k: getattr(self, k)
                for k in (
                    "src_ids",
                    "src_offsets",
                    "tgt_ids",
                    "tgt_offsets",
                    "pair_src",
                    "pair_tgt",
                    "count",
                    "src_count",
                    "tgt_count",
                    "scores",
                )
            },
        )

    @classmethod
    def load(cls, path: Path) -> "PhraseTable":
        with np.load(path, allow_pickle=False) as z:
            kw = {k: z[k] for k in z.files}
        kw["src_vocab"] = kw["src_vocab"].tolist()
        kw["tgt_vocab"] = kw["tgt_vocab"].tolist()
        return cls(**kw)


def source_phrases(sentences, max_len: int) -> set:
    """Every contiguous span of at most ``max_len`` words of each sentence (token lists), as word
    tuples: the source phrases a decoder can look up for these sentences."""
    return {
        tuple(s[i:j])
        for s in sentences
        for i in range(len(s))
        for j in range(i + 1, min(len(s), i + max_len) + 1)
    }


def build_phrase_table(
    src: Sequence[Sequence[str]],
    tgt: Sequence[Sequence[str]],
    links: Sequence[Sequence[tuple[int, int]]],
    max_len: int = 7,
    k: int | None = 20,
) -> PhraseTable:
    """Extract, score and prune the phrase table of a word-aligned bitext.

    ``src``/``tgt``: tokenized sentences; ``links[n]``: ``(i, j)`` links of pair ``n``.
    ``k``: keep the ``k`` best targets per source phrase (``None``: keep all).
    """
    if not len(src) == len(tgt) == len(links):
        raise ValueError(
            f"build_phrase_table: {len(src)} source, {len(tgt)} target and {len(links)} "
            "alignment lines (must be equal)"
        )
    S, src_vocab = _word_ids(src)
    T, tgt_vocab = _word_ids(tgt)
    t_given_s, s_given_t = word_translation_tables(S, T, links, 0, 0)
    sp_index, tp_index, pair_src, pair_tgt, count, lex_t, lex_s = _extract_pairs(
        S, T, links, t_given_s, s_given_t, max_len
    )
    c_src = np.bincount(pair_src, weights=count, minlength=len(sp_index)).astype(np.int64)
    c_tgt = np.bincount(pair_tgt, weights=count, minlength=len(tp_index)).astype(np.int64)
    scores = np.stack(
        [
            count / c_src[pair_src],
            count / c_tgt[pair_tgt],
            np.exp(np.asarray(lex_t)),
            np.exp(np.asarray(lex_s)),
        ],
        axis=1,
    )
    order = _pruned_order(pair_src, scores, k)
    pair_src, pair_tgt = pair_src[order], pair_tgt[order]
    # renumber the phrases that survive pruning
    used_s, new_s = np.unique(pair_src, return_inverse=True)
    used_t, new_t = np.unique(pair_tgt, return_inverse=True)
    s_list = list(sp_index)
    t_list = list(tp_index)
    s_ph = [s_list[i] for i in used_s.tolist()]
    t_ph = [t_list[i] for i in used_t.tolist()]
    return PhraseTable(
        src_vocab=src_vocab,
        tgt_vocab=tgt_vocab,
        src_ids=np.fromiter((w for p in s_ph for w in p), dtype=np.int32),
        src_offsets=np.r_[0, np.cumsum([len(p) for p in s_ph])].astype(np.int64),
        tgt_ids=np.fromiter((w for p in t_ph for w in p), dtype=np.int32),
        tgt_offsets=np.r_[0, np.cumsum([len(p) for p in t_ph])].astype(np.int64),
        pair_src=new_s.astype(np.int32),
        pair_tgt=new_t.astype(np.int32),
        count=count[order],
        src_count=c_src[pair_src],
        tgt_count=c_tgt[pair_tgt],
        scores=scores[order],
    )


def _word_ids(sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[str]]:
    """The sentences as word ids, and the vocabulary (id 0 is :data:`NULL`, then the words in order
    of first appearance)."""
    index = {NULL: 0}
    ids = [[index.setdefault(w, len(index)) for w in s] for s in sentences]
    return ids, list(index)


def _extract_pairs(S, T, links, t_given_s, s_given_t, max_len: int):
    """Every phrase pair consistent with the alignment (spans of at most ``max_len`` words),
    counted over the bitext, with the best lexical weight each was extracted with.

    Returns the source and target phrase indexes (phrase -> id, in order of first extraction),
    and per pair, in order of first extraction: its source and target phrase ids, its count, and
    its log lexical weights log lex(t|s) and log lex(s|t) (lists of floats).
    """
    sp_index: dict = {}
    tp_index: dict = {}
    pair_index: dict = {}
    p_count: list[int] = []
    p_lex_t: list[float] = []
    p_lex_s: list[float] = []
    shift = 1 << 32
    for n, (s, t, a) in enumerate(zip(S, T, links)):
        if not a:
            continue
        log_t, log_s = _position_lex(s, t, a, t_given_s, s_given_t, 0, 0)
        pt, ps = _prefix(log_t), _prefix(log_s)
        for s1, s2, t1, t2 in extract_spans(a, len(s), len(t), max_len):
            sk = tuple(s[s1 : s2 + 1])
            si = sp_index.get(sk)
            if si is None:
                si = sp_index[sk] = len(sp_index)
            tk = tuple(t[t1 : t2 + 1])
            ti = tp_index.get(tk)
            if ti is None:
                ti = tp_index[tk] = len(tp_index)
            key = si * shift + ti
            r = pair_index.get(key)
            lt = pt[t2 + 1] - pt[t1]
            ls = ps[s2 + 1] - ps[s1]
            if r is None:
                pair_index[key] = len(p_count)
                p_count.append(1)
                p_lex_t.append(lt)
                p_lex_s.append(ls)
            else:
                p_count[r] += 1
                if lt > p_lex_t[r]:
                    p_lex_t[r] = lt
                if ls > p_lex_s[r]:
                    p_lex_s[r] = ls
    keys = np.fromiter(pair_index.keys(), dtype=np.int64, count=len(pair_index))
    rows = np.fromiter(pair_index.values(), dtype=np.int64, count=len(pair_index))
    del pair_index
    pair_src = np.empty(len(rows), dtype=np.int64)
    pair_tgt = np.empty(len(rows), dtype=np.int64)
    pair_src[rows] = keys // shift
    pair_tgt[rows] = keys % shift
    count = np.asarray(p_count, dtype=np.int64)
    return sp_index, tp_index, pair_src, pair_tgt, count, p_lex_t, p_lex_s


def _pruned_order(pair_src: np.ndarray, scores: np.ndarray, k: int | None) -> np.ndarray:
    """The pairs' order in the table: by source phrase, then p(t|s) descending, then lex(t|s)
    descending; with ``k``, only the first ``k`` of each source phrase."""
    order = np.lexsort((-scores[:, 2], -scores[:, 0], pair_src))
    if k is not None:
        ps_sorted = pair_src[order]
        first = np.r_[0, np.flatnonzero(ps_sorted[1:] != ps_sorted[:-1]) + 1]
        group_start = np.repeat(first, np.diff(np.r_[first, len(order)]))
        order = order[np.arange(len(order)) - group_start < k]
    return order


__all__ = [
    "source_phrases",
    "FEATURES",
    "PhraseTable",
    "build_phrase_table",
    "extract_spans",
    "word_translation_tables",
]
