"""The artifact cache: keys, reuse, sidecars, and what happens to broken or partial writes."""

import json
import os
import time

import pytest

from rnnlib.cache import ArtifactCache, CacheIntegrityWarning, content_checksum
from rnnlib.cache_commands import verify_before_build
from rnnlib.cli import main as cli_main
from rnnlib.checkpoint import load_checkpoint, save_atomic


def write(text):
    def make(out, work):
        (out / "result.txt").write_text(text)
        return {"length": len(text)}

    return make


def test_second_lookup_reuses_and_a_changed_config_recomputes(tmp_path):
    cache = ArtifactCache(tmp_path)
    a = cache.build("demo/x", {"n": 1}, write("one"))
    b = cache.build("demo/x", {"n": 1}, write("SHOULD NOT RUN"))
    c = cache.build("demo/x", {"n": 2}, write("two"))
    d = cache.build("demo/x", {"n": 1}, write("other data"), data="sha-of-other-data")
    assert (a.from_cache, b.from_cache, c.from_cache, d.from_cache) == (False, True, False, False)
    assert b.file("result.txt").read_text() == "one"
    assert c.file("result.txt").read_text() == "two"
    assert len({a.key, c.key, d.key}) == 3
    assert [e["hit"] for e in cache.events] == [False, True, False, False]


def test_sidecar_records_config_data_versions_commit_and_time(tmp_path):
    art = ArtifactCache(tmp_path).build("demo/x", {"n": 1, "name": "é"}, write("abc"), data="d1")
    meta = json.loads((art.path / "meta.json").read_text())
    assert meta["config"] == {"n": 1, "name": "é"} and meta["data_checksum"] == "d1"
    assert {"python", "torch", "numpy"} <= set(meta["versions"])
    assert "git_commit" in meta and meta["wall_time_s"] >= 0
    assert meta["files"]["result.txt"]["bytes"] == 3 and meta["extra"] == {"length": 3}


def test_failed_make_leaves_nothing_behind(tmp_path):
    cache = ArtifactCache(tmp_path)

    def boom(out, work):
        (out / "half.txt").write_text("partial")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.build("demo/x", {"n": 1}, boom)
    assert cache.get("demo/x", {"n": 1}) is None
    assert list(tmp_path.rglob("*")) == []  # no temporary folder, no empty work folder, no lock


@pytest.mark.parametrize("damage", ["no sidecar", "truncated file", "bad json"])
def test_a_damaged_artifact_is_not_trusted_and_is_recomputed(tmp_path, damage):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    if damage == "no sidecar":
        (art.path / "meta.json").unlink()
    elif damage == "truncated file":
        (art.path / "result.txt").write_text("he")
    else:
        (art.path / "meta.json").write_text("{not json")
    with pytest.warns(CacheIntegrityWarning, match=f"demo/x/{art.key} is not trusted"):
        assert cache.get("demo/x", {"n": 1}) is None
    again = cache.build("demo/x", {"n": 1}, write("hello"))
    assert not again.from_cache and again.file("result.txt").read_text() == "hello"


def test_temporaries_of_dead_writers_are_swept(tmp_path):
    tmp = tmp_path / ".tmp" / "demo~x.0123456789abcdef.999999999.1"
    tmp.mkdir(parents=True)
    (tmp / "half.txt").write_text("partial")
    ArtifactCache(tmp_path)
    assert not tmp.exists()


def test_bad_kind_is_refused(tmp_path):
    with pytest.raises(ValueError, match="kind"):
        ArtifactCache(tmp_path).build("../escape", {}, write("x"))


def test_checkpoints_round_trip_with_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "ckpt.pt"
    save_atomic({"w": torch.ones(2), "step": 3, "rng": [1, 2]}, path)
    back = load_checkpoint(path)
    assert back["step"] == 3 and torch.equal(back["w"], torch.ones(2))
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".part")]


# -- integrity: a file that no longer matches its sidecar ------------------------------------


def flip_a_byte(path, keep_time=True):
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[0] ^= 0xFF
    path.write_bytes(bytes(data))
    if keep_time:  # as a disk's silent corruption would: same size, same time
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def damage_entry(art, how):
    f = art.path / "result.txt"
    if how == "same size, time kept":
        flip_a_byte(f)
    elif how == "other size":
        f.write_text("longer than before")
    else:
        f.unlink()


