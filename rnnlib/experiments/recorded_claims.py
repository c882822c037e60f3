"""Claims judged with the recorded rebuild spread: a claim whose tests compare two headline
numbers that ``rnnlib spread`` records (paper B's Table 1 BLEU of the "-50" and "-30" pairs and
RNNsearch-50⋆; paper A's +RNN and Baseline tuned on rows) is judged on this build *and* over the
rebuilds (the chapter's own replicates and every matching record in ``records/spread/``).

A record keeps each replicate's headline numbers, not its translations, so the claim's own rule
(a paired bootstrap over the test sentences) cannot run on it. The rebuilds are read as Clark et
al. (2011) read optimiser runs: each replicate's difference ``a − b`` (paired: both systems of
one replicate share its seed or word alignment), their mean with a 95% Student t interval over
the replicates (:func:`pooled_difference`, ``n − 1`` degrees of freedom; the book's MERT seeds
are read with a t quantile too). It is the rebuilds' part of
:func:`rnnlib.stats.rebuilds_and_sentences` without its test-set part, which needs the outputs a
record does not keep: every replicate is scored on the same test sentences, so this part does
not cover their sampling; the claim's own check on this build does. The two are one claim judged
twice (:func:`rnnlib.verdicts.across_rebuilds`): their common verdict when they agree, else
inside the noise; a claim this build cannot measure (below its floor, or its control holding)
stays as the chapter judged it.

* :func:`pooled_difference` -- one comparison over the replicates (:func:`difference_label`: in
  words);
* :func:`rebuilds_part` -- the claim's tests over the replicates, with its control and floor;
* :func:`with_rebuilds` -- a chapter's claim judged on both (:func:`recorded_labels`: the
  replicates from records; :func:`rebuilds_read`: how many replicates that reads).

The rebuilds' control is the chapter's own for these claims (two identical systems, ``b − b``
on the same replicates), pooled the same way: it guards the arithmetic, and cannot hold; its
floor is the chapter's, on every replicate's value of every system a test reads. Replicates are
the independent units: a caller averages several records of one seed into one replicate. A
comparison with fewer than two replicates holding both systems (finite) is left out (named in
the note); with none left, the claim stays as the chapter judged it. Only a claim whose
comparison the records hold can be judged so: paper A's C-A-T1-1 reads +RNN against the
Baseline tuned on as long (equal tuning effort), which a ``phrase`` record holds from 76297a0
on (an older record holds +RNN − Baseline only, which carries the extra tuning: not pooled).

Deviations
----------
- Neither paper judges a claim over rebuilds: the book's own, for the spread a reader meets.
- Replicates from several machines are pooled as they are: the machine is part of the spread.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Collection, Sequence

import numpy as np

from .. import verdicts
from ..book.claims import ClaimCheck

#: one replicate: its label (``"seed 3, recorded 2026-11-30T02:19"``) and its headline numbers
Replicate = tuple[str, dict[str, float]]

#: what a replicate's label says when it was read from records (``"seed 2, recorded ..."``)
RECORDED = ", recorded "

#: what the control of the rebuilds' part reads
IDENTICAL_WHAT = "two identical systems on every replicate (b − b, pooled the same way)"


def _holds_both(v: dict[str, float], a: str, b: str) -> bool:
    """Whether a replicate's numbers ``v`` hold finite values of ``a`` and ``b``."""
    return a in v and b in v and math.isfinite(v[a]) and math.isfinite(v[b])


