"""The target n-gram language model of the baseline: interpolated modified Kneser-Ney.

Chen & Goodman (1998, Sec. 3.5 and 4.1.6), in the form KenLM's ``lmplz`` estimates it
(Heafield et al. 2013):

* *adjusted counts*: the highest order uses raw counts; a lower-order n-gram ``g`` uses its
  continuation count ``N1+(. g)`` (how many distinct words precede it), except n-grams that
  start with ``<s>``, which keep their raw count (nothing can precede them);
* three discounts per order from the count-of-counts ``n1..n4`` of the adjusted counts:
  ``Y = n1 / (n1 + 2 n2)``, ``D1 = 1 - 2Y n2/n1``, ``D2 = 2 - 3Y n3/n2``, ``D3+ = 3 - 4Y n4/n3``;
* ``p(w|h) = (a(hw) - D(a(hw))) / sum_v a(hv) + gamma(h) p(w|h')`` with
  ``gamma(h) = (D1 N1(h.) + D2 N2(h.) + D3+ N3+(h.)) / sum_v a(hv)``, down to the unigrams,
  which are interpolated with the uniform distribution over the vocabulary plus ``<unk>``.

:func:`estimate` runs the three phases, each a function: counting (:func:`_count`), count
adjustment (:func:`_adjust`), discounts and interpolation (:func:`_discounts`,
:func:`_interpolate`).

The model is written as an ARPA file (``p`` of every seen n-gram already interpolated,
``gamma(h)`` as the back-off weight of ``h``) and queried with the ``kenlm`` module.
Counting is done on numpy arrays: each n-gram is an integer ``id(prefix) * V + last word``.

Deviations
----------
* When an order's count-of-counts make a discount fall outside ``(0, c)`` (tiny corpora),
  the discounts of that order fall back to ``(0.5, 1.0, 1.5)`` (lmplz would stop with an
  error instead).
* No pruning of singleton n-grams (lmplz's default does not prune either).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

UNK, BOS, EOS = "<unk>", "<s>", "</s>"
FALLBACK_DISCOUNTS = (0.5, 1.0, 1.5)


@dataclass
class KneserNey:
    """The estimated model: per order ``n`` (index ``n - 1``) the n-grams and their values.

    ``words[n-1]: (M_n, n) int64`` word ids of each n-gram; ``logp[n-1]: (M_n,)`` log10 of the
    interpolated probability; ``logbow[n-1]: (M_n,)`` log10 back-off weight (0 at the top
    order); ``discounts[n-1] = (D1, D2, D3+)``; ``vocab[i]`` is the word of id ``i``
    (``vocab[0:3] = <unk>, <s>, </s>``).
    """

    vocab: list[str]
    words: list[np.ndarray]
    logp: list[np.ndarray]
    logbow: list[np.ndarray]
    discounts: list[tuple[float, float, float]]

    @property
    def order(self) -> int:
        return len(self.words)

    def write_arpa(self, path: Path) -> None:
        """Write the model in ARPA format (readable by ``kenlm.Model``)."""
        vocab = np.array(self.vocab, dtype=object)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\\data\\\n")
            for n, w in enumerate(self.words, start=1):
                f.write(f"ngram {n}={len(w)}\n")
            for n, (w, lp, lb) in enumerate(zip(self.words, self.logp, self.logbow), start=1):
                f.write(f"\n\\{n}-grams:\n")
                text = vocab[w[:, 0]]
                for k in range(1, n):
                    text = text + " " + vocab[w[:, k]]
                top = n == self.order
                lines = []
                for p, t, b in zip(lp.tolist(), text.tolist(), lb.tolist()):
                    if top:
                        lines.append(f"{p:.6f}\t{t}\n")
                    else:
                        lines.append(f"{p:.6f}\t{t}\t{b:.6f}\n")
                f.writelines(lines)
            f.write("\n\\end\\\n")


def _discounts(adjusted: np.ndarray) -> tuple[float, float, float]:
    """The modified discounts ``(D1, D2, D3+)`` of one order from the count-of-counts ``n1..n4``
    of its adjusted counts ``adjusted (M,)`` (Chen & Goodman 1998, Sec. 3.5 and 4.1.6):
    ``Y = n1 / (n1 + 2 n2)``, ``D1 = 1 - 2Y n2/n1``, ``D2 = 2 - 3Y n3/n2``,
    ``D3+ = 3 - 4Y n4/n3``; :data:`FALLBACK_DISCOUNTS` when a count-of-count is 0 or a discount
    falls outside ``(0, c)`` (module docstring, Deviations).
    """
    n = [int(np.count_nonzero(adjusted == k)) for k in (1, 2, 3, 4)]
    try:
        y = n[0] / (n[0] + 2 * n[1])
        d = (1 - 2 * y * n[1] / n[0], 2 - 3 * y * n[2] / n[1], 3 - 4 * y * n[3] / n[2])
    except ZeroDivisionError:
        return FALLBACK_DISCOUNTS
    if not all(0 < dk < k for dk, k in zip(d, (1, 2, 3))):
        return FALLBACK_DISCOUNTS
    return d


@dataclass
class _Counts:
    """The n-grams of a corpus, per order ``n`` (index ``n - 1``), as counted by :func:`_count`.

    ``raw[n-1]: (M_n,)`` raw count ``c(g)`` of each n-gram ``g``; ``words[n-1]: (M_n, n)`` its
    word ids; ``prefix[n-1]: (M_n,)`` index of its first ``n - 1`` words among the
    (n-1)-grams and ``suffix[n-1]: (M_n,)`` index of its last ``n - 1`` words (both ``None`` at
    ``n = 1``); ``first[n-1]: (M_n,)`` its first word id. ``vocab[i]`` is the word of id ``i``.
    """

    vocab: list[str]
    raw: list[np.ndarray]
    words: list[np.ndarray]
    prefix: list[np.ndarray | None]
    suffix: list[np.ndarray | None]
    first: list[np.ndarray]


def _token_stream(sentences: Sequence[Sequence[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The corpus as one stream of word ids, each sentence as ``<s> w_1 .. w_m </s>``.

    Returns ``vocab`` (``vocab[0:3] = <unk>, <s>, </s>``, then the words in order of first
    appearance), ``tok (L,) int64`` (the ids) and ``last_pos (L,) int64`` (for each token, the
    position of the last token of its sentence: no n-gram crosses it).
    """
    index = {UNK: 0, BOS: 1, EOS: 2}
    toks: list[int] = []
    last: list[int] = []  # position of the last token of each token's sentence
    for n, sent in enumerate(sentences):
        if isinstance(sent, str):
            raise TypeError(f"sentence {n} is a str; pass lists of tokens")
        ids = [1] + [index.setdefault(w, len(index)) for w in sent] + [2]
        end = len(toks) + len(ids) - 1
        toks.extend(ids)
        last.extend([end] * len(ids))
    return list(index), np.asarray(toks, dtype=np.int64), np.asarray(last, dtype=np.int64)


