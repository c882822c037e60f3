"""Nearest-neighbour class purity and the baselines it is set against (Cho et al. 2014, §4.4,
Figs. 4--7: "similar words/phrases cluster", measured instead of read by eye).

* :func:`knn_same` -- for each labelled point, the share of its ``k`` nearest labelled
  neighbours (cosine distance, in the full space) that carry its class, where a neighbour that
  shares the word defining the point's class is not counted (the *leak* of a representation that
  only encodes that word); :func:`knn_purity` is its mean;
* :func:`chance_same` and :func:`chance_purity` -- the same for neighbours drawn at random;
* :func:`bag_of_words` (phrases as word counts) and :func:`context_counts` (words as the counts
  of the words around them) -- the representations one gets without a network;
* :func:`purity_measure` -- one measure (a column of the chapter's table) for every
  representation at once, as a :class:`Purity`; it never raises for want of labelled points: a
  class with too few points is left out and named, and a measure that cannot be taken says why
  (:func:`unmeasurable_reason`).

The intervals of the claims built on these shares come from :func:`rnnlib.stats.bootstrap_mean`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np


def _labelled(labels: Sequence) -> np.ndarray:
    return np.array([lab is not None for lab in labels], dtype=bool)


#: rows of the distance matrix computed at once (memory: rows x labelled points float64)
CHUNK = 512


def _unit_rows(X):
    """``X``'s rows scaled to length 1 (a zero row stays zero: cosine distance 1 to everything,
    as scikit-learn's ``cosine_distances`` gives it), dense float64 or CSR."""
    from scipy.sparse import csr_matrix, diags, issparse

    if issparse(X):
        X = csr_matrix(X, dtype=np.float64)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel())
        return diags(np.where(norms > 0, 1 / np.where(norms > 0, norms, 1), 0)) @ X
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1)


