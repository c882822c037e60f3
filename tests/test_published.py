"""``rnnlib publish`` and the published reference: written from small hand-made build folders,
refused for a partial or mixed build, compared with later builds (by ``rnnlib compare`` and by
the results page), and a build of another profile not compared."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

import pytest

from rnnlib import cli
from rnnlib.book import compare as C
from rnnlib.book import execute, glance
from rnnlib.book import published as P

CHAPTERS = ["data", "rns", "results"]
COMMIT = "a" * 40
NOW = datetime(2026, 11, 28, 20, 0, tzinfo=timezone.utc)
MACHINE = "Intel Xeon (avx2, fma; 2 CPUs)"


def entry(chapter, name, kind, value, profile="cpu", commit=COMMIT):
    return {
        "name": name,
        "kind": kind,
        "value": value,
        "stable_name": f"{chapter}-{name}-{profile}-cccc0000",
        "chapter": chapter,
        "profile": profile,
        "config_hash": "cccc0000",
        "commit": commit,
        "files": [],
        "artifacts": [{"kind": f"{chapter}/model", "key": "k1"}],
    }


def claim(name, chapter, d, low, high, verdict, profile="cpu"):
    return {
        "claim": name,
        "chapter": chapter,
        "profile": profile,
        "config_hash": "cccc0000",
        "check": {"rule": "intervals_above", "evidence": {"tests": [["A − B", d, low, high]]}},
        "verdict": {"verdict": verdict, "reason": f"reason of {verdict}"},
        "build": {"id": "b1", "started": "2026-11-28T18:00:00+00:00", "commit": COMMIT},
    }


def claim_of(record: dict, build_id: str) -> list[dict]:
    """``record`` as the data chapter's, recorded by the build ``build_id``."""
    return [record | {"chapter": "data", "build": record["build"] | {"id": build_id}}]


def cost_table():
    return {
        "index": ["data", "rns"],
        "columns": ["artifacts", "computed on"],
        "data": [[1, MACHINE], [2, MACHINE + "; 1 torch thread"]],
        "index_names": ["chapter"],
        "column_names": [None],
    }


def make_build(
    out: Path,
    gap: float = 2.0,
    verdict: str = "holds",
    profiles: dict | None = None,
    machine: str = MACHINE,
    log: list[tuple] | None = None,
    skip: tuple = (),
) -> Path:
    """A build output folder as ``rnnlib build`` leaves it: chapters data, rns and results, each
    with its record file and its executed notebook (papermill's metadata), rns with a claims
    record; ``profiles``: chapter -> profile (default cpu); ``log``: (kind, key, hit, seconds,
    chapter) lines of the build log; ``skip``: chapters the build did not run."""
    profiles = profiles or {}
    prof = {c: profiles.get(c, "cpu") for c in CHAPTERS}
    entries = {
        "data": [
            entry("data", "params", "params", {"profile": prof["data"]}, prof["data"]),
            entry("data", "pairs", "number", 100, prof["data"]),
        ],
        "rns": [
            entry("rns", "params", "params", {"profile": prof["rns"]}, prof["rns"]),
            entry("rns", "gap", "number", gap, prof["rns"]),
            entry("rns", "gap-low", "number", gap - 0.5, prof["rns"]),
            entry("rns", "gap-high", "number", gap + 0.5, prof["rns"]),
            entry("rns", "claim-C-B-T1-1", "text", f"**{verdict}** (reason)", prof["rns"]),
        ],
        "results": [
            entry("results", "params", "params", {"profile": prof["results"]}, prof["results"]),
            entry("results", "res-n-holds", "number", 1 if verdict == "holds" else 0),
            entry("results", "res-machine", "text", machine, prof["results"]),
            entry("results", "res-cost", "table", cost_table(), prof["results"]),
        ],
    }
    (out / "results" / "claims").mkdir(parents=True)
    (out / "src" / "chapters").mkdir(parents=True)
    for i, chapter in enumerate(c for c in CHAPTERS if c not in skip):
        (out / "results" / f"{chapter}.json").write_text(json.dumps(entries[chapter]))
        papermill = {
            "start_time": f"2026-11-28T18:0{i}:00+00:00",
            "end_time": f"2026-11-28T18:0{i}:30+00:00",
            "duration": 30.0,
            "exception": None,
        }
        notebook = {"cells": [], "metadata": {"papermill": papermill}}
        (out / "src" / "chapters" / f"{chapter}.ipynb").write_text(json.dumps(notebook))
    if "rns" not in skip:
        d = gap - 1.0  # the claim's evidence moves with the gap
        record = [claim("C-B-T1-1", "rns", d, d - 0.5, d + 0.5, verdict, prof["rns"])]
        (out / "results" / "claims" / "rns.json").write_text(json.dumps(record))
    log = log or [
        ("corpus/bible", "c1", False, 5.0, "data"),
        ("rns/model", "m1", False, 100.0, "rns"),
        ("corpus/bible", "c1", True, 0.1, "rns"),  # looked up again: a hit in the same build
    ]
    fields = ("kind", "key", "hit", "seconds", "chapter")
    (out / "build-log.jsonl").write_text(
        "".join(json.dumps(dict(zip(fields, line))) + "\n" for line in log)
    )
    return out


