"""How often each rule of the book is wrong: the trials, their rates and the table.

:func:`calibrate` runs ``trials`` simulated test sets per design (systems that differ sentence
by sentence, or chapter by chapter: :func:`rnnlib.calibration.pool.draw_test`) and, on each,
every rule of :data:`RULES` twice: once where its claim is false, once where it is true by the
rule's stated effect. Per rule and design it counts

* the **false-hold rate**: the share of "holds" where the claim is false (nominal: at most
  2.5% for a one-sided reading of a 95% interval, 5% the level the book allows);
* the **power**: the share of "holds" where the claim is true by the stated effect;
* the **coverage**: the share of the rule's 95% intervals that contain the population value,
  where the claim is false and where it is true;

each with its Monte Carlo standard error ``sqrt(p (1 - p) / trials)``. :func:`table` puts them
in the ledger's words.

Deviations
----------
- Not in either paper: neither reports how often its comparisons would err; this is the book's
  own check of its judging rules.
- The simulated systems are two further French versions of the test verses scored against the
  reference, exchanged between the two systems chapter by chapter or sentence by sentence: the
  shape of the book's per-sentence statistics and of its chapters, not the book's systems
  themselves (whose outputs are not at hand where the ledger is built).
- Controls that cannot be made from sentence statistics (translations cut in half, shuffled
  attention rows) are left out; a control can only turn "holds" into "not measurable", so the
  rates of those rules are upper bounds.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..verdicts import HOLDS
from ..line_blocks import LINES_PER_BLOCK
from . import lines, more_rules, rules
from .pool import Pool, draw_test

#: the rule the chapters apply to BLEU on the user's own files (:mod:`rnnlib.calibration.lines`)
LINE_RULE = lines.rule_name(LINES_PER_BLOCK)

#: name -> (the rule, what the book applies it to, the effect its power is measured at)
RULES = {
    "paired BLEU": (
        rules.paired_bleu,
        "paired bootstrap of a BLEU difference over the sentences (no chapter: the contrast)",
        "B: RNNsearch-50* over -50 (+6.4%)",
    ),
    "paired BLEU, block bootstrap": (
        rules.paired_bleu_blocks,
        "B Table 1, Fig. 2, Table 3: the same, whole chapters resampled",
        "B: RNNsearch-50* over -50 (+6.4%)",
    ),
    LINE_RULE: (
        lines.paired_bleu_lines,
        f"your own files: the same, {LINES_PER_BLOCK} consecutive lines resampled, studentized",
        "B: RNNsearch-50* over -50 (+6.4%)",
    ),
    "seeds and sentences": (
        rules.seeds_and_sentences,
        "A Table 1: 3 MERT seeds a row, Clark et al.",
        "A: +RNN over Baseline (+1.7%)",
    ),
    "Welch seeds": (
        rules.seeds_above,
        "verdicts.seeds_above, 3 seeds against 3 (no chapter today)",
        "A: +RNN over Baseline (+1.7%)",
    ),
    "across rebuilds": (
        rules.across_rebuilds,
        "the seeds spread: the paired BLEU check on 3 seeds",
        "B: RNNsearch-50* over -50 (+6.4%)",
    ),
    "subset difference": (
        rules.subset_difference,
        "B Table 1 (C-B-T1-4): No UNK − All, whole chapters",
        "B: No UNK over All (+27.7%)",
    ),
    "gap change": (
        rules.gap_change,
        "B Table 1 (C-B-T1-6): a lead shrinking on No UNK, whole chapters",
        "B: Moses' lead, All − No UNK (16.1%)",
    ),
    "within margin": (
        rules.within_margin,
        "B Table 1 (C-B-T1-6): within 5% of the leader's BLEU, whole chapters",
        "equal systems (false: at the margin)",
    ),
    "relative length slopes": (
        more_rules.relative_length_slopes,
        "B Fig. 2 (C-B-F2-2): relative slopes over length",
        "b loses 10% of its anchor per 10 tokens",
    ),
    "rank correlation": (
        more_rules.bootstrap_spearman,
        "A §2.3 gates (C-A-GRU-2): Spearman over 256 units",
        "rho = 0.3",
    ),
    "share at least": (
        more_rules.share_at_least,
        "B Fig. 3 (C-B-F3-2): % of sentences ≥ 5%, whole chapters",
        "a share of 10% (false: 5%)",
    ),
}
DESIGNS = ("sentence", "chapter")
#: rule -> the rule whose simulated systems it shares: in every trial it draws from that rule's
#: generator (:func:`stream`), so it reads the same two systems (and the same thinning where the
#: claim is true) and the two rows differ only in how their intervals are made
SAME_SYSTEMS = {LINE_RULE: "paired BLEU"}
#: rules whose items are not the test sentences: the design (how systems differ) is not theirs,
#: so they run under the last design only
NOT_SENTENCES = ("rank correlation",)


def plan_of(trials: int, sentence_trials: int | None = None) -> dict:
    """``design -> (trials, claims)``: by chapter (the book's shape) ``trials`` with the claim
    false and true; by sentence ``sentence_trials`` (default ``trials``) with the claim false
    only (the contrast that shows what the chapters' dependence does to the false holds)."""
    st = trials if sentence_trials is None else sentence_trials
    return {"sentence": (st, (False,)), "chapter": (trials, (False, True))}


def stream(name: str) -> int:
    """The last seed of rule ``name``'s generator in a trial (``default_rng([seed, design,
    trial, stream])``, :func:`calibrate`): its place among the rules of :data:`RULES` that draw
    their own systems; for a rule of :data:`SAME_SYSTEMS`, that of the rule whose systems it
    shares. Adding a rule to :data:`SAME_SYSTEMS` moves no other rule's draws."""
    own = [n for n in RULES if n not in SAME_SYSTEMS]
    return own.index(SAME_SYSTEMS.get(name, name))


#: BLAS threads a worker's matrix products use: one. The products are small (1,000 resamples x
#: 500 sentences x 10 statistics); a second BLAS thread made a trial 3.5-5x as costly in CPU
#: time on a 2-core machine, and a worker's threads compete with the other worker
#: (``python -m rnnlib.bench.calibration``, BENCHMARKS.md). ``None``: BLAS's own default.
BLAS_THREADS = 1


def _chunk(job) -> dict:
    """The outcomes of trials ``start``..``stop`` of one design (a worker's share), its matrix
    products on ``blas_threads`` threads (None: BLAS's default)."""
    *job, blas_threads = job
    if blas_threads is None:
        return _trials(job)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=blas_threads):
        return _trials(job)


def _trials(job) -> dict:
    pool, names, design, di, start, stop, claims, sentences, n_boot, seed = job
    out = {}
    for trial in range(start, stop):
        draw = draw_test(pool, sentences, n_boot, [seed, di, trial], by=design)
        for name in names:
            if design != DESIGNS[-1] and name in NOT_SENTENCES:
                continue
            rng = np.random.default_rng([seed, di, trial, stream(name)])
            for true in claims:
                out.setdefault((name, design, true), []).append(
                    RULES[name][0](pool, draw, rng, true)
                )
    return out


def calibrate(
    pool: Pool,
    plan: dict,
    sentences: int = 500,
    n_boot: int = 1000,
    seed: int = 0,
    names=None,
    workers: int = 1,
    blas_threads: int | None = BLAS_THREADS,
) -> pd.DataFrame:
    """One row per (rule, design, claim true or false) of ``plan`` (:func:`plan_of`):
    ``trials``, ``holds`` (share of "holds"), ``holds_se``, ``covered`` (share of intervals
    holding the population value, NaN for a rule without an interval), ``covered_se``,
    ``measured`` (share of verdicts other than "not measurable"). Trial ``t`` of design ``d``
    draws from ``default_rng([seed, d, t])``, whichever of ``workers`` processes runs it, so
    the result does not depend on ``workers``; every rule of a trial reads the same simulated
    test set ``sentences`` sentences long and the same ``n_boot`` bootstrap resamples, and its
    own systems drawn from generator :func:`stream` (a rule of :data:`SAME_SYSTEMS` the
    systems of the rule it names). ``blas_threads``: each process's BLAS threads
    (:data:`BLAS_THREADS`; the products are exact sums of integers, so the rates do not depend
    on it either)."""
    names = list(RULES) if names is None else list(names)
    jobs = []
    for design, (trials, claims) in plan.items():
        di = DESIGNS.index(design)
        step = max(1, -(-trials // max(1, 4 * workers)))
        for start in range(0, trials, step):
            stop = min(trials, start + step)
            job = (pool, names, design, di, start, stop, claims, sentences, n_boot, seed)
            jobs.append((*job, blas_threads))
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as ex:
            parts = list(ex.map(_chunk, jobs))
    else:
        parts = [_chunk(j) for j in jobs]
    tallies: dict = {}
    for part in parts:
        for key, outs in part.items():
            tallies.setdefault(key, []).extend(outs)
    order = {n: k for k, n in enumerate(names)}
    keys = sorted(tallies, key=lambda k: (order[k[0]], DESIGNS.index(k[1]), k[2]))
    return pd.DataFrame([_row(k, tallies[k]) for k in keys])


def _row(key, outs) -> dict:
    name, design, true = key
    n = len(outs)
    holds = np.mean([o.verdict == HOLDS for o in outs])
    ends = np.array([(o.low, o.high, o.truth) for o in outs], dtype=float)
    ok = np.isfinite(ends).all(1)
    covered = (
        np.mean((ends[ok, 0] <= ends[ok, 2]) & (ends[ok, 2] <= ends[ok, 1]))
        if ok.any()
        else math.nan
    )
    return {
        "rule": name,
        "design": design,
        "claim": "true" if true else "false",
        "trials": n,
        "holds": float(holds),
        "holds_se": math.sqrt(holds * (1 - holds) / n),
        "covered": float(covered),
        "covered_se": math.sqrt(covered * (1 - covered) / max(ok.sum(), 1)),
        "measured": float(np.mean([o.verdict != rules.verdicts.UNMEASURABLE for o in outs])),
    }


def _pct(p: float, se: float) -> str:
    return "—" if not math.isfinite(p) else f"{100 * p:.1f} ± {100 * se:.1f}"


def table(results: pd.DataFrame) -> pd.DataFrame:
    """The ledger's table, one row per rule: what the book applies it to, the false-hold rate
    with systems differing by sentence and by chapter, the power at its effect and the coverage
    of its intervals (claim false, claim true) by chapter, in % with their Monte Carlo standard
    errors, and the trials per cell."""
    r = results.set_index(["rule", "design", "claim"])
    empty = {"holds": math.nan, "holds_se": math.nan, "covered": math.nan, "covered_se": 0}

    def cell(name, d, c, what):
        row = r.loc[(name, d, c)] if (name, d, c) in r.index else empty
        return _pct(row[what], row[f"{what}_se"])

    rows = []
    for name in dict.fromkeys(results["rule"]):
        row = {"rule": name, "applied to": RULES[name][1]}
        row["false holds, by sentence (%)"] = cell(name, "sentence", "false", "holds")
        row["false holds, by chapter (%)"] = cell(name, "chapter", "false", "holds")
        row["effect"] = RULES[name][2]
        row["power, by chapter (%)"] = cell(name, "chapter", "true", "holds")
        for c in ("false", "true"):
            row[f"coverage, claim {c} (%)"] = cell(name, "chapter", c, "covered")
        row["trials"] = int(r.loc[(name, "chapter", "false")]["trials"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("rule")


__all__ = [
    "BLAS_THREADS",
    "DESIGNS",
    "LINE_RULE",
    "RULES",
    "SAME_SYSTEMS",
    "calibrate",
    "plan_of",
    "stream",
    "table",
]
