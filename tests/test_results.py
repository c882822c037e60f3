"""Every glued result recorded as it is glued, read back by name, published beside the HTML,
citable."""

import json
import math
import os

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rnnlib.book import chapter as chapter_module  # noqa: E402
from rnnlib.book import results  # noqa: E402
from rnnlib.book.chapter import Chapter  # noqa: E402
from rnnlib.book.citing import chapter_papers  # noqa: E402
from rnnlib.book.execute import publish_html  # noqa: E402

from minibook import ROOT, make_minibook  # noqa: E402

PARAMS = {"profile": "smoke", "seed": 3, "n": 4, "fail": False, "slow": 0.0}


@pytest.fixture
def shown(tmp_path, monkeypatch):
    """A mini book whose chapter runs here (no kernel): the Markdown it shows is collected."""
    root = make_minibook(tmp_path / "book")
    monkeypatch.setenv("RNNLIB_BOOK_ROOT", str(root))
    monkeypatch.setenv("RNNLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RNNLIB_FIGURES", str(tmp_path / "out" / "figures"))
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    out = []
    monkeypatch.setattr(chapter_module, "_display_markdown", out.append)
    monkeypatch.setattr(chapter_module, "_glue", lambda name, value: None)
    return out


def record_file(tmp_path):
    return tmp_path / "out" / "results" / "demo.json"  # RNNLIB_RESULTS unset: beside the figures


def table():
    index = pd.MultiIndex.from_tuples(
        [("dev", "a"), ("test", "b"), ("test", "c")], names=["split", "system"]
    )
    return pd.DataFrame(
        {
            "BLEU": [12.5, np.nan, 3.0],
            "paper": [30.64, 33.3, np.nan],
            "note": ["x", None, "z"],
            "n": [1, 2, 3],
        },
        index=index,
    )


def run_chapter(tmp_path):
    ch = Chapter.start("demo", dict(PARAMS), show=False)
    art = ch.artifact(
        "demo/numbers", {"n": 4}, lambda out, work: (out / "x.txt").write_text("1") and None
    )
    ch.number("demo-sum", np.int64(6))
    ch.number("demo-ppl", float("nan"), 1)
    ch.text("demo-verdict", "**holds**", artifacts=[art])
    ch.table("demo-table", table(), artifacts=[art, {"n": 4}])
    fig, ax = plt.subplots()
    ax.plot([1, 2])
    ch.figure("demo-plot", fig, artifacts=[])
    return ch, art


def test_each_glued_result_is_recorded_with_its_value_files_and_provenance(tmp_path, shown):
    ch, art = run_chapter(tmp_path)
    entries = json.loads(record_file(tmp_path).read_text())
    by_name = {e["name"]: e for e in entries}
    assert [e["name"] for e in entries] == [
        "params",
        "demo-sum",
        "demo-ppl",
        "demo-verdict",
        "demo-table",
        "demo-plot",
    ]
    assert [e["kind"] for e in entries] == ["params", "number", "number", "text", "table", "figure"]
    assert by_name["params"]["value"] == ch.params  # what the results ran with, first
    for e in entries:
        assert e["stable_name"] == ch.stable_name(e["name"])
        assert (e["chapter"], e["profile"], e["config_hash"]) == ("demo", "smoke", ch.config_hash)
        assert e["commit"] == ch.commit
    assert by_name["demo-sum"]["value"] == 6 and by_name["demo-ppl"]["value"] is None  # NaN as null
    assert by_name["demo-verdict"]["value"] == "**holds**"
    assert by_name["demo-table"]["value"]["data"][1][:3] == [None, 33.3, None]
    assert by_name["demo-table"]["value"]["index"][0] == ["dev", "a"]
    assert by_name["demo-plot"]["value"] is None
    stem = ch.stable_name("demo-plot")
    assert by_name["demo-plot"]["files"] == [f"{stem}.png", f"{stem}.pdf"]
    assert by_name["demo-table"]["files"] == [ch.stable_name("demo-table") + ".csv"]
    assert all((tmp_path / "out" / "figures" / f).is_file() for e in entries for f in e["files"])
    # provenance: what was passed, else what the chapter looked up in its cache so far
    ref = {"kind": "demo/numbers", "key": art.key}
    assert by_name["demo-sum"]["artifacts"] == [ref]  # no artifacts=: the cache's lookups
    assert by_name["demo-verdict"]["artifacts"] == [ref]
    assert by_name["demo-table"]["artifacts"][0] == ref
    assert by_name["demo-table"]["artifacts"][1]["kind"] == "config/dict"
    assert by_name["demo-plot"]["artifacts"] == []
    # a rerun of the chapter starts its record afresh
    again = Chapter.start("demo", dict(PARAMS), show=False)
    assert [e["name"] for e in json.loads(record_file(tmp_path).read_text())] == ["params"]
    again.number("demo-sum", 7)
    assert [e["value"] for e in json.loads(record_file(tmp_path).read_text())][1:] == [7]