@pytest.fixture
def reference(tmp_path):
    build = make_build(tmp_path / "ref-build")
    to = tmp_path / "records" / "published"
    to.mkdir(parents=True)
    (to / "README.md").write_text("the reference\n")
    P.publish(build, to, CHAPTERS, now=NOW)
    return to


# -- publishing ------------------------------------------------------------------------------------
def test_publish_writes_the_records_the_log_and_the_manifest(tmp_path, reference):
    to = reference
    meta = json.loads((to / P.MANIFEST).read_text())
    assert (meta["profile"], meta["commit"], meta["chapters"]) == ("cpu", COMMIT, CHAPTERS)
    assert meta["machine"] == MACHINE
    assert meta["computed_on"] == {"data": MACHINE, "rns": MACHINE + "; 1 torch thread"}
    # the build's time: from the first chapter's start to the last chapter's end
    build = meta["build"]
    assert build["started"] == "2026-11-28T18:00:00+00:00"
    assert build["finished"] == "2026-11-28T18:02:30+00:00"
    assert build["seconds"] == 150.0 and build["ids"] == ["b1"]
    # every artifact once, its first lookup computing it: a build from empty
    assert meta["from_empty"] is True and meta["reused"] == []
    assert [(a["kind"], a["key"], a["chapter"], a["computed"]) for a in meta["artifacts"]] == [
        ("corpus/bible", "c1", "data", True),
        ("rns/model", "m1", "rns", True),
    ]
    assert meta["artifacts_computed"] == 2 and meta["artifact_seconds"] == 105.0
    assert meta["published"] == NOW.isoformat(timespec="seconds")
    # the claims records and the build log as the build wrote them, the README kept; the glued
    # values as recorded, without the provenance the manifest lists
    src = tmp_path / "ref-build"
    for rel in ("results/claims/rns.json", "build-log.jsonl"):
        assert (to / rel).read_bytes() == (src / rel).read_bytes(), rel
    recorded = json.loads((src / "results" / "rns.json").read_text())
    published = json.loads((to / "results" / "rns.json").read_text())
    assert any("artifacts" in e for e in recorded)
    assert published == [{k: v for k, v in e.items() if k != "artifacts"} for e in recorded]
    assert sorted(p.name for p in (to / "results").glob("*.json")) == [
        "data.json",
        "results.json",
        "rns.json",
    ]
    assert (to / "README.md").read_text() == "the reference\n"
    assert P.read_manifest(to) == meta and P.read_manifest(tmp_path) is None


def test_publishing_again_replaces_the_records(tmp_path, reference):
    (reference / "results" / "gone.json").write_text("[]")  # a chapter the book no longer has
    P.publish(make_build(tmp_path / "again", gap=5.0), reference, CHAPTERS, now=NOW)
    assert not (reference / "results" / "gone.json").exists()
    gap = [e for e in json.loads((reference / "results" / "rns.json").read_text())]
    assert {e["name"]: e["value"] for e in gap}["gap"] == 5.0


