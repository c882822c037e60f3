"""The cache's lock per key: processes building one key compute it once."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnnlib.cache import ArtifactCache

REPO = Path(__file__).resolve().parents[1]

# One builder: waits until all builders started (a barrier of files), then builds one key whose
# make counts its calls in a file, keeps state in its work folder and sleeps.
BUILDER = """
import json, os, sys, time
from pathlib import Path
from rnnlib.cache import ArtifactCache

root, barrier, calls, n = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
(barrier / str(os.getpid())).touch()
deadline = time.time() + 60
while len(list(barrier.iterdir())) < n and time.time() < deadline:
    time.sleep(0.01)


def make(out, work):
    with open(calls, "a") as f:
        f.write(f"{os.getpid()}\\n")
    assert not any(work.iterdir()), "the work folder is used by one process at a time"
    (work / "state").write_text(str(os.getpid()))
    time.sleep(1.0)
    (out / "result.txt").write_text(f"made by {os.getpid()}")
    return {"pid": os.getpid()}


art = ArtifactCache(root).build("demo/locked", {"n": 1}, make)
print(json.dumps({
    "key": art.key, "path": str(art.path), "from_cache": art.from_cache,
    "text": art.file("result.txt").read_text(), "extra": art.extra,
}))
"""


@pytest.mark.parametrize("processes", [2, 3])
def test_processes_building_one_key_compute_it_once(tmp_path, processes):
    script = tmp_path / "builder.py"
    script.write_text(BUILDER)
    root, barrier, calls = tmp_path / "cache", tmp_path / "barrier", tmp_path / "calls.txt"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "RNNLIB_BUILD_LOG": ""}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), str(barrier), str(calls), str(processes)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(processes)
    ]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outs.append((json.loads(out), err))
    assert len(calls.read_text().split()) == 1  # make ran exactly once
    results = [r for r, _ in outs]
    assert len({(r["key"], r["path"], r["text"]) for r in results}) == 1  # the same artifact
    assert sorted(r["from_cache"] for r in results) == [False] + [True] * (processes - 1)
    maker = next(r for r in results if not r["from_cache"])
    assert all(r["extra"] == maker["extra"] for r in results)
    # the others waited for the lock, and said so
    waited = [err for r, err in outs if r["from_cache"]]
    assert all("waiting for another process to finish demo/locked/" in err for err in waited)
    cache = ArtifactCache(root)
    assert [(k, key) for k, key, _ in cache.entries()] == [("demo/locked", results[0]["key"])]
    assert not (root / "work" / "demo" / "locked" / results[0]["key"]).exists()
    assert not (root / ".tmp").exists() or not any((root / ".tmp").iterdir())
    assert cache.verify().ok  # the lock file is no entry and breaks nothing


def test_a_failed_make_releases_the_lock(tmp_path):
    cache = ArtifactCache(tmp_path)

    def boom(out, work):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.build("demo/x", {"n": 1}, boom)
    lock = cache.lock_path("demo/x", cache.key("demo/x", {"n": 1}, None))
    assert lock.parent.name == ".locks" and not lock.exists()  # released, and no trace left

    def ok(out, work):
        (out / "r.txt").write_text("fine")

    art = cache.build("demo/x", {"n": 1}, ok)
    assert not art.from_cache and art.file("r.txt").read_text() == "fine"


def test_a_nested_build_of_another_key_under_the_lock(tmp_path):
    cache = ArtifactCache(tmp_path)

    def inner(out, work):
        (out / "a.txt").write_text("a")

    def outer(out, work):
        a = cache.build("demo/a", {}, inner)
        (out / "b.txt").write_text(a.file("a.txt").read_text() + "b")

    b = cache.build("demo/b", {}, outer)
    assert b.file("b.txt").read_text() == "ab"
    assert cache.build("demo/b", {}, outer).from_cache


# Many builders on many keys: every key is computed exactly once even though lock files are
# removed when a build ends (a waiter on a removed file starts over on a new one).
HAMMER = """
import os, sys, time
from pathlib import Path
from rnnlib.cache import ArtifactCache

root, barrier, calls, n, keys = (
    Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
)
(barrier / str(os.getpid())).touch()
while len(list(barrier.iterdir())) < n:
    time.sleep(0.005)
cache = ArtifactCache(root)
for i in range(keys):
    def make(out, work, i=i):
        with open(calls, "a") as f:
            f.write(f"{i}\\n")
        assert not any(work.iterdir())
        (work / "state").write_text("x")
        time.sleep(0.01)
        (out / "r.txt").write_text(str(i))
    assert cache.build("demo/many", {"i": i}, make).file("r.txt").read_text() == str(i)
"""


def test_many_processes_on_many_keys_compute_each_once(tmp_path):
    script = tmp_path / "hammer.py"
    script.write_text(HAMMER)
    root, barrier, calls = tmp_path / "cache", tmp_path / "barrier", tmp_path / "calls.txt"
    barrier.mkdir()
    n, keys = 4, 25
    env = {**os.environ, "PYTHONPATH": str(REPO), "RNNLIB_BUILD_LOG": ""}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), str(barrier), str(calls), str(n), str(keys)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(n)
    ]
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    assert sorted(int(i) for i in calls.read_text().split()) == list(range(keys))
    assert not (root / ".locks").exists() or not any((root / ".locks").iterdir())
