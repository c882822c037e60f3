"""The section on the network trained on the phrase table: its dev NLL curve (A §4.1's training,
model chosen on held-out pairs), its numbers and its optimiser in words."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...book import papers
from ...cache import Artifact
from ...presets import preset
from .rows import RNNRow, extra_start
from .scorer import PhraseScorer, still_falling


def dev_nll_curve(scorer: Artifact):
    """The dev NLL per held-out unique phrase pair against the update, from the scorer's
    ``eval_log.csv`` (a matplotlib figure)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    evals = pd.read_csv(scorer.file("eval_log.csv"))
    fig, ax = plt.subplots(figsize=(5, 3))
    sns.lineplot(evals, x="update", y="dev_nll_sentence", marker="o", color="black", ax=ax)
    ax.set_xlabel(f"update ({scorer.config['train']['batch_size']} unique phrase pairs each)")
    ax.set_ylabel("dev NLL per phrase pair")
    return fig


def _per_token_ppl(scorer: Artifact) -> tuple[list[int], list[float]]:
    """The updates of the scorer's evaluations and its held-out perplexity per target token at
    each (``eval_log.csv``)."""
    evals = pd.read_csv(scorer.file("eval_log.csv"))
    return evals["update"].astype(int).tolist(), np.exp(evals["dev_nll_token"]).tolist()


def length_numbers(scorer: Artifact) -> dict[str, Any]:
    """The scorer's held-out perplexity per target token at its last two evaluations and their
    updates (NaN with fewer than two evaluations): what :func:`length_words` judges."""
    updates, ppl = _per_token_ppl(scorer)
    if len(ppl) < 2:
        updates, ppl = [np.nan, np.nan], [np.nan, np.nan]
    return {
        "cho-length-ppl0": (ppl[-2], 1),
        "cho-length-update0": updates[-2],
        "cho-length-ppl1": (ppl[-1], 1),
        "cho-length-update1": updates[-1],
    }


def length_words(scorer: Artifact) -> str:
    """Whether the scorer's held-out perplexity had levelled off when training stopped
    (:func:`~.scorer.still_falling`), in words for the prose."""
    _, ppl = _per_token_ppl(scorer)
    if len(ppl) < 2:
        return "was measured fewer than twice, so whether it had levelled off is unknown"
    if still_falling(ppl):
        return "was still falling: `rnn_updates` cut it short for the time budget"
    return "had levelled off"


def paper_numbers() -> dict[str, Any]:
    """The paper's network size and CSLM corpus, and the weight a new feature starts from at
    the decoder's defaults: numbers read from no artifact."""
    return {
        "cho-paper-hidden": preset("paper-cho2014").hidden,
        "cho-paper-cslm-news": papers.A_CSLM_NEWS_MWORDS,
        "cho-extra-start": extra_start(),
    }


def numbers(rnn: RNNRow) -> dict[str, Any]:
    """The network's pairs and training, for the chapter's prose."""
    scorer, extra = rnn.scorer, rnn.scorer.artifact.extra
    return {
        "cho-train-pairs": len(scorer.train_pairs),
        "cho-unique-pairs": len(scorer.all_pairs),
        "cho-dev-pairs": len(scorer.held),
        "cho-usable-pairs": len(rnn.usable),
        "cho-copies": sum(1 for s, t in rnn.usable if s not in rnn.lookup),
        "cho-updates": int(extra["updates"]),
        "cho-batch": int(rnn.scorer.artifact.config["train"]["batch_size"]),
        "cho-epochs": (extra["epochs"], 2),
        "cho-best-dev-nll": (extra["dev_nll"], 2),
    }


def best_eval(scorer: PhraseScorer, upto: int | None = None) -> pd.Series:
    """The row of the scorer's eval log (``eval_log.csv``) with its lowest held-out NLL (among
    the evaluations at update ``upto`` or before; ``None``: all)."""
    evals = pd.read_csv(scorer.artifact.file("eval_log.csv"))
    if upto is not None:
        evals = evals[evals["update"] <= upto]
    return evals.loc[evals["dev_nll_sentence"].idxmin()]


def optimiser_text(scorer: PhraseScorer) -> str:
    """The scorer's optimiser as the chapter's prose names it (Markdown)."""
    t = scorer.train_config
    clip = (
        "no clipping" if t.clip_norm is None else f"the gradient's norm clipped at {t.clip_norm:g}"
    )
    name = {"adadelta": "Adadelta", "adam": "Adam"}.get(t.optimizer, t.optimizer)
    return f"{name} at rate {t.lr:g}, {clip}"
