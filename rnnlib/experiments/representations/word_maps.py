"""Paper A's Figs. 4 and 6: the t-SNE map of the source word embeddings ``e(x)``, with one
enlarged region (Fig. 4) and with every region of ``word_regions`` (Fig. 6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .categories import WORD_CATEGORIES
from .setting import Params, PhraseScorer, TSNE_PARAMS
from .tsne import enlarged_regions, map_figure, map_tsne, not_drawn, tsne_coords

WORD_EXTRA = TSNE_PARAMS + ["word_regions", "zoom_size", "max_labels", "name_min_count"]


@dataclass
class WordMaps:
    """A Figs. 4 and 6 (:func:`word_maps`): the figures, what they are drawn from, the categories
    of ``word_regions`` with no word on the map (``None``: no map drawn) and the seconds the
    t-SNE took (NaN: not drawn)."""

    fig4: Any
    fig6: Any
    artifacts: list
    missing: list[str] | None
    seconds: float

    def regions(self) -> str:
        """The categories without an enlarged region, in words for the chapter's prose."""
        if self.missing is None:
            return "all, as the map is not drawn (too few source words)"
        return ", ".join(f"*{m}*" for m in self.missing) or "none"


def word_maps(cache, corpus, scorer: PhraseScorer, points, P: Params) -> WordMaps:
    """A Fig. 4 (the map of the word embeddings ``e(x)`` with the first region of
    ``word_regions``) and Fig. 6 (with every region), on one cached t-SNE of ``points.emb``."""
    words, cats = points.words, points.word_cat
    tsne = map_tsne(
        cache, points.emb, P.perplexity, P.tsne_iterations, P.tsne_seed,
        what="source word embeddings e(x)", model=scorer.artifact.key, n_words=len(words),
    )  # fmt: skip
    if tsne is None:
        figs = [not_drawn("source words", len(words)) for _ in range(2)]
        return WordMaps(*figs, [corpus, scorer.artifact], None, float("nan"))
    xy = tsne_coords(tsne)
    boxes, missing = enlarged_regions(xy, cats, P.word_regions, size=P.zoom_size)
    order = [c for c in WORD_CATEGORIES if c in set(cats)]
    title = f"{len(words)} source words, e(x)"
    figs = [
        map_figure(xy, words, cats, order, shown, max_labels=P.max_labels, title=title)
        for shown in (boxes[:1], boxes)
    ]
    return WordMaps(*figs, [corpus, scorer.artifact, tsne], missing, tsne.extra["seconds"])
