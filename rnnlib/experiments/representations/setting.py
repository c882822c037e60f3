"""The representations chapter's setting: its parameters as one typed object (:class:`Params`,
the chapter's parameters cell field by field) and what the chapter reads of the ``cho2014``
chapter (its phrase scorer), imported here once for the whole package.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cho2014.scorer import (  # noqa: F401  (re-exported for the package's modules)
    SCORER_PARAMS,
    PhraseScorer,
    phrase_scorer,
    scorer_variant,
    trained_threads,
)


@dataclass(frozen=True)
class Params:
    """The chapter's parameters (``chapters/representations.md``, its parameters cell: the same
    names, types and defaults; the meaning of each is the comment there)."""

    profile: str = "cpu"
    seed: int = 1
    threads: int | None = 2
    n_words: int = 5000
    n_phrases: int = 5000
    n_phrases_small: int = 1000
    min_phrase_len: int = 4
    perplexity: float = 30.0
    tsne_iterations: int = 1000
    tsne_seed: int = 0
    neighbours: int = 10
    name_min_count: int = 3
    min_members: int = 2
    word_regions: str = "number,place,time"
    phrase_regions: str = "time,place,pattern"
    zoom_size: int = 40
    max_labels: int = 40
    gate_phrases: int = 3000
    memory_lag: int = 3
    ablation_updates: int | None = None
    ablation_sources: int = 5
    ablation_samples: int = 50
    n_boot: int = 1000


#: the parameters of every t-SNE map (the figures' cite blocks)
TSNE_PARAMS = ["perplexity", "tsne_iterations", "tsne_seed"]
