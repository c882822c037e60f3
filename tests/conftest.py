"""Shared fixtures: one smoke build of the real book per test session, shared by the
pytest-xdist workers (the first that needs it builds it, the others wait for it and read it), and
one artifact cache per session in which the Bible is prepared once.

The two layers: ``-m "not slow"`` (``bash .ci/test --fast``) deselects every test marked ``slow``.
A test is marked ``slow`` by hand when it trains for more than a few seconds or starts a build in a
process of its own, and automatically when it uses a fixture of :data:`SLOW_FIXTURES` (the smoke
book, the Bible; directly or through another fixture). A test outside the ``slow`` layer that
spends more than :data:`FAST_CPU_LIMIT` seconds of CPU is named at the end of the run."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # tests/minibook.py

# Fixtures that make a test slow: every test that uses one, even through another fixture, is marked
# ``slow`` at collection (so a new test cannot forget the mark): the smoke book (minutes) and the
# Bible (its download and extraction, then about 10 s per corpus prepared from it).
SLOW_FIXTURES = frozenset({"smoke_book", "bible_cache"})
# CPU seconds (the test's process and the processes it waited for) above which a test that is not
# marked ``slow`` is named at the end of the run: it belongs in the slow layer.
FAST_CPU_LIMIT = 5.0


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
def bible_cache(session_cache):
    """The :class:`~rnnlib.cache.ArtifactCache` in which tests prepare the Bible: ``$RNNLIB_CACHE``
    if set, else :func:`session_cache`, so the Bible is extracted once per session (by the first
    worker or smoke build that needs it; the cache locks the key meanwhile), not once per worker
    and again for the smoke book."""
    from rnnlib.cache import ArtifactCache

    return ArtifactCache(Path(os.environ.get("RNNLIB_CACHE") or session_cache))


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


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` every test that uses a fixture of :data:`SLOW_FIXTURES`. Order the tests
    for two workers: the smoke build's own test first (a worker starts the build at once), then
    every test that does not read the smoke book (the other worker runs them meanwhile: before
    this, it sat waiting for the build for 340 of its 410 s), then the determinism test (the
    longest that reads the book), then the other tests that read it. pytest-xdist's ``load``
    scheduling hands the tests out in this order; the sort is stable, so every worker collects
    the same order."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_order)


def _cpu_seconds() -> float:
    """CPU time of this process and of the child processes it has waited for."""
    return time.process_time() + sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2])


class _CpuWatch:
    """Names, at the end of the run, the tests not marked ``slow`` whose setup and call took more
    than :data:`FAST_CPU_LIMIT` seconds of CPU (measured where the test runs; the number travels
    to the pytest-xdist controller in the report's ``user_properties``)."""

    def __init__(self):
        self.start = pytest.StashKey[float]()
        self.heavy: list[tuple[float, str]] = []
        self.total = 0.0

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        item.stash[self.start] = _cpu_seconds()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        yield
        if self.start in item.stash:
            item.user_properties.append(("cpu_s", _cpu_seconds() - item.stash[self.start]))

    def pytest_runtest_logreport(self, report):
        cpu = dict(report.user_properties).get("cpu_s", 0.0) if report.when == "call" else 0.0
        self.total += cpu
        if report.when == "call" and "slow" not in report.keywords and cpu > FAST_CPU_LIMIT:
            self.heavy.append((cpu, report.nodeid))

    def pytest_terminal_summary(self, terminalreporter):
        if self.total:  # (not in a --collect-only run)
            line = f"CPU time of the tests' setup and call: {self.total:.0f} s"
            terminalreporter.write_line(line)
        if self.heavy:
            terminalreporter.section(f"tests not marked slow that took over {FAST_CPU_LIMIT:g} s")
            for cpu, nodeid in sorted(self.heavy, reverse=True):
                terminalreporter.write_line(f"{cpu:6.1f} s of CPU  {nodeid}  (mark it slow)")


def _threads_per_worker(config) -> None:
    """Under pytest-xdist with N workers on C cores, give each worker (and every process it
    starts: builds, kernels) ``C // N`` OpenMP/BLAS threads unless ``OMP_NUM_THREADS`` is set.
    Left to their default (one thread per core), two workers on 2 cores run four threads that
    spin while they wait for each other: 40 calibration trials of every rule (run as the rates
    of tests/test_calibration.py run 400) took 3.1 times the CPU they take on one thread. Set
    here, in the controller, before the workers start, so that they import numpy and torch with
    it."""
    workers = getattr(config.option, "numprocesses", None)
    if os.environ.get("PYTEST_XDIST_WORKER") or not isinstance(workers, int) or workers < 2:
        return
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


def pytest_configure(config):
    _threads_per_worker(config)
    config.pluginmanager.register(_CpuWatch(), "rnnlib-cpu-watch")
