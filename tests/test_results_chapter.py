"""The results chapter on the smoke build: every item and every claim has a row, each verdict is computed
from recorded evidence, and editing that evidence changes the verdict."""
import json
import shutil

import pytest

from rnnlib.book import claims, glance

pytestmark = pytest.mark.slow


def test_every_claim_has_a_computed_verdict(smoke_book):
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = claims.ledger(out / "results")
    assert [r["claim"] for r in rows] == list(claims.CLAIMS)
    assert all(r["verdict"] in claims.VERDICTS for r in rows)
    recorded = {rec.claim for rec in claims.load_checks(out / "results")}
    # the chapters of paper B record every claim of paper B
    assert {c for c in claims.CLAIMS if c.startswith("C-B-")} <= recorded
    missing = [c for c in claims.CLAIMS if c not in recorded]
    assert len(missing) <= 17, f"claims no chapter records: {missing}"


def test_editing_the_evidence_changes_the_verdict(smoke_book, tmp_path):
    out, _ = smoke_book
    folder = tmp_path / "results"
    shutil.copytree(out / "results", folder)
    path = folder / "claims" / "rnnsearch.json"
    entries = json.loads(path.read_text(encoding="utf-8"))
    entry = next(e for e in entries if e["claim"] == "C-B-T1-1")
    assert entry["check"]["rule"] == "intervals_above"

    def verdict_with(diff, low, high):
        for test in entry["check"]["evidence"]["tests"]:
            test[1:] = [diff, low, high]
        path.write_text(json.dumps(entries), encoding="utf-8")
        return {r["claim"]: r for r in claims.ledger(folder)}["C-B-T1-1"]["verdict"]

    assert verdict_with(3.0, 2.0, 4.0) == claims.HOLDS
    assert verdict_with(-3.0, -4.0, -2.0) == claims.FAILS
    assert verdict_with(0.5, -0.5, 1.5) == claims.NOISE


def test_the_results_page_shows_every_item_and_claim(smoke_book):
    out, _ = smoke_book
    html = (out / "_build" / "html" / "chapters" / "results.html").read_text(encoding="utf-8")
    for item in glance.ITEMS:
        assert f">{item.id}<" in html or f"{item.id} " in html, f"item {item.id} is not on the results page"
    for claim in claims.CLAIMS:
        assert claim in html, f"claim {claim} is not on the results page"
    # the page executed after the chapters whose records it reads: no item says its chapter did not run
    assert "did not run in this build" not in html
