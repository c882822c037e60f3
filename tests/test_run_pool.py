"""Artifacts built side by side in forked workers (rnnlib.experiments.run_pool)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest
import torch

from rnnlib.cache import ArtifactCache
from rnnlib.experiments import run_pool
from rnnlib.experiments.run_pool import Job, build_side_by_side, is_cached
from rnnlib.experiments.training_runs import load_model, run_logs, train_run
from test_runs import _cfg, model_config, reverse_pairs

CPU = torch.device("cpu")


def _run(cache, name, threads=None):
    """A tiny RNNsearch run of 12 updates with a dev NLL every 4 (trained in this process when
    the cache lacks it, on ``threads`` threads)."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        pairs, dev = reverse_pairs(60, seed=1), reverse_pairs(10, seed=2)
        return train_run(cache, "t/run", {"name": name}, model_config(), _cfg(), pairs, dev)
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow  # trains twice: about 10 s
def test_a_run_trained_in_a_worker_equals_it_trained_here_on_one_thread(tmp_path):
    one = _run(ArtifactCache(tmp_path / "one"), "a", threads=1)
    two = _run(ArtifactCache(tmp_path / "two"), "a", threads=2)
    pool_cache = ArtifactCache(tmp_path / "pool")
    jobs = [Job("a", lambda: _run(pool_cache, "a")), Job("b", lambda: _run(pool_cache, "b"))]
    assert build_side_by_side(pool_cache, jobs, 2, CPU) == {"a": "built", "b": "built"}
    with pool_cache.lookup_only():  # the caller then reads both from the cache
        there = _run(pool_cache, "a")
        assert _run(pool_cache, "b").extra["runs_at_once"] == 2
    assert two.extra["threads"] == 2 and two.extra["runs_at_once"] == 1
    assert there.extra["threads"] == 1 and there.extra["runs_at_once"] == 2
    assert "one of 2 runs at a time" in there.extra["device"]
    assert "runs at a time" not in one.extra["device"]
    mc = model_config()
    params = {
        k: load_model(r, mc).state_dict() for k, r in (("one", one), ("two", two), ("there", there))
    }
    # bitwise the run trained here on one thread: the worker changes nothing but the thread count
    assert all(torch.equal(params["one"][k], params["there"][k]) for k in params["one"])
    assert one.extra["dev_nll"] == there.extra["dev_nll"]
    untimed = [{k: v for k, v in r.extra["best"].items() if k != "seconds"} for r in (one, there)]
    assert untimed[0] == untimed[1]
    for log in ("train", "eval"):
        pd.testing.assert_frame_equal(
            run_logs(one)[log].drop(columns="seconds", errors="ignore"),
            run_logs(there)[log].drop(columns="seconds", errors="ignore"),
        )
    # the thread count changes only float rounding (the order of sums)
    assert all(
        torch.allclose(params["two"][k], params["there"][k], rtol=1e-4, atol=1e-6)
        for k in params["two"]
    )
    assert two.extra["dev_nll"] == pytest.approx(there.extra["dev_nll"], rel=1e-5)


def _mark(cache: ArtifactCache, name: str, reads: str | None = None, wait_for: str | None = None):
    """A job's build: an artifact holding the worker's pid and thread count and, with ``reads``,
    the pid stored in that job's artifact; with ``wait_for``, it first waits (up to 60 s) until
    that job's worker has written ``<wait_for>.started`` beside the cache."""

    def build():
        def make(out: Path, work: Path) -> dict:
            (cache.root.parent / f"{name}.started").write_text(str(os.getpid()))
            if wait_for is not None:
                flag = cache.root.parent / f"{wait_for}.started"
                deadline = time.monotonic() + 60
                while not flag.exists():
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{wait_for} never started beside {name}")
                    time.sleep(0.01)
            read = json.loads(build_of[reads]().file("pid.json").read_text()) if reads else None
            (out / "pid.json").write_text(json.dumps(os.getpid()))
            return {"threads": torch.get_num_threads(), "read": read}

        return cache.build("t/mark", {"name": name}, make)

    build_of[name] = build
    return build


build_of: dict = {}


def _boom():
    raise RuntimeError("this job fails")


def _fails_in_make(cache: ArtifactCache):
    """A job's build whose computation fails (its lookup does not)."""

    def make(out: Path, work: Path) -> None:
        raise RuntimeError("this run fails")

    return lambda: cache.build("t/bad", {}, make)


