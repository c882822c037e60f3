"""The claims ledger: rules decide verdicts from evidence, records round-trip, edited evidence
changes the verdict."""

import json
from dataclasses import asdict
from types import SimpleNamespace

import numpy as np
import pytest

from rnnlib.book import claims
from rnnlib import verdicts


def test_intervals_rule_reports_noise_not_holding():
    assert (
        verdicts.evaluate(verdicts.intervals_above([("a", 1.0, 0.2, 1.8)])).verdict
        == verdicts.HOLDS
    )
    assert (
        verdicts.evaluate(verdicts.intervals_above([("a", 1.0, -0.1, 1.8)])).verdict
        == verdicts.NOISE
    )
    assert (
        verdicts.evaluate(
            verdicts.intervals_above([("a", 1.0, 0.2, 1.8), ("b", -1.0, -1.5, -0.5)])
        ).verdict
        == verdicts.FAILS
    )
    assert verdicts.evaluate(verdicts.intervals_above([])).verdict == verdicts.UNMEASURABLE


def test_seeds_rule_needs_two_runs_and_uses_the_standard_error():
    assert (
        verdicts.evaluate(verdicts.seeds_above([20.0], [19.0], "x")).verdict
        == verdicts.UNMEASURABLE
    )
    assert (
        verdicts.evaluate(verdicts.seeds_above([20.0, 20.2, 20.1], [19.0, 19.1, 18.9], "x")).verdict
        == verdicts.HOLDS
    )
    # a 0.3 gain with a spread of about 1 BLEU between runs is inside the noise
    v = verdicts.evaluate(verdicts.seeds_above([20.0, 21.0, 19.5], [19.5, 20.5, 19.6], "x"))
    assert v.verdict == verdicts.NOISE and "standard error" in v.reason
    assert (
        verdicts.evaluate(verdicts.seeds_above([18.0, 18.1], [20.0, 20.1], "x")).verdict
        == verdicts.FAILS
    )


def test_threshold_rules():
    assert verdicts.evaluate(verdicts.at_least(80, 70, "m")).verdict == verdicts.HOLDS
    assert verdicts.evaluate(verdicts.at_least(60, 70, "m")).verdict == verdicts.FAILS
    assert (
        verdicts.evaluate(verdicts.at_least(72, 70, "m", low=65, high=79)).verdict == verdicts.NOISE
    )
    assert verdicts.evaluate(verdicts.at_most(0.3, 0.5, "r")).verdict == verdicts.HOLDS
    assert (
        verdicts.evaluate(verdicts.at_least(float("nan"), 1, "m")).verdict == verdicts.UNMEASURABLE
    )
    assert (
        verdicts.evaluate(verdicts.all_true([("x", True), ("y", False)])).verdict == verdicts.FAILS
    )
    assert verdicts.evaluate(verdicts.all_true([("x", True)])).verdict == verdicts.HOLDS


def test_unknown_rule_and_claim_are_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown claim rule"):
        verdicts.evaluate(verdicts.Check("bogus", {}))
    ch = _chapter(tmp_path)
    with pytest.raises(ValueError, match="C-X-1"):
        claims.record(ch, "C-X-1", verdicts.not_measurable("x"))


def _chapter(tmp_path):
    glued = {}
    return SimpleNamespace(
        name="demo",
        profile="smoke",
        config_hash="abcd1234",
        figures_dir=tmp_path / "figures",
        text=lambda name, md: glued.setdefault(name, md),
        glued=glued,
    )


