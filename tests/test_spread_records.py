"""The rebuild spread recorded apart (``rnnlib spread``): records written, read against the code
and keys of now (stale ones listed, never used), their spread, and ``rnnlib compare`` reading
it as the noise. Synthetic records in temporary folders; nothing is trained."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from scipy.stats import t

from rnnlib import cli, code_deps
from rnnlib.book import compare as C
from rnnlib.book import spread_records as S
from rnnlib.cache import ArtifactCache
from rnnlib.experiments import spread_command
from rnnlib.experiments.spread_book import markdown_table, recorded

KIND = "corpus/prepared"  # a kind with a code map: its hashes are checked


def make(text):
    def _make(out, work):
        (out / "x.txt").write_text(text)

    return _make


def replicate(cache: ArtifactCache, seed: int):
    """A toy replicate: a shared input, then its own artifact."""
    cache.build("demo/shared", {"n": 1}, make("shared"))
    return cache.build("demo/own", {"seed": seed}, make(f"seed {seed}"))


def a_record(
    headline,
    profile="cpu",
    index=2,
    events=None,
    commit="a" * 40,
    piece="rnnsearch",
    chapters=None,
    minute=None,
):
    events = events or [{"kind": KIND, "key": "0123456789abcdef", "hit": True, "seconds": 0.1}]
    when = datetime(2026, 11, 29, 1, index if minute is None else minute, tzinfo=timezone.utc)
    return S.make_record(
        piece,
        index,
        profile,
        headline,
        events,
        {"training": 1.0},
        commit,
        "box A",
        2.0,
        when,
        chapters=chapters,
    )


def write(folder: Path, rec: dict) -> Path:
    return S.write_record(folder, rec)


def test_a_record_says_what_it_measured_and_is_never_overwritten(tmp_path):
    rec = a_record({"RNNsearch-50, All": 10.0})
    path = write(tmp_path, rec)
    assert path.name == "rnnsearch-seed-2-cpu-20261129T010200.json"
    back = json.loads(path.read_text())
    assert back["code"][KIND] == code_deps.code_hashes(KIND) and back["dirty"] is False
    assert back["artifacts"] == [
        {"kind": KIND, "key": "0123456789abcdef", "computed": False, "seconds": 0.1}
    ]
    with pytest.raises(FileExistsError):
        write(tmp_path, rec)
    assert a_record({}, commit="b" * 40 + "+dirty")["dirty"] is True


def test_current_keys_looks_up_only_up_to_the_first_missing_artifact(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    cache.build("demo/shared", {"n": 1}, make("shared"))
    keys = S.current_keys(cache, lambda: replicate(cache, 2))
    own = ArtifactCache.key("demo/own", {"seed": 2}, None)
    assert keys == [
        ("demo/shared", ArtifactCache.key("demo/shared", {"n": 1}, None)),
        ("demo/own", own),
    ]
    assert not (tmp_path / "cache" / "demo" / "own").exists()  # nothing computed


def test_matching_records_are_used_stale_ones_listed_other_profiles_ignored(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    replicate(cache, 2)  # the record's replicate, computed where it was recorded
    events = list(cache.events)
    folder = tmp_path / "records"
    good = write(folder, a_record({"RNNsearch-50, All": 10.0}, events=events, index=2))
    # another config (its key is not the record's): stale
    moved = [dict(e, key="f" * 16) if e["kind"] == "demo/own" else e for e in events]
    bad_key = write(folder, a_record({"RNNsearch-50, All": 99.0}, events=moved, index=3))
    # the code of a kind it used has changed since
    edited = a_record({"RNNsearch-50, All": 98.0}, index=4)
    first = next(iter(edited["code"][KIND]))
    edited["code"][KIND][first] = "0" * 16
    bad_code = write(folder, edited)
    dirty = write(folder, a_record({"RNNsearch-50, All": 97.0}, index=5, commit="c+dirty"))
    other = write(folder, a_record({"RNNsearch-50, All": 50.0}, profile="smoke", index=6))
    (folder / "broken.json").write_text("{")

    def probe(rec):  # the keys of now of the record's replicate (seeds 2 and 3 are alike here)
        return S.current_keys(cache, lambda: replicate(cache, 2))

    recs = S.read_records(folder, "cpu", "rnnsearch", probe)
    assert [r["file"] for r in recs.matching] == [good.name]
    assert set(recs.stale) == {bad_key.name, bad_code.name, dirty.name, "broken.json"}
    assert "demo/own" in recs.stale[bad_key.name] and "not use" in recs.stale[bad_key.name]
    assert first in recs.stale[bad_code.name] and KIND in recs.stale[bad_code.name]
    assert "uncommitted" in recs.stale[dirty.name]
    assert recs.other_profile == [other.name]
    # only the matching record and this build's value make the spread
    table = S.spread_table("rnnsearch", recs, {"RNNsearch-50, All": 11.0})
    row = table.loc["RNNsearch-50, All"]
    assert row["n"] == 2 and row["mean"] == pytest.approx(10.5) and row["max"] == 11.0
    assert table.loc["RNNencdec-50, All", "n"] == 0


def test_the_spread_siblings_and_the_chapter_reading(tmp_path):
    folder = tmp_path / "records"
    for i, v in enumerate([10.0, 10.4, 9.9]):
        write(folder, a_record({"RNNsearch-50, All": v, "RNNencdec-50, All": 8.0}, index=i + 2))
    own = {"RNNsearch-50, All": 10.2, "RNNencdec-50, All": 8.0}
    out = recorded("rns", ("rnnsearch",), folder, "cpu", None, own, [1])
    sd = float(out.table.loc["RNNsearch-50, All", "sd"])
    assert out.glue["rns-bleu-rnnsearch-50-spread"] == (pytest.approx(sd), 3)
    assert out.glue["rns-bleu-rnnsearch-50-spread-n"] == (4, None)
    assert out.glue["rns-spread-records-n"] == 3 and out.glue["rns-spread-records-stale"] == 0
    assert out.glue["rns-spread-records-text"] == "3 recorded seeds from 1 machine"
    assert out.glue["rns-spread-records"].startswith("| number |")
    # with further seeds of its own the chapter glues its own spread, not these, and a record
    # of one of its own seeds is not counted again
    mine = recorded("rns", ("rnnsearch",), folder, "cpu", None, own, [1, 2])
    assert not any(k.endswith("-spread") for k in mine.glue)
    assert mine.glue["rns-spread-records-n"] == 2
    assert (
        "this build's own" in mine.listing.loc["rnnsearch-seed-2-cpu-20261129T010200.json", "used"]
    )
    # a record of the build's own replicate read back adds no rebuild
    write(folder, a_record(dict(own), index=9))
    again = recorded("rns", ("rnnsearch",), folder, "cpu", None, own, [9])
    assert again.glue["rns-spread-records-n"] == 3
    # the chapter's own seed recorded on another machine, with other numbers: a rebuild
    other = recorded("rns", ("rnnsearch",), folder, "cpu", None, {"RNNsearch-50, All": 7.0}, [9])
    assert other.glue["rns-spread-records-n"] == 4
    assert markdown_table(out.table).count("\n") == len(out.table) + 1


def entry(chapter, name, kind, value, profile="cpu"):
    return {
        "name": name,
        "kind": kind,
        "value": value,
        "stable_name": f"{chapter}-{name}-{profile}-aaaa1111",
        "chapter": chapter,
        "profile": profile,
        "config_hash": "aaaa1111",
        "commit": "0" * 40,
        "files": [],
        "artifacts": [],
    }


def a_build(folder: Path, bleu: float, base: float) -> Path:
    cells = {
        "index": ["Baseline", "+RNN"],
        "columns": ["test"],
        "data": [[base], [base + 0.5]],
        "index_names": [None],
        "column_names": [None],
    }
    entries = [
        entry("rnnsearch", "rns-bleu-rnnsearch-50", "number", bleu),
        entry("cho2014", "cho-table1", "table", cells),
    ]
    folder.mkdir(parents=True)
    for chapter in ("rnnsearch", "cho2014"):
        mine = [e for e in entries if e["chapter"] == chapter]
        (folder / f"{chapter}.json").write_text(json.dumps(mine), encoding="utf-8")
    return folder


def test_compare_reads_the_recorded_spread_as_the_noise(tmp_path):
    records = tmp_path / "spread"
    values = [9.8, 10.2, 10.5]
    for i, v in enumerate(values):
        write(records, a_record({"RNNsearch-50, All": v}, index=i + 2))
        head = {"Baseline, test": 20.0 + v / 10}
        write(records, a_record(head, index=i + 2, piece="phrase"))
    write(records, a_record({"RNNsearch-50, All": 50.0}, index=8, profile="smoke"))
    import numpy as np

    half = t.ppf(0.975, 2) * 2**0.5 * np.std(values, ddof=1)
    old = C.load_build(a_build(tmp_path / "old", 10.0, 21.0))
    noise, notes = C.record_noise(old, records)
    assert noise["rnnsearch:rns-bleu-rnnsearch-50"].high == pytest.approx(10.0 + half)
    assert "cho-table1[Baseline | test]" in noise and "3 read" in notes[0]
    near = a_build(tmp_path / "near", 10.0 + 0.9 * half, 21.0 + 0.09 * half)
    far = a_build(tmp_path / "far", 10.0 + 1.1 * half, 21.0 + 0.2 * half)
    inside = {i.id: i for i in C.compare(old, near, noise=noise).items}
    outside = {i.id: i for i in C.compare(old, far, noise=noise).items}
    assert inside["rns-bleu-rnnsearch-50"].status == C.WITHIN
    assert "recorded rebuild spread" in inside["rns-bleu-rnnsearch-50"].noise.source
    assert outside["rns-bleu-rnnsearch-50"].status == C.BEYOND
    assert inside["cho-table1[Baseline | test]"].status == C.WITHIN
    assert outside["cho-table1[Baseline | test]"].status == C.BEYOND
    # without records the noise is unknown
    plain = {i.id: i for i in C.compare(old, near).items}
    assert plain["rns-bleu-rnnsearch-50"].status == C.UNKNOWN
    # a build of another profile reads none of them
    smoke = C.load_build(a_build(tmp_path / "smoke", 10.0, 21.0))
    smoke.chapters = {k: dict(v, profile="other") for k, v in smoke.chapters.items()}
    assert C.record_noise(smoke, records) == ({}, [])


@pytest.mark.parametrize(
    "argv, named",
    [
        (["spread", "bogus", "--seed", "2"], "argument piece: invalid choice: 'bogus'"),
        (
            ["spread", "rnnsearch", "--seed", "0"],
            "argument --seed: must be an integer of at least 1",
        ),
        (["spread", "phrase", "--seed", "-3"], "argument --seed"),
        (["spread", "rnnsearch", "--seed", "x"], "argument --seed"),
        (["spread", "rnnsearch"], "--seed"),
        (["spread", "rnnsearch", "--seed", "2", "--cache", "/nonexistent/h"], "argument --cache"),
    ],
)
def test_the_command_refuses_bad_input_naming_the_parameter(argv, named, capsys):
    with pytest.raises(SystemExit) as err:
        cli.main(argv)
    assert err.value.code == 2
    assert named in capsys.readouterr().err


def test_the_command_refuses_a_dirty_tree(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(spread_command, "git_commit", lambda root: "abc+dirty")
    ran = []
    monkeypatch.setattr("rnnlib.experiments.spread_pieces.run_piece", lambda *a: ran.append(a))
    code = cli.main(["spread", "rnnsearch", "--seed", "2", "--cache", str(tmp_path)])
    assert code == 2 and not ran
    assert "uncommitted changes" in capsys.readouterr().err


def test_the_command_writes_a_record(monkeypatch, tmp_path, capsys):
    from rnnlib.experiments import spread_pieces

    monkeypatch.setattr(spread_command, "git_commit", lambda root: "d" * 40)

    def fake(piece, cache, root, profile, index):
        replicate(cache, index)
        stamp = {"representations": {"config_hash": "c0ffee00", "code": {}, "checks": {}}}
        head = {"RNNsearch-50, All": 12.5}
        return spread_pieces.PieceResult(head, {"training": 3.0}, {}, stamp)

    monkeypatch.setattr(spread_pieces, "run_piece", fake)
    out = tmp_path / "records"
    argv = ["spread", "rnnsearch", "--seed", "4", "--cache", str(tmp_path), "--out", str(out)]
    assert cli.main(argv + ["--profile", "smoke"]) == 0
    (path,) = out.glob("rnnsearch-seed-4-smoke-*.json")
    rec = json.loads(path.read_text())
    assert rec["headline"] == {"RNNsearch-50, All": 12.5} and rec["commit"] == "d" * 40
    assert {a["kind"] for a in rec["artifacts"]} == {"demo/shared", "demo/own"}
    assert all(a["computed"] for a in rec["artifacts"]) and rec["times"] == {"training": 3.0}
    assert rec["chapters"]["representations"]["config_hash"] == "c0ffee00"
    assert "wrote" in capsys.readouterr().out


def test_rnnlib_compare_takes_the_records_folder(tmp_path, capsys):
    records = tmp_path / "spread"
    for i, v in enumerate([9.0, 10.0, 11.0]):
        write(records, a_record({"RNNsearch-50, All": v}, index=i + 2))
    old = a_build(tmp_path / "old", 10.0, 21.0)
    new = a_build(tmp_path / "new", 11.0, 21.0)
    assert cli.main(["compare", str(old), str(new), "--spread", str(records)]) == 0
    out = capsys.readouterr().out
    assert "rebuild spread records of rnnsearch: 3 read" in out
    assert "moved within its noise" in out and "recorded rebuild spread" in out
    empty = tmp_path / "none"
    empty.mkdir()
    assert cli.main(["compare", str(old), str(new), "--spread", str(empty)]) == 0
    assert "moved (noise unknown)" in capsys.readouterr().out


def test_the_command_names_an_unknown_profile(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(spread_command, "git_commit", lambda root: "d" * 40)
    argv = ["spread", "phrase", "--seed", "2", "--cache", str(tmp_path), "--profile", "nope"]
    assert cli.main(argv) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err
    assert not list(tmp_path.glob("*/*/meta.json"))  # nothing computed


# -- the representations chapter's numbers in a record of piece phrase ---------------------------
REP = "representations"
ROOT = Path(__file__).resolve().parents[1]


def rep_check(diff: float):
    """A clustering-style check (trained − chance with a ±0.1 interval) with its control."""
    from rnnlib import verdicts

    check = verdicts.intervals_above([("trained − chance", diff, diff - 0.1, diff + 0.1)])
    control = verdicts.intervals_above([("untrained − chance", 0.0, -0.1, 0.1)])
    return verdicts.controlled(check, "the untrained network", control)


def rep_rebuild(diff: float, trained: float = 0.6, gap: float = 1.0, alignment: int = 2):
    """A stand-in of :class:`rebuilds.Rebuild`: its claims' checks (every one ``diff`` above
    chance) and its row of the rebuilds table."""
    from types import SimpleNamespace as NS

    from rnnlib.book import claims
    from rnnlib.experiments.representations import rebuilds as rr
    from rnnlib.experiments.representations.floor import LearnedFloor
    from rnnlib.experiments.representations.purity_claims import PurityClaim

    purity = [
        PurityClaim(claim, key, rep_check(diff), rep_check(-diff), True, "")
        for claim, key, _ in rr.PURITY_CLAIMS.values()
    ]
    values = {col: {"trained network": trained, "bag of words": 0.5} for col in rr.PURITY_CLAIMS}
    abl = NS(interval=(gap, gap - 0.1, gap + 0.1))
    row = rr.row_of(values, abl, LearnedFloor(20.0 + alignment, 30.0))
    gates = claims.ClaimCheck("C-A-GRU-2", rep_check(diff))
    ablation = claims.ClaimCheck("C-A-GRU-1", rep_check(diff))
    return NS(alignment=alignment, purity=purity, gates=gates, ablation_check=ablation, row=row)


def a_phrase_record(r, index=2, config="cfg00001", events=None, stamped=True, minute=None):
    """A record of piece ``phrase`` holding A's Table 1 rows and, ``stamped``, the
    representations chapter's numbers of stand-in ``r`` (:func:`rep_rebuild`)."""
    from rnnlib.experiments.representations import rebuilds as rr

    head = {"Baseline, test": 20.0, "+RNN, test": 20.5, "+RNN − Baseline, test": 0.5}
    head["scorer NLL per pair"] = 21.0
    chapters = {REP: S.chapter_stamp(REP, config, rr.recorded_checks(r))} if stamped else None
    if stamped:
        head |= r.row
    return a_record(
        head, index=index, events=events, piece="phrase", chapters=chapters, minute=minute
    )