def _count(vocab: list[str], tok: np.ndarray, last_pos: np.ndarray, order: int) -> _Counts:
    """Counting: the raw counts ``c(g)`` of every n-gram up to ``order`` that occurs in the stream.

    Order by order, each n-gram is the integer ``id(prefix) * V + last word``, so one
    ``np.unique`` over the positions where an n-gram fits in its sentence counts them all;
    ``pos_id[i]`` keeps the index of the n-gram starting at position ``i`` for the next order.
    Stops early at the first order with no n-gram (every sentence shorter).
    """
    V = len(vocab)
    pos = np.arange(len(tok))
    c = _Counts(vocab, raw=[], words=[], prefix=[], suffix=[], first=[])
    pos_id = None
    for n in range(1, order + 1):
        valid = pos + n - 1 <= last_pos
        p = pos[valid]
        if n == 1:
            keys = tok
        else:
            keys = pos_id[p] * V + tok[p + n - 1]
        uniq, inv, cnt = np.unique(keys, return_inverse=True, return_counts=True)
        if len(uniq) == 0:
            break
        new_pos_id = np.full(len(tok), -1, dtype=np.int64)
        new_pos_id[p] = inv
        c.raw.append(cnt)
        if n == 1:
            c.prefix.append(None)
            c.suffix.append(None)
            c.first.append(uniq)
            c.words.append(uniq[:, None])
        else:
            pre = uniq // V
            suf = np.empty(len(uniq), dtype=np.int64)
            suf[inv] = pos_id[p + 1]
            c.prefix.append(pre)
            c.suffix.append(suf)
            c.first.append(c.first[-1][pre])
            c.words.append(np.column_stack([c.words[-1][pre], uniq % V]))
        pos_id = new_pos_id
    return c


