"""The claims ledger: rules decide verdicts from evidence, records round-trip, edited evidence
changes the verdict."""

import json
from types import SimpleNamespace

import pytest

from rnnlib.book import claims


def test_intervals_rule_reports_noise_not_holding():
    assert claims.evaluate(claims.intervals_above([("a", 1.0, 0.2, 1.8)])).verdict == claims.HOLDS
    assert claims.evaluate(claims.intervals_above([("a", 1.0, -0.1, 1.8)])).verdict == claims.NOISE
    assert (
        claims.evaluate(
            claims.intervals_above([("a", 1.0, 0.2, 1.8), ("b", -1.0, -1.5, -0.5)])
        ).verdict
        == claims.FAILS
    )
    assert claims.evaluate(claims.intervals_above([])).verdict == claims.UNMEASURABLE


def test_seeds_rule_needs_two_runs_and_uses_the_standard_error():
    assert claims.evaluate(claims.seeds_above([20.0], [19.0], "x")).verdict == claims.UNMEASURABLE
    assert (
        claims.evaluate(claims.seeds_above([20.0, 20.2, 20.1], [19.0, 19.1, 18.9], "x")).verdict
        == claims.HOLDS
    )
    # a 0.3 gain with a spread of about 1 BLEU between runs is inside the noise
    v = claims.evaluate(claims.seeds_above([20.0, 21.0, 19.5], [19.5, 20.5, 19.6], "x"))
    assert v.verdict == claims.NOISE and "standard error" in v.reason
    assert (
        claims.evaluate(claims.seeds_above([18.0, 18.1], [20.0, 20.1], "x")).verdict == claims.FAILS
    )


def test_threshold_rules():
    assert claims.evaluate(claims.at_least(80, 70, "m")).verdict == claims.HOLDS
    assert claims.evaluate(claims.at_least(60, 70, "m")).verdict == claims.FAILS
    assert claims.evaluate(claims.at_least(72, 70, "m", low=65, high=79)).verdict == claims.NOISE
    assert claims.evaluate(claims.at_most(0.3, 0.5, "r")).verdict == claims.HOLDS
    assert claims.evaluate(claims.at_least(float("nan"), 1, "m")).verdict == claims.UNMEASURABLE
    assert claims.evaluate(claims.all_true([("x", True), ("y", False)])).verdict == claims.FAILS
    assert claims.evaluate(claims.all_true([("x", True)])).verdict == claims.HOLDS


def test_unknown_rule_and_claim_are_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown claim rule"):
        claims.evaluate(claims.Check("bogus", {}))
    ch = _chapter(tmp_path)
    with pytest.raises(ValueError, match="C-X-1"):
        claims.record(ch, "C-X-1", claims.not_measurable("x"))


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
    v = claims.record(ch, "C-B-T1-1", claims.intervals_above([("search − encdec", 2.0, 1.0, 3.0)]))
    claims.record(ch, "C-B-T1-4", claims.all_true([("RNNsearch-50", True)]))
    assert v.verdict == claims.HOLDS and ch.glued["claim-C-B-T1-1"].startswith("**holds**")
    path = tmp_path / "results" / "claims" / "demo.json"
    rows = {r["claim"]: r for r in claims.ledger(tmp_path / "results")}
    assert set(rows) == set(claims.CLAIMS) and len(rows) == 36
    assert rows["C-B-T1-1"]["verdict"] == claims.HOLDS and rows["C-B-T1-1"]["chapter"] == "demo"
    assert (
        rows["C-A-T1-1"]["verdict"] == claims.UNMEASURABLE and rows["C-A-T1-1"]["chapter"] is None
    )
    # edit a number of the recorded evidence: the ledger's verdict follows it
    entries = json.loads(path.read_text(encoding="utf-8"))
    entries[0]["check"]["evidence"]["tests"][0][1:] = [-2.0, -3.0, -1.0]
    path.write_text(json.dumps(entries), encoding="utf-8")
    assert {r["claim"]: r for r in claims.ledger(tmp_path / "results")}["C-B-T1-1"][
        "verdict"
    ] == claims.FAILS


def test_a_rerun_of_the_chapter_starts_its_record_afresh(tmp_path, monkeypatch):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    claims.record(_chapter(tmp_path), "C-B-T1-1", claims.not_measurable("first run"))
    claims.record(_chapter(tmp_path), "C-B-T1-2", claims.not_measurable("second run"))
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
            "C-B-T1-1", claims.intervals_above([("a − b", 1.0, 0.5, 1.5)]), "g1", "x: "
        ),
        claims.ClaimCheck("C-B-T1-2", claims.not_measurable("no data")),
    ]
    claims.record_all(ch, checks)
    assert [k for k, _ in texts] == ["claim-C-B-T1-1", "g1", "claim-C-B-T1-2"]
    assert texts[1][1] == "x: " + texts[0][1]
    saved = json.loads((tmp_path / "results" / "claims" / "rnnsearch.json").read_text())
    assert [e["claim"] for e in saved] == ["C-B-T1-1", "C-B-T1-2"]
