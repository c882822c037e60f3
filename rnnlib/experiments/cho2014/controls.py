"""The controls of the claims about the network: the same network untrained (its initialisation
with the run's seed), the target unigram model every claim must beat by :data:`SCORER_FLOOR`,
and the held-out pairs under four models of ``p(t|s)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from ... import verdicts
from ...models import build_model
from ...smt.rnn_scorer import (
    encode_pairs,
)
from .rows import RNNRow
from .scorer import PhraseScorer

# -- the controls: the untrained network, and the floor ------------------------------------------
#: how far the network must be ahead of the target unigram model (held-out NLL per target word,
#: ``<end>`` included, in nats) for a claim about its behaviour (Fig. 3, Tables 2-3) to be
#: measurable: a network within a nat of the unigram model barely uses the source phrase (its
#: perplexity is over a third of the unigram model's), so how it ranks or samples targets says
#: nothing about what an RNN Encoder-Decoder learns from phrase pairs
SCORER_FLOOR = 1.0


def untrained_network(scorer: PhraseScorer) -> torch.nn.Module:
    """The scorer's network at initialisation: the same config and seed as :func:`scorer_run`
    (``torch.manual_seed(train_config.seed)``, then ``build_model``), no update; in eval mode on
    the scorer's device. The global random state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(scorer.train_config.seed)
        model = build_model(scorer.model_config)
    return model.to(scorer.device).eval()


def rescored(frame: pd.DataFrame, model: torch.nn.Module, corpus, batch_size: int = 512):
    """``frame`` (rows of :func:`table_frame`) with its ``rnn`` column scored by ``model`` (the
    untrained network for the controls)."""
    from ...smt.rnn_scorer import score_pairs

    out = frame.copy()
    if len(frame):
        pairs = encode_pairs(
            list(zip(frame["src"], frame["tgt"])), corpus.src_vocab, corpus.tgt_vocab
        )
        out["rnn"] = score_pairs(model, pairs, batch_size)
    return out


def held_out_unigram_nll(scorer: PhraseScorer, corpus) -> tuple[np.ndarray, np.ndarray]:
    """``(nll (pairs,), tokens (pairs,))`` of the held-out pairs under the target unigram model
    of the training pairs (:func:`rnnlib.smt.rnn_scorer.unigram_logp`, the floor the gating
    ablation reads too): each pair's NLL in nats and its target tokens, ``<end>`` included."""
    from ...smt import rnn_scorer

    V = len(corpus.tgt_vocab)
    logp = getattr(scorer, "_unigram_logp", None)
    if logp is None or len(logp) != V:  # the counts of millions of pairs: once per scorer
        train = encode_pairs(scorer.train_pairs, corpus.src_vocab, corpus.tgt_vocab).tgt
        logp = scorer._unigram_logp = rnn_scorer.unigram_logp(train, V)
    return rnn_scorer.unigram_nll(
        logp, encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab).tgt
    )


def network_nll(scorer: PhraseScorer, model: torch.nn.Module, corpus) -> np.ndarray:
    """``(pairs,)``: each held-out pair's NLL in nats under ``model``."""
    from ...smt.rnn_scorer import score_pairs

    return -score_pairs(model, encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab))


def table_nll(scorer: PhraseScorer) -> np.ndarray:
    """``(pairs,)``: each held-out pair's ``-log p(t|s)`` by the phrase table's own relative
    frequency (its first score). The table was counted from every extracted pair, the held-out
    ones included: a model that has seen them, the ceiling the network is set against."""
    held = {tuple(p): k for k, p in enumerate(scorer.held)}
    index = np.zeros(len(held), dtype=np.int64)
    for r, (s, t, _) in enumerate(scorer.table.pairs()):  # table order, one row a unique pair
        k = held.get((s, t))
        if k is not None:
            index[k] = r
    return -np.log(scorer.table.scores[index, 0])