@pytest.fixture
def apart_reader(tmp_path, monkeypatch):
    """``read(folder, config)``: :func:`recorded.alignments_apart` of the representations chapter
    on a toy cache, each record's replicate standing in for :func:`rebuilds.rebuild_runs` (the keys
    of now are those of the toy replicate with seed 2)."""
    from rnnlib.experiments.representations import recorded
    from rnnlib.experiments.representations.floor import LearnedFloor
    from types import SimpleNamespace as NS

    cache = ArtifactCache(tmp_path / "cache")
    replicate(cache, 2)  # the record's replicate, computed where it was recorded
    stand_in = lambda cache, corpus, cho, P, i: replicate(cache, 2)  # noqa: E731
    monkeypatch.setattr(recorded, "rebuild_runs", stand_in)

    def read(folder, config="cfg00001", others=()):
        floor = LearnedFloor(19.0, 30.0)  # the chapter's first alignment's scorer
        P, root = NS(profile="cpu"), tmp_path
        return recorded.alignments_apart(cache, None, {}, P, config, floor, others, root, folder)

    read.events = list(cache.events)
    return read


def test_a_phrase_record_holds_the_representations_numbers_and_reads_them_back(
    tmp_path, apart_reader
):
    from rnnlib.experiments.representations import rebuilds as rr
    from rnnlib.experiments.representations import recorded
    from rnnlib.experiments.representations.floor import LearnedFloor
    from types import SimpleNamespace as NS

    r = rep_rebuild(0.3, trained=0.7, gap=2.0)
    path = write(tmp_path / "records", a_phrase_record(r, events=apart_reader.events))
    back = json.loads(path.read_text())
    assert {label: back["headline"][label] for label in rr.SPREAD_NAMES} == r.row
    stamp = back["chapters"][REP]
    assert stamp["config_hash"] == "cfg00001"
    assert "rnnlib/experiments/representations/purity.py" in stamp["code"]
    assert stamp["checks"]["purity"]["words"]["claim"] == "C-A-F4-1"
    # read back by the chapter: one further alignment, its row and its checks
    apart = apart_reader(tmp_path / "records")
    (rec,) = apart.rebuilds
    assert rec.row == pytest.approx(r.row) and rec.alignment == "2, recorded 2026-11-29T01:02"
    assert [c.check for c in rec.purity] == [c.check for c in r.purity]
    assert rec.ablation_check.check == r.ablation_check.check and rec.recorded
    # its row in the rebuilds table, its spread on the page (no -spread sibling: the table's)
    values = {col: {"trained network": 0.6, "bag of words": 0.5} for col in rr.PURITY_CLAIMS}
    abl = NS(interval=(1.0, 0.9, 1.1))
    table = rr.rebuilds_table(values, abl, LearnedFloor(19.0, 30.0), apart.rebuilds)
    assert list(table.index) == ["1", rec.alignment, "mean", "sd"]
    assert table.loc["sd", "tanh − GRU, dev NLL per pair"] == pytest.approx(0.707, abs=1e-3)
    assert rr.numbers(table)["rep-word-bow-gap-spread"] == (pytest.approx(0.0707, abs=1e-3), 3)
    assert rr.origin(apart.rebuilds, {}) == "2 alignments: 1 built by this build, 1 recorded apart"
    glue = recorded.spread(apart, rr.row_of(values, abl, LearnedFloor(19.0, 30.0)))
    assert glue["rep-spread-records-n"] == 1 and glue["rep-spread-records-stale"] == 0
    assert not any(k.endswith("-spread") for k in glue)
    assert "word: trained − bag of words" in glue["rep-spread-records"]
    assert "Baseline, test" not in glue["rep-spread-records"]  # the cho2014 chapter's numbers


