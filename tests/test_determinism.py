"""Two from-empty builds on one machine give the same numbers (issue 28, item 3).

The rnnsearch chapter's networks are trained again from an empty cache of their own (a copy of the
smoke book's cache without its ``rnnsearch/`` artifacts, so that the phrase-based row, whose
eflomal alignment is sampled without a seed, is the same one) and every number, text and table
the chapter glues is set against the smoke book's: only what measures time may differ, and the
chapter says which (``rnnsearch.timed``, ``timed_column``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rnnlib.book import results
from rnnlib.experiments import rnnsearch

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def test_the_networks_trained_again_from_empty_give_the_same_numbers(
    smoke_book, session_cache, tmp_path
):
    if os.environ.get("RNNLIB_TEST_CACHE"):
        pytest.skip("the smoke book read a given cache (RNNLIB_TEST_CACHE): not a from-empty build")
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    cache = tmp_path / "cache"
    # (not the work folders of runs that another test may be training in the shared cache now)
    shutil.copytree(session_cache, cache, ignore=shutil.ignore_patterns(".locks", ".tmp", "work"))
    shutil.rmtree(cache / "rnnsearch")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    again = subprocess.run(
        [sys.executable, "-m", "rnnlib.cli", "run", "chapters/rnnsearch.md", "--profile", "smoke",
         "--no-progress", "--out", str(tmp_path / "out"), "--cache", str(cache)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    first = results.load(out / "results")
    second = results.load(tmp_path / "out" / "results")
    names = [e["name"] for e in first.entries if e["chapter"] == "rnnsearch"]
    assert len(names) > 100 and any(rnnsearch.timed(n) for n in names)
    differ = []
    for name in names:
        a, b = first.entry(name, "rnnsearch"), second.entry(name, "rnnsearch")
        if a["kind"] == "table":
            ta, tb = first.table(name, "rnnsearch"), second.table(name, "rnnsearch")
            keep = [c for c in ta.columns if not rnnsearch.timed_column(c)]
            if not ta[keep].equals(tb[keep]):
                differ.append(name)
        elif a["value"] != b["value"] and not rnnsearch.timed(name):
            differ.append(name)
    assert differ == [], f"two from-empty builds on one machine differ in {differ}"
