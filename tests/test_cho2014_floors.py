"""The floors of paper A's Table 1 claims about the CSLM and the word penalty
(rnnlib.experiments.cho2014.lm_floors) and a check's second floor (verdicts.floored, add=True):
under each floor, above it where the claim holds, above it where it fails."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rnnlib import verdicts
from rnnlib.experiments.cho2014 import equal_effort, lm_floors, table_1

N = 80
_rng = np.random.default_rng(0)
REFS = [" ".join(f"w{x}" for x in _rng.integers(0, 60, 8)) for _ in range(N)]
REFS2 = {"dev": REFS, "test": REFS}
ORACLE = [list(REFS)] * 3


@pytest.fixture(autouse=True)
def _few_resamples(monkeypatch):
    monkeypatch.setattr(table_1, "N_BOOT", 100)


def _row(k: int, seeds: int = 3) -> dict:
    def out(s):
        return [r if i < k + s else " ".join(r.split()[:-1] + ["zz"]) for i, r in enumerate(REFS)]

    both = [out(s) for s in range(seeds)]
    return {"dev": both, "test": both}


def _rows(base=20, rnn=40, cslm=40, cr=60, wp=50) -> dict:
    """Table 1's rows as the chapter builds them: the CSLM rows with +RNN's lists re-tuned
    without the CSLM (as good as +RNN)."""
    names = ["Baseline", "+RNN", "+CSLM", "+CSLM+RNN", "+CSLM+RNN+WP", equal_effort.LISTS_ROW]
    return {n: _row(k) for n, k in zip(names, (base, rnn, cslm, cr, wp, rnn))}


def _verdict(check) -> verdicts.Verdict:
    return verdicts.evaluate(check)


def test_cslm_lead_is_the_log_perplexity_gap():
    assert lm_floors.cslm_lead(50.0, 100.0) == pytest.approx(math.log(2))
    assert lm_floors.cslm_lead(120.6, 59.5) < 0  # the CSLM worse than the n-gram model
    assert math.isnan(lm_floors.cslm_lead(float("nan"), 59.5))


@pytest.mark.slow  # bootstraps: about 3 s
def test_t1_2_and_t1_4_stop_at_a_cslm_weaker_than_kneser_ney():
    checks = table_1.table_1_claims(_rows(), REFS2, ORACLE)
    weak = lm_floors.floored_checks(checks, 120.6, 59.5, None)
    for claim in ("C-A-T1-2", "C-A-T1-4"):
        v = _verdict(weak[claim])
        assert v.verdict == verdicts.UNMEASURABLE
        assert "Kneser–Ney" in v.reason and "nats per word" in v.reason
    # above the floor the rules judge as before: T1-2 holds, T1-4 fails (gains over 2 BLEU)
    strong = lm_floors.floored_checks(checks, 50.0, 59.5, None)
    assert _verdict(strong["C-A-T1-2"]).verdict == verdicts.HOLDS
    assert _verdict(strong["C-A-T1-4"]).verdict == verdicts.FAILS
    assert len(strong["C-A-T1-2"].floors) == 2  # the BLEU floor stays


@pytest.mark.slow  # bootstraps: about 4 s
def test_t1_2_fails_above_the_cslm_floor_and_t1_4_is_refuted_without_the_cslm():
    not_best = table_1.table_1_claims(_rows(cslm=70), REFS2, ORACLE)  # +CSLM beats +CSLM+RNN
    got = lm_floors.floored_checks(not_best, 50.0, 59.5, None)
    assert _verdict(got["C-A-T1-2"]).verdict == verdicts.FAILS
    # +RNN below the Baseline: T1-4's test without the CSLM refutes it, whatever the CSLM
    worse = table_1.table_1_claims(_rows(base=40, rnn=20), REFS2, ORACLE)
    weak = lm_floors.floored_checks(worse, 120.6, 59.5, None)
    v = _verdict(weak["C-A-T1-4"])
    assert v.verdict == verdicts.FAILS and "refuted above the floor" in v.reason


def test_reach_counts_only_the_lists_where_the_penalty_varies():
    chosen = [" ".join(r.split()[:-1] + ["zz"]) for r in REFS]  # one wrong word each
    lists = [[c, r] for c, r in zip(chosen, REFS)]  # the reference is in every list
    idle = [[0.0, 0.0]] * N
    assert lm_floors.reach(lists, idle, chosen, REFS) == (0.0, 0.0)
    active = [[0.0, 1.0]] * N
    gain, share = lm_floors.reach(lists, active, chosen, REFS)
    assert gain > 10 and share == 1.0
    half = [[0.0, 1.0] if i % 2 else [0.0, 0.0] for i in range(N)]
    part, share = lm_floors.reach(lists, half, chosen, REFS)
    assert 0 < part < gain and share == 0.5


@pytest.mark.slow  # bootstraps: about 4 s
def test_t1_3_under_above_and_failing_the_penalty_s_reach():
    holds = table_1.table_1_claims(_rows(), REFS2, ORACLE)  # the penalty lowers BLEU
    under = lm_floors.floored_checks(holds, 50.0, 59.5, 0.1)
    v = _verdict(under["C-A-T1-3"])
    assert v.verdict == verdicts.UNMEASURABLE and "reach" in v.reason
    assert _verdict(lm_floors.floored_checks(holds, 50.0, 59.5, 3.0)["C-A-T1-3"]).verdict == (
        verdicts.HOLDS
    )
    gains = table_1.table_1_claims(_rows(wp=75), REFS2, ORACLE)  # the penalty improves BLEU
    above = lm_floors.floored_checks(gains, 50.0, 59.5, 3.0)
    assert _verdict(above["C-A-T1-3"]).verdict == verdicts.FAILS
    assert lm_floors.floored_checks(holds, 50.0, 59.5, None)["C-A-T1-3"] == holds["C-A-T1-3"]


def test_a_second_floor_round_trips_and_both_are_reported():
    check = verdicts.controlled(
        verdicts.intervals_above([("a", 1.0, 0.5, 1.5)]),
        "itself",
        verdicts.intervals_above([("a", 0.0, -0.5, 0.5)]),
    )
    check = verdicts.floored(check, [("x", 1.0)], 3.0, "BLEU")
    both = verdicts.floored(check, [("y", -1.0)], 0.0, "nats", add=True)
    back = verdicts.Check.from_dict(dataclasses.asdict(both))
    assert back == both and len(back.floors) == 2
    v = _verdict(back)
    assert v.verdict == verdicts.UNMEASURABLE and "x 1" in v.reason and "y -1" in v.reason
    replaced = verdicts.floored(check, [("y", 1.0)], 0.0, "nats")  # without add: replaced
    assert len(replaced.floors) == 1 and _verdict(replaced).verdict == verdicts.HOLDS
