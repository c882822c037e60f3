"""The phrase-based systems of A Table 1's rows: the Baseline and the rows that add the RNN score
(A Eq. 9), each tuned by MERT once per seed (:func:`rnnlib.smt.system.run`), from the decoder's
defaults or from the Baseline's tuned weights of the same seed."""

from __future__ import annotations

import dataclasses
import functools
from typing import Sequence

import torch

from ...cache import Artifact, ArtifactCache
from ...device import resolve_device
from ...smt.features import Pair
from ...smt.rnn_scorer import (
    ScoredTable,
)
from ...smt.seeds import OwnStreams, drawn_weights
from ...smt.system import (
    SMTResult,
    build_stages,
    checksum,
    run,
)
from ..run_pool import Job, build_side_by_side
from .rows import (
    DEFAULTS_ROW,
    MERT_START_SD,
    TUNED_ON_ROW,
    BaselineRow,
    RNNRow,
    RowSpec,
    row_features,
)
from .scorer import PhraseScorer, load_scored, phrase_scorer, scored_pairs, usable_pairs
from .setting import Params, cho2014_corpus


def mert_runs(
    cache: ArtifactCache,
    base: BaselineRow,
    extra: Sequence[ScoredTable] = (),
    start: dict[int, dict[str, float]] | None = None,
    seeds: Sequence[int] | None = None,
) -> dict[int, SMTResult]:
    """One row of A Table 1: ``seed -> SMTResult``, the phrase-based system of ``base.config``
    with the phrase features ``extra`` (A Eq. 9), tuned by MERT with each of ``seeds`` (``None``:
    ``base.seeds``), starting from ``start[seed]`` (:func:`baseline_start`) or, ``None``, from
    the decoder's defaults (Moses' weights, a new feature at 0.1)."""
    return {
        s: mert_system(cache, base, extra, start, s)
        for s in (base.seeds if seeds is None else seeds)
    }


def mert_system(
    cache: ArtifactCache,
    base: BaselineRow,
    extra: Sequence[ScoredTable],
    start: dict[int, dict[str, float]] | None,
    seed: int,
) -> SMTResult:
    """One system of :func:`mert_runs`: MERT seed ``seed``, from ``start[seed]`` or, ``None``,
    the decoder's defaults, drawn around them for the seed where ``base.start_sd`` is above 0
    (:func:`rnnlib.smt.seeds.drawn_weights`); with ``base.own_streams`` each of its
    optimisations draws from its own stream (:class:`rnnlib.smt.seeds.OwnStreams`)."""
    first = None if start is None else start[seed]
    if start is None and base.start_sd:  # this seed's own start around the defaults
        first = drawn_weights([n for t in extra for n in t.names], seed, base.start_sd)
    mert_seed = OwnStreams(seed) if base.own_streams else seed
    return run(
        base.data,
        dataclasses.replace(base.config, seed=mert_seed, start_weights=first),
        cache,
        extra=extra,
        detokenize=base.detokenize,
        log=lambda m: None,
        alignment_run=base.alignment_run,
    )


def systems_side_by_side(
    cache: ArtifactCache, base: BaselineRow, rows: Sequence[RowSpec], P: Params
) -> dict[str, str]:
    """Build the MERT-tuned systems of ``rows`` that the cache lacks ``systems_at_once`` at a
    time (:func:`rnnlib.experiments.run_pool.build_side_by_side`, in rows' order), each in a
    forked process whose decoder takes its share of the cores; :func:`mert_runs` then reads them.
    A system's MERT line searches and set-up run on one core, so two systems side by side keep
    both cores busy where one leaves the second idle. The systems are the same whatever the
    setting (a decoding does not depend on its processes). Returns each job's outcome; with
    ``systems_at_once`` 1 nothing is built here."""
    at_once = systems_at_once(P)
    jobs = [
        Job(system_job(name, s), functools.partial(mert_system, cache, base, extra, start, s))
        for name, extra, start, seeds in rows
        for s in seeds
    ]
    if at_once == 1 or not jobs:
        return dict.fromkeys((j.name for j in jobs), "not started")
    # the stages every system shares, here first, so that no worker waits on another's lock
    build_stages(base.data, base.config, cache, base.alignment_run, log=lambda m: None)
    return build_side_by_side(cache, jobs, at_once, torch.device("cpu"))


