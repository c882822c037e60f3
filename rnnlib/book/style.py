"""One look for every figure of the book: fonts, sizes, colours, and the papers' greyscale.

:func:`use` sets seaborn's theme once per chapter (:meth:`rnnlib.book.chapter.Chapter.start`
calls it), so a chapter's statistical plots (seaborn: bands, marginals, hue by category) and
its plain matplotlib drawings (the diagrams of the papers' Figs. 1) share one style. Sizes are
in inches of the book's text width; the PNG resolution is :data:`DPI`.

Alignment matrices keep the papers' greyscale (Bahdanau et al. 2015, Fig. 3: weight 0 black,
1 white): :data:`ALIGNMENT_CMAP`, drawn by :func:`rnnlib.book.plotting.attention_plot`.
"""

from __future__ import annotations

from typing import Iterable

#: the text width of a page, and the usual height of one panel (inches)
WIDTH = 6.5
HEIGHT = 3.6
#: PNG resolution (the PDF is vector)
DPI = 150
#: the colour map of alignment matrices: 0 black, 1 white, as in the paper
ALIGNMENT_CMAP = "gray"
#: colour-blind-safe categorical palette for systems and categories
PALETTE = "colorblind"

# a system keeps its colour in every figure of the book
_SYSTEMS = (
    "RNNsearch-50",
    "RNNencdec-50",
    "RNNsearch-30",
    "RNNencdec-30",
    "RNNsearch-50⋆",
    "phrase-based",
    "Baseline",
    "+RNN",
    "+CSLM+RNN",
    "+CSLM+RNN+WP",
)


def use() -> None:
    """Set the book's theme: seaborn's ``ticks`` style at ``paper`` size, the book's palette,
    no top and right spines, the book's resolution."""
    import seaborn as sns

    sns.set_theme(
        context="paper",
        style="ticks",
        palette=PALETTE,
        font_scale=1.15,
        rc={
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "figure.figsize": (WIDTH, HEIGHT),
        },
    )


def system_colors(names: Iterable[str]) -> dict[str, tuple]:
    """``name -> colour``: a fixed colour for each of the papers' systems (the same in every
    chapter), then the palette's next colours for any other name, in order."""
    import seaborn as sns

    colours = sns.color_palette(PALETTE, 10)
    out, spare = {}, iter(colours[len(_SYSTEMS) % 10 :] + colours)
    for name in names:
        shown = name.replace("*", "⋆")
        out[name] = colours[_SYSTEMS.index(shown) % 10] if shown in _SYSTEMS else next(spare)
    return out


__all__ = ["ALIGNMENT_CMAP", "DPI", "HEIGHT", "PALETTE", "WIDTH", "system_colors", "use"]