def test_a_phrase_record_whose_keys_code_or_parameters_differ_is_stale_for_representations(
    tmp_path, apart_reader
):
    from rnnlib.experiments import spread_book

    folder = tmp_path / "records"
    events = apart_reader.events
    good = write(folder, a_phrase_record(rep_rebuild(0.3), index=2, events=events))
    moved = [dict(e, key="f" * 16) if e["kind"] == "demo/own" else e for e in events]
    bad_key = write(folder, a_phrase_record(rep_rebuild(0.3), index=3, events=moved))
    other = write(folder, a_phrase_record(rep_rebuild(0.3), 4, config="cfg99999", events=events))
    edited = a_phrase_record(rep_rebuild(0.3), index=5, events=events)
    code = edited["chapters"][REP]["code"]
    code["rnnlib/experiments/representations/purity.py"] = "0" * 16
    bad_code = write(folder, edited)
    before = write(folder, a_phrase_record(rep_rebuild(0.3), 6, events=events, stamped=False))
    apart = apart_reader(folder)
    assert [r.alignment for r in apart.rebuilds] == ["2, recorded 2026-11-29T01:02"]
    stale = apart.read.records["phrase"].stale
    assert set(stale) == {bad_key.name, other.name, bad_code.name, before.name}
    assert "demo/own" in stale[bad_key.name] and "not use" in stale[bad_key.name]
    assert "parameters moved" in stale[other.name] and "cfg99999" in stale[other.name]
    assert "representations/purity.py" in stale[bad_code.name]
    assert "made before" in stale[before.name]
    # the record made before the piece measured this chapter is still the cho2014 chapter's
    cho = spread_book.read_pieces("cho2014", ("phrase",), folder, "cpu", None, {}, [1])
    # (no probe here: keys unchecked)
    names = {good.name, bad_key.name, other.name, bad_code.name, before.name}
    assert {r["file"] for r in cho.matching} == names
    table = spread_book.spread_of("cho", cho, {"Baseline, test": 20.1}).table
    assert list(table.index) == list(S.HEADLINES["phrase"])[:4]
    assert table.loc["Baseline, test", "n"] == 6
    # a record of the chapter's own further alignment (read from its cache) is not counted again
    mine = apart_reader(folder, others=[rep_rebuild(0.3, alignment=2)])
    assert not mine.rebuilds and len(mine.read.skipped) == 1
    # nor one equal to its first alignment (the same scorer read back)
    same = rep_rebuild(0.3, alignment=-1)  # scorer dev NLL 19.0: the chapter's first
    write(folder, a_phrase_record(same, index=1, events=events))
    assert len(apart_reader(folder).rebuilds) == 1


