"""The artifact cache: keys, reuse, sidecars, and what happens to broken or partial writes."""

import json
import os

import pytest

from rnnlib.cache import ArtifactCache
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
    assert list(tmp_path.rglob("*")) == []  # no temporary folder, no empty work folder


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