def test_a_write_that_fails_leaves_the_previous_record_whole(tmp_path, shown, monkeypatch):
    ch = Chapter.start("demo", dict(PARAMS), show=False)
    ch.number("demo-a", 1.5)

    def crash(fd):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "fsync", crash)  # the new content is written, not yet in place
    with pytest.raises(OSError, match="disk gone"):
        ch.number("demo-b", 2.5)
    monkeypatch.undo()
    assert [e["name"] for e in json.loads(record_file(tmp_path).read_text())] == [
        "params",
        "demo-a",
    ]
    assert sorted(p.name for p in record_file(tmp_path).parent.iterdir()) == [
        "demo.json"
    ]  # no partial file


def test_load_gives_values_and_tables_back_by_name(tmp_path, shown):
    run_chapter(tmp_path)
    res = results.load(tmp_path / "out" / "results")
    assert res.names() == [
        "params",
        "demo-sum",
        "demo-ppl",
        "demo-verdict",
        "demo-table",
        "demo-plot",
    ]
    assert res.chapters() == ["demo"]
    assert res.value("demo-sum") == 6 and math.isnan(res.value("demo-ppl"))
    assert res.value("demo-verdict") == "**holds**"
    pd.testing.assert_frame_equal(res.table("demo-table"), table(), check_dtype=False)
    assert list(res.table("demo-table").index.names) == ["split", "system"]
    with pytest.raises(
        KeyError, match=r"no result named 'cho-gain-test' .*the chapters loaded are demo"
    ):
        res.value("cho-gain-test")
    with pytest.raises(ValueError, match="is a table, not a number or text"):
        res.value("demo-table")
    with pytest.raises(ValueError, match="is a figure, not a table"):
        res.table("demo-plot")
    # a chapter named "results" records into results.json too: still a records folder
    (tmp_path / "out" / "results" / "results.json").write_text(
        json.dumps([{**res.entry("demo-sum"), "name": "glance-rows", "chapter": "results"}])
    )
    assert results.load(tmp_path / "out" / "results").chapters() == ["demo", "results"]


def test_publishing_merges_the_records_and_copies_the_files_into_the_html_folder(tmp_path, shown):
    ch, _ = run_chapter(tmp_path)
    out = tmp_path / "out"
    src = make_minibook(tmp_path / "src")  # the staging book: its _toc.yml and CITATION.cff
    (out / "_build" / "html").mkdir(parents=True)
    (out / "figures" / "stale-from-an-older-build.png").write_bytes(b"old")
    html = publish_html(src, out)
    published = json.loads((html / "results.json").read_text())
    assert published["book"]["title"].startswith("Learning to align and translate")
    assert published["book"]["version"] and published["book"]["commit"]
    assert [e["name"] for e in published["results"]] == results.load(out / "results").names()
    assert results.load(html).value("demo-sum") == 6  # the published file loads as the records do
    assert sorted(p.name for p in (html / "figures").iterdir()) == sorted(
        f for e in published["results"] for f in e["files"]
    )  # this build's files, nothing older
    (out / "figures" / (ch.stable_name("demo-plot") + ".pdf")).unlink()
    with pytest.raises(FileNotFoundError, match="demo-plot"):
        publish_html(src, out)


def test_cite_block_links_the_files_and_gives_bibtex_for_the_item_and_the_paper(tmp_path, shown):
    ch, _ = run_chapter(tmp_path)
    cite = shown[-1]  # the figure's
    stem = ch.stable_name("demo-plot")
    assert (
        f'<a href="../figures/{stem}.png">' in cite and f'<a href="../figures/{stem}.pdf">' in cite
    )
    assert '<a href="../results.json">' in cite
    assert f"@misc{{{stem}," in cite and "howpublished = {Figure \\texttt{" in cite
    assert f"rnnlib commit {ch.commit}" in cite
    # the mini book's chapter is in no part of the toc: it cites both papers
    assert "@inproceedings{cho2014," in cite and "@inproceedings{bahdanau2015," in cite
    fig, _ = plt.subplots()
    ch.figure("demo-b", fig, artifacts=[], paper="B")
    assert "@inproceedings{bahdanau2015," in shown[-1] and "cho2014" not in shown[-1]
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match=r"paper='C'"):
        ch.figure("demo-c", fig, artifacts=[], paper="C")


