"""The ledger's row for the user's own files: the paired BLEU bootstrap with blocks of
consecutive lines (:mod:`rnnlib.calibration.lines`), simulated on the pool and the test sets of
the other rows (:mod:`rnnlib.experiments.ledger`) and joined to their table.

Its rates are their own cached artifact, ``ledger/calibration_lines``, keyed like
``ledger/calibration`` (the trials, the sizes, the seed, the pool's checksum) and by its rules
and block size, so that the other rules' artifact stays as it is.

Deviations
----------
- Neither paper measures how often its comparisons err, nor resamples blocks of lines: the row
  is the book's own.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pandas as pd

from ..cache import ArtifactCache
from ..calibration import lines, plan_of
from ..calibration.rules import SEEDS
from ..line_blocks import LINES_PER_BLOCK
from .ledger import N_BOOT, SEED, SENTENCES, Calibration, Params, find_pool

#: the rows of the other rules' table the line rows follow (the two paired BLEU rows)
AFTER = "paired BLEU, block bootstrap"
#: what the row of the sentence bootstrap is, now that the user's files resample lines
SENTENCES_NOW = "paired bootstrap of a BLEU difference over the sentences (the contrast)"


def line_calibration(cache: ArtifactCache, P: Params, results: Path) -> Calibration:
    """The rates of :data:`rnnlib.calibration.lines.LINE_RULES` (the ``ledger/calibration_lines``
    artifact), on the trials of :func:`rnnlib.experiments.ledger.calibration` with the same
    parameters: ``calibration_trials`` by chapter, claim false and true,
    ``calibration_sentence_trials`` by sentence, claim false."""
    pool = find_pool(cache, results)
    plan = plan_of(P.calibration_trials, P.calibration_sentence_trials)
    config = {
        "trials": P.calibration_trials,
        "sentence_trials": P.calibration_sentence_trials,
        "sentences": SENTENCES,
        "n_boot": N_BOOT,
        "seeds": SEEDS,
        "seed": SEED,
        "rules": list(lines.LINE_RULES),
        "lines_per_block": LINES_PER_BLOCK,
        "systems_of": lines.SAME_SYSTEMS_AS,
        "pool": pool.source,
    }

    def make(out: Path, work: Path) -> dict:
        start = time.perf_counter()
        rates = lines.calibrate(pool, plan, SENTENCES, N_BOOT, SEED, workers=P.calibration_workers)
        rates.to_csv(out / "rates.csv", index=False)
        return {"seconds": time.perf_counter() - start, "workers": P.calibration_workers}

    art = cache.build("ledger/calibration_lines", config, make, data=pool.checksum())
    rates = pd.read_csv(art.file("rates.csv"), dtype={"claim": str, "design": str})
    minutes = float(art.extra.get("seconds", math.nan)) / 60
    return Calibration(rates, lines.table(rates), pool.source, minutes, art)


def joined(cal: Calibration, more: Calibration) -> Calibration:
    """``cal`` with the rows of ``more`` (:func:`line_calibration`): the rates of both, the
    table with ``more``'s rows after :data:`AFTER` (the sentence bootstrap's row saying what
    it is now: :data:`SENTENCES_NOW`), the minutes of both; the artifact ``more``'s (a cell
    passes both to the page)."""
    rates = pd.concat([cal.rates, more.rates], ignore_index=True)
    names = list(cal.table.index)
    at = names.index(AFTER) + 1 if AFTER in names else len(names)
    table = pd.concat([cal.table.iloc[:at], more.table, cal.table.iloc[at:]])
    if lines.SAME_SYSTEMS_AS in table.index:  # no chapter applies it any more
        table.loc[lines.SAME_SYSTEMS_AS, "applied to"] = SENTENCES_NOW
    minutes = cal.minutes + more.minutes
    return Calibration(rates, table, cal.source, minutes, more.artifact)


def numbers(cal: Calibration) -> dict:
    """``glue name -> value`` (in %, one decimal): the false-hold rates by chapter of the
    sentence bootstrap (``"paired BLEU"``), of whole chapters (:data:`AFTER`) and of the line
    rule, its power, and its block size, from ``cal`` (:func:`joined`)."""
    r = cal.rates.set_index(["rule", "design", "claim"])
    name = lines.rule_name(LINES_PER_BLOCK)

    def pct(rule: str, claim: str = "false") -> tuple[float, int]:
        return (100 * float(r.loc[(rule, "chapter", claim), "holds"]), 1)

    return {
        "cal-lines-size": (LINES_PER_BLOCK, None),
        "cal-lines-false": pct(name),
        "cal-lines-power": pct(name, "true"),
        "cal-sentences-false": pct(lines.SAME_SYSTEMS_AS),
        "cal-chapters-false": pct(AFTER),
    }


__all__ = ["AFTER", "SENTENCES_NOW", "joined", "line_calibration", "numbers"]
