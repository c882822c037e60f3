"""The words and phrases the chapter maps and measures, with their categories (Cho et al. 2014,
§4.4; the rules are :mod:`.categories`): the most frequent source words with their embeddings
``e(x)`` and a sample of the phrase table's long source phrases with their codes ``c``
(:mod:`.probes`), in the trained network, the untrained one and a second initialisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ...presets import preset
from ...specials import SPECIALS
from . import categories, purity
from .categories import (
    PLACE_CUES,
    PLACE_OF_CUES,
    WORD_CATEGORIES,
    phrase_class,
    phrase_pattern,
    proper_names,
    word_category,
)
from .probes import phrase_codes
from .setting import Number, Params, PhraseScorer, Text

#: the semantic classes of phrases (:func:`~.categories.phrase_class`)
PHRASE_CLASSES = ("time", "place", "person", "number")


@dataclass
class LabelledPoints:
    """The words and phrases the chapter maps and measures (:func:`labelled_points`).

    ``train_sentences``: the tokenized training source side; ``names``: its proper names
    (``word -> "person" | "place"``); ``words``: the ``W`` most frequent source words, with
    ``word_cat`` their categories (``None``: unlabelled) and ``emb``, ``emb0``: ``(W, emb)
    float32`` their embeddings ``e(x)`` in the trained and the untrained network; ``sources``:
    the phrase table's unique source phrases of ``min_phrase_len`` words or more; ``phrases``:
    ``P`` of them drawn at random (in sorted order), with ``sem`` their semantic classes,
    ``pat`` their patterns and ``codes``, ``codes0``: ``(P, n) float32`` their codes ``c``;
    ``emb1``, ``codes1``: the same in a second initialisation of the untrained network
    (:func:`second_initialisation`; ``None``: not computed)."""

    train_sentences: list[list[str]]
    names: dict[str, str]
    words: list[str]
    word_cat: list[str | None]
    emb: np.ndarray
    emb0: np.ndarray
    sources: list[tuple[str, ...]]
    phrases: list[list[str]]
    sem: list[str | None]
    pat: list[str]
    codes: np.ndarray
    codes0: np.ndarray
    emb1: np.ndarray | None = None
    codes1: np.ndarray | None = None


def _embeddings(model: torch.nn.Module, ids: np.ndarray, device) -> np.ndarray:
    """``(len(ids), emb) float32``: the rows ``ids`` of the encoder's embedding matrix."""
    weight = model.encoder.embed.weight.detach()
    return weight[torch.as_tensor(ids, device=device)].cpu().numpy()


def labelled_points(
    corpus,
    scorer: PhraseScorer,
    model: torch.nn.Module,
    untrained: torch.nn.Module,
    P: Params,
    rng: np.random.Generator,
    second: torch.nn.Module | None = None,
) -> LabelledPoints:
    """The ``n_words`` most frequent source words (the shortlist's order, specials aside) and
    ``n_phrases`` source phrases of at least ``min_phrase_len`` words drawn from the scorer's
    unique pairs (one ``rng.choice``), with their categories (names seen ``name_min_count`` times)
    and their vectors in ``model``, ``untrained`` and ``second`` (a second initialisation,
    :func:`second_initialisation`; optional)."""
    train_sentences = [line.split() for line in corpus.text("train", "src")]
    names = proper_names(train_sentences, min_count=P.name_min_count)
    first = len(SPECIALS)
    ids = np.arange(first, min(len(corpus.src_vocab), first + P.n_words))
    words = corpus.src_vocab.decode(ids, strip=False)
    min_len = P.min_phrase_len
    sources = sorted({s for s, _ in scorer.all_pairs if len(s) >= min_len})
    size = min(P.n_phrases, len(sources))
    pick = np.sort(rng.choice(len(sources), size=size, replace=False))
    phrases = [list(sources[i]) for i in pick]
    vocab = corpus.src_vocab
    return LabelledPoints(
        train_sentences,
        names,
        words,
        [word_category(w, names) for w in words],
        _embeddings(model, ids, scorer.device),
        _embeddings(untrained, ids, scorer.device),
        sources,
        phrases,
        [phrase_class(p, names) for p in phrases],
        [phrase_pattern(p, names) for p in phrases],
        phrase_codes(model, vocab, phrases),
        phrase_codes(untrained, vocab, phrases),
        None if second is None else _embeddings(second, ids, scorer.device),
        None if second is None else phrase_codes(second, vocab, phrases),
    )


def word_categories_table(points: LabelledPoints) -> pd.DataFrame:
    """The words of each category of
    :data:`~.categories.WORD_CATEGORIES` among the mapped words (index:
    category; column: words)."""
    counts = pd.Series([c for c in points.word_cat if c]).value_counts()
    table = pd.DataFrame({"words": counts.reindex(WORD_CATEGORIES).fillna(0).astype(int)})
    table.index.name = "category"
    return table


def category_numbers(points: LabelledPoints) -> list[Number]:
    """How many names, words, phrases, source phrases, phrases with a semantic class and
    patterns; the rules' settings the prose names (the place share, the bag-of-words contexts)
    and the paper's shortlist and size, for the departures."""
    return [
        Number("rep-n-names", len(points.names)),
        Number("rep-n-words", len(points.words)),
        Number("rep-place-share", round(100 * categories.PLACE_SHARE), artifacts=[]),
        Number("rep-context-words", purity.CONTEXT_WORDS, artifacts=[]),
        Number("rep-context-window", purity.CONTEXT_WINDOW, artifacts=[]),
        Number("rep-paper-vocab", preset("paper-cho2014").src_vocab, artifacts=[]),
        Number("rep-paper-hidden", preset("paper-cho2014").hidden, artifacts=[]),
        Number("rep-n-phrases", len(points.phrases)),
        Number("rep-n-sources", len(points.sources)),
        Number("rep-sem-labelled", sum(c is not None for c in points.sem)),
        Number("rep-n-patterns", len(set(points.pat))),
    ]


def category_texts(points: LabelledPoints) -> list[Text]:
    """A few names with their category, a sentence on the names, and the place cues."""
    names = points.names
    examples = ", ".join(f"*{w}* ({c})" for w, c in list(names.items())[:8])
    if names:
        about = f"{len(names)} words of the training text are names, for example {examples}"
    else:
        about = (
            "no word of the training text is a name (none is written with a capital inside "
            "sentences `name_min_count` times or more and never in lower case)"
        )
    cues = ", ".join(f"*{w}*" for w in sorted(PLACE_CUES)) + " or *of* after "
    cues += ", ".join(f"*{w}*" for w in sorted(PLACE_OF_CUES))
    return [
        Text("rep-name-examples", examples),
        Text("rep-names", about),
        Text("rep-place-cues", cues),
    ]