def _shares_word(defining: Sequence | None, n: int):
    """A function of a row slice: ``(rows, n) bool``, True where two labelled points share a word
    of their ``defining`` sets (each point with itself included); ``None``: only itself."""
    from scipy.sparse import csr_matrix

    if defining is None:
        return lambda rows: np.arange(rows.start, rows.stop)[:, None] == np.arange(n)[None, :]
    index: dict = {}
    r, c = [], []
    for i, words in enumerate(defining):
        for w in words:
            r.append(i)
            c.append(index.setdefault(w, len(index)))
    M = csr_matrix((np.ones(len(r)), (r, c)), shape=(n, max(1, len(index))))

    def shares(rows):
        out = (M[rows] @ M.T).toarray() > 0
        out[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = True
        return out

    return shares


def _check(X, labels: Sequence, defining: Sequence | None) -> None:
    if len(labels) != X.shape[0]:
        raise ValueError(f"knn_purity: {X.shape[0]} rows but {len(labels)} labels")
    if defining is not None and len(defining) != len(labels):
        raise ValueError(f"knn_purity: {len(labels)} labels but {len(defining)} defining sets")


def knn_same(X, labels: Sequence, k: int = 10, defining: Sequence | None = None) -> np.ndarray:
    """For each labelled row of ``X (N, d)`` (dense array or scipy sparse matrix), in order, the
    share of its ``k`` nearest labelled neighbours (cosine distance, the row itself excluded;
    ties go to the earlier row) that carry the same label: ``(L,) float64`` for the ``L``
    labelled rows. ``labels``: ``N`` labels, ``None`` for unlabelled rows (left out both as
    points and as neighbours).

    ``defining``: ``N`` sets of the words that define each point's label (the time word of a
    phrase of class *time*, the first two words of a pattern). A neighbour that shares one of
    them with the point is not counted at all (the next one is taken), in every representation
    alike: a representation that only encodes the very word defining the label gets no hit for
    it. A point with fewer than ``k`` such neighbours takes those it has; with none its share is
    NaN (:func:`purity_measure` leaves it out)."""
    _check(X, labels, defining)
    keep = _labelled(labels)
    y = np.array([str(lab) for lab in labels], dtype=object)[keep]
    if len(y) <= k:
        raise ValueError(f"knn_purity: {len(y)} labelled points, need more than k={k}")
    Xl = _unit_rows(X[np.flatnonzero(keep)])
    shares = _shares_word(
        None if defining is None else [defining[i] for i in np.flatnonzero(keep)], len(y)
    )
    same = np.full(len(y), np.nan)
    for start in range(0, len(y), CHUNK):
        rows = slice(start, min(start + CHUNK, len(y)))
        sim = Xl[rows] @ Xl.T
        dist = 1 - (sim.toarray() if hasattr(sim, "toarray") else np.asarray(sim))
        excluded = shares(rows)
        dist[excluded] = np.inf
        order = np.argsort(dist, axis=1, kind="stable")[:, :k]
        usable = ~excluded[np.arange(len(order))[:, None], order]
        hits = (y[order] == y[rows][:, None]) & usable
        n = usable.sum(1)
        same[rows] = np.where(n > 0, hits.sum(1) / np.maximum(n, 1), np.nan)
    return same


def knn_purity(X, labels: Sequence, k: int = 10, defining: Sequence | None = None) -> float:
    """The nearest-neighbour class purity: the mean of :func:`knn_same` over the labelled rows."""
    return float(np.nanmean(knn_same(X, labels, k, defining)))


def chance_same(labels: Sequence, defining: Sequence | None = None) -> np.ndarray:
    """For each labelled point, in order, the expected share of same-label neighbours when they
    are drawn at random among the other labelled points it may count (with ``defining``: those
    that share none of its defining words, as in :func:`knn_same`): ``(n_c - 1) / (N - 1)`` for
    its label ``c`` without ``defining``; NaN for a point with no such neighbour. ``(L,)
    float64`` (its mean is :func:`chance_purity`)."""
    y = np.array([str(lab) for lab in labels if lab is not None], dtype=object)
    if len(y) < 2:
        raise ValueError("chance_purity: fewer than two labelled points")
    if defining is None:
        counts = Counter(y)
        return np.array([(counts[lab] - 1) / (len(y) - 1) for lab in y], dtype=float)
    kept = [d for d, lab in zip(defining, labels) if lab is not None]
    shares = _shares_word(kept, len(y))
    out = np.full(len(y), np.nan)
    for start in range(0, len(y), CHUNK):
        rows = slice(start, min(start + CHUNK, len(y)))
        allowed = ~shares(rows)
        n = allowed.sum(1)
        hits = (allowed & (y[rows][:, None] == y[None, :])).sum(1)
        out[rows] = np.where(n > 0, hits / np.maximum(n, 1), np.nan)
    return out


def chance_purity(labels: Sequence, defining: Sequence | None = None) -> float:
    """The expected :func:`knn_purity` when the neighbours are drawn at random among the other
    labelled points (that share no defining word): ``sum_c n_c (n_c - 1) / (N (N - 1))``
    without ``defining``."""
    return float(np.nanmean(chance_same(labels, defining)))


@dataclass
class Purity:
    """One purity measure (a column of the chapter's table) as :func:`purity_measure` took it.

    ``labels``: the labels measured, a left-out class's points set to ``None``; ``members``:
    the points of every class before leaving any out (the ``expected`` ones included, 0 when
    absent); ``left_out``: the classes with fewer than ``min_members`` points and their count;
    ``reason``: why nothing could be measured (``None`` when it was); ``same``: per
    representation, in the order given, then ``"chance"``, the per-point shares of
    :func:`knn_same` (:func:`chance_same`) over the labelled points that have a neighbour they
    may count (empty arrays when ``reason``); ``alone``: the labelled points left out for having
    none (every other labelled point shares a defining word with them); ``leak``: purities a
    caller measured outside this rule (the leak check: a baseline with the leak kept)."""

    labels: list
    members: dict[str, int]
    left_out: dict[str, int]
    reason: str | None
    same: dict[str, np.ndarray]
    alone: int = 0
    leak: dict[str, float] = field(default_factory=dict)

    @property
    def measured(self) -> bool:
        return self.reason is None

    @property
    def points(self) -> int:
        """The labelled points measured."""
        return sum(lab is not None for lab in self.labels) - self.alone

    def purity(self) -> dict[str, float]:
        """The mean share per representation (NaN for each when nothing was measured)."""
        return {
            name: float(v.mean()) if self.measured else float("nan")
            for name, v in self.same.items()
        }


def unmeasurable_reason(labels: Sequence, k: int) -> str | None:
    """Why the ``k``-nearest-neighbour purity of ``labels`` cannot be measured, or ``None``: no
    labelled point, a single class (every neighbour shares it), no class with two points (no
    point can have a neighbour of its own class), or no more than ``k`` labelled points."""
    counts = Counter(lab for lab in labels if lab is not None)
    n = sum(counts.values())
    if n == 0:
        return "no point has a category"
    if len(counts) == 1:
        ((only, m),) = counts.items()
        return f"only one category is left ({only}, {m} points): every neighbour would share it"
    if max(counts.values()) < 2:
        return "no category has two points: no point can have a neighbour of its own category"
    if n <= k:
        return f"only {n} labelled points, fewer than the {k} neighbours of each plus itself"
    return None


def purity_measure(
    labels: Sequence,
    representations: dict,
    k: int = 10,
    min_members: int = 2,
    expected: Sequence[str] = (),
    defining: Sequence | None = None,
) -> Purity:
    """The nearest-neighbour class purity of ``labels`` (``N`` labels, ``None``: unlabelled) in
    each of ``representations`` (name -> ``(N, d)`` array or sparse matrix), plus chance, as a
    :class:`Purity`. It never raises for want of labelled points:

    * a class with fewer than ``min_members`` points (``expected`` names classes that count as
      present with 0 points) is left out: its points become unlabelled, and ``left_out`` says so;
    * when what is left cannot be measured (:func:`unmeasurable_reason`), ``reason`` says why
      and nothing is computed.

    With every class at ``min_members`` or more, the shares are those of :func:`knn_same` and
    :func:`chance_same` on ``labels`` as given, and ``defining`` (``N`` sets of words, see
    :func:`knn_same`) keeps a neighbour sharing a point's defining word from counting; a point
    with no neighbour it may count is left out of every representation alike (``alone``)."""
    if min_members < 1:
        raise ValueError(f"purity_measure: min_members must be >= 1, got {min_members}")
    counts = Counter(lab for lab in labels if lab is not None)
    members = {c: counts.get(c, 0) for c in expected}
    members.update({c: n for c, n in counts.items() if c not in members})
    left_out = {c: n for c, n in members.items() if n < min_members}
    kept = [None if lab is None or lab in left_out else lab for lab in labels]
    reason = unmeasurable_reason(kept, k)
    alone = 0
    if reason is None:
        chance = chance_same(kept, defining)
        has = ~np.isnan(chance)
        alone = int((~has).sum())
        if not has.any():
            reason = "no labelled point has a neighbour that does not share its defining word"
    if reason is None:
        same = {name: knn_same(X, kept, k, defining)[has] for name, X in representations.items()}
        same["chance"] = chance[has]
    else:
        same = {name: np.zeros(0) for name in [*representations, "chance"]}
    return Purity(kept, members, left_out, reason, same, alone)


def bag_of_words(phrases: Sequence[Sequence[str]]):
    """Phrases as word-count vectors: a scipy CSR matrix ``(N, V)`` (the bag-of-words baseline)."""
    from scipy.sparse import csr_matrix

    index: dict[str, int] = {}
    rows, cols = [], []
    for i, p in enumerate(phrases):
        for w in p:
            rows.append(i)
            cols.append(index.setdefault(w, len(index)))
    return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(phrases), max(1, len(index))))