def systems_at_once(P: Params) -> int:
    """The chapter's ``systems_at_once`` (1 when it has none); a value that is not an integer
    >= 1 is an error naming the parameter."""
    at_once = P.systems_at_once
    if isinstance(at_once, bool) or not isinstance(at_once, int) or at_once < 1:
        raise ValueError(f"parameter 'systems_at_once': {at_once!r}; expected an integer >= 1")
    return at_once


def system_job(row: str, seed: int) -> str:
    """The name of the pool's job that builds row ``row``'s system of MERT seed ``seed``."""
    return f"{row}, MERT seed {seed}"


def baseline_start(base: BaselineRow, extra: Sequence[ScoredTable]) -> dict[int, dict[str, float]]:
    """MERT's starting point of a row that adds the features ``extra`` to the Baseline, as a
    careful Moses user tunes it: each seed starts from the Baseline's weights tuned with the same
    seed and every new feature at 0, so the search begins where the Baseline ended."""
    new = {name: 0.0 for t in extra for name in t.names}
    return {s: {**base.runs[s].weights, **new} for s in base.seeds}


#: the chapter's ``mert_start`` values: where MERT starts the rows that add a feature
MERT_STARTS = ("baseline", "defaults")


def row_start(base: BaselineRow, extra: Sequence[ScoredTable], P: Params):
    """:func:`baseline_start` (``mert_start="baseline"``, the default) or ``None`` (the decoder's
    defaults); another value is an error naming the parameter."""
    how = P.mert_start
    if how not in MERT_STARTS:
        raise ValueError(f"parameter 'mert_start': {how!r}; expected one of {MERT_STARTS}")
    return baseline_start(base, extra) if how == "baseline" else None


def defaults_runs(
    cache: ArtifactCache, base: BaselineRow, scores: ScoredTable, P: Params
) -> dict[int, SMTResult]:
    """The +RNN system tuned by MERT from the decoder's defaults with seeds
    ``1..mert_default_seeds`` (seed -> run; the Baseline's MERT starts there too): the further
    seeds that tell whether the +RNN row's gain needs its warm start from the
    Baseline's weights (:func:`baseline_start`). Empty when ``mert_default_seeds`` is 0, or
    when ``mert_start`` is ``"defaults"`` (the +RNN row already starts there)."""
    seeds = defaults_seeds(P)
    if not seeds:
        return {}
    return mert_runs(cache, base, extra=[scores], start=None, seeds=seeds)


def defaults_seeds(P: Params) -> list[int]:
    """The MERT seeds of :func:`defaults_runs`: ``1..mert_default_seeds``, none when it is 0 or
    when ``mert_start`` is ``"defaults"``."""
    n = P.mert_default_seeds
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"parameter 'mert_default_seeds': {n!r}; expected an integer >= 0")
    if n == 0 or P.mert_start == "defaults":
        return []
    return list(range(1, n + 1))


def baseline_row(cache: ArtifactCache, P: Params, alignment_run: int = 1) -> BaselineRow:
    """The corpus of the chapter's parameters ``P`` (:func:`cho2014_corpus`), its data and system
    settings as the baseline chapter reads them
    (:func:`rnnlib.experiments.baseline.baseline_inputs`) and the Baseline row of A Table 1: one
    MERT run per seed ``1..mert_seeds``, on eflomal alignment ``alignment_run``."""
    base = baseline_setup(cache, P, alignment_run)
    systems_side_by_side(cache, base, [("Baseline", (), None, base.seeds)], P)
    base.runs = mert_runs(cache, base)
    return base


def baseline_setup(cache: ArtifactCache, P: Params, alignment_run: int = 1) -> BaselineRow:
    """:func:`baseline_row` without its systems (``runs`` empty): the corpus, the data and
    settings, the seeds and the device."""
    from ..baseline import baseline_inputs

    corpus = cho2014_corpus(cache, P)
    data, config = baseline_inputs(corpus, P.as_dict())
    seeds = list(range(1, P.mert_seeds + 1))
    device = resolve_device(P.device)
    config = dataclasses.replace(config, seed=seeds[0])
    row = BaselineRow(corpus, data, config, seeds, {}, device, alignment_run)
    row.start_sd, row.own_streams = MERT_START_SD, True  # independent MERT seeds
    return row


