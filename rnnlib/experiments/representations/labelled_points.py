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

from ...specials import SPECIALS
from . import categories
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
from .setting import Params, PhraseScorer

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


def numbers(points: LabelledPoints) -> dict:
    """How many names, words, phrases, source phrases, phrases with a semantic class and
    patterns."""
    return {
        "rep-n-names": len(points.names),
        "rep-n-words": len(points.words),
        "rep-n-phrases": len(points.phrases),
        "rep-n-sources": len(points.sources),
        "rep-sem-labelled": sum(c is not None for c in points.sem),
        "rep-n-patterns": len(set(points.pat)),
    }


def rule_numbers() -> dict:
    """The place rule's share (%), a setting of :mod:`.categories`, not a result."""
    return {"rep-place-share": round(100 * categories.PLACE_SHARE)}


#: the longest list of example names the prose shows (characters)
EXAMPLES_WIDTH = 80


def texts(points: LabelledPoints) -> dict[str, str]:
    """Whether the training text has names (``rep-names``) and a few of them with their category
    (``rep-name-examples``, as many of the first eight as fit in :data:`EXAMPLES_WIDTH`
    characters), or why it has none."""
    if not points.names:
        return {
            "rep-names": "no word of the training text is a name",
            "rep-name-examples": "none is written with a capital inside sentences often enough",
        }
    examples = "for example"
    for k, (word, cat) in enumerate(list(points.names.items())[:8]):
        more = f"{',' if k else ''} *{word}* ({cat})"
        if len(examples + more) > EXAMPLES_WIDTH:
            break
        examples += more
    return {
        "rep-names": f"{len(points.names)} words of the training text are names",
        "rep-name-examples": examples,
    }


def place_cues() -> pd.DataFrame:
    """The words the place rule reads (:data:`~.categories.PLACE_CUES` before a name,
    :data:`~.categories.PLACE_OF_CUES` before *of* and a name); index: where; column: words."""
    rows = {
        "just before the name": ", ".join(f"*{w}*" for w in sorted(PLACE_CUES)),
        "before *of* and the name": ", ".join(f"*{w}*" for w in sorted(PLACE_OF_CUES)),
    }
    table = pd.DataFrame({"words": pd.Series(rows)})
    table.index.name = "place cue"
    return table
