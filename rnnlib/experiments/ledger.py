"""The ledger page's table "how often each rule is wrong": every rule the chapters judge their
claims by, simulated on the book's own Bible (:mod:`rnnlib.calibration`).

The per-sentence material is the test split of the prepared corpus the data chapter built (its
record in the build's ``results/data.json`` names the artifact): the verses in two further
French versions, scored against the reference, exchanged between two simulated systems by
chapter or by sentence (:mod:`rnnlib.calibration.systems`). Without that record (the page run
on its own) the synthetic pool of :func:`rnnlib.calibration.synthetic_pool` stands in, and the
page says so. The rates are one cached artifact, ``ledger/calibration``, keyed by the trials,
the sizes, the seed, the rules and the checksum of the numbers it read.

Deviations
----------
- Neither paper measures how often its comparisons err: the table is the book's own.
- The simulated systems are human translations exchanged between two systems, not the book's
  networks; their BLEU against the reference (about 40 and 48) is above the book's systems',
  and each rule's effect is scaled to it.
"""

from __future__ import annotations

import collections
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..cache import Artifact, ArtifactCache
from ..calibration import RULES, calibrate, plan_of, pool_from_prepared, synthetic_pool, table
from ..calibration.pool import Pool
from ..calibration.rules import SEEDS
from ..calibration.run import LINE_RULE, SAME_SYSTEMS
from ..line_blocks import LINES_PER_BLOCK

#: the book's sizes: test sets of about 500 sentences, 1,000 bootstrap resamples per interval
SENTENCES = 500
N_BOOT = 1000
SEED = 20141
#: a false-hold rate above this (by chapter) is named on the page: the rule is miscalibrated
OVER = 0.07
#: the rule the chapters apply to BLEU on the Bible: whole chapters resampled
CHAPTERS = "paired BLEU, block bootstrap"


@dataclass(frozen=True)
class Params:
    """The ledger chapter's parameters, as its parameters cell declares them."""

    profile: str = "cpu"
    calibration_trials: int = 2000
    calibration_sentence_trials: int = 1000
    calibration_workers: int = 2


@dataclass
class Calibration:
    """``rates`` (:func:`rnnlib.calibration.calibrate`'s rows), ``table`` (the page's), the
    pool's description, the minutes the trials took and the artifact."""

    rates: pd.DataFrame
    table: pd.DataFrame
    source: str
    minutes: float
    artifact: Artifact


def find_pool(cache: ArtifactCache, results: Path) -> Pool:
    """The test split of the prepared corpus the data chapter read most (its record in
    ``results/data.json``), as a :class:`~rnnlib.calibration.pool.Pool`; the synthetic pool
    when there is no such record or corpus."""
    record = Path(results) / "data.json"
    keys = []
    if record.exists():
        items = json.loads(record.read_text(encoding="utf-8"))
        keys = [
            a["key"]
            for item in items
            for a in item.get("artifacts") or []
            if a.get("kind") == "corpus/prepared"
        ]
    for key, _ in collections.Counter(keys).most_common():
        folder = cache.final_path("corpus/prepared", key)
        if (folder / "test.ref2.txt").exists():
            return pool_from_prepared(folder)
    pool = synthetic_pool()
    return Pool(pool.x, pool.y, pool.blocks, pool.lengths, "a synthetic pool (no prepared Bible)")


def calibration(cache: ArtifactCache, P: Params, results: Path) -> Calibration:
    """The rates of every rule of :data:`rnnlib.calibration.RULES` (the ``ledger/calibration``
    artifact): ``calibration_trials`` test sets with systems differing by chapter, claim false
    and true, and ``calibration_sentence_trials`` differing by sentence, claim false."""
    pool = find_pool(cache, results)
    plan = plan_of(P.calibration_trials, P.calibration_sentence_trials)
    config = {
        "trials": P.calibration_trials,
        "sentence_trials": P.calibration_sentence_trials,
        "sentences": SENTENCES,
        "n_boot": N_BOOT,
        "seeds": SEEDS,
        "seed": SEED,
        "rules": list(RULES),
        "pool": pool.source,
    }

    def make(out: Path, work: Path) -> dict:
        start = time.perf_counter()
        rates = calibrate(pool, plan, SENTENCES, N_BOOT, SEED, workers=P.calibration_workers)
        rates.to_csv(out / "rates.csv", index=False)
        return {"seconds": time.perf_counter() - start, "workers": P.calibration_workers}

    art = cache.build("ledger/calibration", config, make, data=pool.checksum())
    rates = pd.read_csv(art.file("rates.csv"), dtype={"claim": str, "design": str})
    minutes = float(art.extra.get("seconds", math.nan)) / 60
    return Calibration(rates, table(rates), pool.source, minutes, art)


def over(rates: pd.DataFrame, level: float = OVER) -> list[tuple[str, float]]:
    """``(rule, false-hold rate)`` of every rule above ``level`` with systems differing by
    chapter, worst first."""
    false = rates[(rates["design"] == "chapter") & (rates["claim"].astype(str) == "false")]
    found = [(r.rule, float(r.holds)) for r in false.itertuples() if r.holds > level]
    return sorted(found, key=lambda x: -x[1])


def numbers(cal: Calibration, P: Params) -> dict:
    """``glue name -> value``: the trials, the pool, the minutes, the rules over :data:`OVER`
    (their names, or their count where the names would not fit a line), the worst rate and
    the rates of the paired BLEU rows (:func:`line_numbers`)."""
    bad = over(cal.rates)
    names = ", ".join(n for n, _ in bad) or "none"
    worst = max(
        cal.rates[
            (cal.rates["design"] == "chapter") & (cal.rates["claim"].astype(str) == "false")
        ].itertuples(),
        key=lambda r: r.holds,
    )
    return {
        "cal-trials": (P.calibration_trials, None),
        "cal-sentence-trials": (P.calibration_sentence_trials, None),
        "cal-sentences": (SENTENCES, None),
        "cal-boot": (N_BOOT, None),
        "cal-source": cal.source,
        "cal-minutes": (cal.minutes, 1),
        "cal-over": names if len(names) <= 80 else f"{len(bad)} rules (see the table)",
        "cal-over-n": (len(bad), None),
        "cal-worst": str(worst.rule),
        "cal-worst-rate": (100 * float(worst.holds), 1),
        **line_numbers(cal),
    }


def line_numbers(cal: Calibration) -> dict:
    """``glue name -> value`` (in %, one decimal): the false-hold rates by chapter of the rule
    of the user's own files (:data:`rnnlib.calibration.run.LINE_RULE`), of the sentence
    bootstrap whose systems it shares (``"paired BLEU"``) and of whole chapters
    (:data:`CHAPTERS`), the line rule's power, and its block size."""
    r = cal.rates.set_index(["rule", "design", "claim"])

    def pct(rule: str, claim: str = "false") -> tuple[float, int]:
        return (100 * float(r.loc[(rule, "chapter", claim), "holds"]), 1)

    return {
        "cal-lines-size": (LINES_PER_BLOCK, None),
        "cal-lines-false": pct(LINE_RULE),
        "cal-lines-power": pct(LINE_RULE, "true"),
        "cal-sentences-false": pct(SAME_SYSTEMS[LINE_RULE]),
        "cal-chapters-false": pct(CHAPTERS),
    }


__all__ = [
    "CHAPTERS",
    "Calibration",
    "Params",
    "calibration",
    "find_pool",
    "line_numbers",
    "numbers",
    "over",
]
