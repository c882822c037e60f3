"""The ledger when two chapters record the same claim: an error naming both, not the last file
read winning silently; one chapter recording a claim twice keeps its last check."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rnnlib import verdicts
from rnnlib.book import claims


def _chapter(tmp_path, name: str):
    glued = {}
    return SimpleNamespace(
        name=name,
        profile="smoke",
        config_hash="abcd1234",
        figures_dir=tmp_path / "figures",
        text=lambda glue, md: glued.__setitem__(glue, md),
    )


def _check(diff: float):
    same = verdicts.intervals_above([("a − a", 0.0, 0.0, 0.0)])
    test = verdicts.intervals_above([("a − b", diff, diff - 1, diff + 1)])
    return verdicts.controlled(test, "a against itself", same)


def test_a_claim_recorded_by_two_chapters_is_an_error_naming_both(tmp_path, monkeypatch):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    claims.record(_chapter(tmp_path, "rnnsearch"), "C-B-T1-1", _check(3.0))
    claims.record(_chapter(tmp_path, "baseline"), "C-B-T1-1", _check(-3.0))
    with pytest.raises(ValueError, match="C-B-T1-1 is recorded by the chapters baseline and "):
        claims.ledger(tmp_path / "results")


def test_one_chapter_recording_a_claim_twice_keeps_its_last_check(tmp_path, monkeypatch):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    ch = _chapter(tmp_path, "rnnsearch")
    claims.record(ch, "C-B-T1-1", _check(-3.0))
    claims.record(ch, "C-B-T1-1", _check(3.0))
    row = {r["claim"]: r for r in claims.ledger(tmp_path / "results")}["C-B-T1-1"]
    assert row["verdict"] == verdicts.HOLDS and row["chapter"] == "rnnsearch"
