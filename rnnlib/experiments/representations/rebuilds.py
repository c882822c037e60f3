"""The representations chapter measured again on every word alignment of the cho2014 chapter:
the rebuild spread of the purity gaps, the gates and the gating ablation.

eflomal's sampler takes no seed, so a rebuild from an empty cache aligns differently, builds
another phrase table and trains the phrase scorer on other pairs. The cho2014 chapter builds
its rows on several alignments when ``alignment_replicates`` asks, or reads those a ``spread``
build left in the cache (``cached_spread``); each has its own scorer. Here every measure of the
chapter that a claim reads is taken again on the scorer of alignments 2, 3, ... exactly as on
the first (the same parameters and random seeds), and each claim is judged on every alignment
(:func:`rnnlib.verdicts.across_rebuilds`, through :func:`rnnlib.experiments.spread.across`): a
verdict that an alignment flips is inside the noise. :func:`rebuilds_table` and
:func:`numbers` show the spread.

An alignment measured apart by ``rnnlib spread phrase`` (:mod:`.recorded`) enters as a
:class:`RecordedRebuild`: its row of the table (:func:`row_of`, the headline numbers its
record holds) and its claims' checks (:func:`recorded_checks`), judged beside the others.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ... import verdicts
from ...book import claims
from ...book.spread_records import HEADLINES
from ..spread import across, further_cached, with_mean_sd
from .floor import LearnedFloor, learned_floor
from .gates import gate_memory, claim_gru_2
from .gating_ablation import Ablation, ablation_runs, claim_gru_1, gating_ablation
from .labelled_points import labelled_points
from .network import second_initialisation, untrained_network
from .purity_claims import (
    PURITY_CLAIMS,
    PurityClaim,
    bow_gap,
    purity_claims,
    purity_measures,
)
from .setting import Params, PhraseScorer, phrase_scorer


@dataclass
class Rebuild:
    """The chapter's claims measured on one further alignment's phrase scorer (:func:`rebuild`):
    ``purity`` the three clustering claims, ``gates`` C-A-GRU-2, ``ablation`` and
    ``ablation_check`` C-A-GRU-1, ``purity_values`` each column's purity per representation."""

    alignment: int
    scorer: PhraseScorer
    floor: LearnedFloor
    purity: list[PurityClaim]
    purity_values: dict[str, dict[str, float]]
    gates: claims.ClaimCheck
    ablation: Ablation
    ablation_check: claims.ClaimCheck

    @property
    def artifacts(self) -> list:
        return [self.scorer.artifact, self.ablation.tanh.artifact]

    @property
    def row(self) -> dict[str, float]:
        """Its row of :func:`rebuilds_table` (:func:`row_of`)."""
        return row_of(self.purity_values, self.ablation, self.floor)

    @property
    def recorded(self) -> bool:
        return False


@dataclass
class RecordedRebuild:
    """A further alignment measured apart by ``rnnlib spread phrase`` and read from its record
    (:func:`from_record`), in the place of a :class:`Rebuild` where the chapter judges its
    claims on every alignment and tabulates them: ``alignment`` names it (its index and the
    record's time), ``row`` is its row of :func:`rebuilds_table`, ``purity``, ``gates`` and
    ``ablation_check`` its claims' checks as the record holds them."""

    alignment: str
    row: dict[str, float]
    purity: list[PurityClaim]
    gates: claims.ClaimCheck
    ablation_check: claims.ClaimCheck
    recorded: bool = True


def recorded_checks(r: Rebuild) -> dict[str, Any]:
    """The checks of :class:`Rebuild` ``r`` as a record holds them (plain JSON): per clustering
    claim (by its key) its ID, check and second verdict's check, and C-A-GRU-2's and
    C-A-GRU-1's."""

    def plain(c) -> dict[str, Any]:
        return {"claim": c.claim, "check": asdict(c.check)}

    purity = {c.key: {**plain(c), "bow_check": asdict(c.bow_check)} for c in r.purity}
    return {"purity": purity, "gates": plain(r.gates), "ablation_check": plain(r.ablation_check)}


