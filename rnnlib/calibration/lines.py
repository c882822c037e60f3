"""The paired BLEU bootstrap of the user's own files: blocks of consecutive lines resampled.

On a corpus without Bible chapters (``corpus="files"``) the chapters' BLEU intervals resample
blocks of :data:`rnnlib.line_blocks.LINES_PER_BLOCK` consecutive lines of the test file
(:func:`rnnlib.line_blocks.line_blocks`), not sentences. The file does not say where its
documents begin, so the blocks cut across them. The rule here is that bootstrap on the
simulated test sets of :mod:`rnnlib.calibration.run`: their drawn chapters, concatenated in the
order drawn, are the lines of a file, and the blocks are cut from it by position alone, across
the chapters' boundaries as in a file.

Every trial reads the same simulated test set and the same two systems as the row "paired
BLEU" of :data:`rnnlib.calibration.run.RULES` (the same seeds), so the two rows differ only in
what their bootstrap resamples. The rates are their own artifact (``ledger/calibration_lines``,
:mod:`rnnlib.experiments.ledger_lines`), beside the other rules'; :func:`table` gives its rows
in the ledger's columns.

Deviations
----------
- Neither paper resamples anything for its BLEU; the blocks, their size and this check are the
  book's.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pandas as pd

from ..line_blocks import LINES_PER_BLOCK, line_blocks
from . import run
from .fast_bleu import counts_of
from .pool import Draw, Pool, draw_test
from .rules import B_STAR_GAIN, Outcome, _judge, _paired_check
from .systems import delta_for_gain, pair, population_bleu, thin

#: the rule of :data:`rnnlib.calibration.run.RULES` whose simulated systems these rules share
SAME_SYSTEMS_AS = "paired BLEU"


def line_counts(draw: Draw, size: int) -> np.ndarray:
    """``(R, n)``: the multiplicities of ``R`` block-bootstrap resamples of the test set ``draw``
    read as a file in the order drawn, cut into blocks of ``size`` consecutive lines (``B =
    ceil(n / size)`` blocks drawn with replacement, ``B`` per resample; drawn once per test set
    and size, from the test set's seed)."""
    key = ("lines", int(size))
    if key not in draw.memo:
        ids = line_blocks(np.arange(len(draw.idx)), size)
        m, r = int(ids.max()) + 1, draw.counts.shape[0]
        rng = np.random.default_rng([*draw.key, 103, int(size)])
        picks = rng.integers(0, m, (r, m), dtype=np.int32)
        draw.memo[key] = counts_of(picks, m)[:, ids]
    return draw.memo[key]


def paired_bleu_lines(
    pool: Pool, draw: Draw, rng, true: bool, size: int = LINES_PER_BLOCK
) -> Outcome:
    """B Table 1's comparison (``rnnsearch.table_1._intervals``) on the user's own files: ``a −
    b`` above 0 by the paired bootstrap of blocks of ``size`` consecutive lines, controlled by
    ``b`` against itself, floored on both; true: ``b`` thinned to RNNsearch-50*'s gain over
    RNNsearch-50 (B Table 1: 28.45 / 26.75)."""
    a, b = pair(pool, draw, rng)
    delta = delta_for_gain(B_STAR_GAIN) if true else 0.0
    b = thin(b, delta, rng) if true else b
    check = _paired_check(a[0], b[0], line_counts(draw, size))
    return _judge(check, delta * population_bleu(pool))


def rule_name(size: int) -> str:
    """The ledger's name of the rule with blocks of ``size`` lines."""
    return f"paired BLEU, blocks of {size} lines"


def rules_for(sizes=(LINES_PER_BLOCK,)) -> dict:
    """name -> (the rule, what the book applies it to, the effect its power is measured at), as
    :data:`rnnlib.calibration.run.RULES`, one rule per block size of ``sizes``."""
    return {
        rule_name(s): (
            partial(paired_bleu_lines, size=int(s)),
            f"your own files: the same, {s} consecutive lines resampled together",
            run.RULES[SAME_SYSTEMS_AS][2],
        )
        for s in sizes
    }


#: the rule the chapters apply to the user's own files
LINE_RULES = rules_for()


def _chunk(job) -> dict:
    """The outcomes of trials ``start``..``stop`` of one design (a worker's share)."""
    pool, registry, design, start, stop, claims, sentences, n_boot, seed = job
    di, shared = run.DESIGNS.index(design), list(run.RULES).index(SAME_SYSTEMS_AS)
    out = {}
    for trial in range(start, stop):
        draw = draw_test(pool, sentences, n_boot, [seed, di, trial], by=design)
        for name, (rule, _, _) in registry.items():
            rng = np.random.default_rng([seed, di, trial, shared])
            for true in claims:
                out.setdefault((name, design, true), []).append(rule(pool, draw, rng, true))
    return out


def calibrate(
    pool: Pool,
    plan: dict,
    sentences: int = 500,
    n_boot: int = 1000,
    seed: int = 0,
    registry: dict | None = None,
    workers: int = 1,
) -> pd.DataFrame:
    """:func:`rnnlib.calibration.run.calibrate`'s rows for the rules of ``registry`` (default
    :data:`LINE_RULES`), on the test sets and the systems of that function's row "paired BLEU"
    (the same ``plan``, ``sentences``, ``n_boot`` and ``seed`` give the same trials)."""
    registry = LINE_RULES if registry is None else registry
    jobs = []
    for design, (trials, claims) in plan.items():
        step = max(1, -(-trials // max(1, 4 * workers)))
        for start in range(0, trials, step):
            stop = min(trials, start + step)
            jobs.append((pool, registry, design, start, stop, claims, sentences, n_boot, seed))
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
    order = {n: k for k, n in enumerate(registry)}
    keys = sorted(tallies, key=lambda k: (order[k[0]], run.DESIGNS.index(k[1]), k[2]))
    return pd.DataFrame([run._row(k, tallies[k]) for k in keys])


def table(results: pd.DataFrame, registry: dict | None = None) -> pd.DataFrame:
    """:func:`rnnlib.calibration.run.table`'s rows (the same columns) for the rules of
    ``registry`` (default :data:`LINE_RULES`) in ``results``."""
    registry = LINE_RULES if registry is None else registry
    r = results.set_index(["rule", "design", "claim"])

    def cell(name, d, c, what):
        if (name, d, c) not in r.index:
            return run._pct(math.nan, math.nan)
        row = r.loc[(name, d, c)]
        return run._pct(row[what], row[f"{what}_se"])

    rows = []
    for name in dict.fromkeys(results["rule"]):
        row = {"rule": name, "applied to": registry[name][1]}
        row["false holds, by sentence (%)"] = cell(name, "sentence", "false", "holds")
        row["false holds, by chapter (%)"] = cell(name, "chapter", "false", "holds")
        row["effect"] = registry[name][2]
        row["power, by chapter (%)"] = cell(name, "chapter", "true", "holds")
        for c in ("false", "true"):
            row[f"coverage, claim {c} (%)"] = cell(name, "chapter", c, "covered")
        row["trials"] = int(r.loc[(name, "chapter", "false")]["trials"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("rule")


__all__ = [
    "LINE_RULES",
    "SAME_SYSTEMS_AS",
    "calibrate",
    "line_counts",
    "paired_bleu_lines",
    "rule_name",
    "rules_for",
    "table",
]