def test_jobs_run_side_by_side_after_what_they_read_and_a_failure_stops_its_followers(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    _mark(cache, "done before")()  # already in the cache: no worker for it
    jobs = [
        # "a" finishes only once "b" has started: both ran at the same time
        Job("a", _mark(cache, "a", wait_for="b")),
        Job("b", _mark(cache, "b", wait_for="a")),
        Job("c", _mark(cache, "c", reads="a"), after=("a",)),
        Job("done before", _mark(cache, "done before")),
        Job("bad", _fails_in_make(cache)),
        Job("after bad", _mark(cache, "after bad"), after=("bad",)),
        Job("after that", _mark(cache, "after that"), after=("after bad", "c")),
    ]
    outcome = build_side_by_side(cache, jobs, 2, CPU)
    assert outcome == {
        "a": "built",
        "b": "built",
        "c": "built",
        "done before": "cached",
        "bad": "failed",
        "after bad": "not started",
        "after that": "not started",
    }
    with cache.lookup_only():
        arts = {n: build_of[n]() for n in ("a", "b", "c")}
    pids = {n: json.loads(a.file("pid.json").read_text()) for n, a in arts.items()}
    assert os.getpid() not in pids.values() and pids["a"] != pids["b"]
    assert arts["c"].extra["read"] == pids["a"]  # "c" read the artifact "a" built
    assert all(a.extra["threads"] == 1 for a in arts.values())
    assert not is_cached(cache, build_of["after bad"]) and is_cached(cache, build_of["c"])
    assert run_pool.AT_ONCE == 1  # this process is not a worker


def test_one_worker_or_another_device_builds_nothing_and_bad_jobs_are_refused(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    jobs = [Job("x", _mark(cache, "x")), Job("y", _mark(cache, "y"), after=("x",))]
    assert build_side_by_side(cache, jobs, 1, CPU) == {"x": "not started", "y": "not started"}
    cuda = torch.device("cuda")
    assert build_side_by_side(cache, jobs, 2, cuda) == {"x": "not started", "y": "not started"}
    assert not is_cached(cache, build_of["x"])
    for workers in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="workers must be an integer"):
            build_side_by_side(cache, jobs, workers, CPU)
    with pytest.raises(ValueError, match="unknown"):
        build_side_by_side(cache, [Job("z", _boom, after=("nowhere",))], 2, CPU)
    with pytest.raises(ValueError, match="repeat"):
        build_side_by_side(cache, [Job("z", _boom), Job("z", _boom)], 2, CPU)


def test_a_job_left_alone_is_still_built_in_a_worker_on_one_thread(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    _mark(cache, "cached one")()
    jobs = [Job("cached one", _mark(cache, "cached one")), Job("alone", _mark(cache, "alone"))]
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert build_side_by_side(cache, jobs, 2, CPU) == {"cached one": "cached", "alone": "built"}
    finally:
        torch.set_num_threads(before)
    with cache.lookup_only():
        art = build_of["alone"]()
    assert json.loads(art.file("pid.json").read_text()) != os.getpid()
    assert art.extra["threads"] == 1  # the same thread count as beside another job


def _processes(cache: ArtifactCache, name: str, wait_for: str | None = None):
    """A job's build: an artifact holding how many processes a corpus decoding of two would
    use in its worker (:func:`rnnlib.smt.decoder.processes`), asked once ``wait_for`` started."""

    def build():
        def make(out: Path, work: Path) -> dict:
            from rnnlib.smt.decoder import processes

            (cache.root.parent / f"{name}.started").write_text(str(os.getpid()))
            if wait_for is not None:
                deadline = time.monotonic() + 60
                while not (cache.root.parent / f"{wait_for}.started").exists():
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"{wait_for} never started beside {name}")
                    time.sleep(0.01)
            return {"processes": processes(2)}

        return cache.build("t/processes", {"name": name}, make)

    return build


def test_a_workers_decoder_takes_its_share_of_the_cores_and_all_of_them_when_alone(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    builds = {
        "a": _processes(cache, "a", wait_for="b"),
        "b": _processes(cache, "b", wait_for="a"),
        "alone": _processes(cache, "alone"),
    }
    jobs = [Job("a", builds["a"]), Job("b", builds["b"]), Job("alone", builds["alone"], ("a", "b"))]
    assert set(build_side_by_side(cache, jobs, 2, CPU, cores=2).values()) == {"built"}
    with cache.lookup_only():
        got = {n: b().extra["processes"] for n, b in builds.items()}
    assert got == {"a": 1, "b": 1, "alone": 2}
    from rnnlib.smt.decoder import processes

    assert processes(2) == 2  # this process is not a worker: no cap


def test_nothing_is_started_while_the_cache_only_looks_up(tmp_path):
    """Inside lookup_only a worker could only fail: the jobs are left to the caller."""
    cache = ArtifactCache(tmp_path / "cache")
    jobs = [Job("x", _mark(cache, "x")), Job("y", _mark(cache, "y"))]
    with cache.lookup_only():
        assert cache.looking_up
        assert build_side_by_side(cache, jobs, 2, CPU) == {"x": "not started", "y": "not started"}
    assert not cache.looking_up and not list(tmp_path.glob("*.started"))
