"""Figures shared by the chapters: alignment matrices.

Alignment matrices follow Bahdanau et al. 2015, Fig. 3: source words on the x-axis, generated
words on the y-axis, each pixel the weight ``alpha_ij`` of Eq. (6) in grayscale from 0 (black)
to 1 (white). As in the figure, both axes end in ``<end>``: the source's end-of-sentence token
(which the model reads and can attend to) and the step that generated the end of the translation.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .style import ALIGNMENT_CMAP


def attention_plot(
    ax,
    weights: np.ndarray,
    source: Sequence[str],
    generated: Sequence[str],
    title: str | None = None,
    end: str = "<end>",
) -> None:
    """Draw a hypothesis' attention on ``ax``: ``weights (len(generated) + 1, len(source) + 1)``.

    ``source`` and ``generated`` are the words without the end-of-sentence token; the last row
    (the step that ended the translation) and the last column (the source's ``EOS``) are labelled
    ``end``, as :attr:`rnnlib.search.Hypothesis.attention` holds them.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (len(generated) + 1, len(source) + 1):
        raise ValueError(
            f"attention of shape {weights.shape} for {len(generated)} generated and "
            f"{len(source)} source words: expected ({len(generated) + 1}, {len(source) + 1}), "
            f"the last row and column being the end of sentence"
        )
    source, generated = list(source) + [end], list(generated) + [end]
    ax.imshow(
        weights, cmap=ALIGNMENT_CMAP, vmin=0.0, vmax=1.0, aspect="equal", interpolation="nearest"
    )
    ax.set_xticks(range(len(source)))
    ax.set_xticklabels(source, rotation=90)
    ax.set_yticks(range(len(generated)))
    ax.set_yticklabels(generated)
    ax.xaxis.tick_top()
    if title:
        ax.set_title(title, pad=40)