def test_a_build_reusing_artifacts_says_which(tmp_path):
    log = [
        ("corpus/bible", "c1", True, 0.1, "data"),  # in the cache before the build
        ("rns/model", "m1", False, 100.0, "rns"),
    ]
    meta = P.publish(make_build(tmp_path / "b", log=log), tmp_path / "to", CHAPTERS, now=NOW)
    assert meta["from_empty"] is False and meta["reused"] == ["corpus/bible/c1"]
    assert "reusing 1 artifacts" in P.summary(meta)
    assert meta["reused_from"] == []  # no cache given: origins unknown, not invented


def test_the_reused_artifacts_origins_come_from_their_sidecars(tmp_path):
    log = [
        ("corpus/bible", "c1", True, 0.1, "data"),
        ("rns/model", "m0", True, 0.0, "rns"),  # its sidecar is gone from the cache
        ("rns/model", "m1", False, 100.0, "rns"),
    ]
    cache = tmp_path / "cache"
    (cache / "corpus" / "bible" / "c1").mkdir(parents=True)
    sidecar = {
        "git_commit": "d4097bf9fae330a3397380f767ac242db3becaae",
        "created": "2026-11-28T21:51:00+00:00",
        "extra": {"seconds": 1234.56},
        "wall_time_s": 1300.0,
        "machine": {"processor": "Some CPU", "instructions": ["avx2"], "cpus": 2},
    }
    (cache / "corpus" / "bible" / "c1" / "meta.json").write_text(json.dumps(sidecar))
    out = make_build(tmp_path / "b", log=log)
    meta = P.publish(out, tmp_path / "to", CHAPTERS, now=NOW, cache=cache)
    first, second = meta["reused_from"]
    assert first == {
        "artifact": "corpus/bible/c1",
        "commit": sidecar["git_commit"],
        "created": sidecar["created"],
        "seconds": 1234.6,  # the computation's own seconds before the sidecar's wall time
        "machine": "Some CPU (avx2; 2 CPUs)",
    }
    assert second == {"artifact": "rns/model/m0", "sidecar": "not found in the cache"}
    assert "computed by commit d4097bf in 21 artifact-min" in P.summary(meta)
    stored = json.loads((tmp_path / "to" / P.MANIFEST).read_text())
    assert stored["reused_from"] == meta["reused_from"]


def test_the_build_record_gives_the_time_when_it_is_this_builds(tmp_path):
    out = make_build(tmp_path / "b")
    build = execute.Build("b1", "2026-11-28T17:59:00+00:00", COMMIT)
    execute.write_build_record(out, build, "cpu", 200.0)
    record = json.loads((out / P.BUILD_RECORD).read_text())
    assert record["id"] == "b1" and record["profile"] == "cpu" and record["seconds"] == 200.0
    assert "processor" in record["machine"]
    meta = P.manifest(out, *P.read_build(out, CHAPTERS), NOW)
    assert meta["build"]["seconds"] == 200.0 and meta["build"]["from"] == P.BUILD_RECORD
    assert meta["build"]["started"] == "2026-11-28T17:59:00+00:00"
    # a build record of another build (an earlier one) is not this build's time
    execute.write_build_record(out, execute.Build("b0", "x", COMMIT), "cpu", 9.0)
    assert P.manifest(out, *P.read_build(out, CHAPTERS), NOW)["build"]["seconds"] == 150.0


# -- refusing --------------------------------------------------------------------------------------
def test_a_partial_build_is_refused_naming_what_is_missing(tmp_path):
    out = make_build(tmp_path / "b", skip=("results",))
    running = out / "src" / "chapters" / "rns.ipynb"
    nb = json.loads(running.read_text())
    nb["metadata"]["papermill"]["end_time"] = None  # still running
    running.write_text(json.dumps(nb))
    failed = out / "src" / "chapters" / "data.ipynb"
    nb = json.loads(failed.read_text())
    nb["metadata"]["papermill"]["exception"] = True
    failed.write_text(json.dumps(nb))
    to = tmp_path / "to"
    with pytest.raises(P.Refused) as err:
        P.publish(out, to, CHAPTERS)
    text = str(err.value)
    assert "a partial build" in text
    assert "chapter results: no record file results.json" in text
    assert "chapter rns: its notebook did not finish" in text
    assert "chapter data: its notebook stopped with an error" in text
    assert not to.exists()  # nothing written


