"""Translating a whole test set: batched beam search over sentences sorted by length.

:func:`translate` decodes a list of source sentences (token ids, no ``BOS``/``EOS``) with
:func:`rnnlib.search.beam_search` in minibatches of sentences of similar length, so little
of every batch is padding, and returns one :class:`~rnnlib.search.Hypothesis` per sentence in
the input order. ``forbid_unk=True`` is the decoding of Bahdanau et al. 2015's "No UNK"
column: the model may not generate ``[UNK]``.

Equations
---------
- B §4.2 / §5: "we use a beam search to find a translation that approximately maximizes the
  conditional probability" (the search itself is rnnlib.search)
- B Table 1, caption: "We disallowed the models to generate [UNK] tokens when only the
  sentences having no unknown words were evaluated" (``forbid_unk=True``)

Deviations
----------
- Beam width is not given in B (Reading the papers, ``reading-beam-search``); it is a parameter
  (10 by default).
- Sorting by length only changes which sentences share a batch; a sentence's result is the
  same as when it is searched alone (tested).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from .batch import source_batch
from .search import Hypothesis, MaxLen, beam_search


def translate(
    model: torch.nn.Module,
    sources: Sequence[np.ndarray | Sequence[int]],
    beam_size: int = 10,
    forbid_unk: bool = False,
    batch_size: int = 32,
    max_len: MaxLen = None,
    length_norm: bool | float = False,
    bf16: bool = False,
    attention: bool = False,
    progress: Callable[[int], None] | None = None,
    min_len: MaxLen | str = None,
) -> list[Hypothesis]:
    """The best hypothesis for every sentence of ``sources`` (in their order).

    ``sources``: token-id sequences (no BOS/EOS); ``batch_size``: sentences per search batch
    (each is searched with ``beam_size`` beams, so a batch holds ``batch_size * beam_size``
    rows); ``attention``: keep ``Hypothesis.attention`` (``(len(tokens) + 1, S)``), otherwise
    it is dropped to save memory. ``progress(n)`` is called with the number of sentences
    finished after every batch. The other arguments are those of :func:`beam_search`.
    """
    if batch_size < 1:
        raise ValueError(f"translate: batch_size={batch_size} must be >= 1")
    if any(len(s) == 0 for s in sources):
        raise ValueError("translate: a source sentence is empty")
    order = np.argsort([len(s) for s in sources], kind="stable")
    out: list[Hypothesis | None] = [None] * len(sources)
    done = 0
    for start in range(0, len(order), batch_size):
        index = order[start : start + batch_size]
        batch = source_batch([np.asarray(sources[i]) for i in index])
        nbest = beam_search(
            model,
            batch.src,
            batch.src_mask,
            beam_size=beam_size,
            max_len=max_len,
            length_norm=length_norm,
            forbid_unk=forbid_unk,
            bf16=bf16,
            min_len=min_len,
        )
        for i, hyps in zip(index, nbest):
            best = hyps[0] if hyps else Hypothesis([], float("-inf"), None)
            if not attention:
                best = Hypothesis(best.tokens, best.score, None)
            out[int(i)] = best
        done += len(index)
        if progress is not None:
            progress(done)
    return out  # type: ignore[return-value]


__all__ = ["translate"]
