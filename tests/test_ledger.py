"""The faithfulness ledger: every module with a Deviations section reaches the page; "Reading the
papers"."""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from rnnlib.book import ledger as L

ROOT = Path(__file__).resolve().parents[1]
READING = ROOT / "chapters" / "reading.md"


def test_ledger_lists_every_wing_and_the_modules_a_typed_list_used_to_miss():
    entries = {e.module: e for e in L.ledger()}
    for name in [
        "rnnlib.gru",
        "rnnlib.encoders",
        "rnnlib.attention",
        "rnnlib.decoders",
        "rnnlib.init",
    ]:
        assert entries[name].equations and entries[name].deviations, name
    for name in [
        "rnnlib.minibatch_order",
        "rnnlib.batch",
        "rnnlib.corpus.dataset",
        "rnnlib.corpus.vocab",
        "rnnlib.smt.decoder",
        "rnnlib.smt.align",
        "rnnlib.bench.reference",
    ]:
        assert entries[name].deviations, name
    assert any("target length" in d for d in entries["rnnlib.minibatch_order"].deviations)
    assert any("U_a h_j" in e for e in entries["rnnlib.attention"].equations)
    assert "rnnlib.specials" not in entries  # no Deviations section: not in the ledger
    page = L.ledger_markdown(readings=READING)
    wings = re.findall(r"^## (.+)$", page, re.MULTILINE)
    assert wings[0] == "Models and training (`rnnlib`)"
    assert {"The corpus (`rnnlib.corpus`)", "The phrase-based baseline (`rnnlib.smt`)"} <= set(
        wings
    )
    assert len(wings) == len(set(wings))  # each wing once: modules are grouped
    assert (
        page.index("### `rnnlib.minibatch_order`")
        < page.index("## The corpus")
        < page.index("### `rnnlib.corpus.vocab`")
    )


def test_parse_sections_reads_headings_bullets_and_the_inline_form():
    doc = "T.\n\nEquations\n---------\n- a\n  b\n\n* c\nprose\n"
    assert L.parse_sections(doc) == {"Equations": ["a b", "c"]}
    assert L.parse_sections("T.\n\nDeviations: none (only names\nparameters).\n\nMore.") == {
        "Deviations": ["none (only names parameters)."]
    }
    assert L.parse_sections("T.\n\nDeviations:\n\n* x\n  y\n* z\n") == {"Deviations": ["x y", "z"]}