def test_a_build_mixing_profiles_or_commits_is_refused(tmp_path):
    out = make_build(tmp_path / "b", profiles={"rns": "smoke"})
    with pytest.raises(
        P.Refused, match=r"in different profiles: cpu \(data, results\), smoke \(rns\)"
    ):
        P.publish(out, tmp_path / "to", CHAPTERS)
    out = make_build(tmp_path / "c")
    data = json.loads((out / "results" / "data.json").read_text())
    (out / "results" / "data.json").write_text(json.dumps([e | {"commit": "b" * 40} for e in data]))
    with pytest.raises(P.Refused, match="in different commits"):
        P.publish(out, tmp_path / "to", CHAPTERS)
    out = make_build(tmp_path / "d")  # a chapter run again by itself: another build
    record = json.loads((out / "results" / "claims" / "rns.json").read_text())
    record[0]["build"]["id"] = "b2"
    (out / "results" / "claims" / "rns.json").write_text(json.dumps(record))
    (out / "results" / "claims" / "data.json").write_text(json.dumps(claim_of(record[0], "b1")))
    with pytest.raises(P.Refused, match=r"in different builds: b1 \(data\), b2 \(rns\)"):
        P.publish(out, tmp_path / "to", CHAPTERS)
    assert not (tmp_path / "to").exists()


