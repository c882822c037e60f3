"""Shared fixtures: one smoke build of the real book per test session, shared by the
pytest-xdist workers (the first that needs it builds it, the others wait for it and read it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # tests/minibook.py


def _session_root(tmp_path_factory) -> Path:
    """A folder that every process of this test session sees: under pytest-xdist the workers'
    common parent of their own temporary folders, else the session's temporary folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """One artifact cache for the whole session, shared by the smoke book and the chapters run on
    the user's files (``run_on_files``), in every xdist worker (the cache locks each key being
    built): artifact keys hash the files' contents, so what two runs compute on identical files
    (the corpus, the phrase-based system) is computed once, whichever test comes first; no test
    relies on another having run. ``RNNLIB_TEST_CACHE`` may name a folder to reuse between
    sessions (for example the corpus download); by default it starts empty."""
    if os.environ.get("RNNLIB_TEST_CACHE"):
        return Path(os.environ["RNNLIB_TEST_CACHE"])
    cache = _session_root(tmp_path_factory) / "session-cache"
    cache.mkdir(exist_ok=True)
    return cache


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory, session_cache):
    """The whole book built with the smoke profile into a temporary folder, with
    :func:`session_cache`: once per session, by the first worker that needs it, while the others
    wait on a lock (two workers building it side by side took twice as long on 2 cores).

    Returns ``(out_dir, completed_process)``.
    """
    root = _session_root(tmp_path_factory)
    out = root / "smoke-book"
    record = out / "build-process.json"
    with FileLock(str(root / "smoke-book.lock")):
        if not record.is_file():  # (a build that raised, e.g. timed out, is tried again)
            out.mkdir(exist_ok=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("RNNLIB_")}
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "rnnlib.cli",
                    "build",
                    "--profile",
                    "smoke",
                    "--no-progress",
                    "--out",
                    str(out / "build"),
                    "--cache",
                    str(session_cache),
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env=env,
                timeout=1500,
            )
            (out / "build-output.txt").write_text(proc.stdout + "\n" + proc.stderr)
            fields = ("args", "returncode", "stdout", "stderr")
            record.write_text(json.dumps({f: getattr(proc, f) for f in fields}))
        done = json.loads(record.read_text())
    proc = subprocess.CompletedProcess(**done)
    return out / "build", proc


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test left open (pyplot keeps every figure until closed)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def _order(item) -> int:
    if "smoke_book" not in getattr(item, "fixturenames", ()):
        return 1
    if item.name.startswith("test_smoke_build_executes_every_chapter"):
        return 0
    return 2 if item.module.__name__.endswith("test_determinism") else 3


def pytest_collection_modifyitems(config, items):
    """Order the tests for two workers: the smoke build's own test first (a worker starts the
    build at once), then every test that does not read the smoke book (the other worker runs
    them meanwhile: before this, it sat waiting for the build for 340 of its 410 s), then the
    determinism test (the longest that reads the book), then the other tests that read it.
    pytest-xdist's ``load`` scheduling hands the tests out in this order; the sort is stable, so
    every worker collects the same order."""
    items.sort(key=_order)
