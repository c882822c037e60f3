"""The section on the network trained on the phrase table: its dev NLL curve (A §4.1's training,
model chosen on held-out pairs), its numbers, and its optimiser set against the paper's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...book import papers
from ...book.chapter import Number
from ...cache import Artifact
from ...presets import preset
from .controls import HELDOUT_ROWS
from .rows import RNNRow, extra_start
from .scorer import PhraseScorer, training_length


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


def scorer_length_text(scorer: Artifact) -> str:
    """:func:`training_length` of the scorer, on its held-out pairs' NLL per target token
    (``eval_log.csv``); with fewer than two evaluations, a sentence that says so."""
    evals = pd.read_csv(scorer.file("eval_log.csv"))
    if len(evals) < 2:
        return "it was evaluated fewer than twice, so whether it had levelled off is unknown"
    ppl = np.exp(evals["dev_nll_token"].to_numpy())
    return training_length(evals["update"].tolist(), ppl.tolist(), "rnn_updates", "per token")


def scorer_numbers(rnn: RNNRow) -> list[Number]:
    """The network's pairs and training, for the chapter's prose, with the paper's network size
    and the weight a new feature starts from at the decoder's defaults."""
    scorer, extra = rnn.scorer, rnn.scorer.artifact.extra
    return [
        Number("cho-paper-hidden", preset("paper-cho2014").hidden, artifacts=[]),
        Number("cho-paper-cslm-news", papers.A_CSLM_NEWS_MWORDS, artifacts=[]),
        Number("cho-extra-start", extra_start(), artifacts=[]),
        Number("cho-train-pairs", len(scorer.train_pairs)),
        Number("cho-unique-pairs", len(scorer.all_pairs)),
        Number("cho-dev-pairs", len(scorer.held)),
        Number("cho-usable-pairs", len(rnn.usable)),
        Number("cho-copies", sum(1 for s, t in rnn.usable if s not in rnn.lookup)),
        Number("cho-updates", int(extra["updates"])),
        Number("cho-batch", int(rnn.scorer.artifact.config["train"]["batch_size"])),
        Number("cho-epochs", extra["epochs"], 2),
        Number("cho-best-dev-nll", extra["dev_nll"], 2),
    ]


def heldout_numbers(heldout: pd.DataFrame) -> list[Number]:
    """The held-out table's figures for the prose (:func:`heldout_table`)."""
    col = heldout["NLL per target token"]
    return [
        Number("cho-heldout-net", col[HELDOUT_ROWS[0]], 2),
        Number("cho-heldout-unigram", col[HELDOUT_ROWS[2]], 2),
        Number("cho-heldout-table", col[HELDOUT_ROWS[3]], 2),
        Number("cho-heldout-ratio", heldout.loc[HELDOUT_ROWS[0], "× unigram"], 2),
    ]


def best_eval(scorer: PhraseScorer, upto: int | None = None) -> pd.Series:
    """The row of the scorer's eval log (``eval_log.csv``) with its lowest held-out NLL (among
    the evaluations at update ``upto`` or before; ``None``: all)."""
    evals = pd.read_csv(scorer.artifact.file("eval_log.csv"))
    if upto is not None:
        evals = evals[evals["update"] <= upto]
    return evals.loc[evals["dev_nll_sentence"].idxmin()]


def optimiser_table(runs: dict[str, PhraseScorer]) -> pd.DataFrame:
    """The scorer's optimiser checked on held-out pairs: for each run (label -> scorer, the same
    pairs and seed), its optimiser, the update of its lowest held-out NLL and that NLL per pair
    and per target token (the rule: the lowest per-token NLL; never BLEU). Runs of different
    lengths are compared at the same point: each one's evaluations up to the shortest run's
    last update."""
    upto = min(int(sc.artifact.extra["updates"]) for sc in runs.values())
    rows = []
    for label, sc in runs.items():
        best = best_eval(sc, upto)
        rows.append(
            {
                "run": label,
                "optimiser": optimiser_text(sc),
                "updates": int(sc.artifact.extra["updates"]),
                "compared up to update": upto,
                "best update": int(best["update"]),
                "held-out NLL per pair": float(best["dev_nll_sentence"]),
                "held-out NLL per token": float(best["dev_nll_token"]),
                "minutes": sc.artifact.extra["seconds"] / 60,
            }
        )
    table = pd.DataFrame(rows).set_index("run")
    table["chosen by the rule"] = (
        table["held-out NLL per token"] == table["held-out NLL per token"].min()
    )
    return table.round(3)


def optimiser_verdict(table: pd.DataFrame) -> str:
    """Whether the held-out rule confirms the chapter's optimiser (:func:`optimiser_table`'s
    first row), for the prose: every later section reads the chapter's network either way."""
    if len(table) < 2:
        return "only the chapter's optimiser was trained: nothing was compared"
    own = table.index[0]
    if table.loc[own, "chosen by the rule"]:
        return "the rule confirms the chapter's optimiser, whose network every later section reads"
    return (
        "**the rule does not pick the chapter's optimiser**: every later section still reads "
        "the chapter's network, the one the rule rejects, and the profile should follow the rule"
    )


def optimiser_text(scorer: PhraseScorer) -> str:
    """The scorer's optimiser as the chapter's prose names it (Markdown)."""
    t = scorer.train_config
    clip = (
        "no clipping" if t.clip_norm is None else f"the gradient's norm clipped at {t.clip_norm:g}"
    )
    name = {"adadelta": "Adadelta", "adam": "Adam"}.get(t.optimizer, t.optimizer)
    return f"{name} at rate {t.lr:g}, {clip}"