#: the bag-of-words baseline of a word: counts of this many most frequent words ...
CONTEXT_WORDS = 2000
#: ... within this many positions of it
CONTEXT_WINDOW = 2


def context_counts(
    words: Sequence[str],
    sentences: Iterable[Sequence[str]],
    window: int = CONTEXT_WINDOW,
    contexts: int = CONTEXT_WORDS,
    exclude: Iterable[str] = (),
):
    """Words as counts of the ``contexts`` most frequent words within ``window`` positions of
    them in ``sentences``: a CSR matrix ``(len(words), contexts)`` -- the bag-of-words baseline
    for single words (a word's one-hot vector has no neighbours). ``exclude``: words never used
    as contexts (compared lowercased; the cues that define a category, so that the baseline
    does not count the very words that set the label)."""
    from scipy.sparse import csr_matrix

    sentences = list(sentences)
    skip = {w.lower() for w in exclude}
    freq = Counter(w for s in sentences for w in s if w.lower() not in skip)
    ctx = {w: j for j, (w, _) in enumerate(freq.most_common(contexts))}
    row_of = {w: i for i, w in enumerate(words)}
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for s in sentences:
        for i, w in enumerate(s):
            r = row_of.get(w)
            if r is None:
                continue
            for j in range(max(0, i - window), min(len(s), i + window + 1)):
                if j != i and s[j] in ctx:
                    counts[(r, ctx[s[j]])] += 1
    if counts:
        (r, c), v = zip(*counts.keys()), list(counts.values())
    else:
        r, c, v = (), (), []
    return csr_matrix((v, (r, c)), shape=(len(words), max(1, len(ctx))), dtype=float)
