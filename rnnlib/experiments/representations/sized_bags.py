"""The bag of words like for like with the network (A §4.4's representations): built only from the
phrase pairs the network's minibatches held, and cut by a truncated SVD to the size of the
network's own vectors (the embedding ``e(x)`` for words, the code ``c`` for phrases).

The purity table's *bag of words* counts a word's contexts over the whole training text, in
thousands of dimensions, while the network read a share of the unique pairs into a few dozen
numbers; the row this module makes (``purity_claims.SIZED``) is context for the
clustering claims (what the network's data and size allow a count model), not a rival they must
beat."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...minibatch_order import RandomBatcher
from ..cho2014.scorer import PhraseScorer
from .categories import CUE_WORDS
from .labelled_points import LabelledPoints
from .purity import context_counts


def seen_pairs(scorer: PhraseScorer, updates: int | None = None) -> list:
    """The distinct pairs of ``scorer.train_pairs`` its minibatches held over its first
    ``updates`` updates (``None``: every update it trained, its artifact's ``updates``), rebuilt
    from its random minibatch order (:class:`rnnlib.minibatch_order.RandomBatcher`, A §4.1's
    "minibatches of 64 phrase pairs drawn at random"), in the order of ``train_pairs``."""
    tc = scorer.train_config
    if tc.batching != "random":
        raise ValueError(f"seen_pairs: the scorer's batching is {tc.batching!r}, not 'random'")
    updates = int(scorer.artifact.extra["updates"]) if updates is None else updates
    stream = RandomBatcher(len(scorer.train_pairs), tc.batch_size, tc.seed).stream()
    held = np.unique(np.concatenate([next(stream)[0] for _ in range(max(updates, 1))]))
    return [scorer.train_pairs[int(i)] for i in held]


def _counts(phrases: Sequence[Sequence[str]], index: dict[str, int]):
    """``(N, len(index))`` CSR word counts of ``phrases`` over the words of ``index`` (others
    dropped)."""
    from scipy.sparse import csr_matrix

    rows, cols = [], []
    for i, p in enumerate(phrases):
        for w in p:
            if w in index:
                rows.append(i)
                cols.append(index[w])
    shape = (len(phrases), max(1, len(index)))
    return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)


def svd_rows(X, dim: int, fit=None, seed: int = 0) -> np.ndarray:
    """``(N, dim) float64``: the rows of ``X`` (``(N, V)``, sparse or dense) on the ``dim``
    leading right singular vectors of ``fit`` (``(M, V)``; ``None``: ``X`` itself), by
    scikit-learn's randomized truncated SVD (``seed``); columns past ``fit``'s rank less one
    are 0."""
    from sklearn.decomposition import TruncatedSVD

    fit = X if fit is None else fit
    k = min(dim, min(fit.shape) - 1)
    out = np.zeros((X.shape[0], dim))
    if k >= 1:
        svd = TruncatedSVD(n_components=k, random_state=seed).fit(fit.astype(np.float64))
        out[:, :k] = svd.transform(X.astype(np.float64))
    return out


def sized_bags(points: LabelledPoints, scorer: PhraseScorer, seed: int = 0) -> dict:
    """The bag of words at the network's size, per column of the purity table
    (:mod:`.purity_claims`): for words, the counts of the words within
    :data:`~.purity.CONTEXT_WINDOW` positions of each (the place cues left out, as the table's
    bag of words) in the source phrases of the pairs the network saw (:func:`seen_pairs`), cut
    to the embedding's size ``(W, emb)``; for phrases, their word counts projected on the SVD
    of the seen source phrases' counts, at the code's size ``(P, n)``."""
    sources = sorted({s for s, _ in seen_pairs(scorer)})
    words = context_counts(points.words, sources, exclude=CUE_WORDS)
    index: dict[str, int] = {}
    for s in sources:
        for w in s:
            index.setdefault(w, len(index))
    phrases = svd_rows(
        _counts(points.phrases, index), points.codes.shape[1], _counts(sources, index), seed
    )
    return {
        "words: category": svd_rows(words, points.emb.shape[1], seed=seed),
        "phrases: semantic class": phrases,
        "phrases: pattern": phrases,
    }
