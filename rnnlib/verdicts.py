"""How a claim is judged: the rules that turn the numbers a claim rests on into a verdict.

A claim of either paper is checked as a :class:`Check`: a named *rule* and the *evidence* (plain
numbers) the rule reads. The rule, not the chapter, decides the verdict, and the verdict is one of
* ``holds`` -- the measured difference is on the claim's side beyond its noise;
* ``does not hold`` -- it is on the other side beyond the noise, or a deterministic measure
  misses the claim's threshold;
* ``inside the noise`` -- the difference is within its bootstrap interval or the spread of the
  seeds: never reported as holding;
* ``not measurable at this scale`` -- the evidence needed does not exist here (a reason says why),
  the measured system is below the claim's floor (unless a test above it refutes a claim about
  every system: see below), or the rule also holds on the claim's control;
* ``recorded (bookkeeping)`` -- a record the paper keeps (Table 2's learning statistics), not a
  finding.

**Controls and floors.** Every check a chapter records carries a *control* (:func:`controlled`):
the same rule applied to evidence from a system for which the claim must not hold (the untrained
network, shuffled alignment rows, two identical systems, a bag of words). When the control's
verdict is "holds", the rule cannot tell the claim from its absence, and the claim is "not
measurable", naming the control. A claim about a model's behaviour may carry a *floor*
(:func:`floored`): below it (say under 3 BLEU in a bucket the claim reads) the verdict is "not
measurable at this scale", with the floor and the measured values; where the floor names which
tests read which value (``reads``, for a claim about every one of several systems), the tests
above it are still judged, and one that fails (its control on the same tests not holding)
refutes the claim. A claim that needs two things at once (each row at least 3 BLEU, and the
language model a row adds at least as good as the one it joins) carries a floor for each
(:func:`floored` with ``add=True``): it is measurable only above all of them, and the verdict
names every value under its floor. :func:`rnnlib.book.claims.record` refuses a
check without a control (only :func:`not_measurable` and :func:`bookkeeping` judge nothing and
need none). A NaN is never evidence: every rule turns it into "not measurable".

Rules (each a function returning a :class:`Check`):

* :func:`intervals_above` -- differences with 95% intervals (paired bootstrap): holds when every
  interval lies above 0, does not hold when one lies below 0, else inside the noise;
* :func:`seeds_above` -- two groups of runs (MERT seeds): holds when the difference of the means
  exceeds its standard error times the t quantile of Welch's degrees of freedom (95%, two-sided:
  about 2.8 for 3 runs against 3), does not hold below minus that, else inside the noise; with
  fewer than two runs per group the noise is unknown and the claim is not measurable;
* :func:`within_margin` -- a null claim ("does not improve") as equivalence: holds when the
  interval lies inside a stated margin around 0;
* :func:`at_least` / :func:`at_most` -- a measured value against a threshold the claim implies
  (for example "largely monotonic": at least 70% of rows), with an optional interval: the
  verdict is inside the noise when the interval straddles the threshold;
* :func:`all_true` -- a set of named yes/no observations (for example "No UNK > All for every
  system"): holds when every one is yes, does not hold when one is no; with no observation, or
  a NaN in place of one (and no "no"), not measurable;
* :func:`across_rebuilds` -- one claim's check on each of several rebuilds (word alignments,
  training seeds), each with its floor and control: the common verdict when they agree, else
  inside the noise;
* :func:`bookkeeping` -- named records that must exist;
* :func:`not_measurable` -- with the reason.

A translation system under :data:`BLEU_FLOOR` BLEU is below the floor of every claim about its
translations. Recording a verdict, the ledger and the results page are :mod:`rnnlib.book.claims`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Iterable, Sequence

import numpy as np

from .stats import seeds_difference, t_quantile

HOLDS = "holds"
FAILS = "does not hold"
NOISE = "inside the noise"
UNMEASURABLE = "not measurable at this scale"
RECORDED = "recorded (bookkeeping)"
VERDICTS = (HOLDS, FAILS, NOISE, UNMEASURABLE, RECORDED)

#: the floor of every claim about a system's translations, in both papers: a system (in every
#: column or length bucket a claim reads) must score at least this much BLEU for the claim to be
#: measurable. Below it a system shares little beyond chance n-grams with the references, so
#: what it does or fails to do is no behaviour of a translator.
BLEU_FLOOR = 3.0


@dataclass
class Check:
    """A rule and the evidence it reads; :func:`evaluate` turns it into a :class:`Verdict`.

    ``control`` is the same rule on evidence for which the claim must *not* hold (see
    :func:`controlled`); ``floor`` the level the measured system must reach for the claim to be
    measurable at all (see :func:`floored`); ``rebuilds`` which rebuilds the verdict reads, in
    words (the rebuild spread: word alignments, training seeds; empty: this build's only)."""

    rule: str
    evidence: dict[str, Any]
    note: str = ""  # what the evidence is, in words (shown beside the verdict)
    control: Control | None = None
    floor: Floor | None = None
    rebuilds: str = ""
    #: floors beside ``floor`` (:func:`floored` with ``add=True``): a claim that needs two
    #: things at once (each row at least 3 BLEU, and the language model it adds at least as good
    #: as the one it is set against) is measurable only above every one of them
    more_floors: list = field(default_factory=list)

    @property
    def floors(self) -> list[Floor]:
        """Every floor of the check: ``floor`` first, then ``more_floors``."""
        return ([self.floor] if self.floor is not None else []) + list(self.more_floors)

    @classmethod
    def from_dict(cls, d: dict) -> Check:
        """The inverse of :func:`dataclasses.asdict` (a record read back from JSON)."""
        control = d.get("control")
        floor = d.get("floor")
        return cls(
            d["rule"],
            d.get("evidence") or {},
            d.get("note", ""),
            Control(control["what"], Check.from_dict(control["check"])) if control else None,
            Floor(**floor) if floor else None,
            d.get("rebuilds", ""),
            [Floor(**f) for f in d.get("more_floors") or []],
        )


@dataclass
class Control:
    """What the claim's rule says on a system for which the claim must not hold: ``what`` names
    that system (the untrained network, shuffled alignment rows, two identical systems, ...),
    ``check`` is the same rule on its evidence."""

    what: str
    check: Check


@dataclass
class Floor:
    """The claim is about a model's behaviour, measurable only where the model is above ``floor``
    (in ``unit``) in every ``(label, value)`` of ``values``: what it reads (``what``)."""

    values: list
    floor: float
    unit: str
    what: str = ""
    #: for a claim about every one of several systems (or buckets): per value of ``values``, the
    #: labels of the rule's tests (or observations) that read it; ``None``: every test reads every
    #: value. With it, a test that reads only values above the floor is judged even when another
    #: value is below it (:func:`evaluate`), so a measurable counterexample refutes the claim
    reads: list | None = None


@dataclass
class Verdict:
    verdict: str
    reason: str  # the numbers that decided it, in words
    control: str | None = None  # the control's verdict (None: the check has no control)
    control_reason: str = ""


#: rules that judge nothing, and so need no control
NO_CONTROL_RULES = ("not_measurable", "bookkeeping")
#: rules that claim every one of their tests (observations) holds, so that one test that fails
#: refutes the claim whatever the others say: a floor may name which values each test reads
#: (:func:`floored`'s ``reads``)
SEPARABLE_RULES = ("intervals_above", "all_true", "within_margin")
#: the evidence field holding each separable rule's labelled items
_ITEMS = {"intervals_above": "tests", "within_margin": "tests", "all_true": "observations"}


def _items_of(check: Check) -> list[str]:
    """The labels of a separable check's tests (or observations)."""
    return [item[0] for item in check.evidence[_ITEMS[check.rule]]]


def _restricted(check: Check, labels: set[str]) -> Check:
    """``check`` with only the tests (observations) labelled ``labels``."""
    field_ = _ITEMS[check.rule]
    kept = [item for item in check.evidence[field_] if item[0] in labels]
    return replace(
        check, evidence={**check.evidence, field_: kept}, control=None, floor=None, more_floors=[]
    )


def controlled(check: Check, what: str, control: Check) -> Check:
    """``check`` with its control: ``control`` is the same rule on evidence from ``what``, a
    system for which the claim must not hold. When the control's verdict is "holds", the rule
    cannot tell the claim from its absence and :func:`evaluate` makes the claim's verdict "not
    measurable", naming the control."""
    if control.rule != check.rule:
        raise ValueError(
            f"a control applies the claim's own rule: {control.rule!r} is not {check.rule!r}"
        )
    return replace(check, control=Control(str(what), control))


def floored(
    check: Check,
    values: Iterable[tuple[str, float]],
    floor: float,
    unit: str,
    what: str = "",
    reads: Sequence[Sequence[str]] | None = None,
    add: bool = False,
) -> Check:
    """``check``, measurable only where every ``(label, value)`` of ``values`` reaches ``floor``
    (for example at least 3 BLEU in every bucket the claim reads); below it (or with no value)
    :func:`evaluate` says "not measurable at this scale" with the floor and the measured value.

    ``reads``: for a claim that every one of its tests holds (rules :data:`SEPARABLE_RULES`),
    per value the labels of the tests that read it. Then the tests that read only values above
    the floor are still judged: one that fails refutes the claim ("for every system" is refuted
    by one measurable system), and otherwise the verdict stays "not measurable", saying what
    the rule found above the floor.

    ``add``: keep the floor ``check`` already has and add this one (:attr:`Check.more_floors`):
    the claim is measurable only above both. Its ``reads`` may then name only some tests: the
    others are guarded by the check's first floor."""
    vals = [[str(l), None if _is_nan(v) or v is None else float(v)] for l, v in values]
    links = None
    if reads is not None:
        links = [[str(t) for t in r] for r in reads]
        if len(links) != len(vals):
            raise ValueError(
                f"floored: {len(links)} lists of tests read for {len(vals)} floored values"
            )
        if check.rule not in SEPARABLE_RULES:
            raise ValueError(
                f"floored: reads applies to the rules {SEPARABLE_RULES}, not {check.rule!r}"
            )
        known = set(_items_of(check))
        named = {t for r in links for t in r}
        if named - known:
            raise ValueError(f"floored: reads names tests the check lacks: {sorted(named - known)}")
        if known - named and not (add and check.floor is not None):  # judged unfloored else
            raise ValueError(
                f"floored: no floored value is read by the tests {sorted(known - named)}"
            )
    new = Floor(vals, float(floor), str(unit), str(what), links)
    if add and check.floor is not None:
        return replace(check, more_floors=[*check.more_floors, new])
    return replace(check, floor=new)


# -- rules -----------------------------------------------------------------------------------------
def intervals_above(
    tests: Iterable[tuple[str, float, float, float]], note: str = "", rebuilds: str = ""
) -> Check:
    """``tests``: ``(label, difference, low, high)`` with a 95% interval; the claim is that every
    difference is above 0. ``rebuilds``: which rebuilds the intervals pool, in words (empty:
    none, this build's only)."""
    return Check(
        "intervals_above",
        {"tests": [[str(l), float(d), float(lo), float(hi)] for l, d, lo, hi in tests]},
        note,
        rebuilds=rebuilds,
    )


def seeds_above(a: Sequence[float], b: Sequence[float], label: str, note: str = "") -> Check:
    """Two groups of runs (``a`` the claim's better system, ``b`` the other); ``label`` names the
    difference, e.g. "+RNN − Baseline, test BLEU"."""
    return Check(
        "seeds_above",
        {"a": [float(x) for x in a], "b": [float(x) for x in b], "label": label},
        note,
    )


def at_least(
    value: float,
    threshold: float,
    label: str,
    low: float | None = None,
    high: float | None = None,
    note: str = "",
) -> Check:
    """``value`` (with an optional interval ``[low, high]``) must be at least ``threshold``."""
    return Check(
        "at_least",
        {
            "value": float(value),
            "threshold": float(threshold),
            "label": label,
            "low": _opt(low),
            "high": _opt(high),
        },
        note,
    )


def at_most(
    value: float,
    threshold: float,
    label: str,
    low: float | None = None,
    high: float | None = None,
    note: str = "",
) -> Check:
    """``value`` (with an optional interval ``[low, high]``) must be at most ``threshold``."""
    return Check(
        "at_most",
        {
            "value": float(value),
            "threshold": float(threshold),
            "label": label,
            "low": _opt(low),
            "high": _opt(high),
        },
        note,
    )


def all_true(observations: Iterable[tuple[str, bool]], note: str = "") -> Check:
    """Named yes/no observations the claim needs all of (deterministic measures, no noise model).
    A NaN in place of a yes/no (a measure that has no value) is kept as ``None``: not observed."""
    return Check(
        "all_true",
        {"observations": [[str(l), None if _is_nan(v) else bool(v)] for l, v in observations]},
        note,
    )


def within_margin(
    tests: Iterable[tuple[str, float, float, float]], margin: float, side: str = "both", note=""
) -> Check:
    """A null claim as equivalence: ``tests`` are ``(label, difference, low, high)`` with a 95%
    interval, ``margin`` the size of a difference that would count. ``side="both"``: holds when
    every interval lies inside ``[-margin, margin]``, does not hold when one lies wholly outside
    it; ``side="above"`` ("does not improve"): holds when every upper end is at most ``margin``,
    does not hold when a lower end exceeds it. Else inside the noise."""
    if side not in ("both", "above"):
        raise ValueError(f"within_margin: side is 'both' or 'above', not {side!r}")
    return Check(
        "within_margin",
        {
            "tests": [[str(l), float(d), float(lo), float(hi)] for l, d, lo, hi in tests],
            "margin": float(margin),
            "side": side,
        },
        note,
    )


def bookkeeping(items: Iterable[tuple[str, bool]], note: str = "") -> Check:
    """A record the paper keeps (not a finding): ``items`` are ``(what, present)``; the verdict
    is "recorded" when every item is present, "does not hold" when one is missing."""
    return Check("bookkeeping", {"items": [[str(l), bool(v)] for l, v in items]}, note)


def not_measurable(reason: str) -> Check:
    return Check("not_measurable", {"reason": reason})


def across_rebuilds(checks: Iterable[tuple[str, Check]], note: str = "") -> Check:
    """One claim judged on each of several rebuilds (independent word alignments, training
    seeds): ``checks`` is ``(label, check)`` per rebuild, each with its own floor and control.
    Its control is the same rule over the rebuilds' controls (every check needs one). The
    verdict: each check's (:func:`evaluate`) when all agree, else "inside the noise": a verdict
    that a rebuild flips is the rebuild's noise, not a finding (the rebuild spread)."""
    checks = list(checks)
    missing = [label for label, c in checks if c.control is None and c.rule != "not_measurable"]
    if missing:
        raise ValueError(f"across_rebuilds: the check of {', '.join(missing)} has no control")

    def rule(items: list[tuple[str, Check]]) -> Check:
        evidence = {"checks": [[k, asdict(c)] for k, c in items]}
        judged = f"judged on each of {len(items)}: {', '.join(k for k, _ in items)}"
        return Check("across_rebuilds", evidence, note, rebuilds=judged)

    controls = [(k, c.control.check if c.control else c) for k, c in checks]
    return controlled(rule(checks), "the same rule on every rebuild's control", rule(controls))


def all_parts(parts: Iterable[tuple[str, Check]], note: str = "") -> Check:
    """A claim that says several things at once (B Table 1: "ahead on All, and comparable on No
    UNK"): ``parts`` is ``(label, check)`` per part, each with its own rule, control and floor.
    Its control is the same rule over the parts' controls (every part needs one). The verdict:
    "does not hold" when a part does not hold; else "not measurable" when a part is not
    measurable; else "inside the noise" when a part is; else "holds"."""
    parts = list(parts)
    missing = [label for label, c in parts if c.control is None and c.rule != "not_measurable"]
    if missing:
        raise ValueError(f"all_parts: the check of {', '.join(missing)} has no control")

    def rule(items: list[tuple[str, Check]]) -> Check:
        return Check("all_parts", {"checks": [[k, asdict(c)] for k, c in items]}, note)

    controls = [(k, c.control.check if c.control else c) for k, c in parts]
    return controlled(rule(parts), "the same rule on every part's control", rule(controls))


def _is_nan(x) -> bool:
    return isinstance(x, (float, np.floating)) and math.isnan(x)


def _opt(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _fmt(x: float) -> str:
    return f"{x:+.2f}"


def _nan_tests(tests) -> list[str]:
    return [t[0] for t in tests if any(not math.isfinite(x) for x in t[1:])]


def _intervals_above(ev: dict) -> Verdict:
    tests = ev["tests"]
    if not tests:
        return Verdict(UNMEASURABLE, "no comparison was made")
    missing = _nan_tests(tests)
    if missing:  # a NaN is never evidence, on either side
        return Verdict(UNMEASURABLE, "no value (NaN) for " + ", ".join(missing))
    parts = [f"{label}: {_fmt(d)} [{lo:.2f}, {hi:.2f}]" for label, d, lo, hi in tests]
    if any(hi < 0 for _, _, _, hi in tests):
        return Verdict(FAILS, "; ".join(parts))
    if all(lo > 0 for _, _, lo, _ in tests):
        return Verdict(HOLDS, "; ".join(parts))
    return Verdict(NOISE, "; ".join(parts) + " (an interval includes 0)")


def _seeds_above(ev: dict) -> Verdict:
    a, b, label = ev["a"], ev["b"], ev["label"]
    if len(a) < 2 or len(b) < 2:
        return Verdict(
            UNMEASURABLE, f"{label}: fewer than two runs per system, so no noise estimate"
        )
    if not all(math.isfinite(x) for x in [*a, *b]):
        return Verdict(UNMEASURABLE, f"{label}: a run has no value (NaN)")
    diff, se = seeds_difference(a, b)
    q = t_quantile(a, b)
    text = (
        f"{label}: {_fmt(diff)} (mean of {len(a)} and {len(b)} runs; standard error {se:.2f}, "
        f"t quantile {q:.2f})"
    )
    if diff > q * se:
        return Verdict(HOLDS, text)
    if diff < -q * se:
        return Verdict(FAILS, text)
    return Verdict(NOISE, text + ": within the 95% t interval")


def _threshold(ev: dict, above: bool) -> Verdict:
    v, t, label, lo, hi = ev["value"], ev["threshold"], ev["label"], ev.get("low"), ev.get("high")
    sign = "≥" if above else "≤"
    text = (
        f"{label}: {v:.3g}"
        + (f" [{lo:.3g}, {hi:.3g}]" if lo is not None and hi is not None else "")
        + f" against {sign} {t:.3g}"
    )
    if not math.isfinite(v):
        return Verdict(UNMEASURABLE, f"{label}: no value")
    if (lo is None) != (hi is None):
        return Verdict(UNMEASURABLE, f"{label}: one end of its interval has no value")
    ok = v >= t if above else v <= t
    if lo is not None and hi is not None and lo <= t <= hi:
        return Verdict(NOISE, text + " (the interval includes the threshold)")
    return Verdict(HOLDS if ok else FAILS, text)


def _all_true(ev: dict) -> Verdict:
    obs = ev["observations"]
    if not obs:
        return Verdict(UNMEASURABLE, "nothing was observed")
    failed = [label for label, ok in obs if ok is not None and not ok]
    if failed:
        return Verdict(FAILS, "not for " + ", ".join(failed))
    unknown = [label for label, ok in obs if ok is None]
    if unknown:  # a measure without a value is no evidence for the claim
        return Verdict(UNMEASURABLE, "no value for " + ", ".join(unknown))
    return Verdict(HOLDS, "for all of " + ", ".join(label for label, _ in obs))


def _within_margin(ev: dict) -> Verdict:
    tests, m, side = ev["tests"], ev["margin"], ev["side"]
    if not tests:
        return Verdict(UNMEASURABLE, "no comparison was made")
    missing = _nan_tests(tests)
    if missing:
        return Verdict(UNMEASURABLE, "no value (NaN) for " + ", ".join(missing))
    text = "; ".join(f"{label}: {_fmt(d)} [{lo:.2f}, {hi:.2f}]" for label, d, lo, hi in tests)
    # an interval wider than the margin allows could not lie inside it even around a difference
    # of exactly 0: the data are too few to show equivalence at this margin, whatever the system
    room = m if side == "above" else 2 * m
    wide = [label for label, _, lo, hi in tests if (hi - lo) / (2 if side == "above" else 1) > room]
    why = (
        f" (too few data for the margin: the interval of {', '.join(wide)} is wider than it "
        "would be allowed to be around a difference of 0)"
        if wide
        else " (an interval reaches past the margin)"
    )
    if side == "above":
        text += f" against a margin of +{m:.2f}"
        if all(hi <= m for *_, hi in tests):
            return Verdict(HOLDS, text)
        if any(lo > m for _, _, lo, _ in tests):
            return Verdict(FAILS, text)
        return Verdict(NOISE, text + why)
    text += f" against a margin of ±{m:.2f}"
    if all(-m <= lo and hi <= m for _, _, lo, hi in tests):
        return Verdict(HOLDS, text)
    if any(lo > m or hi < -m for _, _, lo, hi in tests):
        return Verdict(FAILS, text)
    return Verdict(NOISE, text + why)


def _bookkeeping(ev: dict) -> Verdict:
    items = ev["items"]
    missing = [label for label, ok in items if not ok]
    if not items or missing:
        return Verdict(FAILS, "not recorded: " + (", ".join(missing) or "anything"))
    return Verdict(RECORDED, "recorded: " + ", ".join(label for label, _ in items))


def _across_rebuilds(ev: dict) -> Verdict:
    judged = [(label, evaluate(Check.from_dict(c))) for label, c in ev["checks"]]
    if not judged:
        return Verdict(UNMEASURABLE, "no rebuild was judged")
    listing = "; ".join(f"{label}: {v.verdict} ({v.reason})" for label, v in judged)
    kinds = {v.verdict for _, v in judged}
    if len(kinds) == 1:
        return Verdict(kinds.pop(), f"the same on each of {len(judged)} rebuilds: {listing}")
    return Verdict(NOISE, f"the verdict changes between rebuilds: {listing}")


def _all_parts(ev: dict) -> Verdict:
    judged = [(label, evaluate(Check.from_dict(c))) for label, c in ev["checks"]]
    if not judged:
        return Verdict(UNMEASURABLE, "no part was judged")
    listing = "; ".join(f"{label}: {v.verdict} ({v.reason})" for label, v in judged)
    kinds = {v.verdict for _, v in judged}
    for verdict in (FAILS, UNMEASURABLE, NOISE):
        if verdict in kinds:
            return Verdict(verdict, f"{verdict} in a part: {listing}")
    return Verdict(HOLDS, f"every part holds: {listing}")


RULES = {
    "all_parts": _all_parts,
    "across_rebuilds": _across_rebuilds,
    "within_margin": _within_margin,
    "bookkeeping": _bookkeeping,
    "intervals_above": _intervals_above,
    "seeds_above": _seeds_above,
    "at_least": lambda ev: _threshold(ev, True),
    "at_most": lambda ev: _threshold(ev, False),
    "all_true": _all_true,
    "not_measurable": lambda ev: Verdict(UNMEASURABLE, ev["reason"]),
}


def _rule(check: Check) -> Verdict:
    try:
        rule = RULES[check.rule]
    except KeyError:
        raise ValueError(
            f"unknown claim rule {check.rule!r}; the rules are {', '.join(RULES)}"
        ) from None
    return rule(check.evidence)


def _below_floor(floor: Floor) -> str:
    """The floor's failures in words ("" when every value reaches it)."""
    low = [
        f"{label} {'no value' if v is None else f'{v:.3g}'}"
        for label, v in floor.values
        if v is None or not math.isfinite(v) or v < floor.floor
    ]
    if not floor.values:
        low = ["no value"]
    if not low:
        return ""
    what = f" in {floor.what}" if floor.what else ""
    return f"below the floor of {floor.floor:g} {floor.unit}{what}: " + "; ".join(low)


def _finite(item) -> bool:
    """Whether a test (or observation) of a separable rule has every value it needs."""
    return all(x is not None and math.isfinite(x) for x in item[1:])


def _above_floor(check: Check) -> tuple[Verdict, Verdict | None] | None:
    """The rule's verdict on the tests of ``check`` that read only values at or above its floors
    (:func:`floored`'s ``reads``) and have a value, and the control's on its tests at the same
    positions (``None``: no control); ``None`` when a floor that is not met names no reads, or
    no test is left."""
    if check.rule not in SEPARABLE_RULES:
        return None
    under = set()
    for floor in check.floors:
        low = [v is None or not math.isfinite(v) or v < floor.floor for _, v in floor.values]
        if not any(low) and floor.values:
            continue
        if floor.reads is None or not floor.values:
            return None
        for is_low, tests in zip(low, floor.reads):
            if is_low:
                under.update(tests)
    items = check.evidence[_ITEMS[check.rule]]
    keep = [k for k, item in enumerate(items) if item[0] not in under and _finite(item)]
    if not keep:
        return None
    ctrl = None
    if check.control is not None:
        c = check.control.check
        c_items = c.evidence.get(_ITEMS.get(c.rule, ""), [])
        if c.rule == check.rule and len(c_items) == len(items):  # paired by position
            ctrl = _rule(_restricted(c, {c_items[k][0] for k in keep}))
        else:
            ctrl = _rule(c)
    return _rule(_restricted(check, {items[k][0] for k in keep})), ctrl


def evaluate(check: Check) -> Verdict:
    """The verdict of ``check``'s rule on its evidence, after its floor and against its control.

    * Below the floor (:func:`floored`): "not measurable at this scale", with the floor and the
      values under it. When the floor names the tests each value is read by (``reads``), the
      tests that read only values above it are judged on their own: if they fail, the claim
      fails (one measurable counterexample refutes a claim about every system); else it stays
      "not measurable", with what they said.
    * The control (:func:`controlled`) is evaluated by the same rule; when it holds, the rule
      cannot tell the claim from its absence: "not measurable at this scale", naming the
      control, with what the rule said on the evidence.
    * Otherwise the rule's verdict. The control's verdict and reason are returned beside it."""
    ctrl = _rule(check.control.check) if check.control else None
    extra = {} if ctrl is None else {"control": ctrl.verdict, "control_reason": ctrl.reason}
    main = _rule(check)
    if check.floors and check.rule not in NO_CONTROL_RULES:
        low = "; ".join(x for x in map(_below_floor, check.floors) if x)
        if low:
            judged = _above_floor(check)
            if judged is None:
                return Verdict(UNMEASURABLE, f"{low} (the rule would say {main.verdict})", **extra)
            above, above_ctrl = judged
            blind = above_ctrl is not None and above_ctrl.verdict == HOLDS
            if above.verdict == FAILS and not blind:
                return Verdict(
                    FAILS,
                    f"{above.reason}: refuted above the floor, whatever the tests under it say "
                    f"({low})",
                    **extra,
                )
            why = (
                f"; the rule also holds on the control there ({check.control.what}: "
                f"{above_ctrl.reason}), so it cannot tell the claim from its absence"
                if blind
                else ""
            )
            return Verdict(
                UNMEASURABLE,
                f"{low} (the rule would say {main.verdict}; on the tests above the floor alone "
                f"it says {above.verdict}: {above.reason}{why})",
                **extra,
            )
    if ctrl is not None and ctrl.verdict == HOLDS and main.verdict in (HOLDS, FAILS, NOISE):
        return Verdict(
            UNMEASURABLE,
            f"the rule also holds on the control ({check.control.what}: {ctrl.reason}), so it "
            f"cannot tell the claim from its absence; on the evidence it says "
            f"{main.verdict} ({main.reason})",
            **extra,
        )
    return Verdict(main.verdict, main.reason, **extra)
