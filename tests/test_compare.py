"""``rnnlib compare``: two small hand-made builds, compared claim by claim and number by number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rnnlib import cli
from rnnlib.book import compare as C


def entry(chapter, name, kind, value, config="aaaa1111", profile="cpu"):
    return {
        "name": name,
        "kind": kind,
        "value": value,
        "stable_name": f"{chapter}-{name}-{profile}-{config}",
        "chapter": chapter,
        "profile": profile,
        "config_hash": config,
        "commit": "0" * 40,
        "files": [],
        "artifacts": [],
    }


def claim_record(claim, chapter, rule, evidence, verdict, config="aaaa1111"):
    return {
        "claim": claim,
        "chapter": chapter,
        "profile": "cpu",
        "config_hash": config,
        "check": {"rule": rule, "evidence": evidence, "note": ""},
        "verdict": {"verdict": verdict, "reason": f"reason of {verdict}"},
        "build": {"id": "b1", "started": "now", "commit": "0" * 40},
    }


def table(index, columns, data):
    return {
        "index": index,
        "columns": columns,
        "data": data,
        "index_names": [None],
        "column_names": [None],
    }


def write_build(root: Path, entries: list[dict], claims: dict[str, list[dict]] | None) -> Path:
    """``root/_build/html/results.json``, ``root/results/<chapter>.json`` and, if given,
    ``root/results/claims/<chapter>.json``: the layout ``rnnlib build`` leaves."""
    html = root / "_build" / "html"
    html.mkdir(parents=True)
    (html / "results.json").write_text(
        json.dumps({"book": {"commit": "c" * 40}, "results": entries}), encoding="utf-8"
    )
    records = root / "results"
    (records / "claims").mkdir(parents=True)
    for chapter in dict.fromkeys(e["chapter"] for e in entries):
        (records / f"{chapter}.json").write_text(
            json.dumps([e for e in entries if e["chapter"] == chapter]), encoding="utf-8"
        )
    for chapter, recs in (claims or {}).items():
        (records / "claims" / f"{chapter}.json").write_text(json.dumps(recs), encoding="utf-8")
    return root


def glued(verdict):
    return f"**{verdict}** (reason of {verdict})"


def number(chapter, name, value, **kw):
    return entry(chapter, name, "number", value, **kw)


@pytest.fixture
def builds(tmp_path):
    old = old_build_numbers(tmp_path / "old")
    new = new_build_numbers(tmp_path / "new")
    return old, new


def _old_entries():
    return [
        entry("rns", "params", "params", {"profile": "cpu", "hidden": 16}),
        number("rns", "gap", 2.0),
        number("rns", "gap-low", 1.0),
        number("rns", "gap-high", 3.0),
        number("rns", "gap2", 2.0),
        number("rns", "gap2-low", 1.0),
        number("rns", "gap2-high", 3.0),
        number("rns", "minutes", 10.0),
        number("rns", "same", 0.1 + 0.2),
        number("rns", "gone", 5),
        entry("rns", "story", "text", "RNNsearch wins by 2 BLEU."),
        entry("rns", "t1", "table", table(["a", "b"], ["BLEU", "note"], [[1.0, "x"], [2.0, "y"]])),
        entry("rns", "fig", "figure", None),
        entry("rns", "claim-C-B-T1-1", "text", glued("holds")),
        entry("rns", "claim-C-B-T1-3", "text", glued("holds")),
        entry("rns", "claim-C-B-T1-4", "text", glued("holds")),
        entry("data", "params", "params", {"profile": "cpu"}, config="dddd0000"),
        number("data", "pairs", 100, config="dddd0000"),
    ]


def _old_records():
    return {
        "rns": [
            claim_record(
                "C-B-T1-1",
                "rns",
                "intervals_above",
                {"tests": [["A − B", 2.0, 1.0, 3.0], ["C − D", 1.0, 0.5, 1.5]]},
                "holds",
            ),
            claim_record(
                "C-B-T1-3",
                "rns",
                "at_least",
                {"value": 0.8, "threshold": 0.7, "label": "m", "low": 0.75, "high": 0.85},
                "holds",
            ),
            claim_record("C-B-T1-4", "rns", "all_true", {"observations": [["x", True]]}, "holds"),
        ]
    }


def old_build_numbers(root: Path, claims: bool = True) -> Path:
    return write_build(root, _old_entries(), _old_records() if claims else None)


NEW = "bbbb2222"  # the rnnsearch chapter rerun with other parameters


def _new_entries():
    return [
        entry("rns", "params", "params", {"profile": "cpu", "hidden": 32}, config=NEW),
        number("rns", "gap", 2.5, config=NEW),  # inside old's [1, 3]
        number("rns", "gap-low", 1.5, config=NEW),
        number("rns", "gap-high", 3.5, config=NEW),
        number("rns", "gap2", 3.5, config=NEW),  # outside old's [1, 3]
        number("rns", "gap2-low", 3.1, config=NEW),
        number("rns", "gap2-high", 3.9, config=NEW),
        number("rns", "minutes", 12.0, config=NEW),  # no interval: noise unknown
        number("rns", "same", 0.3, config=NEW),  # 0.1 + 0.2 != 0.3 in floats: unchanged
        number("rns", "new-number", 7, config=NEW),  # "gone" disappeared
        entry("rns", "story", "text", "RNNsearch wins by 3 BLEU.", config=NEW),
        entry(
            "rns",
            "t1",
            "table",
            table(["a", "b", "c"], ["BLEU", "note"], [[1.0, "x"], [4.0, "z"], [5.0, "w"]]),
            config=NEW,
        ),
        entry("rns", "fig", "figure", None, config=NEW),
        entry("rns", "claim-C-B-T1-1", "text", glued("does not hold"), config=NEW),
        entry("rns", "claim-C-B-T1-3", "text", glued("holds"), config=NEW),
        entry("rns", "claim-C-B-T1-5", "text", glued("holds"), config=NEW),
        entry("data", "params", "params", {"profile": "cpu"}, config="dddd0000"),
        number("data", "pairs", 100, config="dddd0000"),
    ]


def _new_records():
    return {
        "rns": [
            claim_record(
                "C-B-T1-1",
                "rns",
                "intervals_above",
                {"tests": [["A − B", -1.0, -2.0, -0.5], ["C − D", 1.2, 0.7, 1.7]]},
                "does not hold",
                config=NEW,
            ),
            claim_record(
                "C-B-T1-3",
                "rns",
                "at_least",
                {"value": 0.8 + 1e-15, "threshold": 0.7, "label": "m", "low": 0.75, "high": 0.85},
                "holds",
                config=NEW,
            ),
            claim_record(
                "C-B-T1-5",
                "rns",
                "intervals_above",
                {"tests": [["E − F", 1.0, 0.5, 1.5]]},
                "holds",
                config=NEW,
            ),
        ]
    }


def new_build_numbers(root: Path, claims: bool = True) -> Path:
    return write_build(root, _new_entries(), _new_records() if claims else None)


def by_id(items):
    return {i.id: i for i in items}


def test_claims_from_records_verdict_changes_and_claims_in_one_build_only(builds):
    old, new = builds
    c = C.compare(old, new)
    claims = {x.claim: x for x in c.claims}
    assert claims["C-B-T1-1"].status == C.CHANGED
    assert (claims["C-B-T1-1"].old, claims["C-B-T1-1"].new) == ("holds", "does not hold")
    assert claims["C-B-T1-3"].status == C.UNCHANGED
    assert claims["C-B-T1-4"].status == C.ONLY_OLD
    assert claims["C-B-T1-5"].status == C.ONLY_NEW
    assert c.verdicts_changed
    assert "records in" in c.old.claims_from and not c.old.warnings
    # the evidence's numbers against the old interval: -1 is outside [1, 3], 1.2 inside [0.5, 1.5]
    ev = by_id(claims["C-B-T1-1"].evidence)
    assert ev["C-B-T1-1: A − B"].status == C.BEYOND
    assert ev["C-B-T1-1: C − D"].status == C.WITHIN
    assert by_id(claims["C-B-T1-3"].evidence)["C-B-T1-3: m"].status == C.UNCHANGED  # rounding


def test_numbers_within_beyond_and_unknown_noise_and_items_in_one_build_only(builds):
    c = C.compare(*builds)
    items = by_id(c.items)
    assert items["gap"].status == C.WITHIN
    assert items["gap"].noise.low == 1.0 and items["gap"].noise.high == 3.0
    assert "gap-low/-high" in items["gap"].noise.source
    assert items["gap2"].status == C.BEYOND
    assert items["minutes"].status == C.UNKNOWN and items["minutes"].noise is None
    assert items["same"].status == C.UNCHANGED
    assert items["pairs"].status == C.UNCHANGED
    assert items["gone"].status == C.ONLY_OLD
    assert items["new-number"].status == C.ONLY_NEW
    assert items["story"].status == C.CHANGED and "2 BLEU" in items["story"].note
    assert items["fig"].status == C.CHANGED and "config_hash aaaa1111 -> bbbb2222" in (
        items["fig"].note
    )
    # tables: numeric cells by (table, row, column); rows in one build only
    assert items["t1[a | BLEU]"].status == C.UNCHANGED
    assert items["t1[b | BLEU]"].status == C.UNKNOWN
    assert items["t1"].status == C.CHANGED
    assert "rows only in new: c" in items["t1"].note and "1 text cells changed" in items["t1"].note
    assert not any(i.id.startswith("claim-") for i in c.items)  # claims have their own section
    # the chapter rerun with other parameters
    chapters = {ch.chapter: ch for ch in c.chapters}
    assert chapters["rns"].status == C.CHANGED
    assert chapters["rns"].params == [("hidden", 16, 32)]
    assert chapters["data"].status == C.UNCHANGED


def test_the_report_and_the_exit_status(builds, capsys):
    old, new = builds
    assert cli.main(["compare", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    top = out[: out.index("== rns ==")]
    assert "rns: config hash aaaa1111 -> bbbb2222" in top and "hidden: 16 -> 32" in top
    assert "C-B-T1-1: holds -> does not hold" in out
    assert "claims: 1 changed, 1 only in old, 1 only in new, 1 unchanged" in out
    assert any("gap-low: 1 -> 1.5" in line and "an end of gap's interval" in line for line in lines)
    assert any("gap2: 2 -> 3.5" in line for line in lines)
    assert f"{C.BEYOND} (1)" in out and f"{C.WITHIN} (1)" in out
    assert "noise unknown: the builds state no interval" in out
    assert "== data ==" not in out  # nothing changed there
    # the same build against itself: nothing changed, exit 0
    assert cli.main(["compare", str(old), str(old / "_build" / "html")]) == 0
    out = capsys.readouterr().out
    assert "verdicts all unchanged" in out and "same profile and parameters" in out


def test_json_output(builds, capsys):
    old, new = builds
    assert cli.main(["compare", str(old / "_build/html/results.json"), str(new), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["exit_status"] == 1
    assert data["summary"]["claims"] == {C.CHANGED: 1, C.UNCHANGED: 1, C.ONLY_OLD: 1, C.ONLY_NEW: 1}
    items = {i["id"]: i for i in data["items"]}
    assert items["gap2"]["status"] == C.BEYOND and items["gap2"]["noise"]["high"] == 3.0
    assert "same" not in items  # unchanged items are left out


def test_inputs_a_results_json_an_html_folder_and_a_build_folder(builds):
    old, _ = builds
    html = old / "_build" / "html"
    for path in (old, html, html / "results.json", old / "results"):
        b = C.load_build(path)
        assert ("rns", "gap") in b.entries and b.claims["C-B-T1-1"]["from"] == "record", path


def test_claims_from_glued_texts_without_records(tmp_path):
    old = old_build_numbers(tmp_path / "old", claims=False)
    new = new_build_numbers(tmp_path / "new", claims=False)
    # a results.json on its own: no build folder around it
    alone = tmp_path / "alone" / "results.json"
    alone.parent.mkdir()
    alone.write_bytes((new / "_build" / "html" / "results.json").read_bytes())
    c = C.compare(old, alone)
    claims = {x.claim: x for x in c.claims}
    assert (claims["C-B-T1-1"].old, claims["C-B-T1-1"].new) == ("holds", "does not hold")
    assert claims["C-B-T1-1"].new_reason == "reason of does not hold"
    assert claims["C-B-T1-4"].status == C.ONLY_OLD
    assert claims["C-B-T1-1"].evidence == []  # no records, no evidence numbers
    assert "glued claim texts" in c.new.claims_from


def test_records_of_another_run_of_the_chapter_give_way_to_the_glued_texts(tmp_path):
    # the chapter's records are of config bbbb2222, its results of aaaa1111
    root = write_build(tmp_path / "b", _old_entries(), _new_records())
    b = C.load_build(root)
    assert b.claims["C-B-T1-1"] == {
        "chapter": "rns",
        "verdict": "holds",
        "reason": "reason of holds",
        "check": None,
        "from": "glued text",
    }
    assert any("chapter rns" in w and "glued claim texts" in w for w in b.warnings)


def test_a_noise_given_for_a_number_takes_precedence(builds):
    c = C.compare(*builds, noise={"rns:minutes": C.Noise.around(10.0, 3.0, "rebuild spread")})
    items = by_id(c.items)
    assert items["minutes"].status == C.WITHIN and items["minutes"].noise.source == "rebuild spread"
    c = C.compare(*builds, noise={"t1[b | BLEU]": C.Noise.around(2.0, 1.0, "rebuild spread")})
    assert by_id(c.items)["t1[b | BLEU]"].status == C.BEYOND


def test_classify():
    n = C.Noise(1.0, 3.0, "x")
    assert C.classify(2.0, 2.0 * (1 + 1e-12), n) == C.UNCHANGED
    assert C.classify(2.0, 3.0, n) == C.WITHIN
    assert C.classify(2.0, 3.01, n) == C.BEYOND
    assert C.classify(2.0, None, n) == C.UNKNOWN
    assert C.classify(None, None, None) == C.UNCHANGED
    # only the new build states an interval: is the old value inside it?
    assert C.classify(2.0, 5.0, C.Noise(4.0, 6.0, "x", side="new")) == C.BEYOND
    assert C.classify(5.0, 4.0, C.Noise(3.0, 5.0, "x", side="new")) == C.WITHIN


def test_bad_input_exits_2_naming_the_path(tmp_path, builds, capsys):
    good = builds[0]
    not_json = tmp_path / "notes.txt"
    not_json.write_text("hello")
    no_results = tmp_path / "other.json"
    no_results.write_text(json.dumps({"book": {}}))
    empty = tmp_path / "empty"
    empty.mkdir()
    bad_records = tmp_path / "bad"
    (bad_records / "claims").mkdir(parents=True)
    (bad_records / "x.json").write_text(json.dumps({"not": "a list"}))
    bad_claims = write_build(tmp_path / "badclaims", _old_entries(), None)
    (bad_claims / "results" / "claims" / "rns.json").write_text("{")
    for path, named in (
        (tmp_path / "missing", "missing: no such file or folder"),
        (not_json, "notes.txt: not valid JSON"),
        (no_results, "other.json: not a results.json"),
        (empty, "empty: not a build"),
        (bad_records, "x.json: not a chapter's record file"),
        (bad_claims / "_build" / "html", "claims/rns.json: not valid JSON"),  # the file at fault
    ):
        assert cli.main(["compare", str(good), str(path)]) == 2, path
        err = capsys.readouterr().err
        assert err.startswith("rnnlib compare: ") and named in err, err
    with pytest.raises(C.BadInput, match="no such file"):
        C.load_build(tmp_path / "missing")


def test_a_glued_rebuild_spread_is_the_numbers_noise(tmp_path):
    """``X-spread`` and ``X-spread-n`` (the rebuild spread): two rebuilds differ by sd sqrt(2),
    within the t quantile of n - 1 degrees of freedom; it takes precedence over
    ``X-low``/``X-high``."""
    from scipy.stats import t

    def build(root, value, spread):
        entries = [
            number("rns", "bleu", value),
            number("rns", "bleu-low", value - 0.1),
            number("rns", "bleu-high", value + 0.1),
        ]
        if spread is not None:
            entries += [number("rns", "bleu-spread", spread), number("rns", "bleu-spread-n", 3)]
        return write_build(root, entries, None)

    half = t.ppf(0.975, 2) * 2**0.5 * 0.5
    old = build(tmp_path / "old", 10.0, 0.5)
    near = build(tmp_path / "near", 10.0 + 0.9 * half, None)
    far = build(tmp_path / "far", 10.0 + 1.1 * half, None)
    item = by_id(C.compare(old, near).items)["bleu"]
    assert item.status == C.WITHIN and "rebuild spread" in item.noise.source
    assert item.noise.high == pytest.approx(10.0 + half)
    assert by_id(C.compare(old, far).items)["bleu"].status == C.BEYOND
    # without a spread, the interval the build states is the noise
    plain = build(tmp_path / "plain", 10.0, None)
    assert by_id(C.compare(plain, near).items)["bleu"].status == C.BEYOND


def test_the_report_names_each_builds_machine_and_says_when_they_differ(tmp_path):
    def build(root, machine):
        entries = [entry("rns", "params", "params", {"profile": "cpu"}), number("rns", "x", 1.0)]
        if machine:
            entries.append(entry("results", "res-machine", "text", machine, config="eeee0000"))
        return write_build(root, entries, None)

    a = build(tmp_path / "a", "AMD EPYC, 2 threads, avx512_bf16")
    b = build(tmp_path / "b", "Intel Xeon, 2 threads, avx2")
    c = build(tmp_path / "c", None)
    text = C.report(C.compare(a, b))
    assert "machine: AMD EPYC, 2 threads, avx512_bf16" in text
    assert "machine: Intel Xeon, 2 threads, avx2" in text
    assert "ran on different machines" in text
    assert "ran on different machines" not in C.report(C.compare(a, a))
    text = C.report(C.compare(a, c))
    assert "machine: not recorded (no results page)" in text
    assert "ran on different machines" not in text


def test_a_table_without_rows_compares_unchanged_with_itself_and_names_a_new_column():
    table = {"index": [], "columns": ["a", "b"], "data": [], "index_names": ["model"]}
    old = {"value": table}
    assert C._table("ch", "t", old, {"value": dict(table)}, {})[0].status == C.UNCHANGED
    wider = {"value": {**table, "columns": ["a", "b", "c"]}}
    item = C._table("ch", "t", old, wider, {})[0]
    assert item.status == C.CHANGED and item.note == "columns only in new: c"


def test_what_a_chapter_declares_a_timing_is_listed_apart_and_never_counted_as_a_move(tmp_path):
    """Two builds of one commit differ in what measures time alone (the rnnsearch chapter's
    ``rns-timed``): a declared prefix, a name ending in ``-minutes``, a cell of a column naming a
    duration, and a claim on a live timing are "measures time", not moves or changed verdicts;
    the same moves without the declaration are counted as before."""

    def build(root, spu, verdict, declared):
        entries = [
            entry("rns", "params", "params", {"profile": "cpu"}),
            number("rns", "rns-live-spu", spu),
            number("rns", "rns-pair-minutes", spu * 10),
            number("rns", "rns-bleu", 14.2),
            entry("rns", "t", "table", table(["a"], ["seconds per update", "BLEU"], [[spu, 1.0]])),
            entry("rns", "claim-C-B-T2-3", "text", glued(verdict)),
        ]
        if declared:
            entries.append(entry("rns", "rns-timed", "text", "rns-live-, claim-C-B-T2-3"))
        rule, evidence = "at_least", {"value": spu, "threshold": 1.2, "label": "r"}
        claims = {"rns": [claim_record("C-B-T2-3", "rns", rule, evidence, verdict)]}
        return write_build(root, entries, claims)

    c = C.compare(
        build(tmp_path / "a", 2.6, "holds", True), build(tmp_path / "b", 1.1, "does not hold", True)
    )
    moved = {x.id: x.status for x in c.items if x.status != C.UNCHANGED}
    assert moved == {
        "rns-live-spu": C.TIMED,
        "rns-pair-minutes": C.TIMED,
        "t[a | seconds per update]": C.TIMED,
        "t": C.TIMED,
    }
    (claim,) = c.claims
    assert claim.status == C.TIMED and not c.verdicts_changed
    assert all(e.status in (C.TIMED, C.UNCHANGED) for e in claim.evidence)
    assert c.summary()["numbers"] == {C.TIMED: 3, C.UNCHANGED: 2}
    text = C.report(c)
    assert "verdicts all unchanged" in text and "measures time (3)" in text
    # without the declaration the live number and the claim count as before
    c = C.compare(
        build(tmp_path / "c", 2.6, "holds", False),
        build(tmp_path / "d", 1.1, "does not hold", False),
    )
    assert {x.id: x.status for x in c.items if x.status != C.UNCHANGED}["rns-live-spu"] == (
        C.UNKNOWN
    )
    assert c.claims[0].status == C.CHANGED and c.verdicts_changed
    # an undeclared number that moves is still a move beside declared timings
    assert C.measures_time("rns-bleu", ("rns-live-",)) is False
    assert C.measures_time("t[a | BLEU]", ()) is False
    assert C.measures_time("cho-stages[x | seconds]", ()) is True
