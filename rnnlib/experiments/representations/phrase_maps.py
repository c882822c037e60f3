"""Paper A's Figs. 5 and 7: the t-SNE maps of the phrase codes ``c`` (every sampled phrase, and
a random subset of them with its own t-SNE), coloured by semantic class, with the regions
``phrase_regions`` asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .labelled_points import PHRASE_CLASSES, LabelledPoints
from .setting import Params, PhraseScorer, TSNE_PARAMS
from .tsne import enlarged_regions, map_figure, map_tsne, not_drawn, tsne_coords

PHRASE_EXTRA = TSNE_PARAMS + [
    "phrase_regions",
    "zoom_size",
    "max_labels",
    "min_phrase_len",
    "name_min_count",
]


@dataclass
class PhraseMap:
    """A Fig. 5 or 7 (:func:`phrase_map`): its number, the figure, what it is drawn from and the
    classes of ``phrase_regions`` with no phrase on it (``None``: no map drawn)."""

    number: int
    figure: Any
    artifacts: list
    missing: list[str] | None


def phrase_subset(points: LabelledPoints, n: int, rng: np.random.Generator) -> np.ndarray:
    """``min(n, P)`` indices of ``points.phrases`` drawn with ``rng`` (one ``choice``), sorted:
    the phrases of A Fig. 7."""
    size = min(n, len(points.phrases))
    return np.sort(rng.choice(len(points.phrases), size=size, replace=False))


def phrase_map(
    cache,
    corpus,
    scorer: PhraseScorer,
    points: LabelledPoints,
    P: Params,
    figure: int = 5,
    subset: np.ndarray | None = None,
) -> PhraseMap:
    """A Fig. 5 (every phrase of ``points``) or, with ``subset`` (:func:`phrase_subset`), Fig. 7:
    the map of the phrase codes ``c`` coloured by semantic class, with the regions
    ``phrase_regions`` asks for, on its own cached t-SNE."""
    index = np.arange(len(points.phrases)) if subset is None else subset
    size = {"n_phrases" if subset is None else "n_phrases_small": len(index)}
    X = points.codes if subset is None else points.codes[subset]
    tsne = map_tsne(
        cache, X, P.perplexity, P.tsne_iterations, P.tsne_seed,
        what="phrase codes c", model=scorer.artifact.key, **size,
    )  # fmt: skip
    min_len = P.min_phrase_len
    if tsne is None:
        fig = not_drawn(f"phrases of {min_len}+ words", len(index))
        return PhraseMap(figure, fig, [corpus, scorer.artifact], None)
    xy = tsne_coords(tsne)
    sem, pat = [points.sem[i] for i in index], [points.pat[i] for i in index]
    boxes, missing = enlarged_regions(xy, sem, P.phrase_regions, pat, size=P.zoom_size)
    order = [c for c in PHRASE_CLASSES if c in set(points.sem)]
    texts = [" ".join(points.phrases[i]) for i in index]
    fig = map_figure(
        xy, texts, sem, order, boxes, max_labels=P.max_labels,
        title=f"{len(index)} phrases of {min_len}+ words, c",
    )  # fmt: skip
    return PhraseMap(figure, fig, [corpus, scorer.artifact, tsne], missing)


def regions(*maps: PhraseMap) -> str:
    """The classes each phrase map has no enlarged region for, in words for the chapter's prose
    (``"none"``: every class has phrases on every map)."""
    said = []
    for m in maps:
        if m.missing is None:
            said.append(f"Fig. {m.number}: all, as it is not drawn (too few phrases)")
        elif m.missing:
            said.append(f"Fig. {m.number}: " + ", ".join(f"*{c}*" for c in m.missing))
    return "; ".join(said) or "none"
