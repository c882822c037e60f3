"""``rnnlib compare`` on a build where two chapters recorded the same claim: a warning naming
both (the ledger refuses such a build), not a silent choice."""

from __future__ import annotations

from rnnlib.book import compare as C
from test_compare import claim_record, number, write_build


def test_a_claim_recorded_by_two_chapters_is_a_warning_naming_both(tmp_path):
    ev = {"tests": [["a − b", 2.0, 1.0, 3.0]]}
    records = {
        "baseline": [claim_record("C-B-T1-1", "baseline", "intervals_above", ev, "holds")],
        "rnnsearch": [claim_record("C-B-T1-1", "rnnsearch", "intervals_above", ev, "holds")],
    }
    entries = [number("baseline", "x", 1.0), number("rnnsearch", "y", 1.0)]
    both = write_build(tmp_path / "both", entries, records)
    one = write_build(tmp_path / "one", entries, {"rnnsearch": records["rnnsearch"]})
    c = C.compare(one, both)
    assert not c.old.warnings
    assert any(
        "C-B-T1-1 is recorded by the chapters baseline and rnnsearch" in w for w in c.new.warnings
    ), c.new.warnings
