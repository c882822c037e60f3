"""Shared fixtures: one smoke build of the real book per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # tests/minibook.py


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """One artifact cache for the whole session, shared by the smoke book and the chapters run on
    the user's files (``run_on_files``): artifact keys hash the files' contents, so what two runs
    compute on identical files (the corpus, the phrase-based system) is computed once, whichever
    test comes first; no test relies on another having run. ``RNNLIB_TEST_CACHE`` may name a
    folder to reuse between sessions (for example the corpus download); by default it starts
    empty."""
    return Path(os.environ.get("RNNLIB_TEST_CACHE") or tmp_path_factory.mktemp("session-cache"))


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory, session_cache):
    """Build the whole book with the smoke profile into a temporary folder, with
    :func:`session_cache`.

    Returns ``(out_dir, completed_process)``.
    """
    out = tmp_path_factory.mktemp("smoke-book")
    cache = session_cache
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
            str(cache),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=1500,
    )
    (out / "build-output.txt").write_text(proc.stdout + "\n" + proc.stderr)
    return out / "build", proc


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test left open (pyplot keeps every figure until closed)."""
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