def test_the_key_of_a_config_is_unchanged():  # cache keys must not change
    assert ArtifactCache.key("demo/x", {"n": 1}, None) == "d095fd6b5329ae26"


@pytest.mark.parametrize("how", ["same size, time kept", "other size", "removed file"])
def test_verify_finds_a_changed_entry_and_the_next_build_recomputes_it(tmp_path, how):
    cache = ArtifactCache(tmp_path)
    bad = cache.build("demo/x", {"n": 1}, write("hello"))
    good = cache.build("demo/x", {"n": 2}, write("other"))
    good_ino = good.path.stat().st_ino
    damage_entry(bad, how)
    with pytest.warns(CacheIntegrityWarning, match=rf"demo/x/{bad.key}.*result\.txt"):
        report = cache.verify()
    assert list(report.damaged) == [("demo/x", bad.key)]
    (d,) = report.damaged[("demo/x", bad.key)]
    assert (d.kind, d.key, d.file) == ("demo/x", bad.key, "result.txt")
    assert d.expected is not None and d.found is not None and d.expected != d.found
    assert not bad.path.exists()  # moved out of the way, with a note saying why
    (moved,) = (tmp_path / ".quarantine").iterdir()
    note = json.loads((moved / "quarantine.json").read_text())
    assert note["key"] == bad.key and note["damage"][0]["file"] == "result.txt"
    assert cache.get("demo/x", {"n": 1}) is None  # not reused
    calls = []

    def again(out, work):
        calls.append(1)
        (out / "result.txt").write_text("hello")

    rebuilt = cache.build("demo/x", {"n": 1}, again)
    assert calls == [1] and not rebuilt.from_cache and rebuilt.key == bad.key
    assert rebuilt.file("result.txt").read_text() == "hello"
    # the good entry is untouched: same folder, still a hit, and verify finds all intact
    assert good.path.stat().st_ino == good_ino
    assert cache.build("demo/x", {"n": 2}, write("SHOULD NOT RUN")).from_cache
    assert cache.verify().ok


def test_entries_built_from_a_failed_one_are_rebuilt_too(tmp_path):
    cache = ArtifactCache(tmp_path)
    base = cache.build("demo/base", {"n": 1}, write("base"))
    other = cache.build("demo/base", {"n": 2}, write("other"))
    # a dependent names the key in its config, another the content checksum as data (as the
    # corpus's checksum is passed), a third depends on the first (transitively)
    child = cache.build("demo/child", {"run": base.key, "beam": 5}, write("child"))
    by_data = cache.build(
        "demo/child", {"beam": 5}, write("by data"), data=content_checksum(base.meta)
    )
    grandchild = cache.build("demo/grand", {"up": {"model": child.key}}, write("g"))
    unrelated = cache.build("demo/child", {"run": other.key, "beam": 5}, write("x"))
    flip_a_byte(base.path / "result.txt")
    with pytest.warns(CacheIntegrityWarning) as caught:
        report = cache.verify()
    assert set(report.damaged) == {("demo/base", base.key)}
    assert report.dependents == {
        ("demo/child", child.key): ("demo/base", base.key),
        ("demo/child", by_data.key): ("demo/base", base.key),
        ("demo/grand", grandchild.key): ("demo/child", child.key),
    }
    text = "\n".join(str(w.message) for w in caught)
    assert f"demo/grand/{grandchild.key} was built from demo/child/{child.key}" in text
    for art in (base, child, by_data, grandchild):
        assert not art.path.exists()
    assert len(list((tmp_path / ".quarantine").iterdir())) == 4
    for art in (other, unrelated):
        assert art.path.exists()
    assert cache.get("demo/child", {"run": base.key, "beam": 5}) is None
    assert cache.get("demo/child", {"run": other.key, "beam": 5}).from_cache


