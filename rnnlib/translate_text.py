"""Translating raw text, one sentence a line, with a :class:`~rnnlib.model_folder.TrainedModel`.

Each line goes the way the book's test sentences go: the source side's tokenizer of the model's
corpus (Moses with its language's rules, or whitespace; lowercased if the corpus was), the
source shortlist (a word outside it is ``[UNK]``), :func:`rnnlib.translate.translate` (beam
search, GroundHog's minimum length as the chapter sets it), the target shortlist's words up to
``EOS``, and the target side's detokenizer, exactly as the chapter detokenizes its translations
for BLEU (:func:`rnnlib.experiments.training_runs.decode_run`: a newline inside a translation
becomes a space). An empty line (or one with no token) gives an empty translation.

Equations
---------
- B §4.1: the Moses tokenizer; shortlists, "Any word not included in the shortlist is mapped to
  a special token ([UNK])"
- B §4.2 / §5: beam search for "a translation that approximately maximizes the conditional
  probability" (:mod:`rnnlib.search`); B Table 1's "No UNK" decoding forbids ``[UNK]``
  (``forbid_unk``)
- B Eq. 6: the weights alpha_ij kept with ``attention=True`` (``(len(output) + 1, len(source) +
  1)``, last row and column the end of sentence)

Deviations: none (the search and tokenization are the chapter's own functions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from .model_folder import TrainedModel
from .specials import UNK
from .translate import translate

#: ``min_len`` that means "the model's own setting" (its chapter's ``min_len`` parameter)
MODEL_DEFAULT = "model"


@dataclass
class Translation:
    """One input line translated: ``line`` as read, ``source`` (its tokens as the model reads
    them: a word outside the source shortlist is ``[UNK]``), ``unknown`` (those words),
    ``output`` (target words, no ``EOS``), ``text`` (detokenized), ``attention`` (``(len(output)
    + 1, len(source) + 1)`` weights alpha_ij, or ``None``: not asked for, an RNNencdec, or an
    empty line)."""

    line: str
    source: list[str]
    unknown: list[str]
    output: list[str]
    text: str
    attention: np.ndarray | None = None


def parse_min_len(text: str | int | None) -> str | int | None:
    """A minimum length as typed: ``groundhog`` (a name of :data:`rnnlib.search.MIN_LENS`),
    ``none`` (no minimum), ``model`` (the model's chapter's setting) or a number of tokens."""
    from .search import MIN_LENS

    if text is None or isinstance(text, int):
        return text
    word = str(text).strip().lower()
    if word == "none":
        return None
    if word == MODEL_DEFAULT or word in MIN_LENS:
        return word
    try:
        n = int(word)
    except ValueError:
        raise ValueError(
            f"min_len={text!r}: choose {', '.join(sorted(MIN_LENS))}, none, "
            f"{MODEL_DEFAULT} or a number of tokens"
        ) from None
    if n < 0:
        raise ValueError(f"min_len={text!r}: a number of tokens must be >= 0")
    return n


class Translator:
    """Translate lines with ``tm`` (built once: the network on ``device``, both tokenizers)."""

    def __init__(self, tm: TrainedModel, device: str | torch.device = "cpu"):
        self.tm = tm
        self.device = torch.device(device)
        self.network = tm.model(self.device)
        self.src_tok = tm.tokenizer.tokenizer("src")
        self.tgt_tok = tm.tokenizer.tokenizer("tgt")

    @property
    def has_attention(self) -> bool:
        """Whether the model aligns (RNNsearch), so that its weights can be drawn."""
        return self.tm.config.arch == "rnnsearch"

    def detokenize(self, words: list[str]) -> str:
        """Target words -> text, as the chapter scores them (module docstring)."""
        return self.tgt_tok.detokenize(words).replace("\n", " ")

    def translate(
        self,
        lines: Sequence[str],
        beam_size: int | None = None,
        min_len: str | int | None = MODEL_DEFAULT,
        forbid_unk: bool = False,
        attention: bool = False,
    ) -> list[Translation]:
        """One :class:`Translation` per line of ``lines`` (in order); ``beam_size`` and
        ``min_len`` default to the model's :class:`~rnnlib.model_folder.SearchSettings`."""
        search = self.tm.search
        beam = search.beam_size if beam_size is None else int(beam_size)
        if beam < 1:
            raise ValueError(f"beam_size={beam}: must be >= 1")
        min_len = parse_min_len(min_len)
        if min_len == MODEL_DEFAULT:
            min_len = search.min_len
        words = [self.src_tok.tokenize(line.rstrip("\n")) for line in lines]
        ids = [self.tm.src_vocab.encode(w) for w in words]
        todo = [i for i, w in enumerate(words) if w]
        options = {} if min_len is None else {"min_len": min_len}  # the chapter's search_options
        hyps = translate(
            self.network,
            [ids[i] for i in todo],
            beam_size=beam,
            forbid_unk=forbid_unk,
            batch_size=search.batch_size,
            attention=attention and self.has_attention,
            **options,
        )
        out = [Translation(line.rstrip("\n"), [], [], [], "") for line in lines]
        for i, hyp in zip(todo, hyps):
            output = self.tm.tgt_vocab.decode(hyp.tokens)
            out[i].source = [w if t != UNK else "[UNK]" for w, t in zip(words[i], ids[i])]
            out[i].unknown = [w for w, t in zip(words[i], ids[i]) if t == UNK]
            out[i].output = output
            out[i].text = self.detokenize(output)
            if hyp.attention is not None:
                out[i].attention = np.asarray(hyp.attention, dtype=float)
        return out


__all__ = ["MODEL_DEFAULT", "Translation", "Translator", "parse_min_len"]
