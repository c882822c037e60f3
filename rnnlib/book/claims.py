"""The papers' claims as executable checks: each verdict is computed from the numbers it rests on.

Every claim of both papers that the book tests has an ID (``C-A-T1-1`` ... ``C-B-T3-1``; the
list is :data:`CLAIMS`, with a one-line statement of each, paraphrased from the papers). A
chapter that measures a claim records it with :func:`record`::

    record(
        ch, "C-B-T1-1", intervals_above([("RNNsearch-50 − RNNencdec-50, All", 5.1, 4.6, 5.6), ...])
    )

The second argument is a :class:`Check`: a named *rule* and the *evidence* (plain numbers) the
rule reads. The rule, not the chapter, decides the verdict, and the verdict is one of

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
refutes the claim. :func:`record` refuses a
check without a control (only :func:`not_measurable` and :func:`bookkeeping` judge nothing and
need none). A NaN is never evidence: every rule turns it into "not measurable".

:func:`record` glues the verdict as ``claim-<ID>`` (Markdown, for the chapter's prose) and appends
the check to ``<results>/claims/<chapter>.json`` (beside the build's ``figures/``), naming the
build it comes from (:func:`current_build`: its id, start time and commit, which
:mod:`rnnlib.book.execute` gives the chapter's kernel). The results chapter reads every chapter's
file with :func:`load_checks` and evaluates each rule again with :func:`evaluate` at build time:
edit a number of the evidence and the verdict changes.

Stale records: before a chapter executes, :func:`reconcile` deletes its own file (a rerun that
records fewer claims, or none, leaves nothing of the run before) and the files of chapters the
book no longer has. ``rnnlib run`` of one chapter so keeps the other chapters' records (each
naming its build); ``rnnlib build`` runs every chapter, so each record it leaves is its own.

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
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..stats import seeds_difference, t_quantile

HOLDS = "holds"
FAILS = "does not hold"
NOISE = "inside the noise"
UNMEASURABLE = "not measurable at this scale"
RECORDED = "recorded (bookkeeping)"
VERDICTS = (HOLDS, FAILS, NOISE, UNMEASURABLE, RECORDED)

# ID -> (paper, item, statement). Statements paraphrase the papers (inventory of the claims:
# Reading the papers); the checks that operationalise them are in the chapters named in CHAPTER.
CLAIMS: dict[str, tuple[str, str, str]] = {
    "C-A-T1-1": (
        "A",
        "Table 1",
        "The RNN Encoder–Decoder's phrase score, one more log-linear feature with the weights "
        "retuned, raises BLEU over the baseline on dev and test.",
    ),
    "C-A-T1-2": (
        "A",
        "Table 1",
        "The neural LM (CSLM) together with the RNN score gives the best test BLEU; CSLM+RNN "
        "beats RNN alone on dev and test.",
    ),
    "C-A-T1-3": ("A", "Table 1", "The word penalty does not improve test BLEU."),
    "C-A-T1-4": (
        "A",
        "Table 1",
        "The gains of the neural features are modest (under 2 BLEU); on test, "
        "Baseline < RNN < CSLM+RNN.",
    ),
    "C-A-F3-1": ("A", "Figure 3", "RNN and TM scores of phrase pairs are only weakly correlated."),
    "C-A-F3-2": (
        "A",
        "Figure 3",
        "Many pairs are scored alike by both models, as many radically differently.",
    ),
    "C-A-F3-3": (
        "A",
        "Figure 3",
        "The disagreement comes from training on unique pairs: the RNN score follows the "
        "pair's frequency less than the TM score does.",
    ),
    "C-A-T2-1": (
        "A",
        "Table 2",
        "For long source phrases the RNN's best targets are closer to literal translations; "
        "the TM's include garbage, especially for rare sources.",
    ),
    "C-A-T2-2": ("A", "Table 2", "The RNN Encoder–Decoder prefers shorter target phrases."),
    "C-A-T2-3": (
        "A",
        "Table 2",
        "TM and RNN differ more for rare long phrases than for frequent ones.",
    ),
    "C-A-T3-1": (
        "A",
        "Table 3",
        "Samples from the decoder are well-formed phrases; the most frequent sample is "
        "typically a correct translation.",
    ),
    "C-A-T3-2": (
        "A",
        "Table 3",
        "The generated phrases do not overlap completely with the phrase table's targets.",
    ),
    "C-A-F4-1": ("A", "Figures 4, 6", "Semantically similar words cluster in the embedding space."),
    "C-A-F5-1": (
        "A",
        "Figures 5, 7",
        "The phrase code c captures semantics: phrases of the same meaning cluster.",
    ),
    "C-A-F5-2": (
        "A",
        "Figures 5, 7",
        "The phrase code c captures syntax: phrases of the same pattern cluster.",
    ),
    "C-A-GRU-1": (
        "A",
        "§2.3",
        "Gated units are crucial: plain tanh units of the same size give no meaningful results.",
    ),
    "C-A-GRU-2": (
        "A",
        "§2.3",
        "Units with often active reset gates capture short-term dependencies, units with "
        "active update gates long-term ones.",
    ),
    "C-B-T1-1": (
        "B",
        "Table 1",
        "RNNsearch beats RNNencdec trained on the same sentences (-30 and -50), All and No UNK.",
    ),
    "C-B-T1-2": ("B", "Table 1", "RNNsearch-30 beats even RNNencdec-50, on both columns."),
    "C-B-T1-3": ("B", "Table 1", "For each architecture the -50 model beats the -30 model."),
    "C-B-T1-4": ("B", "Table 1", "Every system scores higher on No UNK than on All."),
    "C-B-T1-5": ("B", "Table 1", "Training longer (RNNsearch-50⋆) improves over RNNsearch-50."),
    "C-B-T1-6": (
        "B",
        "Table 1",
        "The phrase-based system beats every network on All; on No UNK the best RNNsearch "
        "comes close: the gap is much smaller there.",
    ),
    "C-B-T2-1": (
        "B",
        "Table 2",
        "At equal training time RNNsearch reaches a lower dev NLL than RNNencdec.",
    ),
    "C-B-T2-2": ("B", "Table 2", "Training longer lowers the dev NLL (RNNsearch-50⋆)."),
    "C-B-T2-3": ("B", "Table 2", "An RNNsearch update costs more time than an RNNencdec update."),
    "C-B-T2-4": (
        "B",
        "Table 2",
        "The learning statistics (updates, epochs, hours, hardware, train and dev NLL) are "
        "recorded for every model.",
    ),
    "C-B-F2-1": ("B", "Figure 2", "RNNencdec's BLEU drops as the sentences get longer."),
    "C-B-F2-2": (
        "B",
        "Figure 2",
        "RNNsearch degrades much less than RNNencdec as the sentences get longer (each "
        "relative to its own BLEU on the shortest sentences).",
    ),
    "C-B-F2-3": ("B", "Figure 2", "RNNsearch-50 shows no deterioration on the longest sentences."),
    "C-B-F2-4": ("B", "Figure 2", "RNNsearch is ahead of RNNencdec at every length."),
    "C-B-F3-1": ("B", "Figure 3", "The alignments are largely monotonic."),
    "C-B-F3-2": (
        "B",
        "Figure 3",
        "There are local reorderings, such as adjective–noun inversions.",
    ),
    "C-B-F3-3": (
        "B",
        "Figure 3",
        "Soft alignment spreads weight over several source words where needed.",
    ),
    "C-B-F3-4": (
        "B",
        "Figure 3",
        "Each row of weights is a distribution; the end of the translation attends to the "
        "source's end.",
    ),
    "C-B-T3-1": (
        "B",
        "Table 3",
        "On long sentences RNNencdec-50 drifts from the meaning; RNNsearch-50 keeps it.",
    ),
}


@dataclass
class Check:
    """A rule and the evidence it reads; :func:`evaluate` turns it into a :class:`Verdict`.

    ``control`` is the same rule on evidence for which the claim must *not* hold (see
    :func:`controlled`); ``floor`` the level the measured system must reach for the claim to be
    measurable at all (see :func:`floored`); ``rebuilds`` which rebuilds the verdict reads, in
    words (issue 28: word alignments, training seeds; empty: this build's only)."""

    rule: str
    evidence: dict[str, Any]
    note: str = ""  # what the evidence is, in words (shown beside the verdict)
    control: Control | None = None
    floor: Floor | None = None
    rebuilds: str = ""

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


@dataclass
class Recorded:
    """A check as a chapter recorded it (one entry of ``claims/<chapter>.json``)."""

    claim: str
    chapter: str
    profile: str
    config_hash: str
    check: Check
    verdict: Verdict = field(default=None)  # as evaluated when the chapter ran
    build: dict | None = None  # the build that ran the chapter (current_build); None: outside one


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
    return replace(check, evidence={**check.evidence, field_: kept}, control=None, floor=None)


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
) -> Check:
    """``check``, measurable only where every ``(label, value)`` of ``values`` reaches ``floor``
    (for example at least 3 BLEU in every bucket the claim reads); below it (or with no value)
    :func:`evaluate` says "not measurable at this scale" with the floor and the measured value.

    ``reads``: for a claim that every one of its tests holds (rules :data:`SEPARABLE_RULES`),
    per value the labels of the tests that read it. Then the tests that read only values above
    the floor are still judged: one that fails refutes the claim ("for every system" is refuted
    by one measurable system), and otherwise the verdict stays "not measurable", saying what
    the rule found above the floor."""
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
        if known - named:  # a test no floored value guards would be judged unfloored
            raise ValueError(
                f"floored: no floored value is read by the tests {sorted(known - named)}"
            )
    return replace(check, floor=Floor(vals, float(floor), str(unit), str(what), links))


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
    that a rebuild flips is the rebuild's noise, not a finding (issue 28)."""
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


