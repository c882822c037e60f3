"""Stale claims: a chapter's rerun replaces its claims records, a chapter the book no longer has
loses them, ``rnnlib run`` of one chapter keeps the others', and each record names its build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from minibook import make_minibook
from rnnlib.book import claims, execute, glance
from rnnlib import verdicts

CLAIM_CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# {name}

```{{code-cell}} python
:tags: [parameters]
profile: str = "cpu"  # profile name
k: int = 2  # [0, 2] how many claims to record
```

```{{code-cell}} python
from rnnlib import verdicts
from rnnlib.book import claims
from rnnlib.book.chapter import Chapter
ch = Chapter.start("{name}", globals())
for claim in {claims}[:k]:
    claims.record(ch, claim, verdicts.not_measurable("{name}"))
```
"""


def _chapter(tmp_path, name="demo"):
    return SimpleNamespace(
        name=name,
        profile="smoke",
        config_hash="0",
        figures_dir=tmp_path / "figures",
        text=lambda *_: None,
    )


BUILD = {"id": "20250102T030405Z-abcdef", "started": "2025-01-02T03:04:05+00:00",
         "commit": "0123456789abcdef0123456789abcdef01234567+dirty"}  # fmt: skip


def test_each_record_names_the_build_from_the_environment_and_the_ledger_shows_it(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("RNNLIB_RESULTS", raising=False)
    monkeypatch.setenv(claims.BUILD_ENV, json.dumps(BUILD))
    claims.record(_chapter(tmp_path), "C-B-T1-1", verdicts.not_measurable("x"))
    monkeypatch.delenv(claims.BUILD_ENV)
    claims.record(_chapter(tmp_path, "other"), "C-B-T1-2", verdicts.not_measurable("y"))
    recs = {r.claim: r for r in claims.load_checks(tmp_path / "results")}
    assert recs["C-B-T1-1"].build == BUILD and recs["C-B-T1-2"].build is None
    rows = {r["claim"]: r for r in claims.ledger(tmp_path / "results")}
    label = "build 20250102T030405Z-abcdef (0123456789ab+dirty)"
    assert rows["C-B-T1-1"]["build"] == label
    assert rows["C-B-T1-2"]["build"] == "outside a build"
    assert rows["C-A-T1-1"]["build"] is None  # no chapter recorded it
    table = glance.claims_table(pd.DataFrame(claims.ledger(tmp_path / "results")), set())
    line = next(r for r in table.split("\n") if "`C-B-T1-1`" in r)
    assert f"| {{doc}}`demo` ({label}) |" in line
    assert "| — |" in next(r for r in table.split("\n") if "`C-A-T1-1`" in r)
    with pytest.raises(ValueError, match="RNNLIB_BUILD"):
        monkeypatch.setenv(claims.BUILD_ENV, "not json")
        claims.current_build()


def test_reconcile_deletes_the_running_chapters_and_the_removed_chapters_records(tmp_path):
    folder = tmp_path / "claims"
    folder.mkdir()
    for stem in ("kept", "running", "removed"):
        (folder / f"{stem}.json").write_text("[]")
    gone = claims.reconcile(tmp_path, book=["kept", "running", "new"], running=["running"])
    assert sorted(p.stem for p in gone) == ["removed", "running"]
    assert sorted(p.stem for p in folder.iterdir()) == ["kept"]
    assert claims.reconcile(tmp_path / "nothing", ["a"], ["a"]) == []


def test_one_process_is_one_build_naming_its_commit(tmp_path):
    first = execute.new_build(tmp_path)
    assert execute.this_build(tmp_path) is first and first.commit == "unknown"  # no repository
    assert json.loads(first.as_json())["id"] == first.id
    env = execute.kernel_env(tmp_path, tmp_path, tmp_path, "x", first)
    assert json.loads(env[claims.BUILD_ENV]) == {
        "id": first.id,
        "started": first.started,
        "commit": "unknown",
    }
    assert execute.new_build(tmp_path).id != first.id


# -- end to end: `rnnlib build` and `rnnlib run` on a book of two chapters that record claims -----
def _rnnlib(book: Path, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    proc = subprocess.run(
        [sys.executable, "-m", "rnnlib.cli", *args, "--profile", "smoke", "--no-progress"],
        cwd=book,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def _records(book: Path) -> dict[str, tuple[str, str]]:
    """claim -> (chapter, build id) of every record under the build's results."""
    return {
        r.claim: (r.chapter, r.build["id"]) for r in claims.load_checks(book / "_build" / "results")
    }


@pytest.mark.slow  # four chapter kernels, about 25 s
def test_build_replaces_every_record_and_run_keeps_the_other_chapters(tmp_path):
    book = make_minibook(tmp_path / "book")
    for name, ids in (("one", ["C-B-T1-1", "C-B-T1-2"]), ("two", ["C-B-T1-3", "C-B-T1-4"])):
        (book / "chapters" / f"{name}.md").write_text(CLAIM_CHAPTER.format(name=name, claims=ids))
    (book / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n  - file: chapters/one\n  - file: chapters/two\n"
    )
    (book / "profiles" / "smoke.yml").write_text("description: test\n")
    _rnnlib(book, "build", "--no-html")
    first = _records(book)
    assert {c: ch for c, (ch, _) in first.items()} == {
        "C-B-T1-1": "one", "C-B-T1-2": "one", "C-B-T1-3": "two", "C-B-T1-4": "two"
    }  # fmt: skip
    assert len({b for _, b in first.values()}) == 1  # one build for both chapters
    # a rerun of chapter one that records no claim keeps none of its old ones, and chapter two's
    _rnnlib(book, "run", "chapters/one.md", "-p", "k=0")
    second = _records(book)
    assert second == {c: first[c] for c in ("C-B-T1-3", "C-B-T1-4")}
    # chapter two leaves the book: the next build (chapter one recording one claim) leaves
    # nothing of it, nor of chapter one's earlier records
    (book / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n  - file: chapters/one\n"
    )
    _rnnlib(book, "build", "--no-html", "-p", "k=1")
    third = _records(book)
    assert set(third) == {"C-B-T1-1"}
    assert not {b for _, b in third.values()} & {b for _, b in first.values()}