def from_record(record: dict, checks: dict[str, Any]) -> RecordedRebuild:
    """The :class:`RecordedRebuild` of a matching record of piece ``phrase``: its row read from
    its headline (the columns of :func:`rebuilds_table`; a missing one NaN), ``checks`` as
    :func:`recorded_checks` wrote them (its stamp of this chapter)."""
    Check = verdicts.Check

    def claim(d: dict) -> claims.ClaimCheck:
        return claims.ClaimCheck(d["claim"], Check.from_dict(d["check"]))

    purity = []
    for _, key, _ in PURITY_CLAIMS.values():  # in the chapter's order
        held = checks["purity"][key]
        found, bow = Check.from_dict(held["check"]), Check.from_dict(held["bow_check"])
        measured = found.rule != "not_measurable"
        purity.append(PurityClaim(held["claim"], key, found, bow, measured, ""))
    row = {col: float(record["headline"].get(col, np.nan)) for col in SPREAD_NAMES}
    when = str(record.get("created", ""))[:16]
    label = f"{record['index']}, recorded {when}"
    gates, ablation = claim(checks["gates"]), claim(checks["ablation_check"])
    return RecordedRebuild(label, row, purity, gates, ablation)


def rebuild(cache, corpus, cho, P: Params, alignment: int) -> Rebuild:
    """Every claim-bearing measure of the chapter on the phrase scorer of eflomal alignment
    ``alignment`` (:func:`rnnlib.experiments.cho2014.scorer.phrase_scorer` with the cho2014
    chapter's parameters ``cho``, a mapping or its typed ``Params``), in the chapter's order
    and with its seeds (``P``: the chapter's parameters); the gating ablation trains the tanh
    network on that scorer's pairs (a cached artifact). Torch's global random state is left as
    it was."""
    with torch.random.fork_rng(devices=[]):
        scorer = phrase_scorer(cache, corpus, cho, alignment)
        model = scorer.model()
        untrained = untrained_network(scorer)
        n_boot, seed = P.n_boot, P.seed
        # the artifact a lookup-only read may miss first, before the minute of purity work
        abl = gating_ablation(cache, corpus, scorer, untrained, P.ablation_updates, n_boot, seed)
        second = second_initialisation(scorer)
        floor = learned_floor(corpus, scorer, model)
        rng = np.random.default_rng(P.seed)
        points = labelled_points(corpus, scorer, model, untrained, P, rng, second)
        measures = purity_measures(points, P, rng)
        gates = claim_gru_2(gate_memory(corpus, model, P, rng, untrained), floor)
    return Rebuild(
        alignment,
        scorer,
        floor,
        purity_claims(measures, P, floor),
        {col: m.purity() for col, m in measures.items()},
        gates,
        abl,
        claim_gru_1(abl, n_boot, seed),
    )


def rebuild_runs(cache, corpus, cho, P: Params, alignment: int) -> list:
    """The cached artifacts :func:`rebuild` reads, in its order and without its measures: the
    phrase scorer of ``alignment``, then the gating ablation's tanh network and GRU
    (:func:`~.gating_ablation.ablation_runs`). A record of this chapter is checked against the
    keys these look up now (:func:`rnnlib.book.spread_records.current_keys`), in seconds where
    :func:`rebuild` would take the chapter's minutes of measures again."""
    with torch.random.fork_rng(devices=[]):
        scorer = phrase_scorer(cache, corpus, cho, alignment)
        tanh, gru = ablation_runs(cache, corpus, scorer, P.ablation_updates)
    return [scorer.artifact, tanh.artifact, gru.artifact]


def rebuilds(cache, corpus, cho: dict[str, Any], P: Params) -> list[Rebuild]:
    """:func:`rebuild` of alignments 2, ..., the cho2014 chapter's ``alignment_replicates``
    (built when missing), then, with its ``cached_spread``, of the further alignments whose
    scorer and tanh network the cache holds (none computed): empty for a build of one alignment.
    """
    n = cho.get("alignment_replicates", 1)
    out = [rebuild(cache, corpus, cho, P, r) for r in range(2, n + 1)]
    if cho.get("cached_spread", False):
        out += further_cached(cache, lambda r: rebuild(cache, corpus, cho, P, r), n + 1)
    return out


