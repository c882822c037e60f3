"""Claims judged with the recorded rebuild spread (rnnlib.experiments.recorded_claims) and the
two chapters' readings of their replicates (paper A's alignments, paper B's seeds)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from rnnlib import verdicts
from rnnlib.book.claims import ClaimCheck
from rnnlib.book.spread_records import HEADLINES, Records
from rnnlib.experiments import recorded_claims as rc
from rnnlib.experiments import spread_book
from rnnlib.experiments.rnnsearch import recorded

A, B = "x, All", "y, All"


def _reps(pairs):
    return [(f"r{i}", {A: a, B: b}) for i, (a, b) in enumerate(pairs)]


def _own(d=2.0):
    check = verdicts.intervals_above([("x − y", d, d - 0.5, d + 0.5)])
    control = verdicts.intervals_above([("y − y", 0.0, 0.0, 0.0)])
    return ClaimCheck("C-X", verdicts.controlled(check, "y against itself", control), "g")


def _verdict(claim: ClaimCheck) -> str:
    return verdicts.evaluate(claim.check).verdict


def test_the_pooled_difference_is_the_one_sample_t_interval_of_the_paired_differences():
    reps = _reps([(15.23, 12.33), (14.54, 12.36), (15.18, 13.98)])
    mean, low, high, n = rc.pooled_difference(reps, A, B)
    diffs = [2.90, 2.18, 1.20]
    ci = sps.ttest_1samp(diffs, 0.0).confidence_interval(0.95)
    assert n == 3 and mean == pytest.approx(np.mean(diffs))
    assert (low, high) == pytest.approx((ci.low, ci.high))


def test_a_difference_of_two_headline_numbers_of_one_column_is_named_once():
    assert rc.difference_label("+RNN, test", "Baseline, test") == "+RNN − Baseline, test"
    assert rc.difference_label("x, All", "y, No UNK") == "x, All − y, No UNK"
    check, _ = rc.rebuilds_part(_reps([(5.0, 3.0), (5.2, 3.1)]), [(A, B), ("z, All", B)])
    assert check.evidence["tests"][0][0] == "x − y, All over 2 rebuilds"
    assert "fewer than two replicates for z − y, All" in check.note


def test_a_comparison_needs_two_replicates_holding_both_systems():
    reps = [("r0", {A: 3.0, B: 1.0}), ("r1", {A: 4.0}), ("r2", {A: np.nan, B: 1.0})]
    assert rc.pooled_difference(reps, A, B) is None
    assert rc.rebuilds_part(reps, [(A, B)]) is None
    claim = _own()
    assert rc.with_rebuilds(claim, reps, [(A, B)]) is claim  # nothing to pool: as it was


def _own_as(verdict: str) -> ClaimCheck:
    """A chapter's check on this build whose verdict is ``verdict``."""
    d = {verdicts.HOLDS: 2.0, verdicts.NOISE: 0.2, verdicts.FAILS: -2.0}[verdict]
    claim = _own(d)
    assert _verdict(claim) == verdict
    return claim


AHEAD = [(5.0, 3.0), (5.2, 3.1), (4.9, 3.0)]  # a ahead on every replicate
MIXED = [(5.0, 3.0), (4.0, 3.9), (3.5, 3.6)]  # ahead on one, not on the others
BEHIND = [(3.0, 5.0), (3.1, 5.2), (3.0, 4.9)]


@pytest.mark.parametrize(
    "own, pairs, expected",
    [
        (verdicts.HOLDS, AHEAD, verdicts.HOLDS),  # both say holds
        (verdicts.HOLDS, MIXED, verdicts.NOISE),  # the rebuilds cannot confirm it
        (verdicts.HOLDS, BEHIND, verdicts.NOISE),  # they disagree: the rebuild's noise
        (verdicts.FAILS, MIXED, verdicts.NOISE),  # a refutation the rebuilds cannot confirm
        (verdicts.FAILS, BEHIND, verdicts.FAILS),
        (verdicts.NOISE, AHEAD, verdicts.NOISE),
    ],
)
def test_the_claim_takes_the_common_verdict_of_this_build_and_the_rebuilds(own, pairs, expected):
    judged = rc.with_rebuilds(_own_as(own), _reps(pairs), [(A, B)], floor=3.0)
    assert _verdict(judged) == expected
    assert judged.check.rule == "across_rebuilds"
    assert judged.check.rebuilds == "pooled over 3: r0, r1, r2"
    assert judged.glue == "g"