RULES = {
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
    """The rule's verdict on the tests of ``check`` that read only values at or above its floor
    (:func:`floored`'s ``reads``) and have a value, and the control's on its tests at the same
    positions (``None``: no control); ``None`` when the floor names no reads or no test is
    left."""
    floor = check.floor
    if floor.reads is None or check.rule not in SEPARABLE_RULES:
        return None
    under = set()
    for (_, v), tests in zip(floor.values, floor.reads):
        if v is None or not math.isfinite(v) or v < floor.floor:
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
    if check.floor is not None and check.rule not in NO_CONTROL_RULES:
        low = _below_floor(check.floor)
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


# -- recording and loading -------------------------------------------------------------------------
def results_dir(ch) -> Path:
    """Where a chapter's records go: ``$RNNLIB_RESULTS`` or ``results/`` beside its figures
    folder."""
    return Path(os.environ.get("RNNLIB_RESULTS") or Path(ch.figures_dir).parent / "results")


#: the environment variable through which :mod:`rnnlib.book.execute` names the build to a kernel
BUILD_ENV = "RNNLIB_BUILD"


def current_build() -> dict | None:
    """The build running this chapter, ``{"id", "started", "commit"}`` as ``$RNNLIB_BUILD``
    gives it (JSON), or ``None`` outside a build (a notebook run by hand)."""
    raw = os.environ.get(BUILD_ENV)
    if not raw:
        return None
    try:
        build = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"${BUILD_ENV} is not JSON ({err}): {raw!r}") from None
    if not isinstance(build, dict) or not isinstance(build.get("id"), str):
        raise ValueError(f"${BUILD_ENV} must be a JSON object with an 'id', got {raw!r}")
    return build


