"""The floor of every claim about what the phrase scorer learned (C-A-F4-1 ... C-A-GRU-2): its dev
NLL per held-out pair against that of the unigram model of its training targets; and what a
claim's control says, in words for the chapter's prose.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ... import verdicts
from ..cho2014.controls import held_out_unigram_nll
from .setting import PhraseScorer

#: the floor of every claim about what the phrase scorer learned (C-A-F4-1 ... C-A-GRU-2): its
#: mean dev NLL per held-out pair must lie at least this many nats below the unigram model's
#: (:func:`held_out_unigram_nll`). A network that does no better than the targets' word
#: frequencies has learned nothing of the source or of the phrases' structure, and what its
#: representations or its gates show is not what training made of them.
LEARNED_FLOOR = 0.0
#: the floor's unit, as the ledger shows it
FLOOR_UNIT = "nats per held-out pair under the unigram model's dev NLL"


@dataclass
class LearnedFloor:
    """What the phrase scorer learned, as the claims' floor reads it (:func:`learned_floor`): its
    mean dev NLL per held-out pair and the unigram model's (nats)."""

    network_nll: float
    unigram_nll: float

    @property
    def value(self) -> float:
        """The unigram model's dev NLL minus the network's (nats per pair)."""
        return self.unigram_nll - self.network_nll

    def apply(self, check: verdicts.Check) -> verdicts.Check:
        """``check`` with the floor :data:`LEARNED_FLOOR`."""
        return verdicts.floored(check, [("phrase scorer", self.value)], LEARNED_FLOOR, FLOOR_UNIT)


def learned_floor(corpus, scorer: PhraseScorer, model: torch.nn.Module) -> LearnedFloor:
    """The scorer's mean dev NLL on its held-out pairs and that of the unigram model of its
    training targets (:func:`held_out_unigram_nll`)."""
    from ...smt.rnn_scorer import encode_pairs, score_pairs

    held = encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab)
    network = float(-score_pairs(model, held).mean())
    unigram = float(held_out_unigram_nll(scorer, corpus)[0].mean())
    return LearnedFloor(network, unigram)


def numbers(floor: LearnedFloor) -> dict:
    """The scorer's and the unigram model's dev NLL per held-out pair and the floor."""
    return {
        "rep-floor-network-nll": (floor.network_nll, 2),
        "rep-floor-unigram-nll": (floor.unigram_nll, 2),
        "rep-floor": (LEARNED_FLOOR, 1),
    }


def control_words(verdict: verdicts.Verdict) -> str:
    """What the control of a recorded ``verdict`` says, for "On its control the same rule says
    ...": its verdict word with the reason, or that nothing was judged."""
    if verdict.control is None:
        return "nothing: the claim has no control, since nothing was judged"
    return f"**{verdict.control}** ({verdict.control_reason})"