def unigram_gain(scorer: PhraseScorer, model: torch.nn.Module, corpus) -> float:
    """Nats per target word (``<end>`` included) by which ``model`` beats the target unigram
    model (:func:`held_out_unigram_nll`) on the held-out pairs: :data:`SCORER_FLOOR`'s measure."""
    uni, tokens = held_out_unigram_nll(scorer, corpus)
    net = network_nll(scorer, model, corpus)
    return float((uni.sum() - net.sum()) / tokens.sum())


#: the rows of :func:`heldout_table`: the trained and untrained network, the unigram model and
#: the phrase table
HELDOUT_ROWS = (
    "RNN Encoder–Decoder (trained)",
    "RNN Encoder–Decoder (untrained)",
    "target unigram model (shortlist, add-one)",
    "phrase table p(t|s) (counted with these pairs)",
)


def heldout_table(scorer: PhraseScorer, model, untrained, corpus) -> pd.DataFrame:
    """The held-out unique pairs under four models of ``p(t|s)``: the trained network, the same
    network untrained, the target unigram model (:func:`held_out_unigram_nll`) and the phrase
    table's relative frequency (:func:`table_nll`): the NLL per pair and per target token (``<end>``
    included; sums over sums) and each as a multiple of the unigram model's per token."""
    uni, tokens = held_out_unigram_nll(scorer, corpus)
    values = (
        network_nll(scorer, model, corpus),
        network_nll(scorer, untrained, corpus),
        uni,
        table_nll(scorer),
    )
    rows = dict(zip(HELDOUT_ROWS, values))
    per_token = {k: v.sum() / tokens.sum() for k, v in rows.items()}
    base = per_token[HELDOUT_ROWS[2]]
    return pd.DataFrame(
        {
            "NLL per pair": {k: v.mean() for k, v in rows.items()},
            "NLL per target token": per_token,
            "× unigram": {k: v / base for k, v in per_token.items()},
        }
    ).rename_axis("model of p(t|s) on the held-out pairs")


@dataclass
class Controls:
    """What the claims about the network are checked against (:func:`controls`): ``model``, the
    network at initialisation (:func:`untrained_network`); ``gain`` and ``gain_untrained``, how
    far the trained and the untrained network are ahead of the unigram model
    (:func:`unigram_gain`)."""

    model: torch.nn.Module
    gain: float
    gain_untrained: float

    def floor(self, check: verdicts.Check) -> verdicts.Check:
        """``check`` with the floor :data:`SCORER_FLOOR` on the trained network's gain."""
        return verdicts.floored(
            check,
            [("RNN Encoder–Decoder", self.gain)],
            SCORER_FLOOR,
            "nats per target word",
            "the held-out NLL below the target unigram model's",
        )


def controls(rnn: RNNRow, corpus) -> Controls:
    """The untrained network and both networks' gain over the unigram model."""
    untrained = untrained_network(rnn.scorer)
    return Controls(
        untrained,
        unigram_gain(rnn.scorer, rnn.model, corpus),
        unigram_gain(rnn.scorer, untrained, corpus),
    )


def numbers(ctl: Controls) -> dict[str, Any]:
    """The floor of the claims about the network and both networks' gain over the unigram
    model, for the prose."""
    return {
        "cho-floor": SCORER_FLOOR,
        "cho-unigram-gain": (ctl.gain, 2),
        "cho-unigram-gain-untrained": (ctl.gain_untrained, 2),
    }


def heldout_numbers(heldout: pd.DataFrame) -> dict[str, Any]:
    """The held-out table's figures for the prose (:func:`heldout_table`)."""
    col = heldout["NLL per target token"]
    return {
        "cho-heldout-net": (col[HELDOUT_ROWS[0]], 2),
        "cho-heldout-unigram": (col[HELDOUT_ROWS[2]], 2),
        "cho-heldout-table": (col[HELDOUT_ROWS[3]], 2),
        "cho-heldout-ratio": (heldout.loc[HELDOUT_ROWS[0], "× unigram"], 2),
    }