def test_a_chapter_cites_the_paper_its_part_of_the_book_names():
    assert chapter_papers(ROOT, "cho2014") == "A"
    assert chapter_papers(ROOT, "rnnsearch") == "B"
    assert chapter_papers(ROOT, "copy_task") == "AB"  # foundations: both


# -- references.bib, parsed by pybtex -------------------------------------------------------------


def test_the_papers_entries_are_references_bib_as_written():
    from rnnlib.book.citing import PAPERS, bib_entries, paper_bibtex

    text = (ROOT / "references.bib").read_text(encoding="utf-8")
    entries = bib_entries(ROOT)
    assert sorted(entries) == sorted(PAPERS.values())
    for entry in entries.values():
        assert entry in text  # byte for byte, the file's own layout
    assert paper_bibtex(ROOT, "BA") == [entries["bahdanau2015"], entries["cho2014"]]


def write_bib(root, bib: str, caption: str):
    root.mkdir(parents=True, exist_ok=True)
    (root / "references.bib").write_text(bib, encoding="utf-8")
    toc = f'parts:\n  - caption: "{caption}"\n    chapters:\n      - file: chapters/one\n'
    (root / "_toc.yml").write_text(toc, encoding="utf-8")
    return root


BIB = r"""
% a comment line, then BibTeX as people write it
@String{emnlp = "Proceedings of {EMNLP}"}
@comment{a note for the editors}
@InProceedings{cho2014,
  Author = "van Merri{\"e}nboer, Bart and Cho, Kyunghyun",
  title = {Learning {RNN} {Encoder--Decoder} {and} more},
  booktitle = emnlp # " 2014",
  year = 2014}
@article{bahdanau2015, author = {{Bahdanau and Sons, Ltd.} and Bengio, Yoshua},
  year = {2015}, title = {NMT}}
"""


def test_references_bib_written_otherwise_is_read_by_its_bibtex_meaning(tmp_path):
    from rnnlib.book.citing import bib_entries

    entries = bib_entries(write_bib(tmp_path, BIB, "Part"))
    assert sorted(entries) == ["bahdanau2015", "cho2014"]  # @comment and @string are no entries
    assert entries["cho2014"] == (
        "@InProceedings{cho2014,\n"
        '  Author    = {van Merri{\\"e}nboer, Bart and Cho, Kyunghyun},\n'
        "  title     = {Learning {RNN} {Encoder--Decoder} {and} more},\n"
        "  booktitle = {Proceedings of {EMNLP} 2014},\n"
        "  year      = {2014}\n"
        "}"
    )
    assert entries["bahdanau2015"].startswith(
        "@article{bahdanau2015,\n  author = {{Bahdanau and Sons, Ltd.} and Bengio, Yoshua},\n"
    )


@pytest.mark.parametrize(
    "caption, papers",
    [
        ("Paper A: van Merriënboer et al. 2014", "A"),  # the von part, the accent decoded
        ("Merriënboer et al. 2014", "AB"),  # the surname alone is not how it is cited
        ("Paper B: Bahdanau and Sons, Ltd. (2015)", "B"),  # a braced name is one author
        ("Paper B: Bahdanau et al. 2015", "AB"),
        ("van Merriënboer et al. 20145", "AB"),  # whole words only, for the year too
    ],
)
def test_a_part_names_a_paper_by_its_first_authors_surname_and_year(tmp_path, caption, papers):
    assert chapter_papers(write_bib(tmp_path, BIB, caption), "one") == papers


def test_a_broken_references_bib_is_an_error_naming_the_file(tmp_path):
    from rnnlib.book.citing import bib_entries

    root = write_bib(tmp_path / "unbalanced", "@misc{a, title = {x}\n@misc{b, title={y}}\n", "P")
    with pytest.raises(ValueError, match=r"references\.bib: syntax error in line 2"):
        bib_entries(root)
    root = write_bib(tmp_path / "twice", "@misc{a, title={x}}\n@misc{a, title={y}}\n", "P")
    with pytest.raises(ValueError, match=r"references\.bib: repeated bibliography entry: a"):
        chapter_papers(root, "one")


def test_glue_records_each_number_of_an_item_rounded_as_its_digits_say(tmp_path, shown):
    ch = Chapter.start("demo", dict(PARAMS), show=False)
    glued = ch.glue({"demo-ratio": (2 / 3, 2), "demo-count": np.int64(5)})
    assert glued == {"demo-ratio": 0.67, "demo-count": 5}
    values = {e["name"]: e["value"] for e in json.loads(record_file(tmp_path).read_text())}
    assert values["demo-ratio"] == 0.67 and values["demo-count"] == 5
    with pytest.raises(ValueError, match="used twice"):
        ch.glue({"demo-count": 6})