def _adjust(c: _Counts) -> list[np.ndarray]:
    """Count adjustment (Chen & Goodman 1998, Sec. 3.5 and 4.1.6): the counts ``a(g)`` that
    the discounts and the probabilities of each order are computed from.

    The highest order keeps its raw counts ``c(g)``; a lower-order n-gram ``g`` takes its
    continuation count ``N1+(. g)``, the number of distinct words that precede it (the
    (n+1)-grams whose suffix it is), except an n-gram starting with ``<s>``, which keeps its
    raw count (nothing can precede it). Returns ``a[n-1]: (M_n,) int64`` per order.
    """
    N = len(c.raw)
    adjusted = []
    for n in range(1, N + 1):
        if n == N:
            adjusted.append(c.raw[n - 1])
        else:
            cont = np.bincount(c.suffix[n], minlength=len(c.raw[n - 1]))
            adjusted.append(np.where(c.first[n - 1] == 1, c.raw[n - 1], cont))
    return adjusted


def _interpolate(c: _Counts, adjusted: list[np.ndarray]) -> KneserNey:
    """Interpolation (Chen & Goodman 1998, Sec. 3.5 and 4.1.6, with the modified discounts): the
    interpolated probabilities and back-off weights, order by order from the unigrams up.

    With ``D(a)`` the order's ``D1``, ``D2`` or ``D3+`` (:func:`_discounts`) for ``a = 1, 2,
    >= 3``: ``p(w|h) = (a(hw) - D(a(hw))) / sum_v a(hv) + gamma(h) p(w|h')`` and
    ``gamma(h) = (D1 N1(h.) + D2 N2(h.) + D3+ N3+(h.)) / sum_v a(hv)``, which becomes the
    back-off weight of ``h`` (1, i.e. log10 0, where ``h`` is no context). The unigrams are
    interpolated with the uniform distribution over the vocabulary plus ``<unk>``; ``<s>`` is
    never predicted (log10 p = -99), and ``<unk>`` is added as a unigram with its share of the
    uniform mass when the corpus has none.
    """
    words = list(c.words)
    logp, logbow, discounts = [], [], []
    prob_prev = None
    for n in range(1, len(c.raw) + 1):
        a = adjusted[n - 1].astype(np.float64)
        if n == 1:
            a = np.where(words[0][:, 0] == 1, 0.0, a)  # <s> is never predicted
        d = _discounts(adjusted[n - 1][a > 0])
        discounts.append(d)
        disc = np.select([a == 1, a == 2, a >= 3], list(d), 0.0)
        if n == 1:
            denom = a.sum()
            types = np.count_nonzero(a > 0) + (0 if (words[0][:, 0] == 0).any() else 1)  # + <unk>
            gamma0 = disc.sum() / denom
            prob = (a - disc) / denom + np.where(a > 0, gamma0 / types, 0.0)
            unk_p = gamma0 / types
        else:
            pre = c.prefix[n - 1]
            m_prev = len(c.raw[n - 2])
            denom = np.bincount(pre, weights=a, minlength=m_prev)
            gsum = np.bincount(pre, weights=disc, minlength=m_prev)
            gamma = np.divide(gsum, denom, out=np.zeros(m_prev), where=denom > 0)
            prob = (a - disc) / denom[pre] + gamma[pre] * prob_prev[c.suffix[n - 1]]
            # back-off weights of the (n-1)-grams: gamma where they are contexts, else 1
            logbow[n - 2] = np.where(denom > 0, np.log10(np.where(denom > 0, gamma, 1.0)), 0.0)
        lp = np.log10(np.maximum(prob, 1e-300))
        if n == 1:
            lp = np.where(words[0][:, 0] == 1, -99.0, lp)
        logp.append(lp)
        logbow.append(np.zeros(len(prob)))
        prob_prev = prob
    # make sure <unk> is listed as a unigram with its share of the uniform mass
    if not (words[0][:, 0] == 0).any():
        words[0] = np.vstack([[[0]], words[0]])
        logp[0] = np.r_[math.log10(unk_p), logp[0]]
        logbow[0] = np.r_[0.0, logbow[0]]
    return KneserNey(vocab=c.vocab, words=words, logp=logp, logbow=logbow, discounts=discounts)