def test_a_claim_this_build_cannot_measure_stays_so_whatever_the_rebuilds_say():
    check = verdicts.intervals_above([("x − y", 2.0, 1.5, 2.5)])
    held = verdicts.controlled(check, "a control that holds", check)  # its control holds too
    claim = ClaimCheck("C-X", held, "g")
    assert _verdict(claim) == verdicts.UNMEASURABLE
    assert rc.with_rebuilds(claim, _reps(BEHIND), [(A, B)]) is claim


def test_the_rebuilds_part_has_the_claims_control_and_a_floor_on_every_replicate():
    reps = _reps([(5.0, 3.0), (5.2, 3.1), (4.9, 2.5)])  # a replicate's y below 3 BLEU
    check, labels = rc.rebuilds_part(reps, [(A, B)], floor=3.0)
    assert labels == ["r0", "r1", "r2"]
    assert verdicts.evaluate(check.control.check).verdict == verdicts.NOISE  # y − y: 0 [0, 0]
    assert verdicts.evaluate(check).verdict == verdicts.UNMEASURABLE
    assert "r2: y, All" in verdicts.evaluate(check).reason
    above = rc.rebuilds_part(reps, [(A, B)], floor=2.0)[0]
    assert verdicts.evaluate(above).verdict == verdicts.HOLDS


def test_only_comparisons_a_record_holds_are_pooled_the_chapters_own_replicates_judged_apart():
    reps = _reps([(5.0, 3.0), (5.2, 3.1)]) + [("rec", {"z, All": 4.0, B: 3.0})]
    tests = [(A, B), ("z, All", B)]
    assert rc.rebuilds_part(reps, tests, recorded=["rec"]) is None  # z has one replicate
    claim = _own()
    assert rc.with_rebuilds(claim, reps, tests, recorded=[]) is claim  # no record: as it was
    reps.append(("rec2", {A: 4.9, B: 3.0}))
    check, labels = rc.rebuilds_part(reps, tests, recorded=["rec", "rec2"])
    assert labels == ["r0", "r1", "rec2"]
    assert [t[0] for t in check.evidence["tests"]] == ["x − y, All over 3 rebuilds"]


def test_a_claim_not_measurable_by_how_it_is_built_stays_so():
    claim = ClaimCheck("C-X", verdicts.not_measurable("no such system"))
    assert rc.with_rebuilds(claim, _reps([(5, 3), (5, 3.1)]), [(A, B)]) is claim


def _spread(piece_records: dict) -> spread_book.RecordedSpread:
    records = {p: Records(matching=list(r)) for p, r in piece_records.items()}
    return spread_book.RecordedSpread(records, pd.DataFrame(), pd.DataFrame())


def _record(index, headline, created="2026-11-30T04:26:43+00:00"):
    return {"index": index, "headline": headline, "created": created}


def test_paper_a_pools_c_a_t1_1_on_the_baseline_tuned_on_over_the_records_that_hold_it():
    def runs(*scores):  # MERT runs by seed, as rows.bleu_of reads them
        return {
            k: SimpleNamespace(bleu={"test": {"single": {"bleu": b}}}) for k, b in enumerate(scores)
        }

    rnn = SimpleNamespace(runs=runs(26.4, 26.6), runs_tuned_on=runs(26.1, 26.3))
    reps = [SimpleNamespace(alignment=1, base=SimpleNamespace(runs=runs(26.0, 26.2)), rnn=rnn)]
    tuned = {"+RNN, test": 26.3, "Baseline, tuned on, test": 26.0, "Baseline, test": 25.0}
    old = {"+RNN, test": 26.3, "Baseline, test": 25.0}  # a record made before 76297a0
    spread = _spread({"phrase": [_record(2, tuned), _record(3, old), _record(2, tuned)]})
    values = spread_book.alignment_values(reps, spread)
    assert values[0][0] == "alignment 1 (this build)"
    own = {"Baseline, test": 26.1, "+RNN, test": 26.5, "Baseline, tuned on, test": 26.2}
    assert values[0][1] == pytest.approx(own)
    assert len(values) == 4  # each record its own alignment: eflomal takes no seed
    checks = {"C-A-T1-3": _own().check, "C-A-T1-1": _own().check}
    out = spread_book.cho2014_with_rebuilds(checks, reps, spread)
    assert [c.claim for c in out] == ["C-A-T1-3", "C-A-T1-1"]
    assert out[0].check is checks["C-A-T1-3"] and out[0].glue == "cho-c3"
    judged = out[1].check
    assert judged.rule == "across_rebuilds" and out[1].glue == "cho-t1-verdict"
    assert judged.rebuilds.startswith("pooled over 3: alignment 1 (this build), alignment 2")
    assert "alignment 3" not in judged.rebuilds  # its record holds no Baseline tuned on
    part = verdicts.Check.from_dict(judged.evidence["checks"][1][1])
    assert part.evidence["tests"][0][0] == "+RNN − Baseline, tuned on, test over 3 rebuilds"
    no_tuned = _spread({"phrase": [_record(3, old)]})
    assert spread_book.cho2014_with_rebuilds(checks, reps, no_tuned)[1].check is checks["C-A-T1-1"]


