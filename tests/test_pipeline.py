"""The pipeline on a two-page test book: run, rebuild from cache, failures, kills, bad
parameters."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minibook import make_minibook

from rnnlib.cache import ArtifactCache

RNNLIB = [sys.executable, "-m", "rnnlib.cli"]


def rnnlib(book: Path, *args, timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
    return subprocess.run(
        RNNLIB + list(args), cwd=book, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture
def book(tmp_path):
    return make_minibook(tmp_path / "book")


def events(book):
    log = book / "_build" / "build-log.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.slow
def test_build_then_rebuild_reuses_the_cache(book):
    first = rnnlib(book, "build", "--profile", "smoke", "--no-progress")
    assert first.returncode == 0, first.stderr
    assert [e["hit"] for e in events(book)] == [False]
    html = (book / "_build" / "_build" / "html" / "chapters" / "demo.html").read_text()
    assert "Ran with profile" in html and "<img" in html and 'id="demo-plot"' in html
    # the glued number is the computed one: seed 3 (profile defaults), n 5 -> 3 * (0+1+2+3+4)
    assert ">30<" in html.replace(" ", "") or "30</span>" in html
    figures = sorted(p.name for p in (book / "_build" / "figures").iterdir())
    assert any(f.startswith("demo-demo-plot-smoke-") and f.endswith(".png") for f in figures)
    assert any(f.endswith(".pdf") for f in figures)
    second = rnnlib(book, "build", "--profile", "smoke", "--no-progress")
    assert second.returncode == 0, second.stderr
    assert [e["hit"] for e in events(book)] == [True]
    assert "total" in second.stdout and "cached" in second.stdout
    third = rnnlib(
        book, "run", "chapters/demo.md", "--profile", "smoke", "-p", "n=6", "--no-progress"
    )
    assert third.returncode == 0, third.stderr
    assert [e["hit"] for e in events(book)][-1] is False  # n changed: recomputed


@pytest.mark.slow  # starts a build
def test_bad_parameter_is_refused_before_any_work(book):
    res = rnnlib(book, "build", "--profile", "smoke", "-p", "n=1000")
    assert res.returncode == 2
    assert (
        "parameter 'n' = 1000 (command-line override, chapter demo): out of range; "
        "it accepts an int in [1, 100]" in res.stderr
    )
    assert not (book / "_build" / "src" / "chapters" / "demo.ipynb").exists()
    res = rnnlib(book, "run", "chapters/demo.md", "--profile", "smoke", "-p", "beam=3")
    assert res.returncode == 2 and "override 'beam': unknown parameter" in res.stderr


@pytest.mark.slow  # builds a book in a process of its own
def test_failing_chapter_names_chapter_cell_and_error_and_keeps_the_notebook(book):
    res = rnnlib(book, "build", "--profile", "smoke", "--no-progress", "-p", "fail=true")
    assert res.returncode == 1
    assert "chapter chapters/demo.md failed in cell 4" in res.stderr
    assert "AssertionError: asked to fail" in res.stderr
    kept = book / "_build" / "src" / "chapters" / "demo.ipynb"
    assert kept.exists() and "asked to fail" in kept.read_text()
    assert not (book / "_build" / "_build" / "html").exists()
    # what the kernel said is kept, and the terminal had the cache's lines as they came
    said = (book / "_build" / "logs" / "demo.log").read_text()
    assert "rnnlib cache: computing demo/numbers/" in said and "computed in" in said
    assert "  [demo 0:0" in res.stderr and "] computing demo/numbers/" in res.stderr


@pytest.mark.slow
def test_build_killed_mid_write_is_neither_trusted_nor_fatal(book):
    cache = book / "_cache"
    proc = subprocess.Popen(
        RNNLIB + ["build", "--profile", "smoke", "--no-progress", "-p", "slow=60"],
        cwd=book,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 120
    started = lambda: list((cache / "work").rglob("started")) if (cache / "work").exists() else []  # noqa: E731
    while not started() and time.time() < deadline:
        time.sleep(0.2)
    assert started(), "the chapter never reached the artifact"
    partial = list((cache / ".tmp").rglob("numbers.json"))
    assert partial and partial[0].read_text() == "["  # half written
    os.killpg(proc.pid, signal.SIGKILL)  # the build and its kernel
    proc.wait(timeout=30)
    # nothing published: the entry's folder (its key: n 5, seed 3 of the smoke profile) is absent
    final = (
        cache / "demo" / "numbers" / ArtifactCache.key("demo/numbers", {"n": 5, "seed": 3}, None)
    )
    assert not final.exists() and not list(cache.glob("demo/**/meta.json"))
    res = rnnlib(book, "build", "--profile", "smoke", "--no-progress")
    assert res.returncode == 0, res.stderr
    assert [e["hit"] for e in events(book)] == [False]  # recomputed, not trusted
    assert [e["key"] for e in events(book)] == [final.name]  # the key checked above
    numbers = final / "numbers.json"
    assert json.loads(numbers.read_text()) == [0, 3, 6, 9, 12]
    assert not list((cache / ".tmp").iterdir())  # the dead writer's folder was swept


def test_version_is_printed(tmp_path):
    from rnnlib import __version__

    res = rnnlib(tmp_path, "--version")
    assert res.returncode == 0 and res.stdout.strip() == f"rnnlib {__version__}"
