"""The rows of A Table 1 as the chapter holds them, and what every row shares: the Baseline's
corpus, data, settings and MERT-tuned systems, the +RNN row's network and scores, the rebuild
replicates, the rows' outputs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch

from ...cache import Artifact
from ...smt.decoder import default_weights
from ...smt.features import Pair
from ...smt.rnn_scorer import (
    ScoredTable,
)
from ...smt.system import (
    SMTConfig,
    SMTData,
    SMTResult,
)
from .scorer import PhraseScorer


@dataclass
class BaselineRow:
    """The Baseline row of A Table 1 and what every row shares (:func:`baseline_row`).

    ``corpus``: the prepared corpus; ``data``: its tokenised train, dev and test sentences (the
    first ``max_train`` / ``max_eval``); ``config``: the phrase-based system's settings with the
    first MERT seed; ``seeds``: the MERT seeds ``1..mert_seeds``; ``runs``: seed -> the tuned
    and evaluated system; ``device``: where the networks run (the ``device`` parameter);
    ``alignment_run``: the word alignment the whole row is built on."""

    corpus: Any
    data: SMTData
    config: SMTConfig
    seeds: list[int]
    runs: dict[int, SMTResult]
    device: torch.device
    #: the eflomal alignment every stage is built on (:func:`rnnlib.smt.system.build_alignment`'s
    #: ``run``; 1: the book's, further ones measure the rebuild spread)
    alignment_run: int = 1
    #: each MERT seed's own start around the defaults for the rows tuned from them (the log-normal
    #: spread of :func:`rnnlib.smt.seeds.drawn_weights`; 0: the defaults themselves), and whether
    #: each optimisation draws from its own stream (:class:`rnnlib.smt.seeds.OwnStreams`); the
    #: chapter's rows: :data:`MERT_START_SD` and own streams (:func:`baseline_setup`)
    start_sd: float = 0.0
    own_streams: bool = False

    @property
    def first_run(self) -> SMTResult:
        """The run of the first MERT seed (its alignment, phrase table and LM are every row's)."""
        return self.runs[self.seeds[0]]

    def detokenize(self, words: Sequence[str]) -> str:
        return self.corpus.detokenize(list(words))


#: the spread of each MERT seed's own start around the decoder's defaults (the rows tuned from
#: them): every tuneable default weight times exp(z), z ~ N(0, MERT_START_SD²), drawn from the
#: seed's stream [seed, 0] (:func:`rnnlib.smt.seeds.drawn_weights`): between 0.38 and 2.7 times
#: the default with 95% probability, so that no two seeds start alike
MERT_START_SD = 0.5


#: a row of MERT-tuned systems for :func:`systems_side_by_side`: its name, its extra features,
#: MERT's start per seed (``None``: the decoder's defaults) and its seeds
RowSpec = tuple[str, Sequence[ScoredTable], "dict[int, dict[str, float]] | None", Sequence[int]]


#: the +RNN row tuned by MERT from the decoder's defaults (Moses' weights, the new weight at
#: 0.1), as the Baseline was, beside the +RNN row that starts from the Baseline's weights
#: (``mert_default_seeds``; :func:`defaults_runs`)
DEFAULTS_ROW = "+RNN from defaults"


#: the Baseline tuned on: each Baseline system's MERT run again from its own tuned weights (same
#: seed) for as many decodings as the +RNN row's MERT from them gets, without the RNN score: the
#: same extra tuning without the feature, which C-A-T1-1 reads +RNN against (equal tuning effort)
#: and whose gain over the Baseline is that claim's control (``mert_start`` ``baseline``)
TUNED_ON_ROW = "Baseline, tuned on"


#: Table 1's rows that no claim reads: the feature per target word (a reading the paper's text
#: does not support) and the +RNN row's MERT from the defaults (a check of the warm start)
EXTENSION_ROWS = ("+RNN per word", DEFAULTS_ROW)


def per_word(scores: ScoredTable, name: str = "rnn_per_word") -> ScoredTable:
    """The other reading of the RNN feature: each pair's ``log p(t|s)`` divided by its target
    tokens, the words and ``<end>`` (``len(t) + 1``), so that the feature no longer grows with
    the target phrase's length."""
    return ScoredTable(
        [name], {(s, t): (float(v[0]) / (len(t) + 1),) for (s, t), v in scores.table.items()}
    )


@dataclass
class RNNRow:
    """The +RNN row of A Table 1 and the network behind it (:func:`rnn_row`).

    ``scorer``: the trained network and its pairs (:class:`PhraseScorer`); ``model``: the
    network in eval mode; ``phrases``: every source phrase of the dev and test sentences (at
    most ``max_phrase_len`` words); ``lookup``: the phrase table's entries for them;
    ``usable``: every pair the decoder can use, pass-through copies of unknown words included;
    ``feature``: the ``cho2014/rnn_feature`` artifact of their scores and ``scores`` the phrase
    feature it holds; ``runs``: seed -> the system with the feature; ``cited``: what the
    network's figures and tables cite (the corpus, the system's settings, the scorer)."""

    scorer: PhraseScorer
    model: torch.nn.Module
    phrases: set
    lookup: dict
    usable: list[Pair]
    feature: Artifact
    scores: ScoredTable
    runs: dict[int, SMTResult]
    cited: list
    #: the feature read per target token (:func:`per_word`) and its row, seed -> run (empty
    #: when the chapter's ``per_word_row`` is off)
    per_word: ScoredTable | None = None
    runs_per_word: dict[int, SMTResult] = dataclasses.field(default_factory=dict)
    #: the +RNN system tuned from the decoder's defaults, seed -> run (:func:`defaults_runs`;
    #: empty without ``mert_default_seeds``)
    runs_defaults: dict[int, SMTResult] = dataclasses.field(default_factory=dict)
    #: :data:`TUNED_ON_ROW`, seed -> run (empty when ``mert_start`` is ``defaults``: +RNN then
    #: gets no more tuning than the Baseline)
    runs_tuned_on: dict[int, SMTResult] = dataclasses.field(default_factory=dict)


def row_features(row: str, scores: ScoredTable) -> list[ScoredTable]:
    """The phrase features row ``row`` of :func:`rnn_row_seeds` adds to the Baseline: the RNN
    score ``scores``, read per target word in "+RNN per word" (:func:`per_word`), none in
    :data:`TUNED_ON_ROW`."""
    if row == TUNED_ON_ROW:
        return []
    return [per_word(scores)] if row == "+RNN per word" else [scores]


# -- the rebuild spread ---------------------------------------------------------------------------
@dataclass
class Replicate:
    """The Baseline and +RNN rows built on one eflomal alignment (:func:`alignment_replicates`),
    and its CSLM rows (name -> MERT seed -> run) where they were built
    (:func:`.cslm.cslm_replicates`)."""

    alignment: int
    base: BaselineRow
    rnn: RNNRow
    cslm: dict[str, dict[int, SMTResult]] | None = None


def pooled_rows(replicates: Sequence[Replicate]) -> dict[str, list[dict[int, SMTResult]]]:
    """``{"Baseline": [seed -> run, one per alignment], "+RNN": [...]}``: the two rows' MERT runs
    grouped by the alignment they were built on (the independent unit of a rebuild); the
    :data:`TUNED_ON_ROW` and the CSLM rows too when every alignment has them."""
    out = {
        "Baseline": [rep.base.runs for rep in replicates],
        "+RNN": [rep.rnn.runs for rep in replicates],
    }
    if all(getattr(rep.rnn, "runs_tuned_on", None) for rep in replicates):
        out[TUNED_ON_ROW] = [rep.rnn.runs_tuned_on for rep in replicates]
    if all(rep.cslm is not None for rep in replicates):
        for name in replicates[0].cslm:
            out[name] = [rep.cslm[name] for rep in replicates]
    return out


def extra_start() -> float:
    """The weight a feature beyond Moses' starts from at the decoder's defaults."""
    return float(default_weights(1)[-1])


def row_outputs(rows: dict[str, dict[int, SMTResult]]) -> dict[str, dict[str, list[list[str]]]]:
    """name -> split -> each MERT seed's output (detokenized lines of its ``<split>.txt``): the
    per-seed hypotheses of every row of Table 1, as its evaluation artifact keeps them."""

    def lines(r, split):
        return r.evaluation.file(f"{split}.txt").read_text(encoding="utf-8").split("\n")[:-1]

    return {
        name: {s: [lines(r, s) for r in runs.values()] for s in ("dev", "test")}
        for name, runs in rows.items()
    }


def bleu_of(runs: dict[int, SMTResult], split: str) -> np.ndarray:
    """``(seeds,)``: the BLEU of each MERT run of a row on ``split`` (``"dev"`` or ``"test"``)."""
    return np.array([r.bleu[split]["single"]["bleu"] for r in runs.values()])
