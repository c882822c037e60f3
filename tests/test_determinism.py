"""Two from-empty builds on one machine give the same numbers.

The rnnsearch chapter's networks of its own seed are trained again in a cache of their own (a
copy of the smoke book's cache without those runs and every ``rnnsearch/`` artifact computed from
them or from the seed's untrained network, so that the phrase-based row, whose eflomal alignment
is sampled without a seed, is the same one) and every number, text and table the chapter glues is
set against the smoke book's: only what measures time may differ, and the chapter says which
(``rnnsearch.setting.timed``, ``timed_column``). The further seeds' runs (the rebuild spread) are
read from the copy: they take the same code path with another seed, so training them again would
test nothing more and cost about as much again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rnnlib.book import results
from rnnlib.book.execute import resolve_all
from rnnlib.experiments.rnnsearch import setting as rnnsearch_setting

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _config(art: Path) -> dict:
    return json.loads((art / "meta.json").read_text())["config"]


def drop_the_seeds_networks(cache: Path, seed: int) -> tuple[int, int]:
    """Delete from ``cache`` every ``rnnsearch/`` artifact but the training runs of seeds other
    than ``seed`` (and not continuing a run of ``seed``) and what reads only such runs; returns
    ``(kept, dropped)``. The rest, the seed's runs and its untrained network's artifacts
    included, is computed again."""
    runs = (cache / "rnnsearch" / "run").glob("*/meta.json")
    keep: set[str] = set()
    # (parents first: a continued run is kept only with its parent)
    for meta in sorted(runs, key=lambda m: (_config(m.parent).get("parent") is not None, m)):
        c = _config(meta.parent)
        if c["train"]["seed"] != seed and (c.get("parent") is None or c["parent"] in keep):
            keep.add(meta.parent.name)
    kept = dropped = 0
    for meta in sorted((cache / "rnnsearch").glob("*/*/meta.json")):
        art, c = meta.parent, _config(meta.parent)
        if art.parent.name == "run" and art.name in keep or c.get("run") in keep:
            kept += 1
        else:
            shutil.rmtree(art)
            dropped += 1
    return kept, dropped


def test_the_seeds_networks_trained_again_give_the_same_numbers(
    smoke_book, session_cache, tmp_path
):
    if os.environ.get("RNNLIB_TEST_CACHE"):
        pytest.skip("the smoke book read a given cache (RNNLIB_TEST_CACHE): not a from-empty build")
    out, proc = smoke_book
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    cache = tmp_path / "cache"
    # (not the work folders of runs that another test may be training in the shared cache now)
    shutil.copytree(session_cache, cache, ignore=shutil.ignore_patterns(".locks", ".tmp", "work"))
    seed = resolve_all(ROOT, "smoke", [], ["rnnsearch"])[1]["rnnsearch"]["seed"]
    kept, dropped = drop_the_seeds_networks(cache, seed)
    assert kept > 0 and dropped > kept  # the further seeds' runs stay, the seed's are trained
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
    assert len(names) > 100 and any(rnnsearch_setting.timed(n) for n in names)
    differ = []
    for name in names:
        a, b = first.entry(name, "rnnsearch"), second.entry(name, "rnnsearch")
        if a["kind"] == "table":
            ta, tb = first.table(name, "rnnsearch"), second.table(name, "rnnsearch")
            keep = [c for c in ta.columns if not rnnsearch_setting.timed_column(c)]
            if not ta[keep].equals(tb[keep]):
                differ.append(name)
        elif a["value"] != b["value"] and not rnnsearch_setting.timed(name):
            differ.append(name)
    assert differ == [], f"two from-empty builds on one machine differ in {differ}"
