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
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ...book import claims
from ..spread import across, further_cached, with_mean_sd
from .floor import LearnedFloor, learned_floor
from .gates import gate_memory, claim_gru_2
from .gating_ablation import Ablation, claim_gru_1, gating_ablation
from .labelled_points import labelled_points
from .network import second_initialisation, untrained_network
from .purity_claims import PURITY_CLAIMS, PurityClaim, purity_claims, purity_measures
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


def rebuild(cache, corpus, cho: dict[str, Any], P: Params, alignment: int) -> Rebuild:
    """Every claim-bearing measure of the chapter on the phrase scorer of eflomal alignment
    ``alignment`` (:func:`rnnlib.experiments.cho2014.scorer.phrase_scorer` with the cho2014
    chapter's parameters ``cho``), in the chapter's order and with its seeds (``P``: the chapter's
    parameters);
    the gating ablation trains the tanh network on that scorer's pairs (a cached artifact).
    Torch's global random state is left as it was."""
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


def purity_across(found: list[PurityClaim], reps: Sequence[Rebuild]) -> list[PurityClaim]:
    """The chapter's clustering claims, each (and its second verdict) judged on every
    alignment."""
    out = []
    for k, c in enumerate(found):
        check = across(c.check, [(r.alignment, r.purity[k].check) for r in reps])
        bow = across(c.bow_check, [(r.alignment, r.purity[k].bow_check) for r in reps])
        out.append(dataclasses.replace(c, check=check, bow_check=bow))
    return out


def check_across(
    found: claims.ClaimCheck, reps: Sequence[Rebuild], which: str
) -> claims.ClaimCheck:
    """``found`` (``which``: ``"gates"`` or ``"ablation_check"``) judged on every alignment."""
    others = [(r.alignment, getattr(r, which).check) for r in reps]
    return dataclasses.replace(found, check=across(found.check, others))


def rebuilds_table(
    first: dict[str, dict[str, float]],
    ablation: Ablation,
    floor: LearnedFloor,
    reps: Sequence[Rebuild],
) -> pd.DataFrame:
    """One row per alignment (the chapter's first): the scorer's held-out NLL per pair, each
    column's trained purity and its gap to the bag of words, and the gating ablation's tanh −
    GRU difference; with ``mean`` and ``sd`` rows when there are several."""

    def row(values: dict[str, dict[str, float]], abl: Ablation, fl: LearnedFloor) -> dict:
        out: dict[str, float] = {"scorer dev NLL per pair": fl.network_nll}
        for col, (_, _, num) in PURITY_CLAIMS.items():
            v = values[col]
            out[f"{num}: trained"] = v.get("trained network", np.nan)
            out[f"{num}: trained − bag of words"] = v.get("trained network", np.nan) - v.get(
                "bag of words", np.nan
            )
        out["tanh − GRU, dev NLL per pair"] = float(abl.interval[0])
        return out

    rows = {"1": row(first, ablation, floor)}
    for r in reps:
        rows[str(r.alignment)] = row(r.purity_values, r.ablation, r.floor)
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "alignment"
    return with_mean_sd(table).round(3)


#: glue name of each spread column (read by ``rnnlib compare`` as the noise of that number)
SPREAD_NAMES = {
    "word: trained": "rep-word-trained",
    "sem: trained": "rep-sem-trained",
    "pat: trained": "rep-pat-trained",
    "tanh − GRU, dev NLL per pair": "rep-abl-gap",
}


def numbers(table: pd.DataFrame) -> dict:
    """The alignments measured and, with several, the standard deviation over them of the
    trained purities and of the ablation's gap, as ``-spread``/``-spread-n`` siblings."""
    n = len(table.index.difference(["mean", "sd"]))
    out = {"rep-rebuilds-n": n}
    if n < 2:
        return out
    for col, name in SPREAD_NAMES.items():
        out |= {f"{name}-spread": (table.loc["sd", col], 3), f"{name}-spread-n": n}
    return out


def origin(reps: Sequence[Rebuild], cho: dict[str, Any]) -> str:
    """Which alignments this build measured and where they come from, in words for the prose."""
    built = cho.get("alignment_replicates", 1)
    total = 1 + len(reps)
    if total < 2:
        return "one alignment, so the spread is not measured here"
    read = total - built
    where = f", {read} read from the cache" if read else ""
    return f"{total} alignments: {built} built by this build{where}"