def test_record_then_ledger_recomputes_from_the_evidence(tmp_path, monkeypatch):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    ch = _chapter(tmp_path)
    same = verdicts.intervals_above([("a − a", 0.0, 0.0, 0.0)])
    v = claims.record(
        ch,
        "C-B-T1-1",
        verdicts.controlled(
            verdicts.intervals_above([("search − encdec", 2.0, 1.0, 3.0)]), "a against itself", same
        ),
    )
    claims.record(
        ch,
        "C-B-T1-4",
        verdicts.controlled(
            verdicts.all_true([("RNNsearch-50", True)]), "c", verdicts.all_true([("c", False)])
        ),
    )
    assert v.verdict == verdicts.HOLDS and ch.glued["claim-C-B-T1-1"].startswith("**holds**")
    path = tmp_path / "results" / "claims" / "demo.json"
    rows = {r["claim"]: r for r in claims.ledger(tmp_path / "results")}
    assert set(rows) == set(claims.CLAIMS) and len(rows) == 39
    assert [c for c, r in rows.items() if r["own"]] == sorted(claims.OWN_OBSERVATIONS)
    assert rows["C-B-F3-4"]["own"] and not rows["C-B-F3-1"]["own"]
    assert rows["C-B-T1-1"]["verdict"] == verdicts.HOLDS and rows["C-B-T1-1"]["chapter"] == "demo"
    assert (
        rows["C-A-T1-1"]["verdict"] == verdicts.UNMEASURABLE and rows["C-A-T1-1"]["chapter"] is None
    )
    # edit a number of the recorded evidence: the ledger's verdict follows it
    entries = json.loads(path.read_text(encoding="utf-8"))
    entries[0]["check"]["evidence"]["tests"][0][1:] = [-2.0, -3.0, -1.0]
    path.write_text(json.dumps(entries), encoding="utf-8")
    assert {r["claim"]: r for r in claims.ledger(tmp_path / "results")}["C-B-T1-1"][
        "verdict"
    ] == verdicts.FAILS


def test_a_rerun_of_the_chapter_starts_its_record_afresh(tmp_path, monkeypatch):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    claims.record(_chapter(tmp_path), "C-B-T1-1", verdicts.not_measurable("first run"))
    claims.record(_chapter(tmp_path), "C-B-T1-2", verdicts.not_measurable("second run"))
    recorded = claims.load_checks(tmp_path / "results")
    assert [r.claim for r in recorded] == ["C-B-T1-2"]


def test_a_broken_record_names_the_file(tmp_path):
    folder = tmp_path / "claims"
    folder.mkdir()
    (folder / "x.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="x.json"):
        claims.load_checks(tmp_path)


def test_a_chapter_marked_execute_last_runs_after_the_others(tmp_path):
    from rnnlib.book.execute import book_chapters

    front = (
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n"
        "  display_name: Python 3\n  language: python\n  name: python3\n{extra}---\n\n# {title}\n"
    )
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n- file: summary\n- file: work\n"
    )
    (tmp_path / "index.md").write_text("# Index\n")
    (tmp_path / "summary.md").write_text(
        front.format(extra="rnnlib:\n  execute: last\n", title="Summary")
    )
    (tmp_path / "work.md").write_text(front.format(extra="", title="Work"))
    assert list(book_chapters(tmp_path)) == ["work", "summary"]
    (tmp_path / "summary.md").write_text(
        front.format(extra="rnnlib:\n  execute: first\n", title="Summary")
    )
    with pytest.raises(ValueError, match="summary.md"):
        book_chapters(tmp_path)