def test_a_changed_file_is_caught_on_read_by_its_time(tmp_path):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    child = cache.build("demo/y", {"from": art.key}, write("child"))
    assert "mtime_ns" in art.meta["files"]["result.txt"]
    time.sleep(0.01)
    flip_a_byte(art.path / "result.txt", keep_time=False)  # same size, new time
    with pytest.warns(CacheIntegrityWarning) as caught:
        assert cache.get("demo/x", {"n": 1}) is None
    first, second = (str(w.message) for w in caught)
    assert f"demo/x/{art.key} is not trusted" in first and "sha256 changed" in first
    assert f"demo/y/{child.key} was built from demo/x/{art.key}" in second
    assert not child.path.exists()  # what was built from it goes too
    assert not cache.build("demo/x", {"n": 1}, write("hello")).from_cache


def test_a_touched_file_with_its_content_intact_stays_trusted(tmp_path):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    f = art.path / "result.txt"
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))  # e.g. a copy
    found = cache.get("demo/x", {"n": 1})
    assert found is not None and found.path == art.path
    meta = json.loads((art.path / "meta.json").read_text())
    assert meta["files"]["result.txt"]["mtime_ns"] == f.stat().st_mtime_ns  # recorded


def test_sidecars_without_times_still_read_and_verify_adds_them(tmp_path):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    side = art.path / "meta.json"
    meta = json.loads(side.read_text())
    for info in meta["files"].values():  # as the code before times were recorded wrote it
        del info["mtime_ns"]
    side.write_text(json.dumps(meta, indent=2, sort_keys=True))
    assert cache.build("demo/x", {"n": 1}, write("SHOULD NOT RUN")).from_cache
    assert cache.verify().ok
    assert "mtime_ns" in json.loads(side.read_text())["files"]["result.txt"]


def test_temporaries_locks_and_quarantine_are_no_entries(tmp_path):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    cache.build("demo/x", {"n": 2}, write("bye"))
    flip_a_byte(art.path / "result.txt")
    with pytest.warns(CacheIntegrityWarning):
        cache.verify()
    assert (tmp_path / ".quarantine").is_dir()
    assert [(k, key) for k, key, _ in cache.entries()] == [
        ("demo/x", cache.key("demo/x", {"n": 2}, None))
    ]
    assert cache.verify().ok