def rnn_row(cache: ArtifactCache, base: BaselineRow, P: Params) -> RNNRow:
    """The network trained on the phrase table's unique pairs (:func:`phrase_scorer`, A §3.1),
    ``log p(f | e)`` of every pair the decoder can use on dev and test (:func:`scored_pairs`),
    and the +RNN row: the system of ``base`` with that score as one more feature (A Eq. 9),
    one MERT run per seed; beside it the rows of :func:`rnn_row_seeds` (the Baseline tuned on
    from its own weights, the rows no claim reads)."""
    scorer = phrase_scorer(cache, base.corpus, P, base.alignment_run)
    model = scorer.model()
    phrases, lookup, usable = usable_pairs(scorer, base.data, P)
    feature = scored_usable(cache, scorer, model, usable, base)
    scores = load_scored(feature)
    rows: dict[str, RowSpec] = {}
    for name, seeds in rnn_row_seeds(base, P).items():
        extra = row_features(name, scores)
        start = None if name == DEFAULTS_ROW else row_start(base, extra, P)
        rows[name] = (name, extra, start, seeds)
    systems_side_by_side(cache, base, list(rows.values()), P)  # then read here, in order
    _, extra, start, _ = rows["+RNN"]
    runs = mert_runs(cache, base, extra=extra, start=start)
    cited = [base.corpus, base.config, scorer.artifact]
    row = RNNRow(scorer, model, phrases, lookup, usable, feature, scores, runs, cited)
    if rows[TUNED_ON_ROW][3]:  # the Baseline's extra tuning without the feature
        _, extra, start, seeds = rows[TUNED_ON_ROW]
        row.runs_tuned_on = mert_runs(cache, base, extra=extra, start=start, seeds=seeds)
    if "+RNN per word" in rows:
        _, extra, start, _ = rows["+RNN per word"]
        row.per_word = extra[0]
        row.runs_per_word = mert_runs(cache, base, extra=extra, start=start)
    row.runs_defaults = defaults_runs(cache, base, scores, P)
    return row


def rnn_row_seeds(base: BaselineRow, P: Params) -> dict[str, list[int]]:
    """The rows built beside the network, in the order they are built, each with its MERT seeds:
    the Baseline tuned on as long as +RNN without the score (:data:`TUNED_ON_ROW`, which waits
    for no network; no seeds when ``mert_start`` is ``defaults``), +RNN, +RNN per word
    (``per_word_row``) and :data:`DEFAULTS_ROW` (:func:`defaults_seeds`, maybe none)."""
    rows = {TUNED_ON_ROW: list(base.seeds) if P.mert_start == "baseline" else []}
    rows["+RNN"] = list(base.seeds)
    if P.per_word_row:
        rows["+RNN per word"] = list(base.seeds)
    rows[DEFAULTS_ROW] = defaults_seeds(P)
    return rows


def scored_usable(
    cache: ArtifactCache,
    scorer: PhraseScorer,
    model: torch.nn.Module,
    usable: Sequence[Pair],
    base: BaselineRow,
) -> Artifact:
    """The ``cho2014/rnn_feature`` artifact of the trained ``scorer``: ``model`` (its network)
    scores the pairs ``usable`` (:func:`usable_pairs`) of ``base``'s dev and test sentences
    (:func:`scored_pairs`)."""
    sentences = list(base.data.dev_src) + list(base.data.test_src)
    vocabs = (base.corpus.src_vocab, base.corpus.tgt_vocab)
    return scored_pairs(cache, scorer.artifact, model, usable, *vocabs, data=checksum(sentences))


def tuning_sentences(base: BaselineRow) -> int:
    """How many dev sentences MERT tuned on (the first ones;
    :func:`rnnlib.smt.system.tuning_sentences`)."""
    from ...smt.system import tuning_sentences as n

    return n(base.data, base.config)