def test_record_all_records_each_check_in_turn_and_glues_the_verdicts_asked_for(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    texts = []
    ch = SimpleNamespace(
        name="rnnsearch",
        profile="smoke",
        config_hash="0",
        figures_dir=tmp_path / "figures",
        text=lambda k, v: texts.append((k, v)),
    )
    checks = [
        claims.ClaimCheck(
            "C-B-T1-1",
            verdicts.controlled(
                verdicts.intervals_above([("a − b", 1.0, 0.5, 1.5)]),
                "a against itself",
                verdicts.intervals_above([("a − a", 0.0, 0.0, 0.0)]),
            ),
            "g1",
            "x: ",
        ),
        claims.ClaimCheck("C-B-T1-2", verdicts.not_measurable("no data")),
    ]
    claims.record_all(ch, checks)
    assert [k for k, _ in texts] == ["claim-C-B-T1-1", "g1", "claim-C-B-T1-2"]
    assert texts[1][1] == "x: " + texts[0][1]
    saved = json.loads((tmp_path / "results" / "claims" / "rnnsearch.json").read_text())
    assert [e["claim"] for e in saved] == ["C-B-T1-1", "C-B-T1-2"]


# -- each rule at its boundaries (the verdicts follow the rules' documented meaning) -------------
def _v(check) -> str:
    return verdicts.evaluate(check).verdict


def test_an_interval_ending_exactly_at_zero_is_inside_the_noise():
    # "holds when every interval lies above 0, does not hold when one lies below 0": an end at 0
    # is neither
    assert _v(verdicts.intervals_above([("a", 1.0, 0.0, 2.0)])) == verdicts.NOISE
    assert _v(verdicts.intervals_above([("a", -1.0, -2.0, 0.0)])) == verdicts.NOISE
    assert _v(verdicts.intervals_above([("a", 1.0, 1e-12, 2.0)])) == verdicts.HOLDS
    assert _v(verdicts.intervals_above([("a", -1.0, -2.0, -1e-12)])) == verdicts.FAILS


def test_the_seeds_rule_uses_the_t_quantile_of_welchs_degrees_of_freedom():
    from scipy.stats import t

    # a = [1, 3], b = [0, 0]: difference 2, standard error 1, Welch's df 1: t(0.975, 1) = 12.71
    q = t.ppf(0.975, 1)
    assert _v(verdicts.seeds_above([1.0, 3.0], [0.0, 0.0], "x")) == verdicts.NOISE
    # twice the standard error is not enough with two runs (it was the old rule's bar)
    assert _v(verdicts.seeds_above([11.0, 13.0], [0.0, 0.0], "x")) == verdicts.NOISE  # 12 < 12.71
    assert _v(verdicts.seeds_above([q + 0.01 - 1, q + 0.01 + 1], [0.0, 0.0], "x")) == verdicts.HOLDS
    assert _v(verdicts.seeds_above([0.0, 0.0], [q + 0.01 - 1, q + 0.01 + 1], "x")) == verdicts.FAILS
    assert _v(verdicts.seeds_above([q - 0.01 - 1, q - 0.01 + 1], [0.0, 0.0], "x")) == verdicts.NOISE
    # three runs against three with equal spreads: df 4, the quantile 2.78 (not 2, not 4.3)
    a, b = [2.0, 3.0, 4.0], [0.0, 1.0, 2.0]  # difference 2, se sqrt(2/3) = 0.816
    assert abs(stats_t_quantile(a, b) - t.ppf(0.975, 4)) < 1e-9
    assert _v(verdicts.seeds_above(a, b, "x")) == verdicts.NOISE  # 2 < 2.78 * 0.816 = 2.27
    assert _v(verdicts.seeds_above([x + 0.3 for x in a], b, "x")) == verdicts.HOLDS


def stats_t_quantile(a, b):
    from rnnlib.stats import t_quantile

    return t_quantile(a, b)


def test_a_value_equal_to_its_threshold_meets_it():
    assert _v(verdicts.at_least(70.0, 70.0, "m")) == verdicts.HOLDS
    assert _v(verdicts.at_most(0.5, 0.5, "r")) == verdicts.HOLDS
    assert _v(verdicts.at_least(69.99, 70.0, "m")) == verdicts.FAILS
    assert _v(verdicts.at_most(0.5001, 0.5, "r")) == verdicts.FAILS
    # an interval with an end at the threshold includes it: inside the noise
    assert _v(verdicts.at_least(75.0, 70.0, "m", low=70.0, high=80.0)) == verdicts.NOISE
    assert _v(verdicts.at_most(0.45, 0.5, "r", low=0.4, high=0.5)) == verdicts.NOISE
    assert _v(verdicts.at_least(75.0, 70.0, "m", low=70.001, high=80.0)) == verdicts.HOLDS


def test_at_most_does_not_hold_above_and_is_inside_the_noise_across_its_threshold():
    assert _v(verdicts.at_most(0.6, 0.5, "r")) == verdicts.FAILS
    assert _v(verdicts.at_most(0.6, 0.5, "r", low=0.55, high=0.7)) == verdicts.FAILS
    assert _v(verdicts.at_most(0.3, 0.5, "r", low=0.2, high=0.4)) == verdicts.HOLDS
    assert _v(verdicts.at_most(0.45, 0.5, "r", low=0.4, high=0.6)) == verdicts.NOISE
    assert _v(verdicts.at_most(0.55, 0.5, "r", low=0.4, high=0.6)) == verdicts.NOISE


def test_all_true_on_no_observations_is_not_measurable():
    v = verdicts.evaluate(verdicts.all_true([]))
    assert v.verdict == verdicts.UNMEASURABLE and v.reason == "nothing was observed"


NAN = float("nan")


def test_a_nan_measurement_is_never_evidence_for_a_claim():
    assert _v(verdicts.at_least(NAN, 70.0, "m")) == verdicts.UNMEASURABLE
    assert _v(verdicts.at_most(NAN, 0.5, "r")) == verdicts.UNMEASURABLE
    assert _v(verdicts.at_most(float("inf"), 0.5, "r")) == verdicts.UNMEASURABLE
    for a, b in (([NAN, 20.0], [19.0, 19.1]), ([20.0, 20.1], [NAN, 19.0])):
        assert _v(verdicts.seeds_above(a, b, "x")) not in (verdicts.HOLDS, verdicts.FAILS)
    assert _v(verdicts.intervals_above([("a", NAN, NAN, NAN)])) != verdicts.HOLDS
    assert (
        _v(verdicts.intervals_above([("a", 1.0, 0.5, 1.5), ("b", NAN, NAN, NAN)])) != verdicts.HOLDS
    )
    # a NaN where a yes/no belongs (bool(nan) is True) is not observed, and never a yes
    for nan in (NAN, np.float64("nan"), np.float32("nan")):
        v = verdicts.evaluate(verdicts.all_true([("x", True), ("y", nan)]))
        assert v.verdict == verdicts.UNMEASURABLE and "y" in v.reason
    # a "no" beside it still decides: the claim does not hold
    assert _v(verdicts.all_true([("x", False), ("y", NAN)])) == verdicts.FAILS


def test_a_nan_difference_or_upper_end_beside_a_positive_lower_end_does_not_hold():
    for tests in ([("a", NAN, 0.5, 1.5)], [("a", 1.0, 0.5, NAN)], [("a", 1.0, NAN, 1.5)]):
        v = verdicts.evaluate(verdicts.intervals_above(tests))
        assert v.verdict == verdicts.UNMEASURABLE and "NaN" in v.reason
        assert _v(verdicts.within_margin(tests, 0.5)) == verdicts.UNMEASURABLE
    # an interval with one end missing is not an interval
    assert _v(verdicts.at_least(75.0, 70.0, "m", low=NAN, high=80.0)) == verdicts.UNMEASURABLE


# -- controls and floors ---------------------------------------------------------------------------
def _holding():
    return verdicts.intervals_above([("trained − untrained", 2.0, 1.0, 3.0)])


def test_a_control_that_does_not_hold_leaves_the_verdict_and_is_reported_beside_it():
    check = verdicts.controlled(
        _holding(), "two identical systems", verdicts.intervals_above([("a − a", 0.0, 0.0, 0.0)])
    )
    v = verdicts.evaluate(check)
    assert v.verdict == verdicts.HOLDS
    assert v.control == verdicts.NOISE and "a − a" in v.control_reason


def test_a_control_that_holds_makes_the_claim_not_measurable_naming_it():
    control = verdicts.intervals_above([("untrained − chance", 0.5, 0.1, 0.9)])
    v = verdicts.evaluate(verdicts.controlled(_holding(), "the untrained network", control))
    assert v.verdict == verdicts.UNMEASURABLE and v.control == verdicts.HOLDS
    assert "the untrained network" in v.reason and "cannot tell" in v.reason
    assert "holds" in v.reason  # what the rule said on the evidence stays readable
    # the same holds for a failing or noisy claim: the rule cannot be read either way
    failing = verdicts.intervals_above([("x", -2.0, -3.0, -1.0)])
    assert _v(verdicts.controlled(failing, "c", control)) == verdicts.UNMEASURABLE


def test_a_control_must_apply_the_claims_own_rule():
    with pytest.raises(ValueError, match="own rule"):
        verdicts.controlled(_holding(), "c", verdicts.at_least(1.0, 0.0, "m"))


def test_below_the_floor_is_not_measurable_with_the_floor_and_the_value():
    check = verdicts.floored(
        _holding(), [("RNNencdec-50", 0.92), ("RNNsearch-50", 10.3)], 3, "BLEU"
    )
    v = verdicts.evaluate(check)
    assert v.verdict == verdicts.UNMEASURABLE
    assert "3 BLEU" in v.reason and "RNNencdec-50 0.92" in v.reason
    assert "RNNsearch-50" not in v.reason  # only what is under the floor is named
    above = verdicts.floored(_holding(), [("a", 3.0), ("b", 10.0)], 3, "BLEU")
    assert _v(above) == verdicts.HOLDS  # the floor itself is reached
    assert _v(verdicts.floored(_holding(), [("a", NAN)], 3, "BLEU")) == verdicts.UNMEASURABLE
    assert _v(verdicts.floored(_holding(), [], 3, "BLEU")) == verdicts.UNMEASURABLE


def test_a_measurable_counterexample_refutes_a_claim_about_every_system_under_the_floor():
    """With ``reads``, a claim about every system is judged on the systems above the floor:
    one that fails refutes it; if they all hold, the claim stays not measurable and says so."""
    tests = [("enc: No UNK − All", 0.1, -0.2, 0.4), ("search: No UNK − All", -2.0, -3.0, -1.0)]
    values = [("enc, All", 0.9), ("enc, No UNK", 1.0), ("search, All", 12), ("search, No UNK", 9)]
    reads = [[tests[0][0]]] * 2 + [[tests[1][0]]] * 2
    control = verdicts.intervals_above([(t[0], 0.0, -0.5, 0.5) for t in tests])

    def check(t, with_reads=True):
        c = verdicts.controlled(verdicts.intervals_above(t), "random subsets", control)
        return verdicts.floored(c, values, 3, "BLEU", reads=reads if with_reads else None)

    v = verdicts.evaluate(check(tests))
    assert v.verdict == verdicts.FAILS
    assert "search: No UNK − All: -2.00" in v.reason and "enc, All 0.9" in v.reason
    assert "enc: No UNK − All" not in v.reason.split("refuted")[0]  # judged without it
    # without reads the floor decides alone, as before
    assert verdicts.evaluate(check(tests, with_reads=False)).verdict == verdicts.UNMEASURABLE
    # the system above the floor holds: not measurable, saying what the rule found above it
    holding = [tests[0], ("search: No UNK − All", 2.0, 1.0, 3.0)]
    v = verdicts.evaluate(check(holding))
    assert v.verdict == verdicts.UNMEASURABLE and "above the floor alone it says holds" in v.reason
    # a control that holds still makes the rule unable to refute
    ctrl_holds = verdicts.intervals_above([(t[0], 1.0, 0.5, 1.5) for t in tests])
    c = verdicts.controlled(verdicts.intervals_above(tests), "random subsets", ctrl_holds)
    v = verdicts.evaluate(verdicts.floored(c, values, 3, "BLEU", reads=reads))
    assert v.verdict == verdicts.UNMEASURABLE
    # every test under the floor: nothing left to judge
    low = [(label, 1.0) for label, _ in values]
    v = verdicts.evaluate(
        verdicts.floored(verdicts.intervals_above(tests), low, 3, "BLEU", reads=reads)
    )
    assert v.verdict == verdicts.UNMEASURABLE and "above the floor alone" not in v.reason
    # reads must match the values and name the check's own tests, on a separable rule
    with pytest.raises(ValueError, match="2 lists of tests read for 4"):
        verdicts.floored(verdicts.intervals_above(tests), values, 3, "BLEU", reads=reads[2:])
    with pytest.raises(ValueError, match="lacks"):
        verdicts.floored(verdicts.intervals_above(tests), values, 3, "BLEU", reads=[["x"]] * 4)
    with pytest.raises(ValueError, match="not 'at_least'"):
        verdicts.floored(verdicts.at_least(1.0, 0.0, "m"), [("a", 5.0)], 3, "BLEU", reads=[["m"]])
    # the control is judged on the same tests: one that holds there makes a failure unusable,
    # however the control fares on the tests under the floor
    ctrl_mixed = verdicts.intervals_above(
        [(tests[0][0], 0.0, -0.5, 0.5), (tests[1][0], 1, 0.5, 1.5)]
    )
    c = verdicts.controlled(verdicts.intervals_above(tests), "random subsets", ctrl_mixed)
    v = verdicts.evaluate(verdicts.floored(c, values, 3, "BLEU", reads=reads))
    assert v.verdict == verdicts.UNMEASURABLE and "also holds on the control there" in v.reason
    # a test above the floor without a value is no evidence, and hides no failure
    nan = [tests[0], tests[1], ("other: No UNK − All", float("nan"), 0.0, 1.0)]
    more = [*values, ("other, All", 10.0)]
    v = verdicts.evaluate(
        verdicts.floored(
            verdicts.intervals_above(nan), more, 3, "BLEU", reads=[*reads, [nan[2][0]]]
        )
    )
    assert v.verdict == verdicts.FAILS and "other" not in v.reason.split(":")[0]
    # every test must be read by some floored value, or it would be judged unfloored
    with pytest.raises(ValueError, match="no floored value is read by"):
        verdicts.floored(verdicts.intervals_above(tests), values[:2], 3, "BLEU", reads=reads[:2])
    # the reads survive the record's round trip
    rec = verdicts.Check.from_dict(asdict(check(tests)))
    assert rec == check(tests) and verdicts.evaluate(rec).verdict == verdicts.FAILS


def test_within_margin_is_an_equivalence_rule():
    m = 0.5
    inside = [("penalty − none", 0.1, -0.3, 0.4)]
    assert _v(verdicts.within_margin(inside, m)) == verdicts.HOLDS
    assert _v(verdicts.within_margin([("x", 1.2, 0.8, 1.6)], m)) == verdicts.FAILS
    assert _v(verdicts.within_margin([("x", -1.2, -1.6, -0.8)], m)) == verdicts.FAILS
    assert _v(verdicts.within_margin([("x", 0.3, -0.2, 0.8)], m)) == verdicts.NOISE
    # one-sided ("does not improve"): a large loss still does not improve
    assert _v(verdicts.within_margin([("x", -1.2, -1.6, -0.8)], m, side="above")) == verdicts.HOLDS
    assert _v(verdicts.within_margin([("x", 1.2, 0.8, 1.6)], m, side="above")) == verdicts.FAILS
    assert _v(verdicts.within_margin([("x", 0.3, -0.2, 0.8)], m, side="above")) == verdicts.NOISE
    with pytest.raises(ValueError, match="side"):
        verdicts.within_margin(inside, m, side="below")
    # an interval too wide to fit the margin even around 0 says the data are too few
    wide = verdicts.evaluate(verdicts.within_margin([("x", 0.1, -0.9, 1.1)], m, side="above"))
    assert wide.verdict == verdicts.NOISE and "too few data for the margin" in wide.reason
    wide = verdicts.evaluate(verdicts.within_margin([("x", 0.1, -0.9, 1.1)], m))
    assert wide.verdict == verdicts.NOISE and "too few data for the margin" in wide.reason
    narrow = verdicts.evaluate(verdicts.within_margin([("x", 0.3, -0.2, 0.8)], m))
    assert "reaches past the margin" in narrow.reason and "too few" not in narrow.reason


def test_bookkeeping_is_recorded_not_held_and_fails_when_a_record_is_missing():
    v = verdicts.evaluate(verdicts.bookkeeping([("updates", True), ("dev NLL", True)]))
    assert v.verdict == verdicts.RECORDED and v.verdict != verdicts.HOLDS
    v = verdicts.evaluate(verdicts.bookkeeping([("updates", True), ("dev NLL", False)]))
    assert v.verdict == verdicts.FAILS and "dev NLL" in v.reason


def test_record_refuses_a_check_without_a_control(tmp_path, monkeypatch):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    with pytest.raises(ValueError, match="C-B-T1-1.*no control"):
        claims.record(_chapter(tmp_path), "C-B-T1-1", _holding())
    # checks that judge nothing need none
    claims.record(_chapter(tmp_path), "C-B-T2-4", verdicts.bookkeeping([("x", True)]))


def test_control_and_floor_round_trip_through_the_record_and_reach_the_ledger(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    control = verdicts.intervals_above([("a − a", 0.0, 0.0, 0.0)])
    check = verdicts.floored(
        verdicts.controlled(_holding(), "two identical systems", control),
        [("RNNsearch-50", 10.0)],
        3,
        "BLEU",
        "every system the claim reads",
    )
    claims.record(_chapter(tmp_path), "C-B-T1-1", check)
    (rec,) = claims.load_checks(tmp_path / "results")
    assert rec.check == check and rec.verdict.control == verdicts.NOISE
    row = {r["claim"]: r for r in claims.ledger(tmp_path / "results")}["C-B-T1-1"]
    assert row["verdict"] == verdicts.HOLDS and row["control_verdict"] == verdicts.NOISE
    assert "two identical systems" in row["control"] and "3 BLEU" in row["floor"]


def _rebuild(diff: float, control: float = 0.0, floor_value: float = 5.0) -> verdicts.Check:
    """One rebuild's check: a difference with a narrow interval, its control, and a floor."""
    check = verdicts.intervals_above([("gap", diff, diff - 0.5, diff + 0.5)])
    ctrl = verdicts.intervals_above([("gap", control, control - 0.5, control + 0.5)])
    check = verdicts.controlled(check, "untrained", ctrl)
    return verdicts.floored(check, [("learned", floor_value)], 1.0, "nats")


def test_a_verdict_that_a_rebuild_flips_is_inside_the_noise():
    agree = verdicts.across_rebuilds([(f"alignment {k}", _rebuild(2.0)) for k in (1, 2, 3)])
    verdict = verdicts.evaluate(agree)
    assert verdict.verdict == verdicts.HOLDS and "each of 3 rebuilds" in verdict.reason
    assert agree.rebuilds == "judged on each of 3: alignment 1, alignment 2, alignment 3"
    flipped = verdicts.across_rebuilds(
        [("alignment 1", _rebuild(2.0)), ("alignment 2", _rebuild(-2.0))]
    )
    verdict = verdicts.evaluate(flipped)
    assert verdict.verdict == verdicts.NOISE
    assert "alignment 1: holds" in verdict.reason and "alignment 2: does not hold" in verdict.reason
    # each rebuild's floor and control still apply: one below the floor makes the verdicts differ
    floored = verdicts.across_rebuilds(
        [("a1", _rebuild(2.0)), ("a2", _rebuild(2.0, floor_value=0))]
    )
    assert verdicts.evaluate(floored).verdict == verdicts.NOISE
    # the controls of every rebuild holding: not measurable, by the inner and the outer control
    lucky = verdicts.across_rebuilds([(k, _rebuild(2.0, control=2.0)) for k in ("a1", "a2")])
    assert verdicts.evaluate(lucky).verdict == verdicts.UNMEASURABLE


def test_across_rebuilds_survives_the_json_record_and_needs_every_control():
    check = verdicts.across_rebuilds([("a1", _rebuild(2.0)), ("a2", _rebuild(-2.0))])
    again = verdicts.Check.from_dict(json.loads(json.dumps(asdict(check))))
    assert verdicts.evaluate(again) == verdicts.evaluate(check)
    bare = verdicts.intervals_above([("gap", 2.0, 1.5, 2.5)])
    with pytest.raises(ValueError, match="a2 has no control"):
        verdicts.across_rebuilds([("a1", _rebuild(2.0)), ("a2", bare)])


def test_compare_reads_each_rebuilds_evidence():
    from rnnlib.book.compare import evidence_numbers

    check = verdicts.across_rebuilds([("a1", _rebuild(2.0)), ("a2", _rebuild(-1.0))])
    numbers = evidence_numbers(asdict(check))
    assert numbers["a1: gap"] == (2.0, (1.5, 2.5, "95% interval"))
    assert numbers["a2: gap"][0] == -1.0


def test_all_parts_holds_only_when_every_part_holds_and_fails_when_one_fails():
    from rnnlib import verdicts as v

    def part(low, ctrl_low=-1.0):
        return v.controlled(
            v.intervals_above([("d", low + 1, low, low + 2)]),
            "identical",
            v.intervals_above([("d", 0.0, ctrl_low, 1.0)]),
        )

    assert v.evaluate(v.all_parts([("a", part(1.0)), ("b", part(0.5))])).verdict == v.HOLDS
    one_fails = v.all_parts([("a", part(1.0)), ("b", part(-5.0))])
    assert v.evaluate(one_fails).verdict == v.FAILS
    noisy = v.all_parts([("a", part(1.0)), ("b", part(-1.0))])
    assert v.evaluate(noisy).verdict == v.NOISE
    blind = v.all_parts([("a", part(1.0)), ("b", part(1.0, ctrl_low=0.5))])  # b's control holds
    assert v.evaluate(blind).verdict == v.UNMEASURABLE
    with pytest.raises(ValueError, match="no control"):
        v.all_parts([("a", v.intervals_above([("d", 1.0, 0.5, 1.5)]))])


def test_the_books_own_observations_are_claims_of_the_catalogue():
    assert claims.OWN_OBSERVATIONS <= set(claims.CLAIMS)
    assert claims.is_own("C-B-F3-4") and not claims.is_own("C-B-F3-3")
    assert "own observation" in claims.CLAIMS["C-B-F3-4"][2]
    with pytest.raises(ValueError):
        claims.is_own("C-B-F9-9")