def build_label(build: dict | None) -> str:
    """A record's build in words: ``build <id> (<commit>)``, or that it ran outside a build."""
    if not build:
        return "outside a build"
    head, plus, dirty = str(build.get("commit") or "unknown commit").partition("+")
    return f"build {build['id']} ({head[:12] if plus or len(head) == 40 else head}{plus}{dirty})"


def reconcile(folder: Path, book: Iterable[str], running: Iterable[str]) -> list[Path]:
    """Delete the claims records under ``folder/claims/`` that a run of the chapters ``running``
    would leave stale: those of ``running`` (each rewrites its own as it records) and those of
    chapters not in ``book`` (the book's chapter stems). Returns the deleted files."""
    keep = set(book) - set(running)
    gone = []
    for path in sorted((Path(folder) / "claims").glob("*.json")):
        if path.stem not in keep:
            path.unlink(missing_ok=True)
            gone.append(path)
    return gone


def markdown(verdict: Verdict) -> str:
    return f"**{verdict.verdict}** ({verdict.reason})"


def _require_control(chapter: str, claim: str, check: Check) -> None:
    if check.control is None and check.rule not in NO_CONTROL_RULES:
        raise ValueError(
            f"chapter {chapter}: claim {claim}'s check has no control (claims.controlled): "
            f"the same rule on a system for which the claim must not hold"
        )