def _package(tmp_path: Path, monkeypatch, name: str, modules: dict[str, str]) -> str:
    for rel, doc in modules.items():
        path = tmp_path / name / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""{textwrap.dedent(doc)}"""\n', encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, mod)
    return name


GOOD = {
    "__init__.py": "A package.\n",
    "plain.py": "No deviations here.\n",
    "model.py": "A model.\n\nEquations\n---------\n- Eq. 1\n\nDeviations\n----------\n- a bias\n",
    "wing/part.py": "A part in a folder without __init__.\n\nDeviations: none.\n",
}


def test_discovery_finds_a_new_module_in_any_folder(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "ledger_demo_a", GOOD)
    assert L.module_names(pkg) == [
        "ledger_demo_a",
        "ledger_demo_a.model",
        "ledger_demo_a.plain",
        "ledger_demo_a.wing.part",
    ]
    entries = L.ledger(pkg)
    assert [(e.module, e.wing) for e in entries] == [
        ("ledger_demo_a.model", None),
        ("ledger_demo_a.wing.part", "wing"),
    ]
    page = L.ledger_markdown(pkg)
    assert "### `ledger_demo_a.wing.part`" in page and "- none." in page and "plain" not in page


@pytest.mark.parametrize(
    "case, doc, message",
    [
        (
            1,
            "X.\n\nDeviations (known defects):\n\n* one\n",
            r"'Deviations \(known defects\):' is not a section heading",
        ),
        (
            2,
            "X.\n\nDeviations from the papers\n--------------------------\n- one\n",
            "is not a section heading",
        ),
        (3, "X.\n\nDeviations\n----------\n+ one\n", "has no '- ' or '\\* ' bullets"),
        (4, "X.\n\nEquations\n---------\n- Eq. 1\n", "Equations but no Deviations"),
        (
            5,
            "X.\n\nKnown deviations\n~~~~~~~~~~~~~~~~\n- one\n",
            "'Known deviations' is not a section heading",
        ),
        (6, "X.\n\n**Known deviations**\n\n- one\n", "is not a section heading"),
        (7, "X.\n\n    Deviations\n\n- one\n", "'Deviations' is not a section heading"),
        (8, "X.\n\n.. rubric:: Deviations\n\n- one\n", "is not a section heading"),
        (9, "X.\n\n### Deviation\n\n- one\n", "'### Deviation' is not a section heading"),
        (10, "X.\n\n**DEVIATIONS**\n\nProse, not bullets.\n", "has no '- ' or '\\* ' bullets"),
    ],
)
def test_a_module_whose_deviations_would_not_reach_the_page_stops_the_ledger(
    tmp_path, monkeypatch, case, doc, message
):
    name = f"ledger_demo_b{case}"
    pkg = _package(tmp_path, monkeypatch, name, dict(GOOD, **{"wing/added.py": doc}))
    with pytest.raises(L.LedgerError, match=rf"{name}\.wing\.added: .*{message}"):
        L.ledger(pkg)
    with pytest.raises(L.LedgerError):
        L.ledger_markdown(pkg)  # what the ledger chapter calls: the build stops


# A Deviations heading in the other forms a docstring may give it; each is followed by the bullets.
HEADING_FORMS = {
    "tilde underline": "Deviations\n~~~~~~~~~~\n",
    "equals overline and underline": "==========\nDeviations\n==========\n",
    "caret underline": "Deviations\n^^^^^^^^^^\n",
    "underline, then a blank line": "Deviations\n----------\n\n",
    "no underline, a blank line": "Deviations\n\n",
    "a blank line, then the underline": "Deviations\n\n----------\n",
    "bold": "**Deviations**\n\n",
    "bold with a colon": "**Deviations:**\n",
    "bold, colon outside": "**Deviations**:\n\n",
    "upper case, underlined": "DEVIATIONS\n----------\n",
    "upper case, colon": "DEVIATIONS:\n",
    "lower case, tilde underline": "deviations\n~~~~~~~~~~\n",
    "markdown heading": "## Deviations\n\n",
}


@pytest.mark.parametrize("form", list(HEADING_FORMS))
def test_a_deviations_heading_in_another_form_reaches_the_page(tmp_path, monkeypatch, form):
    doc = (
        f"X.\n\nEquations\n---------\n- Eq. 1\n\n{HEADING_FORMS[form]}- a bias\n  on W\n"
        "* none else\n\nMore prose.\n"
    )
    assert L.parse_sections(doc) == {
        "Equations": ["Eq. 1"],
        "Deviations": ["a bias on W", "none else"],
    }
    name = f"ledger_demo_e{list(HEADING_FORMS).index(form)}"
    pkg = _package(tmp_path, monkeypatch, name, dict(GOOD, **{"wing/added.py": doc}))
    entries = {e.module: e for e in L.ledger(pkg)}
    assert entries[f"{name}.wing.added"].deviations == ["a bias on W", "none else"]
    assert entries[f"{name}.wing.added"].equations == ["Eq. 1"]
    assert "- a bias on W\n- none else" in L.ledger_markdown(pkg)


def test_every_heading_naming_deviations_is_read_or_refused_never_dropped():
    """Each wording x case x markup x underline: an entry with the bullet, or a problem naming the
    module."""
    words = ["Deviations", "Deviation", "Known deviations", "Deviations from the papers"]
    cases = [str.title, str.upper, str.lower, lambda w: w]
    markups = [
        "{}",
        "**{}**",
        "**{}:**",
        "**{}**:",
        "{}:",
        "## {}",
        "__{}__",
        "    {}",
        ":{}:",
        ".. rubric:: {}",
    ]
    underlines = [
        "",
        "\n",
        "\n\n",
        "\n----------",
        "\n~~~~~~~~~~",
        "\n==========",
        "\n^^^^^^^^^^",
        "\n\n~~~~~~~~~~",
        "\n''''''''''",
        '\n""""""""""',
        "\n++++++++++",
        "\n**********",
    ]
    read = refused = 0
    for word in words:
        for case in cases:
            for markup in markups:
                for underline in underlines:
                    heading = markup.format(case(word)) + underline
                    entry, problems = L.entry_of("demo", f"X.\n\n{heading}\n- a bias\n")
                    if entry is not None:
                        assert entry.deviations == ["a bias"], heading
                        read += 1
                    else:
                        assert problems and all(p.startswith("demo: ") for p in problems), heading
                        refused += 1
    assert read and refused


def test_a_module_that_cannot_be_imported_stops_the_ledger(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "ledger_demo_c", dict(GOOD))
    (tmp_path / pkg / "broken.py").write_text(
        '"""B.\n\nDeviations: none."""\nimport no_such_module_here\n'
    )
    with pytest.raises(L.LedgerError, match="ledger_demo_c.broken: cannot be imported"):
        L.ledger(pkg)