def test_the_claims_are_judged_on_every_recorded_alignment(tmp_path, apart_reader):
    from rnnlib import verdicts
    from rnnlib.book import claims
    from rnnlib.experiments.representations import rebuilds as rr

    first = rep_rebuild(0.3, alignment=1)
    found = first.purity
    folder = tmp_path / "agree"
    write(folder, a_phrase_record(rep_rebuild(0.3), events=apart_reader.events))
    agree = apart_reader(folder).rebuilds
    for c in rr.purity_across(found, agree):
        assert c.check.rule == "across_rebuilds"
        assert verdicts.evaluate(c.check).verdict == verdicts.HOLDS
    # a record on which every claim fails: each verdict is inside the noise
    folder = tmp_path / "flip"
    write(folder, a_phrase_record(rep_rebuild(-0.3), events=apart_reader.events))
    flipped = apart_reader(folder).rebuilds
    for c in rr.purity_across(found, flipped):
        verdict = verdicts.evaluate(c.check)
        assert verdict.verdict == verdicts.NOISE
        assert "alignment 2, recorded 2026-11-29T01:02: does not hold" in verdict.reason
    for which in ("gates", "ablation_check"):
        judged = rr.check_across(getattr(first, which), flipped, which)
        assert verdicts.evaluate(judged.check).verdict == verdicts.NOISE
        assert isinstance(judged, claims.ClaimCheck)


