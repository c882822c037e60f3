"""A Table 1's claims on the neural language model's rows, C-A-T1-2 and C-A-T1-4, read on the
primary held-out set (:mod:`.primary`): the held-out dev part and test together, every French
reference, intervals over the MERT seeds and whole Bible chapters resampled.

Their rules are those of :mod:`.equal_effort` (every difference's interval above 0, the extra
MERT round alone as the control, :data:`~rnnlib.verdicts.BLEU_FLOOR` on each row read);
:class:`HeldOutGains` gives them the set's differences (a row's mean BLEU, for the floor and
for the best row, is on the set too). C-A-T1-3 stays on test: its sentence
sets the test set against the development set.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from ... import multi_reference, verdicts
from ...verdicts import BLEU_FLOOR
from .intervals import run_stats, stats_and_resamples
from . import equal_effort
from .table_1 import ONE_RUN, Gains


class HeldOutGains(Gains):
    """:class:`.table_1.Gains` on a held-out set: ``outputs`` name -> ``{"test": each MERT
    seed's output on the set}``; ``pooled`` the same per word alignment (name -> ``{"test":
    alignment -> seed -> output}``) or ``None``; ``streams`` ``(S, n)`` the references;
    ``resamples`` the item indices of each resample (whole chapters); ``name`` the set in words;
    ``scored``: ``(name, pooled?) -> (scorer, stats)`` already computed
    (:func:`.intervals.run_stats` against ``streams``). Every difference is
    :func:`.intervals.stats_and_resamples` of the rows' runs; a row's mean BLEU is on the set."""

    def __init__(
        self,
        outputs: dict,
        streams: Sequence[Sequence[str]],
        resamples: Sequence[np.ndarray],
        name: str,
        pooled: dict | None = None,
        scored: dict | None = None,
    ):
        super().__init__(outputs, {"test": list(streams[0])}, pooled)
        self.streams, self.resamples, self.name = streams, resamples, name
        self.scored = dict(scored or {})
        self.scorer = next(iter(self.scored.values()))[0] if self.scored else None

    def stats(self, row: str, over: bool):
        """``(scorer, stats[alignment][seed] (n, k))`` of a row, computed once."""
        if (row, over) not in self.scored:
            groups = self.pooled[row]["test"] if over else [self.outputs[row]["test"]]
            if self.scorer is None:  # the references' n-grams, read once
                self.scorer = multi_reference.scorer_for(self.streams)
            self.scored[(row, over)] = run_stats(groups, self.streams, self.scorer)
        return self.scored[(row, over)]

    def note(self, over: bool) -> str:
        where = f"pooled over {self.alignments} word alignments" if over else "one alignment"
        return (
            f"means over {self.seeds} MERT runs per row ({where}); 95% interval of Clark et al. "
            f"(2011) with the {len(self.streams[0])} sentences of the {self.name} resampled as "
            f"whole Bible chapters; BLEU against {len(self.streams)} references"
        )

    def where(self, split: str) -> str:
        """The set (every split reads it), in words for a label."""
        return self.name

    def diff(self, a, b, s, over: bool) -> tuple:
        """``(label, a − b, low, high)`` on the set (``s`` ignored), each difference once."""
        label = f"{a} − {b}, {self.where(s)}"
        if (b, a, over) in self.done:
            _, d, lo, hi = self.done[(b, a, over)]
            return (label, -d, -hi, -lo)
        if (a, b, over) not in self.done:
            bleu, stats_a = self.stats(a, over)
            _, stats_b = self.stats(b, over)
            r = stats_and_resamples(bleu, stats_a, stats_b, self.resamples)
            self.done[(a, b, over)] = (label, r["diff"], r["low"], r["high"])
        return self.done[(a, b, over)]

    def mean_test(self, name, over: bool) -> float:
        """A row's mean BLEU on the set over its seeds (and alignments, ``over``)."""
        bleu, stats = self.stats(name, over)
        summed = np.array([st.sum(0) for g in stats for st in g])
        return float(multi_reference.score_of(bleu, summed).mean())

    def finish(self, c, names, over: bool) -> verdicts.Check:
        values = [(f"{n}, {self.name}", self.mean_test(n, over)) for n in names]
        c = verdicts.floored(c, values, BLEU_FLOOR, "BLEU", "the mean BLEU of each row read")
        if over:
            pooled = f"pooled over {self.alignments} word alignments"
            c = dataclasses.replace(c, rebuilds=pooled)
        return c


def claim_t1_2(gains: HeldOutGains) -> verdicts.Check:
    """C-A-T1-2 on the held-out set at equal tuning effort (:func:`.equal_effort.t1_2`):
    +CSLM+RNN above +RNN's lists re-tuned without the CSLM (:data:`.equal_effort.LISTS_ROW`)
    and above every other row of the paper's (the Baseline tuned on aside), the extra MERT round
    alone as the control; not measurable without the lists row. Paper A (§4.2): "The best
    performance was achieved when we used both CSLM and the phrase scores from the RNN
    Encoder–Decoder." """
    return equal_effort.t1_2(gains, ("test",))


def claim_t1_4(gains: HeldOutGains) -> verdicts.Check:
    """C-A-T1-4 on the held-out set at equal tuning effort (:func:`.equal_effort.t1_4`):
    Baseline < +RNN < +CSLM+RNN and the best row's gain under 2 BLEU (the book's reading of
    "modest"), each step's extra tuning alone as the control; not measurable without
    :data:`.equal_effort.LISTS_ROW`. Paper A (§4.2): "As expected, adding features computed
    by neural networks consistently improves the performance over the baseline performance.
    The best performance was achieved when we used both CSLM and the phrase scores from the RNN
    Encoder–Decoder." """
    return equal_effort.t1_4(gains)


def heldout_claims(gains: HeldOutGains) -> dict[str, verdicts.Check]:
    """C-A-T1-2 (:func:`claim_t1_2`) and C-A-T1-4 (:func:`claim_t1_4`) on the set; not
    measurable with one MERT run a row (on one alignment); none without the CSLM rows."""
    if "+CSLM+RNN" not in gains.outputs:
        return {}
    if gains.seeds < 2:
        one = verdicts.not_measurable(ONE_RUN)
        return {"C-A-T1-2": one, "C-A-T1-4": one}
    return {"C-A-T1-2": claim_t1_2(gains), "C-A-T1-4": claim_t1_4(gains)}


__all__ = ["HeldOutGains", "claim_t1_2", "claim_t1_4", "heldout_claims"]
