"""Moses tokenization (for the models) and detokenization (for sacreBLEU), via sacremoses.

Bahdanau et al. 2015, Sec. 4.1: "we use the tokenization script from the open-source machine
translation package, Moses"; no lowercasing or stemming (``lowercase`` is an option here).
A tokenized sentence is a list of strings with no spaces; files store them space-joined.

``kind="whitespace"`` splits on spaces only, for corpora that are already tokenized (the
LIUM WMT'14 selection is) and for the synthetic benchmark.

Deviations:

* ``escape=False``: the Moses script escapes ``& | < > ' " [ ]`` as XML entities by default;
  we keep the characters (the entities would only have to be undone for BLEU).
* :class:`_FastMosesTokenizer` caches two character sets that sacremoses 0.2 rebuilds on
  every call (most of its run time: measured in ``BENCHMARKS.md``, section "Preparing a
  paper-scale corpus"); its output is identical (tested).
"""

from __future__ import annotations

from typing import Iterable

from sacremoses import MosesDetokenizer, MosesTokenizer

KINDS = ("moses", "whitespace")


class _FastMosesTokenizer(MosesTokenizer):
    """``MosesTokenizer`` with the alphabet sets of ``islower``/``isanyalpha`` built once."""

    def __init__(self, lang: str):
        super().__init__(lang=lang)
        self._lower_set = frozenset(self.IsLower)
        self._alpha_set = frozenset(self.IsAlpha)

    def islower(self, text):
        return self._lower_set.issuperset(text)

    def isanyalpha(self, text):
        return not self._alpha_set.isdisjoint(text)


class Tokenizer:
    """Tokenize and detokenize one language (``lang``: ISO code such as ``"en"``, ``"fr"``)."""

    def __init__(self, lang: str, kind: str = "moses", lowercase: bool = False):
        if kind not in KINDS:
            raise ValueError(f"tokenizer={kind!r}: choose one of {KINDS}")
        self.lang, self.kind, self.lowercase = lang, kind, lowercase
        self._tok = _FastMosesTokenizer(lang) if kind == "moses" else None
        self._detok = MosesDetokenizer(lang) if kind == "moses" else None

    def tokenize(self, text: str) -> list[str]:
        """``"L'homme dit: oui."`` -> ``["L'", "homme", "dit", ":", "oui", "."]`` (fr)."""
        if self.lowercase:
            text = text.lower()
        if self._tok is None:
            return text.split()
        return self._tok.tokenize(text, escape=False, aggressive_dash_splits=False)

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        return [self.tokenize(t) for t in texts]

    def detokenize(self, tokens: list[str]) -> str:
        """The inverse of :meth:`tokenize` up to spacing (for sacreBLEU, which retokenizes)."""
        if self._detok is None:
            return " ".join(tokens)
        return self._detok.detokenize(tokens)
