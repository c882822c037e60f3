"""What a computation ran on: the processor, the vector instructions that change float rounding
and speed, the threads.

Two builds of the book on different machines train different networks from the same seed: the
float rounding of the CPU's kernels (vector width, bf16 instructions where they exist, the order
in which threads add up a reduction) changes every update's arithmetic a little, and a trained
network follows its trajectory. Every artifact of the cache therefore records
:func:`describe` in its sidecar (``meta.json``, key ``machine``), so that a reader who compares
two builds can tell what differs between the machines that computed them.
"""

from __future__ import annotations

import os
import platform
import sys
from functools import lru_cache

#: the instruction sets that change what the book's kernels compute, or how fast: vector width
#: (AVX2, AVX-512) and hardware bf16 (``avx512_bf16``, ``amx_bf16``: without them torch emulates
#: bf16, and the chapters' ``bf16: null`` keeps float32)
INSTRUCTIONS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")


@lru_cache(maxsize=1)
def _cpuinfo() -> tuple[str | None, tuple[str, ...]]:
    """``(model name, flags)`` of the first processor in ``/proc/cpuinfo`` (Linux), else
    ``(None, ())``."""
    name, flags = None, ()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if name is None and line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                elif not flags and line.startswith("flags"):
                    flags = tuple(line.split(":", 1)[1].split())
                if name is not None and flags:
                    break
    except OSError:
        pass
    return name, flags


def cpu_name() -> str:
    """The processor's model name (``/proc/cpuinfo``), or what :mod:`platform` knows."""
    return _cpuinfo()[0] or platform.processor() or platform.machine() or "unknown CPU"


def cpu_flags() -> tuple[str, ...]:
    """Every flag ``/proc/cpuinfo`` lists for the processor (empty where there is none)."""
    return _cpuinfo()[1]


def describe() -> dict:
    """``{"processor", "instructions", "cpus", "torch_threads"}``: the processor's name, which of
    :data:`INSTRUCTIONS` it has, the CPUs the operating system offers this process, and torch's
    intra-op threads (``None`` where torch is not loaded: a computation without torch)."""
    torch = sys.modules.get("torch")
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    return {
        "processor": cpu_name(),
        "instructions": [x for x in INSTRUCTIONS if x in cpu_flags()],
        "cpus": cpus,
        "torch_threads": torch.get_num_threads() if torch is not None else None,
    }


def label(machine: dict | None) -> str:
    """A sidecar's ``machine`` in words: ``"<processor> (avx2, avx512f; 2 CPUs, 2 threads)"``;
    an artifact made before machines were recorded says so."""
    if not machine:
        return "not recorded"
    parts = [", ".join(machine.get("instructions") or []) or "no AVX"]
    tail = f"{machine.get('cpus')} CPUs"
    if machine.get("torch_threads") is not None:
        tail += f", {machine['torch_threads']} torch threads"
    return f"{machine.get('processor', 'unknown CPU')} ({parts[0]}; {tail})"


__all__ = ["INSTRUCTIONS", "cpu_flags", "cpu_name", "describe", "label"]
