"""The chapter's costly work built ahead, side by side, where the cache lacks it."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ...cache import ArtifactCache
from ...smt.rnn_scorer import (
    ScoredTable,
)
from ...smt.system import (
    SMTResult,
    build_stages,
)
from ..run_pool import Job, build_side_by_side
from .counts import counts_scorer
from .cslm import cslm_model
from .rows import DEFAULTS_ROW, TUNED_ON_ROW, row_features
from .scorer import (
    PhraseScorer,
    load_scored,
    phrase_scorer,
    scorer_plan,
    scorer_variant,
    usable_pairs,
)
from .setting import Params
from .systems import (
    baseline_setup,
    mert_system,
    rnn_row_seeds,
    row_start,
    scored_usable,
    system_job,
    systems_at_once,
)


def build_ahead(cache: ArtifactCache, P: Params) -> dict[str, str]:
    """The chapter's costly work, built where ``cache`` lacks it ``systems_at_once`` at a time
    (:func:`rnnlib.experiments.run_pool.build_side_by_side`: each job in a process forked from
    this one, on one torch thread, started in this order as soon as what it reads is built):

    1. the network (:func:`phrase_scorer`), then its scores of the pairs the decoder can use
       (:func:`scored_usable`): the longest chain, first;
    2. the Baseline's MERT-tuned systems, one per seed;
    3. the systems of the rows of :func:`rnn_row_seeds`: the Baseline tuned on first, each after
       the Baseline's system of its seed, while the network trains; those that add the RNN
       score after the scores and, when they start from the Baseline's tuned weights
       (:func:`row_start`), after the Baseline's system of their seed;
    4. the count-drawn network (:func:`.counts.counts_scorer`, C-A-F3-3's counterfactual) and
       the CSLM (:func:`.cslm.cslm_model`), which nothing here waits for;
    5. with ``tanh_ahead``, the representations chapter's tanh network (:func:`scorer_variant`
       with ``unit="tanh"`` at the scorer's updates: its gating ablation with
       ``ablation_updates`` None, the same artifact), after the network, so that it trains on
       the core the systems leave idle rather than alone in that chapter.

    So the second core trains or tunes while the first does, where the chapter's order would
    leave it idle (the network's training, the last system of an odd count). The chapter then
    reads all of it, in its order, from the cache. The systems are the same either way; a
    network trained here on one thread differs from one trained on ``threads`` threads by
    rounding, as on another machine. Returns each job's outcome (empty with ``systems_at_once``
    1: the chapter builds everything in its own order)."""

    at_once = systems_at_once(P)
    if at_once == 1:
        return {}
    base = baseline_setup(cache, P)
    corpus = base.corpus
    build_stages(base.data, base.config, cache, base.alignment_run, log=lambda m: None)
    plan = scorer_plan(cache, corpus, P, base.alignment_run)
    _, _, usable = usable_pairs(plan, base.data, P)
    read: dict[str, Any] = {}  # what a job reads, once per process

    def scorer() -> PhraseScorer:
        return phrase_scorer(cache, corpus, P, base.alignment_run, plan=plan)

    def scores() -> ScoredTable:
        if "scores" not in read:
            trained = scorer()
            read["scores"] = load_scored(
                scored_usable(cache, trained, trained.model(), usable, base)
            )
        return read["scores"]

    def baseline(seed: int) -> SMTResult:
        return mert_system(cache, base, (), None, seed)

    def system(row: str, seed: int) -> SMTResult:
        extra = [] if row == TUNED_ON_ROW else row_features(row, scores())
        start = None
        if row != DEFAULTS_ROW:
            start = row_start(
                dataclasses.replace(base, seeds=[seed], runs={seed: baseline(seed)}), extra, P
            )
        return mert_system(cache, base, extra, start, seed)

    warm = P.mert_start == "baseline"
    jobs = [Job("network", scorer), Job("scores", scores, after=("network",))]
    jobs += [Job(system_job("Baseline", s), functools.partial(baseline, s)) for s in base.seeds]
    for row, seeds in rnn_row_seeds(base, P).items():
        for s in seeds:
            after = () if row == TUNED_ON_ROW else ("scores",)
            if warm and row != DEFAULTS_ROW:
                after += (system_job("Baseline", s),)
            jobs.append(Job(system_job(row, s), functools.partial(system, row, s), after=after))
    if P.rnn_check_optimiser:
        jobs.append(Job("count-drawn network", lambda: counts_scorer(cache, corpus, plan, P)))
    jobs.append(Job("CSLM", lambda: cslm_model(cache, base, P)))
    if P.tanh_ahead:
        tanh = functools.partial(scorer_variant, cache, corpus, unit="tanh")
        jobs.append(Job("tanh network", lambda: tanh(scorer()), after=("network",)))
    # (on a GPU nothing is built here: a process forked after CUDA started cannot use it)
    return build_side_by_side(cache, jobs, at_once, base.device)