def record(ch, claim: str, check: Check) -> Verdict:
    """Evaluate ``check`` for ``claim``, glue its verdict as ``claim-<claim>`` and append it to the
    chapter's ``claims/<chapter>.json`` (rewritten whole, atomically). Returns the verdict."""
    if claim not in CLAIMS:
        raise ValueError(
            f"chapter {ch.name}: {claim!r} is no claim ID; the IDs are {', '.join(CLAIMS)}"
        )
    _require_control(ch.name, claim, check)
    verdict = evaluate(check)
    ch.text(f"claim-{claim}", markdown(verdict))
    folder = results_dir(ch) / "claims"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{ch.name}.json"
    entries = getattr(ch, "_claims", None)
    if entries is None:  # the first claim of this run of the chapter: start the file afresh
        entries = ch._claims = []
    entries.append(
        {
            "claim": claim,
            "chapter": ch.name,
            "profile": ch.profile,
            "config_hash": ch.config_hash,
            "check": asdict(check),
            "verdict": asdict(verdict),
            "build": current_build(),
        }
    )
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(entries, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return verdict


@dataclass(frozen=True)
class ClaimCheck:
    """One claim's check as an experiment returns it for its chapter to record (:func:`record_all`):
    the verdict's Markdown, after ``before``, is also glued as ``glue`` (``None``: not glued)."""

    claim: str
    check: Check
    glue: str | None = None
    before: str = ""


def record_all(ch, checks: Iterable[ClaimCheck]) -> None:
    """:func:`record` each check in turn, and glue its verdict as the check's ``glue``."""
    for c in checks:
        verdict = markdown(record(ch, c.claim, c.check))
        if c.glue:
            ch.text(c.glue, c.before + verdict)


def load_checks(folder: Path) -> list[Recorded]:
    """Every check recorded under ``folder/claims/`` (one file per chapter), in file order; each
    with the build that recorded it (``None`` for a record older than builds in records)."""
    out = []
    for path in sorted((Path(folder) / "claims").glob("*.json")):
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not a valid claims record ({err})") from None
        for e in entries:
            if e.get("claim") not in CLAIMS:
                raise ValueError(f"{path}: unknown claim ID {e.get('claim')!r}")
            out.append(
                Recorded(
                    e["claim"],
                    e["chapter"],
                    e["profile"],
                    e["config_hash"],
                    Check.from_dict(e["check"]),
                    Verdict(**e["verdict"]) if e.get("verdict") else None,
                    e.get("build"),
                )
            )
    return out


def ledger(folder: Path) -> list[dict]:
    """One row per claim of :data:`CLAIMS`: its verdict evaluated now from the recorded evidence
    (a claim no chapter recorded is not measurable, saying so), the chapter and profile that
    recorded it and its ``build`` (:func:`build_label`)."""
    by_claim: dict[str, list[Recorded]] = {}
    for rec in load_checks(folder):
        by_claim.setdefault(rec.claim, []).append(rec)
    rows = []
    for claim, (paper, item, statement) in CLAIMS.items():
        recs = by_claim.get(claim, [])
        if not recs:
            rows.append(
                {
                    "claim": claim,
                    "paper": paper,
                    "item": item,
                    "statement": statement,
                    "verdict": UNMEASURABLE,
                    "evidence": "no chapter of this build measures it",
                    "chapter": None,
                    "profile": None,
                    "build": None,
                    "control": "",
                    "control_verdict": None,
                    "floor": "",
                    "rebuilds": "",
                }
            )
            continue
        rec = recs[-1]  # a chapter recording a claim twice: the last check counts
        v = evaluate(rec.check)
        evidence = v.reason + (f" — {rec.check.note}" if rec.check.note else "")
        rows.append(
            {
                "claim": claim,
                "paper": paper,
                "item": item,
                "statement": statement,
                "verdict": v.verdict,
                "evidence": evidence,
                "chapter": rec.chapter,
                "profile": rec.profile,
                "build": build_label(rec.build),
                "control": _control_text(rec.check, v),
                "control_verdict": v.control,
                "floor": _floor_text(rec.check.floor),
                "rebuilds": rec.check.rebuilds,
            }
        )
    return rows


def _control_text(check: Check, v: Verdict) -> str:
    if check.control is None:
        return "none: " + (
            "nothing is judged" if check.rule in NO_CONTROL_RULES else "the check has no control"
        )
    return f"{check.control.what}: **{v.control}** ({v.control_reason})"


def _floor_text(floor: Floor | None) -> str:
    if floor is None:
        return ""
    vals = ", ".join(f"{label} {'—' if v is None else f'{v:.3g}'}" for label, v in floor.values)
    what = f" in {floor.what}" if floor.what else ""
    return f"≥ {floor.floor:g} {floor.unit}{what} ({vals})"


__all__ = [
    "ClaimCheck",
    "across_rebuilds",
    "Control",
    "Floor",
    "NO_CONTROL_RULES",
    "RECORDED",
    "bookkeeping",
    "controlled",
    "floored",
    "within_margin",
    "record_all",
    "BUILD_ENV",
    "CLAIMS",
    "Check",
    "FAILS",
    "HOLDS",
    "NOISE",
    "RULES",
    "UNMEASURABLE",
    "VERDICTS",
    "Verdict",
    "all_true",
    "at_least",
    "at_most",
    "build_label",
    "current_build",
    "evaluate",
    "intervals_above",
    "ledger",
    "load_checks",
    "markdown",
    "not_measurable",
    "reconcile",
    "record",
    "results_dir",
    "seeds_above",
]
