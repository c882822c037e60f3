"""The parallel corpus: the English--French Bible (or the user's own files), cleaned, split,
tokenized and encoded as token-id arrays in the artifact cache.

Entry point: :func:`prepare_corpus` (see :mod:`rnnlib.corpus.dataset`).
"""

from .dataset import Corpus, CorpusConfig, prepare_corpus

__all__ = ["Corpus", "CorpusConfig", "prepare_corpus"]
