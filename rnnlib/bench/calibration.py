"""The ledger's calibration (``ledger/calibration``) timed whole, with one BLAS thread per worker
against BLAS's default, interleaved.

``python -m rnnlib.bench.calibration [--prepared FOLDER] [--trials 200] [--sentence-trials 100]
[--workers 2] [--rounds 2]`` runs :func:`rnnlib.calibration.calibrate` at the ledger's sizes
(about 500 sentences, 1,000 resamples) on the test split of a prepared Bible corpus (a
``corpus/prepared`` artifact; without one, the synthetic pool), alternating the two settings of
``blas_threads`` (:data:`rnnlib.calibration.run.BLAS_THREADS`, and ``None``: the reference)
round by round, and prints for each run its wall seconds, the CPU seconds of its processes and
the trials per second, then whether the two settings gave the same rates (they must: the
products are exact sums of integers). The ledger's artifact runs ``calibration_trials`` +
``calibration_sentence_trials`` (2,000 + 1,000): its minutes are about this run's seconds times
3,000 / (trials + sentence trials) / 60.

What it measured is in ``BENCHMARKS.md``, section "The ledger's calibration".
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import pandas as pd

from ..calibration import calibrate, plan_of, pool_from_prepared, synthetic_pool
from ..calibration.run import BLAS_THREADS

#: the ledger's sizes (``rnnlib.experiments.ledger``, a floor above this one: a test keeps
#: them equal)
SENTENCES, N_BOOT, SEED = 500, 1000, 20141


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_once(pool, plan: dict, workers: int, blas_threads) -> tuple[float, float, pd.DataFrame]:
    """``(wall seconds, CPU seconds, rates)`` of one calibration."""
    cpu, wall = _cpu_seconds(), time.perf_counter()
    rates = calibrate(
        pool, plan, SENTENCES, N_BOOT, SEED, workers=workers, blas_threads=blas_threads
    )
    return time.perf_counter() - wall, _cpu_seconds() - cpu, rates


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m rnnlib.bench.calibration", description=__doc__)
    ap.add_argument("--prepared", type=Path, help="a corpus/prepared artifact's folder")
    ap.add_argument("--trials", type=int, default=200, help="test sets by chapter")
    ap.add_argument("--sentence-trials", type=int, default=100, help="test sets by sentence")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="pairs of runs, interleaved")
    args = ap.parse_args(argv)
    pool = pool_from_prepared(args.prepared) if args.prepared else synthetic_pool()
    plan = plan_of(args.trials, args.sentence_trials)
    n = args.trials + args.sentence_trials
    print(
        f"pool: {pool.source}; {args.trials} + {args.sentence_trials} trials,",
        f"{args.workers} workers",
    )
    settings = {"BLAS default (reference)": None, f"BLAS threads {BLAS_THREADS}": BLAS_THREADS}
    times: dict = {k: [] for k in settings}
    rates: dict = {}
    for r in range(args.rounds):
        for name, threads in settings.items():
            wall, cpu, rates[name] = run_once(pool, plan, args.workers, threads)
            times[name].append(wall)
            print(
                f"round {r + 1} {name:26s} {wall:7.1f} s wall {cpu:7.1f} s CPU",
                f"{n / wall:6.1f} trials/s",
            )
    ref, new = (min(v) for v in times.values())
    print(f"best of {args.rounds}: reference {ref:.1f} s, one thread {new:.1f} s: {ref / new:.2f}x")
    print(f"the ledger's 3,000 trials at this pace: {new * 3000 / n / 60:.1f} minutes")
    a, b = rates.values()
    print("same rates:", a.equals(b))


if __name__ == "__main__":
    main()