def _paper_b(records: dict):
    refs = {"all": ["a b c d e"], "no_unk": ["a b c d e"]}
    good, bad = ["a b c d e"], ["a b x y z"]
    tr = SimpleNamespace(of=lambda n, s: good if "search" in n else bad, refs=refs, base=None)
    sr = SimpleNamespace(seeds=[1], hyps={}, short_own=[True])
    return tr, sr, _spread(records)


def test_paper_b_reads_one_replicate_per_seed_averaging_a_seeds_records():
    shorts = {"RNNsearch-30, All": 9.0, "RNNencdec-30, All": 1.0}
    tr, sr, spread = _paper_b(
        {
            "rnnsearch": [
                _record(2, {"RNNsearch-50, All": 12.0, "RNNencdec-50, All": 2.0}),
                _record(2, {"RNNsearch-50, All": 14.0}, "2026-12-01T10:00:00+00:00"),
                _record(1, {"RNNsearch-50, All": 50.0}, "2026-12-02T10:00:00+00:00"),
            ],
            "rnnsearch-30": [_record(2, shorts, "2026-11-29T14:11:52+00:00")],
        }
    )
    reps = recorded.seed_replicates(tr, sr, spread)
    assert [label for label, _ in reps] == [
        "seed 1 (this build), recorded 2026-12-02T10:00",  # another machine's seed 1
        "seed 2, recorded 2026-11-30T04:26 and 2026-12-01T10:00 and 2026-11-29T14:11",
    ]
    first = reps[0][1]
    assert first["RNNsearch-50⋆, All"] == pytest.approx(100.0)
    assert first["RNNsearch-50, All"] == pytest.approx(75.0)  # 100 here, 50 there
    assert first["RNNencdec-30, No UNK"] < 100.0
    assert reps[1][1] == {"RNNsearch-50, All": 13.0, "RNNencdec-50, All": 2.0, **shorts}
    headlines = set(HEADLINES["rnnsearch"]) | set(HEADLINES["rnnsearch-30"])
    bleu = {k for k in headlines if "NLL" not in k}
    assert bleu <= set(first)  # the chapter's own numbers are named as the records name theirs


def test_paper_b_judges_over_the_seeds_only_with_a_matching_record():
    tr, sr, spread = _paper_b({})
    claims = [ClaimCheck("C-B-T1-5", _own().check, "rns-c5"), _own()]
    assert recorded.with_rebuilds(claims, tr, sr, spread) == claims  # no record: as they were
    star = {"RNNsearch-50⋆, All": 90.0, "RNNsearch-50, All": 80.0}
    star |= {"RNNsearch-50⋆, No UNK": 90.0, "RNNsearch-50, No UNK": 80.0}
    tr, sr, spread = _paper_b({"rnnsearch": [_record(2, star), _record(3, star)]})
    out = recorded.with_rebuilds(claims, tr, sr, spread)
    assert out[1] == claims[1]  # C-X compares no recorded models
    judged = out[0].check
    assert judged.rule == "across_rebuilds" and judged.rebuilds.startswith("pooled over 3: seed 1")
    part = verdicts.Check.from_dict(judged.evidence["checks"][1][1])
    labels = [t[0] for t in part.evidence["tests"]]
    assert labels == [
        "RNNsearch-50⋆ − RNNsearch-50, All over 3 rebuilds",
        "RNNsearch-50⋆ − RNNsearch-50, No UNK over 3 rebuilds",
    ]


def test_the_count_of_rebuilds_read_is_zero_without_a_record_and_the_parts_labels_with_one():
    own = _reps([(5.0, 3.0), (5.2, 3.1)])  # a chapter's own replicates only
    assert rc.rebuilds_read(own, [(A, B)]) == 0
    with_record = own + [(f"r9{rc.RECORDED}2026-11-30T04:26", {A: 4.9, B: 3.0, "z, All": 1.0})]
    assert rc.recorded_labels(with_record) == [with_record[-1][0]]
    assert rc.rebuilds_read(with_record, [(A, B), ("z, All", B)]) == 3  # z: one replicate