def test_compare_reads_the_representations_numbers_of_records_with_its_parameters(tmp_path):
    folder = tmp_path / "records"
    for i, trained in enumerate([0.5, 0.6, 0.8]):
        write(folder, a_phrase_record(rep_rebuild(0.3, trained=trained), index=i + 2))
    recs = S.read_records(folder, "cpu", "phrase")
    old = {"representations:rep-word-trained": 0.6, "cho-table1[Baseline | test]": 20.0}
    same = S.noise_items(recs, "phrase", old, {REP: "cfg00001"})
    assert "(phrase)" in same["representations:rep-word-trained"][2]
    moved = S.noise_items(recs, "phrase", old, {REP: "cfg99999"})
    assert "representations:rep-word-trained" not in moved
    # the results page shows the chapter's recorded spread
    entries = [{"chapter": REP, "name": "rep-spread-records", "value": "| number |"}]
    assert S.results_glue(entries)["res-spread-representations"] == "| number |"


def test_the_phrase_piece_stamps_the_representations_chapters_parameters(monkeypatch):
    from rnnlib.experiments import spread_pieces as SP

    monkeypatch.setattr(SP, "phrase_replicate", lambda cache, P, i, timer: {"+RNN, test": 1.0})
    checks = {"purity": {}, "gates": {}, "ablation_check": {}}
    rep = lambda cache, P, R, i, timer: ({"word: trained": 0.5}, checks)  # noqa: E731
    monkeypatch.setattr(SP, "representations_replicate", rep)
    out = SP.phrase_piece(None, ROOT, "cpu", 2)
    assert out.headline == {"+RNN, test": 1.0, "word: trained": 0.5}
    stamp = out.chapters[REP]
    assert stamp["checks"] == checks
    assert stamp["config_hash"] == SP.chapter_hash(REP, SP.chapter_values(ROOT, REP, "cpu"))
