"""Paper A's RNN Encoder-Decoder as a phrase scorer (Cho et al. 2014, Sec. 3.1 and 4.1).

The network learns ``p(target phrase | source phrase)`` from the *unique* phrase pairs of the
baseline's phrase table, their frequencies ignored (A Sec. 3.1: so that it does not merely learn
to rank pairs by count), with minibatches of 64 pairs drawn at random and Adadelta
(``rnnlib.train.train_preset("paper-a")``). Then every phrase pair the decoder can use gets
``log p(f | e)`` (A Eq. 4, the sum of the word log-probabilities with the ``<end>`` symbol) as
one more log-linear feature (A Eq. 9), and the weights are tuned again with MERT.

Steps, each a function:

* :func:`table_pairs` -- the unique ``(source words, target words)`` pairs of a
  :class:`~rnnlib.smt.phrases.PhraseTable` (optionally a seeded sample of them);
* :func:`encode_pairs` -- the pairs as token ids of the networks' shortlists
  (:class:`~rnnlib.ragged.ParallelArrays`; words outside a shortlist become ``[UNK]``);
* :func:`score_pairs` -- ``log p(tgt | src)`` of each pair, ``(n,) float64``, by
  teacher-forced scoring (:func:`rnnlib.search.score`) in batches of similar length;
* :func:`decoder_pairs` -- every pair the decoder can build for some sentences: the table's
  pairs of their source phrases and the pass-through copy ``(w,) -> (w,)`` of each source word
  the table lacks;
* :func:`rnn_feature` -- those pairs scored, as a :class:`ScoredTable`: a
  :class:`~rnnlib.smt.features.FeatureTable` without a default, so looking up a pair the model
  did not score is an error, never a made-up value.

Equations
---------
- A Eq. 4: the model is trained to maximise (1/N) sum_n log p(y_n | x_n) over phrase pairs
- A Eq. 9: log p(f | e) = sum_n w_n f_n(f, e) + log Z(e); the RNN score is one more f_n
- A Sec. 4.1: "minibatch of 64 randomly selected phrase pairs from a phrase table", Adadelta

Deviations
----------
- ``sample`` trains on a seeded random sample of the unique pairs instead of all of them (the
  ``cpu`` profile's budget; the chapter declares the size). Every pair the decoder can use is
  still scored.
- A pass-through copy of a source word the table lacks is scored by the same model (a real
  ``log p``, often of ``[UNK] -> [UNK]``); the paper does not say what Moses' unknown-word
  copies received.
- A held-out set of unique pairs (``dev``) measures the dev NLL that selects the delivered
  parameters; the paper names no such set for its phrase model.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import torch

from ..batch import source_batch
from ..ragged import ParallelArrays, Ragged
from ..search import score
from .features import FeatureTable, Pair
from .phrases import PhraseTable, source_phrases


def table_pairs(
    table: PhraseTable, sample: int | None = None, seed: int = 0, exclude: Iterable[Pair] = ()
) -> list[Pair]:
    """The unique pairs of ``table`` (each row is one unique pair; counts are ignored), in table
    order, or a seeded random ``sample`` of them without replacement (in table order too).

    ``exclude``: pairs left out before sampling (a held-out dev set).
    """
    skip = set(exclude)
    pairs = [(s, t) for s, t, _ in table.pairs() if (s, t) not in skip]
    if sample is not None:
        if sample < 1:
            raise ValueError(f"table_pairs: sample must be >= 1 or None, got {sample}")
        if sample < len(pairs):
            rng = np.random.default_rng(seed)
            keep = np.sort(rng.choice(len(pairs), size=sample, replace=False))
            pairs = [pairs[int(i)] for i in keep]
    return pairs


def encode_pairs(pairs: Sequence[Pair], src_vocab, tgt_vocab) -> ParallelArrays:
    """``pairs`` as token ids (no BOS/EOS) of the vocabularies
    (:class:`rnnlib.corpus.vocab.Vocab`)."""
    if not pairs:
        raise ValueError("encode_pairs: no phrase pairs")
    return ParallelArrays(
        Ragged.from_lists(src_vocab.encode(s) for s, _ in pairs),
        Ragged.from_lists(tgt_vocab.encode(t) for _, t in pairs),
    )


def unigram_logp(targets: Ragged, n_vocab: int) -> np.ndarray:
    """``(n_vocab,) float64``: the log probabilities of the target unigram model of ``targets``
    (ids of a vocabulary of ``n_vocab`` entries, no ``EOS``): add-one counts over the vocabulary,
    ``EOS`` counted once per target, as :func:`score_pairs` scores a pair's end. A model that
    ignores the source: the floor a phrase scorer is set against."""
    from ..specials import EOS

    counts = np.bincount(np.asarray(targets.ids, dtype=np.int64), minlength=n_vocab) + 1.0
    counts[EOS] += len(targets.offsets) - 1
    return np.log(counts / counts.sum())


def unigram_nll(logp: np.ndarray, targets: Ragged) -> tuple[np.ndarray, np.ndarray]:
    """``(nll (n,), tokens (n,))``: each target's NLL in nats under the unigram model ``logp``
    (:func:`unigram_logp`), its end included, and its tokens (words + ``EOS``)."""
    from ..specials import EOS

    offsets = np.asarray(targets.offsets, dtype=np.int64)
    cum = np.concatenate([[0.0], np.cumsum(logp[np.asarray(targets.ids, dtype=np.int64)])])
    return -(cum[offsets[1:]] - cum[offsets[:-1]] + logp[EOS]), np.diff(offsets) + 1


def score_pairs(model: torch.nn.Module, pairs: ParallelArrays, batch_size: int = 512) -> np.ndarray:
    """``log p(tgt_k | src_k)`` (natural log, ``<end>`` included) of every pair: ``(n,) float64``.

    Pairs are sorted by source then target length so that a batch carries little padding; the
    result is in the pairs' order.
    """
    if batch_size < 1:
        raise ValueError(f"score_pairs: batch_size must be >= 1, got {batch_size}")
    n = len(pairs)
    order = np.lexsort((pairs.tgt.lengths, pairs.src.lengths))
    out = np.empty(n, dtype=np.float64)
    for k in range(0, n, batch_size):
        idx = order[k : k + batch_size]
        batch = source_batch([pairs.src[int(i)] for i in idx])
        lp = score(model, batch, tgt=[pairs.tgt[int(i)].tolist() for i in idx])
        out[idx] = lp.cpu().numpy()
    return out


def decoder_pairs(
    lookup: dict, sentences: Sequence[Sequence[str]], max_phrase_len: int
) -> list[Pair]:
    """Every pair the decoder can use on ``sentences``: the entries of ``lookup`` (``{source
    words: [(target words, scores), ...]}``, :meth:`PhraseTable.lookup`) for the source phrases
    of at most ``max_phrase_len`` words in them, then the pass-through copy ``(w,) -> (w,)`` of
    each source word that ``lookup`` lacks (what :class:`rnnlib.smt.decoder.Decoder` builds
    for an unknown word). Each pair once, in a fixed order."""
    out: list[Pair] = []
    for s in sorted(source_phrases(sentences, max_phrase_len)):
        entries = lookup.get(s)
        if entries:
            out.extend((s, tuple(t)) for t, _ in entries)
        elif len(s) == 1:
            out.append((s, s))
    return out


class ScoredTable(FeatureTable):
    """A :class:`FeatureTable` with no default: :meth:`lookup` of a pair it lacks raises
    ``KeyError`` naming the pair (the decoder must never give a phrase a score nobody computed)."""

    def __init__(self, names: Sequence[str], table: dict):
        super().__init__(names, table)
        self.default = None

    def lookup(self, src: Sequence[str], tgt: Sequence[str]) -> tuple[float, ...]:
        v = self.table.get((tuple(src), tuple(tgt)))
        if v is None:
            raise KeyError(
                f"feature {self.names}: the pair {' '.join(src)!r} ||| {' '.join(tgt)!r} was not "
                "scored (score every pair the decoder can use: rnn_scorer.decoder_pairs)"
            )
        return v

    def save(self, path) -> None:
        """As :meth:`FeatureTable.save`, with ``"default": null`` in the first line."""
        import json

        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps({"names": self.names, "default": None}) + "\n")
            for (s, t), v in self.table.items():
                f.write(
                    json.dumps(
                        {"src": " ".join(s), "tgt": " ".join(t), "values": list(v)},
                        ensure_ascii=False,
                    )
                    + "\n"
                )

    @classmethod
    def load(cls, path) -> "ScoredTable":
        t = FeatureTable.load(path)
        return cls(t.names, t.table)


def rnn_feature(
    model: torch.nn.Module,
    pairs: Sequence[Pair],
    src_vocab,
    tgt_vocab,
    name: str = "rnn",
    batch_size: int = 512,
) -> FeatureTable:
    """``pairs`` scored with ``log p(tgt | src)`` by ``model`` as a one-feature table ``name``
    with no default: looking up a pair that was not scored raises an error."""
    values = score_pairs(model, encode_pairs(pairs, src_vocab, tgt_vocab), batch_size)
    return ScoredTable([name], {p: (float(v),) for p, v in zip(pairs, values)})


__all__ = [
    "ScoredTable",
    "decoder_pairs",
    "encode_pairs",
    "rnn_feature",
    "score_pairs",
    "table_pairs",
    "unigram_logp",
    "unigram_nll",
]