def purity_across(
    found: list[PurityClaim], reps: Sequence[Rebuild | RecordedRebuild]
) -> list[PurityClaim]:
    """The chapter's clustering claims, each (and its second verdict) judged on every
    alignment (``reps``: the further ones, built, read from the cache or recorded apart)."""
    out = []
    for k, c in enumerate(found):
        check = across(c.check, [(r.alignment, r.purity[k].check) for r in reps])
        bow = across(c.bow_check, [(r.alignment, r.purity[k].bow_check) for r in reps])
        out.append(dataclasses.replace(c, check=check, bow_check=bow))
    return out


def check_across(
    found: claims.ClaimCheck, reps: Sequence[Rebuild | RecordedRebuild], which: str
) -> claims.ClaimCheck:
    """``found`` (``which``: ``"gates"`` or ``"ablation_check"``) judged on every alignment."""
    others = [(r.alignment, getattr(r, which).check) for r in reps]
    return dataclasses.replace(found, check=across(found.check, others))


def row_of(
    values: dict[str, dict[str, float]], abl: Ablation, fl: LearnedFloor
) -> dict[str, float]:
    """An alignment's row of :func:`rebuilds_table`: the scorer's held-out NLL per pair (``fl``),
    each column's trained purity and its gap to the bag of words (``values``: each column's
    purity per representation), and the gating ablation's tanh − GRU difference (``abl``); the
    headline numbers a record of piece ``phrase`` holds of this chapter
    (:data:`rnnlib.book.spread_records.HEADLINES`)."""
    out: dict[str, float] = {"scorer dev NLL per pair": fl.network_nll}
    for col, (_, _, num) in PURITY_CLAIMS.items():
        out[f"{num}: trained"] = values[col].get("trained network", np.nan)
        out[f"{num}: trained − bag of words"] = bow_gap(values[col])
    out["tanh − GRU, dev NLL per pair"] = float(abl.interval[0])
    return out


def rebuilds_table(
    first: dict[str, dict[str, float]],
    ablation: Ablation,
    floor: LearnedFloor,
    reps: Sequence[Rebuild | RecordedRebuild],
) -> pd.DataFrame:
    """One row per alignment (the chapter's first, then ``reps``: those built or read from the
    cache, and those recorded apart) (:func:`row_of`); with ``mean`` and ``sd`` rows when there
    are several."""
    rows = {"1": row_of(first, ablation, floor)}
    for r in reps:
        rows[str(r.alignment)] = r.row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "alignment"
    return with_mean_sd(table).round(3)


#: glue name of each column of :func:`rebuilds_table` (the headline numbers a record of piece
#: ``phrase`` holds of this chapter; their ``-spread`` siblings are ``rnnlib compare``'s noise)
SPREAD_NAMES = {
    label: name for label, (chapter, name) in HEADLINES["phrase"].items()
    if chapter == "representations"
}  # fmt: skip


def numbers(table: pd.DataFrame) -> dict:
    """The alignments measured and, with several, the standard deviation over them of each
    column (:data:`SPREAD_NAMES`), as ``-spread``/``-spread-n`` siblings."""
    n = len(table.index.difference(["mean", "sd"]))
    out = {"rep-rebuilds-n": n}
    if n < 2:
        return out
    for col, name in SPREAD_NAMES.items():
        out |= {f"{name}-spread": (table.loc["sd", col], 3), f"{name}-spread-n": n}
    return out


def origin(reps: Sequence[Rebuild | RecordedRebuild], cho: dict[str, Any]) -> str:
    """Which alignments this build measured and where they come from, in words for the prose."""
    built = cho.get("alignment_replicates", 1)
    apart = sum(r.recorded for r in reps)
    total = 1 + len(reps)
    if total < 2:
        return "one alignment, so the spread is not measured here"
    read = total - built - apart
    where = (f", {read} read from the cache" if read else "") + (
        f", {apart} recorded apart" if apart else ""
    )
    return f"{total} alignments: {built} built by this build{where}"