def test_the_verify_command(tmp_path, capsys):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    assert cli_main(["cache", "verify", "--cache", str(tmp_path)]) == 0
    assert "1 entries" in capsys.readouterr().out
    flip_a_byte(art.path / "result.txt")
    assert cli_main(["cache", "verify", "--cache", str(tmp_path), "--fast"]) == 0  # time kept
    assert cli_main(["cache", "verify", "--cache", str(tmp_path), "--dry-run"]) == 1
    assert art.path.exists()
    capsys.readouterr()
    assert cli_main(["cache", "verify", "--cache", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    sha = art.meta["files"]["result.txt"]["sha256"]
    assert f"FAILED  demo/x/{art.key}: result.txt: sha256 changed (expected {sha}, found" in err
    assert not art.path.exists()
    assert cli_main(["cache", "verify", "--cache", str(tmp_path)]) == 0
    assert cli_main(["cache", "verify", "--cache", str(tmp_path / "none")]) == 2


def test_the_check_at_the_start_of_a_build(tmp_path, monkeypatch, capsys):
    cache = ArtifactCache(tmp_path)
    art = cache.build("demo/x", {"n": 1}, write("hello"))
    flip_a_byte(art.path / "result.txt")
    monkeypatch.setenv("RNNLIB_CACHE_VERIFY", "off")
    assert verify_before_build(tmp_path) is None and art.path.exists()
    assert verify_before_build(tmp_path, "fast").ok  # size and time kept: only hashing sees it
    monkeypatch.delenv("RNNLIB_CACHE_VERIFY")
    report = verify_before_build(tmp_path)  # full by default
    assert not report.ok and not art.path.exists()
    assert f"demo/x/{art.key}" in capsys.readouterr().err


def test_cache_ls_and_clean_show_and_free_what_the_cache_holds(tmp_path, capsys):
    import subprocess
    import sys

    cache = ArtifactCache(tmp_path)

    def make(out, work):
        (out / "model.pt").write_bytes(b"x" * 2_000_000)

    cache.build("rnnsearch/run", {"model": {"arch": "rnnsearch"}, "max_len": 50, "seed": 2}, make)
    cache.build("corpus/prepared", {"max_len": 30}, lambda out, work: None)
    idle = cache.work_dir("rnnsearch/run", {"seed": 3})  # an interrupted run's checkpoints
    idle.mkdir(parents=True)
    (idle / "state.pt").write_bytes(b"y" * 1_000_000)
    busy_config = {"seed": 4}
    busy = cache.work_dir("rnnsearch/run", busy_config)
    busy.mkdir(parents=True)
    (tmp_path / ".quarantine" / "old").mkdir(parents=True)
    lock = cache.lock_path("rnnsearch/run", cache.key("rnnsearch/run", busy_config, None))
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time, filelock; held = filelock.FileLock(sys.argv[1]);"
         " held.acquire(); print('held', flush=True); time.sleep(60)", str(lock)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        assert cli_main(["cache", "ls", "--cache", str(tmp_path), "--kind", "rnnsearch"]) == 0
        out = capsys.readouterr().out
        assert "rnnsearch/run" in out and "corpus/prepared" not in out
        assert "arch=rnnsearch max_len=50 seed=2" in out and "1 entries, 2.0 MB" in out
        assert f"work folder {idle.relative_to(tmp_path)}: 1.0 MB, not in use" in out
        assert f"work folder {busy.relative_to(tmp_path)}: 0.0 MB, in use" in out
        assert "quarantine: 0.0 MB" in out
        argv = ["cache", "clean", "--cache", str(tmp_path), "--work"]
        assert cli_main([*argv, "--dry-run"]) == 0
        assert "would delete .quarantine" in capsys.readouterr().out and idle.is_dir()
        assert cli_main(argv) == 0
        out = capsys.readouterr().out
        assert f"deleted {idle.relative_to(tmp_path)} (1.0 MB)" in out
        assert not idle.exists() and not (tmp_path / ".quarantine").exists()
        assert busy.is_dir()  # a process is using it: kept
        finished = {"model": {"arch": "rnnsearch"}, "max_len": 50, "seed": 2}
        assert cache.get("rnnsearch/run", finished) is not None  # entries are never cleaned
    finally:
        holder.kill()
        holder.wait()


def test_cache_gc_removes_orphans_keeps_live_folders_and_du_adds_up(tmp_path, capsys):
    import os
    import subprocess
    import sys

    cache = ArtifactCache(tmp_path)
    cache.build(
        "corpus/prepared",
        {"max_len": 30},
        lambda out, work: (out / "a").write_bytes(b"z" * 500_000),
    )
    orphan = cache.work_dir("rnnsearch/run", {"seed": 3})  # an abandoned run's checkpoints
    orphan.mkdir(parents=True)
    (orphan / "state.pt").write_bytes(b"y" * 1_000_000)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_tmp = tmp_path / ".tmp" / f"rnnsearch_run.0123456789abcdef.{gone.stdout.strip()}.1"
    live_tmp = tmp_path / ".tmp" / f"rnnsearch_run.fedcba9876543210.{os.getpid()}.2"
    for t in (dead_tmp, live_tmp):
        t.mkdir(parents=True)
    busy_config = {"seed": 4}
    busy = cache.work_dir("rnnsearch/run", busy_config)
    busy.mkdir(parents=True)
    lock = cache.lock_path("rnnsearch/run", cache.key("rnnsearch/run", busy_config, None))
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time, filelock; held = filelock.FileLock(sys.argv[1]);"
         " held.acquire(); print('held', flush=True); time.sleep(60)", str(lock)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        assert cli_main(["cache", "du", "--cache", str(tmp_path)]) == 0
        out = capsys.readouterr().out
        assert "0.5 MB     1  corpus/prepared" in out and "1.0 MB        work/" in out
        assert cli_main(["cache", "gc", "--cache", str(tmp_path)]) == 0
        out = capsys.readouterr().out
        assert f"deleted {orphan.relative_to(tmp_path)}" in out and not orphan.exists()
        assert not dead_tmp.exists() and live_tmp.is_dir()  # its writer is alive: kept
        assert busy.is_dir()  # a process holds its lock: kept
        assert cache.get("corpus/prepared", {"max_len": 30}) is not None
    finally:
        holder.kill()
        holder.wait()
