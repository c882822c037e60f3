"""The CSLM's claims at equal tuning effort: C-A-T1-2 and C-A-T1-4 read +CSLM+RNN against
+RNN's n-best lists re-tuned without the CSLM.

Every CSLM row is :class:`.rescored.RescoredSystem` on a base row's n-best lists: MERT tunes
*every* weight again on the dev lists with the CSLM's score added, and the test lists are
reranked. That is one more MERT round than its base row had, so "+CSLM+RNN above +RNN" would
credit the CSLM with whatever the extra round alone finds. :data:`LISTS_ROW` gives +RNN the same
round without the CSLM (the same lists, MERT seed, restarts and iterations; no sentence
feature): the claims read +CSLM+RNN against it, and their control is the extra round alone
(:data:`LISTS_ROW` against +RNN), which can hold; then the rule cannot credit the CSLM, as
C-A-T1-1's control (the Baseline tuned on) works for the RNN score. No sentence is decoded:
the row costs one MERT run on fixed lists and one reranking per seed.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from ... import verdicts
from ...cache import ArtifactCache
from ...smt.system import SMTResult
from . import cslm as neural_lm
from .cslm import CSLMRows
from .rescored import RescoredSystem
from .rows import TUNED_ON_ROW, BaselineRow, Replicate, RNNRow
from .setting import Params

#: +RNN's n-best lists re-tuned by MERT without the CSLM: the extra round of every CSLM row
#: without its feature (:func:`lists_runs`)
LISTS_ROW = "+RNN (lists re-tuned)"

#: the control of C-A-T1-2 and C-A-T1-4 at equal tuning effort
EXTRA_ROUND = (
    "+RNN's n-best lists re-tuned without the CSLM, against +RNN (the CSLM rows' extra MERT "
    "round alone)"
)

#: why C-A-T1-2 and C-A-T1-4 are not judged on rows without :data:`LISTS_ROW`
NO_LISTS_ROW = (
    f"no row {LISTS_ROW!r} (the CSLM rows' extra MERT round without the CSLM), so +CSLM+RNN "
    "has no row at equal tuning effort to be read against and no control"
)


def lists_runs(
    cache: ArtifactCache, base: BaselineRow, rnn: RNNRow, P: Params
) -> dict[int, SMTResult]:
    """:data:`LISTS_ROW`, MERT seed -> run: each +RNN run's lists through
    :meth:`.rescored.RescoredSystem.run` with no sentence feature, in the CSLM rows' mode,
    iterations and n-best size (their ``cho2014/rescored_tuned`` and ``cho2014/rescored_eval``
    artifacts, seconds each at ``cpu`` in mode ``lists``)."""
    system = RescoredSystem(
        cache, base.data, base.config, [], extra=[rnn.scores], detokenize=base.detokenize
    )
    return {
        s: system.run(
            rnn.runs[s],
            seed=s,
            mode=P.rescore_mode,
            iterations=P.rescore_iterations,
            nbest=P.eval_nbest,
        )
        for s in base.seeds
    }


def with_lists_row(
    cache: ArtifactCache,
    P: Params,
    base: BaselineRow,
    rnn: RNNRow,
    cslm: dict[str, dict[int, SMTResult]],
) -> dict[str, dict[int, SMTResult]]:
    """The CSLM rows ``cslm`` (name -> MERT seed -> run) with :data:`LISTS_ROW` first, for
    :func:`.table_1.table_1_rows`."""
    return {LISTS_ROW: lists_runs(cache, base, rnn, P), **cslm}


def cslm_replicates(
    cache: ArtifactCache, P: Params, replicates: Sequence[Replicate], cslm: CSLMRows
) -> list[Replicate]:
    """:func:`.cslm.cslm_replicates` (each alignment's replicate with its CSLM rows) with
    :data:`LISTS_ROW` among the CSLM rows of each that has them, so that the claims read it
    over every alignment."""
    reps = neural_lm.cslm_replicates(cache, P, replicates, cslm)
    return [
        rep
        if rep.cslm is None
        else dataclasses.replace(rep, cslm=with_lists_row(cache, P, rep.base, rep.rnn, rep.cslm))
        for rep in reps
    ]


Triple = tuple[str, str, str]


def judged(
    gains: Any,
    tests: Sequence[Triple],
    controls: Sequence[Triple],
    more: Callable[[bool], list] | None = None,
) -> verdicts.Check:
    """Every ``(a, b, split)`` difference of ``tests`` (and ``more(over)``'s ready-made tests)
    above 0, its control :data:`EXTRA_ROUND` (and the Baseline tuned on, where read): the same
    rule on ``controls``. ``gains``: :class:`.table_1.Gains` or
    :class:`.primary_claims.HeldOutGains` (their ``diff``, ``note``, ``finish``, ``where``)."""
    names = sorted({n for a, b, _ in [*tests, *controls] for n in (a, b)})
    over = gains.rebuilt_for(*names)
    found = [gains.diff(a, b, s, over) for a, b, s in tests] + (more(over) if more else [])
    against = [gains.diff(a, b, s, over) for a, b, s in controls]
    what = EXTRA_ROUND
    if any(a == TUNED_ON_ROW for a, _, _ in controls):
        what += "; the Baseline tuned on against the Baseline (its extra tuning alone)"
    check = verdicts.controlled(
        verdicts.intervals_above(found, gains.note(over)), what, verdicts.intervals_above(against)
    )
    return gains.finish(check, names, over)


def t1_2(gains: Any, splits: Sequence[str]) -> verdicts.Check:
    """C-A-T1-2 at equal tuning effort: +CSLM+RNN above :data:`LISTS_ROW` on ``splits`` and
    above every other row but +RNN (which the lists row stands for) and the Baseline tuned on
    on ``"test"``; the control: the lists row above +RNN on ``splits``. Not measurable
    (:data:`NO_LISTS_ROW`) without the lists row."""
    if LISTS_ROW not in gains.outputs:
        return verdicts.not_measurable(NO_LISTS_ROW)
    skip = ("+CSLM+RNN", "+RNN", LISTS_ROW, TUNED_ON_ROW)
    others = [n for n in gains.outputs if n not in skip]
    tests = [("+CSLM+RNN", LISTS_ROW, s) for s in splits]
    tests += [("+CSLM+RNN", n, "test") for n in others]
    return judged(gains, tests, [(LISTS_ROW, "+RNN", s) for s in splits])


def largest_under_2(gains: Any, over: bool) -> tuple:
    """C-A-T1-4's reading of "modest", the largest gain under 2 BLEU, as a difference to judge
    above 0: ``(label, 2 − g, 2 − high, 2 − low)`` of the best row's gain ``g`` over the
    Baseline on ``"test"`` (the set of ``gains``: :class:`.table_1.Gains` or
    :class:`.primary_claims.HeldOutGains`), the best row the one of highest mean BLEU
    (``gains.mean_test``) among those with a feature (not the Baseline, the Baseline tuned on
    or :data:`LISTS_ROW`; with ``over``, those built on every alignment)."""
    rows = [
        n
        for n in gains.outputs
        if n not in ("Baseline", TUNED_ON_ROW, LISTS_ROW) and (not over or gains.rebuilt_for(n))
    ]
    top = max(rows, key=lambda n: gains.mean_test(n, over))
    _, g, lo, hi = gains.diff(top, "Baseline", "test", over)
    label = f"2 − ({top} − Baseline), {gains.where('test')} (the largest gain under 2 BLEU)"
    return (label, 2 - g, 2 - hi, 2 - lo)


def t1_4(gains: Any) -> verdicts.Check:
    """C-A-T1-4 at equal tuning effort: on ``"test"`` +RNN above the Baseline tuned on (the
    Baseline where that row was not built), +CSLM+RNN above :data:`LISTS_ROW`, and the best
    row's gain under 2 BLEU (:func:`largest_under_2`); the control: each step's extra tuning
    alone (the lists row above +RNN, the Baseline tuned on above the Baseline). Not measurable
    (:data:`NO_LISTS_ROW`) without the lists row."""
    if LISTS_ROW not in gains.outputs:
        return verdicts.not_measurable(NO_LISTS_ROW)
    tests: list[Triple] = [("+CSLM+RNN", LISTS_ROW, "test")]
    controls: list[Triple] = [(LISTS_ROW, "+RNN", "test")]
    if TUNED_ON_ROW in gains.outputs:
        tests.insert(0, ("+RNN", TUNED_ON_ROW, "test"))
        controls.insert(0, (TUNED_ON_ROW, "Baseline", "test"))
    else:
        tests.insert(0, ("+RNN", "Baseline", "test"))
    return judged(gains, tests, controls, lambda over: [largest_under_2(gains, over)])


def _found(check: verdicts.Check, label: str) -> str:
    """``label``'s difference and 95% interval in ``check``'s tests, in words."""
    for name, d, lo, hi in check.evidence.get("tests", []):
        if name.startswith(label):
            return f"{d:+.2f} [{lo:.2f}, {hi:.2f}]"
    return "not computed"


def control_words(check: verdicts.Check, row: str, base: str) -> str:
    """What the control of ``check`` (extra tuning alone: the Baseline tuned on for C-A-T1-1,
    the extra MERT round :data:`EXTRA_ROUND` for C-A-T1-2) found, in words for the prose: whether
    it gains beyond the noise, and so explains ``row``'s gain over ``base`` as well as the
    feature could."""
    gain = f"{row}'s gain over {base}"
    return {
        verdicts.HOLDS: f"gains beyond the noise: it explains {gain}",
        verdicts.FAILS: f"loses BLEU: it does not explain {gain}",
        verdicts.NOISE: f"stays inside the noise: it does not explain {gain}",
    }.get(verdicts.evaluate(check).control, "was not measurable (a NaN, or too few MERT runs)")


def readings(checks: dict[str, verdicts.Check]) -> dict[str, Any]:
    """For the prose (``cho-lists-…``): C-A-T1-2's difference at equal tuning effort
    (+CSLM+RNN − :data:`LISTS_ROW`) and its control's (the extra round alone), each with its
    interval on the set the claim reads, and what the control found, in words
    (:func:`control_words`)."""
    check = checks.get("C-A-T1-2")
    if check is None or check.control is None or not check.control.what.startswith(EXTRA_ROUND):
        none = "was not built (no CSLM rows or no lists row, or one MERT run a row)"
        return {"cho-lists-cslm": "not measured", "cho-lists-round": "not measured",
                "cho-lists-reading": none}  # fmt: skip
    return {
        "cho-lists-cslm": _found(check, f"+CSLM+RNN − {LISTS_ROW}"),
        "cho-lists-round": _found(check.control.check, f"{LISTS_ROW} − +RNN"),
        "cho-lists-reading": control_words(check, "+CSLM+RNN", "+RNN"),
    }


__all__ = [
    "EXTRA_ROUND",
    "control_words",
    "LISTS_ROW",
    "NO_LISTS_ROW",
    "judged",
    "largest_under_2",
    "lists_runs",
    "readings",
    "t1_2",
    "t1_4",
    "with_lists_row",
    "cslm_replicates",
]
