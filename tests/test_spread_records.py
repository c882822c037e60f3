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


def a_record(headline, profile="cpu", index=2, events=None, commit="a" * 40, piece="rnnsearch"):
    events = events or [{"kind": KIND, "key": "0123456789abcdef", "hit": True, "seconds": 0.1}]
    when = datetime(2026, 11, 29, 1, index, tzinfo=timezone.utc)
    return S.make_record(
        piece, index, profile, headline, events, {"training": 1.0}, commit, "box A", 2.0, when
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
        return spread_pieces.PieceResult({"RNNsearch-50, All": 12.5}, {"training": 3.0}, {})

    monkeypatch.setattr(spread_pieces, "run_piece", fake)
    out = tmp_path / "records"
    argv = ["spread", "rnnsearch", "--seed", "4", "--cache", str(tmp_path), "--out", str(out)]
    assert cli.main(argv + ["--profile", "smoke"]) == 0
    (path,) = out.glob("rnnsearch-seed-4-smoke-*.json")
    rec = json.loads(path.read_text())
    assert rec["headline"] == {"RNNsearch-50, All": 12.5} and rec["commit"] == "d" * 40
    assert {a["kind"] for a in rec["artifacts"]} == {"demo/shared", "demo/own"}
    assert all(a["computed"] for a in rec["artifacts"]) and rec["times"] == {"training": 3.0}
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
