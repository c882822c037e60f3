"""The representations chapter's claims judged on every word alignment (the rebuild spread of
the purity gaps, the gates and the gating ablation)."""

from types import SimpleNamespace as NS

import numpy as np
import pytest

from rnnlib.book import claims
from rnnlib import verdicts
from rnnlib.experiments.representations import rebuilds as rr
from rnnlib.experiments.representations.floor import LearnedFloor
from rnnlib.experiments.representations.purity_claims import PurityClaim


def _check(diff: float) -> verdicts.Check:
    check = verdicts.intervals_above([("trained − chance", diff, diff - 0.1, diff + 0.1)])
    control = verdicts.intervals_above([("untrained − chance", 0.0, -0.1, 0.1)])
    return verdicts.controlled(check, "the untrained network", control)


def _claim(diff: float) -> PurityClaim:
    return PurityClaim("C-A-F4-1", "word", _check(diff), _check(-diff), True, "")


def _values(trained: float) -> dict:
    return {
        col: {"trained network": trained, "bag of words": 0.5, "chance": 0.1}
        for col in rr.PURITY_CLAIMS
    }


def _rebuild(alignment: int, diff: float, trained: float, gap: float):
    abl = NS(interval=(gap, gap - 0.1, gap + 0.1))
    found = claims.ClaimCheck("C-A-GRU-1", _check(diff), "rep-verdict-ablation")
    floor = LearnedFloor(20.0 + alignment, 30.0)
    return NS(
        alignment=alignment,
        purity=[_claim(diff)],
        purity_values=_values(trained),
        ablation=abl,
        ablation_check=found,
        gates=found,
        floor=floor,
        row=rr.row_of(_values(trained), abl, floor),
        recorded=False,
    )


def test_one_alignment_keeps_the_chapters_own_check():
    found = [_claim(0.3)]
    assert rr.purity_across(found, []) == found
    first = claims.ClaimCheck("C-A-GRU-1", _check(0.3))
    assert rr.check_across(first, [], "ablation_check").check == first.check


def test_a_claim_holds_only_when_it_holds_on_every_alignment():
    agree = rr.purity_across([_claim(0.3)], [_rebuild(2, 0.3, 0.6, 1.0)])[0]
    assert agree.check.rule == "across_rebuilds"
    assert verdicts.evaluate(agree.check).verdict == verdicts.HOLDS
    assert verdicts.evaluate(agree.bow_check).verdict == verdicts.FAILS  # the second verdict too
    flipped = rr.purity_across([_claim(0.3)], [_rebuild(2, -0.3, 0.6, 1.0)])[0]
    verdict = verdicts.evaluate(flipped.check)
    assert verdict.verdict == verdicts.NOISE and "alignment 2: does not hold" in verdict.reason
    first = claims.ClaimCheck("C-A-GRU-1", _check(0.3), "rep-verdict-ablation")
    both = rr.check_across(first, [_rebuild(2, 0.3, 0.6, 1.0)], "ablation_check")
    assert both.glue == "rep-verdict-ablation"
    assert verdicts.evaluate(both.check).verdict == verdicts.HOLDS


def test_the_table_gives_each_alignment_and_the_spread_compare_reads():
    abl = NS(interval=(1.0, 0.9, 1.1))
    reps = [_rebuild(2, 0.3, 0.7, 2.0), _rebuild(3, 0.3, 0.8, 3.0)]
    table = rr.rebuilds_table(_values(0.6), abl, LearnedFloor(21.0, 30.0), reps)
    assert list(table.index) == ["1", "2", "3", "mean", "sd"]
    assert table.loc["2", "word: trained − bag of words"] == pytest.approx(0.2)
    assert table.loc["sd", "tanh − GRU, dev NLL per pair"] == pytest.approx(1.0)
    assert table.loc["3", "scorer dev NLL per pair"] == pytest.approx(23.0)
    got = rr.numbers(table)
    assert got["rep-rebuilds-n"] == 3
    assert got["rep-word-trained-spread"] == (pytest.approx(0.1), 3)
    assert got["rep-abl-gap-spread"] == (pytest.approx(1.0), 3) and got["rep-abl-gap-spread-n"] == 3
    alone = rr.rebuilds_table(_values(0.6), abl, LearnedFloor(21.0, 30.0), [])
    assert list(alone.index) == ["1"] and not np.isnan(alone.values).any()
    assert list(rr.numbers(alone)) == ["rep-rebuilds-n"]


def test_the_text_says_where_the_alignments_came_from():
    assert "one alignment" in rr.origin([], {"alignment_replicates": 1})
    reps = [_rebuild(2, 0.3, 0.7, 2.0), _rebuild(3, 0.3, 0.8, 3.0)]
    read = rr.origin(reps, {"alignment_replicates": 1, "cached_spread": True})
    assert read == "3 alignments: 1 built by this build, 2 read from the cache"
    assert rr.origin(reps, {"alignment_replicates": 3}) == "3 alignments: 3 built by this build"
