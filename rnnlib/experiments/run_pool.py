"""Independent artifacts built side by side: each in a forked process on one torch thread.

On a CPU of two cores, one training run on two threads spends much of each update waiting: the
many mid-sized operations of a time step split poorly between the threads (BENCHMARKS.md, "Two
threads on a 2-core machine"). Two runs, each on one thread, trained at the same time made more
updates a second between them than one run on two threads (measured in BENCHMARKS.md, section
"Runs side by side"). :func:`build_side_by_side` uses that for the independent training runs of a
chapter: it builds the cache artifacts of the jobs it is given that the cache lacks, ``workers``
at a time, each job in a process forked from this one (which inherits the prepared corpus and
the models' settings, so nothing is pickled), with ``torch.set_num_threads(1)``. The caller then
asks for the same artifacts as before, one after another, and finds them in the cache.

A run trained in a worker is bitwise the run trained in the caller's process on one thread
(``tests/test_run_pool.py``); on two threads its sums are taken in another order, so its numbers
differ by rounding at first and its training takes another path, as on another machine. So that a
run's numbers do not depend on which other runs the cache happened to lack, every job is built in a
worker on one thread, even one left alone (the last of a schedule, or the only one missing), at the
cost of the second core for that job. The thread count, as the machine, is recorded with each run
and is not part of its key: a cache built with ``train_workers`` 1 holds the two-thread runs, which
a build with another setting reads as they are. A job that fails in its worker is left to the
caller, which builds it again in its own process and so meets the error there, with its traceback;
jobs that wait for it are not started. An interrupted build leaves what the cache already holds, and
each run's work folder, from which :func:`rnnlib.experiments.training_runs.train_run` resumes.

The phrase-based systems of paper A's chapter are jobs too: a worker's phrase decoder uses at
most its share of the machine's cores among the jobs running at each of its decodings
(:func:`rnnlib.smt.decoder.share_cores`), one process each while two jobs run, both cores again
once it is left alone; its output does not depend on that (the sentences are independent).

Only for the CPU: a process forked after CUDA is initialised cannot use it, so on another device
:func:`build_side_by_side` builds nothing and the caller builds every job in its own process.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Sequence

import torch

from ..cache import ArtifactCache, NotCached
from ..smt.decoder import share_cores

AT_ONCE: int = 1
"""In a worker, the most jobs its pool builds at a time (its workers, or fewer jobs); 1 elsewhere.
Recorded with each run (:func:`rnnlib.experiments.training_runs.device_label`): it changes the
run's seconds."""


@dataclass(frozen=True)
class Job:
    """One artifact to build: ``build()`` computes it (or reads it when cached) and returns it;
    ``after``: the names of jobs whose artifacts ``build`` reads, so that must be built first."""

    name: str
    build: Callable[[], Any]
    after: tuple[str, ...] = ()


def is_cached(cache: ArtifactCache, build: Callable[[], Any]) -> bool:
    """Whether ``build()`` finds everything it asks for in ``cache`` (nothing is computed; an
    error other than a missing artifact is raised here)."""
    with cache.lookup_only():
        try:
            build()
        except NotCached:
            return False
    return True


def _work(build: Callable[[], Any], at_once: int, cores: int, running) -> None:
    """A worker's body: one torch thread, the phrase decoder's processes capped at this job's
    share of the machine's ``cores`` among the jobs ``running`` (a shared counter) at each
    decoding, then the job."""
    global AT_ONCE
    AT_ONCE = at_once
    torch.set_num_threads(1)
    share_cores(lambda: cores // max(1, running.value), at_once)
    build()


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this system)
        return os.cpu_count() or 1


def build_side_by_side(
    cache: ArtifactCache,
    jobs: Sequence[Job],
    workers: int,
    device: torch.device,
    cores: int | None = None,
) -> dict[str, str]:
    """Build the artifacts of ``jobs`` that ``cache`` lacks, ``workers`` at a time, each in a
    forked process on one torch thread, starting them in the order given as soon as the jobs
    named in their ``after`` are done. Returns ``name -> outcome`` for every job: ``"cached"``
    (found, nothing started), ``"built"``, ``"failed"`` (its worker exited with an error) or
    ``"not started"`` (it waited for a job that failed). With ``workers`` 1, a device other
    than the CPU, or ``cache`` inside :meth:`~rnnlib.cache.ArtifactCache.lookup_only` (a
    worker could only fail) nothing is built (every job ``"not started"``): the caller builds
    them all, or finds them missing. ``cores``: the machine's cores the workers' phrase
    decoders share (default :func:`machine_cores`).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"build_side_by_side: workers must be an integer >= 1, got {workers!r}")
    names = [job.name for job in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"build_side_by_side: job names repeat: {names}")
    for job in jobs:
        unknown = [a for a in job.after if a not in names]
        if unknown:
            raise ValueError(f"build_side_by_side: job {job.name!r} waits for unknown {unknown}")
    if workers == 1 or device.type != "cpu" or cache.looking_up:
        return dict.fromkeys(names, "not started")
    cores = machine_cores() if cores is None else cores
    outcome: dict[str, str] = {}
    pending = []
    for job in jobs:
        if is_cached(cache, job.build):
            outcome[job.name] = "cached"
        else:
            pending.append(job)
    at_once = min(workers, len(pending))
    ctx = mp.get_context("fork")
    running: dict[Any, tuple[Job, Any]] = {}
    count = ctx.Value("i", 0)  # jobs running now, read by the workers' decoders (share_cores)
    try:
        while pending or running:
            started = True
            while started and len(running) < workers:
                started = False
                for job in pending:
                    waits = [outcome.get(a) for a in job.after]
                    if any(w in ("failed", "not started") for w in waits):
                        outcome[job.name] = "not started"
                    elif all(w in ("cached", "built") for w in waits):
                        proc = ctx.Process(target=_work, args=(job.build, at_once, cores, count))
                        count.value = len(running) + 1  # (before it starts: it may ask at once)
                        proc.start()
                        running[proc.sentinel] = (job, proc)
                    else:
                        continue
                    pending.remove(job)
                    started = True
                    break
            count.value = len(running)  # (lowered only once the next jobs have started)
            if not running:
                break
            for sentinel in wait(list(running)):
                job, proc = running.pop(sentinel)
                proc.join()
                outcome[job.name] = "built" if proc.exitcode == 0 else "failed"
    finally:
        for job, proc in running.values():  # interrupted: stop the workers (their runs resume)
            proc.join(timeout=5)  # (an interrupt of the process group reaches them too)
            if proc.exitcode is None:
                proc.terminate()
                proc.join()
    for job in pending:
        outcome.setdefault(job.name, "not started")
    return {name: outcome[name] for name in names}


__all__ = ["AT_ONCE", "Job", "build_side_by_side", "is_cached", "machine_cores"]