def pooled_difference(
    replicates: Sequence[Replicate], a: str, b: str
) -> tuple[float, float, float, int] | None:
    """``(mean, low, high, n)``: the mean over the ``n`` replicates that hold both ``a`` and
    ``b`` (finite) of their difference ``a − b``, with its 95% Student t interval
    (``mean ± t(0.975, n − 1) · sd / √n``); ``None`` with fewer than two such replicates."""
    from scipy.stats import t

    diffs = np.array([v[a] - v[b] for _, v in replicates if _holds_both(v, a, b)])
    n = len(diffs)
    if n < 2:
        return None
    mean = float(diffs.mean())
    half = float(t.ppf(0.975, n - 1) * diffs.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half, n


def difference_label(a: str, b: str) -> str:
    """``a − b`` in words: ``"x − y, All"`` for ``"x, All"`` and ``"y, All"``."""
    (an, _, asub), (bn, _, bsub) = a.rpartition(", "), b.rpartition(", ")
    return f"{an} − {bn}, {asub}" if an and bn and asub == bsub else f"{a} − {b}"


def rebuilds_part(
    replicates: Sequence[Replicate],
    tests: Sequence[tuple[str, str]],
    floor: float | None = None,
    unit: str = "BLEU",
    recorded: Collection[str] | None = None,
) -> tuple[verdicts.Check, list[str]] | None:
    """The claim's ``tests`` (``(a, b)``: ``a − b`` above 0, the names being headline numbers
    of the replicates) over ``replicates`` (:func:`pooled_difference`), controlled by the same
    test on ``b − b`` and floored at ``floor`` (``unit``) on every replicate's value of ``a``
    and ``b``. ``recorded``: the labels of the replicates read from records; a test that none
    of them holds is left out (the chapter judges its own replicates itself, on their outputs).
    Returns the check and the labels of the replicates it read (every replicate holding both
    systems of some test), or ``None`` when no test is left with two replicates."""

    def counted(a: str, b: str) -> bool:
        holding = [label for label, v in replicates if _holds_both(v, a, b)]
        return recorded is None or any(label in recorded for label in holding)

    rows, control, values, read = [], [], [], set()
    tests = [(a, b) for a, b in tests if counted(a, b)]
    skipped = [
        difference_label(a, b) for a, b in tests if pooled_difference(replicates, a, b) is None
    ]
    for a, b in tests:
        pooled = pooled_difference(replicates, a, b)
        if pooled is None:
            continue
        mean, low, high, n = pooled
        rows.append((f"{difference_label(a, b)} over {n} rebuilds", mean, low, high))
        held = [(label, v) for label, v in replicates if _holds_both(v, a, b)]
        same = pooled_difference(held, b, b)  # the same replicates, b in a's place
        control.append((f"{difference_label(b, b)} over {n} rebuilds", *same[:3]))
        for label, v in held:
            read.add(label)
            values += [(f"{label}: {a}", v[a]), (f"{label}: {b}", v[b])]
    if not rows:
        return None
    note = (
        "each replicate's difference (paired: one seed or word alignment), mean and 95% Student "
        "t interval over the replicates"
    )
    if skipped:
        note += f"; fewer than two replicates for {', '.join(skipped)}"
    check = verdicts.controlled(
        verdicts.intervals_above(rows, note=note),
        IDENTICAL_WHAT,
        verdicts.intervals_above(control),
    )
    if floor is not None:
        check = verdicts.floored(check, values, floor, unit, "every replicate, every system read")
    labels = [label for label, _ in replicates if label in read]
    return check, labels


def recorded_labels(replicates: Sequence[Replicate]) -> list[str]:
    """The labels of the replicates read from records (:data:`RECORDED` in the label)."""
    return [label for label, _ in replicates if RECORDED in label]


def rebuilds_read(replicates: Sequence[Replicate], tests: Sequence[tuple[str, str]]) -> int:
    """How many replicates the rebuilds' part of a claim reading ``tests`` reads
    (:func:`rebuilds_part` with the records of ``replicates``): 0 when no test is left, no
    record holding it."""
    part = rebuilds_part(replicates, tests, recorded=recorded_labels(replicates))
    return 0 if part is None else len(part[1])


def with_rebuilds(
    claim: ClaimCheck,
    replicates: Sequence[Replicate],
    tests: Sequence[tuple[str, str]],
    floor: float | None = None,
    unit: str = "BLEU",
    recorded: Collection[str] | None = None,
) -> ClaimCheck:
    """``claim`` (the chapter's check on this build) judged over the rebuilds as well
    (:func:`rebuilds_part`, ``recorded`` as there): both through
    :func:`rnnlib.verdicts.across_rebuilds` (the common verdict, else inside the noise), the
    replicates read named in the check's ``rebuilds``; ``claim`` as it is when no test is left
    with two replicates or when this build cannot measure it (its own verdict "not
    measurable": below its floor, its control holding, or not measurable by how it is built)."""
    if verdicts.evaluate(claim.check).verdict == verdicts.UNMEASURABLE:
        return claim
    part = rebuilds_part(replicates, tests, floor, unit, recorded)
    if part is None:
        return claim
    check, labels = part
    items = [("this build", claim.check), (f"over {len(labels)} rebuilds", check)]
    joined = verdicts.across_rebuilds(items, note=claim.check.note)
    said = f"pooled over {len(labels)}: {', '.join(labels)}"
    if claim.check.rebuilds:
        said = f"{claim.check.rebuilds}; {said}"
    return replace(claim, check=replace(joined, rebuilds=said))