def estimate(sentences: Sequence[Sequence[str]], order: int = 5) -> KneserNey:
    """Estimate an interpolated modified Kneser-Ney model of ``order`` from tokenized sentences.

    Chen & Goodman's (1998) modified Kneser-Ney in three phases: counting (:func:`_count`),
    count adjustment (:func:`_adjust`) and interpolation with the discounts ``D1, D2, D3+`` of
    each order (:func:`_discounts`, :func:`_interpolate`).
    """
    if order < 2:
        raise ValueError(f"order must be >= 2 (KenLM reads bigram models and up), got {order}")
    vocab, tok, last_pos = _token_stream(sentences)
    counts = _count(vocab, tok, last_pos, order)
    return _interpolate(counts, _adjust(counts))


def load_kenlm(path: Path):
    """``kenlm.Model`` of an ARPA file, loaded silently: no progress bar, and no advice to build
    KenLM's binary format (the ``kenlm`` module cannot write it; the ARPA files here load in
    seconds)."""
    import kenlm

    config = kenlm.Config()
    config.show_progress = False
    config.arpa_complain = kenlm.ARPALoadComplain.NONE
    return kenlm.Model(str(path), config)


class NgramLM:
    """A KenLM model loaded from an ARPA file, with corpus-level helpers."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.model = load_kenlm(self.path)
        self.order = self.model.order

    def sentence_log10(self, words: Sequence[str]) -> float:
        """log10 p(words </s> | <s>)."""
        return self.model.score(" ".join(words), bos=True, eos=True)

    def perplexity(self, sentences: Sequence[Sequence[str]]) -> float:
        """Corpus perplexity over all words and one ``</s>`` per sentence."""
        total = sum(self.sentence_log10(s) for s in sentences)
        count = sum(len(s) + 1 for s in sentences)
        return 10.0 ** (-total / max(count, 1))

    def conditional(self, context: Sequence[str], word: str) -> float:
        """p(word | context) (a probability); ``context`` may start with ``<s>``."""
        import kenlm

        state, out = kenlm.State(), kenlm.State()
        ctx = list(context)
        if ctx and ctx[0] == BOS:
            self.model.BeginSentenceWrite(state)
            ctx = ctx[1:]
        else:
            self.model.NullContextWrite(state)
        for w in ctx:
            self.model.BaseScore(state, w, out)
            state, out = out, state
        return 10.0 ** self.model.BaseScore(state, word, out)


def train_arpa(sentences: Sequence[Sequence[str]], path: Path, order: int = 5) -> KneserNey:
    """Estimate the model and write it to ``path`` (ARPA). Returns the model."""
    model = estimate(sentences, order)
    model.write_arpa(Path(path))
    return model


__all__ = ["KneserNey", "NgramLM", "estimate", "load_kenlm", "train_arpa"]