def test_reading_citations_render_as_links_and_unknown_labels_are_refused(tmp_path, monkeypatch):
    cite = "Reading the papers, ``reading-demo``"
    pkg = _package(
        tmp_path,
        monkeypatch,
        "ledger_demo_d",
        dict(
            GOOD,
            **{"model.py": f"M.\n\nDeviations\n----------\n- h<t> is read as printed ({cite}).\n"},
        ),
    )
    (tmp_path / pkg / "other.py").write_text(  # a function's docstring, split over two lines
        '"""O."""\n\n\ndef f():\n    """Cites (Reading the papers,\n    ``reading-missing``)."""\n'
    )
    page = tmp_path / "reading.md"
    page.write_text("# Reading\n\n(reading-demo)=\n## Demo\n", encoding="utf-8")
    assert L.cited_readings(pkg) == {
        "reading-demo": ["ledger_demo_d.model"],
        "reading-missing": ["ledger_demo_d.other:f"],
    }
    with pytest.raises(L.LedgerError, match=r"reading-missing \(in ledger_demo_d.other:f\)"):
        L.ledger_markdown(pkg, readings=page)
    page.write_text(
        "# Reading\n\n(reading-demo)=\n## Demo\n\n(reading-missing)=\n## M\n", encoding="utf-8"
    )
    out = L.ledger_markdown(pkg, readings=page)
    assert "- h\\<t> is read as printed (Reading the papers, {ref}`reading-demo`)." in out


@pytest.mark.slow  # reads every docstring: about 5 s
def test_no_docstring_cites_the_inventory_and_every_cited_reading_exists():
    mentions = [where for where, doc in L.docstrings() if "inventory" in doc.lower()]
    assert not mentions, f"docstrings that cite a file the reader does not have: {mentions}"
    cited = L.cited_readings()
    assert {"reading-source-end", "reading-beam-search"} <= set(cited)
    missing = set(cited) - L.reading_labels(READING)
    assert not missing, f"cited readings missing from chapters/reading.md: {missing}"
    L.check_readings(READING)


def test_reading_page_has_unique_labels_each_on_a_heading_and_is_in_the_book():
    text = READING.read_text(encoding="utf-8")
    labels = re.findall(r"^\((reading-[a-z0-9-]+)\)=$", text, re.MULTILINE)
    assert len(labels) >= 15 and len(labels) == len(set(labels))
    for label in labels:
        after = text.split(f"({label})=\n", 1)[1]
        assert after.startswith("#"), f"{label} does not label a heading"
    assert "inventory" not in text.lower()
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert files.index("chapters/reading") < files.index("chapters/ledger")


def test_the_experiment_modules_are_a_wing_of_their_own_under_their_new_names():
    entries = {e.module: e for e in L.ledger()}
    # the renamed modules reach the page under their new names, the old names are gone
    for name in [
        "rnnlib.experiments.baseline",
        "rnnlib.experiments.training_runs",
        "rnnlib.smt.system",
        "rnnlib.book.corpus_params",
        "rnnlib.minibatch_order",
    ]:
        assert name in entries, name
    for old in [
        "rnnlib.book.baseline",
        "rnnlib.book.runs",
        "rnnlib.smt.pipeline",
        "rnnlib.batching",
    ]:
        assert old not in entries, old
    assert entries["rnnlib.experiments.baseline"].wing == "experiments"
    # every module of rnnlib.experiments with a Deviations section is listed in that wing
    experiments = [n for n in L.module_names() if n.startswith("rnnlib.experiments.")]
    with_deviations = [
        n
        for n in experiments
        if "Deviations" in L.parse_sections(importlib.import_module(n).__doc__ or "")
    ]
    assert "rnnlib.experiments.baseline" in with_deviations
    page = L.ledger_markdown()
    wing = "## The experiments, one module per chapter (`rnnlib.experiments`)"
    assert page.count(wing) == 1
    section = page.split(wing, 1)[1].split("\n## ", 1)[0]
    assert all(f"### `{n}`" in section for n in with_deviations)
    assert page.index("## The phrase-based baseline") < page.index(wing) < page.index("## The book")


def test_bf16_error_table_rounds_each_models_errors_to_significant_digits(monkeypatch):
    import pandas as pd

    import rnnlib.fast.precision as precision

    def fake_bf16_error(preset):
        attention = None if preset.endswith("rnnencdec") else 0.00123456
        return {"preset": preset, "logprob": 0.0456789, "logprob_range": 12.3456,
                "attention": attention, "tokens": 640}  # fmt: skip

    monkeypatch.setattr(precision, "bf16_error", fake_bf16_error)
    table = L.bf16_error_table("smoke")
    assert table.index.name == "model" and list(table.index) == [
        "smoke-rnnsearch",
        "smoke-rnnencdec",
    ]
    assert table.loc["smoke-rnnsearch"].to_dict() == {
        "max |log p bf16 - log p fp32|": 0.046,
        "spread of the fp32 log p": 12.3,
        "max |alpha bf16 - alpha fp32|": 0.0012,
        "target positions": 640,
    }
    assert pd.isna(table.loc["smoke-rnnencdec", "max |alpha bf16 - alpha fp32|"])  # no attention
