"""The floor of every claim about what the phrase scorer learned (C-A-F4-1 ... C-A-GRU-2): its dev
NLL per held-out pair against that of the unigram model of its training targets, and how a claim's
verdict and its control's are recorded and glued.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...book import claims
from ... import verdicts
from ...ragged import Ragged
from ...smt import rnn_scorer
from .setting import Number, PhraseScorer

#: the floor of every claim about what the phrase scorer learned (C-A-F4-1 ... C-A-GRU-2): its
#: mean dev NLL per held-out pair must lie at least this many nats below the unigram model's
#: (:func:`unigram_nll`). A network that does no better than the targets' word frequencies has
#: learned nothing of the source or of the phrases' structure, and what its representations or
#: its gates show is not what training made of them.
LEARNED_FLOOR = 0.0
#: the floor's unit, as the ledger shows it
FLOOR_UNIT = "nats per held-out pair under the unigram model's dev NLL"


def unigram_nll(train_pairs, held, tgt_vocab) -> np.ndarray:
    """``(len(held),) float64``: each held-out pair's target NLL (nats, ``EOS`` included, as
    :func:`rnnlib.smt.rnn_scorer.score_pairs` scores it) under the unigram model of the training
    pairs' targets (:func:`rnnlib.smt.rnn_scorer.unigram_logp`: the shortlist's ids, one ``EOS``
    per target, add-one smoothing over the target vocabulary): the network's floor."""

    def targets(pairs):
        return Ragged.from_lists(tgt_vocab.encode(t) for _, t in pairs)

    logp = rnn_scorer.unigram_logp(targets(train_pairs), len(tgt_vocab))
    return rnn_scorer.unigram_nll(logp, targets(held))[0]


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
    training targets (:func:`~rnnlib.experiments.representations.floor.unigram_nll`)."""
    from ...smt.rnn_scorer import encode_pairs, score_pairs

    held = encode_pairs(scorer.held, corpus.src_vocab, corpus.tgt_vocab)
    network = float(-score_pairs(model, held).mean())
    unigram = float(unigram_nll(scorer.train_pairs, scorer.held, corpus.tgt_vocab).mean())
    return LearnedFloor(network, unigram)


def floor_numbers(floor: LearnedFloor) -> list[Number]:
    """The scorer's and the unigram model's dev NLL per held-out pair and the floor."""
    return [
        Number("rep-floor-network-nll", floor.network_nll, 2),
        Number("rep-floor-unigram-nll", floor.unigram_nll, 2),
        Number("rep-floor", LEARNED_FLOOR, 1),
    ]


def control_sentence(verdict: verdicts.Verdict) -> str:
    """The control's verdict in words (``""`` for a check without one)."""
    if verdict.control is None:
        return ""
    return f"On its control the same rule says **{verdict.control}** ({verdict.control_reason})."


def record_with_control(ch, found: claims.ClaimCheck, control_glue: str) -> verdicts.Verdict:
    """Record ``found`` (:func:`rnnlib.book.claims.record_all`) and glue its control's verdict
    in words as ``control_glue`` (:func:`control_sentence`)."""
    verdict = claims.record(ch, found.claim, found.check)
    if found.glue:
        ch.text(found.glue, found.before + claims.markdown(verdict))
    ch.text(control_glue, control_sentence(verdict) or "It has no control: nothing was judged.")
    return verdict