def test_the_command_refuses_with_exit_2_and_publishes_with_0(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(execute, "book_chapters", lambda root: {c: None for c in CHAPTERS})
    partial = make_build(tmp_path / "partial", skip=("rns",))
    assert cli.main(["publish", str(partial), "--to", str(tmp_path / "to")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rnnlib publish: ") and "chapter rns: no record file" in err
    good = make_build(tmp_path / "good")
    assert cli.main(["publish", str(good), "--to", str(tmp_path / "to")]) == 0
    out = capsys.readouterr().out
    assert "profile cpu" in out and "from empty" in out and MACHINE in out
    assert (tmp_path / "to" / P.MANIFEST).is_file()


# -- comparing with the reference ------------------------------------------------------------------
def test_compare_reads_the_reference_and_finds_a_changed_verdict_and_a_number_beyond(
    tmp_path, reference, capsys
):
    same = make_build(tmp_path / "same")
    c = C.compare(reference, same)
    assert not c.verdicts_changed and c.old.reference["profile"] == "cpu"
    assert c.old.machine == MACHINE and c.old.commit == COMMIT
    moved = make_build(tmp_path / "moved", gap=-1.0, verdict="does not hold", machine="AMD EPYC")
    c = C.compare(reference, moved)
    claims = {x.claim: x for x in c.claims}
    assert (claims["C-B-T1-1"].old, claims["C-B-T1-1"].new) == ("holds", "does not hold")
    items = {i.id: i for i in c.items}
    assert items["gap"].status == C.BEYOND  # -1 is outside the reference's [1.5, 2.5]
    assert cli.main(["compare", str(reference), str(moved)]) == 1
    out = capsys.readouterr().out
    assert "the published reference: profile cpu" in out and "(from empty)" in out
    assert "ran on different machines" in out and "machine: AMD EPYC" in out
    # --brief: the changed verdicts and the numbers beyond their noise only
    assert cli.main(["compare", "--brief", str(reference), str(moved)]) == 1
    brief = capsys.readouterr().out
    assert "C-B-T1-1: holds -> does not hold" in brief and "gap: 2 -> -1" in brief
    assert "gap-low: " not in brief  # moved with no noise of its own: not in --brief


def test_a_build_of_another_profile_is_not_compared(tmp_path, reference, capsys):
    smoke = make_build(tmp_path / "smoke", profiles={c: "smoke" for c in CHAPTERS})
    with pytest.raises(C.OtherProfile, match="of profile cpu, the build .* of profile smoke"):
        C.compare(reference, smoke)
    assert cli.main(["compare", str(reference), str(smoke)]) == 3
    captured = capsys.readouterr()
    assert captured.out == "" and "rnnlib compare: not compared:" in captured.err
    mixed = make_build(tmp_path / "mixed", profiles={"rns": "smoke"})
    with pytest.raises(C.OtherProfile, match=r"mixes profiles \(cpu \(data, results\); smoke"):
        C.compare(reference, mixed)


def test_an_empty_reference_folder_says_nothing_is_published(tmp_path, capsys):
    folder = tmp_path / "records" / "published"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("the reference\n")
    assert cli.main(["compare", str(folder), str(make_build(tmp_path / "b"))]) == 2
    assert "no published reference yet" in capsys.readouterr().err


# -- the results page ------------------------------------------------------------------------------
def test_the_results_page_compares_this_build_with_the_reference(tmp_path, reference):
    moved = make_build(tmp_path / "moved", gap=-1.0, verdict="does not hold")
    r = glance.reference_comparison(reference, moved / "results", "cpu", "AMD EPYC")
    assert (r["verdicts"], r["beyond"]) == (1, 2)  # the gap and the claim's evidence
    lines = r["text"].splitlines()
    assert lines[0] == "| | the published reference | this build |"
    assert f"| machine | {MACHINE} | AMD EPYC |" in lines
    assert "| verdict of `C-B-T1-1` (rns) | **holds** | **does not hold** |" in lines
    assert any(
        x.startswith("| `gap` (rns) | 2 | -1 (beyond the old build's interval") for x in lines
    )
    assert "| claims' verdicts | 1 claims | 1 verdict differs |" in lines
    assert "| numbers beyond their noise | | 2 numbers |" in lines
    assert not any("res-n-holds" in x for x in lines)  # the page's own numbers left out
    # at most `limit` numbers listed, the rest counted
    r = glance.reference_comparison(reference, moved / "results", "cpu", "AMD", limit=1)
    assert "| 1 more numbers beyond their noise |" in r["text"]
    # the same build: nothing differs
    same = make_build(tmp_path / "same")
    r = glance.reference_comparison(reference, same / "results", "cpu", MACHINE)
    assert (r["verdicts"], r["beyond"]) == (0, 0)
    assert "| claims' verdicts | 1 claims | no verdict differs |" in r["text"]


def test_the_results_page_says_in_one_line_when_no_comparison_is_made(tmp_path, reference):
    smoke = make_build(tmp_path / "smoke", profiles={c: "smoke" for c in CHAPTERS})
    r = glance.reference_comparison(reference, smoke / "results", "smoke", MACHINE)
    assert r["text"] == (
        "The reference is of profile `cpu`, this build of `smoke`: no comparison is made."
    )
    assert math.isnan(r["verdicts"]) and math.isnan(r["beyond"])
    empty = tmp_path / "empty"
    empty.mkdir()
    r = glance.reference_comparison(empty, smoke / "results", "smoke", MACHINE)
    assert r["text"] == "No reference is published: no comparison is made."
    mixed = make_build(tmp_path / "mixed", profiles={"rns": "smoke"})
    r = glance.reference_comparison(reference, mixed / "results", "cpu", MACHINE)
    assert r["text"] == "This build mixes profiles: no comparison is made."
    for text in (r["text"],):
        assert len(text) <= 80 and "\n" not in text


def test_a_published_value_names_no_folder_of_the_build_machine(tmp_path):
    out = tmp_path / "book" / "_build"
    entries = [
        {"name": "res-glance", "kind": "text", "value": f"not measured ({out}/results)"},
        {"name": "x", "kind": "table", "value": {"rows": [[f"{out.parent}/data", 1]]}},
        {"name": "y", "kind": "number", "value": 2.5, "artifacts": [{"kind": "k", "key": "a"}]},
    ]
    got = P.without_provenance(entries, {"<build>": out, "<book>": out.parent})
    assert got[0]["value"] == "not measured (<build>/results)"
    assert got[1]["value"] == {"rows": [["<book>/data", 1]]}
    assert got[2] == {"name": "y", "kind": "number", "value": 2.5}
    assert str(tmp_path) not in json.dumps(got)
